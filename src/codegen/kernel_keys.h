/*
 * kernel_keys.h - the families of the 64-bit keys that the GPU backend's
 * kernel table is indexed by: the top byte names the family (which
 * generator made the kernel), the low 56 bits are that family's packing
 * of its spec.  The low byte of a module's key is its function index
 * (the kernel table keeps a module's i-th function at key + i), so a
 * family whose modules hold several functions, or may, leaves it 0 (sort,
 * GEMM, training; tests/c/test_kernel_keys.c checks them).  Every key
 * builder goes through ck_kernel_key with its
 * family, so kernels of two generators never share a key; a family
 * whose byte another already has does not build (two equal case labels
 * in ck_kernel_family_known).
 *
 *   uint64_t key = ck_kernel_key(CK_KFAM_SORT, (uint64_t)t << 8);
 */
#ifndef CK_CODEGEN_KERNEL_KEYS_H
#define CK_CODEGEN_KERNEL_KEYS_H

#include <stdint.h>

/* X(name, top byte, generator) */
#define CK_KERNEL_FAMILIES(X)                                                              \
    X(INDEX, 0x41, "gather, scatter, index checks, nonzero (cuda_index_codegen.h)")        \
    X(SORT, 0x42, "sort, argsort, searchsorted (cuda_sort_codegen.h)")                     \
    X(RANDOM, 0x43, "random fills (cuda_random_codegen.h)")                                \
    X(GEMM, 0x44, "integer and bool matrix product (cuda_gemm_codegen.h)")                 \
    X(CONCAT, 0x47, "joining (cuda_concat_codegen.h)")                                     \
    X(TRAIN, 0x48, "softmax, cross-entropy, optimizer steps, epilogues (cuda_train_codegen.h)") \
    X(ELEMENTWISE, 0x80, "element-wise, cast, fill, iota (cuda_codegen.h)")                \
    X(EW_CHAIN, 0x81, "element-wise chains fused in a graph capture (cuda_codegen.h)")     \
    X(REDUCE, 0xAB, "reductions (cuda_reduce_codegen.h)")                                  \
    X(SCAN, 0xAC, "scans (cuda_reduce_codegen.h)")

typedef enum ck_kernel_family {
#define CK_KFAM_ENUM_(name, byte, what) CK_KFAM_##name = byte,
    CK_KERNEL_FAMILIES(CK_KFAM_ENUM_)
#undef CK_KFAM_ENUM_
} ck_kernel_family;

/* A key is never 0 (the table's empty slot): no family is 0. */
#define CK_KFAM_ASSERT_(name, byte, what) \
    _Static_assert((byte) > 0 && (byte) <= 0xFF, "kernel key family " #name " must be one byte, not 0");
CK_KERNEL_FAMILIES(CK_KFAM_ASSERT_)
#undef CK_KFAM_ASSERT_

#define CK_KERNEL_KEY_BITS 56   /* of a family's payload */

/* Whether byte is a family's; two families of one byte are a build error here. */
static inline int ck_kernel_family_known(unsigned byte)
{
    switch (byte) {
#define CK_KFAM_CASE_(name, byte, what) case byte:
    CK_KERNEL_FAMILIES(CK_KFAM_CASE_)
#undef CK_KFAM_CASE_
        return 1;
    default:
        return 0;
    }
}

/* The key of a spec packed in payload (below 2^56: a wider one would
 * change the family byte, which the C tests check). */
static inline uint64_t ck_kernel_key(ck_kernel_family f, uint64_t payload)
{
    return ((uint64_t)f << CK_KERNEL_KEY_BITS) | payload;
}

static inline ck_kernel_family ck_kernel_key_family(uint64_t key)
{
    return (ck_kernel_family)(key >> CK_KERNEL_KEY_BITS);
}

#endif
