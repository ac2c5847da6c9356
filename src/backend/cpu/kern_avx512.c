/* AVX-512 micro-kernels and packing. 16-wide along N; tm rows of packed A
 * are broadcast (folded into the FMA as {1to16} memory operands). Compiled
 * per function with target attributes; used only after feature detection. */
#include "backend/cpu/cpu_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* MR rows × NV vectors of 16; MR*NV accumulators + NV B vectors must fit the
 * 32 zmm registers. The C tile is prefetched before the K loop so its
 * misses overlap the FMAs. The B micro-panel streams from L2: each k-step
 * prefetches its line TSR_AVX512_PF_K steps ahead into L1 (a prefetch past
 * the panel's end is a hint and never faults). On the Intel AVX-512 guest
 * (two 512-bit FMA ports) the hardware prefetchers alone left 1024^3 at
 * 0.96-0.97 of OpenBLAS's speed; 4, 8, 16 or 32 steps ahead (with the K loop
 * unrolled by 4) all read 0.99-1.03 (docs/log/perf-notebook.md, session 18).
 * The prefetches change no arithmetic. */
#define TSR_AVX512_PF_K 16
#define TSR_AVX512_KERNEL(MR, NV)                                                            \
  __attribute__((target("avx512f"))) static void k512_##MR##x##NV(                          \
      int64_t kc, const float *restrict ap, const float *restrict bp, float *restrict c,     \
      int64_t ldc, float alpha, float beta) {                                                \
    __m512 acc[MR][NV];                                                                      \
    _Pragma("GCC unroll 32") for (int i = 0; i < MR; i++) {                                  \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                                 \
        acc[i][v] = _mm512_setzero_ps();                                                     \
        _mm_prefetch((const char *)(c + i * ldc + v * 16), _MM_HINT_T0);                     \
      }                                                                                      \
    }                                                                                        \
    _Pragma("GCC unroll 4") for (int64_t k = 0; k < kc; k++) {                               \
      /* Named B vectors: GCC spills a small __m512 array to the stack. */                  \
      const float *bk = bp + k * (NV * 16);                                                  \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) /* one 64-byte line each */      \
          _mm_prefetch((const char *)(bk + TSR_AVX512_PF_K * NV * 16 + v * 16), _MM_HINT_T0); \
      __m512 b0 = _mm512_load_ps(bk);                                                        \
      __m512 b1 = NV > 1 ? _mm512_load_ps(bk + 16) : b0;                                     \
      __m512 b2 = NV > 2 ? _mm512_load_ps(bk + 32) : b0;                                     \
      __m512 b3 = NV > 3 ? _mm512_load_ps(bk + 48) : b0;                                     \
      _Pragma("GCC unroll 32") for (int i = 0; i < MR; i++) {                                \
        __m512 a = _mm512_set1_ps(ap[k * MR + i]);                                           \
        acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);                                       \
        if (NV > 1) acc[i][1 % NV] = _mm512_fmadd_ps(a, b1, acc[i][1 % NV]);                 \
        if (NV > 2) acc[i][2 % NV] = _mm512_fmadd_ps(a, b2, acc[i][2 % NV]);                 \
        if (NV > 3) acc[i][3 % NV] = _mm512_fmadd_ps(a, b3, acc[i][3 % NV]);                 \
      }                                                                                      \
    }                                                                                        \
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);                            \
    _Pragma("GCC unroll 32") for (int i = 0; i < MR; i++)                                    \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                               \
      float *cp = c + i * ldc + v * 16;                                                      \
      __m512 r = _mm512_mul_ps(va, acc[i][v]);                                               \
      if (beta != 0.0f) r = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cp), r);                     \
      _mm512_storeu_ps(cp, r);                                                               \
    }                                                                                        \
  }

TSR_AVX512_KERNEL(6, 4)
TSR_AVX512_KERNEL(8, 3)
TSR_AVX512_KERNEL(12, 2)
TSR_AVX512_KERNEL(14, 2)
TSR_AVX512_KERNEL(8, 2)
TSR_AVX512_KERNEL(16, 1)
TSR_AVX512_KERNEL(28, 1)

