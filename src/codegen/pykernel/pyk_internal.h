/*
 * pyk_internal.h - the Python-kernel translator's own structures: the tree
 * read from the S-expression text, the types, the functions being typed,
 * and the translation context.  Internal to src/codegen/pykernel/.
 *
 * The passes, one file each:
 *   sexpr.c     the text -> a tree of nodes (lists of atoms and lists)
 *   types.c     interned types, NumPy's promotion, unification, C names
 *   builtins.c  the one table of what a kernel may call or read: cuda.*,
 *               math.*, cmath.*, numpy's ufuncs and dtypes, Python's builtins
 *   infer.c     types of every variable and expression for one call's
 *               argument types (iterated to a fixed point over loops)
 *   emit.c      the typed tree -> CUDA C, with the Python line of each
 *               statement in a comment
 *   translate.c the driver (ck_pyk_translate)
 *
 * Errors unwind with longjmp from the failing node to ck_pyk_translate,
 * which frees the arena: a pass reports and stops, it never recovers.
 */
#ifndef CK_CODEGEN_PYK_INTERNAL_H
#define CK_CODEGEN_PYK_INTERNAL_H

#include "cudakit.h"
#include "cudakit_pykernel.h"
#include "../../base/sbuf.h"

#include <setjmp.h>
#include <stdint.h>

/* ------------------------------------------------------------- the tree */

/* The node kinds: the head symbol of a list. */
#define PYK_NODE_KINDS(X)                                                                      \
    X(MODULE, "module") X(DEF, "def") X(PARAMS, "params") X(BODY, "body") X(ORELSE, "orelse")  \
    X(GLOBAL, "global") X(RETURN, "return") X(ASSIGN, "assign") X(TARGETS, "targets")          \
    X(AUGASSIGN, "augassign") X(ANNASSIGN, "annassign") X(FOR, "for") X(WHILE, "while")        \
    X(IF, "if") X(EXPR, "expr") X(PASS, "pass") X(BREAK, "break") X(CONTINUE, "continue")      \
    X(RAISE, "raise") X(ASSERT, "assert") X(UNSUPPORTED, "unsupported") X(NAME, "name")        \
    X(CONST, "const") X(BINOP, "binop") X(UNARYOP, "unaryop") X(BOOLOP, "boolop")              \
    X(COMPARE, "compare") X(OPS, "ops") X(IFEXP, "ifexp") X(CALL, "call") X(ARGS, "args")      \
    X(KWARGS, "kwargs") X(KW, "kw") X(ATTRIBUTE, "attribute") X(SUBSCRIPT, "subscript")        \
    X(SLICE, "slice") X(TUPLE, "tuple") X(LIST, "list") X(VALUES, "values")

typedef enum pyk_kind {
    PK_ATOM = 0,
#define PYK_KIND_ENUM_(ID, text) PK_##ID,
    PYK_NODE_KINDS(PYK_KIND_ENUM_)
#undef PYK_KIND_ENUM_
    PK_COUNT
} pyk_kind;

typedef enum pyk_atom { PA_SYM, PA_INT, PA_FLOAT, PA_STR } pyk_atom;

typedef struct pyk_type pyk_type;
typedef struct pyk_node pyk_node;

struct pyk_node {
    int kind;            /* pyk_kind; PK_ATOM for an atom */
    int atom;            /* pyk_atom of an atom */
    const char *s;       /* an atom's text (symbols, strings, the digits of ints) */
    int64_t i;           /* PA_INT */
    int big;             /* PA_INT beyond int64 */
    double f;            /* PA_FLOAT */
    int line, col;       /* lists: the (kind line col ...) position; 0 when none */
    int n;               /* lists: elements after the head (and line, col) */
    pyk_node **v;        /* lists: those elements */
    /* set by typing */
    const pyk_type *type;
    int loop;            /* the loop dtype of an operator or ufunc at this node */
    int tag;             /* a pass's note: a tuple index, the callee of a call... */
};

/* ------------------------------------------------------------ the types */

