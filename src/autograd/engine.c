/* The autograd engine: variables, nodes, grad mode and the backward walk
 * (see include/cudakit_autograd.h). */
#include "ag_rules.h"
#include "cudakit_device.h"
#include "cudakit_graph.h"

#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ grad mode */

int64_t ck_ag_gate_;
static int grad_mode_ = 1;
static int64_t live_;   /* variables that require a gradient */

static void gate_update(void) { ck_ag_gate_ = grad_mode_ ? live_ : 0; }

int ck_ag_grad_enabled(void) { return grad_mode_; }

int ck_ag_set_grad_enabled(int on)
{
    int prev = grad_mode_;
    grad_mode_ = on != 0;
    gate_update();
    return prev;
}

static void live_add(int d)
{
    live_ += d;
    gate_update();
}

/* ------------------------------------------------------------ variables */

ck_ag_var *ck_ag_var_new_leaf(void)
{
    ck_ag_var *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->refcount = 1;
    v->requires_grad = 1;
    live_add(1);
    return v;
}

void (*ck_ag_var_user_release)(void *user);

void ck_ag_var_retain(ck_ag_var *v) { v->refcount++; }

void ck_ag_var_release(ck_ag_var *v)
{
    if (!v || --v->refcount > 0) return;
    if (v->requires_grad) live_add(-1);
    /* a leaf with an accumulator is owned by it: v->acc is NULL here */
    if (v->grad_fn) {
        if (v->retains_grad && v->output_nr < v->grad_fn->nout && v->grad_fn->out[v->output_nr].retained == v)
            v->grad_fn->out[v->output_nr].retained = NULL;
        ck_ag_node_release(v->grad_fn);
    }
    if (v->grad.buf) ck_array_release(&v->grad);
    if (v->user && ck_ag_var_user_release) ck_ag_var_user_release(v->user);
    free(v);
}

ck_status ck_ag_var_set_requires_grad(ck_ag_var *v, int on)
{
    on = on != 0;
    if (v->grad_fn) {
        if (on) return CK_OK;
        return ck_error_set(CK_ERR_RUNTIME, "you can only change requires_grad flags of leaf variables. If you want "
                                            "to use a computed variable in a subgraph that doesn't require "
                                            "differentiation use var_no_grad = var.detach().");
    }
    if (on != v->requires_grad) live_add(on ? 1 : -1);
    v->requires_grad = on;
    return CK_OK;
}

void ck_ag_var_set_grad(ck_ag_var *v, const ck_array *grad)
{
    if (v->grad.buf) ck_array_release(&v->grad);
    if (grad) ck_array_view(&v->grad, grad);
    else memset(&v->grad, 0, sizeof v->grad);
}

ck_ag_node *ck_ag_var_edge(ck_ag_var *v, int *output_nr)
{
    *output_nr = 0;
    if (!v || !v->requires_grad) return NULL;
    if (v->grad_fn) {
        *output_nr = v->output_nr;
        return v->grad_fn;
    }
    if (!v->acc) {
        /* The accumulator owns its leaf and the leaf only points at it, so
         * it lives as long as some graph (or walk) holds it: it starts with
         * no reference, the caller takes one. */
        ck_ag_node *a = ck_ag_node_new(NULL, 0, 1, 0, 0);
        if (!a) return NULL;
        a->refcount = 0;
        a->leaf = v;
        v->refcount++;
        v->acc = a;
    }
    return v->acc;
}

/* ------------------------------------------------------------ nodes */

