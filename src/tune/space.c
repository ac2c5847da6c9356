/* The joint search space and its analytic prior (docs/tune.md).
 *
 * The space is the full product of the plan dimensions a backend uses; the
 * planner (tsr_plan_realize through the backend vtable) decides legality,
 * the prior only decides the order of measurement. The prior is a cheap
 * estimate of relative time, not a calibrated model: every claim about
 * speed comes from the measurements that follow. */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/context.h"
#include "core/space.h"
#include "emit/emit.h"
#include "measure/exec.h"
#include "tune/tune.h"

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return cdiv(a, b) * b; }

static int online_cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (int)n;
}

static double cache_bytes(int name, double dflt) {
  long v = sysconf(name);
  return v > 0 ? (double)v : dflt;
}

/* ---- prior -------------------------------------------------------------- */
/* Penalty 1 while bytes fit in half the cache, growing linearly beyond. */
static double fit_penalty(double bytes, double cache) {
  double half = 0.5 * cache;
  return bytes <= half ? 1.0 : 1.0 + 0.5 * (bytes - half) / half;
}

/* CPU: time ∝ flops / (vector lanes × micro-kernel efficiency × busy
 * threads) × edge waste × (1 + packing and C-pass overheads) × cache-fit
 * penalties (B micro-panel in half of L1, A block in half of L2). */
static double prior_cpu(const tsr_problem *p, const tsr_plan_info *info) {
  const tsr_plan *pl = &info->plan;
  double lanes = pl->isa == TSR_ISA_AVX512 ? 16 : pl->isa == TSR_ISA_AVX2 ? 8 : 2;
  double ri = (double)pl->tm * pl->tn / (pl->tm + pl->tn); /* FMAs per loaded value */
  double acc = (double)pl->tm * pl->tn / lanes;           /* accumulator vectors */
  double regs = pl->isa == TSR_ISA_AVX512 ? 32 : 16;
  double keff = ri / (ri + 2.0) * fmin(1.0, acc / 8.0);   /* FMA latency needs ~8 chains */
  if (pl->isa != TSR_ISA_GENERIC && acc + pl->tn / lanes + 1 > regs) keff *= 0.5; /* spills */
  double m = (double)p->m, n = (double)p->n, k = (double)p->k;
  double waste = (double)round_up(p->m, pl->tm) * (double)round_up(p->n, pl->tn) / (m * n);
  double l1 = cache_bytes(_SC_LEVEL1_DCACHE_SIZE, 32768), l2 = cache_bytes(_SC_LEVEL2_CACHE_SIZE, 1 << 20);
  double ov, pen;
  if (pl->a == TSR_IN_VIEW) {
    /* Read in place: no packing, only partial tiles (no padding waste);
     * the kc×bn block of op(B) is re-read once per tm rows, so it must
     * stay in L2, and tm rows of op(A) over kc in L1. */
    waste = 1.0;
    ov = 2.0 * lanes / fmin((double)pl->bk, k);
    pen = fit_penalty(4.0 * pl->bk * pl->tm, l1) * fit_penalty(4.0 * pl->bk * pl->bn, l2);
  } else {
    ov = lanes / pl->bn      /* A re-packed once per column tile */
         + lanes / pl->bm    /* B re-packed once per row tile */
         + 2.0 * lanes / fmin((double)pl->bk, k); /* C read/written per K block */
    pen = fit_penalty(4.0 * pl->bk * pl->tn, l1) *
          fit_penalty(4.0 * round_up(pl->bm, pl->tm) * pl->bk, l2);
  }
  double tasks = (double)info->grid_rows * info->grid_cols * info->grid_batch;
  double t = info->threads > 0 ? info->threads : 1;
  double cores = online_cores();
  if (t > cores) t = cores;
  double balance = tasks / (ceil(tasks / t) * t);
  double flops = 2.0 * m * n * k * (double)p->batch;
  return flops / (lanes * 2.0 * keff * t * balance) * waste * (1.0 + ov) * pen;
}

/* GPU (H200: 132 SMs, 64K registers, 228 KiB shared memory, 2048 threads
 * per SM; FFMA peak 64 TFLOP/s, ~4 TB/s): estimated time = max(compute /
 * (wave efficiency × latency hiding), global traffic / bandwidth) + launch
 * overhead. Compute uses the tile's register intensity (tm×tn/(tm+tn));
 * occupancy is blocks per SM limited by threads, an estimate of registers
 * and shared memory; wave quantization = tiles / (waves × 132 × blocks). */
#define PRIOR_SMS 132.0 /* the prior's machine (H200 and H100 SXM alike) */
/* mma=wgmma-s8, from the H200's session 7 (docs/emit.md "Ozaki"): moduli + 1
 * INT8 GEMMs at ~1.5 POP/s (76 % of peak) over persistent work items, the
 * packs ~6.2 ps per operand value, the reconstruction ~10.6 ps per output;
 * the guard's magnitude GEMM over every gstride-th K block only */
static double prior_ozaki(const tsr_problem *p, const tsr_plan *pl) {
  double b = (double)p->batch, gemms = (double)pl->moduli + 1.0 / (pl->gstride > 1 ? pl->gstride : 1);
  double tiles = ceil((double)p->m / pl->bm) * ceil((double)p->n / pl->bn);
  double items = tiles * gemms, rounds = ceil(items / PRIOR_SMS);
  double eff = items / (rounds * PRIOR_SMS);
  double t_main = gemms * 2.0 * (double)p->m * p->n * p->k * b / (1.5e15 * eff);
  double t_pass = 6.2e-12 * b * ((double)p->m * p->k + (double)p->k * p->n) +
                  1.06e-11 * b * (double)p->m * p->n;
  return t_main + t_pass + 12e-6;
}

/* mma=gemv: reading the big operand once (docs/emit.md "mma=gemv": 15 us
 * of 67 MB at ~4.5 TB/s), slower with fewer than ~16 resident warps per SM
 * to hide its latency, narrower loads, and split-K's partials pass */