typedef enum pyk_tkind {
    T_UNKNOWN = 0,
    T_NONE,       /* None, and the result of a function returning nothing */
    T_SCALAR,     /* a NumPy scalar type (dtype) */
    T_ARRAY,      /* dtype, ndim, layout, space, readonly */
    T_TUPLE,      /* elts */
    T_RANGE,      /* range(...) */
    T_ITER,       /* enumerate(...) / zip(...) of a tuple or array: elts are the iterables */
    T_MODULE,     /* name: "cuda", "math", "numpy", "cuda.atomic" ... */
    T_FUNC,       /* an intrinsic: entry in builtins.c's table */
    T_DTYPE,      /* a type object used as a cast or dtype= (dtype) */
    T_DIM3,       /* threadIdx, blockIdx, blockDim, gridDim (entry) */
    T_DEVFUNC,    /* a device function of the module (index into the module's defs) */
    T_STR,        /* a string constant (print, messages) */
    T_SLICE,      /* a slice inside an index */
} pyk_tkind;

/* Memory spaces of arrays. */
enum { PYK_GLOBAL = 0, PYK_SHARED, PYK_LOCAL, PYK_CONST };

struct pyk_type {
    int k;                    /* pyk_tkind */
    ck_dtype dtype;           /* T_SCALAR, T_ARRAY (element), T_DTYPE */
    int ndim;                 /* T_ARRAY */
    char layout;              /* T_ARRAY: 'C', 'F', 'A' */
    int space;                /* T_ARRAY */
    int readonly;             /* T_ARRAY */
    int n;                    /* T_TUPLE, T_ITER: elements */
    const pyk_type **elts;
    int entry;                /* T_FUNC, T_DIM3, T_MODULE: builtins.c entry; T_DEVFUNC: def index; T_ITER: 0 enumerate 1 zip */
    /* a value known when translating (Python literals, frozen globals,
     * their arithmetic): weak in NumPy's sense until stored in a variable */
    int weak;                 /* T_SCALAR: a Python bool/int/float/complex */
    int literal;              /* T_SCALAR: lit holds its value */
    int64_t lit;              /* integer literals and bools */
    double flit, flit_im;     /* float and complex literals */
};

/* --------------------------------------------------------- the builtins */

/* What a kernel may call or read, one row each (builtins.c). */
typedef enum pyk_bkind {
    PB_MODULE,     /* a namespace: its members are rows with its name as prefix */
    PB_FUNC,       /* a function */
    PB_CONST,      /* a float constant (math.pi) */
    PB_DTYPE,      /* a type object: float32, np.int64, int, float, bool, complex */
    PB_DIM3,       /* threadIdx ... */
} pyk_bkind;

typedef struct pyk_builtin {
    const char *name;         /* qualified: "cuda.atomic.add", "math.sin", "abs" */
    int bkind;                /* pyk_bkind */
    int id;                   /* the handler (PF_* below) */
    int op;                   /* a ck_op the function is, or -1 */
    double value;             /* PB_CONST */
    ck_dtype dtype;           /* PB_DTYPE */
} pyk_builtin;

/* The handlers: what typing and emission switch on. */
enum {
    PF_NONE = 0,
    PF_UFUNC,          /* op: NumPy's ufunc of that op (np.sin, np.add ...) */
    PF_MATH,           /* op: math.sin ...: float32 stays float32, integers go to float64 */
    PF_MATH_LIBM,      /* math.erf, gamma ...: no op; the C function of that name */
    PF_MATH_INT,       /* math.floor, ceil, trunc: int64 results */
    PF_MATH_PRED,      /* math.isnan, isinf, isfinite */
    PF_MATH_LOG,       /* math.log(x[, base]) */
    PF_ABS, PF_MIN, PF_MAX, PF_POW, PF_ROUND, PF_LEN, PF_RANGE, PF_ENUMERATE, PF_ZIP, PF_PRINT,
    PF_CAST,           /* a dtype called: float32(x), int(x) */
    PF_COMPLEX,        /* complex(re, im) */
    PF_DIVMOD,
    PF_GRID, PF_GRIDSIZE, PF_LANEID, PF_WARPSIZE,
    PF_SYNCTHREADS, PF_SYNCTHREADS_COUNT, PF_SYNCTHREADS_AND, PF_SYNCTHREADS_OR, PF_SYNCWARP,
    PF_THREADFENCE, PF_THREADFENCE_BLOCK, PF_THREADFENCE_SYSTEM,
    PF_SHARED_ARRAY, PF_LOCAL_ARRAY, PF_CONST_ARRAY_LIKE,
    PF_ATOMIC,         /* op field: which (PYK_AT_*) */
    PF_WARP_VOTE,      /* all_sync, any_sync, eq_sync, ballot_sync */
    PF_SHFL,           /* shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync */
    PF_MATCH_ANY, PF_MATCH_ALL, PF_ACTIVEMASK, PF_LANEMASK_LT,
    PF_BITOP,          /* popc, brev, clz, ffs */
    PF_FMA, PF_CBRT, PF_SELP,
    PF_HALF,           /* cuda.fp16.* */
    PF_CG_THIS_GRID, PF_GRID_SYNC,
    PF_RANDOM,         /* cudakit.cuda.random's xoroshiro128p_* */
    PF_ARRAY_ATTR,     /* not called: a.shape, a.size ... (see infer.c) */
    PF_FLOAT_CONST,
};

