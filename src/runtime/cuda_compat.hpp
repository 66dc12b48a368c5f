/*
 * cuda_compat.hpp - CUDA C on the CPU: the environment a user kernel sees
 * when cudakit compiles it with the system C++ compiler (cpu_kernels/).
 *
 * The library runs a block's threads one after another on one worker
 * thread, as fibers when the module uses barriers or warp functions, and
 * writes the indices of the running thread into ck__ctx (per OS thread)
 * before each one runs.  Barriers and warp functions call back into the
 * library through ck__api; what both sides must agree on is in
 * cpu_kernel_abi.h.  Embedded into libcudakit at build time and written
 * next to each compile (with cpu_kernel_abi.h), so nothing depends on the
 * install layout.
 *
 * Why __shared__ is "static thread_local": a worker runs one block at a
 * time, all of that block's fibers on the worker's own OS thread, and a
 * fiber never moves to another thread; so one copy per OS thread is one
 * copy per running block, shared by its threads and by no other block.
 */
#ifndef CK_CUDA_COMPAT_HPP
#define CK_CUDA_COMPAT_HPP

#define CUDAKIT_CPU 1

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <climits>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <math.h>
#include <type_traits>
#include <utility>

/* ------------------------------------------------------------ qualifiers */
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __shared__ static thread_local
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __builtin_align__(n) alignas(n)
#define __grid_constant__
#define __cudart_builtin__

/* ---------------------------------------------------------- index types */
#include "cpu_kernel_abi.h" /* struct uint3, the context, the callbacks, the entry table */
#define CK_CUDA_COMPAT_VERSION CK__ABI_VERSION

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

static thread_local ck__ctx_t ck__ctx;

/* The symbols cpu_kernel_abi.h names (CK__SYM_*). */
extern "C" {
__attribute__((visibility("default"))) ck__api_t ck__api;
__attribute__((visibility("default"))) ck__ctx_t *ck__get_ctx(void) { return &ck__ctx; }
__attribute__((visibility("default"))) extern const int ck__abi_version;
const int ck__abi_version = CK__ABI_VERSION;
}

#define threadIdx (ck__ctx.tid)
#define blockIdx (ck__ctx.bid)
#define blockDim (ck__ctx.bdim)
#define gridDim (ck__ctx.gdim)
#define warpSize 32

static inline void *ck__dyn_smem(void) { return ck__ctx.dyn_smem; }
/* extern __shared__ at namespace scope becomes one of these. */
template <typename T> struct ck__dyn_shared {
    operator T *() const { return static_cast<T *>(ck__ctx.dyn_smem); }
    /* (float *)smem where smem holds bytes */
    template <typename U> explicit operator U *() const { return static_cast<U *>(ck__ctx.dyn_smem); }
    T &operator[](long long i) const { return static_cast<T *>(ck__ctx.dyn_smem)[i]; }
};

/* ------------------------------------------------ barriers and warp ops */
static inline unsigned long long ck__sync(int op, unsigned mask, unsigned long long v, int arg = 0, int width = 32)
{
    return ck__api.sync(ck__ctx.sched, op, mask, v, arg, width);
}

