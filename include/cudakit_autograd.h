/*
 * cudakit_autograd.h - reverse-mode automatic differentiation (src/autograd/).
 *
 * The engine records, for each op run on arrays that require a gradient
 * while grad mode is on, a node: the op's rule (a row of the rule table),
 * where each input's gradient goes, the arrays the rule needs (saved with
 * their buffers' versions) and the op's parameters.  backward walks the
 * nodes reachable from the roots in topological order, calls each rule with
 * the gradients of its outputs, sums an input's gradient back to its shape
 * where it was broadcast, casts it to its dtype, and accumulates the
 * gradients that reach leaves into their .grad.  Everything is C; rules are
 * written with the ops' C API, so they run on every device.
 *
 *     ck_ag_var *xv = ck_ag_var_new_leaf();            // x.requires_grad_()
 *     ck_array y;  ck_ufunc_call2(CK_OP_MULTIPLY, &x, &x, &y);
 *     ck_ag_node *n = ck_ag_node_new(ck_ag_rule_find("multiply"), 2, 1, 2, 0);
 *     ck_ag_node_set_input(n, 0, xv, &x); ck_ag_node_set_input(n, 1, xv, &x);
 *     ck_ag_node_save(n, 0, &x); ck_ag_node_save(n, 1, &x);
 *     ck_ag_var *yv = ck_ag_node_output(n, 0, &y);     // y.grad_fn is n
 *     ck_ag_node_release(n);
 *     ck_ag_backward(1, &yv, &ones, 0, NULL);           // xv->grad = 2x
 *
 * The Python layer (src/python/autograd.c) keeps a ck_ag_var per array
 * object that requires a gradient and calls the recording functions where
 * ops are called.  The engine is not thread safe: the Python layer calls it
 * under the GIL.
 *
 * The rule table
 * --------------
 * A rule is a row { name, backward, flags[, data] } (ck_ag_rule).  Rows live in
 * per-family arrays, each ended by a row with a NULL name, listed once in
 * src/autograd/rules.c (ck_ag_rule_families); a family of rules in its own
 * file adds its array there and nowhere else.  Element-wise rows are named
 * as the op table's rows (include/cudakit_ops.h) and found by op
 * (ck_ag_rule_for_op); other ops find theirs by name once
 * (ck_ag_rule_find("matmul")).  backward(node, gout, gin) reads the
 * gradients of the node's outputs (gout[nout], never missing: zeros are
 * made for outputs no gradient reached) and sets gin[i] for each input i
 * for which ck_ag_needs_grad(node, i); a gin left unset (buf == NULL) means
 * no gradient.  A gradient may have the op's output shape: the engine sums
 * it back to the input's shape (broadcasting), and casts it to the input's
 * dtype.  src/autograd/ag_rules.h has the helpers rules are written with.
 */
#ifndef CUDAKIT_AUTOGRAD_H
#define CUDAKIT_AUTOGRAD_H

#include "cudakit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ck_ag_node ck_ag_node;
typedef struct ck_ag_var ck_ag_var;

typedef ck_status (*ck_ag_backward_fn)(ck_ag_node *node, const ck_array *gout, ck_array *gin);

/* Flags of a rule row: what the recording site saves for it. */
#define CK_AG_SAVE_INPUTS  1u   /* the array inputs (element-wise ops) */
#define CK_AG_SAVE_OUTPUT  2u   /* the output (element-wise ops) */

typedef struct ck_ag_rule {
    const char *name;           /* the op's name ("multiply", "sum", "matmul") */
    ck_ag_backward_fn backward;
    unsigned flags;             /* CK_AG_SAVE_* */
    const void *data;           /* (optional) the row's constants, for a backward several rows share */
} ck_ag_rule;

/* The rule of an op by name, or NULL (the table is built on first use). */
const ck_ag_rule *ck_ag_rule_find(const char *name);
/* The rule of an element-wise op, or NULL when it has none. */
const ck_ag_rule *ck_ag_rule_for_op(ck_op op);
/* A row for an op with no rule: recording it lets backward raise naming
 * the op when it reaches the node (name kept, not copied). */
const ck_ag_rule *ck_ag_rule_missing(const char *name);

/* ------------------------------------------------------------ grad mode */

