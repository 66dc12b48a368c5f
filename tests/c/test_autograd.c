/* The autograd engine from C alone (no Python): record nodes with the
 * public recording calls, walk backward, read the leaves' gradients; the
 * version check and the missing-rule error; a deep chain released without
 * recursion. */
#include "ck_test.h"
#include "cudakit_autograd.h"

#include <string.h>

static double at(const ck_array *a, int64_t i) { return ((const double *)a->data)[i]; }

int main(void)
{
    ck_device cpu = ck_device_cpu();
    int64_t n = 3;
    ck_array x, y, s, ones;
    OK(ck_arange(&x, 1, 1, n, CK_FLOAT64, cpu));
    ck_ag_var *xv = ck_ag_var_new_leaf();
    CHECK(CK_AG_GATE(), "an array requiring grad opens the gate");

    /* y = x * x, s = sum(y): ds/dx = 2x */
    OK(ck_ufunc_call2(CK_OP_MULTIPLY, &x, &x, &y));
    ck_operand in[2] = {{.array = &x}, {.array = &x}};
    ck_ag_var *vars[2] = {xv, xv}, *yv, *sv;
    OK(ck_ag_record_ufunc(CK_OP_MULTIPLY, 2, in, vars, &y, &yv));
    CHECK(yv && yv->grad_fn && yv->requires_grad, "the product is recorded");
    OK(ck_reduce(CK_REDUCE_SUM, &y, 1, 0, CK_DTYPE_INVALID, &s, 0));
    OK(ck_ag_record_reduce("sum", &y, yv, 1, 0, 0.0, &s, &sv));
    char name[64];
    CHECK(!strcmp(ck_ag_node_name(sv->grad_fn, name, sizeof name), "SumBackward0"), "name %s", name);
    OK(ck_ag_backward(1, &sv, NULL, 1, 0, NULL, NULL));
    for (int i = 0; i < 3; i++) CHECK(at(&xv->grad, i) == 2.0 * (i + 1), "grad[%d] = %g", i, at(&xv->grad, i));
    /* a second backward (retain_graph was set) accumulates */
    OK(ck_ag_backward(1, &sv, NULL, 0, 0, NULL, NULL));
    CHECK(at(&xv->grad, 2) == 12.0, "accumulated %g", at(&xv->grad, 2));
    CHECK(ck_ag_backward(1, &sv, NULL, 0, 0, NULL, NULL) == CK_ERR_RUNTIME, "the saved arrays were freed");

    /* the version check: y = x * x saved x, then x changes */
    ck_array y2;
    ck_ag_var *y2v;
    OK(ck_ufunc_call2(CK_OP_MULTIPLY, &x, &x, &y2));
    OK(ck_ag_record_ufunc(CK_OP_MULTIPLY, 2, in, vars, &y2, &y2v));
    ck_ag_bump_version(&x);
    OK(ck_full_scalar(&ones, 1, &n, CK_FLOAT64, 1.0, cpu));
    CHECK(ck_ag_backward(1, &y2v, &ones, 0, 0, NULL, NULL) == CK_ERR_RUNTIME &&
          strstr(ck_error_message(), "modified by an inplace operation"), "version: %s", ck_error_message());

    /* capture: d(sum x*x)/dx without touching x's grad */
    ck_array y3, s3, cap;
    ck_ag_var *y3v, *s3v;
    OK(ck_ufunc_call2(CK_OP_MULTIPLY, &x, &x, &y3));
    OK(ck_ag_record_ufunc(CK_OP_MULTIPLY, 2, in, vars, &y3, &y3v));
    OK(ck_reduce(CK_REDUCE_SUM, &y3, 1, 0, CK_DTYPE_INVALID, &s3, 0));
    OK(ck_ag_record_reduce("sum", &y3, y3v, 1, 0, 0.0, &s3, &s3v));
    double before = at(&xv->grad, 0);
    OK(ck_ag_backward(1, &s3v, NULL, 0, 1, &xv, &cap));
    CHECK(cap.buf && at(&cap, 1) == 4.0 && at(&xv->grad, 0) == before, "captured %g", cap.buf ? at(&cap, 1) : -1);

    /* an op without a rule */
    const ck_array *ins[1] = {&x}, *outs[1] = {&x};
    ck_ag_var *mv;
    OK(ck_ag_record_missing("sort", 1, ins, &xv, 1, outs, &mv));
    CHECK(ck_ag_backward(1, &mv, &ones, 0, 0, NULL, NULL) == CK_ERR_RUNTIME && strstr(ck_error_message(), "'sort'"),
          "missing: %s", ck_error_message());

    /* a chain of 100000 nodes: walked and released iteratively */
    ck_ag_var *cur = xv;
    ck_ag_var_retain(cur);
    for (int i = 0; i < 100000; i++) {
        ck_ag_var *nv;
        OK(ck_ag_record_reshape(&x, cur, &x, &nv));
        ck_ag_var_release(cur);
        cur = nv;
    }
    OK(ck_ag_backward(1, &cur, &ones, 0, 0, NULL, NULL));
    ck_ag_var_release(cur);

    ck_ag_var_release(yv);
    ck_ag_var_release(sv);
    ck_ag_var_release(y2v);
    ck_ag_var_release(y3v);
    ck_ag_var_release(s3v);
    ck_ag_var_release(mv);
    ck_ag_var_release(xv);
    CHECK(!CK_AG_GATE(), "no array requires grad any more");
    ck_array_release(&cap);
    ck_array_release(&x);
    ck_array_release(&y);
    ck_array_release(&y2);
    ck_array_release(&y3);
    ck_array_release(&s);
    ck_array_release(&s3);
    ck_array_release(&ones);
    if (failures) fprintf(stderr, "test_autograd: %d failures\n", failures);
    else printf("test_autograd: ok\n");
    return failures != 0;
}
