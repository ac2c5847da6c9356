/* CPU backend internals: register micro-kernels, packing, the thread pool.
 *
 * Packed layouts (BLIS/GotoBLAS): an A micro-panel holds tm rows of op(A)
 * for kc steps, k-major (ap[k*tm + i]); a B micro-panel holds tn columns of
 * op(B) for kc steps, k-major (bp[k*tn + j]). Rows/columns past the matrix
 * edge are packed as zeros, so every kernel call computes a full tm×tn tile. */
#ifndef TSR_BACKEND_CPU_KERNELS_H
#define TSR_BACKEND_CPU_KERNELS_H

#include <stdint.h>

#include "tessera.h"

/* C[i*ldc + j] = alpha * sum_k ap[k*tm+i] * bp[k*tn+j] + beta * C[...] for
 * the full tm×tn tile. beta == 0 never reads C. */
typedef void (*tsr__cpu_ukernel)(int64_t kc, const float *ap, const float *bp, float *c,
                                 int64_t ldc, float alpha, float beta);

/* Packs op(X) rows [0, mr) × k [0, kc) of a micro-panel of width w into
 * dst (k-major, zero-padded to w). Source element (r, k) lives at
 * src[r*rs + k*ks]: one of rs, ks is 1. */
typedef void (*tsr__cpu_packer)(int64_t kc, int mr, int w, const float *src, int64_t rs,
                                int64_t ks, float *dst);

typedef struct {
  tsr_isa isa;
  int tm, tn;
  tsr__cpu_ukernel fn;
} tsr__cpu_kernel;

/* Every micro-kernel compiled in, per ISA (NULL-terminated by fn == NULL). */
extern const tsr__cpu_kernel tsr__cpu_kernels_generic[];
extern const tsr__cpu_kernel tsr__cpu_kernels_avx2[];
extern const tsr__cpu_kernel tsr__cpu_kernels_avx512[];

/* Packers, per ISA (the AVX-512 and AVX2 ones transpose in registers). */
void tsr__cpu_pack_generic(int64_t kc, int mr, int w, const float *src, int64_t rs, int64_t ks,
                           float *dst);
void tsr__cpu_pack_avx512(int64_t kc, int mr, int w, const float *src, int64_t rs, int64_t ks,
                          float *dst);
void tsr__cpu_pack_avx2(int64_t kc, int mr, int w, const float *src, int64_t rs, int64_t ks,
                        float *dst);

/* Direct (view) kernels, for plans with a=view,b=view: no packing. Computes
 * the mr×nr tile (mr ≤ tm, nr ≤ tn) C[i*ldc + j] = alpha * sum_k
 * op(A)(i,k)·op(B)(k,j) + beta * C[...], reading op(A)(i,k) at
 * a[i*ars + k*aks] and op(B)(k,j) at b[k*ldb + j] (rows of op(B)
 * contiguous: op(B) = N). beta == 0 never reads C. */
typedef void (*tsr__cpu_dkernel)(int64_t kc, int mr, int nr, const float *a, int64_t ars,
                                 int64_t aks, const float *b, int64_t ldb, float *c, int64_t ldc,
                                 float alpha, float beta);
/* AVX-512: tn = 32, tm ≤ 12. AVX2: tn = 16, tm ≤ 6. Generic (any ISA): tm ≤ 16,
 * tn ≤ 32. */
void tsr__cpu_direct_avx512(int64_t kc, int mr, int nr, const float *a, int64_t ars, int64_t aks,
                            const float *b, int64_t ldb, float *c, int64_t ldc, float alpha,
                            float beta);
void tsr__cpu_direct_avx2(int64_t kc, int mr, int nr, const float *a, int64_t ars, int64_t aks,
                          const float *b, int64_t ldb, float *c, int64_t ldc, float alpha,
                          float beta);
void tsr__cpu_direct_generic(int64_t kc, int mr, int nr, const float *a, int64_t ars,
                             int64_t aks, const float *b, int64_t ldb, float *c, int64_t ldc,
                             float alpha, float beta);
#define TSR__CPU_DIRECT_AVX512_TM 12
#define TSR__CPU_DIRECT_AVX512_TN 32
#define TSR__CPU_DIRECT_AVX2_TM 6
#define TSR__CPU_DIRECT_AVX2_TN 16
#define TSR__CPU_DIRECT_GENERIC_TM 16
#define TSR__CPU_DIRECT_GENERIC_TN 32

/* GEMV kernels (M == 1 or N == 1): for i in [0, len)
 *   y[i*incy] = alpha * sum_k x[k*incx] * mat[i*rs + k*ks] + beta * y[i*incy],
 * streaming the matrix once in place. rs == 1 (the outputs run along
 * contiguous memory): axpy over matrix rows, every output a k-ascending FMA
 * chain per K block of TSR__CPU_GEMV_AXPY_KB, the blocks' sums added in
 * order. ks == 1: dot products, 16-lane partial sums per K block of
 * TSR__CPU_GEMV_KB. beta == 0 never reads y. */
typedef void (*tsr__cpu_gemv)(int64_t len, int64_t k, const float *mat, int64_t rs, int64_t ks,
                              const float *x, int64_t incx, float *y, int64_t incy, float alpha,
                              float beta);