/* Nonzero when grad mode is on and some array requires a gradient: the one
 * test on the hot path (read it with CK_AG_GATE()). */
extern int64_t ck_ag_gate_;
#define CK_AG_GATE() __builtin_expect(ck_ag_gate_ != 0, 0)
int ck_ag_grad_enabled(void);
/* Returns the previous mode. */
int ck_ag_set_grad_enabled(int on);

/* ------------------------------------------------------------ variables */

/* The autograd state of one array.  A leaf (grad_fn == NULL) accumulates
 * its gradient into grad; a non-leaf has the node that made it. */
struct ck_ag_var {
    int64_t refcount;
    int requires_grad;
    int retains_grad;        /* a non-leaf whose grad is kept (retain_grad()) */
    ck_ag_node *grad_fn;     /* owned reference; NULL for a leaf */
    int output_nr;           /* which output of grad_fn */
    ck_ag_node *acc;         /* a leaf's accumulator node (not owned: it clears this when it goes) */
    ck_array grad;           /* buf == NULL: no gradient yet */
    void *user;              /* for the layer above (the Python face's cached .grad object) */
};

/* Called with a variable's user pointer when the variable goes (the layer
 * above's cached objects). */
extern void (*ck_ag_var_user_release)(void *user);

/* A leaf requiring a gradient (refcount 1). */
ck_ag_var *ck_ag_var_new_leaf(void);
void ck_ag_var_retain(ck_ag_var *v);
void ck_ag_var_release(ck_ag_var *v);
/* requires_grad of a leaf (CK_ERR_RUNTIME for a non-leaf, as PyTorch). */
ck_status ck_ag_var_set_requires_grad(ck_ag_var *v, int on);
/* Set (grad != NULL) or clear a variable's grad (a view of grad is kept). */
void ck_ag_var_set_grad(ck_ag_var *v, const ck_array *grad);
/* The node a gradient for v goes to (its grad_fn, or a leaf's accumulator,
 * made on first use) and the output number there; NULL when v needs none.
 * Borrowed: a caller keeping it takes a reference. */
ck_ag_node *ck_ag_var_edge(ck_ag_var *v, int *output_nr);

/* ------------------------------------------------------------ nodes */

/* What a node keeps of each input. */
typedef struct ck_ag_input {
    ck_ag_node *next;        /* owned: where the gradient goes; NULL: none needed */
    int output_nr;
    int is_array;            /* 0: a scalar operand (no gradient, value in scalar) */
    int weak;                /* a scalar operand that was a Python number */
    ck_dtype dtype;
    ck_device dev;
    int ndim;
    int64_t shape[CK_MAXDIMS];
    ck_scalar scalar;
} ck_ag_input;

/* An array a rule needs, with its buffer's version when saved. */
typedef struct ck_ag_saved {
    ck_array arr;            /* buf == NULL: not saved (or freed after backward) */
    uint64_t version;
} ck_ag_saved;

/* What a node keeps of each output. */
typedef struct ck_ag_output {
    ck_dtype dtype;
    ck_device dev;
    int ndim;
    int64_t shape[CK_MAXDIMS];
    ck_ag_var *retained;     /* not owned: a var with retains_grad (it clears this when it goes) */
} ck_ag_output;

struct ck_ag_node {
    int64_t refcount;
    const ck_ag_rule *rule;
    int nin, nout, nsaved;
    ck_ag_input *in;
    ck_ag_output *out;
    ck_ag_saved *saved;
    void *params;            /* params_size bytes of the rule's own parameters, zeroed */
    size_t params_size;
    int freed;               /* the saved arrays were freed by a backward without retain_graph */
    ck_ag_var *leaf;         /* an accumulator: owned reference to its leaf */
    /* A node whose backward is the layer above's (autograd.Function): user
     * is passed to its rule; user_free(user) runs when the node goes. */
    void *user;
    void (*user_free)(void *user);
    void *handle;            /* the layer above's object for this node, not owned */
    const char *label;       /* the op it prints as, when not its rule's (a view's function), or NULL */
    /* the walk's state */
    int64_t deps;
    int walk;
    int needed;
    ck_array *grads;         /* [nout] during a walk */
    ck_ag_node *chain;       /* ck_ag_node_release's list */
};