static inline void __syncthreads(void) { ck__sync(CK__OP_SYNCTHREADS, 0, 0); }
static inline int __syncthreads_count(int p) { return (int)ck__sync(CK__OP_SYNC_COUNT, 0, p != 0); }
static inline int __syncthreads_and(int p) { return (int)ck__sync(CK__OP_SYNC_AND, 0, p != 0); }
static inline int __syncthreads_or(int p) { return (int)ck__sync(CK__OP_SYNC_OR, 0, p != 0); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { ck__sync(CK__OP_SYNCWARP, mask, 0); }
static inline unsigned __activemask(void) { return (unsigned)ck__sync(CK__OP_ACTIVEMASK, 0xffffffffu, 0); }
static inline unsigned __ballot_sync(unsigned mask, int p) { return (unsigned)ck__sync(CK__OP_BALLOT, mask, p != 0); }
static inline int __any_sync(unsigned mask, int p) { return (int)ck__sync(CK__OP_ANY, mask, p != 0); }
static inline int __all_sync(unsigned mask, int p) { return (int)ck__sync(CK__OP_ALL, mask, p != 0); }
static inline int __uni_sync(unsigned mask, int p)
{
    unsigned b = __ballot_sync(mask, p);
    return b == 0 || b == (mask & __activemask());
}

template <typename T> static inline unsigned long long ck__bits(T v)
{
    static_assert(sizeof(T) <= 8, "warp functions take values of at most 8 bytes on the CPU target");
    unsigned long long b = 0;
    std::memcpy(&b, &v, sizeof v);
    return b;
}
template <typename T> static inline T ck__unbits(unsigned long long b)
{
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}
template <typename T> static inline T __shfl_sync(unsigned mask, T var, int src, int width = 32)
{
    return ck__unbits<T>(ck__sync(CK__OP_SHFL, mask, ck__bits(var), src, width));
}
template <typename T> static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32)
{
    return ck__unbits<T>(ck__sync(CK__OP_SHFL_UP, mask, ck__bits(var), (int)delta, width));
}
template <typename T> static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32)
{
    return ck__unbits<T>(ck__sync(CK__OP_SHFL_DOWN, mask, ck__bits(var), (int)delta, width));
}
template <typename T> static inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32)
{
    return ck__unbits<T>(ck__sync(CK__OP_SHFL_XOR, mask, ck__bits(var), lane_mask, width));
}
template <typename T> static inline unsigned __match_any_sync(unsigned mask, T v)
{
    return (unsigned)ck__sync(CK__OP_MATCH_ANY, mask, ck__bits(v));
}
template <typename T> static inline unsigned __match_all_sync(unsigned mask, T v, int *pred)
{
    unsigned r = (unsigned)ck__sync(CK__OP_MATCH_ALL, mask, ck__bits(v));
    *pred = r != 0;
    return r;
}
static inline unsigned __reduce_add_sync(unsigned m, unsigned v) { return (unsigned)ck__sync(CK__OP_RED_ADD, m, v); }
static inline int __reduce_add_sync(unsigned m, int v) { return (int)ck__sync(CK__OP_RED_ADD, m, (unsigned)v); }
static inline unsigned __reduce_min_sync(unsigned m, unsigned v) { return (unsigned)ck__sync(CK__OP_RED_MIN_U, m, v); }
static inline unsigned __reduce_max_sync(unsigned m, unsigned v) { return (unsigned)ck__sync(CK__OP_RED_MAX_U, m, v); }
static inline int __reduce_min_sync(unsigned m, int v) { return (int)ck__sync(CK__OP_RED_MIN_I, m, (unsigned)v); }
static inline int __reduce_max_sync(unsigned m, int v) { return (int)ck__sync(CK__OP_RED_MAX_I, m, (unsigned)v); }
static inline unsigned __reduce_and_sync(unsigned m, unsigned v) { return (unsigned)ck__sync(CK__OP_RED_AND, m, v); }
static inline unsigned __reduce_or_sync(unsigned m, unsigned v) { return (unsigned)ck__sync(CK__OP_RED_OR, m, v); }
static inline unsigned __reduce_xor_sync(unsigned m, unsigned v) { return (unsigned)ck__sync(CK__OP_RED_XOR, m, v); }

/* Fences: the workers are OS threads, so a real fence. */
static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* A trap or failed assert stops the launch with an error, not the process. */
static inline void __trap(void) { ck__api.fail("__trap()", "", 0); }
static inline void __brkpt(void) { ck__api.fail("__brkpt()", "", 0); }
#undef assert
#define assert(e) ((e) ? (void)0 : ck__api.fail("assert(" #e ")", __FILE__, __LINE__))
/* For a kernel that includes <assert.h> again (which brings back glibc's
 * assert): its failure path, bound inside this library (hidden). */
extern "C" __attribute__((visibility("hidden"))) void __assert_fail(const char *e, const char *file, unsigned line,
                                                                    const char *fn) noexcept
{
    (void)fn;
    static thread_local char what[512];
    std::snprintf(what, sizeof what, "assert(%s)", e);
    ck__api.fail(what, file, (int)line);
    __builtin_trap();
}
static inline void __nanosleep(unsigned) {}
static inline long long clock64(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* -------------------------------------------------------------- atomics */
#define CK__ATOMIC_INT(T)                                                                      \
    static inline T atomicAdd(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); } \
    static inline T atomicSub(T *p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); } \
    static inline T atomicExch(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); } \
    static inline T atomicAnd(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); } \
    static inline T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }   \
    static inline T atomicXor(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); } \
    static inline T atomicCAS(T *p, T cmp, T v)                                                \
    {                                                                                          \
        __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);    \
        return cmp;                                                                            \
    }                                                                                          \
    static inline T atomicMax(T *p, T v)                                                       \
    {                                                                                          \
        T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                          \
        while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} \
        return old;                                                                            \
    }                                                                                          \
    static inline T atomicMin(T *p, T v)                                                       \
    {                                                                                          \
        T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                          \
        while (old > v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} \
        return old;                                                                            \
    }