const tsr__cpu_kernel tsr__cpu_kernels_avx512[] = {
    {TSR_ISA_AVX512, 12, 32, k512_12x2},
    {TSR_ISA_AVX512, 14, 32, k512_14x2},
    {TSR_ISA_AVX512, 6, 64, k512_6x4},
    {TSR_ISA_AVX512, 8, 48, k512_8x3},
    {TSR_ISA_AVX512, 8, 32, k512_8x2},
    {TSR_ISA_AVX512, 16, 16, k512_16x1},
    {TSR_ISA_AVX512, 28, 16, k512_28x1},
    {TSR_ISA_AVX512, 0, 0, NULL},
};

static inline __mmask16 lanes(int n) {
  return n <= 0 ? 0 : n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
}

/* In-register transpose of 16 rows of 16 floats: out[j] = column j. */
__attribute__((target("avx512f"))) static inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  /* Per 128-bit lane L, u[4g + q] holds column 4L+q of rows 4g..4g+3. */
  for (int g = 0; g < 4; g++) {
    __m512 lo0 = t[4 * g], hi0 = t[4 * g + 1], lo1 = t[4 * g + 2], hi1 = t[4 * g + 3];
    u[4 * g + 0] = _mm512_shuffle_ps(lo0, lo1, 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(lo0, lo1, 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(hi0, hi1, 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(hi0, hi1, 0xEE);
  }
  /* Gather lane L of the four row groups: column 4L+q. */
  for (int q = 0; q < 4; q++) {
    __m512 v0 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0x88);
    __m512 v1 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0xDD);
    __m512 v2 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0x88);
    __m512 v3 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0xDD);
    r[q] = _mm512_shuffle_f32x4(v0, v2, 0x88);      /* lane 0 */
    r[8 + q] = _mm512_shuffle_f32x4(v0, v2, 0xDD);  /* lane 2 */
    r[4 + q] = _mm512_shuffle_f32x4(v1, v3, 0x88);  /* lane 1 */
    r[12 + q] = _mm512_shuffle_f32x4(v1, v3, 0xDD); /* lane 3 */
  }
}

__attribute__((target("avx512f"))) void tsr__cpu_pack_avx512(int64_t kc, int mr, int w,
                                                             const float *src, int64_t rs,
                                                             int64_t ks, float *dst) {
  if (rs == 1) { /* each k-step is a contiguous run of mr source elements */
    for (int64_t k = 0; k < kc; k++) {
      const float *s = src + k * ks;
      float *d = dst + k * w;
      for (int r0 = 0; r0 < w; r0 += 16)
        _mm512_mask_storeu_ps(d + r0, lanes(w - r0), _mm512_maskz_loadu_ps(lanes(mr - r0), s + r0));
    }
    return;
  }
  /* Rows contiguous along k: transpose 16×16 blocks in registers. */
  for (int r0 = 0; r0 < w; r0 += 16) {
    __mmask16 store = lanes(w - r0);
    int rows = mr - r0 < 0 ? 0 : mr - r0 > 16 ? 16 : mr - r0;
    for (int64_t k0 = 0; k0 < kc; k0 += 16) {
      int kn = kc - k0 < 16 ? (int)(kc - k0) : 16;
      __mmask16 kmask = lanes(kn);
      __m512 r[16];
      /* 16 source rows are 16 streams at once: fetch each 8 lines ahead
       * (docs/log/perf-notebook.md, session 5: llm-train). */
      if (k0 + 128 < kc)
        for (int i = 0; i < rows; i++)
          _mm_prefetch((const char *)(src + (r0 + i) * rs + k0 + 128), _MM_HINT_T0);
      for (int i = 0; i < 16; i++)
        r[i] = i < rows ? _mm512_maskz_loadu_ps(kmask, src + (r0 + i) * rs + k0)
                        : _mm512_setzero_ps();
      transpose16(r);
      for (int j = 0; j < kn; j++) _mm512_mask_storeu_ps(dst + (k0 + j) * w + r0, store, r[j]);
    }
  }
}

/* Direct kernels: MR rows × up to 32 columns read in place, the columns
 * masked to nr. op(B) rows are loaded as they are (no packing); op(A)
 * elements are broadcast from their strided places. One function per MR so
 * the accumulators stay in registers. */
