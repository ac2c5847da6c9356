/* The CUDA C generator: (problem, plan) -> one self-contained translation
 * unit for NVRTC (sm_90, -default-device, C++17, no #include). The source is
 * specialized to the problem's constants: guards are emitted only on the axes
 * whose extents leave a partial tile, vector paths only where the layout
 * allows them. See docs/emit.md for the kernel families and layouts.
 *
 * Everything target-specific (inline PTX, the dynamic shared-memory symbol)
 * sits between the markers "// tsr:ptx-begin" and "// tsr:ptx-end", so that
 * tests can swap it for a host emulation of the same functions. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/assert.h"
#include "core/context.h"
#include "core/hash.h"
#include "emit/emit_internal.h"
#include "emit/ptx_src.h"

/* ---- string builder ------------------------------------------------------ */
typedef tsr__sb sb_t;

void tsr__sb_vput(tsr__sb *s, const char *fmt, va_list ap0) {
  if (s->oom) return;
  for (;;) {
    va_list ap;
    va_copy(ap, ap0);
    size_t room = s->cap - s->len;
    int n = vsnprintf(s->p ? s->p + s->len : NULL, s->p ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      s->oom = 1;
      return;
    }
    if (s->p && (size_t)n < room) {
      s->len += (size_t)n;
      return;
    }
    size_t ncap = s->cap ? s->cap * 2 : 16384;
    while (ncap < s->len + (size_t)n + 1) ncap *= 2;
    char *np = realloc(s->p, ncap);
    if (!np) {
      s->oom = 1;
      return;
    }
    s->p = np;
    s->cap = ncap;
  }
}

static void put(sb_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sb_t *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tsr__sb_vput(s, fmt, ap);
  va_end(ap);
}

/* ---- pieces ---------------------------------------------------------------- */
static void emit_ptx_wg(sb_t *s, const tsr__emit_geo *g);
const char *tsr__emit_idx_t(const tsr__emit_geo *g) { return g->idx64 ? "long long" : "int"; }

static void emit_header(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  char plan[512];
  tsr_plan_format(&g->plan, plan, sizeof plan);
  put(s, "// tessera generated GEMM (src/emit). C = alpha*op(A)*op(B) + beta*C, row-major FP32.\n");
  put(s,
      "// problem: m=%lld n=%lld k=%lld batch=%lld op_a=%c op_b=%c lda=%lld ldb=%lld ldc=%lld "
      "stride_a=%lld stride_b=%lld stride_c=%lld beta_zero=%d\n",
      (long long)p->m, (long long)p->n, (long long)p->k, (long long)p->batch,
      p->op_a == TSR_OP_N ? 'N' : 'T', p->op_b == TSR_OP_N ? 'N' : 'T', (long long)p->lda,
      (long long)p->ldb, (long long)p->ldc, (long long)p->stride_a, (long long)p->stride_b,
      (long long)p->stride_c, p->beta == 0.0f);
  put(s, "// plan: %s\n", plan);
  put(s, "// tails: m=%d n=%d k=%d; offsets: %s\n", g->tail_m, g->tail_n, g->tail_k,
      g->idx64 ? "64-bit" : "32-bit");
  if (g->wg) /* the CUDA backend compiles such a source for sm_90a (module.c) */
    put(s, "// wgmma (sm_90a only): compiled for the architecture-specific target\n"
           "// tsr:arch-specific\n");
  else if (g->ff_setmax) /* setmaxnreg is sm_90a only */
    put(s, "// setmaxnreg (sm_90a only): compiled for the architecture-specific target\n"
           "// tsr:arch-specific\n");
  put(s, "#pragma nv_diag_suppress 177 // constants a specialization leaves unused\n\n");
}

static void emit_constants(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  const tsr_plan *pl = &g->plan;
  put(s, "typedef %s tsr_idx;\n", tsr__emit_idx_t(g));
  put(s, "static constexpr int M = %lld, N = %lld, K = %lld, BATCH = %lld;\n", (long long)p->m,
      (long long)p->n, (long long)p->k, (long long)p->batch);
  /* LDA/SA, LDB/SB: the operand as the main kernel reads it (the packed
   * copy in W when packed; SRC_* then give the user's tensor) */
  put(s, "static constexpr tsr_idx LDA = %lld, LDB = %lld, LDC = %lld;\n", (long long)g->a.ld,
      (long long)g->b.ld, (long long)p->ldc);
  put(s, "static constexpr tsr_idx SA = %lld, SB = %lld, SC = %lld;\n", (long long)g->a.stride,
      (long long)g->b.stride, (long long)p->stride_c);
  for (int i = 0; i < 2; i++) {
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    char U = (char)(o->name - 32);
    if (!o->packed) continue;
    put(s,
        "static constexpr tsr_idx SRC_LD%c = %lld, SRC_S%c = %lld; // the user's %c (op %s)\n"
        "static constexpr long long PR%c = %lld, WOFF_%c = %lld; // packed %c: rows, float offset "
        "in W (%s)\n",
        U, (long long)o->src_ld, U, (long long)o->src_stride, U,
        o->src_kmajor == (o->name == 'a') ? "N" : "T", U, (long long)o->prows, U,
        (long long)o->poff, U, o->kmajor ? "[x][k]" : "[k][x]");
    if (g->presplit)
      put(s, "// split=pack: W + WOFF_%c holds the TF32 big parts of %c (bit patterns)%s\n", U, U,
          o->poff_small ? "," : "");
    if (o->poff_small)
      put(s, "static constexpr long long WOFF_%cS = %lld; // ... the small parts, same layout\n", U,
          (long long)o->poff_small);
  }
  if (pl->lazy && pl->lazyk)
    put(s,
        "// lazy, lazyk: A packed in pieces of LAZY K blocks of a tile row (NPIECE a row) by a\n"
        "// pack kernel of %d CTAs running beside the main kernel; each piece's uint32 flag at\n"
        "// W + WOFF_F says it is ready\n",
        pl->lazyk);
  else if (pl->lazy)
    put(s,
        "// lazy: no prologue packs A; the producer warps pack it in pieces of LAZY K blocks\n"
        "// of a tile row (NPIECE a row), claimed through the uint32 flags at W + WOFF_F\n");
  if (pl->lazy)
    put(s,
        "static constexpr int LAZY = %d, NPIECE = %lld;\n"
        "static constexpr long long WOFF_F = %lld;\n",
        pl->lazy, (long long)g->lazy_np, (long long)g->lazy_off);
  put(s, "static constexpr int BM = %d, BN = %d, BK = %d, WM = %d, WN = %d;\n", pl->bm, pl->bn,
      pl->bk, pl->wm, pl->wn);
  put(s, "static constexpr int WARPS_N = %d, NT = %d, STAGES = %d, SPLITK = %d, NKB = %lld;\n",
      g->warps_n, g->nthreads, pl->stages, pl->splitk, (long long)g->nkb);
  put(s, "static constexpr unsigned GRID_H = %uu, GRID_W = %uu;\n", g->h, g->w);
  if (pl->tailk)
    put(s,
        "// tailk: programs < TAIL_D own whole tiles (the grid's whole waves of %d CTAs), the\n"
        "// last TAIL_R tiles run in TAILK K slices each (partials at W, the reduction sums them)\n"
        "static constexpr unsigned TAIL_D = %lluu, TAIL_R = %lluu;\n"
        "static constexpr int TAILK = %d;\n",
        pl->wave, (unsigned long long)g->tail_d, (unsigned long long)g->tail_r, pl->tailk);
  put(s, "static constexpr int LSA = %d, LSB = %d, A_STAGE = %d, B_STAGE = %d; // floats\n", g->a.ls,
      g->b.ls, g->a.stage_floats, g->b.stage_floats);
  if (g->presplit && g->x3)
    put(s,
        "static constexpr int A_TILE = %d, B_TILE = %d; // floats: a stage holds the big parts' "
        "tile, then the small parts'\n",
        g->a.tile_floats, g->b.tile_floats);
  if (g->wg) {
    put(s,
        "static constexpr int WGS = %d, MW = %d, NC = %d; // warpgroups; per warpgroup: m64 slices, "
        "wgmma chunks of WN columns\n",
        g->wgs, g->mw, g->nc);
    if (g->preg)
      put(s,
          "static constexpr int NVA = (BM * BK / 4 + 127) / 128, NVB = (BN * BK / 4 + 127) / 128; // "
          "split=producer-reg: float4s per producer thread\n");
    else if (g->producer && !g->ppack)
      put(s,
          "static constexpr int RAW = %d; // split=producer: raw K blocks (copies in flight + the one "
          "being split)\n",
          g->raw);
    if (!g->chain)
      put(s,
          "static constexpr int PARTS = %d; // partial-sum buffers: 2 lets step s+1 run while step "
          "s is promoted\n",
          g->parts);
  } else if (g->tf32) {
    put(s, "static constexpr int MI = %d, NI = %d; // 16x8 MMA tiles per warp\n", g->mi, g->ni);
    put(s,
        "static constexpr int VA = %d, VB = %d; // warp-tile row/column permutation widths "
        "(fragment LDS width)\n",
        g->a.fv, g->b.fv);
  }
  else
    put(s, "static constexpr int TM = %d, TN = %d, LR = %d, LC = %d, FM = %d, FN = %d;\n", pl->tm,
        pl->tn, g->lr, g->lc, g->fm, g->fn);
  put(s, "\n");
}

/* The 3xTF32 split of one float (the tensor-core families' PTX section);
 * put through "%s", so no format escapes */
static const char split_source[] =
    "// 3xTF32 split: big = tf32(x), small = tf32(x - big); x - big is exact in FP32.\n"
    "__device__ __forceinline__ void tsr_split(float x, unsigned &big, unsigned &small) {\n"
    "  float bf, r;\n"
    "  asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(big) : \"f\"(x));\n"
    "  asm(\"mov.b32 %0, %1;\" : \"=f\"(bf) : \"r\"(big));\n"
    "  r = x - bf;\n"
    "  asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(small) : \"f\"(r));\n"
    "}\n";

/* The mma.sync family's split (registers straight into mma.sync): the small
 * part's rounding is the same RNA as cvt.rna.tf32 (add half a TF32 ulp to the
 * magnitude's bits) without the mask, because the tensor core reads only the
 * 19 high bits of a .tf32 operand; and without cvt's non-finite guard, which
 * ptxas emulates in 4 instructions on sm_90: a non-finite x has a non-finite
 * big part (guarded by its cvt), so the output is non-finite and recomputed
 * strictly (tsr_fix) whatever the small part holds. 2 instructions instead of
 * 5 per element; the host emulation keeps the masked split (same values
 * where the tensor core truncates, as CUTLASS's round_half_ulp_truncate
 * assumes). */
static const char split_mma_source[] =
    "// 3xTF32 split: big = tf32(x), small = tf32(x - big); x - big is exact in FP32. The small\n"
    "// part is rounded to nearest (away) in the 19 bits the tensor core reads, the low 13 left.\n"
    "__device__ __forceinline__ void tsr_split(float x, unsigned &big, unsigned &small) {\n"
    "  float bf;\n"
    "  asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(big) : \"f\"(x));\n"
    "  asm(\"mov.b32 %0, %1;\" : \"=f\"(bf) : \"r\"(big));\n"
    "  small = __float_as_uint(x - bf) + 0x1000u;\n"
    "}\n";

/* Four values xs[0..3] split into hi[] / lo[] (a non-finite big part gets a
 * zero small part), the big parts packed into h4 (tsr_sts_<c>, tsr_split_tile) */
static const char split4_source[] =
    "    unsigned hi[4], lo[4];\n"
    "#pragma unroll\n"
    "    for (int q = 0; q < 4; ++q) {\n"
    "      tsr_split(xs[q], hi[q], lo[q]);\n"
    "      if ((hi[q] & 0x7f800000u) == 0x7f800000u) lo[q] = 0u;\n"
    "    }\n"
    "    uint4 h4; h4.x = hi[0]; h4.y = hi[1]; h4.z = hi[2]; h4.w = hi[3];\n";

/* The split-K slice's K-block range and output (the partials in W), or the
 * whole K range and C */
static void put_slice_range(sb_t *s, int splitk, int tailk) {
  if (tailk)
    put(s,
        "  // tailk: a tail unit owns K blocks [kb_begin, kb_end) of its slice, a whole tile all\n"
        "  const int slice = part ? (int)(unit / TAIL_R) : 0;\n"
        "  const int kb_begin = part ? (int)(((long long)slice * NKB) / TAILK) : 0;\n"
        "  const int kb_end = part ? (int)(((long long)(slice + 1) * NKB) / TAILK) : NKB;\n"
        "  float *out = part ? W + (tsr_idx)unit * (BM * BN) : C; // the unit's compact partial\n");
  else if (splitk > 1)
    put(s,
        "  // split-K slice blockIdx.y owns K blocks [kb_begin, kb_end) (even split, never empty)\n"
        "  const int slice = (int)blockIdx.y;\n"
        "  const int kb_begin = (int)(((long long)slice * NKB) / SPLITK);\n"
        "  const int kb_end = (int)(((long long)(slice + 1) * NKB) / SPLITK);\n"
        "  float *out = W + (tsr_idx)(bz * SPLITK + slice) * M * N;\n");
  else
    put(s,
        "  const int kb_begin = 0, kb_end = NKB;\n"
        "  float *out = C + (tsr_idx)bz * SC;\n");
}

static void emit_ptx(sb_t *s, const tsr__emit_geo *g) {
  int any_staged = g->a.staged || g->b.staged;
  put(s, "// tsr:ptx-begin\n");
  if (any_staged && g->fftma) /* TMA boxes land at 128-byte aligned addresses */
    put(s,
        "__device__ __forceinline__ float *tsr_dynamic_smem() {\n"
        "  extern __shared__ __align__(128) float4 tsr_smem4[]; // 128-byte aligned base (TMA)\n"
        "  return reinterpret_cast<float *>(tsr_smem4);\n"
        "}\n");
  else if (any_staged) {
    put(s,
        "__device__ __forceinline__ float *tsr_dynamic_smem() {\n"
        "  extern __shared__ float4 tsr_smem4[]; // float4: 16-byte aligned base\n"
        "  return reinterpret_cast<float *>(tsr_smem4);\n"
        "}\n");
  }
  if (any_staged && (g->plan.stages >= 2 || g->a.ldsm || g->b.ldsm))
    put(s,
        "__device__ __forceinline__ unsigned tsr_smem_addr(const void *p) {\n"
        "  unsigned a;\n"
        "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %%1; cvt.u32.u64 %%0, t; }\" : \"=r\"(a) : "
        "\"l\"(p));\n"
        "  return a;\n"
        "}\n");
  if (any_staged && g->plan.stages >= 2) {
    put(s,
        "// Copies bytes (<= size) from src and zero-fills the rest of the size-byte chunk.\n"
        "__device__ __forceinline__ void tsr_cp16(float *dst, const float *src, int bytes) {\n"
        "  asm volatile(\"cp.async.cg.shared.global [%%0], [%%1], 16, %%2;\\n\" :: "
        "\"r\"(tsr_smem_addr(dst)), \"l\"(src), \"r\"(bytes) : \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ void tsr_cp8(float *dst, const float *src, int bytes) {\n"
        "  asm volatile(\"cp.async.ca.shared.global [%%0], [%%1], 8, %%2;\\n\" :: "
        "\"r\"(tsr_smem_addr(dst)), \"l\"(src), \"r\"(bytes) : \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ void tsr_cp4(float *dst, const float *src, int bytes) {\n"
        "  asm volatile(\"cp.async.ca.shared.global [%%0], [%%1], 4, %%2;\\n\" :: "
        "\"r\"(tsr_smem_addr(dst)), \"l\"(src), \"r\"(bytes) : \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ void tsr_cp_commit() {\n"
        "  asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");\n"
        "}\n"
        "template <int PENDING> __device__ __forceinline__ void tsr_cp_wait() {\n"
        "  asm volatile(\"cp.async.wait_group %%0;\\n\" :: \"n\"(PENDING) : \"memory\");\n"
        "}\n");
  }
  if (any_staged && g->plan.kloop >= 2) {
    /* kloop=2: shared addresses stay 32-bit window offsets and each pass of a
     * copy sits at constant byte offsets from the thread's first destination
     * and source, folded into the instruction (no per-copy address math) */
    put(s,
        "// kloop=2: copies to 32-bit shared-window byte addresses; tsr_cpo<size> at the\n"
        "// constant byte offsets DOFF (shared) and SOFF (global) from dst and src.\n");
    static const int sizes[3] = {16, 8, 4};
    for (int i = 0; i < 3; i++)
      put(s,
          "__device__ __forceinline__ void tsr_cps%d(unsigned dst, const float *src, int bytes) {\n"
          "  asm volatile(\"cp.async.%s.shared.global [%%0], [%%1], %d, %%2;\\n\" :: "
          "\"r\"(dst), \"l\"(src), \"r\"(bytes) : \"memory\");\n"
          "}\n"
          "template <long long DOFF, long long SOFF>\n"
          "__device__ __forceinline__ void tsr_cpo%d(unsigned dst, const float *src) {\n"
          "  asm volatile(\"cp.async.%s.shared.global [%%0+%%2], [%%1+%%3], %d;\\n\" :: "
          "\"r\"(dst), \"l\"(src), \"n\"(DOFF), \"n\"(SOFF) : \"memory\");\n"
          "}\n",
          sizes[i], sizes[i] == 16 ? "cg" : "ca", sizes[i], sizes[i], sizes[i] == 16 ? "cg" : "ca",
          sizes[i]);
  }
  if (g->ffprod) {
    put(s, MBAR_SRC);
    if (g->plan.kwait) put(s, MBAR_TEST_SRC);
    if (g->fftma)
      put(s,
          "// split=%s: a CUtensorMap (128 bytes, 128-byte aligned as cuda.h's), by value\n"
          "struct alignas(128) tsr_tmap { unsigned long long v[16]; };\n"
          "// the box at (x, k, batch item z) of map m -> shared dst, completing on mbarrier bar\n"
          "__device__ __forceinline__ void tsr_tma(float *dst, const tsr_tmap &m, int x, int k, int z,\n"
          "                                        unsigned bar) {\n"
          "  asm volatile(\"cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes\"\n"
          "               \" [%%0], [%%1, {%%2, %%3, %%4}], [%%5];\\n\"\n"
          "               :: \"r\"(tsr_smem_addr(dst)), \"l\"(reinterpret_cast<unsigned long long>(&m)),\n"
          "                  \"r\"(x), \"r\"(k), \"r\"(z), \"r\"(bar) : \"memory\");\n"
          "}\n"
          "__device__ __forceinline__ void tsr_tma_prefetch(const tsr_tmap &m) {\n"
          "  asm volatile(\"prefetch.tensormap [%%0];\\n\" :: \"l\"(reinterpret_cast<unsigned long long>(&m)) : \"memory\");\n"
          "}\n"
          "// arrive once and expect `bytes` more of TMA copies in this phase\n"
          "__device__ __forceinline__ void tsr_mbar_arrive_tx(unsigned bar, unsigned bytes) {\n"
          "  asm volatile(\"{\\n.reg .b64 st;\\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%%0], %%1;\\n}\\n\"\n"
          "               :: \"r\"(bar), \"r\"(bytes) : \"memory\");\n"
          "}\n"
          MBAR_INIT_FENCE_SRC
          PROXY_FENCE_SRC,
          g->ffself ? "tma" : "producer-tma");
    /* pelect=1: one asm block for the whole K block, so the converged warp
     * issues it with warp-uniform operands (ptxas keeps them in uniform
     * registers and drops the per-lane loop it wraps around a copy that one
     * lane issues inside a branch of its own) */
    if (g->plan.pelect)
      put(s,
          "// pelect=1: one lane of the converged warp (elect.sync) arrives on bar expecting the\n"
          "// two boxes' bytes and issues both boxes, A's (xa, ka) of ma into shared byte address\n"
          "// da and B's (xb, kb) of mb into db, batch item z\n"
          "__device__ __forceinline__ void tsr_tma2_elect(unsigned bar, unsigned bytes, unsigned da,\n"
          "                                               const tsr_tmap &ma, int xa, int ka,\n"
          "                                               unsigned db, const tsr_tmap &mb, int xb,\n"
          "                                               int kb, int z) {\n"
          "  asm volatile(\"{\\n.reg .pred p;\\n.reg .b64 st;\\nelect.sync _|p, 0xffffffff;\\n\"\n"
          "               \"@p mbarrier.arrive.expect_tx.shared::cta.b64 st, [%%0], %%1;\\n\"\n"
          "               \"@p cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes\"\n"
          "               \" [%%2], [%%3, {%%4, %%5, %%10}], [%%0];\\n\"\n"
          "               \"@p cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes\"\n"
          "               \" [%%6], [%%7, {%%8, %%9, %%10}], [%%0];\\n}\\n\"\n"
          "               :: \"r\"(bar), \"r\"(bytes), \"r\"(da), \"l\"(reinterpret_cast<unsigned long long>(&ma)),\n"
          "                  \"r\"(xa), \"r\"(ka), \"r\"(db), \"l\"(reinterpret_cast<unsigned long long>(&mb)),\n"
          "                  \"r\"(xb), \"r\"(kb), \"r\"(z) : \"memory\");\n"
          "}\n");
    /* the producer runs STAGES - 1 blocks ahead and mostly waits for a slot:
     * in a named barrier it waits without issuing (ncu: spinning in an
     * mbarrier try_wait took ~20 instructions per K block and producer warp,
     * ~4 % of all issue slots, with a suspend-time hint as without) */
    if (g->ffself)
      put(s,
          "// named barriers 1..STAGES, slot s free again: three warps arrive (not waiting), the\n"
          "// one refilling the slot waits (bar.sync blocks without issuing instructions)\n");
    else
      put(s,
          "// named barriers 1..STAGES, slot s free again: the NT consumers arrive (not waiting),\n"
          "// the producer's %d threads wait (bar.sync blocks without issuing instructions)\n",
          g->ff_pthreads);
    put(s,
        "__device__ __forceinline__ void tsr_bar_arrive(unsigned id, unsigned count) {\n"
        "  asm volatile(\"bar.arrive %%0, %%1;\\n\" :: \"r\"(id), \"r\"(count) : \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ void tsr_bar_sync(unsigned id, unsigned count) {\n"
        "  asm volatile(\"bar.sync %%0, %%1;\\n\" :: \"r\"(id), \"r\"(count) : \"memory\");\n"
        "}\n");
    if (g->plan.lazy) /* the claim flags' accesses at GPU scope (docs/emit.md "Lazy pack") */
      put(s,
          "// lazy: the claim flags at GPU scope; generic-proxy global writes ordered with\n"
          "// the async proxy's (TMA) reads of them\n"
          "__device__ __forceinline__ unsigned tsr_ld_acquire(const unsigned *p) {\n"
          "  unsigned v;\n"
          "  asm volatile(\"ld.acquire.gpu.global.u32 %%0, [%%1];\\n\" : \"=r\"(v) : \"l\"(p) : \"memory\");\n"
          "  return v;\n"
          "}\n"
          "__device__ __forceinline__ void tsr_st_release(unsigned *p, unsigned v) {\n"
          "  asm volatile(\"st.release.gpu.global.u32 [%%0], %%1;\\n\" :: \"l\"(p), \"r\"(v) : \"memory\");\n"
          "}\n"
          "__device__ __forceinline__ unsigned tsr_cas(unsigned *p, unsigned cmp, unsigned v) {\n"
          "  return atomicCAS(p, cmp, v);\n"
          "}\n"
          "__device__ __forceinline__ void tsr_proxy_fence_global() {\n"
          "  asm volatile(\"fence.proxy.async.global;\\n\" ::: \"memory\");\n"
          "}\n"
          "__device__ __forceinline__ void tsr_fence_gpu() { __threadfence(); }\n"
          "__device__ __forceinline__ void tsr_nap() { __nanosleep(64); }\n"
          "__device__ __forceinline__ void tsr_warp_sync() { __syncwarp(); }\n"
          "__device__ __forceinline__ unsigned tsr_ld_relaxed(const unsigned *p) {\n"
          "  unsigned v;\n"
          "  asm volatile(\"ld.relaxed.gpu.global.u32 %%0, [%%1];\\n\" : \"=r\"(v) : \"l\"(p) : \"memory\");\n"
          "  return v;\n"
          "}\n"
          "__device__ __forceinline__ unsigned tsr_ballot(unsigned p) { return __ballot_sync(0xffffffffu, p != 0u); }\n"
          "__device__ __forceinline__ int tsr_lowest(unsigned m) { return __ffs(m) - 1; }\n"
          "// a piece never released: a bug (the kernel fails instead of hanging)\n"
          "__device__ __forceinline__ void tsr_stuck() { __trap(); }\n");
    if (g->plan.lazyk) /* the pack kernel: the main kernel may launch (docs/emit.md) */
      put(s,
          "__device__ __forceinline__ void tsr_launch_dependents() {\n"
          "  asm volatile(\"griddepcontrol.launch_dependents;\\n\" ::: \"memory\");\n"
          "}\n");
    if (g->plan.krel == 2) /* one fence, two slots freed (the emulation checks it as one free) */
      put(s,
          "__device__ __forceinline__ void tsr_bar_arrive2(unsigned id0, unsigned id1, unsigned count) {\n"
          "  tsr_bar_arrive(id0, count);\n"
          "  tsr_bar_arrive(id1, count);\n"
          "}\n");
    if (g->ffself)
      put(s,
          "// NT threads, %d blocks an SM: compiled for %d registers each\n"
          "__device__ __forceinline__ void tsr_consumer_regs() {}\n",
          g->ff_blocks, g->ff_regs);
    else if (g->fftma && g->ff_setmax)
      put(s,
          "// NT + 128 threads, %d blocks an SM: compiled for %d registers each; the producer\n"
          "// warpgroup (one warp copies, three leave) gives its surplus to the consumers\n"
          "// (%d x 128 + %d x NT = %d x (NT + 128))\n"
          SETMAXNREG_PAIR_FMT,
          g->ff_blocks, g->ff_regs, g->ff_preg, g->ff_creg, g->ff_regs, g->ff_preg, g->ff_creg);
    else if (g->fftma)
      put(s,
          "// NT + 32 threads, %d blocks an SM: compiled for %d registers each, all alike\n"
          "__device__ __forceinline__ void tsr_producer_regs() {}\n"
          "__device__ __forceinline__ void tsr_consumer_regs() {}\n",
          g->ff_blocks, g->ff_regs);
    else
      put(s,
          "// 256 threads, %d blocks an SM: compiled for %d registers each; the producer\n"
          "// warpgroup gives %d to each consumer thread (%d x 128 + %d x 128 = %d)\n"
          SETMAXNREG_PAIR_FMT,
          g->ff_blocks, g->ff_regs, g->ff_regs - g->ff_preg, g->ff_preg, g->ff_creg,
          256 * g->ff_regs, g->ff_preg, g->ff_creg);
  }
  if (g->wg) put(s, "%s", split_source);
  else if (g->tf32) put(s, "%s", split_mma_source);
  if (g->wg) emit_ptx_wg(s, g);
  if (g->tf32) {
    put(s,
        "__device__ __forceinline__ void tsr_split_bits(unsigned u, unsigned &big, unsigned &small) {\n"
        "  float x;\n"
        "  asm(\"mov.b32 %%0, %%1;\" : \"=f\"(x) : \"r\"(u));\n"
        "  tsr_split(x, big, small);\n"
        "}\n");
    if (g->a.ldsm || g->b.ldsm)
      put(s,
          "// ldmatrix .b16 on 8x4-float blocks: lanes 8q..8q+7 give the 16-byte row\n"
          "// addresses of block q; lane l receives 32-bit word l%%4 of row l/4 of each\n"
          "// block, which is the m16n8k8 .tf32 fragment layout (g = l/4, t = l%%4).\n"
          "__device__ __forceinline__ void tsr_ldsm4(unsigned (&r)[4], const float *p) {\n"
          "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%%0, %%1, %%2, %%3}, [%%4];\\n\"\n"
          "               : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : "
          "\"r\"(tsr_smem_addr(p)));\n"
          "}\n"
          "__device__ __forceinline__ void tsr_ldsm2(unsigned (&r)[2], const float *p) {\n"
          "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%%0, %%1}, [%%2];\\n\"\n"
          "               : \"=r\"(r[0]), \"=r\"(r[1]) : \"r\"(tsr_smem_addr(p)));\n"
          "}\n");
    if (g->presplit)
      put(s,
          "__device__ __forceinline__ int tsr_tid() { // threadIdx.x, never reused from an earlier read\n"
          "  int t;\n"
          "  asm volatile(\"mov.u32 %%0, %%%%tid.x;\" : \"=r\"(t));\n"
          "  return t;\n"
          "}\n");
    if (g->presplit && (g->a.ldsm || g->b.ldsm))
      put(s,
          "// split=pack: the same from a 32-bit shared-window address (32-bit address arithmetic)\n"
          "__device__ __forceinline__ void tsr_ldsm4s(unsigned (&r)[4], unsigned a) {\n"
          "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%%0, %%1, %%2, %%3}, [%%4];\\n\"\n"
          "               : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(a));\n"
          "}\n"
          "__device__ __forceinline__ void tsr_ldsm2s(unsigned (&r)[2], unsigned a) {\n"
          "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%%0, %%1}, [%%2];\\n\"\n"
          "               : \"=r\"(r[0]), \"=r\"(r[1]) : \"r\"(a));\n"
          "}\n");
    /* mma.sync reads and writes registers only: plain asm (not volatile), so
     * the compiler may interleave independent tiles' MMA chains; volatile
     * kept them in source order, and ncu (session 19) put 40 % of the
     * 128x64 tile's stall samples on the chains' fixed-latency waits */
    if (!g->chain)
      put(s,
          "// d = a*b with a zero accumulator: one K step's partial sum (acc=step)\n"
          "__device__ __forceinline__ void tsr_mma0(float (&d)[4], const unsigned (&a)[4],\n"
          "                                         const unsigned (&b)[2]) {\n"
          "  const float z = 0.0f;\n"
          "  asm(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 \"\n"
          "               \"{%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, "
          "{%%10, %%10, %%10, %%10};\\n\"\n"
          "               : \"=f\"(d[0]), \"=f\"(d[1]), \"=f\"(d[2]), \"=f\"(d[3])\n"
          "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), "
          "\"r\"(b[1]), \"f\"(z));\n"
          "}\n");
    put(s,
        "__device__ __forceinline__ void tsr_mma(float (&d)[4], const unsigned (&a)[4],\n"
        "                                        const unsigned (&b)[2]) {\n"
        "  asm(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 \"\n"
        "               \"{%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, "
        "{%%0, %%1, %%2, %%3};\\n\"\n"
        "               : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
        "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), "
        "\"r\"(b[1]));\n"
        "}\n");
  }
  put(s, "// tsr:ptx-end\n\n");
}