CK__ATOMIC_INT(int)
CK__ATOMIC_INT(unsigned int)
CK__ATOMIC_INT(long long)
CK__ATOMIC_INT(unsigned long long)

#define CK__ATOMIC_FLOAT(T)                                                                    \
    template <typename F> static inline T ck__atomic_update(T *p, F f)                         \
    {                                                                                          \
        T old, nv;                                                                             \
        __atomic_load(p, &old, __ATOMIC_SEQ_CST);                                              \
        do nv = f(old);                                                                        \
        while (!__atomic_compare_exchange(p, &old, &nv, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)); \
        return old;                                                                            \
    }                                                                                          \
    static inline T atomicAdd(T *p, T v) { return ck__atomic_update(p, [v](T o) { return o + v; }); } \
    static inline T atomicSub(T *p, T v) { return ck__atomic_update(p, [v](T o) { return o - v; }); } \
    static inline T atomicMax(T *p, T v) { return ck__atomic_update(p, [v](T o) { return o < v ? v : o; }); } \
    static inline T atomicMin(T *p, T v) { return ck__atomic_update(p, [v](T o) { return o > v ? v : o; }); } \
    static inline T atomicExch(T *p, T v)                                                      \
    {                                                                                          \
        T old;                                                                                 \
        __atomic_exchange(p, &v, &old, __ATOMIC_SEQ_CST);                                      \
        return old;                                                                            \
    }
CK__ATOMIC_FLOAT(float)
CK__ATOMIC_FLOAT(double)