#define TSR_AVX512_DIRECT(MR)                                                                \
  __attribute__((target("avx512f"))) static void d512_##MR(                                 \
      int64_t kc, int nr, const float *restrict a, int64_t ars, int64_t aks,                 \
      const float *restrict b, int64_t ldb, float *restrict c, int64_t ldc, float alpha,     \
      float beta) {                                                                          \
    const __mmask16 m0 = lanes(nr), m1 = lanes(nr - 16);                                     \
    __m512 acc0[MR], acc1[MR];                                                               \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) acc0[i] = acc1[i] = _mm512_setzero_ps(); \
    /* op(A)'s rows from one base per 3 rows, each row at base + {0,1,2} x ars         \
     * (x86's index scales): twelve row pointers would spill GPRs */                         \
    const float *ag[(MR + 2) / 3];                                                           \
    _Pragma("GCC unroll 4") for (int g = 0; g < (MR + 2) / 3; g++) ag[g] = a + 3 * g * ars;  \
    _Pragma("GCC unroll 4") for (int64_t k = 0; k < kc; k++) {                               \
      const float *bk = b + k * ldb;                                                         \
      __m512 b0 = _mm512_maskz_loadu_ps(m0, bk), b1 = _mm512_maskz_loadu_ps(m1, bk + 16);    \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {                                \
        __m512 av = _mm512_set1_ps(ag[i / 3][(i % 3) * ars]);                                \
        acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);                                          \
        acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);                                          \
      }                                                                                      \
      _Pragma("GCC unroll 4") for (int g = 0; g < (MR + 2) / 3; g++) ag[g] += aks;           \
    }                                                                                        \
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);                            \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {                                  \
      float *cr = c + i * ldc;                                                               \
      __m512 r0 = _mm512_mul_ps(va, acc0[i]), r1 = _mm512_mul_ps(va, acc1[i]);               \
      if (beta != 0.0f) {                                                                    \
        r0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cr), r0);                         \
        r1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, cr + 16), r1);                    \
      }                                                                                      \
      _mm512_mask_storeu_ps(cr, m0, r0);                                                     \
      _mm512_mask_storeu_ps(cr + 16, m1, r1);                                                \
    }                                                                                        \
  }

TSR_AVX512_DIRECT(1)
TSR_AVX512_DIRECT(2)
TSR_AVX512_DIRECT(3)
TSR_AVX512_DIRECT(4)
TSR_AVX512_DIRECT(5)
TSR_AVX512_DIRECT(6)
TSR_AVX512_DIRECT(7)
TSR_AVX512_DIRECT(8)
TSR_AVX512_DIRECT(9)
TSR_AVX512_DIRECT(10)
TSR_AVX512_DIRECT(11)
TSR_AVX512_DIRECT(12)

/* One vector of columns (nr <= 16): a strip of at most 16 columns would
 * spend half its FMAs on masked-off lanes in the two-vector kernel. */
#define TSR_AVX512_DIRECT1(MR)                                                               \
  __attribute__((target("avx512f"))) static void d512n_##MR(                                \
      int64_t kc, int nr, const float *restrict a, int64_t ars, int64_t aks,                 \
      const float *restrict b, int64_t ldb, float *restrict c, int64_t ldc, float alpha,     \
      float beta) {                                                                          \
    const __mmask16 m0 = lanes(nr);                                                          \
    __m512 acc0[MR];                                                                         \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) acc0[i] = _mm512_setzero_ps();     \
    const float *ag[(MR + 2) / 3]; /* as in d512_MR */                                       \
    _Pragma("GCC unroll 4") for (int g = 0; g < (MR + 2) / 3; g++) ag[g] = a + 3 * g * ars;  \
    _Pragma("GCC unroll 4") for (int64_t k = 0; k < kc; k++) {                               \
      __m512 b0 = _mm512_maskz_loadu_ps(m0, b + k * ldb);                                    \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                  \
          acc0[i] = _mm512_fmadd_ps(_mm512_set1_ps(ag[i / 3][(i % 3) * ars]), b0, acc0[i]);  \
      _Pragma("GCC unroll 4") for (int g = 0; g < (MR + 2) / 3; g++) ag[g] += aks;           \
    }                                                                                        \
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);                            \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {                                  \
      float *cr = c + i * ldc;                                                               \
      __m512 r0 = _mm512_mul_ps(va, acc0[i]);                                                \
      if (beta != 0.0f) r0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cr), r0);         \
      _mm512_mask_storeu_ps(cr, m0, r0);                                                     \
    }                                                                                        \
  }

TSR_AVX512_DIRECT1(1)
TSR_AVX512_DIRECT1(2)
TSR_AVX512_DIRECT1(3)
TSR_AVX512_DIRECT1(4)
TSR_AVX512_DIRECT1(5)
TSR_AVX512_DIRECT1(6)
TSR_AVX512_DIRECT1(7)
TSR_AVX512_DIRECT1(8)
TSR_AVX512_DIRECT1(9)
TSR_AVX512_DIRECT1(10)
TSR_AVX512_DIRECT1(11)
TSR_AVX512_DIRECT1(12)