ck_ag_node *ck_ag_node_new(const ck_ag_rule *rule, int nin, int nout, int nsaved, size_t params_size)
{
    size_t sz = sizeof(ck_ag_node), o_in, o_out, o_saved, o_params;
    o_in = sz;
    sz += (size_t)nin * sizeof(ck_ag_input);
    o_out = sz;
    sz += (size_t)nout * sizeof(ck_ag_output);
    o_saved = sz;
    sz += (size_t)nsaved * sizeof(ck_ag_saved);
    o_params = (sz + 15) & ~(size_t)15;
    sz = o_params + params_size;
    char *p = calloc(1, sz);
    if (!p) {
        ck_error_set(CK_ERR_MEMORY, "autograd: out of memory for a graph node");
        return NULL;
    }
    ck_ag_node *n = (ck_ag_node *)p;
    n->refcount = 1;
    n->rule = rule;
    n->nin = nin;
    n->nout = nout;
    n->nsaved = nsaved;
    n->in = (ck_ag_input *)(p + o_in);
    n->out = (ck_ag_output *)(p + o_out);
    n->saved = (ck_ag_saved *)(p + o_saved);
    n->params = params_size ? p + o_params : NULL;
    n->params_size = params_size;
    return n;
}

void ck_ag_node_retain(ck_ag_node *n) { n->refcount++; }

static void node_free_saved(ck_ag_node *n)
{
    for (int k = 0; k < n->nsaved; k++)
        if (n->saved[k].arr.buf) ck_array_release(&n->saved[k].arr);
}

/* Releasing a long chain (an RNN's thousands of steps) must not recurse
 * once a node: the nodes whose count drops to zero go on a list. */
void ck_ag_node_release(ck_ag_node *n)
{
    if (!n || --n->refcount > 0) return;
    ck_ag_node *pending = n;
    n->chain = NULL;
    while (pending) {
        ck_ag_node *cur = pending;
        pending = cur->chain;
        for (int i = 0; i < cur->nin; i++) {
            ck_ag_node *x = cur->in[i].next;
            if (x && --x->refcount == 0) {
                x->chain = pending;
                pending = x;
            }
        }
        node_free_saved(cur);
        for (int j = 0; j < cur->nout; j++)
            if (cur->out[j].retained) cur->out[j].retained = NULL;
        if (cur->leaf) {
            ck_ag_var *leaf = cur->leaf;
            if (leaf->acc == cur) leaf->acc = NULL;
            cur->leaf = NULL;
            ck_ag_var_release(leaf);
        }
        if (cur->user_free) cur->user_free(cur->user);
        free(cur);
    }
}

void ck_ag_node_set_input(ck_ag_node *n, int i, ck_ag_var *v, const ck_array *a)
{
    ck_ag_input *in = &n->in[i];
    in->is_array = 1;
    in->dtype = a->dtype;
    in->dev = ck_array_device(a);
    in->ndim = a->ndim;
    memcpy(in->shape, a->shape, (size_t)a->ndim * sizeof *a->shape);
    int nr;
    ck_ag_node *e = ck_ag_var_edge(v, &nr);
    if (e) {
        ck_ag_node_retain(e);
        in->next = e;
        in->output_nr = nr;
    }
}

void ck_ag_node_set_scalar(ck_ag_node *n, int i, const ck_scalar *s, int weak)
{
    ck_ag_input *in = &n->in[i];
    in->is_array = 0;
    in->weak = weak;
    in->scalar = *s;
    in->dtype = s->dtype;
    in->ndim = 0;
}

void ck_ag_node_save(ck_ag_node *n, int k, const ck_array *a)
{
    ck_ag_saved *sv = &n->saved[k];
    if (sv->arr.buf) ck_array_release(&sv->arr);
    ck_array_view(&sv->arr, a);
    sv->version = a->buf->version;
}

ck_ag_var *ck_ag_node_output(ck_ag_node *n, int i, const ck_array *out)
{
    ck_ag_output *o = &n->out[i];
    o->dtype = out->dtype;
    o->dev = ck_array_device(out);
    o->ndim = out->ndim;
    memcpy(o->shape, out->shape, (size_t)out->ndim * sizeof *out->shape);
    ck_ag_var *v = calloc(1, sizeof *v);
    if (!v) {
        ck_error_set(CK_ERR_MEMORY, "autograd: out of memory for a variable");
        return NULL;
    }
    v->refcount = 1;
    v->requires_grad = 1;
    v->grad_fn = n;
    v->output_nr = i;
    ck_ag_node_retain(n);
    live_add(1);
    return v;
}

int ck_ag_node_any_needed(const ck_ag_node *n)
{
    for (int i = 0; i < n->nin; i++)
        if (n->in[i].next) return 1;
    return 0;
}