/* A node of rule (NULL only for accumulators) with nin inputs, nout
 * outputs, nsaved saved slots and params_size bytes of parameters. */
ck_ag_node *ck_ag_node_new(const ck_ag_rule *rule, int nin, int nout, int nsaved, size_t params_size);
void ck_ag_node_retain(ck_ag_node *n);
void ck_ag_node_release(ck_ag_node *n);
/* Input i is array a whose variable is v (NULL, or one that does not
 * require a gradient: none flows there). */
void ck_ag_node_set_input(ck_ag_node *n, int i, ck_ag_var *v, const ck_array *a);
/* Input i is a scalar operand (weak: a Python number, NEP 50). */
void ck_ag_node_set_scalar(ck_ag_node *n, int i, const ck_scalar *s, int weak);
/* Save a view of a in slot k, with its buffer's version now. */
void ck_ag_node_save(ck_ag_node *n, int k, const ck_array *a);
/* The variable of output i (array out): requires_grad, grad_fn = n. */
ck_ag_var *ck_ag_node_output(ck_ag_node *n, int i, const ck_array *out);
/* Whether any input needs a gradient (a node that none does need not be recorded). */
int ck_ag_node_any_needed(const ck_ag_node *n);
static inline int ck_ag_needs_grad(const ck_ag_node *n, int i) { return n->in[i].next != NULL; }
/* The node's name as PyTorch prints it: "MulBackward0" from "multiply". */
const char *ck_ag_node_name(const ck_ag_node *n, char *buf, size_t size);

/* ------------------------------------------------------------ in place */

/* An in-place write into a is about to happen: bumps its buffer's version
 * (always; cheap). */
static inline void ck_ag_bump_version(const ck_array *a) { if (a->buf) a->buf->version++; }

/* ------------------------------------------------------------ backward */

/* Gradients of roots[i] (seeded with grads[i]; a grad with buf == NULL is
 * ones, allowed for a root of one element) flow back through the graph.
 * With ninputs == 0 they accumulate into the leaves' grad (and retained
 * non-leaves'); otherwise only into captured[j] (new arrays, buf NULL when
 * no gradient reached inputs[j]), nothing accumulates, and only the nodes
 * leading to the inputs run.  Without retain_graph, the saved arrays of
 * the nodes that ran are freed (a second backward through them raises). */
ck_status ck_ag_backward(int nroots, ck_ag_var *const *roots, const ck_array *grads, int retain_graph,
                         int ninputs, ck_ag_var *const *inputs, ck_array *captured);

/* ------------------------------------------------------------ recording
 * The layer above calls these where the ops run, after the op.  vars are
 * the inputs' variables (NULL for an array without one).  Each sets *ov
 * to the output's new variable (grad_fn = the node recorded), or NULL
 * when no input needs a gradient or the output cannot carry one (not
 * float or complex). */

ck_status ck_ag_record_ufunc(ck_op op, int nin, const ck_operand *in, ck_ag_var *const *vars, const ck_array *out,
                             ck_ag_var **ov);
/* A reduction over the axes of mask (sum, mean, prod, max, var...: its
 * rule's name; the node's params are a ck_ag_reduce_params, scale =
 * 1/count; the input is saved in slot 0 and the output in slot 1 when the
 * rule's flags ask). */
ck_status ck_ag_record_reduce(const char *name, const ck_array *a, ck_ag_var *va, uint64_t mask, int keepdims,
                              double ddof, const ck_array *out, ck_ag_var **ov);
ck_status ck_ag_record_reshape(const ck_array *a, ck_ag_var *va, const ck_array *out, ck_ag_var **ov);
/* name: "astype" or "copy" (the gradient is cast back to a's dtype) or
 * "to_device" (moved back to a's device). */
ck_status ck_ag_record_copy(const char *name, const ck_array *a, ck_ag_var *va, const ck_array *out, ck_ag_var **ov);
/* perm: output axis i is a's axis perm[i] (NULL: reversed). */
ck_status ck_ag_record_transpose(const ck_array *a, ck_ag_var *va, const int *perm, const ck_array *out,
                                 ck_ag_var **ov);
