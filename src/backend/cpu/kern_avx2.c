/* AVX2 + FMA micro-kernels (8-wide along N, tm rows broadcast from packed A).
 * Compiled per function with target attributes so the library still runs
 * on CPUs without AVX2; selected only after feature detection. */
#include "backend/cpu/cpu_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* MR rows × NV vectors of 8; MR*NV accumulators + NV B vectors + 1
 * broadcast must fit the 16 ymm registers. */
#define TSR_AVX2_KERNEL(MR, NV)                                                              \
  __attribute__((target("avx2,fma"))) static void k256_##MR##x##NV(                         \
      int64_t kc, const float *restrict ap, const float *restrict bp, float *restrict c,     \
      int64_t ldc, float alpha, float beta) {                                                \
    __m256 acc[MR][NV];                                                                      \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                    \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = _mm256_setzero_ps(); \
    for (int64_t k = 0; k < kc; k++) {                                                       \
      __m256 bv[NV];                                                                         \
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
#else
const tsr__cpu_kernel tsr__cpu_kernels_avx2[] = {{TSR_ISA_AVX2, 0, 0, NULL}};
#endif
