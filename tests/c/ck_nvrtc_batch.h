/* Compiling many generated kernels in few NVRTC runs, for the codegen
 * tests: each program minus the shared prelude goes into its own namespace
 * (with its extern "C" entry points renamed by the caller so they are
 * unique), and one NVRTC run checks a hundred kernels.  One copy per test
 * program, after ck_test.h. */
#ifndef CK_NVRTC_BATCH_H
#define CK_NVRTC_BATCH_H

#include <string.h>

#include "ck_test.h"
#include "../../src/codegen/cuda_codegen.h"
#include "../../src/codegen/kernel_keys.h"
#include "../../src/runtime/kcache.h"

static ck_sbuf batch_;
static int batch_count_, batch_id_;
static char batch_names_[8192];

/* How much of NVRTC a batch goes through (CK_TEST_NVRTC):
 *   unset or "syntax": the front end only (--fdevice-syntax-only: parsing,
 *     names, types, overloads and templates, which is what a generated
 *     kernel can get wrong), and every 16th batch on to PTX, so that NVVM
 *     sees a sample of every test's kernels (make test: test_codegen took
 *     about 200 s of a core to PTX, under 10 s so);
 *   "ptx": every batch to PTX for compute_90;
 *   "0": generated and checked as usual but not compiled (the sanitizer
 *     build in CI: NVRTC there would check nothing of cudakit's that the
 *     plain build's run has not).
 * Inline PTX is checked by neither (ptxas does that, in the cubin batches
 * and on the GPU machine). */
enum { BATCH_NONE, BATCH_SYNTAX, BATCH_PTX };
static int batch_mode_(void)
{
    static int mode = -1;
    if (mode < 0) {
        const char *e = getenv("CK_TEST_NVRTC");
        mode = !e || !*e || strcmp(e, "syntax") == 0 ? BATCH_SYNTAX
             : strcmp(e, "0") == 0 ? BATCH_NONE : BATCH_PTX;
        if (mode == BATCH_NONE) printf("CK_TEST_NVRTC=0: generated kernels are not compiled\n");
        if (mode == BATCH_SYNTAX) printf("CK_TEST_NVRTC=syntax: NVRTC's front end, every 16th batch to PTX\n");
    }
    return mode;
}
static int batch_compiles_(void) { return batch_mode_() != BATCH_NONE; }

/* Compile the batch: as batch_mode_ says (the front end, or PTX for
 * compute_90: skipping the assembler keeps the tests short), or with cubin
 * set the whole compiler down to a cubin. */
static void batch_flush(int cubin)
{
    if (!batch_count_) return;
    ck_sbuf prog = {0};
    ck_sbuf_prelude(&prog);
    ck_sbuf_printf(&prog, "%s", batch_.s);
    ck_kernel_image img;
    char name[32];
    snprintf(name, sizeof name, "batch%d", batch_id_++);
    const char *opts[] = {"--gpu-architecture=compute_90", "--fdevice-syntax-only"};
    int syntax = batch_mode_() == BATCH_SYNTAX && batch_id_ % 16 != 1;
    if (batch_compiles_()) {
        ck_status s = cubin ? ck_kernel_compile(prog.s, name, NULL, 0, 90, &img)
                            : ck_kernel_compile(prog.s, name, opts, syntax ? 2 : 1, 90, &img);
        CHECK(s == CK_OK, "batch of: %s\n%s", batch_names_, ck_error_message());
        if (s == CK_OK) ck_kernel_image_free(&img);
    }
    free(prog.s);
    free(batch_.s);
    memset(&batch_, 0, sizeof batch_);
    batch_count_ = 0;
    batch_names_[0] = 0;
}

/* out gets text with every from replaced by to. */
static void batch_replace_all(ck_sbuf *out, const char *text, const char *from, const char *to)
{
    size_t fl = strlen(from);
    for (const char *p = text;;) {
        const char *q = strstr(p, from);
        if (!q) { ck_sbuf_printf(out, "%s", p); return; }
        ck_sbuf_printf(out, "%.*s%s", (int)(q - p), p, to);
        p = q + fl;
    }
}

/* A number no other program of the batches has, for renaming entry points. */
static int batch_next_id(void) { return batch_id_ * 1000 + batch_count_; }

/* Add one program, named what in failure messages; the batch is compiled
 * (as PTX) when it holds per programs. */
static void batch_add(const char *what, const char *program, int per)
{
    ck_sbuf_printf(&batch_, "%s", program);
    if (strlen(batch_names_) + strlen(what) + 2 < sizeof batch_names_) {
        strcat(batch_names_, what);
        strcat(batch_names_, " ");
    }
    if (++batch_count_ == per) batch_flush(0);
}

/* A kernel key: of the family's, and not one that another spec had. */
static uint64_t batch_keys_[8192];
static int batch_nkeys_;
static inline void batch_check_key(const char *what, uint64_t key, unsigned family)
{
    CHECK(key >> 56 == family, "%s: key %llx is not of family 0x%x", what, (unsigned long long)key, family);
    for (int i = 0; i < batch_nkeys_; i++)
        CHECK(batch_keys_[i] != key, "%s: key %llx used twice", what, (unsigned long long)key);
    if (batch_nkeys_ < (int)(sizeof batch_keys_ / sizeof batch_keys_[0])) batch_keys_[batch_nkeys_++] = key;
}

/* Add one generated program (the prelude, then kernel name): the prelude
 * dropped (the batch has it once), the kernel renamed and the rest put in
 * a namespace of its own, so that programs of a batch never clash. */
static inline void batch_add_kernel(const char *what, const char *src, const char *name, int per)
{
    size_t pre = strlen(ck_src_cuda_prelude) + strlen(ck_src_scalar_ops) + 2;
    CHECK(strlen(src) > pre && strstr(src + pre, name) != NULL, "%s: no kernel named %s after the prelude", what, name);
    if (strlen(src) <= pre) return;
    int id = batch_next_id();
    char from[64], to[64];
    snprintf(from, sizeof from, "%s(", name);
    snprintf(to, sizeof to, "%s_%d(", name, id);
    ck_sbuf body = {0}, prog = {0};
    batch_replace_all(&body, src + pre, from, to);
    ck_sbuf_printf(&prog, "namespace k%d {\n%s\n}\n", id, body.s);
    batch_add(what, prog.s, per);
    free(body.s);
    free(prog.s);
}

#endif