static double prior_gemv(const tsr_problem *p, const tsr_plan_info *info) {
  const tsr_plan *pl = &info->plan;
  double x = p->m <= p->n ? (double)p->n : (double)p->m, s = p->m <= p->n ? p->m : p->n;
  double bytes = 4.0 * (double)p->batch * (x * p->k + s * p->k + 2.0 * x * s);
  bytes *= pl->vec >= 4 ? 1.0 : pl->vec == 2 ? 1.15 : 1.35;
  double ctas = (double)info->grid_rows * info->grid_cols * info->grid_batch;
  double warps = ctas * (info->threads ? info->threads : 256) / 32.0 / PRIOR_SMS;
  /* one rate for both layouts: at S = 16 lanes along k streamed
   * 1.05-1.6 TB/s and a lane per row (lanerows) 1.34-1.5 (H200, session
   * 11), both far under this, but the ordering against the FFMA tiles'
   * prior is what keeps GEMV candidates in the kept set */
  double t = bytes / (4.5e12 * fmin(1.0, warps / 16.0)) + 3e-6;
  if (pl->splitk > 1) t += 8.0 * (double)p->batch * x * s * pl->splitk / 4.5e12 + 2e-6;
  return t;
}

static double prior_gpu(const tsr_problem *p, const tsr_plan_info *info) {
  const tsr_plan *pl = &info->plan;
  if (pl->mma == TSR_MMA_WGMMA_S8) return prior_ozaki(p, pl);
  if (pl->mma == TSR_MMA_GEMV) return prior_gemv(p, info);
  const double sms = PRIOR_SMS, peak = 64e12, bw = 4e12;
  double threads = info->threads ? info->threads : 256;
  double regs = info->regs > 0 ? info->regs : fmin(255.0, pl->tm * pl->tn + 2.0 * (pl->tm + pl->tn) + 40);
  double bps = fmin(32.0, floor(2048.0 / threads));
  bps = fmin(bps, floor(65536.0 / (regs * threads)));
  bps = fmin(bps, floor(233472.0 / ((double)info->smem_bytes + 1024.0)));
  if (bps < 1) return 1e30;
  double tiles = (double)info->grid_rows * info->grid_cols * info->grid_batch;
  double waves = ceil(tiles / (sms * bps));
  /* tail slices (tailk): the tiles past the last whole wave run as tailk
   * units of 1/tailk of a tile each, so the last wave is that much shorter */
  if (pl->tailk > 0 && pl->wave > 0 && info->grid_batch == 1) {
    double w = pl->wave, whole = floor(tiles / w), rest = tiles - whole * w;
    waves = (whole + ceil(rest * pl->tailk / w) / pl->tailk) * w / (sms * bps);
  }
  double wave_eff = tiles / (waves * sms * bps);
  double warps = bps * threads / 32.0;
  double lat = fmin(1.0, warps / (pl->stages >= 2 ? 8.0 : 16.0));
  double ri = (double)pl->tm * pl->tn / (pl->tm + pl->tn);
  double inner = ri / (ri + 1.5);
  if (pl->mma == TSR_MMA_TF32X3) inner *= 2.0; /* three TF32 MMAs vs FFMA: a guess, measured after */
  if (pl->mma == TSR_MMA_TF32) inner *= 0.7;   /* one TF32 MMA: a guess */
  /* wgmma (tm = tn = 1, inner 0.25 before): the producer kernels ran 3xTF32
   * at 58-62 effective TFLOP/s at 4096^3 (H200 runs 15-17): 0.9 of the FFMA
   * peak; wgmma-tf32 not yet measured: a guess at twice cuBLAS SGEMM */
  if (pl->mma == TSR_MMA_WGMMA_TF32X3) inner *= 3.6;
  if (pl->mma == TSR_MMA_WGMMA_TF32) inner *= 8.0;
  /* split=producer-tma (FFMA): the producer's ~133 warp-instructions a K
   * block of a 64x128x16 tile drop to ~50 against the consumers' 4432
   * (local SASS, session 23): ~1.8 % of the issue slots, not yet measured */
  if (pl->split == TSR_SPLIT_PRODUCER_TMA) inner *= 1.018;
  /* split=pack: no split in the loop (SASS at 4096^3 tf32x3: 329 instead of
   * 569 instructions per 96 MMAs; not yet measured: a mild 1.1x on the
   * inner rate, which still puts pack variants ahead of inline ones of equal
   * prior, and the prior ties most tensor-core geometries), for a prologue
   * that reads A and B once and writes their parts (two tensors each for
   * tf32x3) plus two launches */
  double t_pack = 0;
  if (pl->split == TSR_SPLIT_PACK || pl->split == TSR_SPLIT_PRODUCER_PACK ||
      pl->split == TSR_SPLIT_PRODUCER_BULK) {
    inner *= 1.1;
    double parts = pl->mma == TSR_MMA_TF32X3 || pl->mma == TSR_MMA_WGMMA_TF32X3 ? 2.0 : 1.0;
    double ops = (double)p->batch * ((double)p->m * p->k + (double)p->k * p->n);
    t_pack = 4.0 * ops * (1.0 + parts) / bw + 4e-6;
  }
  /* the tiles' work, padding included: a 32x256 tile on a 64x64 output
   * multiplies 4x the outputs it writes (session 33: without this the prior
   * tied it with 32x32 tiles, and 64x64x8192's kept candidates began with
   * 256-wide ones) */
  double rows = ceil((double)p->m / pl->bm) * pl->bm, cols = ceil((double)p->n / pl->bn) * pl->bn;
  double flops = 2.0 * rows * cols * p->k * (double)p->batch;
  double t_comp = flops / (peak * inner * wave_eff * lat);
  /* a view (direct loads) puts each global load's latency on the FFMA
   * stream, with no stage to hide it behind: in the stored tune documents
   * (sessions 24-33, 20 shapes, 253 measured view candidates) no view ever
   * won, the best 1.05-57x the winner, a median view 1.6-1.9x its shape's
   * median candidate; the traffic factor alone left them tied with staged
   * plans wherever the compute time binds (session 33 run 7: 136 of 725) */
  if (pl->mma == TSR_MMA_FFMA)
    t_comp *= (pl->a == TSR_IN_VIEW ? 1.5 : 1.0) * (pl->b == TSR_IN_VIEW ? 1.5 : 1.0);
  /* A read once per column of tiles, B once per row of tiles: a tile wider
   * than the problem reads its operand once, not M/bm times (8x4096x4096
   * with bm=32 read all of B, not a quarter; session 9) */
  double traffic = 4.0 * (double)p->batch *
                   ((double)p->m * p->k * ceil((double)p->n / pl->bn) +
                    (double)p->k * p->n * ceil((double)p->m / pl->bm));
  traffic *= (pl->vec >= 4 ? 1.0 : pl->vec == 2 ? 1.15 : 1.35);
  traffic *= (pl->a == TSR_IN_VIEW ? 1.3 : 1.0) * (pl->b == TSR_IN_VIEW ? 1.3 : 1.0);
  double t_mem = traffic / bw;
  double extra = 3e-6;
  if (pl->splitk > 1) {
    extra += 2e-6;
    t_mem += 8.0 * (double)p->m * p->n * pl->splitk * (double)p->batch / bw;
  }
  return fmax(t_comp, t_mem) + extra + t_pack;
}