/* The walk: linear physical ordinal -> (tile row, tile col), the uint32
 * formulas of src/plan/walk.c with the grid and the clamped R, C baked in. */
void tsr__emit_walk(tsr__sb *s, const tsr__emit_geo *g) {
  const tsr_walk *w = &g->plan.walk;
  put(s, "__device__ __forceinline__ unsigned tsr_minu(unsigned a, unsigned b) { return a < b ? a : b; }\n");
  put(s, "// tsr:walk-begin\n");
  put(s, "__device__ __forceinline__ void tsr_walk(unsigned i, unsigned &row, unsigned &col) {\n");
  switch (w->kind) {
    case TSR_WALK_RECT: {
      uint32_t r = w->r < g->h ? w->r : g->h, c = w->c < g->w ? w->c : g->w;
      put(s, "  // rect:%ux%u\n", r, c);
      put(s, "  const unsigned R = %uu, CC = %uu, PERIOD = %uu; // PERIOD = R * GRID_W\n", r, c,
          r * g->w);
      put(s,
          "  const unsigned stripe_start = (i / PERIOD) * R;\n"
          "  const unsigned sh = tsr_minu(R, GRID_H - stripe_start);\n"
          "  const unsigned local = i %% PERIOD;\n"
          "  const unsigned column_start = (local / (sh * CC)) * CC;\n"
          "  const unsigned sw = tsr_minu(CC, GRID_W - column_start);\n"
          "  const unsigned inside = local %% (sh * CC);\n"
          "  row = stripe_start + inside / sw;\n"
          "  col = column_start + inside %% sw;\n");
      break;
    }
    case TSR_WALK_STRIPE: {
      uint32_t r = w->r < g->h ? w->r : g->h;
      put(s, "  // stripe:%u\n", r);
      put(s, "  const unsigned R = %uu, PERIOD = %uu; // PERIOD = R * GRID_W\n", r, r * g->w);
      put(s,
          "  const unsigned stripe_start = (i / PERIOD) * R;\n"
          "  const unsigned sh = tsr_minu(R, GRID_H - stripe_start);\n"
          "  const unsigned local = i %% PERIOD;\n"
          "  row = stripe_start + local %% sh;\n"
          "  col = local / sh;\n");
      break;
    }
    default:
      put(s, "  // linear\n  row = i / GRID_W;\n  col = i %% GRID_W;\n");
      break;
  }
  put(s, "}\n// tsr:walk-end\n\n");
}

/* A copy's byte count with tails (cp.async zero-fills the rest): V floats,
 * fewer at a column tail (COL: the column variable), none past a row tail. */
static void put_copy_bytes(sb_t *s, int rtail, int ctail, const char *rorg, const char *rext,
                           const char *corg, const char *cext, const char *col) {
  put(s, "    int bytes = V * 4;\n");
  if (ctail)
    put(s, "    { const int rem = %s - (%s + %s); bytes = rem >= V ? V * 4 : (rem > 0 ? rem * 4 : 0); }\n",
        cext, corg, col);
  if (rtail) put(s, "    if (%s + r >= %s) bytes = 0;\n", rorg, rext);
}

/* Global -> shared copy of one operand's tile. Two shapes:
 *  - direct: the shared rows run along the global contiguous axis, so
 *    vec-wide chunks go straight across (16/8/4-byte cp.async with src-size
 *    zero fill, or vector loads + vector stores when stages == 1);
 *  - transposing (FFMA with a k-contiguous operand, shared rows along k):
 *    one 4-byte cp.async per element, lanes along k first (stages >= 2), or
 *    vec-wide loads along k scattered as scalars down a shared column. */
static void emit_load(sb_t *s, const tsr__emit_geo *g, const tsr__emit_operand *o,
                      const char *fname) {
  const tsr_plan *pl = &g->plan;
  char U = (char)(o->name - 32);
  const char *EXT = o->name == 'a' ? "M" : "N";
  const char *BMN = o->name == 'a' ? "BM" : "BN";
  int v = o->vec, async = pl->stages >= 2;
  int tk = o->tk, tx = o->tail;
  int direct = o->srows_x == o->kmajor;
  char dst[48]; /* shared offset of (row r, column c) of a direct copy */
  if (o->swz) snprintf(dst, sizeof dst, "tsr_soff_%c(r, c)", o->name);
  else snprintf(dst, sizeof dst, "r * LS%c + c", U);
  put(s, "// %c tile -> shared %c[%s * LS%c + %s] (%s global, %s copy, %s).\n", U, U,
      o->srows_x ? "x" : "k", U, o->srows_x ? "k" : "x", o->kmajor ? "k-contiguous" : "x-contiguous",
      direct ? "direct" : "transposing", async ? "cp.async" : "registers");
  put(s,
      "__device__ __forceinline__ void %s_%c(float *s, const float *__restrict__ g, int x0, "
      "int k0) {\n",
      fname, o->name);
  if (!direct && async) {
    put(s, "  constexpr int TOTAL = BK * %s;\n", BMN);
    put(s, "#pragma unroll\n  for (int it = 0; it < (TOTAL + NT - 1) / NT; ++it) {\n");
    put(s, "    const int e = (int)threadIdx.x + it * NT;\n");
    put(s, "    if (TOTAL %% NT != 0 && e >= TOTAL) break;\n");
    put(s, "    const int k = e %% BK, x = e / BK;\n");
    if (tx || tk) {
      put(s, "    const bool in = %s%s%s%s;\n", tx ? "x0 + x < " : "", tx ? EXT : "",
          tx && tk ? " && " : "", tk ? "k0 + k < K" : "");
      put(s, "    const float *src = in ? g + (tsr_idx)(x0 + x) * LD%c + (k0 + k) : g;\n", U);
      put(s, "    tsr_cp4(s + k * LS%c + x, src, in ? 4 : 0);\n", U);
    } else {
      put(s, "    tsr_cp4(s + k * LS%c + x, g + (tsr_idx)(x0 + x) * LD%c + (k0 + k), 4);\n", U, U);
    }
    put(s, "  }\n}\n\n");
    return;
  }
  if (!direct) {
    /* stages == 1, FFMA, k-contiguous global: vec along k, scalar stores. */
    put(s, "  constexpr int V = %d, VPC = BK / V, TOTAL = %s * VPC;\n", v, BMN);
    put(s, "#pragma unroll\n  for (int it = 0; it < (TOTAL + NT - 1) / NT; ++it) {\n");
    put(s, "    const int e = (int)threadIdx.x + it * NT;\n");
    put(s, "    if (TOTAL %% NT != 0 && e >= TOTAL) break;\n");
    put(s, "    const int x = e / VPC, k = (e %% VPC) * V;\n");
    put(s, "    const float *src = g + (tsr_idx)(x0 + x) * LD%c + (k0 + k);\n", U);
  } else {
    /* Direct: rows r of the shared tile, chunks of V along the row. */
    const char *rows = o->srows_x ? BMN : "BK", *cols = o->srows_x ? "BK" : BMN;
    put(s, "  constexpr int V = %d, VPR = %s / V, TOTAL = %s * VPR;\n", v, cols, rows);
    put(s, "#pragma unroll\n  for (int it = 0; it < (TOTAL + NT - 1) / NT; ++it) {\n");
    put(s, "    const int e = (int)threadIdx.x + it * NT;\n");
    put(s, "    if (TOTAL %% NT != 0 && e >= TOTAL) break;\n");
    put(s, "    const int r = e / VPR, c = (e %% VPR) * V;\n");
    /* row axis / column axis of the copy in problem terms */
    const char *rorg = o->srows_x ? "x0" : "k0", *corg = o->srows_x ? "k0" : "x0";
    const char *rext = o->srows_x ? EXT : "K", *cext = o->srows_x ? "K" : EXT;
    int rtail = o->srows_x ? tx : tk, ctail = o->srows_x ? tk : tx;
    if (async) {
      if (rtail || ctail) {
        put_copy_bytes(s, rtail, ctail, rorg, rext, corg, cext, "c");
        put(s, "    const float *src = bytes ? g + (tsr_idx)(%s + r) * LD%c + (%s + c) : g;\n", rorg,
            U, corg);
        put(s, "    tsr_cp%d(s + %s, src, bytes);\n", v * 4, dst);
      } else {
        put(s, "    tsr_cp%d(s + %s, g + (tsr_idx)(%s + r) * LD%c + (%s + c), %d);\n",
            v * 4, dst, rorg, U, corg, v * 4);
      }
      put(s, "  }\n}\n\n");
      return;
    }
    put(s, "    const float *src = g + (tsr_idx)(%s + r) * LD%c + (%s + c);\n", rorg, U, corg);
  }
  /* Register path (stages == 1): whole-vector condition, else per element. */
  put(s, "    float r4[V];\n");
  char full[200] = "", elem[200] = "";
  if (!direct) {
    snprintf(full, sizeof full, "%s%s%s%s", tx ? "x0 + x < " : "", tx ? EXT : "",
             tx && tk ? " && " : "", tk ? "k0 + k + V <= K" : "");
    snprintf(elem, sizeof elem, "%s%s%s%s", tx ? "x0 + x < " : "", tx ? EXT : "",
             tx && tk ? " && " : "", tk ? "k0 + k + q < K" : "");
  } else {
    const char *rorg = o->srows_x ? "x0" : "k0", *corg = o->srows_x ? "k0" : "x0";
    const char *rext = o->srows_x ? EXT : "K", *cext = o->srows_x ? "K" : EXT;
    int rtail = o->srows_x ? tx : tk, ctail = o->srows_x ? tk : tx;
    char rc[64] = "", cc[64] = "", ce[64] = "";
    if (rtail) snprintf(rc, sizeof rc, "%s + r < %s", rorg, rext);
    if (ctail) snprintf(cc, sizeof cc, "%s + c + V <= %s", corg, cext);
    if (ctail) snprintf(ce, sizeof ce, "%s + c + q < %s", corg, cext);
    snprintf(full, sizeof full, "%s%s%s", rc, rtail && ctail ? " && " : "", cc);
    snprintf(elem, sizeof elem, "%s%s%s", rc, rtail && ctail ? " && " : "", ce);
  }
  int guarded = tx || tk;
  if (guarded && !full[0]) guarded = 0; /* the tails are on axes this copy never crosses */
  if (guarded) put(s, "    if (%s) {\n", full);
  const char *ind = guarded ? "      " : "    ";
  if (v == 4)
    put(s,
        "%sconst float4 t = *reinterpret_cast<const float4 *>(src);\n"
        "%sr4[0] = t.x; r4[1] = t.y; r4[2] = t.z; r4[3] = t.w;\n",
        ind, ind);
  else if (v == 2)
    put(s,
        "%sconst float2 t = *reinterpret_cast<const float2 *>(src);\n"
        "%sr4[0] = t.x; r4[1] = t.y;\n",
        ind, ind);
  else
    put(s, "%sr4[0] = *src;\n", ind);
  if (guarded) {
    put(s, "    } else {\n");
    put(s, "#pragma unroll\n      for (int q = 0; q < V; ++q) r4[q] = (%s) ? src[q] : 0.0f;\n",
        elem);
    put(s, "    }\n");
  }
  if (!direct) {
    put(s, "#pragma unroll\n    for (int q = 0; q < V; ++q) s[(k + q) * LS%c + x] = r4[q];\n", U);
  } else if (v == 4) {
    put(s, "    float4 t4; t4.x = r4[0]; t4.y = r4[1]; t4.z = r4[2]; t4.w = r4[3];\n");
    put(s, "    *reinterpret_cast<float4 *>(s + %s) = t4;\n", dst);
  } else if (v == 2) {
    put(s, "    float2 t2; t2.x = r4[0]; t2.y = r4[1];\n");
    put(s, "    *reinterpret_cast<float2 *>(s + %s) = t2;\n", dst);
  } else {
    put(s, "    s[%s] = r4[0];\n", dst);
  }
  put(s, "  }\n}\n\n");
}

/* kloop >= 2: an operand's K-block copy as constant-offset passes, when it
 * needs no tail guard: the pass count (0 when guarded), the rows between
 * passes, the shared bytes between passes and the copy width in floats. */
static int copy_passes(const tsr__emit_operand *o, int *step, int *dstride, int *vw) {
  int direct = o->srows_x == o->kmajor;
  int rk = direct && !o->srows_x;
  int rtail = rk ? o->tk : o->tail, ctail = rk ? o->tail : o->tk;
  if (rtail || ctail) return 0;
  TSR_ASSERT(o->kl_step >= 1 && o->kl_passes >= 1); /* set by the geometry's kloop check */
  *step = o->kl_step;
  *dstride = o->kl_step * (direct ? o->ls : 1) * 4;
  *vw = direct ? o->vec : 1;
  return o->kl_passes;
}

/* kloop=1 (docs/emit.md "kloop"): the copy of one operand's K block from
 * the thread's pointer p (its first element of the block; the passes sit at
 * constant offsets from it, STEP rows apart), and the offset of that first
 * element for block k0 (tsr_first_<c>). Rows run along the stored tensor's
 * strided axis: k for a direct x-contiguous copy, else x. g, x0 and k0 serve
 * the tail guards only. */
static void emit_load_ptr(sb_t *s, const tsr__emit_geo *g, const tsr__emit_operand *o) {
  char U = (char)(o->name - 32);
  const char *EXT = o->name == 'a' ? "M" : "N";
  const char *BMN = o->name == 'a' ? "BM" : "BN";
  int direct = o->srows_x == o->kmajor;
  int rk = direct && !o->srows_x; /* rows along k */
  int v = direct ? o->vec : 1;
  const char *rows = direct ? (o->srows_x ? BMN : "BK") : BMN;
  const char *rorg = rk ? "k0" : "x0", *corg = rk ? "x0" : "k0";
  const char *rext = rk ? "K" : EXT, *cext = rk ? EXT : "K";
  int rtail = rk ? o->tk : o->tail, ctail = rk ? o->tail : o->tk;
  TSR_ASSERT(!o->swz && g->plan.stages >= 2);
  /* the copying thread: the producer warpgroup's threads follow the NT consumers */
  const char *ct = g->ffprod ? "((int)threadIdx.x - NT)" : "(int)threadIdx.x";
  char per[32];
  if (direct) snprintf(per, sizeof per, "%s / %d", rk ? BMN : "BK", v);
  else snprintf(per, sizeof per, "BK");
  put(s, "// %c tile -> shared %c[%s * LS%c + %s] (%s global, %s copy, cp.async from a pointer).\n",
      U, U, o->srows_x ? "x" : "k", U, o->srows_x ? "k" : "x",
      o->kmajor ? "k-contiguous" : "x-contiguous", direct ? "direct" : "transposing");
  put(s,
      "__device__ __forceinline__ tsr_idx tsr_first_%c(int x0, int k0) {\n"
      "  constexpr int V = %d, PER = %s;\n"
      "  const int r0 = %s / PER, c0 = (%s %% PER) * V;\n"
      "  return (tsr_idx)(%s + r0) * LD%c + (%s + c0);\n}\n",
      o->name, v, per, ct, ct, rorg, U, corg);
  int k2 = g->plan.kloop >= 2; /* s is a 32-bit shared-window byte address */
  char dst[48];
  if (direct) snprintf(dst, sizeof dst, "r * LS%c + c0", U);
  else snprintf(dst, sizeof dst, "c0 * LS%c + r", U);
  if (k2 && !rtail && !ctail) {
    /* kloop=2, no guards: the passes unrolled here, each at constant byte
     * offsets from the thread's first destination and source */
    int step, dstride, vw;
    int passes = copy_passes(o, &step, &dstride, &vw);
    TSR_ASSERT(passes && vw == v);
    put(s,
        "__device__ __forceinline__ unsigned tsr_dst_%c(unsigned s) { // the thread's first copy\n"
        "  constexpr int V = %d, PER = %s;\n"
        "  const int r = %s / PER, c0 = (%s %% PER) * V;\n"
        "  return s + (unsigned)(%s) * 4u;\n}\n",
        o->name, v, per, ct, ct, dst);
    put(s,
        "__device__ __forceinline__ void tsr_loadp_%c(unsigned s, const float *__restrict__ p,\n"
        "                                            const float *__restrict__ g, int x0, int k0) {\n"
        "  // kloop=2: %d passes of %d rows, at constant offsets from the first copy\n"
        "  constexpr int V = %d, PER = %s;\n"
        "  const int r0 = %s / PER, c0 = (%s %% PER) * V;\n"
        "  const int r = r0;\n"
        "  const unsigned d = s + (unsigned)(%s) * 4u;\n"
        "  (void)g; (void)x0; (void)k0;\n",
        o->name, passes, step, v, per, ct, ct, dst);
    for (int it = 0; it < passes; it++)
      put(s, "  tsr_cpo%d<%lldLL, (long long)%d * LD%c * 4>(d, p);\n", v * 4,
          (long long)it * dstride, it * step, U);
    put(s, "}\n");
  } else {
    put(s,
        "__device__ __forceinline__ void tsr_loadp_%c(%s, const float *__restrict__ p,\n"
        "                                            const float *__restrict__ g, int x0, int k0) {\n"
        "  constexpr int V = %d, PER = %s, STEP = NT / PER, PASSES = %s * PER / NT;\n"
        "  const int r0 = %s / PER, c0 = (%s %% PER) * V;\n"
        "#pragma unroll\n  for (int it = 0; it < PASSES; ++it) {\n"
        "    const int r = r0 + it * STEP;\n"
        "    const float *src = p + (tsr_idx)(it * STEP) * LD%c;\n",
        o->name, k2 ? "unsigned s" : "float *s", v, per, rows, ct, ct, U);
    char to[96];
    if (k2) snprintf(to, sizeof to, "s + (unsigned)(%s) * 4u", dst);
    else snprintf(to, sizeof to, "s + %s", dst);
    if (rtail || ctail) {
      put_copy_bytes(s, rtail, ctail, rorg, rext, corg, cext, "c0");
      put(s, "    tsr_cp%s%d(%s, bytes ? src : g, bytes);\n", k2 ? "s" : "", v * 4, to);
    } else {
      put(s, "    (void)g; (void)x0; (void)k0;\n");
      put(s, "    tsr_cp%d(%s, src, %d);\n", v * 4, to, v * 4);
    }
    put(s, "  }\n}\n");
  }
  if (rk) put(s, "static constexpr tsr_idx ADV_%c = (tsr_idx)BK * LD%c; // one K block on\n\n", U, U);
  else put(s, "static constexpr tsr_idx ADV_%c = BK; // one K block on\n\n", U);
}

/* split=pack with tf32x3: a stage is the big parts' tile, then the small
 * parts' tile, each copied from its own tensor in W like a packed operand. */
static void emit_load_parts(sb_t *s, const tsr__emit_operand *o) {
  char U = (char)(o->name - 32);
  put(s,
      "__device__ __forceinline__ void tsr_load_%c(float *s, const float *__restrict__ g, int x0, "
      "int k0) {\n"
      "  tsr_load_tile_%c(s, g, x0, k0);                                  // big parts\n"
      "  tsr_load_tile_%c(s + %c_TILE, g + (WOFF_%cS - WOFF_%c), x0, k0); // small parts\n"
      "}\n\n",
      o->name, o->name, o->name, U, U, U);
}

/* FFMA view operand: direct global loads of one element / one 4-wide
 * fragment, zero outside the problem. */
static void emit_view(sb_t *s, const tsr__emit_geo *g, const tsr__emit_operand *o) {
  char U = (char)(o->name - 32);
  const char *EXT = o->name == 'a' ? "M" : "N";
  int tk = o->tk, tx = o->tail;
  put(s, "// %c as a view: direct global loads (%s).\n", U,
      o->kmajor ? "k-contiguous" : "x-contiguous");
  put(s,
      "__device__ __forceinline__ float tsr_view_%c(const float *__restrict__ g, int x, int k) {\n",
      o->name);
  if (tx || tk)
    put(s, "  if (%s%s%s%s) return 0.0f;\n", tx ? "x >= " : "", tx ? EXT : "",
        tx && tk ? " || " : "", tk ? "k >= K" : "");
  if (o->kmajor)
    put(s, "  return g[(tsr_idx)x * LD%c + k];\n}\n", U);
  else
    put(s, "  return g[(tsr_idx)k * LD%c + x];\n}\n", U);
  int frag = o->name == 'a' ? g->fm : g->fn;
  if (!o->kmajor && o->vec == 4 && frag == 4) {
    put(s,
        "__device__ __forceinline__ void tsr_view4_%c(const float *__restrict__ g, int x, int k, "
        "float &r0, float &r1, float &r2, float &r3) {\n",
        o->name);
    if (tk) put(s, "  if (k >= K) { r0 = r1 = r2 = r3 = 0.0f; return; }\n");
    put(s, "  const float *src = g + (tsr_idx)k * LD%c + x;\n", U);
    if (tx)
      put(s,
          "  if (x + 4 > %s) {\n"
          "    r0 = x < %s ? src[0] : 0.0f; r1 = x + 1 < %s ? src[1] : 0.0f;\n"
          "    r2 = x + 2 < %s ? src[2] : 0.0f; r3 = x + 3 < %s ? src[3] : 0.0f;\n"
          "    return;\n  }\n",
          EXT, EXT, EXT, EXT, EXT);
    put(s,
        "  const float4 t = *reinterpret_cast<const float4 *>(src);\n"
        "  r0 = t.x; r1 = t.y; r2 = t.z; r3 = t.w;\n}\n");
  }
  put(s, "\n");
}

/* The value stored for output e of a run (old: the output's old value, as
 * the store reads it): a split-K partial, alpha * v, or with beta. */
static void store_val(char *val, size_t cap, int split, int beta0, int tailk, int e,
                      const char *old) {
  if (split) snprintf(val, cap, "v%d", e);
  else if (beta0) snprintf(val, cap, "alpha * v%d", e);
  else if (tailk) snprintf(val, cap, "beta != 0.0f ? alpha * v%d + beta * %s : alpha * v%d", e, old, e);
  else snprintf(val, cap, "alpha * v%d + beta * %s", e, old);
}

/* Epilogue store of RUN consecutive outputs of one row: tsr_store into C
 * (alpha, beta) or, with split-K, into the slice's compact M x N partial
 * (no alpha/beta). With tailk, tsr_store_t serves whole tiles and tail units
 * alike (one epilogue path: two paths over the same accumulators made ptxas
 * allocate their registers with 5-10x the register bank conflicts, session
 * 22): the base, its row stride and origin, and alpha / beta are the
 * caller's, C with (LDC, 0, 0, alpha, beta) or a unit's compact BM x BN
 * partial with (BN, m0, n0, 1, 0); beta == 0 reads nothing. */
