"""The GPU sort's kernels (src/codegen/sort_kernels.cuh) run on the CPU
through the CUDA-C-on-CPU runtime, driven here step by step as
src/backend/cuda/cuda_sort.c drives them on a GPU, so that the tile
ranking, the decoupled look-back, the fused first and last passes and the
row sorts are checked against NumPy on any machine.  The CPU runtime runs
a block's threads as fibers and whole blocks one after another per worker,
so a tile's look-back always finds its predecessors published; the GPU
suite checks the same kernels under real concurrency."""
import os

import numpy as np
import pytest

import cudakit as ck

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "src", "codegen", "sort_kernels.cuh")
TILE = 4096
# dtype number (the order of ck_dtype), as sort_source() in cuda_sort.c writes it
DTYPE_NUM = {"bool": 0, "int8": 1, "uint8": 2, "int16": 3, "uint16": 4, "int32": 5, "uint32": 6, "int64": 7,
             "uint64": 8, "float16": 9, "float32": 10, "float64": 11}

pytestmark = pytest.mark.skipif(not os.path.exists(SOURCE), reason="needs the source tree")

_modules = {}


def module(dt):
    dt = np.dtype(dt)
    if dt.name not in _modules:
        head = "#define CK_SK_T %d\n#define CK_SK_ISZ %d\n#define CK_SK_K64 %d\n" % (
            DTYPE_NUM[dt.name], dt.itemsize, int(dt.itemsize > 4))
        with open(SOURCE) as f:
            _modules[dt.name] = ck.RawModule(code=head + f.read())
    return _modules[dt.name]


def dev(a):
    return ck.asarray(a, device="cpu")


def key_dtype(dt):
    return np.uint64 if np.dtype(dt).itemsize > 4 else np.uint32


