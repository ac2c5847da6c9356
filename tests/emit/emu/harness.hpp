// Host emulation of the device layer of tessera's generated kernels, for
// tests/emit only. The test strips the source's "// tsr:ptx-begin" ..
// "// tsr:ptx-end" section and compiles the rest against these definitions
// with AddressSanitizer: every CTA runs as real threads (one per CUDA thread)
// with a pthread barrier for __syncthreads, cp.async lands either at issue or
// only at the matching cp.async.wait_group (EMU_DEFERRED), and mma.sync
// exchanges fragments through a per-warp barrier using the PTX ISA fragment
// layout of m16n8k8 .tf32. wgmma.mma_async (the wgmma families) is emulated
// per thread from the shared-memory matrix descriptors the kernel builds,
// executed at the matching wgmma.wait_group (see emu_wg_run). Shared memory
// is malloc'd at exactly the launch size and NaN-poisoned, so out-of-range or
// unwritten shared reads show.
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <map>
#include <memory>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __grid_constant__
/* a CTA's threads share it; CTAs run one after another (each writes before it reads) */
#define __shared__ static

struct alignas(16) float4 { float x, y, z, w; };
static inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
struct alignas(8) float2 { float x, y; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };
struct emu_dim { unsigned x, y, z; };
static thread_local emu_dim threadIdx, blockIdx;
static emu_dim gridDim; /* set by the launcher before a launch's threads start */
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
static void emu_commit_note(); /* below: the LDGSTS producer's refills, counted */
static inline void tsr_cp_commit() {
  emu_commit_note();
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
/* __shfl_xor_sync(0xffffffff, v, m) (mma=gemv's butterfly): every lane of the
 * warp takes part; lane l gets lane l ^ m's value. */
static inline float tsr_shfl_xor(float v, int m) {
  const int lane = (int)threadIdx.x & 31, w = (int)threadIdx.x >> 5;
  if (m < 1 || m > 31) emu_die("shuffle lane mask out of range");
  emu_warp_x &x = emu_wx[emu_xchg++ & 1][w];
  x.a[lane][0] = v;
  pthread_barrier_wait(&emu_warp_bar[w]);
  return x.a[lane ^ m][0];
}
/* lazy=P (docs/emit.md "Lazy pack"): the claim flags as C++ atomics (CTAs
 * run one after another here, so a piece is claimed by the first CTA of its
 * tile row and found ready by the others; a wait that never ends is a bug),
 * the warp's ballot and its __syncwarp */
static inline unsigned tsr_ld_acquire(const unsigned *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void tsr_st_release(unsigned *p, unsigned v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline unsigned tsr_cas(unsigned *p, unsigned cmp, unsigned v) {
  __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return cmp;
}
static inline void tsr_proxy_fence_global() {}
static inline void tsr_fence_gpu() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
/* a wait for a piece: a millisecond a nap, failing after two seconds. CTAs run
 * one after another here, so a piece another CTA claimed is released before
 * anyone waits for it: a correct kernel never naps. */
static inline void tsr_nap() {
  static thread_local long naps;
  if (++naps > 2000) emu_die("lazy: a wait for a claimed piece of A timed out");
  struct timespec ts = {0, 1000000};
  nanosleep(&ts, nullptr);
}
static inline void tsr_stuck() { emu_die("lazy: a claimed piece of A was never released"); }
/* lazyk: griddepcontrol.launch_dependents. Kernels run one after another
 * here: the pack kernel ends before the main kernel starts, so the main
 * kernel finds every piece ready (a piece the pack kernel did not release
 * fails the wait) */
static inline void tsr_launch_dependents() {}
static inline void tsr_warp_sync() { pthread_barrier_wait(&emu_warp_bar[threadIdx.x >> 5]); }
static inline unsigned tsr_ld_relaxed(const unsigned *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
/* __ballot_sync(0xffffffff, p): every lane of the warp takes part */
static inline unsigned tsr_ballot(unsigned p) {
  const int lane = (int)threadIdx.x & 31, w = (int)threadIdx.x >> 5;
  emu_warp_x &x = emu_wx[emu_xchg++ & 1][w];
  x.a[lane][0] = p != 0u ? 1.0f : 0.0f;
  pthread_barrier_wait(&emu_warp_bar[w]);
  unsigned m = 0;
  for (int l = 0; l < 32; l++)
    if (x.a[l][0] != 0.0f) m |= 1u << l;
  return m;
}
static inline int tsr_lowest(unsigned m) { return m ? __builtin_ctz(m) : -1; }
static inline void tsr_ldsm4(unsigned (&r)[4], const float *p) { emu_ldsm(r, p, 4); }
static inline void tsr_ldsm2(unsigned (&r)[2], const float *p) { emu_ldsm(r, p, 2); }
/* 32-bit shared-window addresses (cvta.to.shared): byte offsets into the
 * dynamic shared memory */
static inline unsigned tsr_smem_addr(const void *p) {
  if ((const char *)p < (const char *)emu_smem || (const char *)p > (const char *)emu_smem + emu_smem_bytes)
    emu_die("shared-window address of a pointer outside dynamic shared memory");
  return (unsigned)((const char *)p - (const char *)emu_smem);
}
static inline const float *emu_shared(unsigned a) {
  return (const float *)((const char *)emu_smem + a);
}
/* kloop=2: cp.async to a shared-window byte address, and at constant byte
 * offsets from one (shared) and from a global pointer */
static inline void tsr_cps16(unsigned d, const float *s, int b) { emu_cp((float *)emu_shared(d), s, 16, b); }
static inline void tsr_cps8(unsigned d, const float *s, int b) { emu_cp((float *)emu_shared(d), s, 8, b); }
static inline void tsr_cps4(unsigned d, const float *s, int b) { emu_cp((float *)emu_shared(d), s, 4, b); }
template <long long DOFF, long long SOFF> static inline void emu_cpo(unsigned d, const float *s, int size) {
  emu_cp((float *)emu_shared(d + (unsigned)DOFF), (const float *)((const char *)s + SOFF), size, size);
}
template <long long DOFF, long long SOFF> static inline void tsr_cpo16(unsigned d, const float *s) { emu_cpo<DOFF, SOFF>(d, s, 16); }
template <long long DOFF, long long SOFF> static inline void tsr_cpo8(unsigned d, const float *s) { emu_cpo<DOFF, SOFF>(d, s, 8); }
template <long long DOFF, long long SOFF> static inline void tsr_cpo4(unsigned d, const float *s) { emu_cpo<DOFF, SOFF>(d, s, 4); }
static inline int tsr_tid() { return (int)threadIdx.x; }
static inline void tsr_ldsm4s(unsigned (&r)[4], unsigned a) { emu_ldsm(r, emu_shared(a), 4); }
static inline void tsr_ldsm2s(unsigned (&r)[2], unsigned a) { emu_ldsm(r, emu_shared(a), 2); }

/* ---- wgmma.mma_async (PTX ISA, "Asynchronous Warpgroup Level Matrix
 * Multiply-Accumulate") ------------------------------------------------------
 * Each thread of a warpgroup computes its own part of D from the matrix
 * descriptors the kernel built (no exchange: the descriptors are warpgroup-
 * uniform). Decoding (PTX ISA "Matrix Descriptor Format"): start address >> 4
 * in bits 0-13, leading byte offset >> 4 in 16-29, stride byte offset >> 4 in
 * 32-45, base offset in 49-51, swizzle mode in 62-63; only the no-swizzle
 * (interleave) mode is emulated, and any bit outside the fields fails. K-major
 * no-swizzle layout: element (row x, k) of the 64 x 8 A (N x 8 B) operand at
 * start + (x / 8) * SBO + (k / 4) * LBO + (x % 8) * 16 + (k % 4) * 4 bytes.
 * D fragment (m64nNk8, f32): register 4j + r of lane l in warp q of the
 * warpgroup holds row 16q + l/4 + 8 (r >> 1), column 8j + 2 (l % 4) + (r & 1).
 * Asynchrony: an issued MMA records its operands as they are at issue; it is
 * executed at the wait_group that completes its commit group, and fails if
 * any operand element changed in shared memory in between (the kernel let a
 * copy or a split overwrite a tile still being read). An MMA without a
 * wgmma.fence since the thread's last wait_group (when it may have touched
 * the accumulators) fails too. Operands must be TF32 (low 13 bits zero). */
struct emu_wg_op {
  float *d;
  int *di; /* .s8: the int32 accumulators (d == nullptr) */
  int nr, scale_d;
  unsigned long long da, db;
  std::vector<float> a, b; /* this thread's operand elements at issue: a[2][8], b[nr/4*2][8] */
  std::vector<signed char> a8, b8; /* .s8: a[2][32], b[nr/4*2][32] */
};
static thread_local std::vector<std::vector<emu_wg_op>> emu_wg_groups;
static thread_local std::vector<emu_wg_op> emu_wg_open;
static thread_local int emu_wg_fenced;

static const float *emu_wg_elem(unsigned long long desc, int x, int k, const char *what) {
  const unsigned start = (unsigned)(desc & 0x3fffu) << 4;
  const unsigned lbo = (unsigned)((desc >> 16) & 0x3fffu) << 4;
  const unsigned sbo = (unsigned)((desc >> 32) & 0x3fffu) << 4;
  const size_t off = (size_t)start + (size_t)(x / 8) * sbo + (size_t)(k / 4) * lbo +
                     (size_t)(x % 8) * 16 + (size_t)(k % 4) * 4;
  if (off + 4 > emu_smem_bytes) {
    fprintf(stderr, "emu: wgmma %s element (%d, %d) at byte %zu, shared memory %zu bytes\n", what,
            x, k, off, emu_smem_bytes);
    emu_die("wgmma operand outside dynamic shared memory");
  }
  return (const float *)((const char *)emu_smem + off);
}
static void emu_wg_desc_check(unsigned long long d) {
  /* bits 14-15, 30-31, 46-48, 52-61 unused; base offset (49-51) and swizzle
   * (62-63) must be 0 for the no-swizzle layout */
  const unsigned long long used = 0x3fffull | (0x3fffull << 16) | (0x3fffull << 32);
  if ((d >> 62) != 0) emu_die("wgmma descriptor with a swizzle mode (only none is emulated)");
  if ((d >> 49) & 7) emu_die("wgmma descriptor with a base offset");
  if (d & ~used) emu_die("wgmma descriptor has bits set outside its fields");
}
/* this thread's operand elements: A rows (2 of them), B columns (nr / 2 of them) */
static void emu_wg_gather(const emu_wg_op &o, std::vector<float> &a, std::vector<float> &b) {
  const int lane = (int)threadIdx.x & 31, q = ((int)threadIdx.x >> 5) & 3;
  const int gq = lane >> 2, tq = lane & 3;
  a.resize(16);
  b.resize((size_t)o.nr / 2 * 8);
  for (int h = 0; h < 2; h++)
    for (int k = 0; k < 8; k++) a[h * 8 + k] = *emu_wg_elem(o.da, 16 * q + gq + 8 * h, k, "A");
  for (int j = 0; j < o.nr / 4; j++)
    for (int e = 0; e < 2; e++)
      for (int k = 0; k < 8; k++)
        b[(size_t)(j * 2 + e) * 8 + k] = *emu_wg_elem(o.db, 8 * j + 2 * tq + e, k, "B");
}
template <int NR>
static void tsr_wgmma(float (&d)[NR], unsigned long long da, unsigned long long db, int scale_d) {
  static_assert(NR % 4 == 0 && NR >= 4 && NR <= 128, "m64nNk8: N/2 registers, N = 8..256");
  if (!emu_wg_fenced) emu_die("wgmma.mma_async without a wgmma.fence since the last wait_group");
  emu_wg_desc_check(da);
  emu_wg_desc_check(db);
  emu_wg_op o;
  o.d = d;
  o.di = nullptr;
  o.nr = NR;
  o.scale_d = scale_d;
  o.da = da;
  o.db = db;
  emu_wg_gather(o, o.a, o.b);
  for (float v : o.a)
    if (emu_bits(v) & 0x1fffu) emu_die("wgmma A operand is not TF32");
  for (float v : o.b)
    if (emu_bits(v) & 0x1fffu) emu_die("wgmma B operand is not TF32");
  emu_wg_open.push_back(std::move(o));
}
/* .s8 (m64nNk32, PTX ISA "Register Fragments" as .f32 for D): element (x, k)
 * of a k-major no-swizzle operand at start + (x / 8) * SBO + (k / 16) * LBO +
 * (x % 8) * 16 + k % 16 bytes */
static const signed char *emu_wg_elem8(unsigned long long desc, int x, int k, const char *what) {
  const unsigned start = (unsigned)(desc & 0x3fffu) << 4;
  const unsigned lbo = (unsigned)((desc >> 16) & 0x3fffu) << 4;
  const unsigned sbo = (unsigned)((desc >> 32) & 0x3fffu) << 4;
  const size_t off = (size_t)start + (size_t)(x / 8) * sbo + (size_t)(k / 16) * lbo +
                     (size_t)(x % 8) * 16 + (size_t)(k % 16);
  if (off + 1 > emu_smem_bytes) {
    fprintf(stderr, "emu: wgmma .s8 %s element (%d, %d) at byte %zu, shared memory %zu bytes\n", what,
            x, k, off, emu_smem_bytes);
    emu_die("wgmma operand outside dynamic shared memory");
  }
  return (const signed char *)emu_smem + off;
}
static void emu_wg_gather8(const emu_wg_op &o, std::vector<signed char> &a, std::vector<signed char> &b) {
  const int lane = (int)threadIdx.x & 31, q = ((int)threadIdx.x >> 5) & 3;
  const int gq = lane >> 2, tq = lane & 3;
  a.resize(64);
  b.resize((size_t)o.nr / 2 * 32);
  for (int h = 0; h < 2; h++)
    for (int k = 0; k < 32; k++) a[h * 32 + k] = *emu_wg_elem8(o.da, 16 * q + gq + 8 * h, k, "A");
  for (int j = 0; j < o.nr / 4; j++)
    for (int e = 0; e < 2; e++)
      for (int k = 0; k < 32; k++)
        b[(size_t)(j * 2 + e) * 32 + k] = *emu_wg_elem8(o.db, 8 * j + 2 * tq + e, k, "B");
}
template <int NR>
static void tsr_wgmma_s8(int (&d)[NR], unsigned long long da, unsigned long long db) {
  static_assert(NR % 8 == 0 && NR >= 8 && NR <= 128, "m64nNk32 .s8: N/2 registers, N = 16..256 by 16");
  if (!emu_wg_fenced) emu_die("wgmma.mma_async without a wgmma.fence since the last wait_group");
  emu_wg_desc_check(da);
  emu_wg_desc_check(db);
  emu_wg_op o;
  o.d = nullptr;
  o.di = d;
  o.nr = NR;
  o.scale_d = 1;
  o.da = da;
  o.db = db;
  emu_wg_gather8(o, o.a8, o.b8);
  emu_wg_open.push_back(std::move(o));
}
static void emu_wg_run(const emu_wg_op &o) {
  if (o.di) { /* .s8: exact int32 sums (the kernel keeps them below 2^31) */
    std::vector<signed char> a, b;
    emu_wg_gather8(o, a, b);
    if (a != o.a8 || b != o.b8)
      emu_die("shared memory under an in-flight wgmma changed before its wait_group");
    for (int i = 0; i < o.nr; i++) {
      const int j = i / 4, r = i % 4, h = r >> 1, e = r & 1;
      long long t = o.di[i];
      for (int k = 0; k < 32; k++) t += (long long)a[h * 32 + k] * (long long)b[(size_t)(j * 2 + e) * 32 + k];
      if (t > 2147483647ll || t < -2147483648ll) emu_die("wgmma .s32 accumulator overflow");
      o.di[i] = (int)t;
    }
    return;
  }
  std::vector<float> a, b;
  emu_wg_gather(o, a, b);
  if (memcmp(a.data(), o.a.data(), a.size() * 4) != 0 || memcmp(b.data(), o.b.data(), b.size() * 4) != 0)
    emu_die("shared memory under an in-flight wgmma changed before its wait_group");
  for (int i = 0; i < o.nr; i++) {
    const int j = i / 4, r = i % 4, h = r >> 1, e = r & 1;
    double t[9];
    for (int k = 0; k < 8; k++)
      t[k] = (double)a[h * 8 + k] * (double)b[(size_t)(j * 2 + e) * 8 + k]; /* exact */
    t[8] = o.scale_d ? (double)o.d[i] : 0.0;
    o.d[i] = emu_mma_sum(t);
  }
}
static inline void tsr_wg_fence() { emu_wg_fenced = 1; }
static inline void tsr_wg_commit() {
  emu_wg_groups.push_back(std::move(emu_wg_open));
  emu_wg_open.clear();
}
template <int PENDING> static inline void tsr_wg_wait() {
  while ((int)emu_wg_groups.size() > PENDING) {
    for (const emu_wg_op &o : emu_wg_groups.front()) emu_wg_run(o);
    emu_wg_groups.erase(emu_wg_groups.begin());
  }
  emu_wg_fenced = 0;
}

/* ---- mbarrier, named barrier, setmaxnreg (split=producer) ------------------
 * An mbarrier is 8 bytes of shared memory: word 0 the arrivals still missing
 * in the current phase, word 1 a tag, the expected count and the phase
 * parity (bit 0). All operations hold one mutex, which also orders the
 * threads' shared-memory accesses around them (arrive = release, wait =
 * acquire). A wait that does not complete within EMU_MBAR_TIMEOUT seconds
 * (a deadlock: a missing arrive, a wrong parity) fails the run. Init on an
 * address used before the CTA's barrier, an arrive beyond the count and any
 * use of an uninitialized (NaN-poisoned) barrier fail too. */
#define EMU_MBAR_TAG 0xB0000000u
#ifndef EMU_MBAR_TIMEOUT
#define EMU_MBAR_TIMEOUT 120
#endif
static pthread_mutex_t emu_mbar_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t emu_mbar_cv = PTHREAD_COND_INITIALIZER;
static int emu_tma_issued; /* a TMA copy issued (under emu_mbar_mu): see tsr_proxy_fence */
static long long emu_copies; /* bulk and TMA copies issued (under emu_mbar_mu) */
static long long emu_commits; /* cp.async groups committed (under emu_mbar_mu) */
static void emu_commit_note() {
  pthread_mutex_lock(&emu_mbar_mu);
  emu_commits++;
  pthread_cond_broadcast(&emu_mbar_cv); /* an early-free check may wait for it */
  pthread_mutex_unlock(&emu_mbar_mu);
}
static unsigned *emu_mbar(unsigned bar) {
  if (bar % 8 || (size_t)bar + 8 > emu_smem_bytes) emu_die("mbarrier address misaligned or outside shared memory");
  return (unsigned *)((char *)emu_smem + bar);
}
/* Bulk copies (split=producer-bulk) and the transaction count: per mbarrier
 * the bytes still expected in this phase (expect_tx adds, a landed copy
 * subtracts) and, with deferred landing, the copies issued but not landed.
 * A phase completes when its arrivals are in and its count is back at 0.
 * Deferred copies land when a thread waits on the barrier with every
 * arrival in (as late as the hardware may land them); otherwise at issue. */
struct emu_bulk_copy {
  float *dst;
  const float *src;
  unsigned bytes;
  std::shared_ptr<std::vector<float>> hold; /* a TMA box, gathered at issue */
};
struct emu_mbar_tx_state { long long tx; std::vector<emu_bulk_copy> queued; };
static std::map<unsigned, emu_mbar_tx_state> emu_mbar_tx;
static void tsr_mbar_init(unsigned bar, unsigned count) {
  if (count == 0 || count >= (1u << 20)) emu_die("mbarrier count out of range");
  pthread_mutex_lock(&emu_mbar_mu);
  unsigned *w = emu_mbar(bar);
  w[0] = count;
  w[1] = EMU_MBAR_TAG | (count << 1);
  emu_mbar_tx[bar] = emu_mbar_tx_state{0, {}};
  pthread_mutex_unlock(&emu_mbar_mu);
}
static void emu_mbar_check(const unsigned *w) {
  if ((w[1] & 0xF0000000u) != EMU_MBAR_TAG) emu_die("mbarrier used before mbarrier.init");
}
/* (emu_mbar_mu held) complete the phase if its arrivals and bytes are in */
static void emu_mbar_settle(unsigned bar, unsigned *w) {
  emu_mbar_tx_state &t = emu_mbar_tx[bar];
  if (w[0] != 0 || t.tx != 0 || !t.queued.empty()) return;
  w[1] ^= 1u; /* phase complete: flip the parity, re-arm */
  w[0] = (w[1] & 0x0FFFFFFEu) >> 1;
  pthread_cond_broadcast(&emu_mbar_cv);
}
static void emu_mbar_arrive_locked(unsigned bar) {
  unsigned *w = emu_mbar(bar);
  emu_mbar_check(w);
  if (w[0] == 0) emu_die("mbarrier arrive with no arrival pending");
  --w[0];
  emu_mbar_settle(bar, w);
}
static void tsr_mbar_arrive(unsigned bar) {
  pthread_mutex_lock(&emu_mbar_mu);
  emu_mbar_arrive_locked(bar);
  pthread_mutex_unlock(&emu_mbar_mu);
}
static void tsr_mbar_arrive_tx(unsigned bar, unsigned bytes) {
  pthread_mutex_lock(&emu_mbar_mu);
  emu_mbar_check(emu_mbar(bar));
  emu_mbar_tx[bar].tx += bytes;
  emu_mbar_arrive_locked(bar);
  pthread_mutex_unlock(&emu_mbar_mu);
}
/* (emu_mbar_mu held) land one bulk copy: its bytes complete on bar */
static void emu_bulk_land(unsigned bar, const emu_bulk_copy &c) {
  memcpy(c.dst, c.src, c.bytes);
  emu_mbar_tx_state &t = emu_mbar_tx[bar];
  t.tx -= c.bytes;
  if (t.tx < 0) emu_die("bulk copy completes more bytes than the mbarrier expects");
}
/* issue a checked copy on bar: queued (deferred) or landed now */
static void emu_bulk_issue(unsigned bar, const emu_bulk_copy &c) {
  pthread_mutex_lock(&emu_mbar_mu);
  unsigned *w = emu_mbar(bar);
  emu_mbar_check(w);
  emu_copies++;
  if (emu_deferred) {
    emu_mbar_tx[bar].queued.push_back(c);
    pthread_cond_broadcast(&emu_mbar_cv); /* a waiter may land it */
  } else {
    emu_bulk_land(bar, c);
    emu_mbar_settle(bar, w);
    pthread_cond_broadcast(&emu_mbar_cv); /* an early-free check may wait for it */
  }
  pthread_mutex_unlock(&emu_mbar_mu);
}
static void tsr_bulk(float *dst, const float *src, unsigned bytes, unsigned bar) {
  if (bytes == 0 || bytes % 16) emu_die("bulk copy size not a positive multiple of 16 bytes");
  if ((uintptr_t)dst % 16 || (uintptr_t)src % 16) emu_die("misaligned bulk copy address");
  if ((char *)dst < (char *)emu_smem || (char *)dst + bytes > (char *)emu_smem + emu_smem_bytes)
    emu_die("bulk copy destination outside dynamic shared memory");
  emu_bulk_issue(bar, emu_bulk_copy{dst, src, bytes, nullptr});
}
/* TMA tensor copies (split=producer-tma): a map is the tensor's base, its 3D
 * extents {x, rows, batch}, strides in floats {row, batch item} and the box
 * {x, rows}, as the runtime encodes them (the driver reads them from the
 * test's tmaps file). The box at (x, k, z) is gathered at issue, zeros
 * outside the tensor as TMA fills them, and lands like a bulk copy (at issue,
 * or deferred until a waiter finds every arrival in); the shared destination
 * must sit 128 bytes into the dynamic shared memory. */
struct tsr_tmap {
  const float *base;
  long long dim[3], stride[2];
  int box[2];
};
static void tsr_tma_prefetch(const tsr_tmap &) {}
static void tsr_tma(float *dst, const tsr_tmap &m, int x, int k, int z, unsigned bar) {
  if (!m.base || m.box[0] <= 0 || m.box[1] <= 0 || m.box[0] > 256 || m.box[1] > 256 ||
      m.box[0] % 4)
    emu_die("TMA box outside 1..256 or its rows not 16-byte multiples");
  const unsigned bytes = 4u * (unsigned)m.box[0] * (unsigned)m.box[1];
  if (((char *)dst - (char *)emu_smem) % 128)
    emu_die("TMA destination not 128-byte aligned in shared memory");
  if ((char *)dst < (char *)emu_smem || (char *)dst + bytes > (char *)emu_smem + emu_smem_bytes)
    emu_die("TMA destination outside dynamic shared memory");
  pthread_mutex_lock(&emu_mbar_mu);
  emu_tma_issued = 1;
  pthread_mutex_unlock(&emu_mbar_mu);
  auto box = std::make_shared<std::vector<float>>((size_t)m.box[0] * (size_t)m.box[1], 0.0f);
  for (int r = 0; r < m.box[1]; r++)
    for (int c = 0; c < m.box[0]; c++) {
      long long xx = (long long)x + c, kk = (long long)k + r;
      if (xx >= 0 && xx < m.dim[0] && kk >= 0 && kk < m.dim[1] && z >= 0 && z < m.dim[2])
        (*box)[(size_t)r * (size_t)m.box[0] + (size_t)c] = m.base[z * m.stride[1] + kk * m.stride[0] + xx];
    }
  emu_bulk_issue(bar, emu_bulk_copy{dst, box->data(), bytes, box});
}
/* pelect=1: elect.sync over the whole warp (every lane takes part, with the
 * same operands: they must be warp-uniform; the maps compared by value, a
 * kernel parameter being each emulated thread's own copy), then the elected
 * lane (0) arrives expecting the bytes and issues the two boxes. Two argument
 * buffers used alternately, as the fragment exchanges use theirs. */
struct emu_elect_args {
  unsigned bar, bytes, da, db;
  const tsr_tmap *ma, *mb;
  int xa, ka, xb, kb, z;
};
static emu_elect_args emu_ea[2][32][32];
static void tsr_tma2_elect(unsigned bar, unsigned bytes, unsigned da, const tsr_tmap &ma, int xa,
                           int ka, unsigned db, const tsr_tmap &mb, int xb, int kb, int z) {
  const int lane = (int)threadIdx.x & 31, w = (int)threadIdx.x >> 5;
  emu_elect_args(&a)[32] = emu_ea[emu_xchg++ & 1][w];
  a[lane] = emu_elect_args{bar, bytes, da, db, &ma, &mb, xa, ka, xb, kb, z};
  pthread_barrier_wait(&emu_warp_bar[w]);
  if (lane != 0) return;
  for (int l = 1; l < 32; l++)
    if (a[l].bar != bar || a[l].bytes != bytes || a[l].da != da || a[l].db != db ||
        memcmp(a[l].ma, &ma, sizeof ma) || memcmp(a[l].mb, &mb, sizeof mb) || a[l].xa != xa || a[l].ka != ka || a[l].xb != xb ||
        a[l].kb != kb || a[l].z != z)
      emu_die("elect.sync TMA operands differ between the lanes of a warp");
  tsr_mbar_arrive_tx(bar, bytes);
  tsr_tma((float *)emu_shared(da), ma, xa, ka, z, bar);
  tsr_tma((float *)emu_shared(db), mb, xb, kb, z, bar);
}
/* (emu_mbar_mu held) every arrival in: the deferred copies land and the
 * phase settles; false when there is nothing to land */
static bool emu_mbar_land_deferred(unsigned bar, unsigned *w) {
  emu_mbar_tx_state &t = emu_mbar_tx[bar];
  if (w[0] != 0 || t.queued.empty()) return false;
  for (const emu_bulk_copy &c : t.queued) emu_bulk_land(bar, c);
  t.queued.clear();
  emu_mbar_settle(bar, w);
  return true;
}
/* try_wait.parity P succeeds once the phase of parity P has completed, i.e.
 * while the current phase's parity differs from P */
static void tsr_mbar_wait(unsigned bar, unsigned parity) {
  static const char *env = getenv("TSR_EMU_MBAR_TIMEOUT"); /* seconds; tests of deadlocks */
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += env && atoi(env) > 0 ? atoi(env) : EMU_MBAR_TIMEOUT;
  pthread_mutex_lock(&emu_mbar_mu);
  unsigned *w = emu_mbar(bar);
  emu_mbar_check(w);
  while ((w[1] & 1u) == (parity & 1u)) {
    if (emu_mbar_land_deferred(bar, w)) continue;
    if (pthread_cond_timedwait(&emu_mbar_cv, &emu_mbar_mu, &dl) != 0)
      emu_die("mbarrier wait timed out (deadlock: a missing arrive or a wrong parity)");
  }
  pthread_mutex_unlock(&emu_mbar_mu);
}
/* test_wait.parity P: the same condition as tsr_mbar_wait's, without blocking
 * (deferred copies land once every arrival is in, as a waiter would) */
static bool tsr_mbar_test(unsigned bar, unsigned parity) {
  pthread_mutex_lock(&emu_mbar_mu);
  unsigned *w = emu_mbar(bar);
  emu_mbar_check(w);
  if ((w[1] & 1u) == (parity & 1u)) emu_mbar_land_deferred(bar, w);
  const bool done = (w[1] & 1u) != (parity & 1u);
  pthread_mutex_unlock(&emu_mbar_mu);
  return done;
}
/* Named barriers 1..15 with a thread count (bar.sync / bar.arrive id, count;
 * the FFMA producer's slot-free barriers): a barrier completes when count
 * threads have arrived, releasing the waiters of that generation; arrive does
 * not block. Every participant must name the same count, a wait that does not
 * complete within the timeout fails the run (a deadlock), and a CTA must not
 * end with arrivals pending (emu_cta_end). */
struct emu_nbar_state {
  unsigned count, arrived, gen;
  long long copies_at_done, commits_at_done;
  unsigned syncers, need; /* this generation's waiting threads; the last one's at its end */
};
static emu_nbar_state emu_nbar[16];
/* The cross-proxy write-after-read of the FFMA TMA rings (PTX ISA
 * "Proxies"): consumers read a slot with ld.shared (generic proxy) and free
 * it with bar.arrive; TMA (async proxy) refills it. Once a TMA copy has been
 * issued, every bar.arrive needs a fence.proxy.async by the arriving thread
 * since its previous one (session 30: without it an H100 ran 4096^3 with
 * refilled slots read). The hardware race is not emulated (the mutex orders
 * every access): the check is on the program's fences. */
static thread_local int emu_async_fenced;
static inline void tsr_proxy_fence() { emu_async_fenced = 1; }
static inline void tsr_mbar_init_fence() {}
static void emu_nbar_arrive(unsigned id, unsigned count, int wait) {
  if (id == 0 || id > 15) emu_die("named barrier id outside 1..15");
  if (count == 0 || count % 32) emu_die("named barrier count not a positive multiple of 32");
  static const char *env = getenv("TSR_EMU_MBAR_TIMEOUT");
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += env && atoi(env) > 0 ? atoi(env) : EMU_MBAR_TIMEOUT;
  pthread_mutex_lock(&emu_mbar_mu);
  if (!wait && emu_tma_issued && !emu_async_fenced)
    emu_die("a slot freed for its TMA refill without fence.proxy.async after its reads");
  if (!wait) emu_async_fenced = 0;
  emu_nbar_state &b = emu_nbar[id];
  if (b.arrived == 0) b.count = count;
  else if (b.count != count) emu_die("named barrier used with two thread counts");
  unsigned gen = b.gen;
  if (wait) b.syncers++;
  if (++b.arrived == b.count) {
    b.arrived = 0;
    b.gen++;
    b.copies_at_done = emu_copies;
    b.commits_at_done = emu_commits;
    b.need = b.syncers;
    b.syncers = 0;
    pthread_cond_broadcast(&emu_mbar_cv);
  } else if (wait) {
    while (b.gen == gen)
      if (pthread_cond_timedwait(&emu_mbar_cv, &emu_mbar_mu, &dl) != 0)
        emu_die("named barrier wait timed out (deadlock: arrivals missing)");
  }
  /* A slot freed to its TMA refill (copies landing at issue): the freeing
   * thread goes on only once the slot is free and the next copy issued, the
   * refill's first box landed (the slowest interleaving the hardware
   * allows): a read of the slot after its free then sees the next block's
   * data, and the result is wrong on every run, not on a lucky one. */
  if (!wait && emu_tma_issued && !emu_deferred) {
    while (b.gen == gen || emu_copies <= b.copies_at_done)
      if (pthread_cond_timedwait(&emu_mbar_cv, &emu_mbar_mu, &dl) != 0)
        emu_die("a freed slot was never refilled (an arrive on a slot that is not replaced?)");
  }
  /* The same for the LDGSTS producer's slots (cp.async landing at issue):
   * the freeing thread goes on once every thread that waited on the slot's
   * barrier (the producer warpgroup) has committed a group after it
   * completed, i.e. has copied the whole next block into the slot. */
  if (!wait && !emu_tma_issued && !emu_deferred) {
    while (b.gen == gen || emu_commits < b.commits_at_done + b.need)
      if (pthread_cond_timedwait(&emu_mbar_cv, &emu_mbar_mu, &dl) != 0)
        emu_die("a freed slot was never refilled by the LDGSTS producer (an arrive on a slot "
                "that is not replaced, or no producer waiting on it?)");
  }
  pthread_mutex_unlock(&emu_mbar_mu);
}
static void tsr_bar_sync(unsigned id, unsigned count) { emu_nbar_arrive(id, count, 1); }
static void tsr_bar_arrive(unsigned id, unsigned count) { emu_nbar_arrive(id, count, 0); }
/* krel=2: two slots freed after one fence (two bar.arrive back to back, no
 * shared read between them): one free for the fence check */
static void tsr_bar_arrive2(unsigned id0, unsigned id1, unsigned count) {
  emu_nbar_arrive(id0, count, 0);
  emu_async_fenced = 1; /* the same fence covers the second slot's reads */
  emu_nbar_arrive(id1, count, 0);
}
/* called by the driver once every thread has left a CTA */
static void emu_cta_end() {
  for (unsigned id = 1; id < 16; id++)
    if (emu_nbar[id].arrived) emu_die("CTA ended with arrivals pending on a named barrier");
}
/* bar.sync 1, 128: the producer warpgroup's 128 threads only */
static pthread_barrier_t emu_named_bar;
static void tsr_producer_sync() { pthread_barrier_wait(&emu_named_bar); }
/* bar.sync 1, 128 x WGS: the consumer warpgroups (every thread but the last 128) */
static pthread_barrier_t emu_consumer_bar;
static void tsr_consumer_sync() { pthread_barrier_wait(&emu_consumer_bar); }
static inline void tsr_producer_regs() {}
static inline void tsr_consumer_regs() {}
static inline void tsr_wg_pin(float &) {}
static inline void tsr_wg_pin_i(int &) {}
static inline double tsr_p2d(int e) {
  if (e < -1022 || e > 1023) emu_die("tsr_p2d: exponent outside the normal range");
  return ldexp(1.0, e);
}
/* called by the driver when a thread leaves a kernel */
static void emu_thread_end() {
  if (!emu_wg_open.empty() || !emu_wg_groups.empty())
    emu_die("kernel exited with wgmma operations not waited for");
}
static void emu_thread_begin() {
  emu_wg_groups.clear();
  emu_wg_open.clear();
  emu_wg_fenced = 0;
}