static void emit_store(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g, int run, int tailk) {
  const tsr_plan *pl = &g->plan;
  int beta0 = p->beta == 0.0f;
  int split = !tailk && pl->splitk > 1;
  if (tailk)
    put(s, "__device__ __forceinline__ void tsr_store_t(float *__restrict__ base, tsr_idx ld, int r0, "
           "int c0, float alpha, float beta, int row, int col");
  else
    put(s, "__device__ __forceinline__ void tsr_store(float *__restrict__ base, int row, int col, "
           "float alpha, float beta");
  for (int e = 0; e < run; e++) put(s, ", float v%d", e);
  put(s, ") {\n");
  if (g->tail_m) put(s, "  if (row >= M) return;\n");
  int vec_ok;
  if (tailk) {
    put(s, "  float *c = base + (tsr_idx)(row - r0) * ld + (col - c0);\n");
    vec_ok = (run == 2 || run == 4) && p->ldc % run == 0;
  } else if (split) {
    put(s, "  // split-K partial: compact M x N slice of the workspace, no alpha/beta\n");
    put(s, "  float *c = base + (tsr_idx)row * N + col;\n");
    vec_ok = (run == 2 || run == 4) && p->n % run == 0;
  } else {
    put(s, "  float *c = base + (tsr_idx)row * LDC + col;\n");
    vec_ok = (run == 2 || run == 4) && p->ldc % run == 0 && (p->batch == 1 || p->stride_c % run == 0);
  }
  /* each output's old value reads as old.x.. (vector) or c[e] (scalar) */
  static const char comp[] = "xyzw";
  char old[16], val[96];
  if (vec_ok) {
    const char *vt = run == 4 ? "float4" : "float2";
    if (g->tail_n) put(s, "  if (col + %d <= N) {\n", run);
    else put(s, "  {\n");
    put(s, "    %s o;\n", vt);
    if (tailk && !beta0)
      put(s, "    const %s old = beta != 0.0f ? *reinterpret_cast<const %s *>(c) : %s{};\n", vt, vt, vt);
    else if (!split && !beta0)
      put(s, "    const %s old = *reinterpret_cast<const %s *>(c);\n", vt, vt);
    for (int e = 0; e < run; e++) {
      snprintf(old, sizeof old, "old.%c", comp[e]);
      store_val(val, sizeof val, split, beta0, tailk, e, old);
      put(s, "    o.%c = %s;\n", comp[e], val);
    }
    put(s, "    *reinterpret_cast<%s *>(c) = o;\n    return;\n  }\n", vt);
  }
  if (!vec_ok || g->tail_n) {
    for (int e = 0; e < run; e++) {
      const char *ind = "  ";
      if (g->tail_n) {
        put(s, "  if (col + %d < N)", e);
        ind = " ";
      }
      snprintf(old, sizeof old, "c[%d]", e);
      store_val(val, sizeof val, split, beta0, tailk, e, old);
      put(s, "%sc[%d] = %s;\n", ind, e, val);
    }
  }
  put(s, "}\n\n");
}

/* A staged [k][x] operand's fragment of K step kk into arr (op 0: A into
 * a[TM], 1: B into b[TN]), IND-indented: 16-byte LDS of the FM (FN)
 * consecutive rows of each fragment, or scalars where the fragment or the
 * row stride is not 4-aligned. tsr_block's and tsr_frag's loads. */
static void put_staged_frag(sb_t *s, const tsr__emit_geo *g, int op, const char *ind,
                            const char *kk) {
  const tsr__emit_operand *o = op ? &g->b : &g->a;
  const char *arr = op ? "b" : "a", *T = op ? "TN" : "TM", *F = op ? "FN" : "FM",
             *L = op ? "LC" : "LR", *base = op ? "cbase" : "rbase", *sp = op ? "bs" : "as";
  char U = op ? 'B' : 'A';
  int frag = op ? g->fn : g->fm;
  TSR_ASSERT(o->staged && !o->srows_x);
  if (frag == 4 && o->ls % 4 == 0)
    put(s,
        "#pragma unroll\n"
        "%sfor (int f = 0; f < %s / 4; ++f) {\n"
        "%s  const float4 t = *reinterpret_cast<const float4 *>(%s + %s * LS%c + %s + f * (%s * 4));\n"
        "%s  %s[4 * f] = t.x; %s[4 * f + 1] = t.y; %s[4 * f + 2] = t.z; %s[4 * f + 3] = t.w;\n"
        "%s}\n",
        ind, T, ind, sp, kk, U, base, L, ind, arr, arr, arr, arr, ind);
  else
    put(s,
        "#pragma unroll\n"
        "%sfor (int q = 0; q < %s; ++q) %s[q] = %s[%s * LS%c + %s + (q / %s) * (%s * %s) + q %% %s];\n",
        ind, T, arr, sp, kk, U, base, F, L, F, F);
}

/* FFMA: one K block of the thread's TM x TN micro-tile. Lanes form an
 * LR x LC grid (lane = lr * LC + lc); thread rows are TM/FM fragments of FM
 * consecutive rows at lr*FM + f*LR*FM, so the FM=4 fragments of a warp are
 * consecutive 16-byte chunks of one shared row: LDS.128, broadcast across
 * lanes of equal lr, conflict-free within each 8-lane phase. */
/* One K step's TM x TN FMAs (plan forder, docs/emit.md "FFMA order"), IND-
 * indented: forder=0 the i-j loops; otherwise one statement per FMA, rows
 * serpentine (row r of the order walks its columns backwards when r is odd),
 * rows and columns first shuffled by a 32-bit LCG seeded with forder >= 2. */
static void put_ffma_order(sb_t *s, const tsr_plan *pl, const char *ind) {
  if (pl->forder == 0) {
    put(s,
        "#pragma unroll\n"
        "%sfor (int i = 0; i < TM; ++i)\n"
        "#pragma unroll\n"
        "%s  for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);\n",
        ind, ind);
    return;
  }
  int rows[64], cols[64];
  TSR_ASSERT(pl->tm <= 64 && pl->tn <= 64);
  for (int i = 0; i < pl->tm; i++) rows[i] = i;
  for (int j = 0; j < pl->tn; j++) cols[j] = j;
  if (pl->forder >= 2) { /* Fisher-Yates with a fixed LCG: the same seed, the same order */
    uint32_t x = (uint32_t)pl->forder * 2654435761u;
    for (int pass = 0; pass < 2; pass++) {
      int *v = pass ? cols : rows, n = pass ? pl->tn : pl->tm;
      for (int i = n - 1; i > 0; i--) {
        x = x * 1664525u + 1013904223u;
        int j = (int)((x >> 8) % (uint32_t)(i + 1)), t = v[i];
        v[i] = v[j], v[j] = t;
      }
    }
  }
  put(s, "%s// forder=%d: one FMA per statement, rows serpentine\n", ind, pl->forder);
  for (int r = 0; r < pl->tm; r++)
    for (int c = 0; c < pl->tn; c++) {
      int i = rows[r], j = cols[r % 2 ? pl->tn - 1 - c : c];
      put(s, "%sacc[%d][%d] = fmaf(a[%d], b[%d], acc[%d][%d]);\n", ind, i, j, i, j, i, j);
    }
}

static void emit_block_ffma(sb_t *s, const tsr__emit_geo *g) {
  /* kfrag operands ([x][k] shared rows): K runs in groups of 4, each
   * thread reading its TM (TN) rows' 4 K steps with one LDS.128 per row */
  int kf = g->a.srows_x || g->b.srows_x;
  put(s,
      "__device__ __forceinline__ void tsr_block(float (&acc)[TM][TN], const float *as, const "
      "float *bs,\n"
      "                                          const float *__restrict__ Ag, const float "
      "*__restrict__ Bg,\n"
      "                                          int m0, int n0, int k0%s) {\n"
      "  const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;\n"
      "  const int rbase = (warp / WARPS_N) * WM + (lane / LC) * FM;\n"
      "  const int cbase = (warp %% WARPS_N) * WN + (lane %% LC) * FN;\n",
      g->plan.krel == 1 ? ",\n                                          bool rel, unsigned relbar" : "");
  if (kf) {
    put(s,
        "#pragma unroll\n"
        "  for (int kq = 0; kq < BK; kq += 4) {\n");
    if (g->a.srows_x)
      put(s,
          "    float a4[TM][4]; // 4 K steps of row rbase + i * LR\n"
          "#pragma unroll\n"
          "    for (int i = 0; i < TM; ++i) {\n"
          "      const float4 t = *reinterpret_cast<const float4 *>(as + (rbase + i * LR) * LSA + kq);\n"
          "      a4[i][0] = t.x; a4[i][1] = t.y; a4[i][2] = t.z; a4[i][3] = t.w;\n"
          "    }\n");
    if (g->b.srows_x)
      put(s,
          "    float b4[TN][4]; // 4 K steps of column cbase + j * LC\n"
          "#pragma unroll\n"
          "    for (int j = 0; j < TN; ++j) {\n"
          "      const float4 t = *reinterpret_cast<const float4 *>(bs + (cbase + j * LC) * LSB + kq);\n"
          "      b4[j][0] = t.x; b4[j][1] = t.y; b4[j][2] = t.z; b4[j][3] = t.w;\n"
          "    }\n");
    put(s,
        "#pragma unroll\n"
        "  for (int u = 0; u < 4; ++u) {\n"
        "    const int kk = kq + u;\n"
        "    float a[TM], b[TN];\n");
  } else if (g->plan.kinner) {
    /* kinner=S: the block's K steps as an inner loop of S steps written
     * out, so a long block's loop body stays within the instruction cache */
    int ki = g->plan.kinner;
    put(s,
        "  // kinner=%d: BK / %d trips of %d K steps written out; the staged operands'\n"
        "  // shared pointers advance a trip at a time (immediate offsets within it)\n"
        "#pragma unroll 1\n"
        "  for (int ko = 0; ko < BK; ko += %d",
        ki, ki, ki, ki);
    if (g->a.staged) put(s, ", as += %d * LSA", ki);
    if (g->b.staged) put(s, ", bs += %d * LSB", ki);
    put(s,
        ") {\n"
        "#pragma unroll\n"
        "  for (int ku = 0; ku < %d; ++ku) {\n"
        "    const int kk = ko + ku;\n"
        "    float a[TM], b[TN];\n",
        ki);
  } else {
    put(s,
        "#pragma unroll\n"
        "  for (int kk = 0; kk < BK; ++kk) {\n"
        "    float a[TM], b[TN];\n");
  }
  for (int op = 0; op < 2; op++) {
    const tsr__emit_operand *o = op ? &g->b : &g->a;
    const char *arr = op ? "b" : "a", *T = op ? "TN" : "TM", *F = op ? "FN" : "FM",
               *L = op ? "LC" : "LR", *base = op ? "cbase" : "rbase", *org = op ? "n0" : "m0",
               *G = op ? "Bg" : "Ag";
    int frag = op ? g->fn : g->fm;
    if (o->srows_x) {
      put(s, "#pragma unroll\n    for (int q = 0; q < %s; ++q) %s[q] = %s4[q][u];\n", T, arr, arr);
    } else if (o->staged) {
      put_staged_frag(s, g, op, "    ", g->plan.kinner ? "ku" : "kk");
    } else if (!o->kmajor && o->vec == 4 && frag == 4) {
      put(s,
          "#pragma unroll\n"
          "    for (int f = 0; f < %s / 4; ++f)\n"
          "      tsr_view4_%c(%s, %s + %s + f * (%s * 4), k0 + kk, %s[4 * f], %s[4 * f + 1], %s[4 * f + 2], %s[4 * f + 3]);\n",
          T, o->name, G, org, base, L, arr, arr, arr, arr);
    } else {
      put(s,
          "#pragma unroll\n"
          "    for (int q = 0; q < %s; ++q) %s[q] = tsr_view_%c(%s, %s + %s + (q / %s) * (%s * %s) + q %% %s, k0 + kk);\n",
          T, arr, o->name, G, org, base, F, L, F, F);
    }
  }
  /* krel=1: the block's last shared loads are issued here (the last K
   * step's fragments), so the slot is free once they are done: fence them
   * (the wait is for these loads only) and free it before the step's FFMAs */
  if (g->plan.krel == 1)
    put(s,
        "    if (kk == BK - 1 && rel) { // krel=1: the slot's last loads, fenced for its TMA refill\n"
        "      tsr_proxy_fence();\n"
        "      tsr_bar_arrive(relbar, NT + %du);\n"
        "    }\n",
        g->ff_pthreads);
  put_ffma_order(s, &g->plan, "    ");
  put(s, "  }\n%s}\n\n", kf || g->plan.kinner ? "  }\n" : "");
}

/* kloop=3 (docs/emit.md "kloop"): the K loop holds two fragment sets and
 * loads K step kk+1's while step kk multiplies, across K blocks too (the
 * next block's step 0 is loaded after the barrier that lands it, before
 * the block's last step multiplies). Both operands staged as [k][x] rows. */
static void emit_frag_ffma(sb_t *s, const tsr__emit_geo *g) {
  put(s,
      "__device__ __forceinline__ void tsr_frag(float (&a)[TM], float (&b)[TN], const float *as,\n"
      "                                         const float *bs, int kk) {\n"
      "  const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;\n"
      "  const int rbase = (warp / WARPS_N) * WM + (lane / LC) * FM;\n"
      "  const int cbase = (warp %% WARPS_N) * WN + (lane %% LC) * FN;\n");
  for (int op = 0; op < 2; op++) put_staged_frag(s, g, op, "  ", "kk");
  put(s,
      "}\n"
      "__device__ __forceinline__ void tsr_fma(float (&acc)[TM][TN], const float (&a)[TM],\n"
      "                                        const float (&b)[TN]) {\n");
  put_ffma_order(s, &g->plan, "  ");
  put(s, "}\n\n");
}

/* Shared offsets of the tf32x3 operands: (row r, column c) of the shared
 * tile, plain (r * LS + c) or with 16-byte chunks XOR-swizzled (pad == 0):
 * [x][k] rows: chunk ^ ((r >> SH) & (Z - 1)), so the 8 rows of one ldmatrix
 * block land in 8 distinct bank groups; [k][x] rows: chunk ^ ((k & 3) << 1),
 * so the 4 k rows t = 0..3 of a fragment LDS land in distinct bank groups.
 * A copy's 8 consecutive 16-byte chunks of one row stay a permutation of 8
 * bank groups either way (the XOR stays inside an aligned group of 8). */
static void emit_soff(sb_t *s, const tsr__emit_operand *o) {
  char U = (char)(o->name - 32);
  put(s, "__device__ __forceinline__ int tsr_soff_%c(int r, int c) {\n", o->name);
  if (!o->swz)
    put(s, "  return r * LS%c + c;\n}\n", U);
  else if (o->srows_x)
    put(s, "  return r * LS%c + ((((c >> 2) ^ ((r >> %d) & %d)) << 2) | (c & 3)); // swizzled\n}\n",
        U, o->swz_sh, o->swz_z - 1);
  else
    put(s, "  return r * LS%c + ((((c >> 2) ^ ((r & 3) << 1)) << 2) | (c & 3)); // swizzled\n}\n",
        U);
}

/* One LDS of V floats at p into v[0..V-1]. */
static void emit_ldv(sb_t *s, int v, const char *ind) {
  if (v == 4)
    put(s,
        "%sconst float4 t = *reinterpret_cast<const float4 *>(p);\n"
        "%sconst float v[4] = {t.x, t.y, t.z, t.w};\n",
        ind, ind);
  else if (v == 2)
    put(s,
        "%sconst float2 t = *reinterpret_cast<const float2 *>(p);\n"
        "%sconst float v[2] = {t.x, t.y};\n",
        ind, ind);
  else
    put(s, "%sconst float v[1] = {p[0]};\n", ind);
}

/* 3xTF32: per 8-deep K step each warp loads its MI A and NI B fragments,
 * splits each element once into big/small TF32 and issues 3 MMAs per 16x8
 * tile (small products first, big x big last), reusing every split fragment
 * across the warp tile. Fragment loads (docs/emit.md "Fragment loads"):
 *  - [x][k] shared rows (k-contiguous operand): ldmatrix .b16 x4 on 8x4-float
 *    blocks = one A fragment (4 regs) or two B fragments per instruction;
 *  - [k][x] shared rows: the warp tile's rows (A) / columns (B) are permuted
 *    so that a thread's elements of V consecutive MMA tiles are adjacent:
 *    physical x = base + (tile / V) * (16|8) * V + (x in tile) * V + tile % V,
 *    one V-wide LDS per (k row, tile group); the epilogue stores through the
 *    same permutation;
 *  - an odd row stride falls back to 32-bit LDS per element. */
static void emit_block_tf32(sb_t *s, const tsr__emit_geo *g) {
  /* Order per K step: all B fragments (NI x 2 big + 2 small), then A one
   * group of GA tiles at a time (GA = VA for [k][m], else 1), each group's
   * 3 x GA x NI MMAs right after its split: live registers are the
   * accumulators + B + one A group, which lets minblocks=2 fit. */
  int ga = g->a.srows_x ? 1 : g->a.fv;
  put(s,
      "__device__ __forceinline__ void tsr_block(float (&acc)[MI][NI][4], const float *as, const "
      "float *bs) {\n"
      "  const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;\n"
      "  const int gq = lane >> 2, tq = lane & 3; // groupID, threadID_in_group\n"
      "  const int wrow = (warp / WARPS_N) * WM, wcol = (warp %% WARPS_N) * WN;\n"
      "  constexpr int GA = %d; // A tiles per load group\n",
      ga);
  if (g->presplit && g->a.ldsm) put(s, "  const unsigned sas = tsr_smem_addr(as); // shared-window addresses\n");
  if (g->presplit && g->b.ldsm) put(s, "  const unsigned sbs = tsr_smem_addr(bs);\n");
  /* split=pack, acc=step, 64x64-class warp tiles: the K steps of a block
   * stay a loop; unrolled, ptxas overlaps consecutive steps' fragments and
   * partial sums and spills at 255 registers (bk=16: 20-56 bytes) */
  int steploop = g->presplit && !g->chain && g->plan.bk > 8 && g->mi * g->ni >= 32;
  if (steploop)
    put(s, "  // K steps as a loop: unrolled, their fragments and partial sums overlap and spill\n");
  put(s,
      "#pragma unroll%s\n"
      "  for (int kk = 0; kk < BK; kk += 8) {\n"
      "    unsigned bb[NI][2]%s;\n"
      "    // b0 (k t, n g), b1 (k t+4, n g)\n",
      steploop ? " 1" : "", g->presplit && !g->x3 ? "" : ", bl[NI][2]");
  /* split=pack: the fragments are loaded as stored TF32 parts (big from the
   * stage's first tile, small from B_TILE / A_TILE floats on), no cvt; both
   * operands are [x][k] then (geometry.c) */
  int ps = g->presplit, x3 = g->x3;
  TSR_ASSERT(!ps || (g->a.srows_x && g->b.srows_x));
  if (ps && g->b.srows_x && g->b.ldsm) {
    put(s,
        "#pragma unroll\n"
        "    for (int j = 0; j + 1 < NI; j += 2) { // ldmatrix x4: blocks (tile j|j+1) x (k 0-3|4-7)\n"
        "      const unsigned q = sbs + 4u * tsr_soff_b(wcol + (j + (lane >> 4)) * 8 + (lane & 7), kk + (((lane >> 3) & 1) << 2));\n"
        "      unsigned r[4];\n"
        "      tsr_ldsm4s(r, q);\n"
        "      bb[j][0] = r[0]; bb[j][1] = r[1]; bb[j + 1][0] = r[2]; bb[j + 1][1] = r[3];\n");
    if (x3)
      put(s,
          "      tsr_ldsm4s(r, q + 4u * B_TILE);\n"
          "      bl[j][0] = r[0]; bl[j][1] = r[1]; bl[j + 1][0] = r[2]; bl[j + 1][1] = r[3];\n");
    put(s, "    }\n");
    if (g->ni % 2) {
      put(s,
          "    { // odd NI: ldmatrix x2 for the last tile (lanes 0-15 give the addresses)\n"
          "      const unsigned q = sbs + 4u * tsr_soff_b(wcol + (NI - 1) * 8 + (lane & 7), kk + (((lane >> 3) & 1) << 2));\n"
          "      unsigned r[2];\n"
          "      tsr_ldsm2s(r, q);\n"
          "      bb[NI - 1][0] = r[0]; bb[NI - 1][1] = r[1];\n");
      if (x3)
        put(s,
            "      tsr_ldsm2s(r, q + 4u * B_TILE);\n"
            "      bl[NI - 1][0] = r[0]; bl[NI - 1][1] = r[1];\n");
      put(s, "    }\n");
    }
  } else if (ps && g->b.srows_x) {
    put(s,
        "#pragma unroll\n"
        "    for (int j = 0; j < NI; ++j) {\n"
        "      const unsigned *q = reinterpret_cast<const unsigned *>(bs) + (wcol + j * 8 + gq) * LSB + kk + tq; // B[n][k], odd stride\n"
        "      bb[j][0] = q[0]; bb[j][1] = q[4];\n");
    if (x3) put(s, "      bl[j][0] = q[B_TILE]; bl[j][1] = q[B_TILE + 4];\n");
    put(s, "    }\n");
  } else if (g->b.srows_x && g->b.ldsm) {
    put(s,
        "#pragma unroll\n"
        "    for (int j = 0; j + 1 < NI; j += 2) { // ldmatrix x4: blocks (tile j|j+1) x (k 0-3|4-7)\n"
        "      unsigned r[4];\n"
        "      tsr_ldsm4(r, bs + tsr_soff_b(wcol + (j + (lane >> 4)) * 8 + (lane & 7), kk + (((lane >> 3) & 1) << 2)));\n"
        "      tsr_split_bits(r[0], bb[j][0], bl[j][0]);\n"
        "      tsr_split_bits(r[1], bb[j][1], bl[j][1]);\n"
        "      tsr_split_bits(r[2], bb[j + 1][0], bl[j + 1][0]);\n"
        "      tsr_split_bits(r[3], bb[j + 1][1], bl[j + 1][1]);\n"
        "    }\n");
    if (g->ni % 2)
      put(s,
          "    { // odd NI: ldmatrix x2 for the last tile (lanes 0-15 give the addresses)\n"
          "      unsigned r[2];\n"
          "      tsr_ldsm2(r, bs + tsr_soff_b(wcol + (NI - 1) * 8 + (lane & 7), kk + (((lane >> 3) & 1) << 2)));\n"
          "      tsr_split_bits(r[0], bb[NI - 1][0], bl[NI - 1][0]);\n"
          "      tsr_split_bits(r[1], bb[NI - 1][1], bl[NI - 1][1]);\n"
          "    }\n");
  } else if (g->b.srows_x) {
    put(s,
        "#pragma unroll\n"
        "    for (int j = 0; j < NI; ++j) {\n"
        "      const float *q = bs + (wcol + j * 8 + gq) * LSB + kk + tq; // B[n][k], odd stride\n"
        "      tsr_split(q[0], bb[j][0], bl[j][0]);\n"
        "      tsr_split(q[4], bb[j][1], bl[j][1]);\n"
        "    }\n");
  } else {
    put(s,
        "#pragma unroll\n"
        "    for (int jg = 0; jg < NI / VB; ++jg) // B[k][n]: tiles jg*VB.. side by side\n"
        "#pragma unroll\n"
        "      for (int hk = 0; hk < 2; ++hk) {\n"
        "        const float *p = bs + tsr_soff_b(kk + tq + 4 * hk, wcol + jg * 8 * VB + gq * VB);\n");
    emit_ldv(s, g->b.fv, "        ");
    put(s,
        "#pragma unroll\n"
        "        for (int e = 0; e < VB; ++e) tsr_split(v[e], bb[jg * VB + e][hk], bl[jg * VB + e][hk]);\n"
        "      }\n");
  }
  /* acc=step, at most 4 B tiles and 16 tiles a warp (warp tiles up to 64x32):
   * every A group is split first, then each of the three MMA passes runs
   * over all MI x NI tiles (ptxas still re-chains them, but less tightly).
   * H200, session 19 (s19-mma-ab.txt, the same kernel otherwise), time:
   * 128x64 tiles of 64x32 warps at 16384x64x4096 199.9 -> 198.8 us (bk 32)
   * and 202.2 -> 197.1 us (bk 16), 8 warps of 32x32 222.9 -> 206.2 us, 64x64
   * tiles 204.8 -> 205.6 us and 64x11008x4096 NT 154.1 -> 150.3 us; a 32x64
   * warp tile (NI = 8) spilled 92 bytes and lost, 184.8 -> 190.3 us at
   * 64x16384x4096 TN. Costs MI*NI*4 partial-sum registers, so larger warp
   * tiles keep the per-group order (which lets minblocks=2 fit there). */
  int wide = x3 && !g->chain && g->ni <= 4 && g->mi * g->ni <= 16;
  if (wide)
    put(s,
        "    unsigned abw[MI][4], alw[MI][4]; // the warp tile's A parts, all groups\n");
  put(s,
      "#pragma unroll\n"
      "    for (int ig = 0; ig < MI / GA; ++ig) {\n"
      "      unsigned ab[GA][4]%s;\n"
      "      // a0 (m g, k t), a1 (m g+8, k t), a2 (m g, k t+4), a3 (m g+8, k t+4)\n",
      ps && !x3 ? "" : ", al[GA][4]");
  if (ps && g->a.srows_x && g->a.ldsm) {
    put(s,
        "      { // ldmatrix x4: blocks (rows 0-7|8-15) x (k 0-3|4-7)\n"
        "        const unsigned q = sas + 4u * tsr_soff_a(wrow + ig * 16 + (lane & 15), kk + ((lane >> 4) << 2));\n"
        "        tsr_ldsm4s(ab[0], q);\n");
    if (x3) put(s, "        tsr_ldsm4s(al[0], q + 4u * A_TILE);\n");
    put(s, "      }\n");
  } else if (ps && g->a.srows_x) {
    put(s,
        "      {\n"
        "        const unsigned *p = reinterpret_cast<const unsigned *>(as) + (wrow + ig * 16 + gq) * LSA + kk + tq; // A[m][k], odd stride\n"
        "        ab[0][0] = p[0]; ab[0][1] = p[8 * LSA]; ab[0][2] = p[4]; ab[0][3] = p[8 * LSA + 4];\n");
    if (x3)
      put(s,
          "        al[0][0] = p[A_TILE]; al[0][1] = p[A_TILE + 8 * LSA]; al[0][2] = p[A_TILE + 4];\n"
          "        al[0][3] = p[A_TILE + 8 * LSA + 4];\n");
    put(s, "      }\n");
  } else if (g->a.srows_x && g->a.ldsm)
    put(s,
        "      { // ldmatrix x4: blocks (rows 0-7|8-15) x (k 0-3|4-7)\n"
        "        unsigned r[4];\n"
        "        tsr_ldsm4(r, as + tsr_soff_a(wrow + ig * 16 + (lane & 15), kk + ((lane >> 4) << 2)));\n"
        "#pragma unroll\n"
        "        for (int q = 0; q < 4; ++q) tsr_split_bits(r[q], ab[0][q], al[0][q]);\n"
        "      }\n");
  else if (g->a.srows_x)
    put(s,
        "      {\n"
        "        const float *p = as + (wrow + ig * 16 + gq) * LSA + kk + tq; // A[m][k], odd stride\n"
        "        tsr_split(p[0], ab[0][0], al[0][0]);\n"
        "        tsr_split(p[8 * LSA], ab[0][1], al[0][1]);\n"
        "        tsr_split(p[4], ab[0][2], al[0][2]);\n"
        "        tsr_split(p[8 * LSA + 4], ab[0][3], al[0][3]);\n"
        "      }\n");
  else {
    put(s,
        "#pragma unroll\n"
        "      for (int hk = 0; hk < 2; ++hk) // A[k][m]: tiles ig*VA.. side by side\n"
        "#pragma unroll\n"
        "        for (int h = 0; h < 2; ++h) {\n"
        "          const float *p = as + tsr_soff_a(kk + tq + 4 * hk, wrow + ig * 16 * VA + h * 8 * VA + gq * VA);\n");
    emit_ldv(s, g->a.fv, "          ");
    put(s,
        "#pragma unroll\n"
        "          for (int e = 0; e < VA; ++e) tsr_split(v[e], ab[e][h + 2 * hk], al[e][h + 2 * hk]);\n"
        "        }\n");
  }
  if (wide) {
    put(s,
        "#pragma unroll\n"
        "      for (int e = 0; e < GA; ++e)\n"
        "#pragma unroll\n"
        "        for (int q = 0; q < 4; ++q) abw[ig * GA + e][q] = ab[e][q], alw[ig * GA + e][q] = al[e][q];\n"
        "    }\n"
        "    // the step's partial sums from zero, small products first, one pass at a time\n"
        "    float t[MI][NI][4];\n"
        "#pragma unroll\n"
        "    for (int i = 0; i < MI; ++i)\n"
        "#pragma unroll\n"
        "      for (int j = 0; j < NI; ++j) tsr_mma0(t[i][j], alw[i], bb[j]);\n"
        "#pragma unroll\n"
        "    for (int i = 0; i < MI; ++i)\n"
        "#pragma unroll\n"
        "      for (int j = 0; j < NI; ++j) tsr_mma(t[i][j], abw[i], bl[j]);\n"
        "#pragma unroll\n"
        "    for (int i = 0; i < MI; ++i)\n"
        "#pragma unroll\n"
        "      for (int j = 0; j < NI; ++j) tsr_mma(t[i][j], abw[i], bb[j]);\n"
        "#pragma unroll\n"
        "    for (int i = 0; i < MI; ++i)\n"
        "#pragma unroll\n"
        "      for (int j = 0; j < NI; ++j)\n"
        "#pragma unroll\n"
        "        for (int r = 0; r < 4; ++r) acc[i][j][r] += t[i][j][r];\n"
        "  }\n}\n\n");
    return;
  }
  put(s,
      "#pragma unroll\n"
      "      for (int e = 0; e < GA; ++e)\n"
      "#pragma unroll\n"
      "        for (int j = 0; j < NI; ++j) {\n");
  /* The MMAs of one 16x8 tile and K step (docs/accuracy.md). chain: straight
   * into the accumulator, where every MMA truncates at the accumulator's
   * magnitude (a bias linear in K); step: a partial sum from zero (small
   * products first), promoted into the FP32 accumulator by an IEEE add. */
  if (g->x3 && g->chain)
    put(s,
        "          tsr_mma(acc[ig * GA + e][j], al[e], bb[j]);\n"
        "          tsr_mma(acc[ig * GA + e][j], ab[e], bl[j]);\n"
        "          tsr_mma(acc[ig * GA + e][j], ab[e], bb[j]);\n");
  else if (g->x3)
    put(s,
        "          float t[4];\n"
        "          tsr_mma0(t, al[e], bb[j]);\n"
        "          tsr_mma(t, ab[e], bl[j]);\n"
        "          tsr_mma(t, ab[e], bb[j]);\n"
        "#pragma unroll\n"
        "          for (int r = 0; r < 4; ++r) acc[ig * GA + e][j][r] += t[r];\n");
  else if (g->chain)
    put(s, "          tsr_mma(acc[ig * GA + e][j], ab[e], bb[j]); // tf32: big parts only\n");
  else
    put(s,
        "          float t[4];\n"
        "          tsr_mma0(t, ab[e], bb[j]); // tf32: big parts only\n"
        "#pragma unroll\n"
        "          for (int r = 0; r < 4; ++r) acc[ig * GA + e][j][r] += t[r];\n");
  put(s,
      "        }\n"
      "    }\n"
      "  }\n}\n\n");
}