void tsr__cpu_gemv_avx512(int64_t len, int64_t k, const float *mat, int64_t rs, int64_t ks,
                          const float *x, int64_t incx, float *y, int64_t incy, float alpha,
                          float beta);
void tsr__cpu_gemv_avx2(int64_t len, int64_t k, const float *mat, int64_t rs, int64_t ks,
                        const float *x, int64_t incx, float *y, int64_t incy, float alpha,
                        float beta);
void tsr__cpu_gemv_generic(int64_t len, int64_t k, const float *mat, int64_t rs, int64_t ks,
                           const float *x, int64_t incx, float *y, int64_t incy, float alpha,
                           float beta);
/* The vector GEMV kernels' common driver: output chunks of
 * TSR__CPU_GEMV_CHUNK, rs == 1 through `axpy` per K block of
 * TSR__CPU_GEMV_AXPY_KB (blocks summed apart, then added in order), else
 * `dot` per K block of TSR__CPU_GEMV_KB (a strided x gathered first), then
 * y = alpha·acc (+ beta·y as one FMA). The kernels read and write acc with
 * aligned vector accesses (64 bytes). axpy(n, kn, m0, ks, x, incx, acc):
 * acc[i] += sum over kn rows; dot(rows, kn, m0, rs, xb, acc): acc[r] += the
 * dot product of row r with the contiguous xb. */
typedef void (*tsr__cpu_gemv_axpy_fn)(int64_t n, int64_t kn, const float *m0, int64_t ks,
                                      const float *x, int64_t incx, float *acc);
typedef void (*tsr__cpu_gemv_dot_fn)(int64_t rows, int64_t kn, const float *m0, int64_t rs,
                                     const float *xb, float *acc);
void tsr__cpu_gemv_drive(int64_t len, int64_t k, const float *mat, int64_t rs, int64_t ks,
                         const float *x, int64_t incx, float *y, int64_t incy, float alpha,
                         float beta, tsr__cpu_gemv_axpy_fn axpy, tsr__cpu_gemv_dot_fn dot);
/* Largest prepacked op(B) (all batch items); beyond it B is packed per
 * tile. Largest prepacked op(A): half of a 32 MiB L3, so that its panels
 * stay there beside the B blocks the tiles pack. The measure layer's host
 * memory estimate counts both. */
#define TSR__CPU_PREPACK_MAX_BYTES (512ull << 20)
#define TSR__CPU_PREPACK_A_MAX_BYTES (16ull << 20)

/* Outputs per accumulator chunk (axpy form, on the stack) and K per block of
 * the dot form (its strided x is gathered into a stack block of this size). */
#define TSR__CPU_GEMV_CHUNK 2048
#define TSR__CPU_GEMV_KB 2048
#define TSR__CPU_GEMV_AXPY_KB 256

/* Bytes of the L3 that cpu0 shares with its neighbours: sysfs's level-3
 * entry (sysconf's figure is cpuid's, on AMD the whole package's: 64 MiB on a
 * Zen 1 guest whose cores share 8 MiB), TSR__CPU_L3_DEFAULT where none is
 * listed. The default plans size the packed op(B) the cores keep in it. Test
 * hook: a nonzero override (0 restores detection); process-wide. */
#define TSR__CPU_L3_DEFAULT (32ull << 20)
uint64_t tsr__cpu_l3_bytes(void);
void tsr__cpu_l3_override(uint64_t bytes);

/* 1 when the running CPU (and OS) supports the ISA's micro-kernels. */
int tsr__cpu_isa_supported(tsr_isa isa);
/* Test hook: treat every ISA above max as unsupported (TSR_ISA_AVX512
 * restores detection). Process-wide; not for concurrent use with gemm. */
void tsr__cpu_isa_limit(tsr_isa max);

/* ---- thread pool ------------------------------------------------------ */
/* Fork-safe: a pool inherited by a child process is revived on its next
 * use there (fresh locks; workers re-created on demand). */
typedef struct tsr__cpu_pool tsr__cpu_pool;

tsr__cpu_pool *tsr__cpu_pool_create(void);
void tsr__cpu_pool_destroy(tsr__cpu_pool *pool); /* NULL is a no-op; joins workers */
/* Runs fn(arg, tid) for tid in [0, nthreads) concurrently (tid 0 on the
 * caller) and returns when all are done. Callers sharing a pool are
 * serialized. Returns 0, or -1 when a worker thread could not be started
 * (then nothing ran). */
int tsr__cpu_pool_run(tsr__cpu_pool *pool, int nthreads, void (*fn)(void *arg, int tid),
                      void *arg);
/* Per-participant scratch of at least `bytes` (64-byte aligned), kept
 * between runs; valid only inside fn for that tid. NULL on OOM. */
float *tsr__cpu_pool_scratch(tsr__cpu_pool *pool, int tid, size_t bytes);
/* Scratch shared by all participants (same lifetime rules); only between
 * tsr__cpu_pool_lock and _unlock, which keep other callers out across
 * several runs. */
float *tsr__cpu_pool_shared(tsr__cpu_pool *pool, size_t bytes);
void tsr__cpu_pool_lock(tsr__cpu_pool *pool);
void tsr__cpu_pool_unlock(tsr__cpu_pool *pool);

#endif
