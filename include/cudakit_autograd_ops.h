/*
 * cudakit_autograd_ops.h - the recording of the ops whose gradient rules
 * are trainops' (src/autograd/rules_train.c) and that the engine's own
 * record functions (cudakit_autograd.h) do not cover.  Called, like those,
 * by the layer above after the op ran; each sets *ov to the output's new
 * variable, or NULL when no input needs a gradient.  max, min, prod, var,
 * std (ck_ag_record_reduce) and where, clip (ck_ag_record_ufunc) need no
 * function of their own: their rows are found by name.
 *
 *     ck_softmax(&y, &x, -1, 0);
 *     ck_ag_record_softmax(&x, xv, -1, 0, &y, &yv);
 */
#ifndef CUDAKIT_AUTOGRAD_OPS_H
#define CUDAKIT_AUTOGRAD_OPS_H

#include "cudakit.h"
#include "cudakit_autograd.h"
#include "cudakit_train.h"

#ifdef __cplusplus
extern "C" {
#endif

ck_status ck_ag_record_softmax(const ck_array *a, ck_ag_var *va, int axis, int log_, const ck_array *out,
                               ck_ag_var **ov);
ck_status ck_ag_record_logsumexp(const ck_array *a, ck_ag_var *va, uint64_t mask, int keepdims, const ck_array *out,
                                 ck_ag_var **ov);
/* The loss of ck_softmax_xent with what it gave for the backward; the
 * target (probabilities only) may need a gradient too. */
ck_status ck_ag_record_cross_entropy(const ck_array *logits, ck_ag_var *vl, const ck_array *target, ck_ag_var *vt,
                                     const ck_xent_args *args, const ck_array *loss, const ck_array *lse,
                                     const ck_array *total, ck_ag_var **ov);
/* cumsum (name "cumsum"; another name records an op whose backward
 * raises naming it) along axis, or of the flattened a. */
ck_status ck_ag_record_scan(const char *name, const ck_array *a, ck_ag_var *va, int axis, int axis_none,
                            const ck_array *out, ck_ag_var **ov);
/* out = a[items] with an integer or boolean array among them (ck_index_get). */
ck_status ck_ag_record_index(const ck_array *a, ck_ag_var *va, int n, const ck_index_item *items, ck_index_mode mode,
                             const ck_array *out, ck_ag_var **ov);
ck_status ck_ag_record_take(const ck_array *a, ck_ag_var *va, const ck_array *indices, int axis, int axis_none,
                            ck_index_mode mode, const ck_array *out, ck_ag_var **ov);
ck_status ck_ag_record_take_along_axis(const ck_array *a, ck_ag_var *va, const ck_array *indices, int axis,
                                       int axis_none, const ck_array *out, ck_ag_var **ov);
/* concatenate (stack 0; axis_none: of the flattened inputs) or stack of
 * n arrays along the output's axis. */
ck_status ck_ag_record_join(int stack, int n, const ck_array *const *in, ck_ag_var *const *vars, int axis,
                            int axis_none, const ck_array *out, ck_ag_var **ov);

/* The names of those rows, i from 0 (NULL after the last): what the tests
 * read so that a row without a test fails. */
const char *ck_ag_train_rule_name(int i);

#ifdef __cplusplus
}
#endif
#endif /* CUDAKIT_AUTOGRAD_OPS_H */