/* PyTorch's names for the nodes of ops whose names differ from NumPy's. */
static const char *const torch_names[][2] = {
    {"add", "Add"}, {"subtract", "Sub"}, {"multiply", "Mul"}, {"divide", "Div"}, {"negative", "Neg"},
    {"power", "Pow"}, {"absolute", "Abs"}, {"matmul", "Mm"}, {"getitem", "Slice"}, {"reshape", "View"},
    {"transpose", "Permute"}, {"arcsin", "Asin"}, {"arccos", "Acos"}, {"arctan", "Atan"},
    {"arcsinh", "Asinh"}, {"arccosh", "Acosh"}, {"arctanh", "Atanh"}, {"arctan2", "Atan2"},
    {"reciprocal", "Reciprocal"}, {"conjugate", "Conj"}, {"true_divide", "Div"},
};

const char *ck_ag_node_name(const ck_ag_node *n, char *buf, size_t size)
{
    if (!n->rule) {
        snprintf(buf, size, "AccumulateGrad");
        return buf;
    }
    const char *name = n->label ? n->label : n->rule->name;
    for (size_t i = 0; i < sizeof torch_names / sizeof *torch_names; i++)
        if (!strcmp(name, torch_names[i][0])) {
            snprintf(buf, size, "%sBackward0", torch_names[i][1]);
            return buf;
        }
    /* snake_case -> CamelCase */
    size_t k = 0;
    int up = 1;
    for (const char *c = name; *c && k + 1 < size; c++) {
        if (*c == '_') { up = 1; continue; }
        buf[k++] = up && *c >= 'a' && *c <= 'z' ? (char)(*c - 'a' + 'A') : *c;
        up = 0;
    }
    buf[k] = 0;
    snprintf(buf + k, size - k, "Backward0");
    return buf;
}

/* ------------------------------------------------------------ host matmul */

static ck_ag_matmul_fn host_matmul_;

void ck_ag_set_host_matmul(ck_ag_matmul_fn fn) { host_matmul_ = fn; }

ck_status ck_ag_matmul(ck_array *out, const ck_array *a, const ck_array *b)
{
    if (ck_array_device(a).type == CK_DEVICE_CPU && host_matmul_) return host_matmul_(out, a, b);
    return ck_matmul(out, a, b, 0);
}

/* ------------------------------------------------------------ gradients */

/* g summed (and cast) to the input's shape and dtype, in place of *g. */
static ck_status fit_to_input(ck_array *g, const ck_ag_input *in)
{
    ck_array r;
    ck_status s;
    if (g->ndim != in->ndim || memcmp(g->shape, in->shape, (size_t)in->ndim * sizeof *in->shape)) {
        s = ck_ag_sum_to(&r, g, in->ndim, in->shape);
        if (s != CK_OK) return s;
        ck_array_release(g);
        *g = r;
    }
    if (g->dtype != in->dtype) {
        s = ck_array_astype(&r, g, in->dtype, 0);
        if (s != CK_OK) return s;
        ck_array_release(g);
        *g = r;
    }
    return CK_OK;
}

/* *slot += *g (g is consumed). */
static ck_status accumulate(ck_array *slot, ck_array *g)
{
    if (!slot->buf) {
        *slot = *g;
        memset(g, 0, sizeof *g);
        return CK_OK;
    }
    ck_array r;
    ck_status s = ck_ufunc_call2(CK_OP_ADD, slot, g, &r);
    ck_array_release(g);
    if (s != CK_OK) return s;
    ck_array_release(slot);
    *slot = r;
    return CK_OK;
}

/* A gradient of its own for a variable's .grad: g itself when nothing
 * else can see its memory (a rule's result, or the CPU product's NumPy
 * result, which only its buffer holds), else a copy (g may be a view of a
 * gradient still in use, of a Function's result, or broadcast). */
