/* AVX2 + FMA micro-kernels (8-wide along N, tm rows broadcast from packed A).
 * Compiled per function with target attributes so the library still runs
 * on CPUs without AVX2; selected only after feature detection. */
#include "backend/cpu/cpu_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* K steps ahead at which the kernels prefetch the B micro-panel: at bk 1024
 * it is 64 KiB (6x16), twice L1, and its first pass comes from L3. Kernel
 * over a 16 MiB packed B, one core: +1.5-3.5 % (Zen 3, session 10). */
#define TSR__AVX2_BPF 16

/* MR rows × NV vectors of 8; MR*NV accumulators + NV B vectors + 1
 * broadcast must fit the 16 ymm registers. */
#define TSR_AVX2_KERNEL(MR, NV)                                                              \
  __attribute__((target("avx2,fma"))) static void k256_##MR##x##NV(                         \
      int64_t kc, const float *restrict ap, const float *restrict bp, float *restrict c,     \
      int64_t ldc, float alpha, float beta) {                                                \
    __m256 acc[MR][NV];                                                                      \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {                                  \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = _mm256_setzero_ps(); \
      _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);                                \
      _mm_prefetch((const char *)(c + i * ldc + NV * 8 - 1), _MM_HINT_T0);                   \
    }                                                                                        \
    _Pragma("GCC unroll 4") for (int64_t k = 0; k < kc; k++) {                               \
      __m256 bv[NV];                                                                         \
      _mm_prefetch((const char *)(bp + (k + TSR__AVX2_BPF) * (NV * 8)), _MM_HINT_T0);       \
      if (NV > 2) /* a k-step of 4x24 spans 1.5 lines */                                    \
        _mm_prefetch((const char *)(bp + (k + TSR__AVX2_BPF) * (NV * 8) + 16), _MM_HINT_T0); \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) bv[v] =                           \
          _mm256_load_ps(bp + k * (NV * 8) + v * 8);                                         \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {                                \
        __m256 a = _mm256_broadcast_ss(ap + k * MR + i);                                     \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] =                     \
            _mm256_fmadd_ps(a, bv[v], acc[i][v]);                                            \
      }                                                                                      \
    }                                                                                        \
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);                            \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                    \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                               \
      float *cp = c + i * ldc + v * 8;                                                       \
      __m256 r = _mm256_mul_ps(va, acc[i][v]);                                               \
      if (beta != 0.0f) r = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cp), r);                     \
      _mm256_storeu_ps(cp, r);                                                               \
    }                                                                                        \
  }

TSR_AVX2_KERNEL(6, 2)
TSR_AVX2_KERNEL(4, 3)
TSR_AVX2_KERNEL(8, 1)

const tsr__cpu_kernel tsr__cpu_kernels_avx2[] = {
    {TSR_ISA_AVX2, 6, 16, k256_6x2},
    {TSR_ISA_AVX2, 4, 24, k256_4x3},
    {TSR_ISA_AVX2, 8, 8, k256_8x1},
    {TSR_ISA_AVX2, 0, 0, NULL},
};

/* The first n of 8 lanes, for vmaskmovps (masked lanes load 0, store nothing). */
__attribute__((target("avx2"))) static inline __m256i lanes8(int64_t n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n < 8 ? n : 8)), idx);
}

/* In-register transpose of 8 rows of 8 floats: r[j] becomes column j. */
__attribute__((target("avx2"))) static inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  /* per 128-bit half: u[4g + q] holds columns q (low) and 4 + q (high) of rows 4g..4g+3 */
  for (int g = 0; g < 2; g++) {
    u[4 * g] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  for (int q = 0; q < 4; q++) {
    r[q] = _mm256_permute2f128_ps(u[q], u[4 + q], 0x20);
    r[4 + q] = _mm256_permute2f128_ps(u[q], u[4 + q], 0x31);
  }
}

/* The same transpose from rows loaded as 128-bit halves: r[i] (i < 4) holds
 * k 0..3 of rows i (low) and i + 4 (high), r[4 + i] their k 4..7. Two in-lane
 * 4x4 transposes then give the columns, with no cross-lane permute: on Zen 1
 * each vperm2f128 is 8 uops (session 43; transpose8's 8 of them made A's and
 * op(B)'s transposing pack a third of a 32x4096x4096:NT call), on Intel the
 * inserts leave the shuffle port 16 of transpose8's 24 uops. */
