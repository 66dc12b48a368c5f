/* The random fills as CUDA C text. */
#include "cuda_random_codegen.h"
#include "cuda_codegen.h"
#include "kernel_keys.h"

static int heavy(const ck_cuda_rng_spec *sp) { return sp->dist > CK_RANDOM_INTEGERS; }

uint64_t ck_cuda_rng_key(const ck_cuda_rng_spec *sp)
{
    return ck_kernel_key(CK_KFAM_RANDOM, ((uint64_t)heavy(sp) << 40) | ((uint64_t)sp->dist << 16) |
                                         ((uint64_t)sp->t << 8) | ((uint64_t)sp->per << 1) | (uint64_t)sp->vec);
}

const char *ck_cuda_rng_name(const ck_cuda_rng_spec *sp) { return heavy(sp) ? "ck_rng_heavy" : "ck_rng_fill"; }

const char *const ck_cuda_rng_options[] = {"--fmad=false"};
const int ck_cuda_rng_noptions = 1;

static const char *rng_storage(ck_dtype t)
{
    switch (ck_dtype_get_info(t)->itemsize) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return t == CK_FLOAT32 ? "float" : "unsigned int";
    default: return t == CK_FLOAT64 ? "double" : "unsigned long long";
    }
}

char *ck_cuda_rng_source(const ck_cuda_rng_spec *sp)
{
    ck_sbuf b = {0};
    ck_sbuf_printf(&b,
        "typedef unsigned int uint32_t;\ntypedef unsigned long long uint64_t;\ntypedef long long int64_t;\n"
        "#define CK_RNG_FN static __device__ __forceinline__\n"
        "#define CK_PHILOX_M0 0x%08Xu\n#define CK_PHILOX_M1 0x%08Xu\n#define CK_PHILOX_W0 0x%08Xu\n#define CK_PHILOX_W1 0x%08Xu\n",
        CK_PHILOX_M0, CK_PHILOX_M1, CK_PHILOX_W0, CK_PHILOX_W1);
    ck_sbuf_printf(&b, "%s\n", ck_src_random_formulas);
    ck_sbuf_printf(&b, "#define CK_RD %d\n#define CK_RT %s\n#define CK_RPER %d\n#define CK_RF32 %d\n#define CK_RBOOL %d\n"
                       "#define CK_RVEC %d\n%s",
                   sp->dist, rng_storage(sp->t), sp->per, sp->per == 4, sp->t == CK_BOOL, sp->vec, ck_src_random_kernels);
    return ck_sbuf_finish(&b);
}
