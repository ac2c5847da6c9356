// Host emulation of the device layer of tessera's generated kernels, for
// tests/emit only. The test strips the source's "// tsr:ptx-begin" ..
// "// tsr:ptx-end" section and compiles the rest against these definitions
// with AddressSanitizer: every CTA runs as real threads (one per CUDA thread)
// with a pthread barrier for __syncthreads, cp.async lands either at issue or
// only at the matching cp.async.wait_group (EMU_DEFERRED), and mma.sync
// exchanges fragments through a per-warp barrier using the PTX ISA fragment
// layout of m16n8k8 .tf32. Shared memory is malloc'd at exactly the launch
// size and NaN-poisoned, so out-of-range or unwritten shared reads show.
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)

struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct emu_dim { unsigned x, y, z; };
static thread_local emu_dim threadIdx, blockIdx;
static pthread_barrier_t emu_block_bar;
static void __syncthreads() { pthread_barrier_wait(&emu_block_bar); }

static float *emu_smem;
static size_t emu_smem_bytes;
static int emu_deferred;

static void emu_die(const char *what) {
  fprintf(stderr, "emu: %s (block %u,%u,%u thread %u)\n", what, blockIdx.x, blockIdx.y,
          blockIdx.z, threadIdx.x);
  abort();
}

struct emu_copy {
  float *dst;
  const float *src;
  int size, bytes;
};
static thread_local std::vector<std::vector<emu_copy>> emu_groups;
static thread_local std::vector<emu_copy> emu_open;

static void emu_land(const emu_copy &c) {
  if (c.bytes) memcpy(c.dst, c.src, (size_t)c.bytes);
  memset((char *)c.dst + c.bytes, 0, (size_t)(c.size - c.bytes));
}
static void emu_cp(float *dst, const float *src, int size, int bytes) {
  if (bytes < 0 || bytes > size || bytes % 4) emu_die("cp.async src-size out of range");
  if ((uintptr_t)dst % (uintptr_t)size) emu_die("misaligned cp.async destination");
  if (bytes && (uintptr_t)src % (uintptr_t)size) emu_die("misaligned cp.async source");
  if ((char *)dst < (char *)emu_smem || (char *)dst + size > (char *)emu_smem + emu_smem_bytes)
    emu_die("cp.async destination outside dynamic shared memory");
  emu_copy c = {dst, src, size, bytes};
  if (emu_deferred) emu_open.push_back(c);
  else emu_land(c);
}
static inline float *tsr_dynamic_smem() { return emu_smem; }
static inline void tsr_cp16(float *d, const float *s, int b) { emu_cp(d, s, 16, b); }
static inline void tsr_cp8(float *d, const float *s, int b) { emu_cp(d, s, 8, b); }
static inline void tsr_cp4(float *d, const float *s, int b) { emu_cp(d, s, 4, b); }
static inline void tsr_cp_commit() {
  emu_groups.push_back(emu_open);
  emu_open.clear();
}
template <int PENDING> static inline void tsr_cp_wait() {
  /* all but the newest PENDING committed groups complete */
  while ((int)emu_groups.size() > PENDING) {
    for (const emu_copy &c : emu_groups.front()) emu_land(c);
    emu_groups.erase(emu_groups.begin());
  }
}

static inline unsigned emu_bits(float x) {
  unsigned u;
  memcpy(&u, &x, 4);
  return u;
}
static inline float emu_float(unsigned u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}
/* cvt.rna.tf32.f32: round to nearest, ties away from zero, 10 mantissa bits */
static inline unsigned emu_tf32(float x) {
  unsigned u = emu_bits(x);
  if ((u & 0x7f800000u) != 0x7f800000u) u += 0x1000u;
  return u & 0xffffe000u;
}
static inline void tsr_split(float x, unsigned &big, unsigned &small) {
  big = emu_tf32(x);
  small = emu_tf32(x - emu_float(big));
}
static inline void tsr_split_bits(unsigned u, unsigned &big, unsigned &small) {
  tsr_split(emu_float(u), big, small);
}
/* The accumulation of one m16n8k8 (8 exact products + the accumulator).
 * Default: the exact sum rounded once (an ideal tensor core). With
 * TSR_EMU_MMA_RZ: a model of the truncating hardware accumulation (the
 * behaviour that makes chained accumulation drift, docs/accuracy.md): the
 * terms are aligned to the largest one's exponent and cut to 24 significant
 * bits of it (toward zero), summed exactly, and the sum truncated to FP32. */