static ck_status own_copy(ck_array *out, ck_array *g)
{
    int own = (g->flags & CK_ARRAY_C_CONTIGUOUS) && (g->flags & CK_ARRAY_WRITEABLE) && g->buf->refcount == 1 &&
              g->data == (char *)g->buf->ptr && !g->buf->readonly;
    if (own) {
        *out = *g;
        memset(g, 0, sizeof *g);
        return CK_OK;
    }
    return ck_array_astype(out, g, g->dtype, 0);
}

/* var.grad += g, in place when it has one (as PyTorch's AccumulateGrad). */
static ck_status accumulate_into_var(ck_ag_var *v, ck_array *g)
{
    if (!v->grad.buf) return own_copy(&v->grad, g);
    ck_array *d = &v->grad;
    if (d->ndim != g->ndim || memcmp(d->shape, g->shape, (size_t)g->ndim * sizeof *g->shape))
        return ck_error_set(CK_ERR_RUNTIME, "the gradient of shape %s does not match the existing .grad of shape %s",
                            ck_shape_str(g->ndim, g->shape, 0), ck_shape_str(d->ndim, d->shape, 1));
    ck_operand in[2] = {{.array = d}, {.array = g}};
    return ck_ufunc_apply(CK_OP_ADD, 2, in, d, 1, CK_DTYPE_INVALID);
}

static ck_status saved_check(ck_ag_node *n)
{
    char name[64];
    for (int k = 0; k < n->nsaved; k++) {
        const ck_ag_saved *sv = &n->saved[k];
        if (n->freed)
            return ck_error_set(CK_ERR_RUNTIME, "Trying to backward through the graph a second time (or directly access "
                                "saved tensors after they have already been freed). Saved intermediate values of the "
                                "graph are freed when you call .backward() or autograd.grad(). Specify "
                                "retain_graph=True if you need to backward through the graph a second time or if you "
                                "need to access saved tensors after calling backward. (%s)",
                                ck_ag_node_name(n, name, sizeof name));
        if (sv->arr.buf && sv->arr.buf->version != sv->version)
            return ck_error_set(CK_ERR_RUNTIME, "one of the variables needed for gradient computation has been modified "
                                "by an inplace operation: [%s array of shape %s], saved by %s, is at version %llu; "
                                "expected version %llu instead. Hint: the in-place change (out=, +=, x[...] = ...) "
                                "came after the op that saved it; make a copy before changing it.",
                                ck_dtype_get_info(sv->arr.dtype)->name, ck_shape_str(sv->arr.ndim, sv->arr.shape, 0),
                                ck_ag_node_name(n, name, sizeof name), (unsigned long long)sv->arr.buf->version,
                                (unsigned long long)sv->version);
    }
    return CK_OK;
}

/* ------------------------------------------------------------ the walk */

typedef struct {
    ck_ag_node **v;
    size_t n, cap;
} node_list;

static int list_push(node_list *l, ck_ag_node *x)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        ck_ag_node **p = realloc(l->v, cap * sizeof *p);
        if (!p) return -1;
        l->v = p;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return 0;
}

static int walk_id_;

/* Every node reachable from the roots, each once (iterative: graphs can be
 * deep), with deps = the number of edges into it from reachable nodes;
 * each holds a reference until the walk ends. */
static ck_status gather(int nroots, ck_ag_node *const *rnodes, int id, node_list *all)
{
    typedef struct { ck_ag_node *n; int next; } frame;
    frame *st = NULL;
    size_t sn = 0, scap = 0;
    ck_status s = CK_OK;
    for (int r = 0; r < nroots && s == CK_OK; r++) {
        ck_ag_node *root = rnodes[r];
        if (!root || root->walk == id) continue;
        root->walk = id;
        root->deps = 0;
        if (list_push(all, root) < 0) { s = CK_ERR_MEMORY; break; }
        ck_ag_node_retain(root);
        if (sn == scap) {
            scap = scap ? 2 * scap : 64;
            frame *p = realloc(st, scap * sizeof *p);
            if (!p) { s = CK_ERR_MEMORY; break; }
            st = p;
        }
        st[sn++] = (frame){root, 0};
        while (sn) {
            frame *f = &st[sn - 1];
            if (f->next == f->n->nin) {
                sn--;
                continue;
            }
            ck_ag_node *c = f->n->in[f->next++].next;
            if (!c) continue;
            if (c->walk == id) {
                c->deps++;
                continue;
            }
            c->walk = id;
            c->deps = 1;
            if (list_push(all, c) < 0) { s = CK_ERR_MEMORY; break; }
            ck_ag_node_retain(c);
            if (sn == scap) {
                scap *= 2;
                frame *p = realloc(st, scap * sizeof *p);
                if (!p) { s = CK_ERR_MEMORY; break; }
                st = p;
            }
            st[sn++] = (frame){c, 0};
        }
    }
    free(st);
    if (s == CK_ERR_MEMORY) return ck_error_set(CK_ERR_MEMORY, "autograd: out of memory walking the graph");
    return s;
}

