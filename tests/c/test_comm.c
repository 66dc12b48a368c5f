/* The CPU's communicator from C alone: three processes (fork) all-reduce,
 * broadcast, all-gather and reduce-scatter in rank order, exchange a ring
 * of messages bigger than their channels inside a group, get CK_ERR_VALUE
 * for calls that do not match, and CK_ERR_TIMEOUT when a rank does not
 * come; init_all's ranks in one process through a group. */
#include "ck_test.h"
#include "cudakit_comm.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 3
#define BIG ((3 << 20) + 5)   /* more than a slot, more than a ring */

static int rank_main(const ck_comm_id *id, int r)
{
    ck_comm *c;
    OK(ck_comm_init_rank(&c, ck_device_cpu(), N, id, r));
    CHECK(ck_comm_rank(c) == r && ck_comm_size(c) == N && !strcmp(ck_comm_backend_name(c), "shm"), "facts");
    float *x = malloc(BIG * sizeof *x), *y = malloc(BIG * sizeof *y), *g = malloc((size_t)N * 8 * sizeof *g);
    for (int i = 0; i < BIG; i++) x[i] = (float)(i % 1000) * (float)(r + 1);
    OK(ck_comm_all_reduce_raw(c, x, y, BIG, CK_FLOAT32, CK_COMM_SUM, NULL));
    for (int i = 0; i < BIG; i += 4099) CHECK(y[i] == (float)(i % 1000) * 6.0f, "sum[%d] = %g", i, y[i]);
    int32_t a[4] = {r, -r, 7, r * r}, b[4];
    OK(ck_comm_all_reduce_raw(c, a, b, 4, CK_INT32, CK_COMM_MAX, NULL));
    CHECK(b[0] == N - 1 && b[1] == 0 && b[2] == 7 && b[3] == 4, "max");
    OK(ck_comm_all_reduce_raw(c, a, b, 4, CK_INT32, CK_COMM_AVG, NULL));
    CHECK(b[0] == 1 && b[1] == -1 && b[3] == 1, "avg %d %d %d", b[0], b[1], b[3]);
    double d = r == 2 ? 3.5 : 0;
    OK(ck_comm_broadcast_raw(c, &d, &d, 1, CK_FLOAT64, 2, NULL));
    CHECK(d == 3.5, "broadcast");
    OK(ck_comm_all_gather_raw(c, x, g, 8, CK_FLOAT32, NULL));
    for (int k = 0; k < N; k++) CHECK(g[k * 8 + 1] == (float)(k + 1), "all_gather[%d]", k);
    float rs[N * 2], out[2];
    for (int i = 0; i < N * 2; i++) rs[i] = (float)(i + r);
    OK(ck_comm_reduce_scatter_raw(c, rs, out, 2, CK_FLOAT32, CK_COMM_SUM, NULL));
    CHECK(out[0] == (float)(3 * (2 * r) + 3) && out[1] == (float)(3 * (2 * r + 1) + 3), "reduce_scatter");
    /* a ring of big messages: each would wait for the other's order outside a group */
    OK(ck_comm_group_start());
    OK(ck_comm_send_raw(c, x, BIG, CK_FLOAT32, (r + 1) % N, NULL));
    OK(ck_comm_recv_raw(c, y, BIG, CK_FLOAT32, (r + N - 1) % N, NULL));
    OK(ck_comm_group_end());
    int from = (r + N - 1) % N;
    for (int i = 0; i < BIG; i += 4099) CHECK(y[i] == (float)(i % 1000) * (float)(from + 1), "ring[%d]", i);
    /* calls that do not match: an error on every rank, and the communicator goes on */
    ck_status s = ck_comm_all_reduce_raw(c, x, y, r == 1 ? 5 : 4, CK_FLOAT32, CK_COMM_SUM, NULL);
    CHECK(s == CK_ERR_VALUE && strstr(ck_error_message(), "do not match"), "mismatch: %d %s", s, ck_error_message());
    CHECK(ck_comm_all_reduce_raw(c, x, y, 3, CK_INT16, CK_COMM_SUM, NULL) == CK_ERR_TYPE, "int16 sum");
    CHECK(ck_comm_reduce_raw(c, x, y, 3, CK_FLOAT32, CK_COMM_SUM, N, NULL) == CK_ERR_VALUE, "root out of range");
    OK(ck_comm_barrier(c));
    /* rank 0 waits for a collective the others never call */
    if (r == 0) {
        OK(ck_comm_timeout_set(0.5));
        s = ck_comm_all_reduce_raw(c, x, y, 4, CK_FLOAT32, CK_COMM_SUM, NULL);
        CHECK(s == CK_ERR_TIMEOUT && strstr(ck_error_message(), "rank(s) 1, 2"), "timeout: %d %s", s,
              ck_error_message());
    } else {
        usleep(1500 * 1000);
        s = ck_comm_barrier(c);
        CHECK(s != CK_OK && strstr(ck_error_message(), "timed out"), "broken: %s", ck_error_message());
    }
    free(x);
    free(y);
    free(g);
    OK(ck_comm_destroy(c));
    return failures ? 1 : 0;
}

int main(void)
{
    ck_comm_id id;
    OK(ck_comm_get_unique_id(CK_DEVICE_CPU, &id));
    CHECK(ck_comm_id_type(&id) == CK_DEVICE_CPU, "a CPU id");
    fflush(stderr);
    pid_t pids[N];
    for (int r = 0; r < N; r++) {
        pids[r] = fork();
        if (pids[r] == 0) _exit(rank_main(&id, r));
    }
    for (int r = 0; r < N; r++) {
        int st = 0;
        waitpid(pids[r], &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rank %d ended with status %d", r, st);
    }
    /* one process, three ranks: their collectives inside one group */
    ck_comm *cs[N];
    ck_device devs[N] = {ck_device_cpu(), ck_device_cpu(), ck_device_cpu()};
    OK(ck_comm_init_all(cs, N, devs));
    double v[N] = {1, 2, 4}, w[N];
    OK(ck_comm_group_start());
    for (int r = 0; r < N; r++) OK(ck_comm_all_reduce_raw(cs[r], &v[r], &w[r], 1, CK_FLOAT64, CK_COMM_SUM, NULL));
    OK(ck_comm_group_end());
    for (int r = 0; r < N; r++) CHECK(w[r] == 7, "init_all rank %d: %g", r, w[r]);
    for (int r = 0; r < N; r++) OK(ck_comm_destroy(cs[r]));
    CHECK(ck_comm_group_end() == CK_ERR_RUNTIME, "group_end without a start");
    ck_comm *bad;
    CHECK(ck_comm_init_rank(&bad, ck_device_cpu(), 2, &id, 2) == CK_ERR_VALUE, "rank out of range");
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