static float emu_mma_sum(const double (&t)[9]) {
#ifdef TSR_EMU_MMA_RZ
  double big = 0;
  for (int i = 0; i < 9; i++)
    if (!(fabs(t[i]) <= big)) big = fabs(t[i]); /* NaN/Inf propagate below */
  if (!isfinite(big) || big == 0) {
    double s = 0;
    for (int i = 0; i < 9; i++) s += t[i];
    return (float)s;
  }
  int e;
  frexp(big, &e);                       /* big in [2^(e-1), 2^e) */
  const double q = ldexp(1.0, e - 24);  /* 24 bits below the leading one */
  double s = 0;
  for (int i = 0; i < 9; i++) s += trunc(t[i] / q) * q; /* exact */
  float f = (float)s;
  if (fabs((double)f) > fabs(s)) f = nextafterf(f, 0.0f);
  return f;
#else
  double s = 0;
  for (int i = 0; i < 8; i++) s += t[i];
  return (float)(s + t[8]);
#endif
}

struct emu_warp_x {
  float a[32][4], b[32][2];
  const float *rows[32]; /* ldmatrix row addresses */
};
/* Lanes exchange fragments through two buffers per warp, used alternately:
 * a lane writes buffer i again only after passing the next exchange's
 * barrier, which every lane reaches only after reading buffer i, so one
 * barrier per exchange suffices (the barrier wake-ups are most of a run). */
static emu_warp_x emu_wx[2][32];
static pthread_barrier_t emu_warp_bar[32];
static thread_local unsigned emu_xchg; /* this thread's exchanges so far */
static void tsr_mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  const int lane = (int)threadIdx.x & 31, w = (int)threadIdx.x >> 5;
  emu_warp_x &x = emu_wx[emu_xchg++ & 1][w];
  for (int r = 0; r < 4; r++) {
    if (a[r] & 0x1fffu) emu_die("mma A operand is not TF32");
    x.a[lane][r] = emu_float(a[r]);
  }
  for (int r = 0; r < 2; r++) {
    if (b[r] & 0x1fffu) emu_die("mma B operand is not TF32");
    x.b[lane][r] = emu_float(b[r]);
  }
  pthread_barrier_wait(&emu_warp_bar[w]);
  const int gq = lane >> 2, tq = lane & 3;
  for (int r = 0; r < 4; r++) {
    const int row = gq + 8 * (r >> 1), col = 2 * tq + (r & 1);
    double t[9];
    for (int k = 0; k < 8; k++) {
      /* A(row, k): lane (row % 8) * 4 + k % 4, register (row >= 8) + 2 * (k >= 4) */
      double av = x.a[(row % 8) * 4 + k % 4][(row >= 8) + 2 * (k >= 4)];
      /* B(k, col): lane col * 4 + k % 4, register (k >= 4) */
      double bv = x.b[col * 4 + k % 4][k >= 4];
      t[k] = av * bv; /* exact: 11 x 11 significant bits */
    }
    t[8] = (double)d[r];
    d[r] = emu_mma_sum(t);
  }
}
static void tsr_mma0(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  d[0] = d[1] = d[2] = d[3] = 0.0f;
  tsr_mma(d, a, b);
}
/* ldmatrix.sync.aligned.m8n8.{x4,x2}.shared.b16 (PTX ISA, "Warp-level matrix
 * load instruction: ldmatrix"): lanes 8q..8q+7 supply the 16-byte row
 * addresses of matrix q; lane l receives, for each matrix q, the two b16
 * elements 2(l%4), 2(l%4)+1 of row l/4, i.e. 32-bit word l%4 of that row.
 * The addresses of lanes >= 8*nmat are ignored (x2 uses lanes 0-15). */
static void emu_ldsm(unsigned *r, const float *p, int nmat) {
  const int lane = (int)threadIdx.x & 31, w = (int)threadIdx.x >> 5;
  emu_warp_x &x = emu_wx[emu_xchg++ & 1][w];
  if (lane < 8 * nmat) {
    if ((uintptr_t)p % 16) emu_die("misaligned ldmatrix row address");
    if ((const char *)p < (const char *)emu_smem ||
        (const char *)p + 16 > (const char *)emu_smem + emu_smem_bytes)
      emu_die("ldmatrix row outside dynamic shared memory");
  }
  x.rows[lane] = p;
  pthread_barrier_wait(&emu_warp_bar[w]);
  for (int q = 0; q < nmat; q++) r[q] = emu_bits(x.rows[8 * q + lane / 4][lane % 4]);
}
static inline void tsr_ldsm4(unsigned (&r)[4], const float *p) { emu_ldsm(r, p, 4); }
static inline void tsr_ldsm2(unsigned (&r)[2], const float *p) { emu_ldsm(r, p, 2); }