static void release_grads(ck_ag_node *n)
{
    if (!n->grads) return;
    for (int j = 0; j < n->nout; j++)
        if (n->grads[j].buf) ck_array_release(&n->grads[j]);
    free(n->grads);
    n->grads = NULL;
}

/* Ones (or zeros) with the shape and dtype of output j of n. */
static ck_status fill_like_output(ck_array *out, const ck_ag_output *o, double v)
{
    return ck_full_scalar(out, o->ndim, o->shape, o->dtype, v, o->dev);
}

/* The ones seeding a backward from a root of one element: one element a
 * device and dtype, made once (outside any graph capture, whose memory
 * would be the graph's) and handed out as read-only views of the root's
 * shape, so that a training step's loss.backward() launches no fill.
 * Read-only: nothing may add into it in place (a leaf's .grad and
 * retain_grad() copy such a gradient, an in-place op on it raises). */
#define SEED_MAX 32
static struct {
    ck_device dev;
    ck_dtype dt;
    ck_array one;
} seeds_[SEED_MAX];
static int nseeds_;
static pthread_mutex_t seed_mu_ = PTHREAD_MUTEX_INITIALIZER;

static ck_status seed_ones(ck_array *out, const ck_ag_output *o)
{
    const ck_array *one = NULL;
    pthread_mutex_lock(&seed_mu_);
    for (int i = 0; i < nseeds_; i++)
        if (ck_device_equal(seeds_[i].dev, o->dev) && seeds_[i].dt == o->dtype) one = &seeds_[i].one;
    if (!one && nseeds_ < SEED_MAX && !ck_graph_capturing(o->dev)) {
        ck_array a;
        /* filled on this stream; waited for once, so that any stream may read it */
        if (ck_full_scalar(&a, 0, NULL, o->dtype, 1.0, o->dev) == CK_OK) {
            if (ck_device_synchronize(o->dev) == CK_OK) {
                seeds_[nseeds_].dev = o->dev;
                seeds_[nseeds_].dt = o->dtype;
                seeds_[nseeds_].one = a;
                one = &seeds_[nseeds_++].one;
            } else {
                ck_array_release(&a);
            }
        }
        ck_error_clear();
    }
    if (one) {
        int64_t strides[CK_MAXDIMS] = {0};
        ck_array_view(out, one);
        ck_array_set_layout(out, o->ndim, o->shape, strides);
        out->flags &= ~CK_ARRAY_WRITEABLE;
    }
    pthread_mutex_unlock(&seed_mu_);
    return one ? CK_OK : fill_like_output(out, o, 1.0);
}

/* Before a backward of n: its saved arrays unchanged, and a zero gradient
 * for each output that got none. */
static ck_status prepare_grads(ck_ag_node *n)
{
    ck_status s = saved_check(n);
    for (int j = 0; s == CK_OK && j < n->nout; j++)
        if (!n->grads[j].buf) s = fill_like_output(&n->grads[j], &n->out[j], 0.0);
    return s;
}

/* After a backward of n gave the gradients gin of its inputs (gin NULL:
 * none ran): each fitted to its input and added to the gradient of the node
 * feeding it, and that node made ready when its last edge is done; gin is
 * freed.  Inputs from `from` on (a fold has taken input 0 over).  s is the
 * backward's status: on an error no more gradient moves, but the edges are
 * still counted. */