ck_status ck_ag_record_broadcast(const ck_array *a, ck_ag_var *va, const ck_array *out, ck_ag_var **ov);
/* out is a view of a: offset, shape and strides in elements of a
 * C-contiguous array of a's shape (ck_ag_virtual gives such an array to
 * run the view's function on). */
ck_status ck_ag_record_view(const char *name, const ck_array *a, ck_ag_var *va, int64_t offset, int ndim,
                            const int64_t *shape, const int64_t *strides, const ck_array *out, ck_ag_var **ov);
/* The same, reading the layout off a view v made from ck_ag_virtual's fake of a. */
ck_status ck_ag_record_view_of(const char *name, const ck_array *a, ck_ag_var *va, const ck_array *v,
                               const ck_array *out, ck_ag_var **ov);
/* a[view] = value happened (value NULL: a scalar), the view's layout v
 * read off ck_ag_virtual's fake of a: a's new variable in *ov (the old one
 * is the node's first input). */
ck_status ck_ag_record_setitem(const ck_array *a, ck_ag_var *va, const ck_array *value, ck_ag_var *vv,
                               const ck_array *v, ck_ag_var **ov);
/* roll by shifts[i] along axes[i] (axes NULL: of the flattened array). */
ck_status ck_ag_record_roll(const ck_array *a, ck_ag_var *va, int n, const int64_t *shifts, const int *axes,
                            const ck_array *out, ck_ag_var **ov);
/* tril (upper 0) or triu (upper 1) with diagonal offset k. */
ck_status ck_ag_record_tri(const ck_array *a, ck_ag_var *va, int64_t k, int upper, const ck_array *out, ck_ag_var **ov);
/* pad with a constant: widths[2 * i], widths[2 * i + 1] before and after axis i. */
ck_status ck_ag_record_pad(const ck_array *a, ck_ag_var *va, const int64_t *widths, const ck_array *out,
                           ck_ag_var **ov);
/* tile (repeat 0) or repeat (1) with one count: output axis i is the
 * input's (promoted: shape[i]) taken factor[i] times, as blocks (tile) or
 * element by element (repeat). */
ck_status ck_ag_record_tile(const ck_array *a, ck_ag_var *va, int nd, const int64_t *shape, const int64_t *factor,
                            int repeat, const ck_array *out, ck_ag_var **ov);
ck_status ck_ag_record_matmul(const ck_array *a, ck_ag_var *va, const ck_array *b, ck_ag_var *vb, const ck_array *out,
                              ck_ag_var **ov);
/* Any op, for rules written elsewhere (a new family): the rule named name
 * (a rule-less node when the table has none), inputs in[i] with variables
 * vars[i] (an input NULL: a scalar operand, no gradient), saved[k] in the
 * node's slots (NULL entries skipped), params_size bytes of params copied
 * (the rule's own struct, declared where both the recording site and the
 * rule can see it: a public header of the op), outputs out[j] (ov[j] their
 * variables, NULL for those that cannot carry a gradient). */
ck_status ck_ag_record_op(const char *name, int nin, const ck_array *const *in, ck_ag_var *const *vars, int nsaved,
                          const ck_array *const *saved, const void *params, size_t params_size, int nout,
                          const ck_array *const *out, ck_ag_var **ov);
/* An op with no rule: backward raises naming it when it reaches the node. */
ck_status ck_ag_record_missing(const char *name, int nin, const ck_array *const *in, ck_ag_var *const *vars, int nout,
                               const ck_array *const *out, ck_ag_var **ov);
/* A fake array with a's shape and dtype, C-contiguous, on memory that
 * does not exist: views of it give layouts in element units. */
void ck_ag_virtual(ck_array *fake, const ck_array *a);

/* The CPU's matmul is NumPy's (the layer above registers it), for the
 * rules of the products on devices whose backend has none. */
typedef ck_status (*ck_ag_matmul_fn)(ck_array *out, const ck_array *a, const ck_array *b);
void ck_ag_set_host_matmul(ck_ag_matmul_fn fn);
/* a @ b on any device (ck_matmul, or the registered host product). */
ck_status ck_ag_matmul(ck_array *out, const ck_array *a, const ck_array *b);

#ifdef __cplusplus
}
#endif
#endif /* CUDAKIT_AUTOGRAD_H */