/* Strict recomputation of a non-finite tensor-core accumulator (docs/
 * accuracy.md): an Inf or NaN input, or a big part that rounds up to Inf
 * near FLT_MAX, makes the split's products produce NaN where IEEE FP32 gives
 * +-Inf (Inf x 0 between a big part and a zero small part). Only such
 * outputs are recomputed, by an FFMA loop over the CTA's K range reading the
 * user's A and B, so the NaN/Inf class of every output is the strict one;
 * finite outputs never take this path. */
void tsr__emit_fix(tsr__sb *s, const tsr__emit_geo *g) {
  const tsr__emit_operand *oa = &g->a, *ob = &g->b;
  long long lda = oa->packed ? oa->src_ld : oa->ld, sa = oa->packed ? oa->src_stride : oa->stride;
  long long ldb = ob->packed ? ob->src_ld : ob->ld, sb = ob->packed ? ob->src_stride : ob->stride;
  int ak = oa->packed ? oa->src_kmajor : oa->kmajor, bk = ob->packed ? ob->src_kmajor : ob->kmajor;
  char ia[96], ib[96];
  if (ak) snprintf(ia, sizeof ia, "(tsr_idx)row * %lld + k", lda);
  else snprintf(ia, sizeof ia, "(tsr_idx)k * %lld + row", lda);
  if (bk) snprintf(ib, sizeof ib, "(tsr_idx)col * %lld + k", ldb);
  else snprintf(ib, sizeof ib, "(tsr_idx)k * %lld + col", ldb);
  put(s,
      "__device__ __forceinline__ bool tsr_finite(float v) { return fabsf(v) <= 3.402823466e+38f; }\n"
      "// the user's A and B (not packed copies), in their own layout\n"
      "__device__ __noinline__ float tsr_fix(const float *__restrict__ A, const float *__restrict__ B,\n"
      "                                      int bz, int row, int col, int k0, int k1) {\n"
      "  if (row >= M || col >= N) return 0.0f; // a tile-tail element: never stored\n"
      "  const float *a = A + (tsr_idx)bz * %lld, *b = B + (tsr_idx)bz * %lld;\n"
      "  float sum = 0.0f;\n"
      "  for (int k = k0; k < k1; ++k) sum = fmaf(a[%s], b[%s], sum);\n"
      "  return sum;\n"
      "}\n\n",
      sa, sb, ia, ib);
}

/* ---- wgmma families (docs/emit.md "wgmma") ------------------------------------
 * Hopper's warpgroup MMA, wgmma.mma_async m64n<WN>k8 .tf32, both operands
 * read from shared memory through 64-bit matrix descriptors. Layout: each
 * operand tile (rows x = m or n, BK deep, k-major) is stored as 8-row x
 * 16-byte "core matrices" (no swizzle): element (r, c) at float
 *   ((r / 8) * (BK / 4) + c / 4) * 32 + (r % 8) * 4 + c % 4,
 * so the two core matrices of an 8-deep K step are LBO = 128 bytes apart and
 * consecutive 8-row groups SBO = BK * 32 bytes apart (PTX ISA, "Shared
 * Memory Matrix Layout", K-major, no swizzle). */

/* The PTX of the wgmma families (inside the emulated section). */
static void emit_ptx_wg(sb_t *s, const tsr__emit_geo *g) {
  int wn = g->plan.wn, nr = wn / 2;
  put(s, WG_SYNC_SRC);
  if (g->producer) {
    put(s, MBAR_SRC);
    if (g->pbulk)
      put(s, BULK_SRC);
    if (g->maxnreg && g->pbulk)
      put(s, SETMAXNREG_BULK_FMT, TSR__WG_BULK_PRODUCER_REGS, TSR__WG_BULK_CONSUMER_REGS);
    else if (g->maxnreg)
      put(s,
          "// 384 threads start at 168 registers (64512 per CTA): the producer gives 80 to\n"
          "// each consumer thread (88 x 128 + 208 x 256 = 64512)\n"
          SETMAXNREG_PAIR_FMT,
          TSR__WG_PRODUCER_REGS, TSR__WG_CONSUMER_REGS);
    else if (g->wgs == 2)
      put(s,
          "// consumers within the even share (384 threads, up to 168 registers each):\n"
          "// no setmaxnreg, so no exact register count is needed\n"
          "__device__ __forceinline__ void tsr_producer_regs() {}\n"
          "__device__ __forceinline__ void tsr_consumer_regs() {}\n");
    else
      put(s,
          "__device__ __forceinline__ void tsr_producer_regs() {} // 256 threads: 255 registers each\n"
          "__device__ __forceinline__ void tsr_consumer_regs() {}\n");
  }
  put(s,
      "// d (%d registers) = A(64 x 8) * B(8 x %d) + (scale_d ? d : 0); A, B by descriptor\n"
      "__device__ __forceinline__ void tsr_wgmma(float (&d)[%d], unsigned long long da,\n"
      "                                          unsigned long long db, int scale_d) {\n"
      "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n"
      "               \"wgmma.mma_async.sync.aligned.m64n%dk8.f32.tf32.tf32 {",
      nr, wn, nr, nr + 2, wn);
  for (int i = 0; i < nr; i++) put(s, "%s%%%d", i ? (i % 16 ? ", " : ",\"\n               \" ") : "", i);
  put(s, "}, %%%d, %%%d, p, 1, 1;\\n}\\n\"\n               : ", nr, nr + 1);
  for (int i = 0; i < nr; i++) put(s, "%s\"+f\"(d[%d])", i ? (i % 8 ? ", " : ",\n                 ") : "", i);
  put(s, "\n               : \"l\"(da), \"l\"(db), \"r\"(scale_d));\n}\n");
}

/* Core-matrix offset, descriptor, tile loads and the in-place split. */
static void emit_wg_helpers(sb_t *s, const tsr__emit_geo *g) {
  put(s,
      "// acc += part, IEEE adds; each part register is pinned after the wait_group before\n"
      "__device__ __forceinline__ void tsr_wg_promote(float (&acc)[WN / 2], float (&part)[WN / 2]) {\n"
      "#pragma unroll\n"
      "  for (int r = 0; r < WN / 2; ++r) { tsr_wg_pin(part[r]); acc[r] += part[r]; }\n"
      "}\n");
  put(s,
      "// core-matrix layout (no swizzle): (row r, k c) of a k-major tile, in floats\n"
      "__device__ __forceinline__ int tsr_soff(int r, int c) {\n"
      "  return ((r >> 3) * (BK / 4) + (c >> 2)) * 32 + (r & 7) * 4 + (c & 3);\n"
      "}\n"
      "// shared-memory matrix descriptor (PTX ISA \"Matrix Descriptor Format\"): start\n"
      "// address >> 4 in bits 0-13, leading byte offset >> 4 in 16-29, stride byte\n"
      "// offset >> 4 in 32-45, base offset 0, swizzle 0 (none)\n"
      "static constexpr unsigned LBO = 128, SBO = BK * 32; // bytes: next K core matrix, next 8 rows\n"
      "__device__ __forceinline__ unsigned long long tsr_desc(unsigned saddr) {\n"
      "  return (unsigned long long)((saddr & 0x3FFFFu) >> 4) |\n"
      "         ((unsigned long long)(LBO >> 4) << 16) | ((unsigned long long)(SBO >> 4) << 32);\n"
      "}\n\n");
  for (int i = 0; i < 2; i++) {
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    char U = (char)(o->name - 32);
    const char *EXT = o->name == 'a' ? "M" : "N", *BMN = o->name == 'a' ? "BM" : "BN";
    int v = o->vec, tx = o->tail, tk = o->tk;
    put(s,
        "// %c tile (%s x BK, k-contiguous%s) -> core matrices: 8 consecutive threads\n"
        "// copy the 8 rows of one core matrix (128 contiguous bytes: no bank conflict)\n"
        "// (LT loading threads, this one tid)\n"
        "template <int LT>\n"
        "__device__ __forceinline__ void tsr_load_%c(float *s, const float *__restrict__ g, int x0, int k0,\n"
        "                                           int tid) {\n"
        "  constexpr int V = %d, CPR = BK / V, TOTAL = %s * CPR;\n"
        "#pragma unroll\n"
        "  for (int it = 0; it < (TOTAL + LT - 1) / LT; ++it) {\n"
        "    const int e = tid + it * LT;\n"
        "    if (TOTAL %% LT != 0 && e >= TOTAL) break;\n"
        "    const int r = (e / (8 * CPR)) * 8 + (e & 7), c = ((e >> 3) %% CPR) * V;\n",
        U, BMN, o->packed ? ", packed" : "", o->name, v, BMN);
    if (tx || tk) {
      put_copy_bytes(s, tx, tk, "x0", EXT, "k0", "K", "c");
      put(s,
          "    const float *src = bytes ? g + (tsr_idx)(x0 + r) * LD%c + (k0 + c) : g;\n"
          "    tsr_cp%d(s + tsr_soff(r, c), src, bytes);\n",
          U, v * 4);
    } else {
      put(s, "    tsr_cp%d(s + tsr_soff(r, c), g + (tsr_idx)(x0 + r) * LD%c + (k0 + c), %d);\n", v * 4, U,
          v * 4);
    }
    put(s, "  }\n}\n\n");
  }
  for (int i = 0; g->preg && i < 2; i++) {
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    char U = (char)(o->name - 32);
    const char *EXT = o->name == 'a' ? "M" : "N", *BMN = o->name == 'a' ? "BM" : "BN";
    int tx = o->tail, tk = o->tk;
    /* one float4 = 4 consecutive k of one row: the cp.async mapping with V = 4 */
    put(s,
        "// split=producer-reg: the producer thread's float4s of %c's K block (zeros outside)\n"
        "__device__ __forceinline__ void tsr_ldg_%c(float4 (&v)[NV%c], const float *__restrict__ g, int x0,\n"
        "                                          int k0, int tid) {\n"
        "  constexpr int CPR = BK / 4, TOTAL = %s * CPR;\n"
        "#pragma unroll\n"
        "  for (int it = 0; it < NV%c; ++it) {\n"
        "    const int e = tid + it * 128;\n"
        "    if (TOTAL %% 128 != 0 && e >= TOTAL) break;\n"
        "    const int r = (e / (8 * CPR)) * 8 + (e & 7), c = ((e >> 3) %% CPR) * 4;\n",
        U, o->name, U, BMN, U);
    if (o->vec == 4 && !tx && !tk)
      put(s,
          "    v[it] = *reinterpret_cast<const float4 *>(g + (tsr_idx)(x0 + r) * LD%c + (k0 + c));\n",
          U);
    else {
      put(s, "    float q[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n");
      if (tx) put(s, "    if (x0 + r < %s) {\n", EXT);
      else put(s, "    {\n");
      put(s, "      const float *src = g + (tsr_idx)(x0 + r) * LD%c + (k0 + c);\n", U);
      if (o->vec == 4 && tk)
        put(s,
            "      if (k0 + c + 3 < K) { const float4 f = *reinterpret_cast<const float4 *>(src);\n"
            "        q[0] = f.x; q[1] = f.y; q[2] = f.z; q[3] = f.w; }\n"
            "      else\n"
            "#pragma unroll\n"
            "        for (int u = 0; u < 4; ++u) if (k0 + c + u < K) q[u] = src[u];\n");
      else if (o->vec == 4)
        put(s,
            "      const float4 f = *reinterpret_cast<const float4 *>(src);\n"
            "      q[0] = f.x; q[1] = f.y; q[2] = f.z; q[3] = f.w;\n");
      else
        put(s,
            "#pragma unroll\n"
            "      for (int u = 0; u < 4; ++u) if (%s) q[u] = src[u];\n",
            tk ? "k0 + c + u < K" : "true");
      put(s, "    }\n    v[it] = make_float4(q[0], q[1], q[2], q[3]);\n");
    }
    put(s,
        "  }\n}\n"
        "// ... split into the TF32 planes of a stage (core-matrix layout)\n"
        "__device__ __forceinline__ void tsr_sts_%c(float *t, const float4 (&v)[NV%c], int tid) {\n"
        "  constexpr int CPR = BK / 4, TOTAL = %s * CPR;\n"
        "#pragma unroll\n"
        "  for (int it = 0; it < NV%c; ++it) {\n"
        "    const int e = tid + it * 128;\n"
        "    if (TOTAL %% 128 != 0 && e >= TOTAL) break;\n"
        "    const int r = (e / (8 * CPR)) * 8 + (e & 7), c = ((e >> 3) %% CPR) * 4;\n"
        "    const float xs[4] = {v[it].x, v[it].y, v[it].z, v[it].w};\n",
        o->name, U, BMN, U);
    put(s, "%s    *reinterpret_cast<uint4 *>(t + tsr_soff(r, c)) = h4;\n", split4_source);
    if (g->x3)
      put(s,
          "    uint4 l4; l4.x = lo[0]; l4.y = lo[1]; l4.z = lo[2]; l4.w = lo[3];\n"
          "    *reinterpret_cast<uint4 *>(t + %s * BK + tsr_soff(r, c)) = l4;\n",
          BMN);
    put(s, "  }\n}\n\n");
  }
  put(s,
      "// Split a landed tile of n floats (src; t itself when split in place), once per\n"
      "// element, by lt threads (this one tid): big = tf32(x) at t%s.\n"
      "// A non-finite big part gets a zero small part (such outputs are recomputed by tsr_fix).\n"
      "__device__ __forceinline__ void tsr_split_tile(const float *src, float *t, int n, int tid, int lt) {\n"
      "  for (int e = tid * 4; e < n; e += lt * 4) {\n"
      "    const float4 x = *reinterpret_cast<const float4 *>(src + e);\n"
      "    const float xs[4] = {x.x, x.y, x.z, x.w};\n",
      g->x3 ? ", small = tf32(x - big) one tile further (t + n)" : "");
  put(s, "%s    *reinterpret_cast<uint4 *>(t + e) = h4;\n", split4_source);
  if (g->x3)
    put(s,
        "    uint4 l4; l4.x = lo[0]; l4.y = lo[1]; l4.z = lo[2]; l4.w = lo[3];\n"
        "    *reinterpret_cast<uint4 *>(t + n + e) = l4;\n");
  put(s,
      "  }\n}\n"
      "__device__ __forceinline__ void tsr_split_stage(float *as, float *bs) {\n"
      "  tsr_split_tile(as, as, BM * BK, (int)threadIdx.x, NT);\n"
      "  tsr_split_tile(bs, bs, BN * BK, (int)threadIdx.x, NT);\n"
      "}\n\n");
}

/* The main kernel's signature, launch bounds (minblocks >= 1: registers
 * capped for that many blocks per SM) and the walk's tile. */
static void put_main_open(sb_t *s, const tsr__emit_geo *g) {
  const tsr_plan *pl = &g->plan;
  int tailk = pl->tailk > 0;
  char bounds[48];
  if (g->ffprod && g->ff_pthreads) /* + the producer's threads (a warpgroup, or one warp with TMA copies) */
    snprintf(bounds, sizeof bounds, "NT + %d, %d", g->ff_plaunch, g->ff_blocks);
  else if (g->ffprod) /* split=tma: no producer */
    snprintf(bounds, sizeof bounds, "NT, %d", g->ff_blocks);
  else if (pl->minblocks >= 1) snprintf(bounds, sizeof bounds, "NT, %d", pl->minblocks);
  else snprintf(bounds, sizeof bounds, "NT");
  put(s,
      "extern \"C\" __global__ void __launch_bounds__(%s)\n"
      "tsr_gemm_main(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,\n"
      "              float *__restrict__ W, float alpha, float beta%s%s) {\n"
      "  unsigned tile_row, tile_col;\n",
      bounds,
      g->fftma ? ",\n              const __grid_constant__ tsr_tmap tmA, const __grid_constant__ tsr_tmap tmB"
          : "",
      pl->lazy ? ",\n              unsigned epoch /* lazy: the runtime's call count */" : "");
  if (tailk)
    put(s,
        "  // tailk: program TAIL_D + j is slice j / TAIL_R of tile TAIL_D + j %% TAIL_R\n"
        "  const bool part = blockIdx.x >= TAIL_D;\n"
        "  const unsigned unit = blockIdx.x - TAIL_D; // j, when part\n"
        "  tsr_walk(part ? TAIL_D + unit %% TAIL_R : blockIdx.x, tile_row, tile_col);\n");
  else put(s, "  tsr_walk(blockIdx.x, tile_row, tile_col);\n");
}

/* The main kernel's entry, common to the tiled families: the opening, the
 * tile's origin, the batch item's operand bases (packed: the prologue's
 * copies in W, described by `packed`), and the split-K slice's K-block
 * range and output (the partials in W, or C). */
static void emit_entry(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g, const char *packed) {
  const tsr_plan *pl = &g->plan;
  put_main_open(s, g);
  put(s, "  const int m0 = (int)tile_row * BM, n0 = (int)tile_col * BN;\n");
  const char *abase = g->a.packed ? "W + WOFF_A" : "A", *bbase = g->b.packed ? "W + WOFF_B" : "B";
  if (g->a.packed || g->b.packed) put(s, "  // packed operands: the prologue's %s in W\n", packed);
  if (p->batch > 1)
    put(s,
        "  const int bz = (int)blockIdx.z; // batch item\n"
        "  const float *__restrict__ Ag = %s + (tsr_idx)bz * SA;\n"
        "  const float *__restrict__ Bg = %s + (tsr_idx)bz * SB;\n",
        abase, bbase);
  else
    put(s,
        "  const int bz = 0;\n"
        "  const float *__restrict__ Ag = %s;\n"
        "  const float *__restrict__ Bg = %s;\n",
        abase, bbase);
  put_slice_range(s, pl->splitk, pl->tailk);
}

/* The main kernel of the wgmma families. Per K block `it` (slot it % S):
 *  (B) refill: block it+S-1 -> slot (it-1) % S, whose wgmmas every thread
 *      completed before the previous iteration's last barrier;
 *  (C) per chunk (m64 slice x wn columns): wgmma.fence, the K steps' MMAs
 *      (x3: small x big, big x small, big x big; the first from a zero
 *      accumulator, scale-d = 0), commit; acc=step: wait and promote the
 *      chunk's partial sum into the FP32 accumulators (all chunks but the last);
 *  (D) while the last chunk runs: wait for block it+1's copies, barrier,
 *      split it in place, proxy fence; then wait for the wgmmas, promote the
 *      last chunk, barrier (the split is visible, slot it is free). */