static ck_status deliver(ck_ag_node *n, ck_array *gin, ck_status s, node_list *ready, int from)
{
    for (int i = from; gin && s == CK_OK && i < n->nin; i++) {
        if (!gin[i].buf) continue;
        if (!n->in[i].next) { ck_array_release(&gin[i]); continue; }
        s = fit_to_input(&gin[i], &n->in[i]);
    }
    for (int i = from; i < n->nin; i++) {
        ck_ag_node *c = n->in[i].next;
        if (!c) continue;
        if (s == CK_OK && gin && gin[i].buf) s = accumulate(&c->grads[n->in[i].output_nr], &gin[i]);
        if (--c->deps == 0 && list_push(ready, c) < 0 && s == CK_OK)
            s = ck_error_set(CK_ERR_MEMORY, "autograd: out of memory");
    }
    if (gin) {
        for (int i = 0; i < n->nin; i++)
            if (gin[i].buf) ck_array_release(&gin[i]);
        free(gin);
    }
    return s;
}

/* The gradients of n's inputs, zeroed, or NULL (an error set). */
static ck_array *alloc_gin(const ck_ag_node *n)
{
    ck_array *gin = calloc((size_t)(n->nin ? n->nin : 1), sizeof *gin);
    if (!gin) ck_error_set(CK_ERR_MEMORY, "autograd: out of memory");
    return gin;
}

static void free_saved(ck_ag_node *n)
{
    node_free_saved(n);
    n->freed = 1;
}

/* The fold (ag_rules.h) of n with c, the node its input 0 feeds, when c
 * has no other gradient coming (n's is its last edge, none arrived before)
 * and keeps none (retain_grad), or NULL. */
static const ck_ag_fold *fold_for(const ck_ag_node *n)
{
    if (n->nin < 1 || n->in[0].output_nr != 0) return NULL;
    const ck_ag_node *c = n->in[0].next;
    if (!c || !c->rule || !c->rule->backward || c->nout != 1 || c->deps != 1 || c->grads[0].buf || c->out[0].retained)
        return NULL;
    for (const ck_ag_fold *f = ck_ag_folds; f->rule; f++)
        if (!strcmp(f->rule, n->rule->name) && !strcmp(f->next, c->rule->name) && f->can(n, c)) return f;
    return NULL;
}

/* n and the node c its input 0 feeds, as one (fold_for said they may):
 * the gradients of c's inputs from n's output gradients; c has then run
 * (its edge from n is done here, not counted down to make it ready). */
static ck_status run_folded(ck_ag_node *n, const ck_ag_fold *f, int retain_graph, node_list *ready)
{
    ck_ag_node *c = n->in[0].next;
    ck_status s = prepare_grads(n);
    if (s == CK_OK) s = saved_check(c);
    ck_array *gin = s == CK_OK ? alloc_gin(c) : NULL;
    if (s == CK_OK && !gin) s = ck_error_status();
    if (s == CK_OK) s = f->fn(n, c, n->grads, gin);
    s = deliver(c, gin, s, ready, 0);
    c->deps = 0;
    s = deliver(n, NULL, s, ready, 1);
    if (!retain_graph && s == CK_OK) {
        free_saved(n);
        free_saved(c);
    }
    return s;
}

static ck_status run_node(ck_ag_node *n, int retain_graph, int capture, node_list *ready)
{
    ck_status s = CK_OK;
    int any = 0;
    for (int j = 0; j < n->nout; j++) any |= n->grads[j].buf != NULL;
    /* autograd.grad (capture) reads gradients on their way: no folds there */
    const ck_ag_fold *f = any && !capture && n->rule->backward ? fold_for(n) : NULL;
    if (f) return run_folded(n, f, retain_graph, ready);
    ck_array *gin = NULL;
    int run = any && (!capture || (n->needed & 1));
    if (run && !n->rule->backward) {
        char name[64];
        return ck_error_set(CK_ERR_RUNTIME, "autograd: '%s' has no gradient rule (its node is %s); it cannot be "
                            "differentiated yet", n->rule->name, ck_ag_node_name(n, name, sizeof name));
    }
    if (run) {
        s = prepare_grads(n);
        if (s == CK_OK && !(gin = alloc_gin(n))) s = ck_error_status();
        if (s == CK_OK) s = n->rule->backward(n, n->grads, gin);
    }
    s = deliver(n, gin, s, ready, 0);
    if (run && !retain_graph && s == CK_OK) free_saved(n);
    return s;
}