enum { PYK_AT_ADD, PYK_AT_SUB, PYK_AT_AND, PYK_AT_OR, PYK_AT_XOR, PYK_AT_INC, PYK_AT_DEC, PYK_AT_EXCH,
       PYK_AT_MAX, PYK_AT_MIN, PYK_AT_NANMAX, PYK_AT_NANMIN, PYK_AT_CAS,
       PYK_AT_CAS0 /* compare_and_swap(ary, old, val): ary[0] */ };

const pyk_builtin *pyk_builtin_find(const char *qualname);
const pyk_builtin *pyk_builtin_at(int entry);
int pyk_builtin_index(const pyk_builtin *b);
/* A member of a namespace row ("math" + "sin"), or NULL. */
const pyk_builtin *pyk_builtin_member(const pyk_builtin *ns, const char *attr);

/* ------------------------------------------------------------ functions */

typedef struct pyk_var {
    const char *name;
    const pyk_type *type;     /* the unification of every value stored */
    int param;                /* its parameter number, or -1 */
    int array_decl;           /* a shared/local/const array made in place (its node) */
    pyk_node *decl;
    int uniform;              /* (emit.c, barrier regions) the same for every thread: kept out of the frames */
} pyk_var;

/* A function typed for one list of argument types. */
typedef struct pyk_func {
    pyk_node *def;            /* (def name line col (params ...) (body ...)) */
    const char *name;
    int def_index;            /* in the module's defs */
    int nparams;
    const pyk_type **ptypes;
    const pyk_type *ret;      /* NULL while unknown */
    int returns_value;
    pyk_var *vars;
    int nvars, cvars;
    char cname[96];
    int is_kernel;
    int typing;               /* being typed (a call to it now is recursion) */
} pyk_func;

typedef struct pyk_global {
    const char *name;
    pyk_node *node;           /* (global name kind ...) */
    const pyk_type *type;
} pyk_global;

typedef struct pyk_ctx {
    /* the arena: everything below lives until ck_pyk_translate returns */
    struct pyk_chunk *chunks;
    const ck_pyk_options *opt;
    pyk_node *module;
    pyk_node **defs;
    int ndefs;
    pyk_global **globals;     /* each def's bindings: (def ... (targets l c (global ...)*)) */
    int *nglobals;
    pyk_func **funcs;
    int nfuncs, cfuncs;
    pyk_func *cur;            /* the function being typed or written */
    int changed;              /* a variable's type grew during this typing pass */
    int strict;               /* the last typing walk: unknown types are errors */
    int loop_depth;
    int uses_barrier;
    int uses_random;
    int uses_grid_sync;       /* g.sync(): a cooperative launch, a hidden ck_gs parameter */
    int grid_cpu;             /* (emit.c) the kernel's CPU form runs the grid in regions (else the GPU only) */
    int coarsen;              /* (emit.c) the kernel's GPU form loops over cuda.grid(1) (a ck_nthreads parameter) */
    int coarse_on;            /* (emit.c) writing that loop's body */
    int vec_on;               /* (emit.c) writing the body of the loop's vector path: a[i] is a lane */
    const pyk_type **types;   /* every type made, in the order made (types.c interns them) */
    int ntypes, ctypes;
    /* errors */
    jmp_buf fail;
    int err_line, err_col;
    /* emission */
    ck_sbuf head;             /* tuple structs, prototypes */
    ck_sbuf body;             /* function bodies */
    int indent;
    int tmp;                  /* temporaries written */
} pyk_ctx;

/* ------------------------------------------------------------ the passes */