static void emit_main_wg(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  int step = !g->chain;
  emit_entry(s, p, g, "k-contiguous copies");
  put(s,
      "  float acc[MW][NC][WN / 2]; // per warpgroup: MW m64 slices x NC chunks of WN columns\n"
      "#pragma unroll\n  for (int i = 0; i < MW; ++i)\n"
      "#pragma unroll\n    for (int j = 0; j < NC; ++j)\n"
      "#pragma unroll\n      for (int r = 0; r < WN / 2; ++r) acc[i][j][r] = 0.0f;\n");
  if (step)
    put(s,
        "  float part[PARTS][WN / 2]; // 8-deep K steps' partial sums (acc=step)\n"
        "#pragma unroll\n  for (int q = 0; q < PARTS; ++q)\n"
        "#pragma unroll\n    for (int r = 0; r < WN / 2; ++r) part[q][r] = 0.0f;\n");
  put(s,
      "  float *smem = tsr_dynamic_smem();\n"
      "  float *As = smem;                    // STAGES x (A big%s)\n"
      "  float *Bs = smem + STAGES * A_STAGE; // STAGES x (B big%s)\n"
      "  const unsigned sa = tsr_smem_addr(As), sb = tsr_smem_addr(Bs);\n"
      "  const int wg = (int)threadIdx.x >> 7; // warpgroup: rows wg * WM .. + WM of the tile\n"
      "  const int nk = kb_end - kb_begin;\n",
      g->x3 ? ", A small" : "", g->x3 ? ", B small" : "");
  if (g->producer) {
    /* split=producer (warp specialization): warpgroup WGS copies each K
     * block into a raw buffer (cp.async, RAW blocks in flight), splits it
     * into the TF32 planes of its stage and signals the stage's full
     * mbarrier; the consumer warpgroups wait on it, multiply and signal the
     * stage's empty mbarrier once their wgmmas have read it. No CTA-wide
     * barrier after the role split. */
    if (g->preg || g->ppack)
      put(s,
          "  // mbarriers: full[st] at bars + 8 st (%s),\n"
          "  // empty[st] at bars + 8 (STAGES + st) (the consumers' 128 WGS threads arrive)\n"
          "  const unsigned bars = tsr_smem_addr(smem + STAGES * (A_STAGE + B_STAGE));\n",
          g->pbulk ? "one producer thread arrives, and the stage's bulk copies complete"
                   : "the producer's 128 threads arrive");
    else
      put(s,
          "  float *Ar = smem + STAGES * (A_STAGE + B_STAGE); // RAW x A (unsplit copies)\n"
          "  float *Br = Ar + RAW * BM * BK;                  // RAW x B\n"
          "  // mbarriers: full[st] at bars + 8 st (the producer's 128 threads arrive),\n"
          "  // empty[st] at bars + 8 (STAGES + st) (the consumers' 128 WGS threads arrive)\n"
          "  const unsigned bars = tsr_smem_addr(Br + RAW * BN * BK);\n");
    put(s,
        "  if (threadIdx.x == 0)%s\n"
        "    for (int st = 0; st < STAGES; ++st) {\n"
        "      tsr_mbar_init(bars + 8u * st, %s);\n"
        "      tsr_mbar_init(bars + 8u * (STAGES + st), 128u * WGS);\n"
        "    }%s\n"
        "  __syncthreads(); // the mbarriers are initialized (the last CTA-wide barrier)\n"
        "  if (wg == WGS) { // producer warpgroup\n"
        "    tsr_producer_regs();\n"
        "    const int pt = (int)threadIdx.x - 128 * WGS;\n",
        g->pbulk ? " {" : "", g->pbulk ? "1u" : "128u",
        g->pbulk ? "\n    tsr_mbar_init_fence(); // the bulk copies complete on them\n  }" : "");
    if (g->preg)
      put(s,
          "    // two K blocks in flight in registers (sets 0 and 1, even and odd blocks):\n"
          "    // block it+2 is loaded right after block it is stored, so a load's latency\n"
          "    // passes while the other set is stored and the producer waits for stages\n"
          "    float4 va[2][NVA], vb[2][NVB];\n"
          "#pragma unroll\n"
          "    for (int q = 0; q < 2; ++q)\n"
          "      if (q < nk) {\n"
          "        tsr_ldg_a(va[q], Ag, m0, (kb_begin + q) * BK, pt);\n"
          "        tsr_ldg_b(vb[q], Bg, n0, (kb_begin + q) * BK, pt);\n"
          "      }\n"
          "    for (int i2 = 0; i2 < nk; i2 += 2)\n"
          "#pragma unroll\n"
          "      for (int q = 0; q < 2; ++q) { // unrolled: the register sets stay static\n"
          "        const int it = i2 + q, st = it %% STAGES;\n"
          "        if (it >= nk) break;\n"
          "        tsr_mbar_wait(bars + 8u * (STAGES + st), ((it / STAGES) & 1) ^ 1); // stage free\n"
          "        tsr_sts_a(As + st * A_STAGE, va[q], pt);\n"
          "        tsr_sts_b(Bs + st * B_STAGE, vb[q], pt);\n"
          "        tsr_proxy_fence(); // the planes -> the async proxy (wgmma)\n"
          "        tsr_mbar_arrive(bars + 8u * st);\n"
          "        if (it + 2 < nk) {\n"
          "          tsr_ldg_a(va[q], Ag, m0, (kb_begin + it + 2) * BK, pt);\n"
          "          tsr_ldg_b(vb[q], Bg, n0, (kb_begin + it + 2) * BK, pt);\n"
          "        }\n"
          "      }\n"
          "    return;\n"
          "  }\n");
    else if (g->pbulk) {
      /* the pack prologue wrote the planes tile by tile in the stage's
       * layout: a stage is one bulk copy per plane, issued by one thread
       * (no per-thread addresses, no proxy fence: the copies write through
       * the async proxy and complete on the full mbarrier) */
      put(s, "    // split=producer-bulk: tile (x0, k block kb) of a plane at x0 * LD + kb * BMN * BK\n");
      put(s,
          "    if (pt == 0) {\n"
          "      const float *at = Ag + (tsr_idx)m0 * LDA, *bt = Bg + (tsr_idx)n0 * LDB;\n"
          "      for (int it = 0; it < nk; ++it) {\n"
          "        const int st = it %% STAGES;\n"
          "        tsr_mbar_wait(bars + 8u * (STAGES + st), ((it / STAGES) & 1) ^ 1); // stage free\n"
          "        tsr_mbar_arrive_tx(bars + 8u * st, 4u * (A_STAGE + B_STAGE));\n"
          "        const tsr_idx ka = (tsr_idx)(kb_begin + it) * (BM * BK), kb = (tsr_idx)(kb_begin + it) * (BN * BK);\n"
          "        tsr_bulk(As + st * A_STAGE, at + ka, 4u * BM * BK, bars + 8u * st);\n"
          "        tsr_bulk(Bs + st * B_STAGE, bt + kb, 4u * BN * BK, bars + 8u * st);\n");
      if (g->x3)
        put(s,
            "        tsr_bulk(As + st * A_STAGE + BM * BK, at + (WOFF_AS - WOFF_A) + ka, 4u * BM * BK, bars + 8u * st);\n"
            "        tsr_bulk(Bs + st * B_STAGE + BN * BK, bt + (WOFF_BS - WOFF_B) + kb, 4u * BN * BK, bars + 8u * st);\n");
      put(s,
          "      }\n"
          "    }\n"
          "    return;\n"
          "  }\n");
    } else if (g->ppack) {
      /* the pack prologue wrote the TF32 planes: the producer only copies
       * them into the stage, STAGES - 1 blocks in flight, and each thread
       * arrives on full once its own copies of the block landed */
      put(s, "    // split=producer-pack: the prologue's TF32 planes, %s\n",
          g->x3 ? "big at Ag, small at Ag + (WOFF_AS - WOFF_A)" : "big parts only (tf32)");
      if (g->x3)
        put(s, "    const float *Ags = Ag + (WOFF_AS - WOFF_A), *Bgs = Bg + (WOFF_BS - WOFF_B);\n");
      const char *copy_x3 =
          "          tsr_load_a<128>(As + %s * A_STAGE + BM * BK, Ags, m0, (kb_begin + %s) * BK, pt);\n"
          "          tsr_load_b<128>(Bs + %s * B_STAGE + BN * BK, Bgs, n0, (kb_begin + %s) * BK, pt);\n";
      put(s,
          "#pragma unroll\n"
          "    for (int st = 0; st < STAGES - 1; ++st) {\n"
          "      if (st < nk) {\n"
          "          tsr_load_a<128>(As + st * A_STAGE, Ag, m0, (kb_begin + st) * BK, pt);\n"
          "          tsr_load_b<128>(Bs + st * B_STAGE, Bg, n0, (kb_begin + st) * BK, pt);\n");
      if (g->x3) put(s, copy_x3, "st", "st", "st", "st");
      put(s,
          "      }\n"
          "      tsr_cp_commit();\n"
          "    }\n"
          "    for (int it = 0; it < nk; ++it) {\n"
          "      tsr_cp_wait<STAGES - 2>(); // block it landed (this thread's copies)\n"
          "      tsr_proxy_fence();          // the planes -> the async proxy (wgmma)\n"
          "      tsr_mbar_arrive(bars + 8u * (it %% STAGES));\n"
          "      const int nx = it + STAGES - 1;\n"
          "      if (nx < nk) { // into the stage of block it-1, once the consumers free it\n"
          "        const int sx = nx %% STAGES;\n"
          "        tsr_mbar_wait(bars + 8u * (STAGES + sx), ((nx / STAGES) & 1) ^ 1);\n"
          "          tsr_load_a<128>(As + sx * A_STAGE, Ag, m0, (kb_begin + nx) * BK, pt);\n"
          "          tsr_load_b<128>(Bs + sx * B_STAGE, Bg, n0, (kb_begin + nx) * BK, pt);\n");
      if (g->x3) put(s, copy_x3, "sx", "nx", "sx", "nx");
      put(s,
          "      }\n"
          "      tsr_cp_commit();\n"
          "    }\n"
          "    return;\n"
          "  }\n");
    } else
      put(s,
          "#pragma unroll\n"
          "    for (int st = 0; st < RAW - 1; ++st) {\n"
          "      if (st < nk) {\n"
          "        tsr_load_a<128>(Ar + st * BM * BK, Ag, m0, (kb_begin + st) * BK, pt);\n"
          "        tsr_load_b<128>(Br + st * BN * BK, Bg, n0, (kb_begin + st) * BK, pt);\n"
          "      }\n"
          "      tsr_cp_commit();\n"
          "    }\n"
          "    for (int it = 0; it < nk; ++it) {\n"
          "      tsr_cp_wait<RAW - 2>(); // block it landed (this thread's copies)\n"
          "      tsr_producer_sync();    // ... everyone's; and everyone split block it-1\n"
          "      const int nx = it + RAW - 1;\n"
          "      if (nx < nk) { // raw buffer of block it-1\n"
          "        tsr_load_a<128>(Ar + (nx %% RAW) * BM * BK, Ag, m0, (kb_begin + nx) * BK, pt);\n"
          "        tsr_load_b<128>(Br + (nx %% RAW) * BN * BK, Bg, n0, (kb_begin + nx) * BK, pt);\n"
          "      }\n"
          "      tsr_cp_commit();\n"
          "      const int st = it %% STAGES, r = it %% RAW;\n"
          "      tsr_mbar_wait(bars + 8u * (STAGES + st), ((it / STAGES) & 1) ^ 1); // stage free\n"
          "      tsr_split_tile(Ar + r * BM * BK, As + st * A_STAGE, BM * BK, pt, 128);\n"
          "      tsr_split_tile(Br + r * BN * BK, Bs + st * B_STAGE, BN * BK, pt, 128);\n"
          "      tsr_proxy_fence(); // the planes -> the async proxy (wgmma)\n"
          "      tsr_mbar_arrive(bars + 8u * st);\n"
          "    }\n"
          "    return;\n"
          "  }\n");
    put(s,
        "  tsr_consumer_regs();\n"
        "  for (int it = 0; it < nk; ++it) {\n"
        "    const int cur = it %% STAGES;\n"
        "    tsr_mbar_wait(bars + 8u * cur, (it / STAGES) & 1); // block it's planes written\n"
        "    const unsigned a0 = sa + 4u * (unsigned)(cur * A_STAGE + wg * WM * BK);\n"
        "    const unsigned b0 = sb + 4u * (unsigned)(cur * B_STAGE);\n");
  } else {
    put(s,
        "#pragma unroll\n"
        "  for (int st = 0; st < STAGES - 1; ++st) {\n"
        "    if (st < nk) {\n"
        "      tsr_load_a<NT>(As + st * A_STAGE, Ag, m0, (kb_begin + st) * BK, (int)threadIdx.x);\n"
        "      tsr_load_b<NT>(Bs + st * B_STAGE, Bg, n0, (kb_begin + st) * BK, (int)threadIdx.x);\n"
        "    }\n"
        "    tsr_cp_commit();\n"
        "  }\n"
        "  tsr_cp_wait<STAGES - 2>(); // block 0 landed (this thread's copies)\n"
        "  __syncthreads();           // ... everyone's\n"
        "  tsr_split_stage(As, Bs);\n"
        "  tsr_proxy_fence();\n"
        "  __syncthreads();\n"
        "  for (int it = 0; it < nk; ++it) {\n"
        "    {\n"
        "      const int nx = it + STAGES - 1;\n"
        "      if (nx < nk) { // slot of block it-1: its wgmmas completed before the last barrier\n"
        "        const int slot = nx %% STAGES;\n"
        "        tsr_load_a<NT>(As + slot * A_STAGE, Ag, m0, (kb_begin + nx) * BK, (int)threadIdx.x);\n"
        "        tsr_load_b<NT>(Bs + slot * B_STAGE, Bg, n0, (kb_begin + nx) * BK, (int)threadIdx.x);\n"
        "      }\n"
        "      tsr_cp_commit();\n"
        "    }\n"
        "    const int cur = it %% STAGES;\n"
        "    const unsigned a0 = sa + 4u * (unsigned)(cur * A_STAGE + wg * WM * BK);\n"
        "    const unsigned b0 = sb + 4u * (unsigned)(cur * B_STAGE);\n");
  }
  if (step) {
    /* acc=step: every 8-deep K step's MMAs start from zero and the step's
     * partial sum is promoted with an IEEE add, as in mma=tf32x3 (the tensor
     * core truncates inside each MMA at the scale of its largest term, the
     * accumulator included: a partial sum carried over several steps costs a
     * truncation at its own, growing, scale per MMA; docs/accuracy.md). With
     * PARTS = 2 the step s+1 is issued before step s is promoted. */
    put(s,
        "    constexpr int KS = BK / 8, NS = MW * NC * KS; // 8-deep steps of this K block\n"
        "#pragma unroll\n"
        "    for (int s = 0; s < NS; ++s) {\n"
        "      const int i = s / (NC * KS), j = (s / KS) %% NC, kk = s %% KS;\n"
        "      // step kk: two core matrices along k, 256 bytes further\n"
        "      const unsigned ab = a0 + 4u * (unsigned)(i * 64 * BK) + 256u * kk;\n"
        "      const unsigned bb = b0 + 4u * (unsigned)(j * WN * BK) + 256u * kk;\n"
        "      tsr_wg_fence();\n");
    if (g->x3)
      put(s,
          "      tsr_wgmma(part[s %% PARTS], tsr_desc(ab + 4u * BM * BK), tsr_desc(bb), 0); // small x big, from 0\n"
          "      tsr_wgmma(part[s %% PARTS], tsr_desc(ab), tsr_desc(bb + 4u * BN * BK), 1); // big x small\n"
          "      tsr_wgmma(part[s %% PARTS], tsr_desc(ab), tsr_desc(bb), 1);                // big x big\n");
    else
      put(s, "      tsr_wgmma(part[s %% PARTS], tsr_desc(ab), tsr_desc(bb), 0); // tf32: big parts, from 0\n");
    put(s,
        "      tsr_wg_commit();\n"
        "      if (PARTS == 2 && s > 0) { // step s-1 done (s may still run): promote it\n"
        "        tsr_wg_wait<1>();\n"
        "        tsr_wg_promote(acc[(s - 1) / (NC * KS)][((s - 1) / KS) %% NC], part[(s - 1) %% PARTS]);\n"
        "      } else if (PARTS == 1 && s + 1 < NS) {\n"
        "        tsr_wg_wait<0>();\n"
        "        tsr_wg_promote(acc[i][j], part[0]);\n"
        "      }\n"
        "    }\n");
  } else {
    put(s,
        "#pragma unroll\n"
        "    for (int c = 0; c < MW * NC; ++c) {\n"
        "      const int i = c / NC, j = c %% NC;\n"
        "      tsr_wg_fence();\n"
        "#pragma unroll\n"
        "      for (int kk = 0; kk < BK / 8; ++kk) {\n"
        "        // 8-deep K step kk: two core matrices along k, 256 bytes further\n"
        "        const unsigned ab = a0 + 4u * (unsigned)(i * 64 * BK) + 256u * kk;\n"
        "        const unsigned bb = b0 + 4u * (unsigned)(j * WN * BK) + 256u * kk;\n");
    if (g->x3)
      put(s,
          "        tsr_wgmma(acc[i][j], tsr_desc(ab + 4u * BM * BK), tsr_desc(bb), 1); // small x big\n"
          "        tsr_wgmma(acc[i][j], tsr_desc(ab), tsr_desc(bb + 4u * BN * BK), 1); // big x small\n"
          "        tsr_wgmma(acc[i][j], tsr_desc(ab), tsr_desc(bb), 1);                // big x big\n");
    else
      put(s, "        tsr_wgmma(acc[i][j], tsr_desc(ab), tsr_desc(bb), 1); // tf32: big parts only\n");
    put(s, "      }\n      tsr_wg_commit();\n    }\n");
  }
  if (!g->producer)
    put(s,
        "    if (it + 1 < nk) { // split block it+1 while the last step multiplies\n"
        "      tsr_cp_wait<STAGES - 2>();\n"
        "      __syncthreads();\n"
        "      const int nxt = (it + 1) %% STAGES;\n"
        "      tsr_split_stage(As + nxt * A_STAGE, Bs + nxt * B_STAGE);\n"
        "      tsr_proxy_fence();\n"
        "    }\n");
  put(s, "    tsr_wg_wait<0>();\n");
  if (step)
    put(s, "    tsr_wg_promote(acc[MW - 1][NC - 1], part[(NS - 1) %% PARTS]);\n");
  else
    put(s,
        "#pragma unroll\n    for (int i = 0; i < MW; ++i)\n"
        "#pragma unroll\n      for (int j = 0; j < NC; ++j)\n"
        "#pragma unroll\n        for (int r = 0; r < WN / 2; ++r) tsr_wg_pin(acc[i][j][r]);\n");
  if (g->producer)
    put(s,
        "    tsr_mbar_arrive(bars + 8u * (STAGES + cur)); // every wgmma of block it done: stage free\n"
        "  }\n");
  else
    put(s,
        "    __syncthreads(); // block it+1's split visible; every wgmma of block it done\n"
        "  }\n");
  /* Epilogue: the m64nNk8 D fragment (PTX ISA, wgmma "Register Fragments",
   * matrix D): warp q of the warpgroup owns rows 16q..16q+15; register
   * 4j + r of a lane holds (16q + g + 8 (r >> 1), 8j + 2t + (r & 1)),
   * g = lane / 4, t = lane % 4. */
  put(s,
      "  // D fragment: register 4j + r of lane (g, t) in warp q of the warpgroup holds\n"
      "  // row 16q + g + 8 (r >> 1), column 8j + 2t + (r & 1) of the m64 x WN chunk\n"
      "  const int lane = (int)threadIdx.x & 31, wq = ((int)threadIdx.x >> 5) & 3;\n"
      "  const int gq = lane >> 2, tq = lane & 3;\n"
      "  const int rw = m0 + wg * WM + wq * 16 + gq, cw = n0 + 2 * tq;\n"
      "  { // non-finite accumulators: strict recomputation over this CTA's K range\n"
      "    const int k0 = kb_begin * BK, k1 = kb_end * BK < K ? kb_end * BK : (int)K;\n"
      "#pragma unroll\n    for (int i = 0; i < MW; ++i)\n"
      "#pragma unroll\n      for (int j = 0; j < NC; ++j)\n"
      "#pragma unroll\n        for (int r = 0; r < WN / 2; ++r)\n"
      "          if (!tsr_finite(acc[i][j][r]))\n"
      "            acc[i][j][r] = tsr_fix(A, B, bz, rw + i * 64 + 8 * ((r & 3) >> 1),\n"
      "                                   cw + j * WN + 8 * (r >> 2) + (r & 1), k0, k1);\n"
      "  }\n"
      "#pragma unroll\n  for (int i = 0; i < MW; ++i)\n"
      "#pragma unroll\n    for (int j = 0; j < NC; ++j)\n"
      "#pragma unroll\n      for (int q = 0; q < WN / 8; ++q)\n"
      "#pragma unroll\n        for (int h = 0; h < 2; ++h)\n"
      "          tsr_store(out, rw + i * 64 + 8 * h, cw + j * WN + 8 * q, alpha, beta,\n"
      "                    acc[i][j][4 * q + 2 * h], acc[i][j][4 * q + 2 * h + 1]);\n"
      "}\n\n");
}

/* One K block's loads of the staged operands into their shared-memory slots. */
static void put_stage_loads(sb_t *s, const tsr__emit_geo *g, const char *indent, const char *as,
                            const char *bs, const char *k) {
  if (g->a.staged) put(s, "%stsr_load_a(%s, Ag, m0, %s);\n", indent, as, k);
  if (g->b.staged) put(s, "%stsr_load_b(%s, Bg, n0, %s);\n", indent, bs, k);
}

/* kloop=1: each staged operand's copy of K block KB into ring slot SLOT
 * through its running pointer, then the pointers advance one K block while
 * GUARD holds (IND: the indentation). */
static void put_kloop_copies(sb_t *s, const tsr__emit_geo *g, const char *ind, const char *slot,
                             const char *kb, const char *guard) {
  for (int i = 0; i < 2; i++) {
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    if (o->staged)
      put(s, "%stsr_loadp_%c(%s%c%s + %s * %c_STAGE%s, p%c, %cg, %s, (kb_begin + %s) * BK);\n", ind,
          o->name, g->plan.kloop >= 2 ? "s" : "", o->name - 32, g->plan.kloop >= 2 ? "" : "s", slot,
          o->name - 32, g->plan.kloop >= 2 ? " * 4u" : "", o->name, o->name - 32,
          i ? "n0" : "m0", kb);
  }
  put(s, "%sif (%s) {", ind, guard);
  for (int i = 0; i < 2; i++) {
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    if (o->staged) put(s, " p%c += ADV_%c;", o->name, o->name - 32);
  }
  put(s, " }\n");
}

/* The kloop>=1 ring's start (IND: the indentation): each staged operand's
 * copy pointer at block kb_begin, kloop>=2's shared-window addresses, and
 * the copies of the first STAGES-1 blocks, one commit group each. */
static void put_kloop_prologue(sb_t *s, const tsr__emit_geo *g, const char *ind) {
  for (int i = 0; i < 2; i++) {
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    if (o->staged)
      put(s, "%sconst float *p%c = %cg + tsr_first_%c(%s, kb_begin * BK);\n", ind, o->name,
          o->name - 32, o->name, i ? "n0" : "m0");
  }
  if (g->plan.kloop >= 2)
    put(s, "%sconst unsigned %s; // shared-window byte addresses (kloop=2)\n", ind,
        g->a.staged && g->b.staged ? "sA = tsr_smem_addr(As), sB = tsr_smem_addr(Bs)"
        : g->a.staged              ? "sA = tsr_smem_addr(As)"
                                   : "sB = tsr_smem_addr(Bs)");
  char ind2[32], ind3[32];
  snprintf(ind2, sizeof ind2, "%s  ", ind);
  snprintf(ind3, sizeof ind3, "%s    ", ind);
  put(s,
      "#pragma unroll\n"
      "%sfor (int st = 0; st < STAGES - 1; ++st) {\n"
      "%sif (st < nk) {\n",
      ind, ind2);
  put_kloop_copies(s, g, ind3, "st", "st", "st + 1 < nk");
  put(s,
      "%s}\n"
      "%stsr_cp_commit();\n"
      "%s}\n",
      ind2, ind2, ind);
}

/* One K-block iteration of the kloop=1/2 ring (IND: the indentation): wait
 * for block it, copy block nx into slot WR, multiply block it from slot RD
 * with CALL (a tsr_block format taking the two slot pointers and k0). */
static void put_kloop_iteration(sb_t *s, const tsr__emit_geo *g, const char *ind, const char *rd,
                                const char *wr, const char *call) {
  put(s,
      "%stsr_cp_wait<STAGES - 2>(); // this thread's copies of block it have landed\n"
      "%s__syncthreads();           // ... and everyone's\n"
      "%sconst int nx = it + STAGES - 1 < nk ? it + STAGES - 1 : nk - 1;\n",
      ind, ind, ind);
  put_kloop_copies(s, g, ind, wr, "nx", "it + STAGES < nk");
  put(s, "%stsr_cp_commit();\n%s", ind, ind);
  char as[64], bs[64];
  snprintf(as, sizeof as, "As + %s * A_STAGE", rd);
  snprintf(bs, sizeof bs, "Bs + %s * B_STAGE", rd);
  put(s, call, as, bs, "(kb_begin + it) * BK");
}

/* kloop=4: block it's K steps 0..BK-2 written out, each loading step
 * kk+1's fragments, then issuing its share of the copies of block nx (the
 * unguarded operands' passes spread evenly over the BK steps, in pass
 * order; a guarded operand's whole copy at step 0), then step kk's FMAs.
 * The copies stay in program order with the fragment loads around them
 * (both touch shared memory), which spreads them through the block. The
 * last step's copies and the commit come before the barrier. */
static void put_spread_steps(sb_t *s, const tsr__emit_geo *g) {
  const int bk = g->plan.bk;
  int np[2] = {0, 0}, st[2] = {0, 0}, ds[2] = {0, 0}, vw[2] = {0, 0};
  for (int i = 0; i < 2; i++) np[i] = copy_passes(i ? &g->b : &g->a, &st[i], &ds[i], &vw[i]);
  int total = np[0] + np[1];
  put(s, "    const float *as = As + rd * A_STAGE, *bs = Bs + rd * B_STAGE;\n");
  for (int i = 0; i < 2; i++)
    if (np[i])
      put(s, "    const unsigned d%c = tsr_dst_%c(s%c + wr * %c_STAGE * 4u);\n", 'A' + i, 'a' + i,
          'A' + i, 'A' + i);
  int j = 0; /* the next pass to issue, over A's then B's */
  for (int kk = 0; kk < bk; kk++) {
    put(s, "    // K step %d\n", kk);
    if (kk + 1 < bk) put(s, "    tsr_frag(fa[%d], fb[%d], as, bs, %d);\n", (kk + 1) & 1, (kk + 1) & 1, kk + 1);
    if (kk == 0)
      for (int i = 0; i < 2; i++)
        if (!np[i])
          put(s, "    tsr_loadp_%c(s%c + wr * %c_STAGE * 4u, p%c, %cg, %s, (kb_begin + nx) * BK);\n",
              'a' + i, 'A' + i, 'A' + i, 'a' + i, 'A' + i, i ? "n0" : "m0");
    int upto = (int)(((long long)(kk + 1) * total + bk - 1) / bk); /* passes issued by the end of step kk */
    if (kk == bk - 1) upto = total;
    for (; j < upto; j++) {
      int i = j < np[0] ? 0 : 1, q = i ? j - np[0] : j;
      put(s, "    tsr_cpo%d<%lldLL, (long long)%d * LD%c * 4>(d%c, p%c);\n", vw[i] * 4,
          (long long)q * ds[i], q * st[i], 'A' + i, 'A' + i, 'a' + i);
    }
    if (kk + 1 < bk) put(s, "    tsr_fma(acc, fa[%d], fb[%d]);\n", kk & 1, kk & 1);
  }
  put(s, "    tsr_cp_commit();\n    if (it + STAGES < nk) {");
  for (int i = 0; i < 2; i++) put(s, " p%c += ADV_%c;", 'a' + i, 'A' + i);
  put(s, " }\n");
}

/* split=producer-tma, split=tma: one TMA fill of ring slot `slot` with K
 * block `blk` of this CTA's range (A's bk x bm box, B's bk x bn), arriving
 * on the slot's full mbarrier with the two boxes' bytes */
static void put_tma_fill(sb_t *s, const tsr__emit_geo *g, const char *in, const char *slot,
                         const char *blk) {
  put(s,
      "%sconst unsigned bar = bars + 8u * %s;\n"
      "%sconst int k0 = (kb_begin + %s) * BK;\n"
      "%stsr_mbar_arrive_tx(bar, 4u * BK * (BM + BN));\n",
      in, slot, in, blk, in);
  /* a box's coordinates run contiguous axis first: (x, k), or (k, x) for
   * the [x][k] rows of a kfrag operand */
  for (int i = 0; i < 2; i++) {
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    const char *x0 = i ? "n0" : "m0";
    put(s, "%stsr_tma(%cs + %s * %c_STAGE, tm%c, %s, %s, bz, bar);\n", in, i ? 'B' : 'A', slot,
        i ? 'B' : 'A', i ? 'B' : 'A', o->srows_x ? "k0" : x0, o->srows_x ? x0 : "k0");
  }
}

/* The FFMA ring's consumers after reading slot rd (block it): free it for
 * the block STAGES on. With a producer, arrive on the slot's named barrier
 * (the producer waits there). split=tma: block j's slot is refilled by warp
 * (j + 1) % 4 one block later: that warp waits on the slot's barrier at the
 * end of block j+1 (the others left it a block ago, so it rarely waits) and
 * its lane 0 copies block j+STAGES; the other three arrive after reading
 * block j. The duty rotates because a CTA's warp w runs on the SM's
 * scheduler w: a fixed refiller's ~50 extra slots a block would load one
 * scheduler of four. Both sides skip the blocks never replaced (the last
 * STAGES), so every barrier phase completes. krel=2 (producer-tma) frees
 * the slots in pairs instead. */
