/* The core used from C alone: y = x + 1 on 1000 float32, then a sum. */
#include "cudakit.h"

#include <stdio.h>

int main(void)
{
    ck_array x, one, y, total;
    int64_t n = 1000;
    if (ck_arange(&x, 0, 1, n, CK_FLOAT32, ck_device_cpu()) != CK_OK ||
        ck_full_scalar(&one, 0, NULL, CK_FLOAT32, 1.0, ck_device_cpu()) != CK_OK ||
        ck_ufunc_call2(CK_OP_ADD, &x, &one, &y) != CK_OK ||
        ck_reduce(CK_REDUCE_SUM, &y, 1, 0, CK_DTYPE_INVALID, &total, 0) != CK_OK) {
        fprintf(stderr, "cudakit: %s\n", ck_error_message());
        return 1;
    }
    const float *v = (const float *)y.data;
    float s = *(const float *)total.data;
    printf("y[0] = %g, y[999] = %g, sum(y) = %g\n", v[0], v[999], s);
    int ok = v[0] == 1.0f && v[999] == 1000.0f && s == 500500.0f;
    ck_array_release(&x);
    ck_array_release(&one);
    ck_array_release(&y);
    ck_array_release(&total);
    return ok ? 0 : 1;
}