double tsr__tune_prior(tsr_backend_kind b, const tsr_problem *p, const tsr_plan_info *info) {
  return b == TSR_BACKEND_CPU ? prior_cpu(p, info) : prior_gpu(p, info);
}

/* The share of the GPU's 132 SMs (the prior's machine) that get at least one
 * program: the grid's programs (tiles x batch x split-K) over the SMs, at most
 * 1. The prior's wave efficiency counts block slots (132 x blocks an SM), so a
 * grid that leaves SMs idle and one that puts fewer blocks on every SM can
 * rate alike (session 28: 86 programs and 258 both 0.65). CPU: 1. */
double tsr__tune_sm_fill(tsr_backend_kind b, const tsr_plan_info *info) {
  if (b == TSR_BACKEND_CPU) return 1.0;
  double units = (double)info->grid_rows * info->grid_cols * info->grid_batch;
  return fmin(1.0, units / PRIOR_SMS);
}

/* ---- generation ----------------------------------------------------------- */
typedef struct {
  tsr_plan *v;
  size_t n, cap;
} plan_vec;

static int push(plan_vec *pv, const tsr_plan *pl) {
  if (pv->n == pv->cap) {
    size_t nc = pv->cap ? 2 * pv->cap : 1024;
    tsr_plan *t = realloc(pv->v, nc * sizeof *t);
    if (!t) return -1;
    pv->v = t;
    pv->cap = nc;
  }
  pv->v[pv->n++] = *pl;
  return 0;
}

/* Equal blocks of at most `target` along an extent, rounded up to `mult`. */
static int equal_block(int64_t extent, int64_t target, int64_t mult) {
  int64_t b = round_up(cdiv(extent, cdiv(extent, target)), mult);
  return b > 65536 ? 65536 : (int)b;
}

static int gen_cpu(const tsr_problem *p, const tsr_plan *base, plan_vec *pv) {
  static const tsr_isa isas[] = {TSR_ISA_AVX512, TSR_ISA_AVX2, TSR_ISA_GENERIC};
  static const int kcs[] = {64, 128, 192, 256, 384, 512};
  static const int mcs[] = {48, 96, 192, 288, 384};
  static const int ncs[] = {256, 512, 1024, 2048};
  const tsr_walk walks[] = {{TSR_WALK_LINEAR, 1, 1}, {TSR_WALK_RECT, 2, 2}, {TSR_WALK_STRIPE, 2, 1}};
  int cores = online_cores();
  int thread_opts[2] = {0, 1};
  int nthr = cores > 1 ? 2 : 1;
  for (int ii = 0; ii < 3; ii++) {
    int tiles[64][2];
    int ntiles = tsr__plan_micro_tiles(TSR_BACKEND_CPU, isas[ii], 0, tiles, 64);
    if (ntiles > 64) ntiles = 64;
    for (int kt = 0; kt < ntiles; kt++)
      for (size_t a = 0; a < sizeof kcs / sizeof kcs[0]; a++)
        for (size_t bi = 0; bi < 2 * sizeof mcs / sizeof mcs[0]; bi++)
          for (size_t c = 0; c < 2 * sizeof ncs / sizeof ncs[0]; c++)
            for (int w = 0; w < 3; w++)
              for (int t = 0; t < nthr; t++) {
                /* MC and NC as equal blocks rounded to the micro-tile, and
                 * rounded to 16 floats (a cache line pair): the planner
                 * rejects the latter where the micro-tile does not divide. */
                size_t nm = sizeof mcs / sizeof mcs[0], nn = sizeof ncs / sizeof ncs[0];
                tsr_plan pl = *base;
                pl.isa = isas[ii];
                pl.tm = tiles[kt][0];
                pl.tn = tiles[kt][1];
                pl.bk = equal_block(p->k, kcs[a], 1);
                pl.bm = equal_block(p->m, mcs[bi % nm], bi < nm ? tiles[kt][0] : 16);
                pl.bn = equal_block(p->n, ncs[c % nn], c < nn ? tiles[kt][1] : 16);
                pl.walk = walks[w];
                pl.threads = thread_opts[t];
                if (push(pv, &pl)) return -1;
              }
  }
  /* a=view,b=view: direct kernels, nothing packed (op(B) = N only; the
   * planner rejects the rest with its reason). K whole or in blocks. */
  int view_tiles[16][2];
  int nview = tsr__plan_micro_tiles(TSR_BACKEND_CPU, TSR_ISA_AUTO, 1, view_tiles, 16);
  if (nview > 16) nview = 16;
  static const int view_kcs[] = {0, 64, 256};
  static const int view_mcs[] = {12, 48, 96, 192};
  static const int view_ncs[] = {32, 128, 512};
  for (int a = 0; a < nview; a++)
    for (size_t kc = 0; kc < sizeof view_kcs / sizeof view_kcs[0]; kc++)
      for (size_t bi = 0; bi < sizeof view_mcs / sizeof view_mcs[0]; bi++)
        for (size_t c = 0; c < sizeof view_ncs / sizeof view_ncs[0]; c++)
          for (int w = 0; w < 3; w++)
            for (int t = 0; t < nthr; t++) {
              tsr_plan pl = *base;
              pl.a = pl.b = TSR_IN_VIEW;
              pl.isa = TSR_ISA_AUTO;
              pl.tm = view_tiles[a][0];
              pl.tn = view_tiles[a][1];
              pl.bk = view_kcs[kc] ? equal_block(p->k, view_kcs[kc], 1) : equal_block(p->k, 65536, 1);
              pl.bm = equal_block(p->m, view_mcs[bi], pl.tm);
              pl.bn = equal_block(p->n, view_ncs[c], pl.tn);
              pl.walk = walks[w];
              pl.threads = thread_opts[t];
              if (push(pv, &pl)) return -1;
            }
  return 0;
}

/* mma 0 ffma, 1 tf32x3, 2 tf32, 3 ozaki (wgmma-s8): the family runs the
 * problem's mode; auto admits every family of the FP32 contract. */
static int family_ok(const tsr_problem *p, int mma) {
  switch (p->precision) {
    case TSR_PREC_STRICT: return mma == 0;
    case TSR_PREC_FP32X3: return mma == 1;
    case TSR_PREC_TF32: return mma == 2;
    case TSR_PREC_OZAKI: return mma == 3;
    default: return mma != 2;
  }
}

