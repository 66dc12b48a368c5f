/*
 * cudakit_dtypes.h - the dtype table.
 *
 * Every dtype is one row; the ck_dtype enum, the dtype information and
 * scalar conversions of src/array/dtype.c, the CPU loops, reductions and
 * sorts, the CUDA code generator and the Python module's dtypes (and
 * cudakit._core._dtype_table) are all generated from it, so a fact about a
 * dtype is written once.  Code that still handles dtypes one by one checks
 * the table with _Static_asserts, so a new row fails to build until it
 * knows the dtype.
 *
 *   X(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc)
 *
 * A      passed through from CK_DTYPES(X, A) (the CPU loops pass an op)
 * ID     the enum name: CK_##ID
 * name   NumPy's name
 * K      the kind letter, NumPy's kind character in upper case (CK_KINDS):
 *        the per-element expressions dispatch on it (CK_X_ABSOLUTE_##K)
 * tchar  NumPy's type character (dtype.char)
 * fmt    the buffer-protocol (struct module) format
 * str    NumPy's dtype.str, the array-interface type string (little endian)
 * size   bytes per element
 * npnum  NumPy's type number (result_type of a sequence goes by it)
 * S      the C type an element is stored as
 * C      the C type the CPU computes it in (float for float16, as NumPy's
 *        half loops do)
 * R      the C type of its real part (of a complex: one part)
 * U      an unsigned C integer as wide as R (the bits a sort keys on)
 * cus    the CUDA type an element is stored as (src/codegen/cuda_prelude.cuh)
 * cuc    the CUDA type it is computed in
 *
 * The rows are in the order of NumPy's type numbers' kinds, and a kind's
 * rows are together (ck_dtype_is_float() and the others go by ranges).
 * The kind letters are the tokens B, I, U, F, C: a file that expands the
 * table after <complex.h> must #undef I first.
 */
#ifndef CUDAKIT_DTYPES_H
#define CUDAKIT_DTYPES_H

#define CK_DTYPES(X, A) \
    X(A, BOOL,       bool,       B, '?', "?",  "|b1",  1,  0, uint8_t,         uint8_t,         uint8_t,  uint8_t,  "uint8_t",  "uint8_t")  \
    X(A, INT8,       int8,       I, 'b', "b",  "|i1",  1,  1, int8_t,          int8_t,          int8_t,   uint8_t,  "int8_t",   "int8_t")   \
    X(A, UINT8,      uint8,      U, 'B', "B",  "|u1",  1,  2, uint8_t,         uint8_t,         uint8_t,  uint8_t,  "uint8_t",  "uint8_t")  \
    X(A, INT16,      int16,      I, 'h', "h",  "<i2",  2,  3, int16_t,         int16_t,         int16_t,  uint16_t, "int16_t",  "int16_t")  \
    X(A, UINT16,     uint16,     U, 'H', "H",  "<u2",  2,  4, uint16_t,        uint16_t,        uint16_t, uint16_t, "uint16_t", "uint16_t") \
    X(A, INT32,      int32,      I, 'i', "i",  "<i4",  4,  5, int32_t,         int32_t,         int32_t,  uint32_t, "int32_t",  "int32_t")  \
    X(A, UINT32,     uint32,     U, 'I', "I",  "<u4",  4,  6, uint32_t,        uint32_t,        uint32_t, uint32_t, "uint32_t", "uint32_t") \
    X(A, INT64,      int64,      I, 'l', "q",  "<i8",  8,  7, int64_t,         int64_t,         int64_t,  uint64_t, "int64_t",  "int64_t")  \
    X(A, UINT64,     uint64,     U, 'L', "Q",  "<u8",  8,  8, uint64_t,        uint64_t,        uint64_t, uint64_t, "uint64_t", "uint64_t") \
    X(A, FLOAT16,    float16,    F, 'e', "e",  "<f2",  2, 23, _Float16,        float,           _Float16, uint16_t, "ck_f16",   "float")    \
    X(A, FLOAT32,    float32,    F, 'f', "f",  "<f4",  4, 11, float,           float,           float,    uint32_t, "float",    "float")    \
    X(A, FLOAT64,    float64,    F, 'd', "d",  "<f8",  8, 12, double,          double,          double,   uint64_t, "double",   "double")   \
    X(A, COMPLEX64,  complex64,  C, 'F', "Zf", "<c8",  8, 14, float _Complex,  float _Complex,  float,    uint32_t, "ck_c64",   "ck_c64")   \
    X(A, COMPLEX128, complex128, C, 'D', "Zd", "<c16", 16, 15, double _Complex, double _Complex, double,   uint64_t, "ck_c128",  "ck_c128")

/* The kinds, in the order promotion ranks them: X(K, KIND, kchar) with K
 * the kind letter of the dtype rows, CK_KIND_##KIND the ck_kind and kchar
 * NumPy's kind character. */
#define CK_KINDS(X)        \
    X(B, BOOL,    'b')     \
    X(I, INT,     'i')     \
    X(U, UINT,    'u')     \
    X(F, FLOAT,   'f')     \
    X(C, COMPLEX, 'c')

/* CK_KIND_PICK_##K(b, i, u, f, c): the argument for kind K, for macros
 * that differ by kind (a type set's kinds, a kernel's per-kind piece). */
#define CK_KIND_PICK_B(b, i, u, f, c) b
#define CK_KIND_PICK_I(b, i, u, f, c) i
#define CK_KIND_PICK_U(b, i, u, f, c) u
#define CK_KIND_PICK_F(b, i, u, f, c) f
#define CK_KIND_PICK_C(b, i, u, f, c) c

#endif /* CUDAKIT_DTYPES_H */