static inline unsigned atomicInc(unsigned *p, unsigned lim)
{
    unsigned old = __atomic_load_n(p, __ATOMIC_SEQ_CST), nv;
    do nv = old >= lim ? 0u : old + 1u;
    while (!__atomic_compare_exchange_n(p, &old, nv, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return old;
}
static inline unsigned atomicDec(unsigned *p, unsigned lim)
{
    unsigned old = __atomic_load_n(p, __ATOMIC_SEQ_CST), nv;
    do nv = (old == 0u || old > lim) ? lim : old - 1u;
    while (!__atomic_compare_exchange_n(p, &old, nv, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return old;
}
static inline unsigned short atomicCAS(unsigned short *p, unsigned short cmp, unsigned short v)
{
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;
}
/* The scoped forms mean the same here. */
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMax_block atomicMax
#define atomicMin_block atomicMin

/* ------------------------------------------------------- vector types */
#define CK__VEC3(N, T) struct N##3 { T x, y, z; };
#define CK__VEC3_char(T) CK__VEC3(char, T)
#define CK__VEC3_uchar(T) CK__VEC3(uchar, T)
#define CK__VEC3_short(T) CK__VEC3(short, T)
#define CK__VEC3_ushort(T) CK__VEC3(ushort, T)
#define CK__VEC3_int(T) CK__VEC3(int, T)
#define CK__VEC3_uint(T) 
#define CK__VEC3_long(T) CK__VEC3(long, T)
#define CK__VEC3_ulong(T) CK__VEC3(ulong, T)
#define CK__VEC3_longlong(T) CK__VEC3(longlong, T)
#define CK__VEC3_ulonglong(T) CK__VEC3(ulonglong, T)
#define CK__VEC3_float(T) CK__VEC3(float, T)
#define CK__VEC3_double(T) CK__VEC3(double, T)
#define CK__VEC(N, T, A2, A4)                                                                  \
    struct N##1 { T x; };                                                                      \
    struct alignas(A2) N##2 { T x, y; };                                                       \
    CK__VEC3_##N(T)                                                                            \
    struct alignas(A4) N##4 { T x, y, z, w; };                                                 \
    static inline N##1 make_##N##1(T x) { return N##1{x}; }                                    \
    static inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }                            \
    static inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }                    \
    static inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
CK__VEC(char, signed char, 2, 4)
CK__VEC(uchar, unsigned char, 2, 4)
CK__VEC(short, short, 4, 8)
CK__VEC(ushort, unsigned short, 4, 8)
CK__VEC(int, int, 8, 16)
CK__VEC(uint, unsigned int, 8, 16)
CK__VEC(long, long, 16, 16)
CK__VEC(ulong, unsigned long, 16, 16)
CK__VEC(longlong, long long, 16, 16)
CK__VEC(ulonglong, unsigned long long, 16, 16)
CK__VEC(float, float, 8, 16)
CK__VEC(double, double, 16, 16)
static inline dim3 make_dim3(unsigned x, unsigned y, unsigned z) { return dim3(x, y, z); }

/* ------------------------------------------------------------ half */
#if defined(__FLT16_MAX__)
typedef _Float16 __half;
typedef __half half;
struct alignas(4) __half2 { __half x, y; };
typedef __half2 half2;
static inline __half __float2half(float f) { return (__half)f; }
static inline __half __float2half_rn(float f) { return (__half)f; }
static inline float __half2float(__half h) { return (float)h; }
static inline __half __double2half(double d) { return (__half)d; }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2{(__half)a, (__half)b}; }
static inline __half2 __float2half2_rn(float a) { return __half2{(__half)a, (__half)a}; }
static inline float __low2float(__half2 h) { return (float)h.x; }
static inline float __high2float(__half2 h) { return (float)h.y; }
static inline __half __hadd(__half a, __half b) { return a + b; }
static inline __half __hsub(__half a, __half b) { return a - b; }
static inline __half __hmul(__half a, __half b) { return a * b; }
static inline __half __hdiv(__half a, __half b) { return a / b; }
static inline __half __hfma(__half a, __half b, __half c) { return (__half)std::fma((float)a, (float)b, (float)c); }
static inline __half __hneg(__half a) { return -a; }
static inline bool __hlt(__half a, __half b) { return a < b; }
static inline bool __hgt(__half a, __half b) { return a > b; }
static inline bool __heq(__half a, __half b) { return a == b; }
static inline __half hsqrt(__half a) { return (__half)std::sqrt((float)a); }
static inline __half hexp(__half a) { return (__half)std::exp((float)a); }
#endif

/* ------------------------------------------------------------- math */
#define CK__MINMAX(T)                                                                          \
    static inline T min(T a, T b) { return b < a ? b : a; }                                    \
    static inline T max(T a, T b) { return a < b ? b : a; }
CK__MINMAX(int)
CK__MINMAX(unsigned int)
CK__MINMAX(long)
CK__MINMAX(unsigned long)
CK__MINMAX(long long)
CK__MINMAX(unsigned long long)
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
/* Mixed argument types, as CUDA's overloads: the usual conversions. */
template <typename A, typename B,
          typename = std::enable_if_t<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>>
static inline std::common_type_t<A, B> min(A a, B b)
{
    return min((std::common_type_t<A, B>)a, (std::common_type_t<A, B>)b);
}
template <typename A, typename B,
          typename = std::enable_if_t<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>>
static inline std::common_type_t<A, B> max(A a, B b)
{
    return max((std::common_type_t<A, B>)a, (std::common_type_t<A, B>)b);
}
static inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned umax(unsigned a, unsigned b) { return a < b ? b : a; }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a < b ? b : a; }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a < b ? b : a; }

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
static inline float __fdividef(float a, float b) { return a / b; }
static inline float fdividef(float a, float b) { return a / b; }
#define __expf ck___expf
static inline float ck___expf(float x) { return expf(x); }
#define __exp10f ck___exp10f
static inline float ck___exp10f(float x) { return powf(10.0f, x); }
#define __logf ck___logf
static inline float ck___logf(float x) { return logf(x); }
#define __log2f ck___log2f
static inline float ck___log2f(float x) { return log2f(x); }
#define __log10f ck___log10f
static inline float ck___log10f(float x) { return log10f(x); }
#define __sinf ck___sinf
static inline float ck___sinf(float x) { return sinf(x); }
#define __cosf ck___cosf
static inline float ck___cosf(float x) { return cosf(x); }
#define __tanf ck___tanf
static inline float ck___tanf(float x) { return tanf(x); }
#define __powf ck___powf
static inline float ck___powf(float a, float b) { return powf(a, b); }
#define __sincosf ck___sincosf
static inline void ck___sincosf(float x, float *s, float *c) { *s = sinf(x); *c = cosf(x); }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x != x ? 0.0f : x; }
static inline float sinpif(float x) { return sinf((float)M_PI * x); }
static inline float cospif(float x) { return cosf((float)M_PI * x); }
static inline double sinpi(double x) { return sin(M_PI * x); }
static inline double cospi(double x) { return cos(M_PI * x); }
static inline void sincospif(float x, float *s, float *c) { *s = sinpif(x); *c = cospif(x); }
static inline void sincospi(double x, double *s, double *c) { *s = sinpi(x); *c = cospi(x); }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
#define CK__RN(op, T, e) static inline T op(T a, T b) { return e; }
CK__RN(__fadd_rn, float, a + b) CK__RN(__fadd_rz, float, a + b) CK__RN(__fsub_rn, float, a - b)
CK__RN(__fmul_rn, float, a * b) CK__RN(__fmul_rz, float, a * b) CK__RN(__fdiv_rn, float, a / b)
CK__RN(__dadd_rn, double, a + b) CK__RN(__dsub_rn, double, a - b) CK__RN(__dmul_rn, double, a * b)
CK__RN(__ddiv_rn, double, a / b)
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline double __drcp_rn(double x) { return 1.0 / x; }
static inline double __dsqrt_rn(double x) { return sqrt(x); }