/* The default plan's fields that belong to its own family cleared: a
 * candidate of another family made from it would otherwise carry them
 * (threads=256 of a gemv default, the moduli of an Ozaki one, kloop of a
 * strict one) and the planner would refuse it (zoo-tune, session 9: 11
 * planner-legal candidates of 364064 at every GEMV shape, 18 at 4096^3). */
static tsr_plan family_base(const tsr_plan *base) {
  tsr_plan pl = *base;
  pl.threads = 0;
  pl.kloop = 0;
  pl.kunroll = 0;
  pl.kfrag = TSR_PACK_NONE;
  pl.pack = TSR_PACK_NONE;
  pl.moduli = 0;
  pl.gstride = 0;
  pl.rvec = 0;
  pl.lanerows = 0;
  /* the FFMA order and tail slices: set per candidate below (a tail split
   * made for the default's tile and wave fits no other) */
  pl.tailk = pl.wave = pl.forder = pl.kwait = pl.pelect = pl.krel = pl.kinner = pl.lazy =
      pl.lazyk = 0;
  return pl;
}

static int gen_cuda(const tsr_problem *p, const tsr_plan *base0, plan_vec *pv) {
  const tsr_plan fb = family_base(base0), *base = &fb;
  static const int tiles[] = {32, 64, 128, 256};
  static const int bks[] = {8, 16, 32};
  static const int warps[] = {16, 32, 64, 128};
  static const int micro[] = {4, 8};
  static const int stages[] = {1, 2, 3, 4};
  static const int vecs[] = {4, 2, 1};
  /* split-K 1, 2 and 4 (where K >= 256 per slice) and the incumbent's own
   * count and the counts half and twice it (at least 2 K blocks of 16 a
   * slice), those not among the three: the long-K and small-output defaults
   * split 32-128 ways, the 64-row decode ones 3 (session 28's strict tune
   * measured only 4-way splits against 64x64x8192's 128-way default, and
   * left the default unexplored) */
  int splits[6] = {1, 2, 4}, nsplits = 3;
  for (int f = 0; f < 3; f++) {
    int sk = f == 0 ? base0->splitk / 2 : f == 1 ? base0->splitk : 2 * base0->splitk;
    int dup = 0;
    for (int i = 0; i < nsplits; i++) dup |= splits[i] == sk;
    if (sk >= 2 && !dup && p->k >= 32 * (int64_t)sk) splits[nsplits++] = sk;
  }
  tsr_walk walks[] = {{TSR_WALK_LINEAR, 1, 1}, {TSR_WALK_RECT, 4, 8}, {TSR_WALK_STRIPE, 8, 1}};
  /* the operands stored along k: the FFMA fragments kfrag may read as rows */
  const tsr_pack kfrag_k = (tsr_pack)((p->op_a == TSR_OP_N ? TSR_PACK_A : 0) |
                                      (p->op_b == TSR_OP_T ? TSR_PACK_B : 0));
  /* the third walk is the incumbent's where it is neither of the first two
   * (the large defaults' rect:8x16): its one-key variants then keep it */
  if (base0->walk.kind != TSR_WALK_LINEAR &&
      !(base0->walk.kind == TSR_WALK_RECT && base0->walk.r == 4 && base0->walk.c == 8))
    walks[2] = base0->walk;
  for (int bmi = 0; bmi < 4; bmi++)
    for (int bni = 0; bni < 4; bni++)
      for (int wmi = 0; wmi < 4; wmi++)
        for (int wni = 0; wni < 4; wni++) {
          int bm = tiles[bmi], bn = tiles[bni], wm = warps[wmi], wn = warps[wni];
          if (wm > bm || wn > bn || bm % wm || bn % wn) continue;
          int nwarps = (bm / wm) * (bn / wn);
          if (nwarps > 16) continue; /* 512 threads at most */
          for (int tmi = 0; tmi < 2; tmi++)
            for (int tni = 0; tni < 2; tni++) {
              int tm = micro[tmi], tn = micro[tni];
              for (int mma = 0; mma < 3; mma++) {
                /* The families the problem's precision admits (auto: strict
                 * and fp32x3, docs/accuracy.md). */
                if (!family_ok(p, mma)) continue;
                /* FFMA: 32 lanes of tm×tn cover the warp tile exactly; the
                 * tensor-core families have no micro-tile (tm = tn = 1),
                 * generated once, staged operands only. */
                if (mma == 0 && wm * wn != 32 * tm * tn) continue;
                if (mma != 0 && (tmi || tni || wm % 16 || wn % 8)) continue;
                for (int bki = 0; bki < 3; bki++)
                  for (int si = 0; si < 4; si++)
                    for (int vi = 0; vi < 3; vi++)
                      for (int ab = 0; ab < (mma ? 1 : 4); ab++)
                        for (int w = 0; w < 3; w++)
                          for (int ki = 0; ki < nsplits; ki++)
                            /* tensor cores: the TF32 split in the loop or
                             * once in the pack prologue */
                            for (int sp = 0; sp < (mma ? 2 : 11); sp++) {
                            /* tensor cores: sp = split=pack; FFMA: sp = 1
                             * kloop=1 (running copy pointers, session 5), 2
                             * kloop=3 (two fragment sets, session 14: both
                             * operands staged, even bk), 3 kfrag with
                             * kloop=1 on the operands that run along k
                             * (NT: kfrag=ab, the decode rows' default since
                             * session 15; NN: kfrag=a, 128x128x16384's
                             * 64x64 tile 0.981 against the default's 1.044,
                             * session 20; TT: kfrag=b; TN: none),
                             * 4 and 5 split=producer (a copying warpgroup
                             * beside 4 warps, kloop=2 copies, session 21) at
                             * 2 and 3 blocks per SM, the latter in
                             * serpentine FMAs (forder=1, session 22) as the
                             * defaults; 6 the same with the defaults' tail
                             * slices (where their rule applies); 7 and 8
                             * those two with TMA tensor copies
                             * (split=producer-tma, session 23: pad=0, the
                             * k-contiguous operands packed, vec unused; read
                             * unpacked as kfrag boxes they lost 10-20 %,
                             * session 25; krel=1, session 31); 9
                             * and 10 the TMA ring without a producer
                             * (split=tma, session 24) at 4 blocks an SM,
                             * 10 with tail slices of its 528-CTA wave. No
                             * prior factor: its instruction floor is the
                             * LDGSTS producer's within 1 %, and the prior
                             * prices its occupancy through the waves */
                            if (mma && sp && vi) continue; /* packed operands pick their own vec */
                            if (sp >= 4 && (ab || stages[si] < 2 || nwarps != 4)) continue;
                            if (sp >= 5 && tm * tn > 64) continue; /* 128 registers a consumer */
                            if (sp >= 7 && vi) continue;
                            if (sp == 2 && (ab || bks[bki] % 2 || stages[si] < 2)) continue;
                            if (sp == 3 && (ab || stages[si] < 2 || !kfrag_k)) continue;
                            int sk = splits[ki];
                            if (ki < 3 && sk > 1 && p->k < 256 * sk) continue; /* the incumbent's: above */
                            tsr_plan pl = *base;
                            pl.bm = bm;
                            pl.bn = bn;
                            pl.bk = bks[bki];
                            pl.wm = wm;
                            pl.wn = wn;
                            pl.tm = mma ? 1 : tm;
                            pl.tn = mma ? 1 : tn;
                            pl.stages = stages[si];
                            pl.vec = vecs[vi];
                            pl.a = (ab & 1) ? TSR_IN_VIEW : TSR_IN_STAGED;
                            pl.b = (ab & 2) ? TSR_IN_VIEW : TSR_IN_STAGED;
                            pl.walk = walks[w];
                            pl.splitk = sk;
                            pl.mma = mma == 2 ? TSR_MMA_TF32 : mma ? TSR_MMA_TF32X3 : TSR_MMA_FFMA;
                            /* tensor cores: promotion each K step (fp32x3),
                             * the chain for tf32 (its bound allows it) */
                            pl.acc = mma == 2 ? TSR_ACC_CHAIN : TSR_ACC_STEP;
                            if (mma) pl.pad = 0; /* the XOR-swizzled layout */
                            else if (pl.pad == 0) pl.pad = 4;
                            pl.minblocks = 0;
                            pl.split = mma && sp ? TSR_SPLIT_PACK : TSR_SPLIT_INLINE;
                            /* split=pack packs both operands (canonical text) */
                            pl.pack = mma && sp ? TSR_PACK_AB : TSR_PACK_NONE;
                            pl.kloop = mma ? 0 : sp == 2 ? 3 : sp >= 4 ? 2 : sp ? 1 : 0;
                            if (sp == 3) pl.kfrag = kfrag_k;
                            if (!mma && sp >= 4) pl.split = TSR_SPLIT_PRODUCER;
                            if (!mma && sp >= 5) pl.minblocks = 3, pl.forder = 1;
                            if (!mma && sp >= 7) {
                              pl.split = TSR_SPLIT_PRODUCER_TMA;
                              pl.pad = 0;
                              pl.pack = (tsr_pack)((p->op_a == TSR_OP_N ? TSR_PACK_A : 0) |
                                                   (p->op_b == TSR_OP_T ? TSR_PACK_B : 0));
                              pl.krel = 1; /* the default's slot release (session 31) */
                            }
                            if (!mma && sp >= 9) pl.split = TSR_SPLIT_TMA, pl.minblocks = 4, pl.krel = 0;
                            if (!mma && (sp == 6 || sp == 8 || sp == 10) && !tsr__emit_tail_slices(p, &pl))
                              continue;
                            if (push(pv, &pl)) return -1;
                          }
              }
            }
        }
  return 0;
}

