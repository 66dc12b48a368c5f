/* The pure array layer: promotion, casting rules, strides, broadcasting,
 * reshape without copies, and the merging iterator. */
#include "cudakit.h"
#include "../../src/array/layout.h"

#include <stdio.h>
#include <string.h>

static int failures;
#define CHECK(cond) do { if (!(cond)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

int main(void)
{
    /* NumPy 2 promotion */
    CHECK(ck_dtype_promote(CK_INT8, CK_UINT8) == CK_INT16);
    CHECK(ck_dtype_promote(CK_INT64, CK_UINT64) == CK_FLOAT64);
    CHECK(ck_dtype_promote(CK_INT16, CK_FLOAT16) == CK_FLOAT32);
    CHECK(ck_dtype_promote(CK_UINT8, CK_FLOAT16) == CK_FLOAT16);
    CHECK(ck_dtype_promote(CK_INT32, CK_COMPLEX64) == CK_COMPLEX128);
    CHECK(ck_dtype_promote(CK_FLOAT64, CK_COMPLEX64) == CK_COMPLEX128);
    CHECK(ck_dtype_promote(CK_BOOL, CK_INT8) == CK_INT8);
    for (int a = 0; a < CK_NTYPES; a++)
        for (int b = 0; b < CK_NTYPES; b++)
            CHECK(ck_dtype_promote((ck_dtype)a, (ck_dtype)b) == ck_dtype_promote((ck_dtype)b, (ck_dtype)a));
    CHECK(ck_dtype_can_cast_safe(CK_INT64, CK_FLOAT64));
    CHECK(!ck_dtype_can_cast_safe(CK_UINT64, CK_INT64));
    CHECK(ck_dtype_can_cast_same_kind(CK_FLOAT64, CK_FLOAT32));
    CHECK(!ck_dtype_can_cast_same_kind(CK_FLOAT64, CK_INT32));

    /* strides and contiguity */
    int64_t shape[3] = {2, 3, 4}, st[3];
    ck_strides_c(3, shape, 4, st);
    CHECK(st[0] == 48 && st[1] == 16 && st[2] == 4);
    CHECK(ck_layout_is_c_contiguous(3, shape, st, 4));
    CHECK(!ck_layout_is_f_contiguous(3, shape, st, 4));
    ck_strides_f(3, shape, 4, st);
    CHECK(st[0] == 4 && st[1] == 8 && st[2] == 24);

    /* broadcasting */
    int64_t s1[2] = {3, 1}, s2[1] = {4}, out[CK_MAXDIMS];
    const int64_t *shs[2] = {s1, s2};
    int nds[2] = {2, 1}, ond;
    CHECK(ck_broadcast_shapes(2, nds, shs, &ond, out) == CK_OK && ond == 2 && out[0] == 3 && out[1] == 4);
    int64_t s4[2] = {3, 2}, s3[1] = {5};
    shs[0] = s4;
    shs[1] = s3;
    CHECK(ck_broadcast_shapes(2, nds, shs, &ond, out) == CK_ERR_VALUE);
    CHECK(strstr(ck_error_message(), "(3,2) (5,)") != NULL);

    /* reshape: a view for (2,3,4) -> (6,4), not for a transposed (4,3,2) -> (12,2) */
    int64_t cs[3], ns[2], nshape[2] = {6, 4};
    ck_strides_c(3, shape, 8, cs);
    CHECK(ck_layout_reshape_strides(3, shape, cs, 2, nshape, 8, 0, ns) && ns[0] == 32 && ns[1] == 8);
    int64_t tshape[3] = {4, 3, 2}, tst[3] = {8, 32, 96}, n2[2] = {12, 2};
    CHECK(!ck_layout_reshape_strides(3, tshape, tst, 2, n2, 8, 0, ns));
    CHECK(ck_layout_reshape_strides(3, tshape, tst, 2, n2, 8, 1, ns) && ns[0] == 8 && ns[1] == 96);

    /* the iterator merges contiguous operands to one dimension ... */
    char buf[1];
    int64_t cst[3];
    ck_strides_c(3, shape, 4, cst);
    ck_iter_operand ops[2] = {{buf, 3, shape, cst}, {buf, 3, shape, cst}};
    ck_iter it;
    ck_iter_prepare(&it, 2, 3, shape, ops);
    CHECK(it.ndim == 1 && it.shape[0] == 24 && it.strides[0][0] == 4);
    /* ... keeps a broadcast operand's zero stride ... */
    int64_t bshape[1] = {4}, bst[1] = {4};
    ops[1] = (ck_iter_operand){buf, 1, bshape, bst};
    ck_iter_prepare(&it, 2, 3, shape, ops);
    CHECK(it.ndim == 2 && it.shape[0] == 4 && it.strides[1][0] == 4 && it.strides[1][1] == 0);
    /* ... and walks an F-ordered output in memory order */
    int64_t fst[3];
    ck_strides_f(3, shape, 4, fst);
    ops[0] = (ck_iter_operand){buf, 3, shape, fst};
    ops[1] = (ck_iter_operand){buf, 3, shape, fst};
    ck_iter_prepare(&it, 2, 3, shape, ops);
    CHECK(it.ndim == 1 && it.strides[0][0] == 4);

    /* axes */
    int ax = -1;
    CHECK(ck_axis_normalize(&ax, 3) == CK_OK && ax == 2);
    ax = 3;
    CHECK(ck_axis_normalize(&ax, 3) == CK_ERR_AXIS);

    printf("%s\n", failures ? "FAILED" : "all layout checks passed");
    return failures ? 1 : 0;
}
