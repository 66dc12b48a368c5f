/* The kernel keys of every generator family (src/codegen/kernel_keys.h):
 * each key carries its family's byte, and over random valid specs of all
 * families (and each field at its extremes) two specs share a key only
 * when they are the same spec.  No GPU or NVRTC needed. */
#include "ck_test.h"
#include "../../src/codegen/kernel_keys.h"
#include "../../src/codegen/cuda_codegen.h"
#include "../../src/codegen/cuda_index_codegen.h"
#include "../../src/codegen/cuda_concat_codegen.h"
#include "../../src/codegen/cuda_reduce_codegen.h"
#include "../../src/codegen/cuda_sort_codegen.h"
#include "../../src/codegen/cuda_random_codegen.h"
#include "../../src/codegen/cuda_gemm_codegen.h"
#include "../../src/codegen/cuda_train_codegen.h"

#include <string.h>

/* A spec as the fields its key must tell apart, and the key. */
typedef struct entry { uint64_t key; ck_kernel_family fam; uint8_t f[16]; } entry;

#define NPER 40000
static entry ents_[9 * NPER + 4096 + 2000];
static int nents_;

static int pick(int lo, int hi) { return lo + (int)(ck_test_rand() % (uint64_t)(hi - lo + 1)); }
/* lo or hi half the time, so every field meets its extremes */
static int pickx(int lo, int hi)
{
    uint64_t r = ck_test_rand() % 4;
    return r == 0 ? lo : r == 1 ? hi : pick(lo, hi);
}

static void add(ck_kernel_family fam, uint64_t key, const int *f, int nf)
{
    entry *e = &ents_[nents_++];
    memset(e, 0, sizeof *e);
    e->key = key;
    e->fam = fam;
    for (int i = 0; i < nf; i++) e->f[i] = (uint8_t)f[i];
}

static void elementwise(void)
{
    static const int vecs[] = {1, 2, 4, 8};
    ck_cuda_ew_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.op = pickx(0, CK_KOP_LAST);
    sp.nops = pickx(1, 4);
    for (int k = 0; k < sp.nops; k++) {
        sp.types[k] = (ck_dtype)pickx(0, CK_NTYPES - 1);
        sp.kinds[k] = (uint8_t)pickx(0, k ? CK_OPND_SCALAR : CK_OPND_STRIDED);
    }
    sp.ndim = pickx(1, CK_CUDA_EW_MAXDIM);
    sp.idx64 = pick(0, 1);
    sp.vec = vecs[pick(0, 3)];
    sp.flat = pick(0, 1);
    /* flat means something only without vectors (the source ignores it there) */
    int f[] = {sp.op, sp.nops, sp.types[0], sp.types[1], sp.types[2], sp.types[3], sp.kinds[0], sp.kinds[1],
               sp.kinds[2], sp.kinds[3], sp.ndim, sp.idx64, sp.vec, sp.flat && sp.vec <= 1};
    add(CK_KFAM_ELEMENTWISE, ck_cuda_ew_key(&sp), f, 14);
}

static void indexing(void)
{
    static const int units[] = {1, 2, 4, 8};
    ck_cuda_ix_spec sp = {pickx(CK_IXK_GATHER, CK_IXK_EXPAND), pickx(0, CK_MAXDIMS), pickx(0, CK_MAXDIMS),
                          units[pick(0, 3)], pickx(1, 16), pickx(0, 2), pick(0, 1), pick(0, 1), pick(0, 1),
                          pick(0, 1), pick(0, 1)};
    int f[] = {sp.kind, sp.ndim, sp.nidx, sp.unit, sp.units, sp.mode, sp.idx64, sp.win64, sp.byref, sp.contig, sp.vec};
    add(CK_KFAM_INDEX, ck_cuda_ix_key(&sp), f, 11);
}

static void concat(void)
{
    static const int units[] = {1, 2, 4, 8, 16};
    ck_cuda_cat_spec sp;
    sp.kind = pick(CK_CATK_ROWS, CK_CATK_STRIDED);
    sp.ndim = pickx(1, CK_MAXDIMS);
    sp.axis = pickx(0, sp.ndim - 1);
    sp.unit = units[pick(0, 4)];
    sp.units = pickx(1, 16);
    sp.idx64 = pick(0, 1);
    sp.cap = pickx(1, CK_CAT_MAX_PIECES);
    int f[] = {sp.kind, sp.ndim, sp.axis, sp.unit, sp.units, sp.idx64, sp.cap};
    add(CK_KFAM_CONCAT, ck_cuda_cat_key(&sp), f, 7);
}

static void reduce(void)
{
    ck_cuda_red_spec sp = {pickx(0, CK_REDUCE_COUNT - 1), (ck_dtype)pickx(0, CK_NTYPES - 1),
                           (ck_dtype)pickx(0, CK_NTYPES - 1), pickx(0, CK_CUDA_RED_MAXDIM),
                           pickx(0, CK_CUDA_RED_MAXDIM), pick(0, 1)};
    ck_red_kernel k = (ck_red_kernel)pick(CK_REDK_MAIN, CK_REDK_VEC);
    int f[] = {sp.op, sp.in, sp.out, sp.nout, sp.nin, sp.thread_layout, k};
    add(CK_KFAM_REDUCE, ck_cuda_red_key(&sp, k), f, 7);
}