/* wgmma (sm_90a; the planner refuses these elsewhere): the geometries and
 * split modes measured on the H200 (docs/emit.md "wgmma", notebook runs
 * 14-17), each with its own K block and stages, rather than the product of
 * every key: most products exceed the registers or shared memory. */
static int gen_cuda_wgmma(const tsr_problem *p, const tsr_plan *base0, plan_vec *pv) {
  const tsr_plan fb = family_base(base0), *base = &fb;
  static const struct { int bm, bn, wm, wn; } geo[] = {
      {256, 128, 128, 128}, {128, 256, 64, 128}, {128, 128, 64, 128}, {128, 128, 64, 64}, {128, 64, 64, 64}};
  static const struct { tsr_split split; int bk, stages; } modes[] = {
      {TSR_SPLIT_INLINE, 16, 4},        {TSR_SPLIT_PRODUCER, 16, 3},      {TSR_SPLIT_PRODUCER_REG, 8, 8},
      {TSR_SPLIT_PRODUCER_PACK, 8, 8}, {TSR_SPLIT_PRODUCER_PACK, 8, 6}, {TSR_SPLIT_PRODUCER_BULK, 8, 8},
      {TSR_SPLIT_PRODUCER_BULK, 16, 4}};
  static const int splits[] = {1, 2, 4};
  const tsr_walk walks[] = {{TSR_WALK_RECT, 8, 16}, {TSR_WALK_LINEAR, 1, 1}};
  for (int x3 = 1; x3 >= 0; x3--) {
    if (!family_ok(p, x3 ? 1 : 2)) continue;
    for (size_t gi = 0; gi < sizeof geo / sizeof geo[0]; gi++)
      for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++)
        for (int w = 0; w < 2; w++)
          for (int ki = 0; ki < 3; ki++)
            for (int pk = 0; pk < 2; pk++) { /* pack=ab: 16-byte rows where the user's are not */
              int sk = splits[ki];
              if (sk > 1 && p->k < 256 * sk) continue;
              int packs = modes[mi].split == TSR_SPLIT_PRODUCER_PACK ||
                          modes[mi].split == TSR_SPLIT_PRODUCER_BULK;
              if (pk && packs) continue; /* packs anyway */
              tsr_plan pl = *base;
              pl.bm = geo[gi].bm;
              pl.bn = geo[gi].bn;
              pl.wm = geo[gi].wm;
              pl.wn = geo[gi].wn;
              pl.tm = pl.tn = 1;
              pl.bk = modes[mi].bk;
              pl.stages = modes[mi].stages;
              pl.split = modes[mi].split;
              pl.vec = 4;
              pl.pad = 0;
              pl.a = pl.b = TSR_IN_STAGED;
              pl.walk = walks[w];
              pl.splitk = sk;
              pl.mma = x3 ? TSR_MMA_WGMMA_TF32X3 : TSR_MMA_WGMMA_TF32;
              pl.acc = TSR_ACC_STEP;
              pl.minblocks = 0;
              pl.pack = pk || packs ? TSR_PACK_AB : TSR_PACK_NONE;
              if (push(pv, &pl)) return -1;
            }
  }
  return 0;
}

/* mma=wgmma-s8 (sm_90a, the Ozaki family, docs/emit.md "Ozaki"): the
 * geometries that fit its registers and shared memory, the fewest moduli
 * keeping 25 bits per operand and one more (more accurate, slower). */