ck_status ck_ag_backward(int nroots, ck_ag_var *const *roots, const ck_array *grads, int retain_graph,
                         int ninputs, ck_ag_var *const *inputs, ck_array *captured)
{
    ck_status s = CK_OK;
    int capture = ninputs > 0;
    ck_ag_node **rnodes = calloc((size_t)nroots + 1, sizeof *rnodes);
    int *rnr = calloc((size_t)nroots + 1, sizeof *rnr);
    node_list all = {0}, ready = {0};
    if (!rnodes || !rnr) {
        free(rnodes);
        free(rnr);
        return ck_error_set(CK_ERR_MEMORY, "autograd: out of memory");
    }
    for (int r = 0; r < nroots; r++) {
        if (!roots[r] || !roots[r]->requires_grad) {
            s = ck_error_set(CK_ERR_RUNTIME, "element %d of tensors does not require grad and does not have a grad_fn", r);
            goto out;
        }
        rnodes[r] = ck_ag_var_edge(roots[r], &rnr[r]);
        if (!rnodes[r]) { s = ck_error_status(); goto out; }
    }
    int id = ++walk_id_;
    /* the targets of a capture: accumulators of leaves, or the producers of
     * non-leaves (whose incoming gradient is read before they run) */
    ck_ag_node **tnodes = NULL;
    int *tnr = NULL;
    if (capture) {
        tnodes = calloc((size_t)ninputs, sizeof *tnodes);
        tnr = calloc((size_t)ninputs, sizeof *tnr);
        if (!tnodes || !tnr) { free(tnodes); free(tnr); s = ck_error_set(CK_ERR_MEMORY, "autograd: out of memory"); goto out; }
        for (int j = 0; j < ninputs; j++) {
            memset(&captured[j], 0, sizeof captured[j]);
            if (!inputs[j] || !inputs[j]->requires_grad) {
                for (int k = 0; k < j; k++) ck_ag_node_release(tnodes[k]);
                free(tnodes); free(tnr);
                s = ck_error_set(CK_ERR_RUNTIME, "One of the differentiated Tensors does not require grad");
                goto out;
            }
            tnodes[j] = ck_ag_var_edge(inputs[j], &tnr[j]);
            if (!tnodes[j]) {
                for (int k = 0; k < j; k++) ck_ag_node_release(tnodes[k]);
                free(tnodes); free(tnr);
                s = ck_error_status();
                goto out;
            }
            ck_ag_node_retain(tnodes[j]);
        }
    }
    /* the needed marks of an earlier walk are stale */
    if (capture)
        for (int j = 0; j < ninputs; j++) tnodes[j]->needed = 0;
    s = gather(nroots, rnodes, id, &all);
    if (s == CK_OK && capture) {
        for (size_t i = 0; i < all.n; i++) all.v[i]->needed = 0;
        for (int j = 0; j < ninputs; j++) tnodes[j]->needed = 0;
        /* bit 1: the node runs; bit 2: a target, whose incoming gradient
         * is read (its producers must run; an accumulator is run to read it) */
        for (int j = 0; j < ninputs; j++) tnodes[j]->needed |= tnodes[j]->rule ? 2 : 3;
        /* needed = leads to a target's accumulator or to a node below a
         * target: children mostly come after their parents in discovery
         * order, so passes in reverse order settle in one or two */
        int changed = 1;
        while (changed) {
            changed = 0;
            for (size_t i = all.n; i-- > 0;) {
                ck_ag_node *x = all.v[i];
                if (x->needed & 1) continue;
                for (int k = 0; k < x->nin; k++)
                    if (x->in[k].next && x->in[k].next->needed) { x->needed |= 1; changed = 1; break; }
            }
        }
    }
    for (size_t i = 0; s == CK_OK && i < all.n; i++) {
        all.v[i]->grads = calloc((size_t)all.v[i]->nout, sizeof(ck_array));
        if (!all.v[i]->grads) s = ck_error_set(CK_ERR_MEMORY, "autograd: out of memory");
    }
    /* seed the roots */
    for (int r = 0; s == CK_OK && r < nroots; r++) {
        ck_ag_node *rn = rnodes[r];
        const ck_ag_output *o = rn->rule ? &rn->out[rnr[r]] : NULL;
        ck_array seed;
        if (grads && grads[r].buf) {
            const ck_array *g = &grads[r];
            if (o && (g->ndim != o->ndim || memcmp(g->shape, o->shape, (size_t)o->ndim * sizeof *o->shape))) {
                s = ck_error_set(CK_ERR_RUNTIME, "Mismatch in shape: grad_output[%d] has a shape of %s and output[%d] "
                                 "has a shape of %s", r, ck_shape_str(g->ndim, g->shape, 0), r,
                                 ck_shape_str(o->ndim, o->shape, 1));
                break;
            }
            s = ck_array_astype(&seed, g, o ? o->dtype : g->dtype, 0);
        } else {
            int64_t size = 1;
            if (o) for (int d = 0; d < o->ndim; d++) size *= o->shape[d];
            else size = -1;
            if (size != 1 && o) {
                s = ck_error_set(CK_ERR_RUNTIME, "grad can be implicitly created only for scalar outputs");
                break;
            }
            /* (autograd.grad may hand a root's own gradient back: a fresh one) */
            if (o) s = capture ? fill_like_output(&seed, o, 1.0) : seed_ones(&seed, o);
            else s = ck_error_set(CK_ERR_RUNTIME, "backward of a leaf needs its gradient argument");
        }
        if (s == CK_OK) s = accumulate(&rn->grads[rnr[r]], &seed);
    }
    int prev_mode = ck_ag_set_grad_enabled(0);
    for (size_t i = 0; s == CK_OK && i < all.n; i++)
        if (all.v[i]->deps == 0 && list_push(&ready, all.v[i]) < 0) s = ck_error_set(CK_ERR_MEMORY, "autograd: out of memory");
    while (s == CK_OK && ready.n) {
        ck_ag_node *n = ready.v[--ready.n];
        if (capture)
            for (int j = 0; j < ninputs; j++)
                if (tnodes[j] == n && n->grads[tnr[j]].buf) {
                    ck_array g;
                    ck_array_view(&g, &n->grads[tnr[j]]);
                    s = accumulate(&captured[j], &g);
                }
        if (s != CK_OK) break;
        if (!n->rule) {
            /* an accumulator */
            if (!capture && n->leaf && n->grads[0].buf) s = accumulate_into_var(n->leaf, &n->grads[0]);
            release_grads(n);
            continue;
        }
        if (!capture)
            for (int j = 0; s == CK_OK && j < n->nout; j++)
                if (n->out[j].retained && n->grads[j].buf) {
                    ck_array g;
                    ck_array_view(&g, &n->grads[j]);
                    s = accumulate_into_var(n->out[j].retained, &g);
                    if (g.buf) ck_array_release(&g);
                }
        if (s == CK_OK) s = run_node(n, retain_graph, capture, &ready);
        release_grads(n);
    }
    ck_ag_set_grad_enabled(prev_mode);
    for (size_t i = 0; i < all.n; i++) release_grads(all.v[i]);
    if (capture) {
        for (int j = 0; j < ninputs; j++)
            if (s != CK_OK && captured[j].buf) ck_array_release(&captured[j]);
        for (int j = 0; j < ninputs; j++) ck_ag_node_release(tnodes[j]);
        free(tnodes);
        free(tnr);
    }
    for (size_t i = 0; i < all.n; i++) ck_ag_node_release(all.v[i]);
out:
    free(all.v);
    free(ready.v);
    free(rnodes);
    free(rnr);
    return s;
}