static void put_ff_release(sb_t *s, const tsr__emit_geo *g) {
  if (!g->ffself && !g->fftma) {
    put(s, "    if (it + STAGES < nk) tsr_bar_arrive(1u + rd, NT + %du); // slot rd read: free\n",
        g->ff_pthreads);
    return;
  }
  /* TMA refills the slot through the async proxy: each reader fences its
   * reads first (tsr_proxy_fence; session 30: without it kunroll=1's ring
   * read refilled slots at 4096^3 on an H100) */
  if (!g->ffself && g->plan.krel == 2) {
    /* krel=2: slots freed in pairs, after every second block: one fence
     * (its membar) per two blocks; the producer gets block it-1's slot a
     * block later (every block with a refill has a successor, it + STAGES
     * < nk, so each pair completes) */
    put(s,
        "    if ((it & 1) && it - 1 + STAGES < nk) { // krel=2: blocks it-1 and it read\n"
        "      const unsigned pv = rd == 0 ? STAGES - 1 : rd - 1;\n"
        "      tsr_proxy_fence(); // both blocks' reads, before their slots' refills\n"
        "      if (it + STAGES < nk) tsr_bar_arrive2(1u + pv, 1u + rd, NT + %du);\n"
        "      else tsr_bar_arrive(1u + pv, NT + %du);\n"
        "    }\n",
        g->ff_pthreads, g->ff_pthreads);
    return;
  }
  if (!g->ffself) {
    put(s,
        "    if (it + STAGES < nk) { // slot rd read: free (the reads fenced for the TMA refill)\n"
        "      tsr_proxy_fence();\n"
        "      tsr_bar_arrive(1u + rd, NT + %du);\n"
        "    }\n",
        g->ff_pthreads);
    return;
  }
  TSR_ASSERT(g->nthreads == 128); /* four warps: the duty cycles over it & 3 */
  put(s,
      "    if (it + STAGES < nk) tsr_proxy_fence(); // block it's reads, before its slot's refill\n"
      "    if (threadIdx.x / 32u == ((unsigned)it & 3u) && it >= 1 && it + STAGES - 1 < nk) {\n"
      "      // this warp refills the slot of block it-1 with block it-1+STAGES\n"
      "      const int pv = rd == 0 ? STAGES - 1 : rd - 1;\n"
      "      tsr_bar_sync(1u + pv, NT); // the other warps left it\n"
      "      if (threadIdx.x %% 32u == 0) {\n");
  put_tma_fill(s, g, "        ", "pv", "it - 1 + STAGES");
  put(s,
      "      }\n"
      "    }\n"
      "    // slot rd read; the warp refilling it waits on its barrier next block instead\n"
      "    if (threadIdx.x / 32u != (((unsigned)it + 1u) & 3u) && it + STAGES < nk)\n"
      "      tsr_bar_arrive(1u + rd, NT);\n");
}

static void emit_main(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  const tsr_plan *pl = &g->plan;
  int any_staged = g->a.staged || g->b.staged;
  emit_entry(s, p, g, "zero-padded copies");
  if (g->tf32) {
    put(s,
        "  float acc[MI][NI][4];\n"
        "#pragma unroll\n  for (int i = 0; i < MI; ++i)\n"
        "#pragma unroll\n    for (int j = 0; j < NI; ++j)\n"
        "#pragma unroll\n      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;\n");
  } else {
    put(s,
        "  float acc[TM][TN];\n"
        "#pragma unroll\n  for (int i = 0; i < TM; ++i)\n"
        "#pragma unroll\n    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;\n");
  }
  if (any_staged)
    put(s,
        "  float *smem = tsr_dynamic_smem();\n"
        "  float *As = smem;                  // STAGES x BK x LSA (A staged)\n"
        "  float *Bs = smem + STAGES * A_STAGE; // STAGES x BK x LSB (B staged)\n");
  else
    put(s, "  float *As = nullptr, *Bs = nullptr;\n");
  const char *call = g->tf32 ? "tsr_block(acc, %s, %s);\n"
                             : "tsr_block(acc, %s, %s, Ag, Bg, m0, n0, %s);\n";
  if (g->ffprod) {
    /* split=producer (docs/emit.md "FFMA producer"): threads NT..NT+127 (a
     * warpgroup) copy each K block into its ring slot and arrive on the
     * slot's full mbarrier once their own copies landed; the NT consumer
     * threads wait on it, multiply and arrive on the slot's empty mbarrier.
     * No CTA-wide barrier after the role split: the consumers issue no copy
     * instruction and wait for no other warp's copies but through full. */
    put(s, "%s",
        g->ffself
            ? "  // split=tma: threads 0..NT-1 multiply; thread 0 copies the first STAGES K blocks,\n"
              "  // then block j's slot gets block j+STAGES from warp (j+1) % 4's lane 0, one block\n"
              "  // after j. full[st]: the mbarrier at bars + 8 st (one arrival: the copying lane's,\n"
              "  // expecting the bytes of the slot's two TMA boxes); slot st free: named barrier\n"
              "  // 1 + st (three warps arrive after reading a block that is replaced, the fourth\n"
              "  // waits a block later before replacing it: all skip the last STAGES blocks)\n"
        : g->fftma
            ? "  // split=producer-tma: threads NT..NT+31 (one warp) copy, threads 0..NT-1 multiply.\n"
              "  // full[st]: the mbarrier at bars + 8 st (one arrival: the warp's lead thread,\n"
              "  // expecting the bytes of the slot's two TMA boxes); slot st free: named barrier\n"
              "  // 1 + st (the consumers arrive after reading a block the producer replaces, the\n"
              "  // producer's warp waits before replacing it: both skip the last STAGES blocks)\n"
            : "  // split=producer: threads NT.. (one warpgroup) copy, threads 0..NT-1 multiply.\n"
              "  // full[st]: the mbarrier at bars + 8 st (the producer's 128 threads arrive once\n"
              "  // their copies of the slot's block landed); slot st free: named barrier 1 + st\n"
              "  // (the consumers arrive after reading a block the producer replaces, the producer\n"
              "  // waits before replacing it: both skip the last STAGES blocks, never replaced)\n");
    put(s,
        "  const int nk = kb_end - kb_begin;\n"
        "  const unsigned bars = tsr_smem_addr(smem + STAGES * (A_STAGE + B_STAGE));\n"
        "  if (threadIdx.x == 0)%s\n"
        "    for (int st = 0; st < STAGES; ++st) tsr_mbar_init(bars + 8u * st, %du);\n"
        "%s"
        "  __syncthreads(); // the mbarriers are initialized (the last CTA-wide barrier)\n",
        g->fftma ? " {" : "", g->fftma ? 1 : 128,
        g->fftma ? "    tsr_mbar_init_fence(); // the TMA copies complete on them\n  }\n" : "");
    if (g->ffself) {
      put(s,
          "  if (threadIdx.x == 0) { // the first STAGES blocks\n"
          "    tsr_tma_prefetch(tmA); tsr_tma_prefetch(tmB);\n"
          "    for (int it = 0; it < STAGES && it < nk; ++it) {\n");
      put_tma_fill(s, g, "      ", "it", "it");
      put(s, "    }\n  }\n"); /* the rest: the consumers' loop refills (put_ff_release) */
    } else {
      put(s,
          "  if ((int)threadIdx.x >= NT) { // producer %s\n"
          "    tsr_producer_regs();\n",
          g->fftma ? "warp" : "warpgroup");
      if (g->fftma && g->ff_setmax)
        put(s, "    if ((int)threadIdx.x >= NT + 32) return; // the warpgroup's other warps: registers given\n");
      if (g->fftma && pl->pelect) {
        /* pelect=1: the whole warp runs the loop converged; elect.sync
         * picks the lane that arrives and copies (docs/emit.md "Elected TMA
         * producer") */
        const tsr__emit_operand *oa = &g->a, *ob = &g->b;
        put(s,
            "    // split=producer-tma, pelect=1: the converged warp copies each K block as two TMA\n"
            "    // boxes (A's bk x bm, B's bk x bn; zeros outside the tensors), one elected lane\n"
            "    // arriving on the slot's full mbarrier with their bytes; the warp waits for free slots\n"
            "    if (threadIdx.x == NT) { tsr_tma_prefetch(tmA); tsr_tma_prefetch(tmB); }\n"
            "    const unsigned sA = tsr_smem_addr(As), sB = tsr_smem_addr(Bs);\n"
            "    unsigned sx = 0; // the slot of block it\n"
            "    int k0 = kb_begin * BK;\n"
            "    for (int it = 0; it < nk; ++it, k0 += BK) {\n"
            "      if (it >= STAGES) tsr_bar_sync(1u + sx, NT + 32u); // the consumers left the slot\n"
            "      tsr_tma2_elect(bars + 8u * sx, 4u * BK * (BM + BN), sA + sx * (4u * A_STAGE), tmA,\n"
            "                     %s, %s, sB + sx * (4u * B_STAGE), tmB, %s, %s, bz);\n"
            "      sx = sx + 1 == STAGES ? 0u : sx + 1u;\n"
            "    }\n",
            oa->srows_x ? "k0" : "m0", oa->srows_x ? "m0" : "k0", ob->srows_x ? "k0" : "n0",
            ob->srows_x ? "n0" : "k0");
      } else if (g->fftma) {
        /* one warp: its lead thread issues the two boxes of each K block (a
         * TMA copy takes uniform operands: one thread, not 32 lanes' rows,
         * keeps it one instruction); the whole warp takes part in the
         * slot-free barrier, whose bar.sync is per warp */
        put(s,
            "    // split=producer-tma: the warp's lane 0 copies each K block as two TMA boxes\n"
            "    // (A's bk x bm, B's bk x bn; zeros outside the tensors), arriving on the slot's\n"
            "    // full mbarrier with their bytes; the whole warp waits for free slots\n"
            "    const bool lead = threadIdx.x == NT;\n"
            "    if (lead) { tsr_tma_prefetch(tmA); tsr_tma_prefetch(tmB); }\n");
        if (pl->lazy) /* lazyk: the pack kernel releases the pieces, the warp only waits */
          put(s,
              "%s"
              "    unsigned *const flags = reinterpret_cast<unsigned *>(W + WOFF_F) +\n"
              "                            ((tsr_idx)bz * GRID_H + (tsr_idx)tile_row) * NPIECE;\n"
              "    const unsigned ready = 2u * epoch + 2u; // this call's%s\n"
              "    int piece = -1%s;\n",
              pl->lazyk ? "    // lazyk: at the first K block of each piece past those known ready, probe it\n"
                          "    // and the next 31 at once and wait for it (tsr_lazy_wait)\n"
                        : "    // lazy: at the first K block of each piece, claim what is unclaimed of it and the\n"
                          "    // next LAZY_AHEAD, pack those won, wait for the piece (tsr_lazy_a)\n",
              pl->lazyk ? "" : "; 2 epoch + 1: claimed",
              pl->lazyk ? ", known = 0 /* pieces below known: ready */" : "");
        put(s,
            "    int sx = 0; // the slot of block it\n"
            "    for (int it = 0; it < nk; ++it) {\n");
        if (pl->lazy)
          put(s,
              "      if ((kb_begin + it) / LAZY != piece) {\n"
              "        piece = (kb_begin + it) / LAZY;\n"
              "        %s\n"
              "      }\n",
              pl->lazyk ? "if (piece >= known) known = tsr_lazy_wait(flags, ready, piece, (int)threadIdx.x - NT);"
                        : "tsr_lazy_a(A, W, flags, ready, m0, piece, bz, (int)threadIdx.x - NT);");
        put(s,
            "      if (it >= STAGES) tsr_bar_sync(1u + sx, NT + 32u); // the consumers left the slot\n"
            "      if (lead) {\n");
        put_tma_fill(s, g, "        ", "sx", "it");
        put(s,
            "      }\n"
            "      sx = sx + 1 == STAGES ? 0 : sx + 1;\n"
            "    }\n");
      } else {
        put_kloop_prologue(s, g, "    ");
        put(s,
            "    // running slots (no division): sr holds block it, sx block nx = it + STAGES - 1\n"
            "    int sr = 0, sx = STAGES - 1;\n"
            "    for (int it = 0; it < nk; ++it) {\n"
            "      tsr_cp_wait<STAGES - 2>(); // this thread's copies of block it landed\n"
            "      tsr_mbar_arrive(bars + 8u * sr);\n"
            "      const int nx = it + STAGES - 1;\n"
            "      if (nx < nk) { // into the slot of block it-1, once the consumers left it\n"
            "        if (nx >= STAGES) tsr_bar_sync(1u + sx, NT + 128u);\n");
        put_kloop_copies(s, g, "        ", "sx", "nx", "nx + 1 < nk");
        put(s,
            "      }\n"
            "      tsr_cp_commit();\n"
            "      sr = sr + 1 == STAGES ? 0 : sr + 1;\n"
            "      sx = sx + 1 == STAGES ? 0 : sx + 1;\n"
            "    }\n");
      }
      put(s, "    return;\n  }\n");
    }
    put(s,
        "  tsr_consumer_regs();\n"
        "  int rd = 0;\n"
        "  unsigned par = 0; // parity of the full phase that lands slot rd's next block\n");
    if (pl->kloop >= 3) {
      /* kloop=3's fragment ring: step kk+1's fragments load while step kk
       * multiplies, and the next block's step 0 right after its full wait
       * (the slot is freed once its last step's fragments are loaded) */
      put(s,
          "  // kloop=3: two fragment sets; step kk+1's loads before step kk's FMAs, the next\n"
          "  // block's step 0 after its full wait, inside this block's last step\n"
          "  float fa[2][TM], fb[2][TN];\n"
          "  tsr_mbar_wait(bars, 0u);\n"
          "  tsr_frag(fa[0], fb[0], As, Bs, 0);\n"
          "  for (int it = 0; it < nk; ++it) {\n"
          "    const float *as = As + rd * A_STAGE, *bs = Bs + rd * B_STAGE;\n"
          "#pragma unroll\n"
          "    for (int kk = 0; kk < BK - 1; ++kk) {\n"
          "      tsr_frag(fa[(kk + 1) & 1], fb[(kk + 1) & 1], as, bs, kk + 1);\n"
          "      tsr_fma(acc, fa[kk & 1], fb[kk & 1]);\n"
          "    }\n");
      put_ff_release(s, g);
      put(s,
          "    if (++rd == STAGES) { rd = 0; par ^= 1u; }\n"
          "    if (it + 1 < nk) { // block it+1 landed: its step 0\n"
          "      tsr_mbar_wait(bars + 8u * rd, par);\n"
          "      tsr_frag(fa[0], fb[0], As + rd * A_STAGE, Bs + rd * B_STAGE, 0); // BK even\n"
          "    }\n"
          "    tsr_fma(acc, fa[1], fb[1]);\n"
          "  }\n");
    } else {
      if (pl->kunroll) {
        /* kunroll=1 (session 29): the consumers' loop once per ring slot, so
         * the slot's full barrier, its fragment bases and its free barrier
         * are compile-time, and whole rounds before the last two need no
         * bounds: no slot, parity or guard arithmetic a block there (20 of
         * the 4096^3 loop's 1108 instructions a K block were ring
         * bookkeeping). The rolled loop below runs the last one or two
         * rounds, from slot 0. */
        put(s,
            "  // kunroll=1: whole rounds of STAGES blocks, the body once per ring slot u (compile-\n"
            "  // time after the unroll): block it0 + u lives in slot u, its full phase has parity\n"
            "  // par; every slot of these rounds is replaced, so every block frees its slot\n"
            "  int it0 = 0;\n"
            "  for (; it0 + 2 * STAGES <= nk; it0 += STAGES, par ^= 1u) {\n"
            "#pragma unroll\n"
            "    for (int u = 0; u < STAGES; ++u) {\n"
            "      tsr_mbar_wait(bars + 8u * u, par); // block it0 + u landed\n"
            "      ");
        put(s, call, "As + u * A_STAGE", "Bs + u * B_STAGE", "(kb_begin + it0 + u) * BK");
        put(s,
            "%s"
            "      tsr_bar_arrive(1u + u, NT + %du); // slot u read: free\n"
            "    }\n"
            "  }\n"
            "  // the last STAGES to 2 STAGES - 1 blocks (from slot 0): the rolled loop\n",
            g->fftma ? "      tsr_proxy_fence(); // the reads, before the TMA refill\n" : "",
            g->ff_pthreads);
      }
      /* kwait=1: the next block's full barrier tested a block early (the
       * try_wait at the top of the block it guards: 4.3 % of the 4096^3
       * default's stall samples, long_sb at its branch). Session 27: 2-7 %
       * slower (the test's SEL and branch, +1.1 % instructions; the other
       * warps had covered the wait), so it stays opt-in (never with kunroll) */
      if (pl->kwait)
        put(s,
            "  bool landed = false; // kwait=1: block it's full phase seen complete a block early\n"
            "  for (int it = 0; it < nk; ++it) {\n"
            "    if (!landed) tsr_mbar_wait(bars + 8u * rd, par); // block it landed\n"
            "    if (it + 1 < nk) // block it+1's phase, read a block from now\n"
            "      landed = rd + 1 == STAGES ? tsr_mbar_test(bars, par ^ 1u) : tsr_mbar_test(bars + 8u * (rd + 1), par);\n"
            "    ");
      else
        put(s,
            "  for (int it = %s; it < nk; ++it) {\n"
            "    tsr_mbar_wait(bars + 8u * rd, par); // block it landed\n"
            "    ",
            pl->kunroll ? "it0" : "0");
      if (pl->krel == 1) /* the block frees its slot itself, after its last loads */
        put(s, call, "As + rd * A_STAGE", "Bs + rd * B_STAGE",
            "(kb_begin + it) * BK, it + STAGES < nk, 1u + rd");
      else {
        put(s, call, "As + rd * A_STAGE", "Bs + rd * B_STAGE", "(kb_begin + it) * BK");
        put_ff_release(s, g);
      }
      put(s,
          "    if (++rd == STAGES) { rd = 0; par ^= 1u; }\n"
          "  }\n");
    }
  } else if (pl->kloop) {
    put(s,
        "  // K loop (kloop>=1), STAGES-deep cp.async ring: block it lives in slot rd; each\n"
        "  // staged operand's copy pointer points at the next block to copy, clamped at the\n"
        "  // last one, which the last STAGES-1 iterations copy again into the free slot wr\n"
        "  // (the slot computed in iteration it-1, left by every thread at this barrier).\n"
        "  const int nk = kb_end - kb_begin;\n");
    put_kloop_prologue(s, g, "  ");
    if (pl->kloop >= 3) {
      put(s,
          "  // kloop=3: two fragment sets; step kk+1's loads are issued before step kk's\n"
          "  // FMAs, and block it+1's step 0 right after the barrier that lands it (inside\n"
          "  // block it's last step). Block it-1's slot (wr) is free once every thread has\n"
          "  // passed that barrier at the end of iteration it-1: its last reads came before.\n"
          "  int rd = 0, wr = STAGES - 1;\n"
          "  float fa[2][TM], fb[2][TN];\n"
          "  tsr_cp_wait<STAGES - 2>();\n"
          "  __syncthreads();\n"
          "  tsr_frag(fa[0], fb[0], As, Bs, 0);\n"
          "  for (int it = 0; it < nk; ++it) {\n"
          "    const int nx = it + STAGES - 1 < nk ? it + STAGES - 1 : nk - 1;\n");
      if (pl->kloop >= 4) {
        put_spread_steps(s, g);
      } else {
        put_kloop_copies(s, g, "    ", "wr", "nx", "it + STAGES < nk");
        put(s,
            "    tsr_cp_commit();\n"
            "    const float *as = As + rd * A_STAGE, *bs = Bs + rd * B_STAGE;\n"
            "#pragma unroll\n"
            "    for (int kk = 0; kk < BK - 1; ++kk) {\n"
            "      tsr_frag(fa[(kk + 1) & 1], fb[(kk + 1) & 1], as, bs, kk + 1);\n"
            "      tsr_fma(acc, fa[kk & 1], fb[kk & 1]);\n"
            "    }\n");
      }
      put(s,
          "    rd = rd + 1 == STAGES ? 0 : rd + 1;\n"
          "    wr = wr + 1 == STAGES ? 0 : wr + 1;\n"
          "    if (it + 1 < nk) { // block it+1: landed for this thread, then for everyone\n"
          "      tsr_cp_wait<STAGES - 2>();\n"
          "      __syncthreads();\n"
          "      tsr_frag(fa[0], fb[0], As + rd * A_STAGE, Bs + rd * B_STAGE, 0); // BK even\n"
          "    }\n"
          "    tsr_fma(acc, fa[1], fb[1]);\n"
          "  }\n");
    } else if (pl->kunroll) {
      /* the same iteration written out once per ring slot: block it0 + u
       * lives in slot u and copies into slot (u + STAGES - 1) % STAGES,
       * compile-time constants after the unroll */
      put(s,
          "  // kunroll=1: the body once per ring slot u (compile-time after the unroll): block\n"
          "  // it0 + u lives in slot u, its copy goes to slot (u + STAGES - 1) %% STAGES; a\n"
          "  // uniform break ends the last, partial round.\n"
          "  for (int it0 = 0; it0 < nk; it0 += STAGES) {\n"
          "#pragma unroll\n"
          "    for (int u = 0; u < STAGES; ++u) {\n"
          "      const int it = it0 + u;\n"
          "      if (it >= nk) break;\n");
      put_kloop_iteration(s, g, "      ", "u", "((u + STAGES - 1) % STAGES)", call);
      put(s,
          "    }\n"
          "  }\n");
    } else {
      put(s,
          "  int rd = 0, wr = STAGES - 1;\n"
          "  for (int it = 0; it < nk; ++it) {\n");
      put_kloop_iteration(s, g, "    ", "rd", "wr", call);
      put(s,
          "    rd = rd + 1 == STAGES ? 0 : rd + 1;\n"
          "    wr = wr + 1 == STAGES ? 0 : wr + 1;\n"
          "  }\n");
    }
  } else if (pl->stages == 1) {
    put(s, "  // K loop, one shared stage: load, barrier, compute, barrier\n");
    put(s, "  for (int kb = kb_begin; kb < kb_end; ++kb) {\n    const int k0 = kb * BK;\n");
    put_stage_loads(s, g, "    ", "As", "Bs", "k0");
    if (any_staged) put(s, "    __syncthreads();\n");
    put(s, "    ");
    put(s, call, "As", "Bs", "k0");
    if (any_staged) put(s, "    __syncthreads();\n");
    put(s, "  }\n");
  } else {
    put(s,
        "  // K loop, STAGES-deep cp.async ring: block it lives in slot it %% STAGES; the\n"
        "  // load of block it+STAGES-1 reuses the slot computed in iteration it-1, which\n"
        "  // every thread has left once it passes this iteration's barrier.\n"
        "  const int nk = kb_end - kb_begin;\n"
        "#pragma unroll\n"
        "  for (int st = 0; st < STAGES - 1; ++st) {\n"
        "    if (st < nk) {\n");
    put_stage_loads(s, g, "      ", "As + st * A_STAGE", "Bs + st * B_STAGE", "(kb_begin + st) * BK");
    put(s,
        "    }\n"
        "    tsr_cp_commit();\n"
        "  }\n"
        "  for (int it = 0; it < nk; ++it) {\n"
        "    tsr_cp_wait<STAGES - 2>(); // this thread's copies of block it have landed\n"
        "    __syncthreads();           // ... and everyone's\n"
        "    const int nx = it + STAGES - 1;\n"
        "    if (nx < nk) {\n"
        "      const int slot = nx %% STAGES;\n");
    put_stage_loads(s, g, "      ", "As + slot * A_STAGE", "Bs + slot * B_STAGE",
                    "(kb_begin + nx) * BK");
    put(s,
        "    }\n"
        "    tsr_cp_commit();\n"
        "    const int cur = it %% STAGES;\n"
        "    ");
    put(s, call, "As + cur * A_STAGE", "Bs + cur * B_STAGE", "(kb_begin + it) * BK");
    put(s, "  }\n");
  }
  /* Epilogue. */
  if (g->tf32) {
    put(s,
        "  // c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1), rows and columns\n"
        "  // through the fragment-load permutation (VA, VB; identity when 1)\n");
    /* split=pack runs the loop at 255 registers: thread-index values kept
     * live across it for the epilogue spill (4 bytes at 8192^3); %tid.x
     * read again here makes them recomputed instead */
    if (g->presplit)
      put(s,
          "  const int tid = tsr_tid(); // read again: recomputed, not held across the loop\n"
          "  const int lane = tid & 31, warp = tid >> 5;\n");
    else
      put(s, "  const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;\n");
    put(s,
        "  const int gq = lane >> 2, tq = lane & 3;\n"
        "  const int rw = m0 + (warp / WARPS_N) * WM, cw = n0 + (warp %% WARPS_N) * WN;\n"
        "  { // non-finite accumulators: strict recomputation over this CTA's K range\n"
        "    const int k0 = kb_begin * BK, k1 = kb_end * BK < K ? kb_end * BK : (int)K;\n"
        "#pragma unroll\n    for (int i = 0; i < MI; ++i)\n"
        "#pragma unroll\n      for (int j = 0; j < NI; ++j)\n"
        "#pragma unroll\n        for (int r = 0; r < 4; ++r)\n"
        "          if (!tsr_finite(acc[i][j][r]))\n"
        "            acc[i][j][r] = tsr_fix(A, B, bz, rw + (i / VA) * 16 * VA + (r >> 1) * 8 * VA + gq * VA + i %% VA,\n"
        "                                   cw + (j / VB) * 8 * VB + (2 * tq + (r & 1)) * VB + j %% VB, k0, k1);\n"
        "  }\n"
        "#pragma unroll\n  for (int i = 0; i < MI; ++i)\n"
        "#pragma unroll\n    for (int h = 0; h < 2; ++h) {\n"
        "      const int row = rw + (i / VA) * 16 * VA + h * 8 * VA + gq * VA + i %% VA;\n");
    if (g->b.fv == 1)
      put(s,
          "#pragma unroll\n      for (int j = 0; j < NI; ++j)\n"
          "        tsr_store(out, row, cw + j * 8 + tq * 2, alpha, beta, acc[i][j][2 * h], acc[i][j][2 * h + 1]);\n"
          "    }\n");
    else {
      put(s,
          "#pragma unroll\n      for (int jg = 0; jg < NI / VB; ++jg)\n"
          "#pragma unroll\n        for (int c = 0; c < 2; ++c)\n"
          "          tsr_store(out, row, cw + jg * 8 * VB + (2 * tq + c) * VB, alpha, beta");
      for (int e = 0; e < g->b.fv; e++) put(s, ",\n                    acc[i][jg * VB + %d][2 * h + c]", e);
      put(s, ");\n    }\n");
    }
  } else {
    put(s,
        "  const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;\n"
        "  const int rbase = m0 + (warp / WARPS_N) * WM + (lane / LC) * FM;\n"
        "  const int cbase = n0 + (warp %% WARPS_N) * WN + (lane %% LC) * FN;\n");
    /* tailk: one store path, its destination chosen per CTA (emit_store) */
    if (pl->tailk)
      put(s,
          "  const tsr_idx sld = part ? (tsr_idx)BN : (tsr_idx)LDC; // tailk: C, or the unit's partial\n"
          "  const int sr0 = part ? m0 : 0, sc0 = part ? n0 : 0;\n"
          "  const float sal = part ? 1.0f : alpha, sbe = part ? 0.0f : beta;\n");
    put(s,
        "#pragma unroll\n  for (int i = 0; i < TM; ++i)\n"
        "#pragma unroll\n    for (int f = 0; f < TN / FN; ++f)\n");
    if (pl->tailk)
      put(s, "      tsr_store_t(out, sld, sr0, sc0, sal, sbe, rbase + (i / FM) * (LR * FM) + i %% FM, "
             "cbase + f * (LC * FN)");
    else
      put(s, "      tsr_store(out, rbase + (i / FM) * (LR * FM) + i %% FM, cbase + f * (LC * FN), "
             "alpha, beta");
    for (int e = 0; e < g->fn; e++) put(s, ",\n                acc[i][f * FN + %d]", e);
    put(s, ");\n");
  }
  put(s, "}\n\n");
}