static void scan(void)
{
    ck_cuda_scan_spec sp = {pick(0, 1) ? CK_REDUCE_SUM : CK_REDUCE_PROD, (ck_dtype)pickx(0, CK_NTYPES - 1),
                            (ck_dtype)pickx(0, CK_NTYPES - 1), pickx(0, CK_CUDA_SCAN_MAXDIM)};
    ck_scan_kernel k = (ck_scan_kernel)pick(CK_SCANK_ROWS, CK_SCANK_LOOKBACK);
    int f[] = {sp.op, sp.in, sp.out, sp.nout, k};
    add(CK_KFAM_SCAN, ck_cuda_scan_key(&sp, k), f, 5);
}

static void random_fill(void)
{
    ck_cuda_rng_spec sp = {pickx(0, CK_RANDOM_NDISTS - 1), (ck_dtype)pickx(0, CK_NTYPES - 1), pickx(0, 4), pick(0, 1)};
    int f[] = {sp.dist, sp.t, sp.per, sp.vec};
    add(CK_KFAM_RANDOM, ck_cuda_rng_key(&sp), f, 4);
}

static int by_key(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

int main(void)
{
    for (int i = 0; i < NPER; i++) {
        elementwise();
        indexing();
        concat();
        reduce();
        scan();
        random_fill();
    }
    /* sort modules and their entry points at consecutive keys; the GEMM of
     * each dtype; the training modules (one or two functions) of each kind,
     * op and float dtype: each module's key with its low byte 0, the byte
     * of its functions (key + i) */
    int low_byte = 0;
    for (int t = 0; t < CK_NTYPES; t++) {
        ck_cuda_sort_spec ss = {(ck_dtype)t};
        uint64_t key = ck_cuda_sort_key(&ss);
        low_byte += (key & 0xFF) != 0;
        for (int k = 0; k < ck_cuda_sort_nkernels(&ss); k++) {
            int f[] = {t, k};
            add(CK_KFAM_SORT, key + (uint64_t)k, f, 2);
        }
        ck_cuda_gemm_int_spec gs = {(ck_dtype)t};
        key = ck_cuda_gemm_int_key(&gs);
        CHECK((key & 0xFF) == 0, "the GEMM key of dtype %d has low byte 0x%02x", t, (unsigned)(key & 0xFF));
        int f[] = {t};
        add(CK_KFAM_GEMM, key, f, 1);
        if (t == CK_FLOAT32 || t == CK_FLOAT64) {   /* the small products' module: a function a tile */
            ck_cuda_gemm_small_spec sm = {(ck_dtype)t};
            key = ck_cuda_gemm_small_key(&sm);
            low_byte += (key & 0xFF) != 0;
            for (int c = 0; c < CK_GEMM_SMALL_CFGS; c++) {
                int fs[] = {t, 1000 + c};
                add(CK_KFAM_GEMM, key + (uint64_t)c, fs, 2);
            }
        }
    }
    static const ck_dtype floats[] = {CK_FLOAT16, CK_FLOAT32, CK_FLOAT64};
    for (int kind = CK_TRK_ROWS; kind <= CK_TRK_SCATTER_ADD; kind++)
        for (int op = 0; op < 8; op++)
            for (int t = 0; t < 3; t++)
                for (int warp = 0; warp < 2; warp++) {
                    ck_cuda_train_spec sp = {.kind = kind, .op = op, .t = floats[t], .warp = warp};
                    const char *names[2];
                    uint64_t key = ck_cuda_train_key(&sp);
                    low_byte += (key & 0xFF) != 0;
                    for (int k = 0; k < ck_cuda_train_names(&sp, names); k++) {
                        int f[] = {kind, op, t, warp, k};
                        add(CK_KFAM_TRAIN, key + (uint64_t)k, f, 5);
                    }
                }
    /* the fused chains of a capture: a key a chain number (1, 2, ... from
     * cuda_kernels.c's registry), the lowest and the highest of 48 bits */
    for (uint64_t i = 1; i <= 1000; i++) {
        for (int hi = 0; hi < 2; hi++) {
            uint64_t id = hi ? ((uint64_t)1 << 48) - i : i;
            uint64_t key = ck_cuda_ew_chain_key(id);
            low_byte += (key & 0xFF) != 0;
            int f[6];
            for (int b = 0; b < 6; b++) f[b] = (int)(id >> (8 * b)) & 0xFF;
            add(CK_KFAM_EW_CHAIN, key, f, 6);
        }
    }
    CHECK(low_byte == 0, "%d sort, training or chain module keys have a low byte that is not 0", low_byte);
    int wrong_family = 0, shared = 0;
    for (int i = 0; i < nents_; i++) {
        const entry *e = &ents_[i];
        if (ck_kernel_key_family(e->key) == e->fam && ck_kernel_family_known((unsigned)(e->key >> 56))) continue;
        if (wrong_family++ < 5)
            CHECK(0, "family 0x%x: key %016llx has byte 0x%x", e->fam, (unsigned long long)e->key,
                  (unsigned)(e->key >> 56));
    }
    qsort(ents_, (size_t)nents_, sizeof ents_[0], by_key);
    for (int i = 1; i < nents_; i++) {
        const entry *a = &ents_[i - 1], *b = &ents_[i];
        if (a->key != b->key || (a->fam == b->fam && !memcmp(a->f, b->f, sizeof a->f))) continue;
        if (shared++ < 5)
            CHECK(0, "two specs of families 0x%x and 0x%x (fields %d %d %d %d / %d %d %d %d) share key %016llx",
                  a->fam, b->fam, a->f[0], a->f[1], a->f[2], a->f[3], b->f[0], b->f[1], b->f[2], b->f[3],
                  (unsigned long long)a->key);
    }
    CHECK(!ck_kernel_family_known(0), "0 is a family");
    printf("%d keys of %d families: %d of the wrong family, %d shared\n", nents_, 10, wrong_family, shared);
    return failures ? 1 : 0;
}
