"""The names a kernel written in Python uses from cudakit.cuda (cuda.grid,
cuda.threadIdx, cuda.shared.array, cuda.atomic.add ...).  They have a
meaning only inside a kernel, where the translator reads them by name (each
carries its qualified name, _ck_builtin); called from Python they say so."""


class _Doc:
    """An intrinsic's own docstring; read on the class, the class's."""

    def __init__(self, doc):
        self.doc = doc

    def __get__(self, obj, objtype=None):
        return self.doc if obj is None else obj._doc


class Intrinsic:
    __slots__ = ("_ck_builtin", "__name__", "__qualname__", "_doc")
    __doc__ = _Doc("A function of kernels written in Python (cuda.grid, cuda.syncthreads ...): the translator "
                   "reads it by name inside a kernel or device function; called from Python it raises RuntimeError.")

    def __init__(self, qualname, doc=""):
        self._ck_builtin = qualname
        self.__name__ = qualname.rsplit(".", 1)[-1]
        self.__qualname__ = qualname
        self._doc = doc

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self._ck_builtin}() can only be used inside a kernel or device function (@cuda.jit)")

    def __repr__(self):
        return f"<cudakit intrinsic {self._ck_builtin}>"


class Namespace:
    """cuda.atomic, cuda.shared ...: a namespace of intrinsics."""

    def __init__(self, qualname, members, doc=""):
        self._ck_builtin = qualname
        self.__doc__ = doc
        for name, d in members.items():
            setattr(self, name, Intrinsic(f"{qualname}.{name}", d))

    def __repr__(self):
        return f"<cudakit namespace {self._ck_builtin}>"


class Dim3Value:
    """threadIdx, blockIdx, blockDim, gridDim: .x, .y and .z inside a kernel."""

    __slots__ = ("_ck_builtin",)

    def __init__(self, qualname):
        self._ck_builtin = qualname

    def __getattr__(self, attr):
        if attr in ("x", "y", "z"):
            raise RuntimeError(f"{self._ck_builtin}.{attr} has a value only inside a kernel")
        raise AttributeError(attr)

    def __repr__(self):
        return f"<cudakit intrinsic {self._ck_builtin}>"


def _fns(names):
    return {n: "" for n in names}


threadIdx = Dim3Value("cuda.threadIdx")
blockIdx = Dim3Value("cuda.blockIdx")
blockDim = Dim3Value("cuda.blockDim")
gridDim = Dim3Value("cuda.gridDim")
laneid = Dim3Value("cuda.laneid")
warpsize = 32

grid = Intrinsic("cuda.grid", "grid(ndim): this thread's position in the grid (an int, or a tuple for 2 and 3).")
gridsize = Intrinsic("cuda.gridsize", "gridsize(ndim): the number of threads of the grid along each axis.")
syncthreads = Intrinsic("cuda.syncthreads", "Wait until every thread of the block is here.")
syncthreads_count = Intrinsic("cuda.syncthreads_count", "syncthreads, returning how many threads passed true.")
syncthreads_and = Intrinsic("cuda.syncthreads_and", "syncthreads, returning whether all threads passed true.")
syncthreads_or = Intrinsic("cuda.syncthreads_or", "syncthreads, returning whether any thread passed true.")
syncwarp = Intrinsic("cuda.syncwarp", "syncwarp(mask=0xffffffff): wait for the warp's threads in mask.")
threadfence = Intrinsic("cuda.threadfence",
                        "threadfence(): the device's threads see this thread's writes before it before those after.")
threadfence_block = Intrinsic("cuda.threadfence_block",
                              "threadfence_block(): as threadfence, for the threads of the block.")
threadfence_system = Intrinsic("cuda.threadfence_system",
                               "threadfence_system(): as threadfence, for the device, the host and peer devices.")

shared = Namespace("cuda.shared", {"array": "array(shape, dtype): an array in the block's shared memory "
                                             "(shape 0: the launch's dynamic shared memory)."})