__attribute__((target("avx2"))) static inline void transpose8_halves(__m256 r[8]) {
  for (int g = 0; g < 8; g += 4) { /* k 0..3, then k 4..7 */
    const __m256 t0 = _mm256_unpacklo_ps(r[g], r[g + 1]), t1 = _mm256_unpackhi_ps(r[g], r[g + 1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[g + 2], r[g + 3]), t3 = _mm256_unpackhi_ps(r[g + 2], r[g + 3]);
    r[g] = _mm256_shuffle_ps(t0, t2, 0x44);
    r[g + 1] = _mm256_shuffle_ps(t0, t2, 0xEE);
    r[g + 2] = _mm256_shuffle_ps(t1, t3, 0x44);
    r[g + 3] = _mm256_shuffle_ps(t1, t3, 0xEE);
  }
}

/* The first n (<= 8) lanes of v to d: a full store, or whole 128-bit and
 * 64-bit pieces and a last float (vmaskmovps stores are microcoded on AMD
 * Zen: the packer with them ran slower than the scalar one). */
__attribute__((target("avx2"))) static inline void store_n(float *d, __m256 v, int n) {
  if (n >= 8) {
    _mm256_storeu_ps(d, v);
    return;
  }
  __m128 h = _mm256_castps256_ps128(v);
  if (n >= 4) {
    _mm_storeu_ps(d, h);
    h = _mm256_extractf128_ps(v, 1);
    d += 4, n -= 4;
  }
  if (n >= 2) {
    _mm_storel_pi((__m64 *)(void *)d, h);
    h = _mm_movehl_ps(h, h);
    d += 2, n -= 2;
  }
  if (n) _mm_store_ss(d, h);
}

/* Direct (view) kernels (cpu_kernels.h): op(A) broadcast in place, op(B)'s
 * rows loaded in place, MR <= 6 rows x NV vectors of 8 columns. FULL: all
 * NV*8 columns (plain loads and stores); else the first nr, with masked loads
 * (masked lanes read nothing) and store_n (vmaskmovps stores are microcoded
 * on AMD Zen). The packed kernels' packing was a fifth of a 48^3 call on Zen 1
 * (session 44), as it was on AVX-512 before its direct kernels (step 13). */
#define TSR_AVX2_DIRECT(MR, NV, FULL, NAME)                                                  \
  __attribute__((target("avx2,fma"))) static void NAME(                                     \
      int64_t kc, int nr, const float *restrict a, int64_t ars, int64_t aks,                 \
      const float *restrict b, int64_t ldb, float *restrict c, int64_t ldc, float alpha,     \
      float beta) {                                                                          \
    const __m256i msk[2] = {lanes8(nr), lanes8(nr - 8)};                                     \
    __m256 acc[MR][NV];                                                                      \
    _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++)                                     \
        _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) acc[i][v] = _mm256_setzero_ps(); \
    /* op(A)'s rows from one base per 3 rows, each at base + {0,1,2} x ars    \
     * (x86's index scales), as the AVX-512 direct kernels do */                             \
    const float *ag[(MR + 2) / 3];                                                           \
    _Pragma("GCC unroll 2") for (int g = 0; g < (MR + 2) / 3; g++) ag[g] = a + 3 * g * ars;  \
    _Pragma("GCC unroll 4") for (int64_t k = 0; k < kc; k++) {                               \
      const float *bk = b + k * ldb;                                                         \
      __m256 bv[NV];                                                                         \
      _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) bv[v] =                           \
          FULL ? _mm256_loadu_ps(bk + v * 8) : _mm256_maskload_ps(bk + v * 8, msk[v]);       \
      _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) {                                 \
        const __m256 av = _mm256_broadcast_ss(ag[i / 3] + (i % 3) * ars);                    \
        _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) acc[i][v] =                     \
            _mm256_fmadd_ps(av, bv[v], acc[i][v]);                                           \
      }                                                                                      \
      _Pragma("GCC unroll 2") for (int g = 0; g < (MR + 2) / 3; g++) ag[g] += aks;           \
    }                                                                                        \
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);                      \
    _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++)                                     \
        _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) {                               \
      float *cp = c + i * ldc + v * 8;                                                       \
      __m256 r = _mm256_mul_ps(va, acc[i][v]);                                               \
      if (beta != 0.0f)                                                                      \
        r = _mm256_fmadd_ps(vb, FULL ? _mm256_loadu_ps(cp) : _mm256_maskload_ps(cp, msk[v]), r); \
      if (FULL) _mm256_storeu_ps(cp, r);                                                     \
      else store_n(cp, r, nr - v * 8);                                                       \
    }                                                                                        \
  }