def run_passes(m, dt, n, data, raw, kdesc, pay=None, how=0):
    """The keys kernel, then one pass per varying digit, ranked `how`
    (0 ballots, 1 match; a keys-only sort's first pass by atomics, 2);
    returns the final (keys, element numbers)."""
    kt, nb = key_dtype(dt), -(-n // TILE)
    np_ = np.dtype(dt).itemsize
    hist = dev(np.zeros(8 * 256, np.uint32))
    status = dev(np.zeros(nb * 256 * 16, np.uint64))
    counters = dev(np.zeros(64, np.uint32))
    k0, k1 = dev(np.zeros(n, kt)), dev(np.zeros(n, kt))
    p0, p1 = (dev(np.zeros(n, np.uint32)), dev(np.zeros(n, np.uint32))) if pay else (None, None)
    null = None
    m.get_function("ck_sk_keys")((3,), (256,), (
        np.uint32(n), np.int64(n), data, np.int64(0), np.int64(np.dtype(dt).itemsize), p0 if pay else null,
        null if raw else k0, np.int32(1), np.int32(kdesc), np.int32(1), hist))
    h = ck.asnumpy(hist).reshape(8, 256)
    shifts = [8 * p for p in range(np_) if h[p].max() != n]
    for j, shift in enumerate(shifts):
        epoch = j + 1
        hview = hist[shift // 8 * 256:]
        rin = data if raw and j == 0 else null
        rout = data if raw and j == len(shifts) - 1 and j > 0 else null
        if pay:
            m.get_function("ck_rx_pass_pay")((nb,), (256,), (
                np.uint32(n), k0, p0, k1, p1, np.int32(0), np.int64(n), np.int32(shift), hview, status,
                counters[epoch:], np.int32(epoch), np.int32(how)))
            p0, p1 = p1, p0
        else:
            m.get_function("ck_rx_pass")((nb,), (256,), (
                np.uint32(n), k0, k1, np.int32(shift), hview, status, counters[epoch:], np.int32(epoch), rin, rout,
                np.int32(kdesc), np.int32(2 if j == 0 else how)))
        k0, k1 = k1, k0
    return k0, p0, shifts


@pytest.mark.parametrize("how", [0, 1])
@pytest.mark.parametrize("dt", ["float32", "int64", "int16"])
def test_onesweep_keys_only_raw(dt, how):
    """One contiguous row sorted by values only: the first pass reads the
    values, the last writes them back."""
    rng = np.random.default_rng(1)
    n = 3 * TILE + 1234
    if dt == "float32":
        h = rng.standard_normal(n).astype(np.float32)
        h[::97] = np.inf
        h[5::101] = 0.0
    else:
        info = np.iinfo(dt)
        h = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    m = module(dt)
    data = dev(h.copy())
    kdesc = 2 if dt == "float32" else 0
    k0, _, shifts = run_passes(m, dt, n, data, True, kdesc, how=how)
    assert len(shifts) >= 2
    np.testing.assert_array_equal(ck.asnumpy(data), np.sort(h))


@pytest.mark.parametrize("how", [0, 1])
def test_onesweep_argsort_with_element_numbers(how):
    """(key, element number) passes give the stable argsort, ranked by
    ballots or by match; atomics (unstable) are refused for them."""
    rng = np.random.default_rng(2)
    n = 2 * TILE + 77
    h = rng.integers(-50, 50, n).astype(np.int32)   # many ties: stability shows
    m = module("int32")
    data = dev(h)
    _, p0, shifts = run_passes(m, "int32", n, data, False, 0, pay=True, how=how)
    np.testing.assert_array_equal(ck.asnumpy(p0), np.argsort(h, kind="stable"))
    _, p0, shifts = run_passes(m, "int32", n, data, False, 0, pay=True, how=2)
    np.testing.assert_array_equal(ck.asnumpy(p0), np.argsort(h, kind="stable"))


def test_row_passes_keep_rows_apart():
    """Final passes over each element's row (mode 1) after the key passes
    leave every row sorted by key, stably."""
    rng = np.random.default_rng(3)
    rows, length = 3, TILE + 500
    h = rng.integers(0, 7, (rows, length)).astype(np.int32)
    n = rows * length
    m = module("int32")
    _, p0, _ = run_passes(m, "int32", n, dev(h.ravel()), False, 0, pay=True)
    nb = -(-n // TILE)
    hist = dev(np.zeros(256, np.uint32))
    m.get_function("ck_rx_rowhist")((2,), (256,), (np.int64(rows), np.int64(length), np.int32(1), hist))
    np.testing.assert_array_equal(ck.asnumpy(hist)[:rows], [length] * rows)
    p1 = dev(np.zeros(n, np.uint32))
    status = dev(np.zeros(nb * 256, np.uint64))
    counters = dev(np.zeros(64, np.uint32))
    null = None
    m.get_function("ck_rx_pass_pay")((nb,), (256,), (
        np.uint32(n), null, p0, null, p1, np.int32(1), np.int64(length), np.int32(0), hist, status, counters,
        np.int32(9), np.int32(1)))
    got = ck.asnumpy(p1).reshape(rows, length) - (np.arange(rows) * length)[:, None]
    np.testing.assert_array_equal(got, np.argsort(h, axis=1, kind="stable"))


@pytest.mark.parametrize("dt,length,kernel", [("float32", 1000, "ck_sk_rows4"), ("float64", 3000, "ck_sk_rows16"),
                                              ("int8", 4096, "ck_sk_rows16"), ("float32", 200, "ck_sk_block")])
@pytest.mark.parametrize("desc", [0, 1])
def test_row_sorts(dt, length, kernel, desc):
    """A block per row: values sorted in place and the stable argsort, with
    NaNs, signed zeros and ties, ascending and descending."""
    rng = np.random.default_rng(4)
    rows = 3
    if dt.startswith("float"):
        h = rng.integers(-20, 20, (rows, length)).astype(dt)
        h[:, ::13] = np.nan
        h[:, 1::17] = -0.0
    else:
        h = rng.integers(-128, 127, (rows, length), dtype=dt)
    m = module(dt)
    data = dev(h.copy())
    idx = dev(np.zeros((rows, length), np.int64))
    isz = np.dtype(dt).itemsize
    args = [np.int64(rows), np.int32(length)]
    if kernel == "ck_sk_block":
        P = 1 << (length - 1).bit_length()
        args.append(np.int32(P))
        block = max(32, P // 2)
    else:
        block = 256
    args += [data, np.int64(length * isz), np.int64(isz), np.int32(desc), idx, np.int64(length), np.int64(1),
             np.int32(1)]
    m.get_function(kernel)((rows,), (block,), tuple(args))
    want_idx = np.argsort(-h.astype(np.int64) if desc and dt.startswith("int") else h, axis=1, kind="stable")
    if desc and dt.startswith("float"):
        # descending: NumPy's order reversed with ties kept in order (the CPU's rule), NaNs first
        key = np.where(np.isnan(h), np.inf, h)
        want_idx = np.array([sorted(range(length), key=lambda j, r=r: (-key[r, j], j)) for r in range(rows)])
    np.testing.assert_array_equal(ck.asnumpy(idx), want_idx)
    np.testing.assert_array_equal(ck.asnumpy(data), np.take_along_axis(h, want_idx, axis=1))