local = Namespace("cuda.local", {"array": "array(shape, dtype): an array private to the thread."})
const = Namespace("cuda.const", {"array_like": "array_like(ary): a global NumPy array as constant memory."})
atomic = Namespace("cuda.atomic", _fns(["add", "sub", "and_", "or_", "xor", "inc", "dec", "exch", "max", "min",
                                        "nanmax", "nanmin", "compare_and_swap", "cas"]),
                   "atomic.op(ary, idx, val): apply op to ary[idx] atomically and return the old value.")
fp16 = Namespace("cuda.fp16", _fns(["hadd", "hsub", "hmul", "hdiv", "hneg", "habs", "hfma", "hmax", "hmin",
                                    "heq", "hne", "hgt", "hge", "hlt", "hle"]))
cg = Namespace("cuda.cg", _fns(["this_grid"]))

all_sync = Intrinsic("cuda.all_sync", "all_sync(mask, predicate): whether predicate is true in every thread of mask.")
any_sync = Intrinsic("cuda.any_sync", "any_sync(mask, predicate): whether predicate is true in any thread of mask.")
eq_sync = Intrinsic("cuda.eq_sync", "eq_sync(mask, predicate): whether predicate is the same in every thread of mask.")
ballot_sync = Intrinsic("cuda.ballot_sync",
                        "ballot_sync(mask, predicate): the bits of the threads of mask whose predicate is true.")
shfl_sync = Intrinsic("cuda.shfl_sync", "shfl_sync(mask, value, src_lane): value of lane src_lane of the warp.")
shfl_up_sync = Intrinsic("cuda.shfl_up_sync",
                         "shfl_up_sync(mask, value, delta): value of lane laneid - delta (its own below lane 0).")
shfl_down_sync = Intrinsic("cuda.shfl_down_sync",
                           "shfl_down_sync(mask, value, delta): value of lane laneid + delta (its own past lane 31).")
shfl_xor_sync = Intrinsic("cuda.shfl_xor_sync",
                          "shfl_xor_sync(mask, value, lane_mask): value of lane laneid ^ lane_mask.")
match_any_sync = Intrinsic("cuda.match_any_sync",
                           "match_any_sync(mask, value): the bits of the threads of mask whose value is this thread's.")
match_all_sync = Intrinsic("cuda.match_all_sync",
                           "match_all_sync(mask, value): (mask, True) if mask's threads agree on value, else (0, False).")
activemask = Intrinsic("cuda.activemask", "activemask(): the bits of the warp's threads that run this instruction.")
lanemask_lt = Intrinsic("cuda.lanemask_lt", "lanemask_lt(): the bits of the lanes below this thread's.")
popc = Intrinsic("cuda.popc", "popc(x): the number of bits set in the integer x.")
brev = Intrinsic("cuda.brev", "brev(x): the bits of the integer x in reverse order.")
clz = Intrinsic("cuda.clz", "clz(x): the number of leading zero bits of the integer x.")
ffs = Intrinsic("cuda.ffs", "ffs(x): the position of the lowest set bit of x, from 1 (0 when x is 0).")
fma = Intrinsic("cuda.fma", "fma(a, b, c): a * b + c rounded once.")
cbrt = Intrinsic("cuda.cbrt", "cbrt(x): the cube root.")
selp = Intrinsic("cuda.selp", "selp(predicate, a, b): a when predicate, else b.")

NAMES = ["threadIdx", "blockIdx", "blockDim", "gridDim", "laneid", "warpsize", "grid", "gridsize", "syncthreads",
         "syncthreads_count", "syncthreads_and", "syncthreads_or", "syncwarp", "threadfence", "threadfence_block",
         "threadfence_system", "shared", "local", "const", "atomic", "fp16", "cg", "all_sync", "any_sync", "eq_sync",
         "ballot_sync", "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "match_any_sync",
         "match_all_sync", "activemask", "lanemask_lt", "popc", "brev", "clz", "ffs", "fma", "cbrt", "selp"]