#define TSR_AVX2_DIRECT_ROWS(MR)                 \
  TSR_AVX2_DIRECT(MR, 2, 1, d256f_##MR)         \
  TSR_AVX2_DIRECT(MR, 2, 0, d256m_##MR)         \
  TSR_AVX2_DIRECT(MR, 1, 1, d256nf_##MR)        \
  TSR_AVX2_DIRECT(MR, 1, 0, d256nm_##MR)
TSR_AVX2_DIRECT_ROWS(1)
TSR_AVX2_DIRECT_ROWS(2)
TSR_AVX2_DIRECT_ROWS(3)
TSR_AVX2_DIRECT_ROWS(4)
TSR_AVX2_DIRECT_ROWS(5)
TSR_AVX2_DIRECT_ROWS(6)

void tsr__cpu_direct_avx2(int64_t kc, int mr, int nr, const float *a, int64_t ars, int64_t aks,
                          const float *b, int64_t ldb, float *c, int64_t ldc, float alpha,
                          float beta) {
  typedef void (*fn)(int64_t, int, const float *, int64_t, int64_t, const float *, int64_t,
                     float *, int64_t, float, float);
  /* [one vector (nr <= 8) or two][partial or full columns][rows] */
  static const fn by[2][2][TSR__CPU_DIRECT_AVX2_TM + 1] = {
      {{NULL, d256nm_1, d256nm_2, d256nm_3, d256nm_4, d256nm_5, d256nm_6},
       {NULL, d256nf_1, d256nf_2, d256nf_3, d256nf_4, d256nf_5, d256nf_6}},
      {{NULL, d256m_1, d256m_2, d256m_3, d256m_4, d256m_5, d256m_6},
       {NULL, d256f_1, d256f_2, d256f_3, d256f_4, d256f_5, d256f_6}}};
  const int two = nr > 8;
  by[two][nr == (two ? 16 : 8)][mr](kc, nr, a, ars, aks, b, ldb, c, ldc, alpha, beta);
}

/* Packer (cpu_kernels.h), 8 lanes wide: contiguous runs copied with masked
 * loads, rows contiguous along k transposed 8x8 in registers. The generic
 * packer's scalar transposing copy of A (op N) took ~6 % of 512x4096x4096 on
 * an AVX2 machine (Zen 3, session 9). */
__attribute__((target("avx2"))) void tsr__cpu_pack_avx2(int64_t kc, int mr, int w,
                                                        const float *src, int64_t rs,
                                                        int64_t ks, float *dst) {
  if (rs == 1) { /* each k-step is a contiguous run of mr source elements */
    for (int64_t k = 0; k < kc; k++) {
      const float *s = src + k * ks;
      float *d = dst + k * w;
      for (int r0 = 0; r0 < w; r0 += 8)
        store_n(d + r0, _mm256_maskload_ps(s + r0, lanes8(mr - r0)), w - r0);
    }
    return;
  }
  if (ks != 1) {
    tsr__cpu_pack_generic(kc, mr, w, src, rs, ks, dst);
    return;
  }
  for (int r0 = 0; r0 < w; r0 += 8) {
    const int wn = w - r0;
    const int rows = mr - r0 < 0 ? 0 : mr - r0 > 8 ? 8 : mr - r0;
    for (int64_t k0 = 0; k0 < kc; k0 += 8) {
      const int kn = kc - k0 < 8 ? (int)(kc - k0) : 8;
      const __m256i kmask = lanes8(kn);
      __m256 r[8];
      if (k0 + 64 < kc) /* the rows are `rows` streams: fetch each 4 lines ahead */
        for (int i = 0; i < rows; i++)
          _mm_prefetch((const char *)(src + (r0 + i) * rs + k0 + 64), _MM_HINT_T0);
      else if (rows == 8) /* and near their end the next 8 rows' start (past the panel:
                           * the next panel's, an address maybe past the operand, so no
                           * pointer is formed); A's panels of tm < 8 rows go without */
        for (int i = 0; i < 8; i++) {
          const uintptr_t at = (uintptr_t)src + sizeof(float) * (uintptr_t)((r0 + 8 + i) * rs + k0 + 64 - kc);
          _mm_prefetch((const char *)at, _MM_HINT_T0);
        }
      if (kn == 8) { /* whole k-steps: 128-bit halves (rows past mr zero), in-lane transposes */
        const __m128 z = _mm_setzero_ps();
        for (int i = 0; i < 4; i++) {
          const float *lo = i < rows ? src + (r0 + i) * rs + k0 : NULL;
          const float *hi = i + 4 < rows ? src + (r0 + i + 4) * rs + k0 : NULL;
          r[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(lo ? _mm_loadu_ps(lo) : z),
                                      hi ? _mm_loadu_ps(hi) : z, 1);
          r[4 + i] = _mm256_insertf128_ps(_mm256_castps128_ps256(lo ? _mm_loadu_ps(lo + 4) : z),
                                          hi ? _mm_loadu_ps(hi + 4) : z, 1);
        }
        transpose8_halves(r);
      } else {
        for (int i = 0; i < 8; i++)
          r[i] = i < rows ? _mm256_maskload_ps(src + (r0 + i) * rs + k0, kmask) : _mm256_setzero_ps();
        transpose8(r);
      }
      for (int j = 0; j < kn; j++) store_n(dst + (k0 + j) * w + r0, r[j], wn);
    }
  }
}

/* GEMV (cpu_kernels.h), the AVX-512 kernels' scheme 8 lanes wide. Axpy form:
 * four matrix rows per pass over the accumulator chunk (L1), every output a
 * k-ascending FMA chain. Dot form: four rows x two vectors of partial sums
 * (eight FMA chains) per K block. Without them an AVX2 machine ran the
 * generic kernels: 4096x1x4096 1.38x OpenBLAS's time (Zen 3, session 9). */
__attribute__((target("avx2,fma"))) static void gemv_axpy8(int64_t n, int64_t k, const float *m0,
                                                           int64_t ks, const float *x,
                                                           int64_t incx, float *acc) {
  const int64_t nv = n & ~(int64_t)7;
  const __m256i tail = lanes8(n - nv);
  int64_t kk = 0;
  for (; kk + 4 <= k; kk += 4) {
    const float *r0 = m0 + kk * ks, *r1 = r0 + ks, *r2 = r1 + ks, *r3 = r2 + ks;
    const __m256 x0 = _mm256_set1_ps(x[kk * incx]), x1 = _mm256_set1_ps(x[(kk + 1) * incx]);
    const __m256 x2 = _mm256_set1_ps(x[(kk + 2) * incx]), x3 = _mm256_set1_ps(x[(kk + 3) * incx]);
    for (int64_t i = 0; i < nv; i += 8) {
      __m256 a = _mm256_load_ps(acc + i);
      a = _mm256_fmadd_ps(x0, _mm256_loadu_ps(r0 + i), a);
      a = _mm256_fmadd_ps(x1, _mm256_loadu_ps(r1 + i), a);
      a = _mm256_fmadd_ps(x2, _mm256_loadu_ps(r2 + i), a);
      a = _mm256_fmadd_ps(x3, _mm256_loadu_ps(r3 + i), a);
      _mm256_store_ps(acc + i, a);
    }
    if (nv < n) {
      __m256 a = _mm256_load_ps(acc + nv);
      a = _mm256_fmadd_ps(x0, _mm256_maskload_ps(r0 + nv, tail), a);
      a = _mm256_fmadd_ps(x1, _mm256_maskload_ps(r1 + nv, tail), a);
      a = _mm256_fmadd_ps(x2, _mm256_maskload_ps(r2 + nv, tail), a);
      a = _mm256_fmadd_ps(x3, _mm256_maskload_ps(r3 + nv, tail), a);
      _mm256_store_ps(acc + nv, a);
    }
  }
  for (; kk < k; kk++) {
    const float *r0 = m0 + kk * ks;
    const __m256 x0 = _mm256_set1_ps(x[kk * incx]);
    for (int64_t i = 0; i < nv; i += 8)
      _mm256_store_ps(acc + i, _mm256_fmadd_ps(x0, _mm256_loadu_ps(r0 + i), _mm256_load_ps(acc + i)));
    if (nv < n)
      _mm256_store_ps(acc + nv, _mm256_fmadd_ps(x0, _mm256_maskload_ps(r0 + nv, tail),
                                                _mm256_load_ps(acc + nv)));
  }
}

__attribute__((target("avx2,fma"))) static inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/* sum_k xb[k] * row[k] over kn steps (xb contiguous), rows r..r+R-1. */
__attribute__((target("avx2,fma"))) static void gemv_dot8(int64_t rows, int64_t kn,
                                                          const float *m0, int64_t rs,
                                                          const float *xb, float *acc) {
  const int64_t k16 = kn & ~(int64_t)15;
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float *q0 = m0 + r * rs, *q1 = q0 + rs, *q2 = q1 + rs, *q3 = q2 + rs;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0;
    for (int64_t kk = 0; kk < k16; kk += 16) {
      const __m256 xa = _mm256_loadu_ps(xb + kk), xc = _mm256_loadu_ps(xb + kk + 8);
      s0 = _mm256_fmadd_ps(xa, _mm256_loadu_ps(q0 + kk), s0);
      s1 = _mm256_fmadd_ps(xa, _mm256_loadu_ps(q1 + kk), s1);
      s2 = _mm256_fmadd_ps(xa, _mm256_loadu_ps(q2 + kk), s2);
      s3 = _mm256_fmadd_ps(xa, _mm256_loadu_ps(q3 + kk), s3);
      t0 = _mm256_fmadd_ps(xc, _mm256_loadu_ps(q0 + kk + 8), t0);
      t1 = _mm256_fmadd_ps(xc, _mm256_loadu_ps(q1 + kk + 8), t1);
      t2 = _mm256_fmadd_ps(xc, _mm256_loadu_ps(q2 + kk + 8), t2);
      t3 = _mm256_fmadd_ps(xc, _mm256_loadu_ps(q3 + kk + 8), t3);
    }
    for (int64_t kk = k16; kk < kn; kk += 8) {
      const __m256i m = lanes8(kn - kk);
      const __m256 xa = _mm256_maskload_ps(xb + kk, m);
      s0 = _mm256_fmadd_ps(xa, _mm256_maskload_ps(q0 + kk, m), s0);
      s1 = _mm256_fmadd_ps(xa, _mm256_maskload_ps(q1 + kk, m), s1);
      s2 = _mm256_fmadd_ps(xa, _mm256_maskload_ps(q2 + kk, m), s2);
      s3 = _mm256_fmadd_ps(xa, _mm256_maskload_ps(q3 + kk, m), s3);
    }
    acc[r] += hsum8(_mm256_add_ps(s0, t0));
    acc[r + 1] += hsum8(_mm256_add_ps(s1, t1));
    acc[r + 2] += hsum8(_mm256_add_ps(s2, t2));
    acc[r + 3] += hsum8(_mm256_add_ps(s3, t3));
  }
  for (; r < rows; r++) {
    const float *q0 = m0 + r * rs;
    __m256 s0 = _mm256_setzero_ps();
    for (int64_t kk = 0; kk < kn; kk += 8) {
      const __m256i m = lanes8(kn - kk);
      s0 = _mm256_fmadd_ps(_mm256_maskload_ps(xb + kk, m), _mm256_maskload_ps(q0 + kk, m), s0);
    }
    acc[r] += hsum8(s0);
  }
}

void tsr__cpu_gemv_avx2(int64_t len, int64_t k, const float *mat, int64_t rs, int64_t ks,
                        const float *x, int64_t incx, float *y, int64_t incy, float alpha,
                        float beta) {
  tsr__cpu_gemv_drive(len, k, mat, rs, ks, x, incx, y, incy, alpha, beta, gemv_axpy8, gemv_dot8);
}
#else
const tsr__cpu_kernel tsr__cpu_kernels_avx2[] = {{TSR_ISA_AVX2, 0, 0, NULL}};
void tsr__cpu_pack_avx2(int64_t kc, int mr, int w, const float *src, int64_t rs, int64_t ks,
                        float *dst) {
  tsr__cpu_pack_generic(kc, mr, w, src, rs, ks, dst);
}
void tsr__cpu_gemv_avx2(int64_t len, int64_t k, const float *mat, int64_t rs, int64_t ks,
                        const float *x, int64_t incx, float *y, int64_t incy, float alpha,
                        float beta) {
  tsr__cpu_gemv_generic(len, k, mat, rs, ks, x, incx, y, incy, alpha, beta);
}
void tsr__cpu_direct_avx2(int64_t kc, int mr, int nr, const float *a, int64_t ars, int64_t aks,
                          const float *b, int64_t ldb, float *c, int64_t ldc, float alpha,
                          float beta) {
  tsr__cpu_direct_generic(kc, mr, nr, a, ars, aks, b, ldb, c, ldc, alpha, beta);
}
#endif