/* Bit reinterpretation and conversions. */
template <typename To, typename From> static inline To ck__bitcast(From f)
{
    To t;
    std::memcpy(&t, &f, sizeof t);
    return t;
}
static inline float __int_as_float(int x) { return ck__bitcast<float>(x); }
static inline int __float_as_int(float x) { return ck__bitcast<int>(x); }
static inline float __uint_as_float(unsigned x) { return ck__bitcast<float>(x); }
static inline unsigned __float_as_uint(float x) { return ck__bitcast<unsigned>(x); }
static inline double __longlong_as_double(long long x) { return ck__bitcast<double>(x); }
static inline long long __double_as_longlong(double x) { return ck__bitcast<long long>(x); }
static inline int __double2hiint(double x) { return (int)(ck__bitcast<unsigned long long>(x) >> 32); }
static inline int __double2loint(double x) { return (int)ck__bitcast<unsigned long long>(x); }
static inline double __hiloint2double(int hi, int lo)
{
    return ck__bitcast<double>(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);
}
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
static inline unsigned __float2uint_rz(float x) { return (unsigned)x; }
static inline long long __float2ll_rn(float x) { return (long long)nearbyintf(x); }
static inline long long __float2ll_rz(float x) { return (long long)x; }
static inline int __double2int_rn(double x) { return (int)nearbyint(x); }
static inline int __double2int_rz(double x) { return (int)x; }
static inline long long __double2ll_rn(double x) { return (long long)nearbyint(x); }
static inline float __double2float_rn(double x) { return (float)x; }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned x) { return (float)x; }
static inline float __ll2float_rn(long long x) { return (float)x; }
static inline double __int2double_rn(int x) { return (double)x; }
static inline double __ll2double_rn(long long x) { return (double)x; }

/* Integer intrinsics. */
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++, x >>= 1) r = (r << 1) | (x & 1u);
    return r;
}
static inline unsigned long long __brevll(unsigned long long x)
{
    return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
static inline int __mul24(int a, int b) { return (int)((long long)((a << 8) >> 8) * ((b << 8) >> 8)); }
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b)
{
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
static inline int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
static inline unsigned __uhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b) >> 1); }
static inline unsigned __urhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b + 1) >> 1); }
static inline unsigned __sad(int a, int b, unsigned c) { return c + (unsigned)(a > b ? a - b : b - a); }
static inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; i++) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
static inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s)
{
    return (unsigned)(((((unsigned long long)hi << 32) | lo) << (s & 31)) >> 32);
}
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s)
{
    return (unsigned)((((unsigned long long)hi << 32) | lo) >> (s & 31));
}