void tsr__cpu_direct_avx512(int64_t kc, int mr, int nr, const float *a, int64_t ars, int64_t aks,
                            const float *b, int64_t ldb, float *c, int64_t ldc, float alpha,
                            float beta) {
  typedef void (*fn)(int64_t, int, const float *, int64_t, int64_t, const float *, int64_t,
                     float *, int64_t, float, float);
  static const fn by_rows[TSR__CPU_DIRECT_AVX512_TM + 1] = {
      NULL, d512_1, d512_2, d512_3, d512_4, d512_5, d512_6,
      d512_7, d512_8, d512_9, d512_10, d512_11, d512_12};
  static const fn by_rows1[TSR__CPU_DIRECT_AVX512_TM + 1] = {
      NULL, d512n_1, d512n_2, d512n_3, d512n_4, d512n_5, d512n_6,
      d512n_7, d512n_8, d512n_9, d512n_10, d512n_11, d512n_12};
  (nr <= 16 ? by_rows1 : by_rows)[mr](kc, nr, a, ars, aks, b, ldb, c, ldc, alpha, beta);
}

/* GEMV (cpu_kernels.h). Axpy form: four matrix rows per pass over the
 * accumulator chunk (L1), so four sequential streams run at once and the
 * chunk is loaded and stored once per four k. Dot form: four rows × two
 * vectors of partial sums (eight FMA chains) per K block. */
__attribute__((target("avx512f"))) static void gemv_axpy(int64_t n, int64_t k, const float *m0,
                                                         int64_t ks, const float *x,
                                                         int64_t incx, float *acc) {
  const int64_t nv = n & ~(int64_t)15;
  const __mmask16 tail = lanes((int)(n - nv));
  int64_t kk = 0;
  for (; kk + 4 <= k; kk += 4) {
    const float *r0 = m0 + kk * ks, *r1 = r0 + ks, *r2 = r1 + ks, *r3 = r2 + ks;
    const __m512 x0 = _mm512_set1_ps(x[kk * incx]), x1 = _mm512_set1_ps(x[(kk + 1) * incx]);
    const __m512 x2 = _mm512_set1_ps(x[(kk + 2) * incx]), x3 = _mm512_set1_ps(x[(kk + 3) * incx]);
    for (int64_t i = 0; i < nv; i += 16) {
      __m512 a = _mm512_load_ps(acc + i);
      a = _mm512_fmadd_ps(x0, _mm512_loadu_ps(r0 + i), a);
      a = _mm512_fmadd_ps(x1, _mm512_loadu_ps(r1 + i), a);
      a = _mm512_fmadd_ps(x2, _mm512_loadu_ps(r2 + i), a);
      a = _mm512_fmadd_ps(x3, _mm512_loadu_ps(r3 + i), a);
      _mm512_store_ps(acc + i, a);
    }
    if (tail) {
      __m512 a = _mm512_load_ps(acc + nv);
      a = _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(tail, r0 + nv), a);
      a = _mm512_fmadd_ps(x1, _mm512_maskz_loadu_ps(tail, r1 + nv), a);
      a = _mm512_fmadd_ps(x2, _mm512_maskz_loadu_ps(tail, r2 + nv), a);
      a = _mm512_fmadd_ps(x3, _mm512_maskz_loadu_ps(tail, r3 + nv), a);
      _mm512_store_ps(acc + nv, a);
    }
  }
  for (; kk < k; kk++) {
    const float *r0 = m0 + kk * ks;
    const __m512 x0 = _mm512_set1_ps(x[kk * incx]);
    for (int64_t i = 0; i < nv; i += 16)
      _mm512_store_ps(acc + i, _mm512_fmadd_ps(x0, _mm512_loadu_ps(r0 + i), _mm512_load_ps(acc + i)));
    if (tail)
      _mm512_store_ps(acc + nv, _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(tail, r0 + nv),
                                                _mm512_load_ps(acc + nv)));
  }
}