void *pyk_alloc(pyk_ctx *c, size_t n);
char *pyk_strdup(pyk_ctx *c, const char *s);
/* Stop the translation at node n (NULL: no position). */
_Noreturn void pyk_fail(pyk_ctx *c, const pyk_node *n, ck_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* sexpr.c */
pyk_node *pyk_parse(pyk_ctx *c, const char *text, size_t len);
const char *pyk_kind_name(int kind);
/* A list's element i, NULL past the end. */
static inline pyk_node *pyk_kid(const pyk_node *n, int i) { return i < n->n ? n->v[i] : NULL; }
/* Element i as a symbol's text (fails on anything else). */
const char *pyk_sym(pyk_ctx *c, const pyk_node *n, int i);
/* Element i as a list of the given kind (fails on anything else). */
pyk_node *pyk_list(pyk_ctx *c, const pyk_node *n, int i, int kind);

/* types.c */
const pyk_type *pyk_t_unknown(void);
const pyk_type *pyk_t_none(void);
const pyk_type *pyk_t_scalar(pyk_ctx *c, ck_dtype d);
const pyk_type *pyk_t_weak(pyk_ctx *c, ck_dtype d);   /* a Python number of unknown value */
const pyk_type *pyk_t_int_lit(pyk_ctx *c, int64_t v);
const pyk_type *pyk_t_float_lit(pyk_ctx *c, double v);
const pyk_type *pyk_t_complex_lit(pyk_ctx *c, double re, double im);
const pyk_type *pyk_t_bool_lit(pyk_ctx *c, int v);
const pyk_type *pyk_t_array(pyk_ctx *c, ck_dtype d, int ndim, char layout, int space, int readonly);
const pyk_type *pyk_t_tuple(pyk_ctx *c, int n, const pyk_type **elts);
const pyk_type *pyk_t_simple(pyk_ctx *c, int k, int entry);   /* T_RANGE, T_MODULE, T_FUNC, T_DIM3, T_DEVFUNC, T_STR, T_SLICE */
const pyk_type *pyk_t_dtype(pyk_ctx *c, ck_dtype d);
const pyk_type *pyk_t_iter(pyk_ctx *c, int which, int n, const pyk_type **elts);
int pyk_t_equal(const pyk_type *a, const pyk_type *b);
/* The type a variable holding t has: weak scalars become their default
 * dtype, literals lose their value. */
const pyk_type *pyk_t_strong(pyk_ctx *c, const pyk_type *t);
/* The type of a variable given a and b (NULL when they cannot unify). */
const pyk_type *pyk_t_unify(pyk_ctx *c, const pyk_type *a, const pyk_type *b);
/* NumPy 2 promotion of two scalar types (weak ones yield, NEP 50). */
ck_dtype pyk_t_promote(const pyk_type *a, const pyk_type *b);
/* "float32", "array(float32, 2d, C)", "Tuple(int64, int64)". */
const char *pyk_t_str(pyk_ctx *c, const pyk_type *t);
/* The C type of a value of t in the kernel ("float", "ck_pyk_array<float, 2>", "ck_pyk_tup3"). */
const char *pyk_t_ctype(pyk_ctx *c, const pyk_type *t);
/* The C storage type of an element of dtype d, and the type a scalar variable has. */
const char *pyk_t_storage(ck_dtype d);
const char *pyk_t_var_ctype(ck_dtype d);

/* infer.c */
void pyk_infer_func(pyk_ctx *c, pyk_func *f);
/* A binary op's result type; at->loop gets the loop dtype (emission asks again for `in`). */
const pyk_type *pyk_binary(pyk_ctx *c, pyk_node *at, int op, const pyk_type *a, const pyk_type *b);
int pyk_binop_of(const char *py);
/* The specialisation of def index di for these argument types (typed on first use). */
pyk_func *pyk_func_for(pyk_ctx *c, int di, int nargs, const pyk_type **args, const pyk_node *at);
pyk_var *pyk_var_find(pyk_func *f, const char *name);
/* The global binding of a name, or NULL. */
pyk_global *pyk_global_find(pyk_ctx *c, const char *name);
/* A compile-time integer (literals, globals, their arithmetic), or fail. */
int64_t pyk_const_int(pyk_ctx *c, const pyk_node *e, const char *what);

/* emit.c */
void pyk_emit_func(pyk_ctx *c, pyk_func *f);

#endif