static int gen_cuda_ozaki(const tsr_problem *p, const tsr_plan *base, plan_vec *pv) {
  if (!family_ok(p, 3) || p->k > 131071) return 0;
  static const struct { int bm, bn, wm, wn, bk, stages; } geo[] = {
      {256, 128, 128, 128, 64, 6}, {128, 256, 64, 256, 64, 6}, {256, 128, 128, 128, 128, 3},
      {128, 128, 64, 128, 64, 8},  {128, 64, 64, 64, 64, 8}};
  const tsr_walk walks[] = {{TSR_WALK_RECT, 8, 16}, {TSR_WALK_LINEAR, 1, 1}};
  tsr_plan def = family_base(base);
  tsr__emit_ozaki_plan(p, &def); /* the family's fixed fields and its moduli */
  for (size_t gi = 0; gi < sizeof geo / sizeof geo[0]; gi++)
    for (int w = 0; w < 2; w++)
      for (int extra = 0; extra < 2; extra++) {
        if (def.moduli + extra > TSR__OZAKI_MAX_MODULI) continue;
        tsr_plan pl = def;
        pl.bm = geo[gi].bm, pl.bn = geo[gi].bn, pl.wm = geo[gi].wm, pl.wn = geo[gi].wn;
        pl.bk = geo[gi].bk, pl.stages = geo[gi].stages;
        pl.walk = walks[w];
        pl.moduli += extra;
        pl.gstride = tsr__ozaki_gstride_for(p->k, pl.bk);
        if (push(pv, &pl)) return -1;
      }
  return 0;
}

/* The fields every mma=gemv candidate shares (the family fixes them). */
static tsr_plan gemv_base(const tsr_plan *base) {
  tsr_plan pl = family_base(base);
  pl.mma = TSR_MMA_GEMV;
  pl.acc = TSR_ACC_STEP;
  pl.split = TSR_SPLIT_INLINE;
  pl.wm = pl.wn = pl.tm = pl.tn = 1;
  pl.stages = 1;
  pl.pad = 0;
  pl.a = pl.b = TSR_IN_STAGED;
  pl.minblocks = 0;
  pl.walk = (tsr_walk){TSR_WALK_LINEAR, 1, 1};
  return pl;
}

/* mma=gemv (strict; docs/emit.md "mma=gemv"), where one side is at most 16:
 * the CTA's outputs along the big axis, its threads, the K block and the
 * split-K around the default's guesses; the short side's tile is 16 (it
 * covers S whole). The planner refuses the combinations its rules do not
 * allow (threads against the tile, bk against vec, split-K against K). */
static int gen_cuda_gemv(const tsr_problem *p, const tsr_plan *base, plan_vec *pv) {
  if (!family_ok(p, 0) || (p->m > 16 && p->n > 16)) return 0;
  static const int bxs[] = {4, 8, 16, 32, 64, 128, 256};
  static const int thr[] = {64, 128, 256, 512};
  static const int bks[] = {64, 128, 256, 512, 1024};
  static const int sks[] = {1, 2, 4, 8, 16, 32};
  int bigb = p->m <= p->n;
  for (size_t xi = 0; xi < sizeof bxs / sizeof bxs[0]; xi++)
    for (size_t ti = 0; ti < sizeof thr / sizeof thr[0]; ti++)
      for (size_t ki = 0; ki < sizeof bks / sizeof bks[0]; ki++)
        for (size_t si = 0; si < sizeof sks / sizeof sks[0]; si++) {
          if ((int64_t)bks[ki] * sks[si] > 2 * p->k) continue; /* an empty slice */
          tsr_plan pl = gemv_base(base);
          if (base->mma != TSR_MMA_GEMV) pl.vec = 1; /* the default's vec fits the layout */
          if (bigb) pl.bm = 16, pl.bn = bxs[xi];
          else pl.bm = bxs[xi], pl.bn = 16;
          pl.threads = thr[ti];
          pl.bk = bks[ki];
          pl.splitk = sks[si];
          if (push(pv, &pl)) return -1;
        }
  /* lane per row (docs/emit.md "GEMV"; the planner refuses it unless the
   * big operand runs along k): a thread per RL rows, the CTA's tile
   * threads x RL along the big axis */
  static const int rls[] = {1, 2}, lthr[] = {64, 128}, lbks[] = {16, 32};
  for (size_t ri = 0; ri < sizeof rls / sizeof rls[0]; ri++)
    for (size_t ti = 0; ti < sizeof lthr / sizeof lthr[0]; ti++)
      for (size_t ki = 0; ki < sizeof lbks / sizeof lbks[0]; ki++)
        for (size_t si = 0; si < sizeof sks / sizeof sks[0]; si++) {
          if ((int64_t)lbks[ki] * sks[si] > 2 * p->k) continue;
          tsr_plan pl = gemv_base(base);
          pl.vec = 4;
          pl.lanerows = rls[ri];
          pl.threads = lthr[ti];
          if (bigb) pl.bm = 16, pl.bn = lthr[ti] * rls[ri];
          else pl.bm = lthr[ti] * rls[ri], pl.bn = 16;
          pl.bk = lbks[ki];
          pl.splitk = sks[si];
          if (push(pv, &pl)) return -1;
        }
  return 0;
}

typedef struct {
  tsr_plan plan, realized;
  double prior;
  long bucket; /* the prior on a 0.5 % log grid (PRIOR_TIE) */
  int dist;    /* plan keys that differ from the incumbent's realized plan */
  tsr__cand_role role;
  tsr_plan_info info;
} legal_t;

/* The prior's resolution: it ties what it does not model (walks, stages, the
 * FMA order, ...), and within such a tie the incumbent's neighbours (fewest
 * differing plan keys) are measured first: a strong default's one-key
 * variants before remote plans of equal estimate. */
#define PRIOR_TIE 1.005

/* Plan keys (comma-separated key=value items of the formatted texts) in
 * which a differs from b. */
static int plan_distance(const char *a, const char *b) {
  int d = 0;
  while (*a || *b) {
    size_t la = strcspn(a, ","), lb = strcspn(b, ",");
    d += la != lb || memcmp(a, b, la) != 0;
    a += la + (a[la] == ',');
    b += lb + (b[lb] == ',');
  }
  return d;
}

static int cmp_legal(const void *a, const void *b) {
  const legal_t *x = a, *y = b;
  if (x->role != y->role) {
    /* incumbent (1), previous (2), user (3) before search (0) */
    int rx = x->role == TSR__ROLE_SEARCH ? 9 : (int)x->role;
    int ry = y->role == TSR__ROLE_SEARCH ? 9 : (int)y->role;
    return rx - ry;
  }
  if (x->bucket != y->bucket) return x->bucket < y->bucket ? -1 : 1;
  if (x->dist != y->dist) return x->dist - y->dist;
  return (x->prior > y->prior) - (x->prior < y->prior);
}