/* lazy=P (docs/emit.md "Lazy pack"): the producer warps' pieces of A, in
 * place of the prologue kernel. The flag of a piece holds 2e + 2 once call
 * e packed it (e counts the calls since the runtime zeroed the flags), 2e + 1
 * while call e's claimer packs it. A producer warp reaching the first K block
 * of piece q probes pieces q .. q + LAZY_AHEAD at once (lane d: piece q + d),
 * claims each it finds at 2e (the previous call's ready value, 0 at first) by
 * compare-and-swap, packs and releases what it won, then waits for piece q.
 * A claimer is running (it claimed) and waits for nothing before it
 * releases, so a waiter never waits on a CTA that has not started. Lane l
 * packs rows m0 + l + 32 r, a chunk of K at a time with the next chunk's
 * loads in flight; each store of the warp fills 128 contiguous bytes of a
 * packed [k][m] row. Session 40 measured four designs on an H100 (notebook
 * "Session 40"): this one, the second, lost least (4096^3 +2 % against the
 * prologue at lazy=4): a claimer's packing delays its next copies. */
static void emit_lazy(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  const tsr__emit_operand *o = &g->a;
  int bk = g->plan.bk, rows = o->bmn / 32;
  /* a chunk of K: a divisor of bk, at most 32 floats a lane (two chunks in flight) */
  int kc = bk;
  while (kc > 4 && (kc * rows > 32 || bk % kc)) kc /= 2;
  if (bk % kc) kc = 1;
  int vec = kc % 4 == 0 && o->src_ld % 4 == 0 && (p->batch == 1 || o->src_stride % 4 == 0);
  put(s,
      "// lazy: a chunk of piece q's K values (LAZY_KC from k) of rows m0 + lane + 32 r of A%s\n"
      "static constexpr int LAZY_KC = %d, LAZY_AHEAD = 2;\n"
      "__device__ __forceinline__ void tsr_lazy_load(float (&x)[BM / 32][LAZY_KC],\n"
      "                                              const float *__restrict__ src, int row0, int k) {\n"
      "#pragma unroll\n"
      "  for (int r = 0; r < BM / 32; ++r) {\n"
      "    const int row = row0 + 32 * r;\n"
      "    const float *__restrict__ a = src + (tsr_idx)row * SRC_LDA + k;\n",
      vec ? ", 16-byte loads where whole" : "", kc);
  if (vec)
    put(s,
        "    if (row < M && k + LAZY_KC <= K) {\n"
        "#pragma unroll\n"
        "      for (int c = 0; c < LAZY_KC; c += 4) {\n"
        "        const float4 f = *reinterpret_cast<const float4 *>(a + c);\n"
        "        x[r][c] = f.x; x[r][c + 1] = f.y; x[r][c + 2] = f.z; x[r][c + 3] = f.w;\n"
        "      }\n"
        "      continue;\n"
        "    }\n");
  put(s,
      "#pragma unroll\n"
      "    for (int c = 0; c < LAZY_KC; ++c) x[r][c] = row < M && k + c < K ? a[c] : 0.0f;\n"
      "  }\n"
      "}\n"
      "// lazy: the whole warp packs piece q (K blocks q * LAZY .. of the tile row at m0, batch\n"
      "// item bz) into A's packed [k][m] rows, zeros past M and K, then releases its flag\n"
      "__device__ __noinline__ void tsr_lazy_pack(const float *__restrict__ A, float *__restrict__ W,\n"
      "                                           unsigned *flag, unsigned ready, int m0, int q,\n"
      "                                           int bz, int lane) {\n"
      "  const float *__restrict__ src = A + (tsr_idx)bz * SRC_SA;\n"
      "  float *__restrict__ dst = W + WOFF_A + (tsr_idx)bz * SA + m0 + lane;\n"
      "  const int k0 = q * LAZY * BK;\n"
      "  const int kend = k0 + LAZY * BK < (int)PRA ? k0 + LAZY * BK : (int)PRA;\n"
      "  float x[BM / 32][LAZY_KC], y[BM / 32][LAZY_KC];\n"
      "  tsr_lazy_load(x, src, m0 + lane, k0);\n"
      "  for (int kc = k0; kc < kend; kc += LAZY_KC) {\n"
      "    if (kc + LAZY_KC < kend) tsr_lazy_load(y, src, m0 + lane, kc + LAZY_KC); // in flight\n"
      "#pragma unroll\n"
      "    for (int c = 0; c < LAZY_KC; ++c)\n"
      "#pragma unroll\n"
      "      for (int r = 0; r < BM / 32; ++r) dst[(tsr_idx)(kc + c) * LDA + 32 * r] = x[r][c];\n"
      "#pragma unroll\n"
      "    for (int c = 0; c < LAZY_KC; ++c)\n"
      "#pragma unroll\n"
      "      for (int r = 0; r < BM / 32; ++r) x[r][c] = y[r][c];\n"
      "  }\n"
      "  tsr_fence_gpu();          // this lane's stores, before the release\n"
      "  tsr_proxy_fence_global(); // ... and before any TMA read of them\n"
      "  tsr_warp_sync();\n"
      "  if (lane == 0) tsr_st_release(flag, ready);\n"
      "}\n");
  if (g->plan.lazyk) {
    put(s,
        "// lazyk: the producer warp at piece q (not yet known ready): lane d probes piece q + d\n"
        "// (one round trip for 32 pieces); the run of ready pieces from q is known ready; if q\n"
        "// is not, lane 0 waits for it. Lane 0 (the TMA copies' lane) is ordered after every\n"
        "// lane's acquire by the warp barrier and its fences. Returns the first piece not known\n"
        "// ready, the same in every lane.\n"
        "__device__ __noinline__ int tsr_lazy_wait(const unsigned *flags, unsigned ready, int q,\n"
        "                                          int lane) {\n"
        "  const bool ok = q + lane >= NPIECE || tsr_ld_acquire(flags + q + lane) == ready;\n"
        "  const unsigned not_ready = ~tsr_ballot(ok);\n"
        "  int known = not_ready ? q + tsr_lowest(not_ready) : q + 32;\n"
        "  if (known == q) {\n"
        "    if (lane == 0)\n"
        "      for (unsigned n = 0; tsr_ld_acquire(flags + q) != ready; ++n) {\n"
        "        if (n == (1u << 26)) tsr_stuck();\n"
        "        tsr_nap();\n"
        "      }\n"
        "    known = q + 1;\n"
        "  }\n"
        "  tsr_warp_sync();\n"
        "  if (lane == 0) {\n"
        "    tsr_fence_gpu();          // every lane's acquired pieces, before lane 0's copies\n"
        "    tsr_proxy_fence_global(); // ... through the async proxy\n"
        "  }\n"
        "  return known;\n"
        "}\n"
        "// lazyk: the pack kernel beside the main kernel. Warp w of the grid's packs items w,\n"
        "// w + warps, ...: item i is piece i / (GRID_H BATCH) of tile row i %% GRID_H of batch\n"
        "// item i / GRID_H %% BATCH, so the pieces come in K order, the order the tiles read\n"
        "// them. It waits for nothing, and all its CTAs are resident before the main kernel\n"
        "// can start (each triggers it first thing): every wait for a piece ends. Two warps a\n"
        "// CTA at most 128 registers: a CTA fits beside three main CTAs' registers.\n"
        "static constexpr int LAZYK_WARPS = %d;\n"
        "extern \"C\" __global__ void __launch_bounds__(32 * LAZYK_WARPS, 8)\n"
        "tsr_gemm_pack_a(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,\n"
        "                float *__restrict__ W, float alpha, float beta,\n"
        "                const __grid_constant__ tsr_tmap tmA, const __grid_constant__ tsr_tmap tmB,\n"
        "                unsigned epoch) {\n"
        "  tsr_launch_dependents(); // the main kernel may start; it waits for each piece's flag\n"
        "  unsigned *const flags = reinterpret_cast<unsigned *>(W + WOFF_F);\n"
        "  const unsigned ready = 2u * epoch + 2u;\n"
        "  const int lane = (int)threadIdx.x & 31;\n"
        "  const long long rows = (long long)GRID_H * BATCH, items = rows * NPIECE;\n"
        "  const long long warps = (long long)gridDim.x * LAZYK_WARPS;\n"
        "  for (long long i = (long long)blockIdx.x * LAZYK_WARPS + threadIdx.x / 32; i < items;\n"
        "       i += warps) {\n"
        "    const int q = (int)(i / rows), r = (int)(i %% GRID_H), bz = (int)(i %% rows / GRID_H);\n"
        "    tsr_lazy_pack(A, W, flags + ((long long)bz * GRID_H + r) * NPIECE + q, ready, r * BM, q,\n"
        "                  bz, lane);\n"
        "  }\n"
        "}\n\n",
        TSR__LAZYK_WARPS);
    return;
  }
  put(s,
      "// lazy: at the first K block of piece q: claim (flag ready - 2 -> ready - 1) whatever of\n"
      "// pieces q .. q + LAZY_AHEAD is unclaimed in this call, pack those won, wait for piece q\n"
      "__device__ __noinline__ void tsr_lazy_a(const float *__restrict__ A, float *__restrict__ W,\n"
      "                                        unsigned *flags, unsigned ready, int m0, int q, int bz,\n"
      "                                        int lane) {\n"
      "  unsigned won = 0;\n"
      "  if (lane <= LAZY_AHEAD && q + lane < NPIECE && tsr_ld_relaxed(flags + q + lane) == ready - 2u)\n"
      "    won = tsr_cas(flags + q + lane, ready - 2u, ready - 1u) == ready - 2u;\n"
      "  const unsigned mask = tsr_ballot(won);\n"
      "  for (unsigned m = mask; m; m &= m - 1u) {\n"
      "    const int d = tsr_lowest(m);\n"
      "    tsr_lazy_pack(A, W, flags + q + d, ready, m0, q + d, bz, lane);\n"
      "  }\n"
      "  if (lane == 0 && !(mask & 1u))\n"
      "    for (unsigned n = 0; tsr_ld_acquire(flags + q) != ready; ++n) {\n"
      "      if (n == (1u << 26)) tsr_stuck();\n"
      "      tsr_nap();\n"
      "    }\n"
      "  tsr_warp_sync();\n"
      "  if (lane == 0) tsr_proxy_fence_global(); // the acquired rows, before this warp's copies\n"
      "}\n\n");
}

/* Pack prologue of one operand (docs/emit.md "Pack"): one thread per
 * 16-byte chunk of the packed tensor, zeros outside the problem. When the
 * packed orientation keeps the user's, consecutive threads walk a packed row
 * (coalesced loads and float4 stores); when it transposes (FFMA, k-contiguous
 * operand), consecutive threads walk down a packed column, so the four loads
 * of a thread are each coalesced across the warp and the stores are 16-byte
 * chunks. */
static void emit_pack(sb_t *s, const tsr__emit_geo *g, const tsr__emit_operand *o) {
  char U = (char)(o->name - 32);
  const char *EXT = o->name == 'a' ? "M" : "N";
  int transpose = o->kmajor != o->src_kmajor, q = o->pre_q;
  TSR_ASSERT(q == 4 || (q == 8 && transpose && g->presplit));
  put(s,
      "// Pack prologue: %c (op %s, %s) -> W + WOFF_%c as PR%c x LD%c floats per batch item\n"
      "// (%s), zero-padded to whole tiles along %s and k.\n",
      U, o->src_kmajor == (o->name == 'a') ? "N" : "T",
      o->src_kmajor ? "k-contiguous" : "x-contiguous", U, U, U,
      transpose ? "transposed" : "same orientation", EXT);
  if (o->poff_small)
    put(s, "// split=pack: the TF32 big parts there, the small parts at W + WOFF_%cS.\n", U);
  else if (g->presplit)
    put(s, "// split=pack: the TF32-rounded values (big parts).\n");
  if (o->pre_tiled) {
    /* packed (r, c) is the user's element c * SRC_LD + r either way: the
     * transpose runs the packed rows along the user's contiguous axis */
    const char *rext = o->kmajor ? EXT : "K", *cext = o->kmajor ? "K" : EXT;
    put(s,
        "// 32x32 tiles through shared memory, one CTA each: each warp loads 128-byte\n"
        "// runs along the user's contiguous axis (a packed column), then 8 lanes store\n"
        "// one packed row's 128 bytes. The [c][r] tile's padding keeps both conflict-free.\n"
        "extern \"C\" __global__ void __launch_bounds__(256)\n"
        "tsr_gemm_pack_%c(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,\n"
        "                float *__restrict__ W, float alpha, float beta) {\n"
        "  constexpr long long TC = (LD%c + 31) / 32; // tiles along a packed row\n"
        "  __shared__ float tt[32][33];\n"
        "  const long long r0 = (long long)blockIdx.x / TC * 32, c0 = (long long)blockIdx.x %% TC * 32;\n"
        "  const float *__restrict__ src = %c + (tsr_idx)blockIdx.y * SRC_S%c;\n"
        "  const int lane = (int)threadIdx.x & 31, w = (int)threadIdx.x >> 5;\n"
        "#pragma unroll\n"
        "  for (int i = 0; i < 4; ++i) {\n"
        "    const long long r = r0 + lane, c = c0 + w + 8 * i;\n"
        "    tt[w + 8 * i][lane] = r < %s && c < %s ? src[(tsr_idx)c * SRC_LD%c + (tsr_idx)r] : 0.0f;\n"
        "  }\n"
        "  __syncthreads();\n"
        "  const int rr = (int)threadIdx.x >> 3, cq = ((int)threadIdx.x & 7) * 4;\n"
        "  if (r0 + rr >= PR%c || c0 + cq >= LD%c) return;\n"
        "  float4 o4; o4.x = tt[cq][rr]; o4.y = tt[cq + 1][rr]; o4.z = tt[cq + 2][rr]; o4.w = tt[cq + 3][rr];\n"
        "  *reinterpret_cast<float4 *>(W + WOFF_%c + (tsr_idx)blockIdx.y * S%c +\n"
        "                              (tsr_idx)((r0 + rr) * LD%c + c0 + cq)) = o4;\n"
        "}\n\n",
        o->name, U, U, U, rext, cext, U, U, U, U, U, U);
    return;
  }
  if (g->pbulk)
    put(s,
        "// split=producer-bulk: tile by tile, each %s x BK tile in the shared-memory\n"
        "// layout (tsr_soff), tile (x0, k block kb) at x0 * LD%c + kb * %s * BK; thread t\n"
        "// writes the 16-byte chunk t (consecutive threads: the rows of a core matrix).\n",
        o->name == 'a' ? "BM" : "BN", U, o->name == 'a' ? "BM" : "BN");
  put(s,
      "extern \"C\" __global__ void __launch_bounds__(256)\n"
      "tsr_gemm_pack_%c(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,\n"
      "                float *__restrict__ W, float alpha, float beta) {\n"
      "  constexpr long long CH = LD%c / %d; // %d-byte chunks per packed row\n"
      "  const long long t = (long long)blockIdx.x * 256 + (long long)threadIdx.x;\n"
      "  if (t >= PR%c * CH) return;\n",
      o->name, U, q, 4 * q, U);
  if (g->pbulk) {
    const char *BMN = o->name == 'a' ? "BM" : "BN";
    put(s,
        "  constexpr long long CT = %s * BK / 4, KBP = LD%c / BK; // chunks per tile, k blocks\n"
        "  const long long tile = t / CT, w = t %% CT; // w: core matrix w >> 3, its row w & 7\n"
        "  const long long r = (tile / KBP) * %s + ((w >> 3) / (BK / 4)) * 8 + (w & 7);\n"
        "  const long long c = (tile %% KBP) * BK + ((w >> 3) %% (BK / 4)) * 4;\n"
        "  const float *__restrict__ src = %c + (tsr_idx)blockIdx.y * SRC_S%c;\n"
        "  float *dst = W + WOFF_%c + (tsr_idx)blockIdx.y * S%c + (tsr_idx)(4 * t);\n",
        BMN, U, BMN, U, U, U, U);
  } else {
    if (transpose) put(s, "  const long long r = t %% PR%c, c = (t / PR%c) * %d; // down a column\n", U, U, q);
    else put(s, "  const long long r = t / CH, c = (t %% CH) * 4; // along a row\n");
    put(s,
        "  const float *__restrict__ src = %c + (tsr_idx)blockIdx.y * SRC_S%c;\n"
        "  float *dst = W + WOFF_%c + (tsr_idx)blockIdx.y * S%c + (tsr_idx)(r * LD%c + c);\n",
        U, U, U, U, U);
  }
  put(s,
      "  float v[%d];\n"
      "#pragma unroll\n"
      "  for (int q = 0; q < %d; ++q) {\n",
      q, q);
  if (o->kmajor) put(s, "    const long long x = r, k = c + q;\n");
  else put(s, "    const long long k = r, x = c + q;\n");
  if (o->src_kmajor)
    put(s, "    v[q] = x < %s && k < K ? src[(tsr_idx)x * SRC_LD%c + (tsr_idx)k] : 0.0f;\n", EXT, U);
  else
    put(s, "    v[q] = x < %s && k < K ? src[(tsr_idx)k * SRC_LD%c + (tsr_idx)x] : 0.0f;\n", EXT, U);
  if (!g->presplit) {
    put(s,
        "  }\n"
        "  float4 o4; o4.x = v[0]; o4.y = v[1]; o4.z = v[2]; o4.w = v[3];\n"
        "  *reinterpret_cast<float4 *>(dst) = o4;\n"
        "}\n\n");
    return;
  }
  /* split=pack: the TF32 parts, as the inline split makes them (tsr_split);
   * a non-finite big part gets a zero small part (x - big would be NaN or
   * -big; such outputs are recomputed by tsr_fix either way) */
  put(s,
      "  }\n"
      "  unsigned hi[%d], lo[%d];\n"
      "#pragma unroll\n"
      "  for (int q = 0; q < %d; ++q) {\n"
      "    tsr_split(v[q], hi[q], lo[q]);\n"
      "    if ((hi[q] & 0x7f800000u) == 0x7f800000u) lo[q] = 0u;\n"
      "  }\n",
      q, q, q);
  if (q == 8) {
    /* 32 bytes of one packed row per plane: two 16-byte stores, one sector */
    put(s,
        "#pragma unroll\n"
        "  for (int h = 0; h < 2; ++h) {\n"
        "    uint4 h4; h4.x = hi[4 * h]; h4.y = hi[4 * h + 1]; h4.z = hi[4 * h + 2]; h4.w = hi[4 * h + 3];\n"
        "    *reinterpret_cast<uint4 *>(dst + 4 * h) = h4; // big parts\n");
    if (o->poff_small)
      put(s,
          "    uint4 l4; l4.x = lo[4 * h]; l4.y = lo[4 * h + 1]; l4.z = lo[4 * h + 2]; l4.w = lo[4 * h + 3];\n"
          "    *reinterpret_cast<uint4 *>(dst + (WOFF_%cS - WOFF_%c) + 4 * h) = l4; // small parts\n",
          U, U);
    put(s, "  }\n}\n\n");
    return;
  }
  put(s,
      "  uint4 h4; h4.x = hi[0]; h4.y = hi[1]; h4.z = hi[2]; h4.w = hi[3];\n"
      "  *reinterpret_cast<uint4 *>(dst) = h4; // big parts\n");
  if (o->poff_small)
    put(s,
        "  uint4 l4; l4.x = lo[0]; l4.y = lo[1]; l4.z = lo[2]; l4.w = lo[3];\n"
        "  *reinterpret_cast<uint4 *>(dst + (WOFF_%cS - WOFF_%c)) = l4; // small parts\n",
        U, U);
  put(s, "}\n\n");
}

/* The reductions' common end: the NSLICES partials at w, w + STEP(z), ...
 * summed in slice order, a non-finite sum recomputed strictly (tsr_fix for
 * batch item BZ), then alpha/beta into C at COFF; closes the kernel. */
static void put_reduce_sum(sb_t *s, const char *nslices, const char *step, const char *bz,
                           const char *coff, int beta0) {
  put(s,
      "  float sum = w[0];\n"
      "#pragma unroll\n"
      "  for (int z = 1; z < %s; ++z) sum += w[%s];\n"
      "  if (!tsr_finite(sum)) sum = tsr_fix(A, B, %s, row, col, 0, (int)K);\n"
      "  float *c = C + %s;\n",
      nslices, step, bz, coff);
  if (beta0) put(s, "  *c = alpha * sum; // beta == 0: C is never read\n");
  else put(s, "  *c = alpha * sum + beta * *c;\n");
  put(s, "}\n");
}

/* tailk's reduction (docs/emit.md "Tail slices"): one thread per element of
 * the TAIL_R tail tiles, the tile's TAILK partials summed in slice order. */
static void emit_reduce_tail(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  int beta0 = p->beta == 0.0f;
  put(s,
      "// tailk reduction: each tail tile's slices summed in ascending order (bit-identical\n"
      "// run to run), then alpha/beta; a non-finite sum is recomputed strictly over the whole\n"
      "// K range (docs/accuracy.md). One thread per element of the last TAIL_R tiles.\n"
      "extern \"C\" __global__ void __launch_bounds__(256)\n"
      "tsr_gemm_reduce(const float *__restrict__ A, const float *__restrict__ B,\n"
      "                float *__restrict__ C, const float *__restrict__ W, float alpha, float beta) {\n"
      "  const tsr_idx i = (tsr_idx)blockIdx.x * 256 + (tsr_idx)threadIdx.x;\n"
      "  if (i >= (tsr_idx)TAIL_R * (BM * BN)) return;\n"
      "  const unsigned t = (unsigned)(i / (BM * BN));\n"
      "  const int e = (int)(i %% (BM * BN));\n"
      "  unsigned tile_row, tile_col;\n"
      "  tsr_walk(TAIL_D + t, tile_row, tile_col);\n"
      "  const int row = (int)tile_row * BM + e / BN, col = (int)tile_col * BN + e %% BN;\n");
  if (g->tail_m || g->tail_n) put(s, "  if (row >= M || col >= N) return;\n");
  put(s, "  const float *w = W + (tsr_idx)t * (BM * BN) + e;\n");
  put_reduce_sum(s, "TAILK", "(tsr_idx)z * TAIL_R * (BM * BN)", "0", "(tsr_idx)row * LDC + col",
                 beta0);
}

static void emit_reduce(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  int beta0 = p->beta == 0.0f;
  (void)g;
  put(s,
      "// Split-K reduction: slices summed in ascending order (bit-identical run to run),\n"
      "// then alpha/beta. One thread per output element. A non-finite sum is recomputed\n"
      "// strictly over the whole K range: two slices that overflow to opposite\n"
      "// infinities (or an Inf in one slice and an overflow in another) would give NaN\n"
      "// where the strict k-ascending order gives the IEEE class (docs/accuracy.md).\n"
      "extern \"C\" __global__ void __launch_bounds__(256)\n"
      "tsr_gemm_reduce(const float *__restrict__ A, const float *__restrict__ B,\n"
      "                float *__restrict__ C, const float *__restrict__ W, float alpha, float beta) {\n"
      "  const tsr_idx MN = (tsr_idx)M * N;\n"
      "  const tsr_idx i = (tsr_idx)blockIdx.x * 256 + (tsr_idx)threadIdx.x;\n"
      "  if (i >= MN * BATCH) return;\n"
      "  const int bz = (int)(i / MN);\n"
      "  const tsr_idx r = i %% MN;\n"
      "  const int row = (int)(r / N), col = (int)(r %% N);\n"
      "  const float *w = W + (tsr_idx)bz * SPLITK * MN + r;\n");
  put_reduce_sum(s, "SPLITK", "(tsr_idx)z * MN", "bz", "(tsr_idx)bz * SC + (tsr_idx)row * LDC + col",
                 beta0);
}

/* ---- mma=gemv, lane per row (plan lanerows; the family: emit_gemv below) --
 * A k-contiguous big operand: thread t owns rows x0 + t + r * NT (r < RL)
 * and sums each over its slice in ascending k with vec-wide loads along the
 * row. Lanes then need the same short values
 * at the same k, so the short operand's K block is staged once per CTA as
 * Ss[k][SP] (zero past k1 and S) and read with broadcast 128-bit loads (one
 * wavefront per warp) instead of S per-lane L1 loads per chunk. Two shared
 * buffers and two register sets of row values, the K loop unrolled by two:
 * block c + 1 is staged and its row values loaded before block c is
 * multiplied, so each thread keeps RL * BK / VEC loads in flight across the
 * block (ptxas spreads loads written inside the multiply through it, ~2 in
 * flight), and one barrier per block. Row values past k1 load as zero: with
 * the staged zeros 0 * 0 adds +0, which leaves every sum as the strict order
 * has it, so the multiply needs no guard. */
static void put_lpr_load(sb_t *s, const char *d, const char *kc, int guard) {
  put(s,
      "#pragma unroll\n      for (int r = 0; r < RL; ++r)\n"
      "#pragma unroll\n        for (int j = 0; j < BK / VEC; ++j)");
  if (!guard) put(s, " tsr_ld(%s[r][j], bp[r] + %s + j * VEC);\n", d, kc);
  else
    put(s,
        "\n#pragma unroll\n          for (int e = 0; e < VEC; ++e) {\n"
        "            const int k = %s + j * VEC + e;\n"
        "            %s[r][j][e] = k < k1 ? bp[r][k] : 0.0f;\n"
        "          }\n",
        kc, d);
}

/* The row values of block kc into register set d, guarded only in a partial
 * last block (K % BK). */
static void put_lpr_fetch(sb_t *s, const char *d, const char *kc, int tail_k) {
  if (!tail_k) {
    put_lpr_load(s, d, kc, 0);
    return;
  }
  put(s, "      if (%s + BK <= k1) {\n", kc);
  put_lpr_load(s, d, kc, 0);
  put(s, "      } else { // the partial last block\n");
  put_lpr_load(s, d, kc, 1);
  put(s, "      }\n");
}