/* Cache-hinted loads and stores are plain accesses here. */
template <typename T> static inline T __ldg(const T *p) { return *p; }
template <typename T> static inline T __ldcg(const T *p) { return *p; }
template <typename T> static inline T __ldca(const T *p) { return *p; }
template <typename T> static inline T __ldcs(const T *p) { return *p; }
template <typename T> static inline T __ldlu(const T *p) { return *p; }
template <typename T> static inline T __ldcv(const T *p) { return *p; }
template <typename T> static inline void __stcg(T *p, T v) { *p = v; }
template <typename T> static inline void __stcs(T *p, T v) { *p = v; }
template <typename T> static inline void __stwb(T *p, T v) { *p = v; }
template <typename T> static inline void __stwt(T *p, T v) { *p = v; }

#define CUDART_PI_F 3.141592654f
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_INF_F __builtin_inff()
#define CUDART_INF __builtin_inf()
#define CUDART_NAN_F __builtin_nanf("")
#define CUDART_NAN __builtin_nan("")

/* -------------------------------------------------- kernel entry points */
/* Each kernel the module offers gets two entries, made from its function
 * pointer type so no parameter list is ever parsed: `thread` runs the
 * current thread (ck__ctx.threadIdx set by the caller), `block` runs every
 * thread of the current block in a loop (modules without barriers). */
template <typename T> static inline T ck__arg(void *p)
{
    T v;
    std::memcpy((void *)&v, p, sizeof(T));
    return v;
}
template <typename F, F K> struct ck__entry_impl;
template <typename... P, void (*K)(P...)> struct ck__entry_impl<void (*)(P...), K> {
    template <std::size_t... I> static void thread_i(void **a, std::index_sequence<I...>)
    {
        (void)a;
        K(ck__arg<std::decay_t<P>>(a[I])...);
    }
    static void thread(void **a) { thread_i(a, std::index_sequence_for<P...>{}); }
    static void loop(std::decay_t<P>... v)
    {
        ck__ctx_t &c = ck__ctx;
        const unsigned bx = c.bdim.x, by = c.bdim.y, bz = c.bdim.z;
        for (unsigned z = 0; z < bz; z++)
            for (unsigned y = 0; y < by; y++)
                for (unsigned x = 0; x < bx; x++) {
                    c.tid = uint3{x, y, z};
                    K(v...);
                }
    }
    template <std::size_t... I> static void block_i(void **a, std::index_sequence<I...>)
    {
        (void)a;
        loop(ck__arg<std::decay_t<P>>(a[I])...);
    }
    static void block(void **a) { block_i(a, std::index_sequence_for<P...>{}); }
    /* A function, not a static data member: those become STB_GNU_UNIQUE
     * symbols, which would keep the library from ever being unloaded. */
    static int params(std::size_t *sizes, int max)
    {
        const std::size_t s[sizeof...(P) + 1] = {sizeof(std::decay_t<P>)..., 0};
        for (int i = 0; i < (int)sizeof...(P) && i < max; i++) sizes[i] = s[i];
        return (int)sizeof...(P);
    }
};
template <auto K> struct ck__entry : ck__entry_impl<decltype(K), K> {};

/* A row of the table of entry points (ck__kdesc) the runtime generates. */
#define CK__KERNEL(name, ...)                                                                  \
    {name, &ck__entry<__VA_ARGS__>::thread, &ck__entry<__VA_ARGS__>::block, &ck__entry<__VA_ARGS__>::params}

/* ------------------------------------------------------ loop back-edges */
/* Every loop of the code that follows (the user's) looks at ck__api.stop
 * on each turn, so that Ctrl-C or the kernel time limit can end a kernel
 * that would never finish (a thread spinning on a flag that a block which
 * cannot run alongside it should set, say): `for (...) body` becomes
 * `for (...) if (check) {} else body`, `while (c)` (do ... while too)
 * `while (!check && (c))`.  A load and a branch a turn, and nothing in
 * constant evaluation; the loop over a block's threads above is not one of
 * them, so plain loops over threads vectorise as before.  A while whose
 * condition declares a variable does not compile with this. */
static constexpr inline bool ck__backedge(void)
{
    return !__builtin_is_constant_evaluated() && __builtin_expect(*ck__api.stop != 0, 0) ? (ck__api.poll(), false)
                                                                                         : false;
}
#define for(...) for (__VA_ARGS__) if (ck__backedge()) {} else
#define while(...) while (!ck__backedge() && (__VA_ARGS__))

#endif