const char *const tsr__tune_order_names[] = {"prior", "interleave", NULL};

/* ---- the interleaved order (TSR__ORDER_INTERLEAVE) ---------------------- */
/* A plan as the values of its plan keys: slot j holds the FNV-1a hash of the
 * value of the j-th key name met (0: the key is absent), so two plans differ
 * in as many keys as slots differ. */
#define ORDER_KEYS 64
typedef struct {
  char name[ORDER_KEYS][24];
  int n;
} order_keys;

static uint64_t fnv1a(const char *q, size_t len) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)q[i]) * 1099511628211ull;
  return h;
}

static void order_values(const tsr_plan *pl, order_keys *k, uint64_t *val) {
  char txt[TSR__TUNE_PLAN_CAP];
  tsr_plan_format(pl, txt, sizeof txt);
  memset(val, 0, ORDER_KEYS * sizeof *val);
  for (const char *a = txt; *a;) {
    size_t len = strcspn(a, ","), kl = strcspn(a, "=");
    if (kl > len) kl = len;
    int j = 0;
    while (j < k->n && (strlen(k->name[j]) != kl || memcmp(k->name[j], a, kl) != 0)) j++;
    /* the plan keys are a fixed set, far fewer than ORDER_KEYS, each name
     * shorter than a slot: anything else is a bug of the formatter */
    assert(kl < sizeof k->name[0]);
    if (j == k->n) {
      assert(k->n < ORDER_KEYS);
      memcpy(k->name[k->n], a, kl);
      k->name[k->n++][kl] = '\0';
    }
    val[j] = fnv1a(a + kl, len - kl) | 1; /* never 0, the absent key */
    a += len + (a[len] == ',');
  }
}

static int order_distance(const uint64_t *x, const uint64_t *y) {
  int d = 0;
  for (int j = 0; j < ORDER_KEYS; j++) d += x[j] != y[j];
  return d;
}

/* Reorders v[0..n) (sorted by cmp_legal) in place: each prior tie of search
 * candidates is taken alternately in its tie-break order (nearest the
 * incumbent first) and farthest first (the most plan keys differing from the
 * nearest plan ordered before it, incumbent and earlier ties included; equal
 * distances in the tie-break order). Returns -1 when out of memory (v is then
 * unchanged). Cost: a tie of t plans after p others, t·(p + t) distances. */
static int order_interleave(legal_t *v, size_t n) {
  size_t cap = n ? n : 1; /* malloc(0) may return NULL */
  order_keys *keys = calloc(1, sizeof *keys);
  uint64_t *val = malloc(cap * ORDER_KEYS * sizeof *val);
  int *md = malloc(cap * sizeof *md);
  size_t *ord = malloc(cap * sizeof *ord);
  unsigned char *done = calloc(cap, 1);
  legal_t *tmp = malloc(cap * sizeof *tmp);
  int rc = keys && val && md && ord && done && tmp ? 0 : -1;
  for (size_t i = 0; !rc && i < n; i++) order_values(&v[i].realized, keys, val + i * ORDER_KEYS);
  size_t placed = 0;
  for (size_t s = 0, e; !rc && s < n; s = e) {
    e = s + 1;
    if (v[s].role == TSR__ROLE_SEARCH)
      while (e < n && v[e].role == TSR__ROLE_SEARCH && v[e].bucket == v[s].bucket) e++;
    if (e - s < 3) { /* nothing to interleave */
      for (size_t i = s; i < e; i++) ord[placed++] = i, done[i] = 1;
      continue;
    }
    for (size_t i = s; i < e; i++) {
      md[i] = INT_MAX;
      for (size_t q = 0; q < placed; q++) {
        int d = order_distance(val + i * ORDER_KEYS, val + ord[q] * ORDER_KEYS);
        if (d < md[i]) md[i] = d;
      }
    }
    size_t next = s; /* the tie-break order's next unplaced plan */
    for (size_t step = 0; step < e - s; step++) {
      while (done[next]) next++; /* the tie still has an unplaced plan */
      size_t pick = next;
      if (step % 2) /* farthest; equal distances: the tie-break's order */
        for (size_t i = next + 1; i < e; i++)
          if (!done[i] && md[i] > md[pick]) pick = i;
      ord[placed++] = pick;
      done[pick] = 1;
      for (size_t i = s; i < e; i++)
        if (!done[i]) {
          int d = order_distance(val + i * ORDER_KEYS, val + pick * ORDER_KEYS);
          if (d < md[i]) md[i] = d;
        }
    }
  }
  if (!rc) {
    assert(placed == n);
    for (size_t i = 0; i < n; i++) tmp[i] = v[ord[i]];
    memcpy(v, tmp, n * sizeof *v);
  }
  free(keys);
  free(val);
  free(md);
  free(ord);
  free(done);
  free(tmp);
  return rc;
}

/* Inserts a plan's formatted text into the open-addressed set of FNV-1a
 * hashes; returns 1 when it was not there yet. Equal 64-bit hashes are
 * treated as equal plans (a collision would only drop one candidate). */
static int first_time(uint64_t *set, size_t cap, const char *text) {
  uint64_t h = fnv1a(text, strlen(text));
  if (!h) h = 1;
  size_t j = h & (cap - 1);
  while (set[j] && set[j] != h) j = (j + 1) & (cap - 1);
  if (set[j] == h) return 0;
  set[j] = h;
  return 1;
}

static void init_cand(tsr__tune_cand *c, const tsr_plan *pl, tsr__cand_role role) {
  memset(c, 0, sizeof *c);
  c->plan = *pl;
  tsr_plan_format(pl, c->text, sizeof c->text);
  c->role = role;
  c->regs = c->local_bytes = -1;
  c->time_ns = NAN;
  c->rel_fro_err = c->fro_limit = NAN;
  c->prior = NAN;
}