/* sum_k xb[k] * row[k] over kn steps (xb contiguous), rows r..r+R-1. */
__attribute__((target("avx512f"))) static void gemv_dot(int64_t rows, int64_t kn,
                                                        const float *m0, int64_t rs,
                                                        const float *xb, float *acc) {
  const int64_t k32 = kn & ~(int64_t)31;
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float *q0 = m0 + r * rs, *q1 = q0 + rs, *q2 = q1 + rs, *q3 = q2 + rs;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0;
    for (int64_t kk = 0; kk < k32; kk += 32) {
      const __m512 xa = _mm512_loadu_ps(xb + kk), xc = _mm512_loadu_ps(xb + kk + 16);
      s0 = _mm512_fmadd_ps(xa, _mm512_loadu_ps(q0 + kk), s0);
      s1 = _mm512_fmadd_ps(xa, _mm512_loadu_ps(q1 + kk), s1);
      s2 = _mm512_fmadd_ps(xa, _mm512_loadu_ps(q2 + kk), s2);
      s3 = _mm512_fmadd_ps(xa, _mm512_loadu_ps(q3 + kk), s3);
      t0 = _mm512_fmadd_ps(xc, _mm512_loadu_ps(q0 + kk + 16), t0);
      t1 = _mm512_fmadd_ps(xc, _mm512_loadu_ps(q1 + kk + 16), t1);
      t2 = _mm512_fmadd_ps(xc, _mm512_loadu_ps(q2 + kk + 16), t2);
      t3 = _mm512_fmadd_ps(xc, _mm512_loadu_ps(q3 + kk + 16), t3);
    }
    for (int64_t kk = k32; kk < kn; kk += 16) {
      const __mmask16 m = lanes((int)(kn - kk));
      const __m512 xa = _mm512_maskz_loadu_ps(m, xb + kk);
      s0 = _mm512_fmadd_ps(xa, _mm512_maskz_loadu_ps(m, q0 + kk), s0);
      s1 = _mm512_fmadd_ps(xa, _mm512_maskz_loadu_ps(m, q1 + kk), s1);
      s2 = _mm512_fmadd_ps(xa, _mm512_maskz_loadu_ps(m, q2 + kk), s2);
      s3 = _mm512_fmadd_ps(xa, _mm512_maskz_loadu_ps(m, q3 + kk), s3);
    }
    acc[r] += _mm512_reduce_add_ps(_mm512_add_ps(s0, t0));
    acc[r + 1] += _mm512_reduce_add_ps(_mm512_add_ps(s1, t1));
    acc[r + 2] += _mm512_reduce_add_ps(_mm512_add_ps(s2, t2));
    acc[r + 3] += _mm512_reduce_add_ps(_mm512_add_ps(s3, t3));
  }
  for (; r < rows; r++) {
    const float *q0 = m0 + r * rs;
    __m512 s0 = _mm512_setzero_ps();
    for (int64_t kk = 0; kk < kn; kk += 16) {
      const __mmask16 m = lanes((int)(kn - kk));
      s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, xb + kk), _mm512_maskz_loadu_ps(m, q0 + kk), s0);
    }
    acc[r] += _mm512_reduce_add_ps(s0);
  }
}

void tsr__cpu_gemv_avx512(int64_t len, int64_t k, const float *mat, int64_t rs, int64_t ks,
                          const float *x, int64_t incx, float *y, int64_t incy, float alpha,
                          float beta) {
  tsr__cpu_gemv_drive(len, k, mat, rs, ks, x, incx, y, incy, alpha, beta, gemv_axpy, gemv_dot);
}
#else
const tsr__cpu_kernel tsr__cpu_kernels_avx512[] = {{TSR_ISA_AVX512, 0, 0, NULL}};
void tsr__cpu_direct_avx512(int64_t kc, int mr, int nr, const float *a, int64_t ars, int64_t aks,
                            const float *b, int64_t ldb, float *c, int64_t ldc, float alpha,
                            float beta) {
  tsr__cpu_direct_generic(kc, mr, nr, a, ars, aks, b, ldb, c, ldc, alpha, beta);
}
void tsr__cpu_pack_avx512(int64_t kc, int mr, int w, const float *src, int64_t rs, int64_t ks,
                          float *dst) {
  tsr__cpu_pack_generic(kc, mr, w, src, rs, ks, dst);
}
void tsr__cpu_gemv_avx512(int64_t len, int64_t k, const float *mat, int64_t rs, int64_t ks,
                          const float *x, int64_t incx, float *y, int64_t incy, float alpha,
                          float beta) {
  tsr__cpu_gemv_generic(len, k, mat, rs, ks, x, incx, y, incy, alpha, beta);
}
#endif