/* One K block: register set d times the staged buffer ss. */
static void put_lpr_block(sb_t *s, const char *d, const char *ss) {
  put(s,
      "#pragma unroll\n"
      "    for (int j = 0; j < BK / VEC; ++j)\n"
      "#pragma unroll\n      for (int e = 0; e < VEC; ++e)\n"
      "#pragma unroll\n        for (int q = 0; q < SP / 4; ++q) {\n"
      "          // every lane reads the same 16 bytes: a broadcast\n"
      "          const float4 t = *reinterpret_cast<const float4 *>(%s + (j * VEC + e) * SP + 4 * q);\n"
      "          const float sv[4] = {t.x, t.y, t.z, t.w};\n"
      "#pragma unroll\n          for (int i = 0; i < 4; ++i)\n"
      "            if (4 * q + i < S)\n"
      "#pragma unroll\n              for (int r = 0; r < RL; ++r)\n"
      "                acc[r][4 * q + i] = fmaf(%s[r][j][e], sv[i], acc[r][4 * q + i]);\n"
      "        }\n",
      ss, d);
}

/* Half of the K loop's unrolled pair: stage block next_k into next_buf and
 * fetch its row values into next_set (when there is one), multiply the
 * current set d by buffer ss, then the block's barrier. */
static void put_lpr_step(sb_t *s, const char *next_k, const char *next_buf, const char *next_set,
                         const char *d, const char *ss, int tail_k) {
  put(s,
      "    if (%s < k1) {\n"
      "      stage(%s, %s);\n",
      next_k, next_k, next_buf);
  put_lpr_fetch(s, next_set, next_k, tail_k);
  put(s, "    }\n");
  put_lpr_block(s, d, ss);
  put(s, "    __syncthreads();\n");
}

static void emit_gemv_lpr(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g, int tail_x,
                          const char *row, const char *col) {
  int tail_k = p->k % g->plan.bk != 0;
  put(s,
      "  const int tid = (int)threadIdx.x;\n"
      "  float *sbuf = tsr_dynamic_smem(); // 2 x BK x SP\n"
      "  const float *__restrict__ bp[RL];\n"
      "#pragma unroll\n"
      "  for (int r = 0; r < RL; ++r) bp[r] = Xg + tsr_big(%s, 0);\n"
      "  float acc[RL][S];\n"
      "#pragma unroll\n  for (int r = 0; r < RL; ++r)\n"
      "#pragma unroll\n    for (int s = 0; s < S; ++s) acc[r][s] = 0.0f;\n"
      "  // the short operand's K block at kc into buffer d: Ss[k][s], zero past k1 and S\n"
      "  auto stage = [&](int kc, float *d) {\n"
      "    for (int i = tid; i < BK * SP; i += NT) {\n"
      "      const int s = i %% SP, k = kc + i / SP;\n"
      "      d[i] = s < S && k < k1 ? Sg[tsr_small(s, k)] : 0.0f;\n"
      "    }\n"
      "  };\n"
      "  float b0[RL][BK / VEC][VEC], b1[RL][BK / VEC][VEC]; // row values of even, odd blocks\n"
      "  if (k0 < k1) {\n"
      "    stage(k0, sbuf);\n"
      "    {\n",
      tail_x ? "x0 + r * NT + tid < X ? x0 + r * NT + tid : X - 1 /* tail: loads clamped, never stored */"
             : "x0 + r * NT + tid");
  put_lpr_fetch(s, "b0", "k0", tail_k);
  put(s,
      "    }\n"
      "  }\n"
      "  __syncthreads();\n"
      "  // blocks alternate: even ones in b0 and buffer 0, odd ones in b1 and buffer 1; the\n"
      "  // next block is fetched into the other set, which everyone left at the last barrier\n"
      "  for (int kc = k0; kc < k1; kc += 2 * BK) {\n");
  put_lpr_step(s, "kc + BK", "sbuf + BK * SP", "b1", "b0", "sbuf", tail_k);
  put(s, "    if (kc + BK >= k1) break;\n");
  put_lpr_step(s, "kc + 2 * BK", "sbuf", "b0", "b1", "sbuf + BK * SP", tail_k);
  put(s,
      "  }\n"
      "#pragma unroll\n  for (int r = 0; r < RL; ++r) {\n"
      "    const int x = x0 + r * NT + tid;\n"
      "    %s{\n"
      "#pragma unroll\n      for (int s = 0; s < S; ++s) {\n"
      "        float v = acc[r][s];\n"
      "        if (!tsr_finite(v)) v = tsr_fix(A, B, bz, %s, %s, k0, k1);\n"
      "        tsr_put(out, s, x, alpha, beta, v);\n"
      "      }\n"
      "    }\n"
      "  }\n"
      "}\n\n",
      tail_x ? "if (x < X) " : "", row, col);
}

/* ---- mma=gemv (docs/emit.md "GEMV") ------------------------------------------
 * M <= 16 or N <= 16: the big operand (B when M <= N, else A) is read once
 * with vec-wide loads along its contiguous axis; each CTA covers the short
 * side (S rows or columns) whole and BX outputs along the big axis, and
 * keeps the short operand's values in registers (re-read from L1/L2).
 *  k-contiguous big operand: R outputs per warp, lanes take vec-wide K
 *    chunks 32 * vec apart (coalesced), each lane sums its chunks in
 *    ascending k, then an XOR butterfly of shuffles (every lane ends with the
 *    same sum: a + b == b + a).
 *  x-contiguous big operand: vec consecutive outputs per thread, KG thread
 *    groups take every KG-th K row of the slice, then the CTA sums the
 *    groups' partials in group order through shared memory.
 * Split-K slices (blockIdx.y) go through the workspace and the reduction
 * kernel. Every order depends only on the plan and the problem. The sums
 * are not k-ascending, so a non-finite one is recomputed strictly over the
 * slice's K range (tsr_fix), as the tensor-core epilogues do. */
static void emit_gemv(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  const tsr_plan *pl = &g->plan;
  const tsr__emit_operand *bo = g->gv_bigb ? &g->b : &g->a, *so = g->gv_bigb ? &g->a : &g->b;
  char BU = (char)(bo->name - 32), SU = (char)(so->name - 32);
  int v = pl->vec, split = pl->splitk > 1, beta0 = p->beta == 0.0f;
  long long X = g->gv_bigb ? (long long)p->n : (long long)p->m;
  int tail_x = X % g->gv_bx != 0;
  put(s, "typedef %s tsr_idx;\n", tsr__emit_idx_t(g));
  put(s, "static constexpr int M = %lld, N = %lld, K = %lld, BATCH = %lld;\n", (long long)p->m,
      (long long)p->n, (long long)p->k, (long long)p->batch);
  put(s, "static constexpr tsr_idx LDA = %lld, LDB = %lld, LDC = %lld;\n", (long long)p->lda,
      (long long)p->ldb, (long long)p->ldc);
  put(s, "static constexpr tsr_idx SA = %lld, SB = %lld, SC = %lld;\n", (long long)p->stride_a,
      (long long)p->stride_b, (long long)p->stride_c);
  put(s, "static constexpr int BK = %d, NT = %d, SPLITK = %d, NKB = %lld;\n", pl->bk, g->nthreads,
      pl->splitk, (long long)g->nkb);
  put(s, "static constexpr unsigned GRID_H = %uu, GRID_W = %uu;\n", g->h, g->w);
  put(s,
      "// %c is big (%s along %s), %c short: S outputs across, X along the big axis, BX per CTA\n"
      "static constexpr int S = %d, X = %lld, BX = %d, VEC = %d;\n",
      BU, g->gv_kc ? "contiguous" : "strided", g->gv_kc ? "k" : g->gv_bigb ? "n" : "m", SU,
      g->gv_s, X, g->gv_bx, v);
  if (g->gv_lr)
    put(s, "static constexpr int RL = %d, SP = %d; // rows per thread; S padded to 4\n\n",
        g->gv_lr, g->gv_sp);
  else if (g->gv_kc) put(s, "static constexpr int R = %d; // outputs per warp\n\n", g->gv_r);
  else put(s, "static constexpr int KG = %d; // thread groups along k\n\n", g->gv_kg);

  put(s, "// tsr:ptx-begin\n");
  if (g->gv_kg > 1 || g->gv_lr)
    put(s,
        "__device__ __forceinline__ float *tsr_dynamic_smem() {\n"
        "  extern __shared__ float4 tsr_smem4[]; // float4: 16-byte aligned base\n"
        "  return reinterpret_cast<float *>(tsr_smem4);\n"
        "}\n");
  if (g->gv_kc && !g->gv_lr)
    put(s,
        "__device__ __forceinline__ float tsr_shfl_xor(float v, int m) {\n"
        "  return __shfl_xor_sync(0xffffffffu, v, m);\n"
        "}\n");
  put(s, "// tsr:ptx-end\n\n");
  tsr__emit_walk(s, g);
  tsr__emit_fix(s, g);
  put(s, "// element (x, k) of the big operand %c, (s, k) of the short operand %c\n", BU, SU);
  char ib[64], is[64];
  snprintf(ib, sizeof ib, bo->kmajor ? "(tsr_idx)x * LD%c + k" : "(tsr_idx)k * LD%c + x", BU);
  snprintf(is, sizeof is, so->kmajor ? "(tsr_idx)s * LD%c + k" : "(tsr_idx)k * LD%c + s", SU);
  put(s, "__device__ __forceinline__ tsr_idx tsr_big(int x, int k) { return %s; }\n", ib);
  put(s, "__device__ __forceinline__ tsr_idx tsr_small(int s, int k) { return %s; }\n", is);
  put(s, "__device__ __forceinline__ void tsr_ld(float (&r)[VEC], const float *p) {\n");
  if (v == 4)
    put(s, "  const float4 t = *reinterpret_cast<const float4 *>(p);\n"
           "  r[0] = t.x; r[1] = t.y; r[2] = t.z; r[3] = t.w;\n");
  else if (v == 2)
    put(s, "  const float2 t = *reinterpret_cast<const float2 *>(p);\n  r[0] = t.x; r[1] = t.y;\n");
  else put(s, "  r[0] = p[0];\n");
  put(s, "}\n");
  const char *row = g->gv_bigb ? "s" : "x", *col = g->gv_bigb ? "x" : "s";
  put(s,
      "// output (s, x): C row %s, column %s\n"
      "__device__ __forceinline__ void tsr_put(float *__restrict__ out, int s, int x, float alpha,\n"
      "                                        float beta, float v) {\n",
      row, col);
  if (split) put(s, "  out[(tsr_idx)%s * N + %s] = v; // split-K partial: alpha/beta in the reduction\n", row, col);
  else if (beta0) put(s, "  out[(tsr_idx)%s * LDC + %s] = alpha * v; // beta == 0: C is never read\n", row, col);
  else
    put(s, "  float *c = out + (tsr_idx)%s * LDC + %s;\n  *c = alpha * v + beta * *c;\n", row, col);
  put(s, "}\n\n");

  put_main_open(s, g);
  put(s,
      "  const int x0 = (int)tile_%s * BX;\n"
      "  const int bz = %s;\n"
      "  const float *__restrict__ Xg = %c + (tsr_idx)bz * S%c; // big\n"
      "  const float *__restrict__ Sg = %c + (tsr_idx)bz * S%c; // short\n",
      g->gv_bigb ? "col" : "row", p->batch > 1 ? "(int)blockIdx.z" : "0", BU, BU, SU, SU);
  put_slice_range(s, pl->splitk, 0);
  put(s, "  const int k0 = kb_begin * BK, k1 = kb_end * BK < K ? kb_end * BK : K;\n");
  if (g->gv_lr) {
    emit_gemv_lpr(s, p, g, tail_x, row, col);
    return;
  }
  if (g->gv_kc) {
    put(s,
        "  const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;\n"
        "  const int xw = x0 + warp * R; // the warp's R outputs\n"
        "  const float *__restrict__ bp[R];\n"
        "#pragma unroll\n"
        "  for (int r = 0; r < R; ++r) bp[r] = Xg + tsr_big(%s, 0);\n"
        "  float acc[R][S];\n"
        "#pragma unroll\n  for (int r = 0; r < R; ++r)\n"
        "#pragma unroll\n    for (int s = 0; s < S; ++s) acc[r][s] = 0.0f;\n"
        "  // lanes take VEC-wide K chunks 32 * VEC apart, each in ascending k\n"
        "#pragma unroll 4\n"
        "  for (int k = k0 + lane * VEC; k + VEC <= k1; k += 32 * VEC) {\n"
        "    float bv[R][VEC];\n"
        "#pragma unroll\n    for (int r = 0; r < R; ++r) tsr_ld(bv[r], bp[r] + k);\n"
        "#pragma unroll\n    for (int s = 0; s < S; ++s) {\n"
        "      float sv[VEC];\n",
        tail_x ? "xw + r < X ? xw + r : X - 1 /* tail: loads clamped, never stored */" : "xw + r");
    if (g->gv_svec) put(s, "      tsr_ld(sv, Sg + tsr_small(s, k));\n");
    else put(s, "#pragma unroll\n      for (int e = 0; e < VEC; ++e) sv[e] = Sg[tsr_small(s, k + e)];\n");
    put(s,
        "#pragma unroll\n      for (int r = 0; r < R; ++r)\n"
        "#pragma unroll\n        for (int e = 0; e < VEC; ++e) acc[r][s] = fmaf(bv[r][e], sv[e], acc[r][s]);\n"
        "    }\n"
        "  }\n");
    if (v > 1 && p->k % v)
      put(s,
          "  { // K tail: the last K %% VEC values, one per lane\n"
          "    const int kk = k0 + (k1 - k0) / VEC * VEC + lane;\n"
          "    if (kk < k1) {\n"
          "#pragma unroll\n      for (int s = 0; s < S; ++s) {\n"
          "        const float sv = Sg[tsr_small(s, kk)];\n"
          "#pragma unroll\n        for (int r = 0; r < R; ++r) acc[r][s] = fmaf(bp[r][kk], sv, acc[r][s]);\n"
          "      }\n"
          "    }\n"
          "  }\n");
    put(s,
        "#pragma unroll\n  for (int r = 0; r < R; ++r)\n"
        "#pragma unroll\n    for (int s = 0; s < S; ++s) {\n"
        "      float v = acc[r][s];\n"
        "      // XOR butterfly: lane i adds lane i ^ o's value; both get the same sum\n"
        "#pragma unroll\n      for (int o = 16; o > 0; o >>= 1) v += tsr_shfl_xor(v, o);\n"
        "      const int x = xw + r;\n"
        "      if (lane == (r * S + s) %% 32%s) {\n"
        "        if (!tsr_finite(v)) v = tsr_fix(A, B, bz, %s, %s, k0, k1);\n"
        "        tsr_put(out, s, x, alpha, beta, v);\n"
        "      }\n"
        "    }\n"
        "}\n\n",
        tail_x ? " && x < X" : "", row, col);
    return;
  }
  put(s,
      "  const int tid = (int)threadIdx.x, xt = tid %% (BX / VEC), grp = tid / (BX / VEC);\n"
      "  const int x = x0 + xt * VEC; // the thread's VEC outputs\n"
      "  float acc[S][VEC];\n"
      "#pragma unroll\n  for (int s = 0; s < S; ++s)\n"
      "#pragma unroll\n    for (int e = 0; e < VEC; ++e) acc[s][e] = 0.0f;\n"
      "  // group grp takes K rows k0 + grp, k0 + grp + KG, ... in ascending order\n"
      "#pragma unroll 4\n"
      "  for (int k = k0 + grp; k < k1; k += KG) {\n"
      "    float bv[VEC];\n"
      "    const float *bp = Xg + tsr_big(x, k);\n");
  if (!tail_x) put(s, "    tsr_ld(bv, bp);\n");
  else if (X % v == 0)
    put(s,
        "    if (x < X) tsr_ld(bv, bp);\n"
        "    else\n"
        "#pragma unroll\n      for (int e = 0; e < VEC; ++e) bv[e] = 0.0f; // tail: never stored\n");
  else
    put(s,
        "    if (x + VEC <= X) tsr_ld(bv, bp);\n"
        "    else\n"
        "#pragma unroll\n      for (int e = 0; e < VEC; ++e) bv[e] = x + e < X ? bp[e] : 0.0f;\n");
  put(s,
      "#pragma unroll\n    for (int s = 0; s < S; ++s) {\n"
      "      const float a = Sg[tsr_small(s, k)];\n"
      "#pragma unroll\n      for (int e = 0; e < VEC; ++e) acc[s][e] = fmaf(a, bv[e], acc[s][e]);\n"
      "    }\n"
      "  }\n");
  if (g->gv_kg == 1) {
    put(s,
        "#pragma unroll\n  for (int s = 0; s < S; ++s)\n"
        "#pragma unroll\n    for (int e = 0; e < VEC; ++e) {\n"
        "      float v = acc[s][e];\n"
        "      if (!tsr_finite(v)) v = tsr_fix(A, B, bz, %s, k0, k1);\n"
        "      %stsr_put(out, s, x + e, alpha, beta, v);\n"
        "    }\n"
        "}\n\n",
        g->gv_bigb ? "s, x + e" : "x + e, s", tail_x ? "if (x + e < X) " : "");
    return;
  }
  put(s,
      "  // the groups' partial sums, summed per output in group order\n"
      "  float *red = tsr_dynamic_smem(); // KG x S x BX\n"
      "#pragma unroll\n  for (int s = 0; s < S; ++s)\n"
      "#pragma unroll\n    for (int e = 0; e < VEC; ++e) red[(grp * S + s) * BX + xt * VEC + e] = acc[s][e];\n"
      "  __syncthreads();\n"
      "  for (int o = tid; o < S * BX; o += NT) {\n"
      "    const int s = o / BX, x = x0 + o %% BX;\n"
      "    float v = red[o];\n"
      "#pragma unroll\n    for (int q = 1; q < KG; ++q) v += red[q * S * BX + o];\n"
      "    %s{\n"
      "      if (!tsr_finite(v)) v = tsr_fix(A, B, bz, %s, %s, k0, k1);\n"
      "      tsr_put(out, s, x, alpha, beta, v);\n"
      "    }\n"
      "  }\n"
      "}\n\n",
      tail_x ? "if (x < X) " : "", row, col);
}

/* Every family but gemv: helpers, operand loads, the block, the main kernel. */
static void emit_family(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  emit_constants(s, p, g);
  emit_ptx(s, g);
  tsr__emit_walk(s, g);
  if (g->tf32) { /* tf32x3 operands are always staged */
    emit_soff(s, &g->a);
    emit_soff(s, &g->b);
  }
  if (g->wg) emit_wg_helpers(s, g);
  for (int i = 0; i < 2 && !g->wg; i++) {
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    if (!o->staged) continue;
    if (o->poff_small) {
      emit_load(s, g, o, "tsr_load_tile");
      emit_load_parts(s, o);
    } else if (g->plan.kloop) {
      if (!g->fftma) emit_load_ptr(s, g, o); /* fftma: TMA boxes, no thread copies */
    } else {
      emit_load(s, g, o, "tsr_load");
    }
  }
  if (!g->a.staged) emit_view(s, g, &g->a);
  if (!g->b.staged) emit_view(s, g, &g->b);
  emit_store(s, p, g, g->wg ? 2 : g->tf32 ? (g->b.fv > 1 ? g->b.fv : 2) : g->fn, 0);
  if (g->plan.tailk) emit_store(s, p, g, g->fn, 1); /* FFMA only (geometry.c) */

  if (g->tf32) emit_block_tf32(s, g);
  else if (!g->wg && g->plan.kloop >= 3) emit_frag_ffma(s, g);
  else if (!g->wg) emit_block_ffma(s, g);
  /* the strict recomputation of non-finite outputs: the tensor-core epilogue
   * and every split-K reduction use it */
  if (g->tf32 || g->wg || g->plan.splitk > 1 || (g->plan.tailk && g->tail_r)) tsr__emit_fix(s, g);
  if (g->plan.lazy) emit_lazy(s, p, g); /* A packed by the main kernel (geometry.c) */
  else if (g->a.packed) emit_pack(s, g, &g->a);
  if (g->b.packed) emit_pack(s, g, &g->b);
  if (g->wg) emit_main_wg(s, p, g);
  else emit_main(s, p, g);
}

/* ---- contract ---------------------------------------------------------------- */
tsr_status tsr__emit_check(const tsr_problem *p, const tsr_plan *plan,
                           const tsr__gpu_target *target, char *msg, size_t cap) {
  tsr__emit_geo g;
  return tsr__emit_geometry(p, plan, target, &g, msg, cap);
}

/* The launch geometry of a checked plan: kernel names, grids, blocks,
 * shared memory, workspace, prologues and the reduction (everything of
 * *out but the source text and its hash). */
static void fill_launch(const tsr_problem *p, const tsr__emit_geo *g, tsr__kernel_src *out) {
  snprintf(out->main_name, sizeof out->main_name, "tsr_gemm_main");
  out->grid[0] = g->h * g->w * (g->s8 ? (uint32_t)g->nmod + 1 : 1u);
  /* tailk: the whole waves' tiles, then tailk units per tail tile */
  if (g->plan.tailk) out->grid[0] = (uint32_t)(g->tail_d + g->tail_r * (uint64_t)g->plan.tailk);
  out->persistent = g->s8; /* wgmma-s8: work items per CTA; the runtime caps the grid */
  /* wgmma-s8: one modulus per grid row, then the magnitudes' product */
  out->grid[1] = (uint32_t)(g->s8 ? 1 : g->plan.splitk);
  out->grid[2] = (uint32_t)p->batch;
  out->block[0] = (uint32_t)g->nthreads + (g->ffprod ? (uint32_t)g->ff_plaunch : 0u);
  out->block[1] = out->block[2] = 1;
  out->smem_bytes = (uint32_t)g->smem_bytes;
  out->workspace_bytes = g->workspace_bytes;
  /* 384 threads: ptxas compiles for 65536 / 384 rounded down to 8 = 168 */
  out->regs_exact = g->maxnreg ? 168 : 0;
  /* FFMA producer: 256 threads, 2 (3) blocks an SM: 128 (80) */
  if (g->ff_setmax) out->regs_exact = g->ff_regs; /* setmaxnreg's premise */
  out->ntmap = 0;
  for (int i = 0; i < 2 && g->fftma; i++) {
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    int64_t rows = tsr__tma_rows(o, p);
    out->tmap[i].packed = o->packed;
    out->tmap[i].off = o->packed ? (uint64_t)o->poff : 0;
    /* the contiguous extent: x of [k][x] rows, k of [x][k] rows (kfrag) */
    out->tmap[i].dim[0] = (uint64_t)(o->packed ? o->ld : o->kmajor ? p->k : o->ext);
    out->tmap[i].dim[1] = (uint64_t)rows;
    out->tmap[i].dim[2] = (uint64_t)p->batch;
    out->tmap[i].stride[0] = (uint64_t)o->ld;
    out->tmap[i].stride[1] = p->batch > 1 ? (uint64_t)o->stride : (uint64_t)rows * (uint64_t)o->ld;
    out->tmap[i].box[0] = (uint32_t)(o->srows_x ? g->plan.bk : o->bmn);
    out->tmap[i].box[1] = (uint32_t)(o->srows_x ? o->bmn : g->plan.bk);
    out->ntmap = i + 1;
  }
  /* lazyk: A's pack kernel goes last, the main kernel's programmatic
   * primary (B's prologue, if any, ends before it starts) */
  for (int j = 0; j < 2; j++) {
    int i = g->plan.lazyk ? 1 - j : j;
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    if (!o->packed) continue;
    out->pack_off[i] = (uint64_t)o->poff;
    if (i == 0 && g->plan.lazy && !g->plan.lazyk) continue; /* the main kernel packs A */
    int n = out->npre++;
    snprintf(out->pre[n].name, sizeof out->pre[n].name, "tsr_gemm_pack_%c", o->name);
    /* lazyk: G CTAs walk the pieces (every batch item's) in K order */
    const int lk = i == 0 && g->plan.lazyk;
    out->pre[n].grid[0] = lk ? (uint32_t)g->plan.lazyk : (uint32_t)o->pre_blocks;
    out->pre[n].grid[1] = lk ? 1u : (uint32_t)p->batch;
    out->pre[n].grid[2] = 1;
    out->pre[n].block[0] = lk ? 32u * TSR__LAZYK_WARPS : 256u;
    out->pre[n].block[1] = out->pre[n].block[2] = 1;
  }
  out->pdl = g->plan.lazyk > 0;
  out->lazy_off = g->lazy_off;
  out->lazy_n = g->lazy_n;
  if (g->plan.splitk > 1 || g->s8 || (g->plan.tailk && g->tail_r)) { /* wgmma-s8: the reconstruction */
    snprintf(out->reduce_name, sizeof out->reduce_name, "tsr_gemm_reduce");
    out->reduce_grid[0] = (uint32_t)g->reduce_blocks;
    out->reduce_grid[1] = out->reduce_grid[2] = 1;
    out->reduce_block[0] = 256;
    out->reduce_block[1] = out->reduce_block[2] = 1;
  }
}

/* Both entry points: the geometry (the planner's acceptance) and *out's
 * launch fields. */
static tsr_status launch(const tsr_problem *p, const tsr_plan *plan,
                         const tsr__gpu_target *target, tsr__kernel_src *out, tsr__emit_geo *g,
                         char *msg, size_t cap) {
  if (!out) return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "emit: NULL output");
  memset(out, 0, sizeof *out);
  tsr_status st = tsr__emit_geometry(p, plan, target, g, msg, cap);
  if (st == TSR_OK) fill_launch(p, g, out);
  return st;
}

tsr_status tsr__emit_gemm_launch(const tsr_problem *p, const tsr_plan *plan,
                                 const tsr__gpu_target *target, tsr__kernel_src *out, char *msg,
                                 size_t cap) {
  tsr__emit_geo g;
  return launch(p, plan, target, out, &g, msg, cap);
}

tsr_status tsr__emit_gemm(const tsr_problem *p, const tsr_plan *plan,
                          const tsr__gpu_target *target, tsr__kernel_src *out, char *msg,
                          size_t cap) {
  tsr__emit_geo g;
  tsr_status st = launch(p, plan, target, out, &g, msg, cap);
  if (st != TSR_OK) return st;

  sb_t s = {0};
  emit_header(&s, p, &g);
  if (g.gemv) emit_gemv(&s, p, &g);
  else if (g.s8) tsr__emit_ozaki(&s, p, &g);
  else emit_family(&s, p, &g);
  if (g.plan.splitk > 1) emit_reduce(&s, p, &g);
  if (g.plan.tailk && g.tail_r) emit_reduce_tail(&s, p, &g);
  if (s.oom) {
    free(s.p);
    return tsr__failbuf(msg, cap, TSR_ERR_NOMEM, "emit: out of memory building the source");
  }
  out->source = s.p;
  out->len = s.len;
  if (tsr__sha256_hex(out->source, out->len, out->sha256) != 0) {
    tsr__kernel_src_free(out);
    return tsr__failbuf(msg, cap, TSR_ERR_NOMEM, "emit: SHA-256 failed");
  }
  return TSR_OK;
}

void tsr__kernel_src_free(tsr__kernel_src *k) {
  if (!k) return;
  free(k->source);
  k->source = NULL;
  k->len = 0;
}
