/* Graphs through the C API on the CPU (include/cudakit_graph.h): ops
 * captured, not run, then replayed; an in-place op once a replay; the pool
 * reusing a capture's temporaries and giving everything back with the
 * graph; what a capture refuses. */
#include "cudakit.h"
#include "cudakit_graph.h"

#include <string.h>

#include "ck_test.h"

#define CPU ck_device_cpu()

int main(void)
{
    int64_t n = 1000;
    ck_mem_stats st0, st1;
    OK(ck_memory_stats(CPU, &st0));
    ck_array x, one, y, t;
    OK(ck_arange(&x, 0, 1, n, CK_FLOAT32, CPU));
    OK(ck_full_scalar(&one, 0, NULL, CK_FLOAT32, 1.0, CPU));
    ck_graph *g;
    OK(ck_graph_create(CPU, &g));
    CHECK(ck_graph_node_count(g) == -1, "nodes before a capture");
    OK(ck_graph_capture_begin(g, NULL, NULL));
    CHECK(ck_graph_capturing(CPU), "not capturing");
    /* y = (x + 1) + 1, the temporary freed within the capture; then x += 1 */
    OK(ck_ufunc_call2(CK_OP_ADD, &x, &one, &t));
    OK(ck_ufunc_call2(CK_OP_ADD, &t, &one, &y));
    ck_array_release(&t);
    OK(ck_ufunc_call2(CK_OP_ADD, &x, &one, &t));
    ck_array_release(&t);
    OK(ck_ufunc_apply(CK_OP_ADD, 2, (ck_operand[]){{.array = &x}, {.array = &one}}, &x, 1, CK_DTYPE_INVALID));
    float v;
    CHECK(ck_memcpy_to_host(CPU, &v, x.data, sizeof v) == CK_ERR_RUNTIME, "a copy to the host was captured");
    CHECK(strstr(ck_error_message(), "cannot be captured") != NULL, "message: %s", ck_error_message());
    CHECK(ck_device_synchronize(CPU) == CK_ERR_RUNTIME, "a synchronisation was captured");
    OK(ck_graph_capture_end(g));
    CHECK(!ck_graph_capturing(CPU), "still capturing");
    CHECK(ck_graph_node_count(g) == 4, "%lld nodes", (long long)ck_graph_node_count(g));
    /* the second temporary reused the first one's memory */
    CHECK(ck_graph_pool_bytes(g) == 2 * (size_t)n * 4, "pool holds %zu bytes", ck_graph_pool_bytes(g));
    CHECK(((float *)x.data)[5] == 5, "the capture ran");
    for (int r = 1; r <= 3; r++) {
        OK(ck_graph_replay(g));
        CHECK(((float *)y.data)[5] == 5 + r - 1 + 2, "replay %d: y[5] = %g", r, ((float *)y.data)[5]);
        CHECK(((float *)x.data)[5] == 5 + r, "replay %d: x[5] = %g", r, ((float *)x.data)[5]);
    }
    ck_array_release(&y);   /* the pool keeps it: replays write there */
    OK(ck_graph_replay(g));
    ck_graph_free(g);
    ck_array_release(&x);
    ck_array_release(&one);
    OK(ck_memory_stats(CPU, &st1));
    CHECK(st1.allocated == st0.allocated, "allocated %zu before, %zu after", st0.allocated, st1.allocated);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