tsr_status tsr__tune_space(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                           const tsr_plan *extra, const tsr__cand_role *extra_roles, int nextra,
                           tsr__tune_order order, tsr__tune_space_t *out) {
  memset(out, 0, sizeof *out);
  if (b != TSR_BACKEND_CPU && b != TSR_BACKEND_CUDA)
    return tsr__fail(ctx, TSR_ERR_UNSUPPORTED, "tune: backend %s has no tunable plans",
                     tsr_backend_name(b));
  tsr_plan def;
  tsr_plan_builtin(ctx, b, p, &def); /* the built-in incumbent, never the database */
  plan_vec pv = {0};
  tsr__cand_role *roles = NULL;
  int rc = push(&pv, &def);
  for (int i = 0; !rc && i < nextra; i++) rc = push(&pv, &extra[i]);
  size_t nfixed = pv.n;
  if (!rc) rc = b == TSR_BACKEND_CPU ? gen_cpu(p, &def, &pv) : gen_cuda(p, &def, &pv);
  if (!rc && b == TSR_BACKEND_CUDA) rc = gen_cuda_wgmma(p, &def, &pv);
  if (!rc && b == TSR_BACKEND_CUDA) rc = gen_cuda_ozaki(p, &def, &pv);
  if (!rc && b == TSR_BACKEND_CUDA) rc = gen_cuda_gemv(p, &def, &pv);
  legal_t *legal = rc ? NULL : malloc((pv.n ? pv.n : 1) * sizeof *legal);
  tsr__tune_cand *rej = rc ? NULL : calloc(TSR__TUNE_KEEP_REJECTED, sizeof *rej);
  roles = rc ? NULL : calloc(pv.n ? pv.n : 1, sizeof *roles);
  if (rc || !legal || !rej || !roles) {
    free(pv.v);
    free(legal);
    free(rej);
    free(roles);
    return tsr__fail(ctx, TSR_ERR_NOMEM, "tune: out of memory for the search space");
  }
  roles[0] = TSR__ROLE_INCUMBENT;
  for (int i = 0; i < nextra; i++)
    roles[1 + i] = extra_roles ? extra_roles[i] : TSR__ROLE_USER;
  size_t nlegal = 0, nrej = 0, nrej_kept = 0;
  out->generated = pv.n - nfixed;
  /* Dedup on the realized text: a hash set of formatted strings. */
  size_t hcap = 1;
  while (hcap < 2 * pv.n + 16) hcap <<= 1;
  uint64_t *hset = calloc(hcap, sizeof *hset);
  char inc[TSR__TUNE_PLAN_CAP] = ""; /* the incumbent's realized text */
  for (size_t i = 0; i < pv.n; i++) {
    tsr_plan_info info;
    tsr_status st = tsr__exec_check(ctx, b, p, &pv.v[i], &info);
    if (st) {
      nrej++;
      if (nrej_kept < TSR__TUNE_KEEP_REJECTED) {
        tsr__tune_cand *c = &rej[nrej_kept++];
        init_cand(c, &pv.v[i], roles[i]);
        c->status = TSR__CAND_REJ_PLANNER;
        snprintf(c->reason, sizeof c->reason, "planner: %s", tsr_context_message(ctx));
      }
      continue;
    }
    char txt[TSR__TUNE_PLAN_CAP];
    tsr_plan_format(&info.plan, txt, sizeof txt);
    if (hset && !first_time(hset, hcap, txt)) continue;
    legal_t *l = &legal[nlegal++];
    l->plan = pv.v[i];
    l->realized = info.plan;
    l->info = info;
    l->role = roles[i];
    l->prior = tsr__tune_prior(b, p, &info);
    /* ties of the prior: nearest the incumbent first (the incumbent, pushed
     * first, is the first legal plan when the built-in default realizes) */
    if (nlegal == 1 && roles[i] == TSR__ROLE_INCUMBENT) snprintf(inc, sizeof inc, "%s", txt);
    l->bucket = isfinite(l->prior) && l->prior > 0 ? lround(floor(log(l->prior) / log(PRIOR_TIE)))
                                                    : LONG_MAX;
    l->dist = inc[0] ? plan_distance(txt, inc) : 0;
  }
  tsr__clear(ctx);
  free(hset);
  free(roles);
  free(pv.v);
  qsort(legal, nlegal, sizeof *legal, cmp_legal);
  size_t keep = nlegal < TSR__TUNE_KEEP_LEGAL ? nlegal : TSR__TUNE_KEEP_LEGAL;
  /* interleaved within what is kept: the best-prior plans stay the kept ones */
  if (order == TSR__ORDER_INTERLEAVE && order_interleave(legal, keep)) {
    free(legal);
    free(rej);
    return tsr__fail(ctx, TSR_ERR_NOMEM, "tune: out of memory for the search order");
  }
  out->cands = calloc(keep + nrej_kept + 1, sizeof *out->cands);
  if (!out->cands) {
    free(legal);
    free(rej);
    return tsr__fail(ctx, TSR_ERR_NOMEM, "tune: out of memory for the search space");
  }
  for (size_t i = 0; i < keep; i++) {
    tsr__tune_cand *c = &out->cands[i];
    init_cand(c, &legal[i].plan, legal[i].role);
    tsr_plan_format(&legal[i].realized, c->realized, sizeof c->realized);
    c->prior = legal[i].prior;
  }
  memcpy(out->cands + keep, rej, nrej_kept * sizeof *rej);
  out->n = keep + nrej_kept;
  out->legal = nlegal;
  out->planner_rejected = nrej;
  free(legal);
  free(rej);
  return TSR_OK;
}

long tsr__tune_select(const tsr__tune_cand *c, size_t n) {
  long best = -1;
  for (size_t i = 0; i < n; i++) {
    if (c[i].status != TSR__CAND_OK || !isfinite(c[i].time_ns) || c[i].time_ns <= 0) continue;
    if (best < 0 || c[i].time_ns < c[best].time_ns) best = (long)i;
  }
  return best;
}

static const char *const status_names[TSR__CAND_STATUS_COUNT] = {
    "unmeasured", "ok", "rejected-planner", "rejected-compile", "rejected-spill",
    "rejected-validation", "rejected-run", "rejected-accuracy"};

const char *tsr__cand_status_name(tsr__cand_status s) {
  return (unsigned)s < TSR__CAND_STATUS_COUNT ? status_names[s] : "unknown";
}

const char *tsr__cand_role_name(tsr__cand_role r) {
  switch (r) {
    case TSR__ROLE_INCUMBENT: return "incumbent";
    case TSR__ROLE_PREVIOUS: return "previous";
    case TSR__ROLE_USER: return "user";
    case TSR__ROLE_NEIGHBOUR: return "neighbour";
    default: return "search";
  }
}

const char *const tsr__tune_seed_shapes[] = {
    "128x128x61",     "512x512x512",       "1024x1024x1024", "1024x1024x1537",
    "2049x4097x1025", "4096x4096x4096",    "4096x4096x11008", "8192x8192x8192"};
const int tsr__tune_seed_shape_count = 8;
