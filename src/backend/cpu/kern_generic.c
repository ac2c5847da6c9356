/* Portable micro-kernels and packing (plain C, baseline ISA), plus CPU
 * feature detection. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_kernels.h"

/* Highest ISA the backend may use (tests lower it to act as an older CPU). */
static tsr_isa isa_limit = TSR_ISA_AVX512;

void tsr__cpu_isa_limit(tsr_isa max) {
  __atomic_store_n(&isa_limit, max, __ATOMIC_RELAXED);
}

int tsr__cpu_isa_supported(tsr_isa isa) {
  if (isa > __atomic_load_n(&isa_limit, __ATOMIC_RELAXED)) return 0;
  switch (isa) {
    case TSR_ISA_GENERIC: return 1;
#if defined(__x86_64__) || defined(__i386__)
    case TSR_ISA_AVX2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case TSR_ISA_AVX512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f");
#endif
    default: return 0;
  }
}

/* The L3 (cpu_kernels.h): sysfs's level-3 entry of cpu0, read once. */
static uint64_t l3_detected, l3_forced;
static pthread_once_t l3_once = PTHREAD_ONCE_INIT;

static void read_l3(void) {
  l3_detected = TSR__CPU_L3_DEFAULT;
  for (int i = 0; i < 8; i++) {
    char path[96], buf[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (!f) break;
    int level = fgets(buf, sizeof buf, f) ? atoi(buf) : 0;
    fclose(f);
    if (level != 3) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (!(f = fopen(path, "r"))) break;
    if (fgets(buf, sizeof buf, f)) {
      char *end;
      unsigned long long v = strtoull(buf, &end, 10);
      uint64_t unit = *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : 1;
      if (v > 0) l3_detected = (uint64_t)v * unit;
    }
    fclose(f);
    break;
  }
}

uint64_t tsr__cpu_l3_bytes(void) {
  uint64_t forced = __atomic_load_n(&l3_forced, __ATOMIC_RELAXED);
  if (forced) return forced;
  pthread_once(&l3_once, read_l3);
  return l3_detected;
}

void tsr__cpu_l3_override(uint64_t bytes) {
  __atomic_store_n(&l3_forced, bytes, __ATOMIC_RELAXED);
}

void tsr__cpu_pack_generic(int64_t kc, int mr, int w, const float *src, int64_t rs, int64_t ks,
                           float *dst) {
  if (rs == 1) { /* each k-step is a contiguous run of mr source elements */
    for (int64_t k = 0; k < kc; k++) {
      float *d = dst + k * w;
      const float *s = src + k * ks;
      for (int r = 0; r < mr; r++) d[r] = s[r];
      for (int r = mr; r < w; r++) d[r] = 0.0f;
    }
    return;
  }
  /* Transposing: walk k in short blocks so the mr source rows stay in L1. */
  for (int64_t k0 = 0; k0 < kc; k0 += 16) {
    int64_t k1 = k0 + 16 < kc ? k0 + 16 : kc;
    for (int r = 0; r < mr; r++) {
      const float *s = src + r * rs;
      for (int64_t k = k0; k < k1; k++) dst[k * w + r] = s[k * ks];
    }
    for (int r = mr; r < w; r++)
      for (int64_t k = k0; k < k1; k++) dst[k * w + r] = 0.0f;
  }
}

/* acc[MR][NR] over kc steps, then alpha/beta into C. Fixed extents let the
 * compiler keep the tile in registers and vectorize along NR. */
#define TSR_GENERIC_KERNEL(MR, NR)                                                          \
  static void kgen_##MR##x##NR(int64_t kc, const float *restrict ap,                        \
                               const float *restrict bp, float *restrict c, int64_t ldc,    \
                               float alpha, float beta) {                                   \
    float acc[MR][NR];                                                                      \
    memset(acc, 0, sizeof acc);                                                             \
    for (int64_t k = 0; k < kc; k++) {                                                      \
      const float *a = ap + k * MR, *b = bp + k * NR;                                       \
      for (int i = 0; i < MR; i++)                                                          \
        for (int j = 0; j < NR; j++) acc[i][j] += a[i] * b[j];                              \
    }                                                                                       \
    for (int i = 0; i < MR; i++) {                                                          \
      float *cr = c + i * ldc;                                                              \
      if (beta == 0.0f)                                                                     \
        for (int j = 0; j < NR; j++) cr[j] = alpha * acc[i][j];                             \
      else                                                                                  \
        for (int j = 0; j < NR; j++) cr[j] = alpha * acc[i][j] + beta * cr[j];              \
    }                                                                                       \
  }

TSR_GENERIC_KERNEL(4, 4)
TSR_GENERIC_KERNEL(4, 8)
TSR_GENERIC_KERNEL(8, 8)
TSR_GENERIC_KERNEL(4, 16)

const tsr__cpu_kernel tsr__cpu_kernels_generic[] = {
    {TSR_ISA_GENERIC, 4, 8, kgen_4x8},
    {TSR_ISA_GENERIC, 4, 4, kgen_4x4},
    {TSR_ISA_GENERIC, 8, 8, kgen_8x8},
    {TSR_ISA_GENERIC, 4, 16, kgen_4x16},
    {TSR_ISA_GENERIC, 0, 0, NULL},
};

void tsr__cpu_direct_generic(int64_t kc, int mr, int nr, const float *a, int64_t ars,
                             int64_t aks, const float *b, int64_t ldb, float *c, int64_t ldc,
                             float alpha, float beta) {
  float acc[TSR__CPU_DIRECT_GENERIC_TM][TSR__CPU_DIRECT_GENERIC_TN];
  memset(acc, 0, sizeof acc);
  for (int64_t k = 0; k < kc; k++) { /* K steps: one row of op(B) */
    const float *bk = b + k * ldb;
    for (int i = 0; i < mr; i++) {
      const float av = a[i * ars + k * aks];
      for (int j = 0; j < nr; j++) acc[i][j] += av * bk[j];
    }
  }
  for (int i = 0; i < mr; i++) {
    float *cr = c + i * ldc;
    if (beta == 0.0f)
      for (int j = 0; j < nr; j++) cr[j] = alpha * acc[i][j];
    else
      for (int j = 0; j < nr; j++) cr[j] = alpha * acc[i][j] + beta * cr[j];
  }
}

/* Portable GEMV (cpu_kernels.h): the same orders as the AVX-512 one, one
 * lane. */
void tsr__cpu_gemv_generic(int64_t len, int64_t k, const float *mat, int64_t rs, int64_t ks,
                           const float *x, int64_t incx, float *y, int64_t incy, float alpha,
                           float beta) {
  float acc[TSR__CPU_GEMV_CHUNK], blk[TSR__CPU_GEMV_CHUNK];
  for (int64_t i0 = 0; i0 < len; i0 += TSR__CPU_GEMV_CHUNK) {
    const int64_t n = len - i0 < TSR__CPU_GEMV_CHUNK ? len - i0 : TSR__CPU_GEMV_CHUNK;
    const float *m0 = mat + i0 * rs;
    for (int64_t i = 0; i < n; i++) acc[i] = 0.0f;
    if (rs == 1) { /* axpy: k-ascending per output inside each K block */
      for (int64_t k0 = 0; k0 < k; k0 += TSR__CPU_GEMV_AXPY_KB) {
        const int64_t k1 = k - k0 < TSR__CPU_GEMV_AXPY_KB ? k : k0 + TSR__CPU_GEMV_AXPY_KB;
        for (int64_t i = 0; i < n; i++) blk[i] = 0.0f;
        for (int64_t kk = k0; kk < k1; kk++) {
          const float xv = x[kk * incx], *row = m0 + kk * ks;
          for (int64_t i = 0; i < n; i++) blk[i] += xv * row[i];
        }
        for (int64_t i = 0; i < n; i++) acc[i] += blk[i];
      }
    } else { /* dot: one partial sum per K block */
      for (int64_t k0 = 0; k0 < k; k0 += TSR__CPU_GEMV_KB) {
        const int64_t kn = k - k0 < TSR__CPU_GEMV_KB ? k - k0 : TSR__CPU_GEMV_KB;
        for (int64_t i = 0; i < n; i++) {
          const float *row = m0 + i * rs + k0;
          float s = 0.0f;
          for (int64_t kk = 0; kk < kn; kk++) s += x[(k0 + kk) * incx] * row[kk];
          acc[i] += s;
        }
      }
    }
    for (int64_t i = 0; i < n; i++) {
      float *yi = y + (i0 + i) * incy;
      *yi = beta == 0.0f ? alpha * acc[i] : alpha * acc[i] + beta * *yi;
    }
  }
}

void tsr__cpu_gemv_drive(int64_t len, int64_t k, const float *mat, int64_t rs, int64_t ks,
                         const float *x, int64_t incx, float *y, int64_t incy, float alpha,
                         float beta, tsr__cpu_gemv_axpy_fn axpy, tsr__cpu_gemv_dot_fn dot) {
  _Alignas(64) float acc[TSR__CPU_GEMV_CHUNK];
  _Alignas(64) float xs[TSR__CPU_GEMV_KB];
  _Alignas(64) float blk[TSR__CPU_GEMV_CHUNK];
  for (int64_t i0 = 0; i0 < len; i0 += TSR__CPU_GEMV_CHUNK) {
    const int64_t n = len - i0 < TSR__CPU_GEMV_CHUNK ? len - i0 : TSR__CPU_GEMV_CHUNK;
    const float *m0 = mat + i0 * rs;
    /* whole 16-float vectors: the kernels' tail vectors read past n */
    const size_t zbytes = (size_t)((n + 15) & ~(int64_t)15) * sizeof *acc;
    memset(acc, 0, zbytes);
    if (rs == 1) { /* K blocks summed apart, then added: (KB + K/KB)·u, not K·u */
      for (int64_t k0 = 0; k0 < k; k0 += TSR__CPU_GEMV_AXPY_KB) {
        const int64_t kn = k - k0 < TSR__CPU_GEMV_AXPY_KB ? k - k0 : TSR__CPU_GEMV_AXPY_KB;
        if (k0 == 0) {
          axpy(n, kn, m0, ks, x, incx, acc);
          continue;
        }
        memset(blk, 0, zbytes);
        axpy(n, kn, m0 + k0 * ks, ks, x + k0 * incx, incx, blk);
        for (int64_t i = 0; i < n; i++) acc[i] += blk[i];
      }
    } else {
      for (int64_t k0 = 0; k0 < k; k0 += TSR__CPU_GEMV_KB) {
        const int64_t kn = k - k0 < TSR__CPU_GEMV_KB ? k - k0 : TSR__CPU_GEMV_KB;
        const float *xb = x + k0 * incx;
        if (incx != 1) { /* gather the strided vector once per block */
          for (int64_t kk = 0; kk < kn; kk++) xs[kk] = xb[kk * incx];
          xb = xs;
        }
        dot(n, kn, m0 + k0, rs, xb, acc);
      }
    }
    for (int64_t i = 0; i < n; i++) {
      float *yi = y + (i0 + i) * incy;
      *yi = beta == 0.0f ? alpha * acc[i] : __builtin_fmaf(beta, *yi, alpha * acc[i]);
    }
  }
}
