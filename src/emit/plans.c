/* The checked-in default GPU plan table for the H200 (sm_90, 132 SMs,
 * 228 KB shared memory and 64K registers per SM). Best guesses made before
 * measurement; the tuner and the H200 runs replace them (docs/perf.md).
 *
 * Rationale by shape class (M*N output tiles vs 132 SMs; K depth):
 *  - small / launch-bound (at most 64K outputs or K <= 64, e.g. 128x128x61,
 *    32^3): latency of one short K loop dominates, so many small CTAs:
 *    FFMA 32x32 tiles of 64 threads (4x4 micro-tiles), bk=16, 2 stages.
 *    128x128x61 gives 16 CTAs and no split-K (K is short); small outputs
 *    with long K (GEMV, decode, 64x64x8192) split K up to ~8 CTAs per SM
 *    (pick_splitk).
 *  - medium (up to ~1536^2 outputs, e.g. 512^3, 1024^3, 1024x1024x1537):
 *    3xTF32 64x64 tiles (4 warps of 32x32): 1024^2 gives 256 CTAs, about two
 *    per SM in one wave; 512^2 gives 64 CTAs, so split-K 2 doubles them when
 *    K has enough blocks.
 *  - large (e.g. 2049x4097x1025, 4096^3, 4096x4096x11008, 8192^3), revised
 *    2026-12 with ldmatrix/swizzle (docs/emit.md): 3xTF32 128x256 tiles of
 *    8 warps of 64x64, bk=16 x 4 stages (96 KiB, 240 registers) when that
 *    gives at least 3.5 waves of tiles, else 128x128 tiles of 8 warps of
 *    64x32, bk=16 x 4 stages; rect:8x16 walk keeps 8 tile rows x 16 tile
 *    columns of A and B hot in L2. The previous defaults (pad=4/8, 128x128
 *    bk=32 3 stages) stay reachable by plan text.
 * tf32x3 uses pad=0: the emitter then XOR-swizzles both operands' shared
 * layouts so ldmatrix, the permuted 64/128-bit fragment LDS and the 16-byte
 * cp.async stores are all conflict-free (docs/emit.md); FFMA uses pad=4
 * (16-byte rows for LDS.128). vec is the widest of 4, 2, 1 that the
 * problem's leading dimensions and batch strides allow. */
#include <string.h>

#include "emit/emit_internal.h"

/* The table's device: every grid rule below counts waves in its SMs */
#define H200_SMS 132

/* An operand's rows are 16-byte multiples (leading dimension and batch
 * stride divisible by 4 floats). */
static int aligned4(int64_t ld, int64_t stride, int64_t batch) {
  return ld % 4 == 0 && (batch == 1 || stride % 4 == 0);
}

/* Widest of 4, 2, 1 that the unpacked operands' layouts allow. */
static int pick_vec(const tsr_problem *p, tsr_pack pack) {
  for (int v = 4; v > 1; v /= 2) {
    if (!(pack & TSR_PACK_A) && (p->lda % v || (p->batch > 1 && p->stride_a % v))) continue;
    if (!(pack & TSR_PACK_B) && (p->ldb % v || (p->batch > 1 && p->stride_b % v))) continue;
    return v;
  }
  return 1;
}

/* auto: the tensor-core split (fp32x3) only from this K on. Below it the
 * split's fixed error (~2-3 u per element, K-independent) is no longer small
 * against the strict path's (~u sqrt(K/6)), so strict FFMA is the mode that
 * meets the FP32 contract (docs/accuracy.md; K sweep on the H200 in
 * docs/perf.md). */
#define X3_KMIN 128

/* Split-K for the small-output class (docs/emit.md "Split-K planner"):
 * with few output tiles the grid leaves most SMs idle and each CTA walks a
 * long K loop alone (64x64x8192: 4 CTAs of 512 K blocks; 1x4096x4096: 128
 * CTAs of 256). Slices raise the CTA count toward SPLITK_CTAS (32x32 tiles
 * of 64-128 threads and ~10 KiB: 8 per SM keep enough loads in flight for
 * the bandwidth-bound GEMV and decode shapes), each slice keeping at least
 * SPLITK_MIN_KB K blocks so the slice's pipeline fill and its partial's
 * write stay small against its loop. The partials (splitk x M x N floats)
 * are summed in a fixed order by the reduction kernel: deterministic, and
 * strict FP32 sums (docs/accuracy.md). */
#define SPLITK_CTAS (8 * H200_SMS)
#define SPLITK_MIN_KB 4
#define SPLITK_MAX 256
/* Below 64 K blocks (K < 1024 at bk=16) the reduction's second launch
 * (~2 us) would cost about what the slices save (a prediction, not yet
 * measured: docs/perf.md) */
#define SPLITK_FROM_KB 64

static int pick_splitk(const tsr_problem *p, const tsr_plan *pl, int64_t ctas) {
  int64_t tiles = ((p->m + pl->bm - 1) / pl->bm) * ((p->n + pl->bn - 1) / pl->bn) * p->batch;
  int64_t nkb = (p->k + pl->bk - 1) / pl->bk;
  if (tiles >= ctas / 2 || nkb < SPLITK_FROM_KB) return 1;
  int64_t want = (ctas + tiles - 1) / tiles, most = nkb / SPLITK_MIN_KB;
  if (want > most) want = most;
  if (want > SPLITK_MAX) want = SPLITK_MAX;
  if (want < 1) return 1;
  /* equal slices where a divisor of the K blocks is near: 16 slices of 64
   * blocks ran 4096x16x16384 in 0.95x cuBLAS's time, 17 uneven ones 1.28x;
   * 32x4096x4096 NT 8 slices 1.02x, 9 slices 1.27x (H200, docs/perf.md) */
  for (int64_t d = want; 2 * d >= want; d--)
    if (nkb % d == 0) return (int)d;
  return (int)want;
}

/* Skinny class (GEMV and decode: M or N at most 32 against at least 1024
 * of the other; a side of at most 16 takes gemv_plan below): strict FFMA tiles as thin as the short side, 128 wide on
 * the long one, split K toward ~8 CTAs per SM. Screened on the H200 against
 * cuBLAS pedantic (scripts/device/zoo-run variants, docs/perf.md) where the
 * 32x32 tiles of the small class measured 1.3-2.9x cuBLAS's time: 4x128 at
 * 1x4096x4096 1.31x (stages=2; 4 stages 1.45x), 8x128 at 8x4096x4096 NT
 * 0.77x, 16x128 at 16x11008x4096 NT 1.05x, 32x64 (warp 32x32 of 4x8) at
 * 32x4096x4096 NT 1.02x, 128x4 at 4096x1x4096 1.39x, 128x16 (warp 64x16 of
 * 8x4) at 4096x16x16384 0.95x. FFMA in auto too: the tf32x3 medium tiles
 * measured 1.6-2.2x there. */
static void skinny_tiles(const tsr_problem *p, tsr_plan *pl) {
  int64_t lo = p->m < p->n ? p->m : p->n;
  int t = lo <= 4 ? 4 : lo <= 8 ? 8 : lo <= 16 ? 16 : 32; /* the thin side */
  pl->mma = TSR_MMA_FFMA;
  pl->bk = 16;
  pl->pad = 4;
  pl->stages = t == 4 && p->m <= p->n ? 2 : 4;
  if (p->m <= p->n) { /* short M: 4 warps across N, each t x 32 of (t/4) x 4 */
    pl->bm = t, pl->wm = t, pl->tm = t / 4;
    pl->bn = 128, pl->wn = 32, pl->tn = 4;
    if (t == 32) pl->bn = 64, pl->tm = 4, pl->tn = 8; /* 2 warps of 32x32 (4x8) */
  } else { /* short N: warps down M */
    pl->bn = t;
    pl->bm = 128;
    if (t == 4) pl->wm = 32, pl->wn = 4, pl->tm = 4, pl->tn = 1;
    else if (t == 8) pl->wm = 32, pl->wn = 8, pl->tm = 4, pl->tn = 2;
    else if (t == 16) pl->wm = 64, pl->wn = 16, pl->tm = 8, pl->tn = 4;
    else pl->wm = 32, pl->wn = 32, pl->tm = 4, pl->tn = 8;
  }
  /* threads with 32-element micro-tiles keep more loads in flight each: half
   * the CTAs (measured 32x64 sk=8 1.02x vs sk=17 1.23x at 32x4096x4096 NT,
   * 128x16 sk=16 0.95x vs sk=33 1.06x at 4096x16x16384) */
  pl->splitk = pick_splitk(p, pl, pl->tm * pl->tn >= 32 ? SPLITK_CTAS / 2 : SPLITK_CTAS);
}

/* GEMV family (docs/emit.md "GEMV") for the skinny shapes with M <= 16 or
 * N <= 16 (strict FFMA; auto takes it there too). The FFMA tiles above ran
 * these at 1.26x (1x4096x4096, 4x128 tiles, split-K 32) and 1.43x
 * (4096x1x4096, 128x4) cuBLAS's time on the H200 while the big operand
 * (64 MB) alone bounds them at ~14 us. Guesses, not yet measured
 * (scripts/device/gemv-variants.txt lists the variants to measure):
 *  - big operand contiguous along k: 8 warps, 1 output per warp, 2 for a
 *    short side wider than 2 (the short operand's values, read from L1,
 *    are reused across them), bk = 4 vec-wide chunks per lane;
 *  - contiguous along the outputs: a warp reads 32 * vec consecutive
 *    outputs of one K row, 8 warps (4 for S > 8: shared memory of the
 *    group sums) split the CTA's K rows, bk = 64;
 * below GEMV_WARPS / 2 warps (16 per SM) split K toward GEMV_WARPS (~32
 * per SM: enough 16-byte loads in flight to stream at the memory's rate;
 * above half of that the reduction's second launch is assumed to cost more
 * than it saves), each slice at least two K blocks, equal slices where a
 * divisor is near. */
#define GEMV_WARPS (32 * H200_SMS)

static void gemv_plan(const tsr_problem *p, tsr_plan *pl) {
  int bigb = p->m <= p->n;
  int64_t S = bigb ? p->m : p->n, X = bigb ? p->n : p->m;
  int kc = bigb ? p->op_b == TSR_OP_T : p->op_a == TSR_OP_N;
  int64_t ld = bigb ? p->ldb : p->lda, st = bigb ? p->stride_b : p->stride_a;
  int v = 4;
  while (v > 1 && (ld % v || (p->batch > 1 && st % v))) v /= 2;
  pl->mma = TSR_MMA_GEMV;
  pl->vec = v;
  pl->wm = pl->wn = pl->tm = pl->tn = 1;
  pl->stages = 1;
  pl->pad = 0;
  pl->kloop = 0;
  pl->kfrag = TSR_PACK_NONE;
  pl->pack = TSR_PACK_NONE;
  int bx;
  if (kc) {
    pl->threads = 256;
    bx = 8 * (S <= 2 ? 1 : 2); /* 4 outputs a warp at S = 16: 193 registers (ptxas), 2: 64 */
    pl->bk = 32 * v * 4;
    /* 3 <= S <= 16: two warps per CTA, 4 (S <= 8) or 8 outputs each CTA.
     * H200, session 10 (scripts/device/s10-ffma.txt, NT, time over cuBLAS
     * pedantic's): 8x11008x4096 0.790 (256 threads, 16 outputs: 1.000),
     * 8x4096x4096 0.795 (0.812); 16x14336x4096 with 8 outputs and bk = 64
     * 1.095 (1.660: 80 registers, 8 bytes spilled; 4 outputs, bk = 512:
     * 1.219). The tuner found both (zoo-tune, session 10). At S = 1 the 64
     * threads ran 0.931 against 0.869, so S <= 2 keeps 256. */
    if (S >= 3) {
      pl->threads = 64;
      bx = S <= 8 ? 4 : 8;
      if (S > 8) pl->bk = 16 * v;
    }
  } else {
    pl->threads = S > 8 ? 128 : 256;
    bx = 32 * v;
    pl->bk = 64;
  }
  if (bigb) pl->bm = 16, pl->bn = bx;
  else pl->bm = bx, pl->bn = 16;
  int64_t warps = (X + bx - 1) / bx * p->batch * (pl->threads / 32);
  int64_t nkb = (p->k + pl->bk - 1) / pl->bk, want = (GEMV_WARPS + warps - 1) / warps;
  if (2 * warps >= GEMV_WARPS) want = 1;
  if (want > nkb / 2) want = nkb / 2;
  if (want > SPLITK_MAX) want = SPLITK_MAX;
  pl->splitk = 1;
  if (want > 1) {
    pl->splitk = (int)want;
    for (int64_t d = want; 2 * d >= want; d--)
      if (nkb % d == 0) {
        pl->splitk = (int)d;
        break;
      }
  }
}

/* Strict FFMA plans for the classes the tensor-core families otherwise
 * take (docs/accuracy.md): 64x64 tiles of 4 warps (32x32 warp tiles of 4x8
 * micro-tiles) and 128x128 tiles of 8 warps (64x32 of 8x8). Guesses, not
 * yet tuned; the strict FFMA track (docs/perf.md) replaces them. */
static void ffma_tiles(tsr_plan *pl, int large) {
  pl->mma = TSR_MMA_FFMA;
  pl->acc = TSR_ACC_STEP;
  pl->pad = 4;
  pl->stages = 3;
  pl->bk = 16;
  if (large) {
    pl->bm = 128, pl->bn = 128, pl->wm = 64, pl->wn = 32, pl->tm = 8, pl->tn = 8;
  } else {
    pl->bm = 64, pl->bn = 64, pl->wm = 32, pl->wn = 32, pl->tm = 4, pl->tn = 8;
  }
}

/* cuBLAS's own SGEMM geometry on sm_90 for 128x128 kloop tiles: 2x2 warps
 * of 64x64, 8x16 per thread, 8-deep K blocks (128 threads, 209 registers,
 * 2 CTAs per SM; 6 LDS.128 feed 128 FFMA per thread and K step, 16 per load
 * in 8 warps of 64x32). H200 against cuBLAS pedantic, time ratio, default
 * -> this: session 12 (s12-ffma.txt) 4096^3 1.096 -> 1.089, 8192^3 1.083 ->
 * 1.073, 512x4096x4096 1.089 -> 1.059, 512x4096x11008 NT 1.261 -> 1.188,
 * 64*256^3 1.054 -> 1.038, 32*1024x128x1024 1.111 -> 1.088; session 13
 * (s13-ffma-pack.txt) 4096^3 1.092 -> 1.093, 8192^3 1.080 -> 1.074,
 * 512x4096x4096 1.077 -> 1.056. Errors unchanged (the same k-ascending
 * chains). Only where kloop holds 128x128 tiles: long K and the short-K
 * batch rule were not measured with it, and op(A) = A^T lost (4096^3 TN
 * 1.148 in session 13, where the default ran 1.065 in session 5). */
static void ffma_cublas_geometry(const tsr_problem *p, tsr_plan *pl) {
  if (p->op_a != TSR_OP_N) return;
  if (pl->mma != TSR_MMA_FFMA || !pl->kloop || pl->bm != 128 || pl->bn != 128) return;
  pl->bk = 8, pl->wm = 64, pl->wn = 64, pl->tm = 8, pl->tn = 16, pl->stages = 3;
}

/* op(B) = B^T under the 128x128 strict tile: transpose B once (pack=b,
 * the prologue's 32x32 shared-memory tiles) so the K loop is NN's, its
 * 16-byte copies instead of a second transposing 4-byte one, where the
 * prologue's 8*N*K bytes cost little against 2*M*N*K flops: M >= 1024.
 * H200, session 16 (s16-screen3.txt), time over cuBLAS pedantic's, NT
 * pack=none -> pack=b: 8192x4096x4096 1.152 -> 1.071, 4096^3 1.153 ->
 * 1.087, 2048x4096x4096 1.150 -> 1.095, 1024x4096x4096 1.138 -> 1.098,
 * 8192x4096x11008 1.176 -> 1.092, 3008x12608x832 1.211 -> 1.118; but
 * 512x4096x11008 1.197 -> 1.249. Errors unchanged (the same sums). */
static void ffma_nt_pack(const tsr_problem *p, tsr_plan *pl) {
  if (p->op_a != TSR_OP_N || p->op_b != TSR_OP_T || p->batch != 1 || p->m < 1024) return;
  if (pl->mma != TSR_MMA_FFMA || pl->kloop != 1 || pl->bm != 128 || pl->bn != 128) return;
  if (pl->splitk != 1 || pl->pack != TSR_PACK_NONE || pl->kfrag != TSR_PACK_NONE) return;
  pl->pack = TSR_PACK_B;
}

/* The most slices (2..8, each at least min_kb of the nkb K blocks) whose
 * grid still fits one wave of `per` CTAs per SM; 1 when none does. */
static int split_one_wave(int64_t tiles, int64_t nkb, int per, int64_t min_kb) {
  int best = 1;
  for (int s = 2; s <= 8 && nkb / s >= min_kb; s++)
    if (tiles * s <= (int64_t)per * H200_SMS) best = s;
  return best;
}

/* The 64x128 strict kloop tile: 4 warps of 32x64, 8x8 per thread, 16-deep
 * K blocks x 3 stages (127 registers: 4 CTAs and 16 warps per SM; the
 * fragment ring, kloop=3, follows from ffma_fragment_ring) */
static void ffma_tile_64x128(tsr_plan *pl) {
  pl->mma = TSR_MMA_FFMA;
  pl->bm = 64, pl->bn = 128, pl->bk = 16, pl->wm = 32, pl->wn = 64, pl->tm = 8, pl->tn = 8;
  pl->stages = 3, pl->pad = 4, pl->kloop = 1;
}

/* Most CTAs any of the 132 SMs runs, times one CTA's share of the work (a
 * whole tile's K loop = 1): the time of a grid whose SMs each hold enough
 * warps to run at their full rate, as the slowest SM's queue. Ties between
 * plans of equal load are measured ties (below). */
static double sm_load(int64_t ctas, double work) {
  return (double)((ctas + H200_SMS - 1) / H200_SMS) * work;
}

/* The slice count of 2..8 (each slice at least SPLITK_MIN_KB K blocks) whose
 * grid has the shortest slowest-SM queue, the fewest slices on ties. */
static int split_by_load(int64_t tiles, int64_t nkb) {
  int best = 1;
  double bl = sm_load(tiles, 1.0);
  for (int s = 2; s <= 8 && nkb / s >= SPLITK_MIN_KB; s++) {
    double l = sm_load(tiles * s, 1.0 / s);
    if (l < bl - 1e-9) best = s, bl = l;
  }
  return best;
}

/* Wave quantization of the 128x128 tile (2 CTAs per SM): where the
 * slowest SM's queue of 64x128 tiles (4 per SM, half the work each) is at
 * least 5 % shorter than that of 128x128 tiles, the 64x128 tile. H200,
 * session 15 (s15-screen.txt, s15-screen2.txt), time over cuBLAS
 * pedantic's, 128x128 -> 64x128: 640x4608x3456 (queues 2 -> 1.5) 1.310 ->
 * 1.006 (split-K 4 of 128x128 tiles: 1.063), 3000^3 (5 -> 4.5) 1.137 ->
 * 1.027; equal queues measure equal: 4096^3 1.094 / 1.094, 8192x4096x4096
 * 1.075 / 1.071, 8192x11008x4096 1.089 / 1.081, 2048^3 1.092 / 1.114.
 * Errors unchanged (the same k-ascending sums). NN only: NT at equal
 * queues measured equal too (3008x12608x832 1.223 / 1.205), TN lost
 * (4096x11008x8192 1.065 -> 1.098), neither has an unequal case measured */
static void ffma_quantized_tile(const tsr_problem *p, tsr_plan *pl) {
  if (p->op_a != TSR_OP_N || p->op_b != TSR_OP_N || pl->splitk != 1) return;
  if (pl->mma != TSR_MMA_FFMA || pl->kloop != 1 || pl->bm != 128 || pl->bn != 128) return;
  int64_t t128 = ((p->m + 127) / 128) * ((p->n + 127) / 128) * p->batch;
  int64_t t64 = ((p->m + 63) / 64) * ((p->n + 127) / 128) * p->batch;
  if (sm_load(t64, 0.5) <= 0.95 * sm_load(t128, 1.0)) ffma_tile_64x128(pl);
}

/* Small outputs with long K whose sides are both 100 or more (the long-k
 * zoo class): the 32x32 tiles of the small class run their many slices at
 * 4x4 per thread. H200, session 12 (s12-batched-*.txt), time over cuBLAS
 * pedantic's: 256x256x32768 1.653x in 32x32 tiles (split-K 16) against
 * 1.169x in 128x128 kloop tiles split-K 32 (64x64 split-K 8: 1.999x) and,
 * in auto, 1.083x for the 128x128 producer-bulk 3xTF32 kernel split-K 32
 * (error 2.4e-7 against cuBLAS's 4.3e-7); 128x128x16384 1.122x against
 * 1.052x in 64x64 kloop tiles split-K 64 (split-K 32: 1.322x);
 * 100x100x8000 1.097x against 0.992x in 64x64 tiles split-K 32. Each
 * slice count is the measured one: about one wave of CTAs (128), two for
 * whole 64x64 kloop tiles (sides multiples of 64; 100x100 ran without). Sides under 100 keep 32x32: 128x64x65536
 * NT 1.057x (64x64 split-K 64: 1.078x), 96x160x12288 TN 0.583x. */
/* kloop=3 (docs/emit.md "kloop": two fragment sets, step kk+1 loaded
 * while step kk multiplies, across K blocks; 32-bit shared addresses and
 * constant-offset copies) for the strict kloop tiles smaller than 128x128.
 * H200, session 14 (s14-kloop.txt), time over cuBLAS pedantic's, kloop=1 ->
 * 3: 1000^3 (32x256, split-K 2) 1.377 -> 1.238, 1024^3 1.146 -> 1.142,
 * 16384x64x4096 (128x64) 1.165 -> 1.082, 64x4096x4096 (64x128, split-K 8)
 * 1.052 -> 1.006, 64x11008x4096 NT (64x64) 1.455 -> 1.426, 64x10944x4928 NT
 * 1.560 -> 1.554. The 128x128 tile keeps kloop=1: 4096^3 1.082 -> 1.174
 * (kloop=2 1.227; ptxas then issues each fragment LDS a median 20
 * instructions before its first use, against 62 with kloop=1's address
 * arithmetic in between), NT 1.159 -> 1.245. Same products in the same
 * order: bit-identical outputs. In the strict zoo (session 14, run 3) every
 * changed shape gained (1000^3 1.386 -> 1.274, 16384x64x4096 1.164 -> 1.097,
 * 96*512x64x512 1.038 -> 0.979) but 1024^3 (1.150 -> 1.181; the screen had
 * 1.146 -> 1.142) and 128*128x128x128 (0.974 -> 1.024), whose K of 128 is
 * eight K blocks: a K slice under 256 keeps kloop=1 */
static void ffma_fragment_ring(const tsr_problem *p, tsr_plan *pl) {
  if (pl->mma != TSR_MMA_FFMA || pl->kloop != 1 || (pl->bm == 128 && pl->bn == 128)) return;
  if (pl->a != TSR_IN_STAGED || pl->b != TSR_IN_STAGED || pl->kfrag != TSR_PACK_NONE) return;
  if (pl->bk % 2 || p->k / (pl->splitk > 1 ? pl->splitk : 1) < 256) return;
  pl->kloop = 3;
}

/* The three-block producer tile (ffma_producer, ffma_producer_padded):
 * 64x128x16 in 4 warps of 32x64 (8x8 a thread) beside the copying
 * warpgroup, 4 slots of kloop=2 copies, three CTAs an SM, serpentine FMAs */
static void ffma_three_block_tile(tsr_plan *pl) {
  pl->bm = 64, pl->bn = 128, pl->bk = 16, pl->wm = 32, pl->wn = 64, pl->tm = 8, pl->tn = 8;
  pl->vec = 4, pl->pad = 4, pl->minblocks = 3;
  pl->split = TSR_SPLIT_PRODUCER, pl->kloop = 2, pl->stages = 4, pl->kunroll = 0;
  pl->forder = TSR__FORDER_SERPENTINE;
}

/* The three-block producer's copies as TMA tensor boxes (split=producer-tma,
 * docs/emit.md): one producer warp whose lead thread issues two boxes a K
 * block instead of four warps' LDGSTS. H200, session 24 (s24-tma.txt, one
 * run), time over cuBLAS pedantic's, LDGSTS producer -> TMA: 4096^3 0.939 /
 * 0.944 -> 0.924 (5 stages 0.924), 8192^3 0.938 -> 0.924, 8192x14336x4096
 * 0.918 -> 0.910, 2048x32000x4096 0.911 -> 0.898, TN 4096x4096x8192 0.950
 * -> 0.938; the same k-ascending sums (errors 1.13e-6, 1.62e-6, 1.14e-6,
 * 1.14e-6, 1.6e-6 both ways). NT with both operands packed, session 25
 * (s25-screen.txt, s25-kfrag.txt): 8192x4096x4096 0.976 / 0.968 -> 0.933 /
 * 0.932, 8192x4096x11008 0.994 / 0.989 -> 0.963 / 0.958 (errors 1.14e-6,
 * 1.86e-6 both ways). A k-contiguous operand read unpacked as [x][k] boxes
 * (kfrag, session 25) lost everywhere: 4096^3 0.920 -> 1.102, 8192^3 0.923
 * -> 1.028, NT 8192x4096x11008 (pack=b, kfrag=a) 1.153 (not yet profiled:
 * 64 box rows of 64 bytes a K block against 16 of 256, or kfrag's fragment
 * loads exposing their latency). So a k-contiguous operand is packed (NN:
 * from 2048 rows, as ffma_producer packs it; below, the LDGSTS producer
 * stays: 512x4096x4096 0.880 against 0.947 for the [m][k] boxes).
 * The consumers fence their reads before each slot's TMA refill (session
 * 30), freeing the slot after its last shared loads (krel=1, session 31,
 * H100, s31-screen.txt, one call, against the fenced default beside it):
 * 4096^3 0.965 / 0.969 -> 0.945, 8192^3 0.963 -> 0.937, TN 4096x4096x8192
 * 0.967 -> 0.941, NT 8192x4096x4096 0.955 -> 0.945, 512x4096x11008 1.184
 * -> 1.139, 2048x32000x4096 0.914 -> 0.905; 8192x14336x4096 0.925 -> 0.930
 * and 8192x4096x11008 0.911 -> 0.916 (outputs bit-identical: same sums).
 * 1: switched. */
static int ffma_producer_tma(const tsr_problem *p, tsr_plan *pl) {
  if (pl->split != TSR_SPLIT_PRODUCER || pl->minblocks != 3) return 0;
  tsr_plan t = *pl;
  t.split = TSR_SPLIT_PRODUCER_TMA;
  t.pad = 0;
  if (p->op_b == TSR_OP_T)
    t.pack = (tsr_pack)(t.pack | TSR_PACK_B | (p->op_a == TSR_OP_N ? TSR_PACK_A : 0));
  char msg[256];
  t.krel = 1; /* where krel's geometry allows it (kloop 1-2, no kunroll or kwait) */
  if (tsr__emit_check(p, &t, &tsr__target_sm90, msg, sizeof msg) != TSR_OK) {
    t.krel = 0;
    if (tsr__emit_check(p, &t, &tsr__target_sm90, msg, sizeof msg) != TSR_OK) return 0;
  }
  *pl = t;
  return 1;
}

/* split=producer (docs/emit.md "FFMA producer") for the 128x128 kloop tile
 * of one problem with K slices of 512 or more: a copying warpgroup beside
 * the 4 multiplying warps (setmaxnreg 40 / 216, still two CTAs per SM), a
 * 4-slot ring whose full signal is an mbarrier and whose free signal a
 * named barrier; its copies with kloop=2's constant offsets. The
 * multiplying warps' K loop is 1089 SASS instructions per 8-deep K block
 * (1024 FFMA) against the inline copy's 1183. op(A) = A^T takes cuBLAS's
 * geometry too, and NN from 2048 rows A transposed once (pack=a: 16-byte
 * copies in the producer). H200, time over cuBLAS pedantic's, session 21
 * (s21-producer2.txt, s21-producer3.txt; two runs each): 4096^3 1.086 ->
 * 1.028 / 1.023 (pack=a 1.022 / 1.019), 8192x4096x4096 1.078 -> 1.017 /
 * 1.024 (1.017 / 1.011), 8192x4096x11008 1.034 -> 0.979 / 0.985 (0.982 /
 * 0.975), 8192x14336x4096 1.053 -> 0.999 / 1.008 (0.990 / 0.997),
 * 2048x32000x4096 1.063 -> 1.002 (0.989), 8192^3 1.074 -> 1.023 (1.008),
 * 512x4096x4096 (split-K 2) 1.045 -> 1.007, NT 8192x4096x11008 (pack=b)
 * 1.099 -> 1.042 / 1.038, 512x4096x11008 NT 1.194 -> 1.145 / 1.169, TN
 * 4096x4096x8192 1.073 -> 1.037 / 1.026, 4096x11008x8192 1.068 -> 1.041 /
 * 1.043, 2048^3 1.084 -> 1.023; 3 and 6 stages 0.5-1 % slower than 4.
 * Errors unchanged (the same k-ascending sums). */
static void ffma_producer(const tsr_problem *p, tsr_plan *pl) {
  if (pl->mma != TSR_MMA_FFMA || pl->kloop != 1 || pl->bm != 128 || pl->bn != 128) return;
  if (pl->a != TSR_IN_STAGED || pl->b != TSR_IN_STAGED || pl->kfrag != TSR_PACK_NONE) return;
  if (p->batch != 1 || p->k / (pl->splitk > 1 ? pl->splitk : 1) < 512) return;
  /* whole tiles only: the producer's tail-guarded copies spill at its 40
   * registers (3000^3: 48 bytes, 1.157x cuBLAS's time against the 64x128
   * tile's 1.030x, s21-producer3.txt) */
  if (p->m % 128 || p->n % 128 || p->k % 8) return;
  if (p->op_a == TSR_OP_T) pl->bk = 8, pl->wm = 64, pl->wn = 64, pl->tm = 8, pl->tn = 16;
  if (pl->wm != 64 || pl->wn != 64 || pl->tm != 8 || pl->tn != 16 || pl->vec != 4) return;
  pl->split = TSR_SPLIT_PRODUCER, pl->kloop = 2, pl->stages = 4;
  if (p->op_a == TSR_OP_N && p->op_b == TSR_OP_N && p->m >= 2048 && pl->pack == TSR_PACK_NONE &&
      pl->splitk == 1)
    pl->pack = TSR_PACK_A;
  /* NT under ffma_nt_pack's 1024 rows copies both operands by transposing
   * 4-byte copies: A (8*M*K bytes, small there) packed. s21-nt2.txt:
   * 512x4096x11008 NT 1.169 -> 1.147 (kfrag=b or split-K 4 beside it:
   * 1.147 / 1.147; s21-nt.txt without pack=a: kfrag=b 1.154, kfrag=ab
   * 1.137, split-K 4 1.173) */
  if (p->op_a == TSR_OP_N && p->op_b == TSR_OP_T && p->m < 1024 && pl->pack == TSR_PACK_NONE)
    pl->pack = TSR_PACK_A;
  /* Three CTAs an SM of 64x128 tiles (4 warps of 32x64, 8x8 a thread),
   * 16-deep K blocks: 12 multiplying warps an SM instead of 8 (compiled at
   * 80 registers, setmaxnreg 32 / 128). s21-three2.txt, time over cuBLAS
   * pedantic's, 128x128 producer -> this: 4096^3 1.018 -> 0.988,
   * 8192x4096x4096 1.011 -> 0.975, 8192x4096x11008 0.976 -> 0.939,
   * 8192x14336x4096 0.995 -> 0.935, 2048x32000x4096 0.989 -> 0.931,
   * 8192x11008x4096 1.014 -> 0.973, 8192^3 1.008 -> 0.955, 2048x4096x4096
   * 1.024 -> 0.994, 2048^3 1.030 -> 1.015, 512x4096x4096 1.025 -> 0.908
   * (one slice; split-K 2 0.960, 3 1.017), TN 1.029 / 1.047 -> 0.995 /
   * 0.997, NT (pack=b) 1.018 / 1.038 -> 0.982 / 1.006; 128x64 tiles the
   * same within 1 %, bk 8 1.036 (s21-three.txt), bk 32 x 2 1.068, 3
   * stages 0.993. Not NT under 1024 rows: its transposing copies of B
   * spill at the producer's 32 registers at bk 16 (kfrag=b there: 1.235).
   * Errors unchanged (the same k-ascending sums). The FMAs of a K step in
   * serpentine rows (forder=1: each FMA shares an operand with the one
   * before, one source from the reuse cache): session 22 (s22-forder.txt,
   * s22-forder2.txt) 4096^3 0.979 -> 0.962, 8192^3 0.953 -> 0.939,
   * 8192x14336x4096 0.934 -> 0.923, 2048x32000x4096 0.936 -> 0.919,
   * 512x4096x4096 0.908 -> 0.887, NT 8192x4096x4096 0.983 -> 0.966, TN
   * 4096x4096x8192 0.996 -> 0.977; 1024^3 0.898 -> 0.918 the one loss of 15
   * (ptxas's register allocation moves with any change of the loop). */
  if (p->m % 64 || p->k % 16) return;
  tsr_plan t = *pl;
  ffma_three_block_tile(&t);
  int64_t t64 = (p->m / 64) * (p->n / 128);
  t.splitk = t64 >= H200_SMS ? 1 : 2;
  /* NT under 1024 rows: with TMA boxes there are no transposing copies to
   * spill. 512x4096x11008 NT 1.143 / 1.150 (128x128 LDGSTS producer, pack=a,
   * split-K 2) -> 1.091 / 1.085 (three-block TMA, pack=ab; s24-tma2.txt,
   * s25-kfrag.txt; errors 1.88e-6 against cuBLAS's 1.33e-6, one K chain
   * against its split sums; split-K 2 1.290) */
  int tma = ffma_producer_tma(p, &t);
  if (p->op_b == TSR_OP_T && p->m < 1024 && pl->pack != TSR_PACK_B && !tma) return;
  *pl = t;
}

/* The three-block 64x128x16 producer tile (ffma_producer above) for the
 * strict 128x128 and 64x128 tiles ffma_producer leaves inline: a tile tail
 * (M % 64, N % 128 or K % 16) or a 64x128 start (the quantized tile, the
 * medium squares' split-K). Both operands are then packed (pack=ab: zero-
 * padded whole tiles, so the producer's copies need no tail guards, which
 * spill at its 32 registers), one K slice where the tiles fill half the
 * SMs. H200, session 22 (s22-tail.txt), time over cuBLAS pedantic's,
 * default -> this: 3000^3 1.033 -> 0.913, NT 1.155 -> 0.911,
 * 4095x4097x4093 (128x128 pack=ab, inline) 1.016 -> 0.946 (session 21's
 * zoo), 1000^3 (64x128 split-K 3) 1.145 -> 1.074 (split-K 2: 1.188).
 * Sides from 512 (the smaller, skinny and decode tiles keep theirs). The
 * sums stay k-ascending per slice: errors as the default's (3000^3
 * 9.81e-7 both, 1000^3 5.66e-7 both). */
static void ffma_producer_padded(const tsr_problem *p, tsr_plan *pl) {
  if (pl->mma != TSR_MMA_FFMA || pl->split != TSR_SPLIT_INLINE || p->batch != 1) return;
  if (pl->a != TSR_IN_STAGED || pl->b != TSR_IN_STAGED || pl->kfrag != TSR_PACK_NONE) return;
  if (!((pl->bm == 128 && pl->bn == 128) || (pl->bm == 64 && pl->bn == 128))) return;
  if (p->m < 512 || p->n < 512 || p->k < 512) return;
  int64_t t64 = ((p->m + 63) / 64) * ((p->n + 127) / 128);
  /* under one CTA an SM only where K is short (measured to 1024; a long K
   * keeps its split-K slices, unmeasured here) */
  if (t64 < H200_SMS && p->k > 1536) return;
  int whole = p->m % 64 == 0 && p->n % 128 == 0 && p->k % 16 == 0;
  ffma_three_block_tile(pl);
  pl->splitk = t64 >= H200_SMS / 2 ? 1 : 2;
  if (!whole) pl->pack = TSR_PACK_AB;
}

/* Tail slices (plan keys tailk, wave; docs/emit.md "Tail slices") for the
 * three-block producer tile: once no whole tile is left, each SM's last
 * CTAs finish at spread times and the SM idles; where at least two whole
 * waves of 3 x 132 CTAs run and the last, partial wave holds at most half
 * a wave of tiles, those R tiles run in S = wave / R (2..6) K slices each,
 * so the grid ends in S-times finer pieces (one epilogue path for both:
 * two store loops gave ptxas 5-10x the register bank conflicts). H200,
 * session 22 (s22-tail2.txt), time over cuBLAS pedantic's, default ->
 * tail slices: 4096^3 (68 tiles past 5 waves) 0.965 / 0.964 -> 0.943 /
 * 0.944 (4 slices 0.951, 6 0.943), 8192x4096x4096 (136 past 10) 0.955 ->
 * 0.946 (3 slices 0.943); below the rule: 2048^3 (one whole wave) 0.995 ->
 * 1.005, 2048x4096x4096 (232 past 2: over half a wave) 0.975 -> 0.990,
 * 8192^3 (272) 0.941 -> 0.935, 8192x14336x4096 and 2048x32000x4096 (80
 * past 36 and 20) within 0.5 %. The sliced tiles' sums are split in K
 * (strict per slice, summed in slice order): errors as split-K's. The
 * tuner's space takes the same rule (src/tune/space.c). split=tma (no
 * producer) takes it at its own 3 or 4 blocks an SM: a wave of minblocks x
 * 132 (unmeasured at 4). */
int tsr__emit_tail_slices(const tsr_problem *p, tsr_plan *pl) {
  int ring = pl->split == TSR_SPLIT_PRODUCER || pl->split == TSR_SPLIT_PRODUCER_TMA ||
             pl->split == TSR_SPLIT_TMA;
  int blocks = pl->minblocks == 3 || (pl->minblocks == 4 && pl->split == TSR_SPLIT_TMA);
  if (pl->mma != TSR_MMA_FFMA || !ring || !blocks) return 0;
  if (pl->splitk != 1 || p->batch != 1 || pl->tailk) return 0;
  int64_t wave = (int64_t)pl->minblocks * H200_SMS;
  int64_t tiles = ((p->m + pl->bm - 1) / pl->bm) * ((p->n + pl->bn - 1) / pl->bn);
  int64_t rest = tiles % wave, nkb = (p->k + pl->bk - 1) / pl->bk;
  if (tiles / wave < 2 || rest == 0 || 2 * rest > wave) return 0;
  int64_t sl = wave / rest;
  if (sl > 6) sl = 6;
  while (sl > 2 && nkb / sl < 16) sl--;
  if (nkb / sl < 16) return 0;
  pl->tailk = (int)sl;
  pl->wave = (int)wave;
  return 1;
}

static void long_k_tiles(const tsr_problem *p, tsr_precision mode, unsigned cc, tsr_pack unaligned,
                         tsr_plan *pl) {
  int64_t ctas = 128;
  if (p->m >= 256 && p->n >= 256 && !unaligned) {
    ffma_tiles(pl, 1);
    pl->kloop = 1;
    /* strict: 64x128 tiles (4 CTAs per SM) toward 512 CTAs. Session 15
     * (s15-screen2.txt), 256x256x32768: 1.169x cuBLAS's time in 128x128
     * tiles split-K 32 -> 1.074x (64x128 kloop=3 split-K 64); the 128x128
     * cuBLAS geometry split-K 32 / 64 / 128: 1.298x / 1.115x / 1.185x */
    if (!(mode == TSR_PREC_AUTO && cc == 90)) ffma_tile_64x128(pl), ctas = 512;
    if (mode == TSR_PREC_AUTO && cc == 90) {
      pl->mma = TSR_MMA_WGMMA_TF32X3;
      pl->split = TSR_SPLIT_PRODUCER_BULK;
      pl->pad = 0;
      pl->kloop = 0;
      pl->tm = pl->tn = 1;
      pl->bk = 32, pl->wm = 64, pl->wn = 128, pl->stages = 3;
    }
  } else {
    ffma_tiles(pl, 0);
    if (!unaligned && p->m % 64 == 0 && p->n % 64 == 0) pl->kloop = 1, ctas = 256;
  }
  int64_t tiles = ((p->m + pl->bm - 1) / pl->bm) * ((p->n + pl->bn - 1) / pl->bn);
  int64_t want = (ctas + tiles - 1) / tiles, most = (p->k / pl->bk) / SPLITK_MIN_KB;
  pl->splitk = (int)(want < most ? want : most);
}

/* The default table's classes, in the order they are tried. One function
 * decides both the default plan's branch and the class the tuner's lookup
 * matches (docs/tune.md "Lookup"), so the two cannot drift apart. */
typedef enum {
  CLS_SKINNY_M, /* M <= 32 against N >= 1024: thin rows */
  CLS_SKINNY_N, /* N <= 32 against M >= 1024: thin columns */
  CLS_SMALL,
  CLS_SMALL_UNALIGNED,
  CLS_MEDIUM,
  CLS_LARGE
} plan_class;
static const char *const class_names[] = {"skinny-m", "skinny-n", "small", "small-unaligned",
                                          "medium", "large"};

static int is_unaligned(const tsr_problem *p) {
  return !aligned4(p->lda, p->stride_a, p->batch) || !aligned4(p->ldb, p->stride_b, p->batch);
}

static plan_class classify(const tsr_problem *p) {
  tsr_precision mode = p->precision;
  int tc = mode == TSR_PREC_FP32X3 || mode == TSR_PREC_TF32 ||
           (mode == TSR_PREC_AUTO && p->k >= X3_KMIN);
  int64_t lo = p->m < p->n ? p->m : p->n, hi = p->m < p->n ? p->n : p->m;
  /* the class follows the whole grid's outputs: a batch of 64 256x256
   * problems fills the GPU like one 2048x2048 */
  int64_t outputs = p->m * p->n * p->batch;
  if (mode != TSR_PREC_FP32X3 && mode != TSR_PREC_TF32 && lo <= 32 && hi >= 1024)
    return p->m <= p->n ? CLS_SKINNY_M : CLS_SKINNY_N;
  if (outputs <= 65536 || p->k <= 64) return CLS_SMALL;
  if (outputs <= 512 * 512 && is_unaligned(p) && !tc) return CLS_SMALL_UNALIGNED;
  if (outputs <= 1536 * 1536) return CLS_MEDIUM;
  return CLS_LARGE;
}

const char *tsr__emit_plan_class(const tsr_problem *p) { return class_names[classify(p)]; }

/* Skinny FFMA tiles whose big operand runs along k (A with op N under a short
 * N; B with op T under 32 short rows): that operand as [x][k] rows (kfrag,
 * 16-byte copies instead of one 4-byte transposing cp.async per element; one
 * aligned problem). H200, session 20 (s20-tall-ffma*.txt), strict FFMA time
 * over cuBLAS pedantic's, the same kernels in auto, errors unchanged
 * (cuBLAS's or below):
 *  - N of 9..16, NN: 4 warps of 32x16 (4x4 per thread), bk 32 x 3 stages,
 *    slices toward about two CTAs per SM: 4096x16x16384 0.977x -> 0.603x /
 *    0.594x (two runs; 8 slices, 16 0.726x, 4 0.743x; bk 64 x 2 0.618x, the
 *    64-thread 64x16 warps 0.672x; kfrag alone 0.934x);
 *  - N of 17..32, NN: kfrag=a alone: 65536x32x1024 0.764x -> 0.680x / 0.685x
 *    (bk 32 x 3 0.722x, 8 warps of 32x16 0.674-0.707x, 64-row tiles 0.796x);
 *  - 17..32 short rows, NT: kfrag=ab (A's 32 rows are k-contiguous too),
 *    bk 32 x 3 stages: 32x4096x4096 1.020x -> 0.924x, 32x32000x4096 0.884x ->
 *    0.684x (bk 16 x 4: 0.898x / 0.764x; kfrag=b alone 0.946x / 0.834x).
 * Other thin sides (8 or fewer: the GEMV family or 4..8-wide tiles), other
 * op pairs and batches were not measured, so not changed. */
static void skinny_kfrag(const tsr_problem *p, tsr_plan *pl) {
  if (is_unaligned(p) || p->batch != 1 || pl->mma != TSR_MMA_FFMA) return;
  if (p->m > p->n && p->op_a == TSR_OP_N && (pl->bn == 16 || pl->bn == 32)) {
    pl->kfrag = TSR_PACK_A;
    if (pl->bn == 16) {
      pl->wm = 32, pl->tm = 4, pl->tn = 4;
      pl->bk = 32, pl->stages = 3;
      pl->splitk = pick_splitk(p, pl, SPLITK_CTAS / 4);
    }
  } else if (p->m <= p->n && p->op_a == TSR_OP_N && p->op_b == TSR_OP_T && pl->bm == 32) {
    pl->bk = 32, pl->stages = 3;
    pl->kfrag = TSR_PACK_AB;
    pl->splitk = pick_splitk(p, pl, SPLITK_CTAS / 2); /* as skinny_tiles: 32-element micro-tiles */
  }
}

void tsr__emit_default_plan(const tsr_problem *p, tsr_plan *out) {
  tsr__emit_default_plan_cc(p, 90, out);
}

/* precision ozaki, and auto's large class on sm_90a at 2048 <= K <= 16384: the
 * INT8 residue family (docs/emit.md "Ozaki"), 256x128 tiles of two consumer
 * warpgroups, 64-deep K blocks x 6 stages, persistent. H200, session 7
 * (scripts/device/default-check ozvar), time over cuBLAS pedantic's with 8
 * moduli: 0.446x at 4096^3 (auto's 3xTF32 plan 0.489x), 0.351x at 8192^3
 * (0.435x), 0.373x at 4096x4096x11008 (0.458x), 0.339x at 16384^3 (0.432x);
 * 1.29x at 1024^3 and 1.47x at 2049x4097x1025, where the prologue, the
 * reconstruction and the last partial wave weigh; the FP32 contract met on
 * random, normal and wide inputs, error 2.5e-8 on random (cuBLAS 1.2e-6). */
void tsr__emit_ozaki_plan(const tsr_problem *p, tsr_plan *pl) {
  pl->mma = TSR_MMA_WGMMA_S8;
  pl->split = TSR_SPLIT_PRODUCER_BULK;
  pl->acc = TSR_ACC_STEP;
  pl->pack = TSR_PACK_AB;
  pl->vec = 4;
  pl->pad = 0;
  pl->tm = pl->tn = 1;
  pl->splitk = 1;
  pl->minblocks = 0;
  pl->a = pl->b = TSR_IN_STAGED;
  pl->threads = 0;
  pl->isa = TSR_ISA_AUTO;
  pl->kfrag = TSR_PACK_NONE;
  pl->kloop = 0;
  pl->bm = 256, pl->bn = 128, pl->bk = 64, pl->wm = 128, pl->wn = 128, pl->stages = 6;
  pl->walk = (tsr_walk){TSR_WALK_RECT, 8, 16};
  /* the fewest moduli that keep 25 bits per operand: a row's largest
   * values, in the top binade, then round to themselves (24 bits rounded
   * FLT_MAX up to 2^128 in tests/emit) */
  pl->moduli = tsr__ozaki_moduli_for(p->k, 25);
  /* the guard's magnitudes over every gstride-th K block (>= 32 blocks) */
  pl->gstride = tsr__ozaki_gstride_for(p->k, pl->bk);
}

/* auto and fp32x3 on sm_90 (fp32x3 ran the 128x128 producer-bulk wgmma tiles
 * there, 1.76-2.07x cuBLAS's time in session 12; the figures below are that
 * mode's route), one aligned problem with a side of 33..64 against K >= 2048
 * and at least 100 tiles along the other side: the mma.sync 3xTF32 family
 * instead of the strict FFMA tiles (which auto took there since session 12:
 * the wgmma tiles lose at a side of 64, 1.2-2.8x cuBLAS's time for every split
 * screened in session 19, s19-side64.txt). H200, session 19 (s19-mma-ab.txt,
 * the cheaper split and the step's MMA passes over the warp tile), time over
 * cuBLAS pedantic's, against the strict FFMA plans' 1.099x / 1.064x / 1.147x
 * in session 18's auto zoo (1.086x / 1.055x in the same call as mma.sync in
 * session 17):
 *  - NN, N <= 64 (16384x64x4096): 128x64 tiles of 64x32 warps, bk 16 x 4
 *    stages, split-K 2: 1.007x (bk 32 x 3: 1.010x);
 *  - TN, M <= 64 (64x16384x4096): 64x128 tiles of 32x64 warps, bk 32 x 3,
 *    split-K 2: 0.974x;
 *  - NT, M <= 64 (64x11008x4096): 64x64 tiles of 32x32 warps, bk 32 x 3,
 *    split-K 3: 1.064x.
 * Error 2.5-3.0e-7 on random inputs against FFMA's 8.1e-7 (cuBLAS 1.14e-6).
 * Other op pairs lost or were not measured (64x4096x4096 NN: 1.28-1.45x). */
static int side64_mma(const tsr_problem *p, unsigned cc, tsr_plan *pl) {
  if ((p->precision != TSR_PREC_AUTO && p->precision != TSR_PREC_FP32X3) || cc != 90 ||
      p->batch != 1 || is_unaligned(p) || p->k < 2048)
    return 0;
  int nn = p->op_a == TSR_OP_N && p->op_b == TSR_OP_N;
  int tn = p->op_a == TSR_OP_T && p->op_b == TSR_OP_N;
  int nt = p->op_a == TSR_OP_N && p->op_b == TSR_OP_T;
  int thin_n = p->n > 32 && p->n <= 64 && (p->m + 127) / 128 >= 100 && nn;
  int thin_m = p->m > 32 && p->m <= 64 && (p->n + 127) / 128 >= 64 && (tn || nt);
  if (!thin_n && !thin_m) return 0;
  /* over the table's starting plan (staged, linear walk, acc=step, split inline) */
  pl->mma = TSR_MMA_TF32X3;
  pl->pad = 0, pl->vec = 4;
  if (thin_n)
    pl->bm = 128, pl->bn = 64, pl->bk = 16, pl->wm = 64, pl->wn = 32, pl->stages = 4, pl->splitk = 2;
  else if (tn)
    pl->bm = 64, pl->bn = 128, pl->bk = 32, pl->wm = 32, pl->wn = 64, pl->stages = 3, pl->splitk = 2;
  else
    pl->bm = 64, pl->bn = 64, pl->bk = 32, pl->wm = 32, pl->wn = 32, pl->stages = 3, pl->splitk = 3;
  return 1;
}

void tsr__emit_default_plan_cc(const tsr_problem *p, unsigned cc, tsr_plan *out) {
  tsr_plan pl;
  memset(&pl, 0, sizeof pl);
  pl.tm = pl.tn = 1;
  pl.a = pl.b = TSR_IN_STAGED;
  pl.walk = (tsr_walk){TSR_WALK_LINEAR, 1, 1};
  pl.splitk = 1;
  pl.threads = 0;
  pl.isa = TSR_ISA_AUTO;
  pl.acc = TSR_ACC_STEP;
  if (side64_mma(p, cc, &pl)) { /* aligned rows, no pack; the FFMA-only steps below do not apply */
    *out = pl;
    return;
  }
  /* The family follows the precision mode: strict FFMA, fp32x3 tf32x3
   * (acc=step), tf32 one TF32 MMA (acc=chain: its bound allows it); auto
   * takes the tensor-core split where it meets the FP32 contract. */
  tsr_precision mode = p->precision;
  int tc = mode == TSR_PREC_FP32X3 || mode == TSR_PREC_TF32 ||
           (mode == TSR_PREC_AUTO && p->k >= X3_KMIN);
  tsr_mma tc_mma = mode == TSR_PREC_TF32 ? TSR_MMA_TF32 : TSR_MMA_TF32X3;
  /* Pack prologue (docs/emit.md "Pack") for each operand whose rows are not
   * 16-byte multiples, in the medium and large classes: there the unaligned
   * layout costs vec=1 4-byte copies, per-element K guards and 240-255
   * registers (measured 0.59-0.76x cuBLAS with tf32x3), while packing moves
   * each operand once (~2-20 us incl. the launch) for a main kernel at the
   * aligned rate. */
  if (mode == TSR_PREC_OZAKI) {
    tsr__emit_ozaki_plan(p, &pl);
    *out = pl;
    return;
  }
  tsr_pack unaligned = (tsr_pack)((aligned4(p->lda, p->stride_a, p->batch) ? 0 : TSR_PACK_A) |
                                  (aligned4(p->ldb, p->stride_b, p->batch) ? 0 : TSR_PACK_B));
  pl.vec = pick_vec(p, TSR_PACK_NONE);
  plan_class cls = classify(p);
  int64_t lo = p->m < p->n ? p->m : p->n;
  /* auto, a batch of problems with a side of at most 128: strict FFMA. H200,
   * session 12 (s12-batched-*.txt), time over cuBLAS pedantic's:
   * 128*128x128x128 1.93x for the producer-bulk 3xTF32 kernel against 0.975x
   * for FFMA 128x64 kloop tiles, 96*512x64x512 2.02x against 1.043x,
   * 32*1024x128x1024 1.246x against 1.107x; each with the strict path's
   * error (2.0e-7 / 4.1e-7 / 5.7e-7, cuBLAS's) */
  if (mode == TSR_PREC_AUTO && p->batch > 1 && lo <= 128 && !unaligned) tc = 0;
  /* auto, a side of at most 64 (decode rows, thin panels): strict FFMA, the
   * 128x128 wgmma tiles run half empty. H200, session 12 (full zoo, auto
   * against strict), time over cuBLAS pedantic's, wgmma / FFMA:
   * 64x4096x4096 2.28x / 1.05x, 64x11008x4096 NT 2.07x / 1.45x,
   * 16384x64x4096 1.76x / 1.15x, 64x16384x4096 TN 1.92x / 1.12x,
   * 64x10944x4928 NT 2.19x / 1.55x; the strict path's error at most 1.7x
   * cuBLAS's */
  if (mode == TSR_PREC_AUTO && lo <= 64 && !unaligned) tc = 0;
  int packs = 0;
  /* gemv where the short operand is one row/column or is read along k: with
   * a short side of 16 read across k (4096x16x16384 NN, B's 16 values of a
   * K row 64 bytes apart per product) it ran 15.6x cuBLAS's time on the
   * H200 (session 6) against 0.99x for the skinny tiles */
  int shortk = p->m <= p->n ? p->op_a == TSR_OP_N : p->op_b == TSR_OP_T;
  /* 9..16 decode rows against a k-contiguous B (NT, aligned): the skinny
   * FFMA tiles with both operands as [x][k] rows (kfrag=ab: 16-byte copies,
   * 4 k steps per LDS.128), 32 slices. H200, session 15 (s15-screen3.txt),
   * time over cuBLAS pedantic's, GEMV plan -> this: 16x4096x14336 NT
   * 1.220x -> 0.960x, 16x14336x4096 NT 1.111x -> 0.747x (without kfrag,
   * kloop=1: 1.069x / 0.953x); errors 2.0-2.3e-7 -> 2.3-3.9e-7 (cuBLAS
   * 5.4-8.1e-7). 8 rows and fewer keep the GEMV plan (0.66-0.83x) */
  int rows16 = cls == CLS_SKINNY_M && p->m > 8 && p->m <= 16 && p->op_a == TSR_OP_N &&
               p->op_b == TSR_OP_T && !is_unaligned(p);
  if (rows16) {
    skinny_tiles(p, &pl);
    pl.kfrag = TSR_PACK_AB;
    int64_t most = (p->k / pl.bk) / SPLITK_MIN_KB;
    pl.splitk = (int)(most < 32 ? (most < 1 ? 1 : most) : 32);
  } else if ((cls == CLS_SKINNY_M || cls == CLS_SKINNY_N) && (p->m <= 16 || p->n <= 16) &&
             ((p->m <= p->n ? p->m : p->n) == 1 || shortk)) {
    gemv_plan(p, &pl);
  } else if (cls == CLS_SKINNY_M || cls == CLS_SKINNY_N) {
    skinny_tiles(p, &pl);
    skinny_kfrag(p, &pl);
  } else if (cls == CLS_SMALL) {
    if (mode == TSR_PREC_FP32X3 || mode == TSR_PREC_TF32) {
      /* a tensor-core mode asked for explicitly: 32x32 tiles of 4 warps */
      pl.mma = tc_mma;
      pl.bm = 32, pl.bn = 32, pl.bk = 16, pl.wm = 16, pl.wn = 16;
      pl.stages = 2;
      pl.pad = 0;
    } else {
      pl.mma = TSR_MMA_FFMA;
      pl.bm = 32, pl.bn = 32, pl.bk = 16;
      pl.wm = 16, pl.wn = 32, pl.tm = 4, pl.tn = 4;
      pl.stages = 2;
      pl.pad = 4;
      /* short K (32..64) over a large output, one problem, aligned rows:
       * the large class's 128x128 kloop tiles. H200, session 11
       * (s11b-ffma.txt), 8192x8192x64: 0.908x cuBLAS's time against 1.132x
       * in 32x32 tiles (64x64 kloop 1.002x); (8192x8192x16 NT, K < 32,
       * keeps 32x32: 0.736x). Batches count their tiles (session 12,
       * s12-batched-ffma.txt): 96*512x512x64 NT 0.832x against 1.106x
       * (64x64 kloop 0.989x) */
      int64_t t128 = ((p->m + 127) / 128) * ((p->n + 127) / 128) * p->batch;
      if (p->k >= 32 && !unaligned && t128 >= 8 * H200_SMS) {
        ffma_tiles(&pl, 1);
        pl.kloop = 1;
      }
    }
    pl.splitk = pick_splitk(p, &pl, SPLITK_CTAS);
    if (pl.mma == TSR_MMA_FFMA && p->batch == 1 && p->k >= 4096 && lo >= 100)
      long_k_tiles(p, mode, cc, unaligned, &pl);
    /* long K on 32x32 FFMA tiles, NT (both operands k-contiguous), one
     * aligned problem: both as [x][k] rows (kfrag=ab, 16-byte copies instead
     * of two transposing 4-byte ones). H200, session 20 (s20-tall-ffma3.txt):
     * 128x64x65536 NT 1.016x -> 0.835x cuBLAS pedantic's time; NN (kfrag=a)
     * moved within the noise there (64x64x8192 0.545x / 0.555x, 32x32x16384
     * 0.664x / 0.541x with a wide range), so not changed */
    if (pl.mma == TSR_MMA_FFMA && pl.bm == 32 && pl.bn == 32 && pl.kloop == 0 && !unaligned &&
        p->batch == 1 && p->k >= 4096 && p->op_a == TSR_OP_N && p->op_b == TSR_OP_T)
      pl.kfrag = TSR_PACK_AB;
  } else if (cls == CLS_SMALL_UNALIGNED) {
    /* small-medium, unaligned rows: FFMA 64x32 tiles of 64 threads (measured
     * 7.97 us = 0.995x cuBLAS at 513x257x129, vs 16.5 us for tf32x3 64x64x32
     * vec=1); no pack: two prologue launches would cost about as much as
     * the whole call (prediction, docs/perf.md) */
    pl.mma = TSR_MMA_FFMA;
    pl.bm = 64, pl.bn = 32, pl.bk = 16;
    pl.wm = 32, pl.wn = 16, pl.tm = 4, pl.tn = 4;
    pl.stages = 2;
    pl.pad = 4;
  } else if (cls == CLS_MEDIUM) {
    packs = 1;
    /* strict, about one wave of 128x128 tiles (llm-train's 512x4096xK):
     * the large tiles with kloop=1, no split-K. H200, session 5
     * (scripts/device/ffma-variants3.txt): 512x4096x4096 1.112x cuBLAS's
     * time against 1.219x for 64x64; 512x4096x11008 NT 1.314x against
     * 1.573x; at 1024^3 (64 such tiles) 1.872x, so not there. Short K
     * (batched 256^3, 32768x128x128): not measured, so not changed */
    int64_t t128 = ((p->m + 127) / 128) * ((p->n + 127) / 128) * p->batch;
    int wave128 = !tc && !unaligned && t128 >= 120 && p->k >= 2048;
    int64_t t256 = ((p->m + 255) / 256) * ((p->n + 127) / 128) * p->batch;
    int bulk = cc == 90 && tc && mode != TSR_PREC_TF32;
    if (bulk) {
      /* sm_90a: producer-bulk (the large default's family) sized to the
       * grid. H200, session 6 (scripts/device/wgmma-variants3.txt), time
       * over cuBLAS pedantic's: 2049x4097x1025 256x128 0.734x (297 tiles);
       * 1024x1024x1537 128x128 split-K 2 0.730x (128x64: 0.823x);
       * 1024^3 128x64 0.740x (128x128 split-K 2: 0.769x); the mma.sync
       * plans below ran 0.96-1.03x there */
      pl.mma = TSR_MMA_WGMMA_TF32X3;
      pl.split = TSR_SPLIT_PRODUCER_BULK;
      pl.pad = 0;
      pl.walk = (tsr_walk){TSR_WALK_RECT, 8, 16};
      if (t256 >= 2 * H200_SMS) {
        pl.bm = 256, pl.bn = 128, pl.bk = 8, pl.wm = 128, pl.wn = 128, pl.stages = 8;
      } else if (p->k >= 1536 && 2 * t128 <= 2 * H200_SMS) {
        /* 32-deep K blocks x 3 stages (session 10, s10d-wgmma.txt):
         * 1024x1024x1537 0.651x (bk = 16 x 6 stages: 0.689x), 512x4096x4096
         * 0.567x (0.575x), 1024x1024x4096 0.602x (0.614x); errors unchanged */
        pl.bm = 128, pl.bn = 128, pl.bk = 32, pl.wm = 64, pl.wn = 128, pl.stages = 3;
        pl.splitk = 2;
        /* a third of a wave of tiles or less: slices toward one wave, each
         * at least 512 deep, at most 8. H200, session 17 (s17-wg195.txt),
         * time over cuBLAS pedantic's, split-K 2 -> the rule's pick:
         * 195x1423x2802 (24 tiles) 1.378x -> 0.972x at 5 (3 1.138x, 4
         * 1.047x, 6 1.169x: two waves); 256x1024x8192 (16) 1.811x ->
         * 0.852x at 8 (4 1.159x); 384x1536x3072 (36) 0.909x -> 0.737x at
         * 3 (4 0.974x). Errors fall with the slices (1.7e-7 against
         * cuBLAS's 9.5e-7 at 195x1423x2802) */
        if (3 * t128 <= H200_SMS) {
          int s = split_one_wave(t128, p->k / 32, 1, 512 / 32);
          if (s > 2) pl.splitk = s;
        }
      } else {
        pl.bm = 128, pl.bn = 64, pl.bk = 16, pl.wm = 64, pl.wn = 64, pl.stages = 8;
        /* a quarter wave of tiles or less with K >= 512 (512^3: 32 CTAs):
         * split-K 4, 32-deep K blocks x 4 stages. H200, session 11
         * (s11-wgmma.txt): 512^3 1.133x -> 0.933x cuBLAS's time (split-K 2
         * 0.971x); 768^3 (72 tiles) and K <= 256 lost with any split */
        int64_t t64 = ((p->m + 127) / 128) * ((p->n + 63) / 64) * p->batch;
        if (4 * t64 <= H200_SMS && p->k >= 512) pl.splitk = 4, pl.bk = 32, pl.stages = 4;
      }
    } else if (wave128) {
      ffma_tiles(&pl, 1);
      pl.kloop = 1;
      /* a side of at most 64 fills half a 128-wide tile: 128x64 (64x128)
       * tiles of four warps instead, the same 8x8 thread tiles. H200,
       * session 11 (zoo strict): 16384x64x4096 ran 2.08x cuBLAS's time and
       * 64x16384x4096 TN 1.96x in 128x128 tiles (s11b-ffma.txt measures) */
      if (p->n <= 64) pl.bn = 64;
      else if (p->m <= 64) pl.bm = 64, pl.wm = 32, pl.wn = 64;
      ffma_cublas_geometry(p, &pl);
      int64_t tw = ((p->m + pl.bm - 1) / pl.bm) * ((p->n + pl.bn - 1) / pl.bn) * p->batch;
      /* under one wave (128 tiles on 132 SMs): split-K 2 lets two CTAs
       * share an SM. H200, session 10 (s10-ffma.txt): 512x4096x4096 1.076x
       * cuBLAS's time (1.109x without), 512x4096x11008 NT 1.274x (1.302x);
       * 128x64 tiles instead: 1.083x / 1.382x. The 64-row tile (4 CTAs per
       * SM) splits 4 (session 15, s15-screen2.txt: 64x16384x4096 TN 1.109x
       * -> 1.064x); 128x64 keeps 2 (16384x64x4096 split-K 4: 1.081x ->
       * 1.109x) */
      if (tw < H200_SMS) pl.splitk = pl.bm == 64 ? 4 : 2;
    } else if (!tc) {
      ffma_tiles(&pl, 0);
      /* 64 rows or fewer against long N and K, aligned rows (decode-like
       * 64x4096x4096): kloop tiles, split K. H200, session 11
       * (s11b-ffma.txt): NN 64x128 tiles, split-K toward two waves (8 at
       * 64x4096x4096): 1.022x cuBLAS's time against 1.193x (64x64, split-K
       * 4); NT keeps 64x64 with kloop and split-K 2: 64x11008x4096 1.435x
       * against 1.931x (64x128 there: 1.739x). Other op pairs: not
       * measured, so not changed */
      if (!unaligned && p->m <= 64 && p->n >= 2048 && p->k >= 2048 && p->op_a == TSR_OP_N) {
        pl.kloop = 1;
        if (p->op_b == TSR_OP_N) pl.bn = 128, pl.wn = 64, pl.tm = 8;
        /* NT: the same 64x128 tile with both operands as [x][k] rows
         * (kfrag=ab: 16-byte copies instead of two transposing 4-byte
         * ones; 167 registers, 3 CTAs per SM).
         * Session 15 (s15-screen*.txt), 64x64 kloop=3 split-K 2 -> this
         * with split-K 4:
         * 64x11008x4096 1.435x -> 1.178x / 1.185x (two runs), 64x10944x4928
         * 1.554x -> 1.256x / 1.259x; 64x128 without kfrag (kloop=3) 1.218x /
         * 1.287x, kfrag=b 1.241x / 1.306x, split-K 8 1.217x / 1.296x. On
         * 128x128 tiles kfrag lost (4096^3 NT 1.154x -> 1.29-1.39x). The
         * slices: the shortest slowest-SM queue (split_by_load), 3 at both
         * shapes (86 tiles: queues 1 / 0.67 / 0.75 / 0.8 / 0.67 for 2..6
         * slices); s15-screen5.txt, split-K 4 -> 3: 1.176x -> 1.136x,
         * 1.249x -> 1.188x (6: 1.313x / 1.164x) */
        else pl.bn = 128, pl.wn = 64, pl.tm = 8, pl.kfrag = TSR_PACK_AB;
      }
      /* a batch of problems of 65..128 a side: 128x64 kloop tiles of four
       * warps (8x8 per thread). H200, session 12 (s12-batched-ffma.txt):
       * 128*128x128x128 0.975x cuBLAS's time against 1.034x for 64x64
       * (64x64 kloop 1.051x) */
      if (!unaligned && p->batch > 1 && lo > 64 && p->m <= 128 && p->n <= 128) {
        ffma_tiles(&pl, 1);
        pl.bn = 64;
        pl.kloop = 1;
      }
    } else {
      pl.mma = tc_mma;
      pl.bm = 64, pl.bn = 64, pl.bk = 32;
      pl.wm = 32, pl.wn = 32;
      pl.stages = 3;
      pl.pad = 0; /* XOR-swizzled: conflict-free fragment loads for both operands */
      if (unaligned) {
        /* packed operands: bk=16 x 4 stages measured 77.7-77.8 us = 1.03x
         * cuBLAS at 1024x1024x1537 vs 80.8-81.3 us for bk=32 x 3 (H200 runs
         * 5 and 6, docs/perf.md) */
        pl.bk = 16;
        pl.stages = 4;
      }
    }
    int64_t tiles = ((p->m + pl.bm - 1) / pl.bm) * ((p->n + pl.bn - 1) / pl.bn) * p->batch;
    /* packed (unaligned) operands in 64x64 strict tiles: the packed copies
     * are aligned and k-contiguous, so the kloop loop (then the fragment
     * ring) applies, and slices toward 4 CTAs per SM. Session 15
     * (s15-screen*.txt), 195x1423x2802 (92 tiles), split-K 2 (the old
     * target's pick) 2.066x cuBLAS's time; kloop=3 with split-K 3 1.654x, 4
     * 1.387x / 1.410x (two runs), 6 1.497x, 8 1.451x; split-K 4 without
     * kloop 1.543x; 64x128 or 32x256 tiles 1.66-1.75x. Then without the
     * pack (s15-screen3.txt): 1.356x -> 1.279x with 4-byte copies (A's NN
     * copies transpose one float at a time anyway; pack=b with 8-byte ones
     * 1.499x); the aligned twin 196x1424x2804 ran 1.134x */
    int packed64 = pl.mma == TSR_MMA_FFMA && unaligned && pl.bm == 64 && pl.bn == 64;
    if (packed64) pl.kloop = 1, packs = 0;
    /* ... and where at most 256 rows lose fewer to 32-row tiles: 32x128
     * tiles of 4 warps (16x64, 4x8 per thread), the most slices that fit
     * one wave of 4 CTAs per SM. Session 16 (s16-screen.txt),
     * 195x1423x2802 (84 tiles): split-K 6 1.147x cuBLAS's time, 4 1.271x;
     * the 64x64 default 1.290x (split-K 7 1.277x, 64x32 1.465x) */
    int thin32 = packed64 && !wave128 && !bulk && p->batch == 1 && p->m <= 256 &&
                 (p->m + 31) / 32 * 32 < (p->m + 63) / 64 * 64;
    if (thin32) {
      pl.bm = 32, pl.bn = 128, pl.wm = 16, pl.wn = 64, pl.tm = 4, pl.tn = 8;
      tiles = ((p->m + 31) / 32) * ((p->n + 127) / 128);
      pl.splitk = split_one_wave(tiles, (p->k + pl.bk - 1) / pl.bk, 4, SPLITK_MIN_KB);
    } else if (!wave128 && !bulk && pl.kfrag == TSR_PACK_AB && pl.bm == 64 && pl.bn == 128) {
      pl.splitk = split_by_load(tiles, (p->k + pl.bk - 1) / pl.bk); /* the 64-row NT tile */
    } else if (!wave128 && !bulk) {
      if (tiles < H200_SMS && (p->k + pl.bk - 1) / pl.bk >= 8) pl.splitk = 2;
      /* long K (decode-like 32x4096x4096): about two 64x64 CTAs per SM */
      int sk = pick_splitk(p, &pl, (packed64 ? 4 : 2) * H200_SMS);
      if (sk > pl.splitk) pl.splitk = sk;
    }
    /* strict FFMA, one NN problem, both sides 512 or more, at most one
     * wave of 32x256 tiles: 32x256 kloop tiles of 8 warps (16x128, 8x8 per
     * thread), bk 32, 3 stages, split-K 2. The strict zoo tune's winner at
     * 1024^3 (session 13). H200 against cuBLAS pedantic, time ratio, 64x64
     * default -> this (s13-medium-tuned.txt): 1000^3 1.493 -> 1.401, 1024^3
     * 1.189 -> 1.148, 768^3 1.497 -> 1.422, 1024x1024x4096 1.425 -> 1.260;
     * without split-K 1.86-2.37; 1280^3 (200 tiles) lost, 1.210 -> 1.228,
     * so the one-wave bound. Errors smaller (two K halves). Other op pairs:
     * not measured, so not changed */
    int64_t t32x256 = ((p->m + 31) / 32) * ((p->n + 255) / 256);
    int64_t t64x128 = ((p->m + 63) / 64) * ((p->n + 127) / 128);
    if (pl.mma == TSR_MMA_FFMA && !unaligned && p->batch == 1 && lo >= 512 && p->k >= 512 &&
        p->op_a == TSR_OP_N && p->op_b == TSR_OP_N && t32x256 <= H200_SMS) {
      pl.bm = 32, pl.bn = 256, pl.bk = 32, pl.wm = 16, pl.wn = 128, pl.tm = 8, pl.tn = 8;
      pl.stages = 3, pl.kloop = 1, pl.splitk = 2;
      /* where that is 100 or more 64x128 tiles: those, split K toward 3 CTAs
       * per SM (12 warps). Session 15 (s15-screen*.txt), 32x256 -> 64x128:
       * 1000^3 1.279 -> 1.135 (split-K 2) / 1.151 (3), 1024^3 1.184 ->
       * 1.049 (2) / 0.997 (3) / 1.014 (4); 128x128 tiles split-K 4:
       * 1.151 / 1.041 */
      if (t64x128 >= 100) {
        ffma_tile_64x128(&pl);
        int64_t sk = (3 * H200_SMS + t64x128 / 2) / t64x128, most = (p->k / pl.bk) / SPLITK_MIN_KB;
        pl.splitk = (int)(sk < most ? sk : most);
      }
    }
  } else {
    packs = 1;
    pl.walk = (tsr_walk){TSR_WALK_RECT, 8, 16};
    int64_t t256 = ((p->m + 255) / 256) * ((p->n + 127) / 128) * p->batch;
    int64_t wide_tiles = ((p->m + 127) / 128) * ((p->n + 255) / 256) * p->batch;
    /* sm_90a, fewer than two waves of 256x128 tiles: 3xTF32 runs the
     * producer-bulk wgmma kernel in 128x128 tiles from K = 384 on, and auto
     * takes strict FFMA below (aligned rows). H200, session 9
     * (scripts/device/shortk-*.txt), time over cuBLAS pedantic's: 2048^3
     * wgmma 128x128 0.508x (256x128 0.612x, 128x64 0.697x, the mma.sync plan
     * below 1.168x), 4096x1024x384 0.644x (strict 1.063x), 4096x1024x512
     * 0.662x (strict 1.113x); at shorter K the wgmma kernel's pack and
     * pipeline fill cost more than its MMAs save: 32768x128x128 1.320x,
     * 64*256^3 1.305x, against strict FFMA kloop=1 0.963x / 1.067x (mma.sync
     * 1.309x / 1.287x). Unaligned rows at short K keep the packed mma.sync
     * plan: 2049x2049x129 1.697x against strict's 1.780x */
    int mid90 = cc == 90 && tc && mode != TSR_PREC_TF32 && wide_tiles < 462 && t256 < 2 * H200_SMS;
    if (mid90 && mode == TSR_PREC_AUTO && p->k < 384 && !unaligned) tc = 0;
    if (!tc) {
      ffma_tiles(&pl, 1);
      /* kloop=1 (per-thread copy pointers, running slots, one basic block
       * per K block; docs/emit.md), 3 stages: on the H200 (session 5,
       * scripts/device/ffma-variants*.txt) 4096^3 NN 1.101x cuBLAS's time
       * (1.286x without; 1.172x with 4 stages), 8192^3 1.083x,
       * 4096x4096x11008 1.085x, TN 1.065x, NT 1.222x; short K (session 9):
       * 32768x128x128 0.963x (1.142x without), 64*256^3 1.067x (1.197x).
       * Packed (unaligned) operands: not measured, so not changed */
      if (!unaligned) pl.kloop = 1;
      /* a side of at most 64 (as in the medium class): 128x64 (64x128)
       * tiles. H200, session 12 (s12-batched-ffma.txt): 96*512x64x512
       * 1.043x cuBLAS's time against 1.748x in 128x128 tiles */
      if (!unaligned && p->n <= 64) pl.bn = 64;
      else if (!unaligned && p->m <= 64) pl.bm = 64, pl.wm = 32, pl.wn = 64;
      ffma_cublas_geometry(p, &pl);
      ffma_quantized_tile(p, &pl);
      ffma_nt_pack(p, &pl);
    } else if (mid90 && p->k >= 384) {
      pl.mma = TSR_MMA_WGMMA_TF32X3;
      pl.split = TSR_SPLIT_PRODUCER_BULK;
      pl.pad = 0;
      pl.bm = 128, pl.bn = 128, pl.bk = 16, pl.wm = 64, pl.wn = 128, pl.stages = 6;
    } else {
      pl.mma = tc_mma;
      pl.pad = 0; /* XOR-swizzled shared layout */
      /* op(A) = T stores A's tile as [k][m]: its scalar/permuted fragment
       * loads need more registers than ldmatrix, and with acc=step the 64x64
       * warp tile spills (8 bytes at 253 registers): 128x128 tiles there */
      if (cc == 90 && mode != TSR_PREC_TF32 && (wide_tiles >= 462 || t256 >= 2 * H200_SMS)) {
        /* sm_90a: wgmma with a producer warpgroup (docs/emit.md "wgmma"):
         * 256x128 tiles of two consumer warpgroups; the pack prologue splits
         * A and B into TF32 planes once, tile by tile in the shared-memory
         * layout, and one producer thread moves each stage with bulk copies,
         * bk=8 x 8 stages (split=producer-bulk). H200 against cuBLAS pedantic
         * (scripts/device/default-check wgvar, session 6): 0.492x its time at
         * 4096^3, 0.434x at 8192^3, 0.460x at 4096x4096x11008, against
         * 0.79 / 0.71 / 0.75x for split=producer-pack (its 128 copying
         * threads, their fences and full-barrier waits) and 1.02-1.03x for
         * the mma.sync plan below; contract met on random, normal and wide
         * inputs (error 0.36x / 0.75x cuBLAS's). The pack prologue makes
         * every op pair, unaligned rows and tails the same main kernel, and
         * its epilogue with beta compiles without spills at 232 registers.
         * From two waves of these tiles (2049x4097x1025, 297 tiles: 0.734x,
         * against 1.03x for the mma.sync 128x64 plan below; K < 1536 now
         * takes 128x128 tiles, below). */
        pl.mma = TSR_MMA_WGMMA_TF32X3;
        pl.bm = 256, pl.bn = 128, pl.bk = 8;
        pl.wm = 128, pl.wn = 128;
        pl.stages = 8;
        pl.split = TSR_SPLIT_PRODUCER_BULK;
        /* K below 1536: 128x128 tiles x 6 stages, as for the mid shapes.
         * H200, session 10 (scripts/device/s10-wgmma.txt): 2049x4097x1025
         * 0.583x cuBLAS's time (256x128: 0.743x; 561 tiles fill 4.25 waves
         * where 297 filled 2.25), 64*512^3 0.783x (0.900x at the same wave
         * count: the shorter pipeline per tile); errors unchanged */
        if (p->k < 1536) {
          pl.bm = 128, pl.bn = 128, pl.bk = 16, pl.wm = 64, pl.wn = 128, pl.stages = 6;
        }
        /* auto, deep enough for the residue family (tsr__emit_ozaki_plan), whose
         * workspace (planes, residues, the guard's sums: ~8 GB at 16384^3)
         * stays within 16 GiB */
        double ozws = 9.0 * (double)p->batch * ((double)p->m + (double)p->n) * (double)p->k +
                      12.0 * (double)p->batch * (double)p->m * (double)p->n;
        if (mode == TSR_PREC_AUTO && p->k >= 2048 && p->k <= 16384 && wide_tiles >= 462 &&
            ozws <= 0x1p34) {
          tsr__emit_ozaki_plan(p, &pl);
          *out = pl;
          return;
        }
      } else if (wide_tiles >= 462 && p->op_a == TSR_OP_N) {
        /* at least 3.5 waves of 128x256 tiles: 64x64 warp tiles (2/3 of the
         * split work per MMA of 64x32). bk=8 x 4 stages (48 KiB): with
         * acc=step, bk=16 spills 48 bytes at 255 registers (ptxas keeps the
         * second K step's fragments and partial sums in flight); bk=8 fits
         * in 255 with none (the chain scheme fit bk=16 in 242). Screened on
         * the H200 at 4096^3 (docs/perf.md): 4 stages 1.021x cuBLAS time,
         * 6 stages 1.046x, 8 stages 1.026x, 128x128x16 1.172x */
        pl.bm = 128, pl.bn = 256, pl.bk = 8;
        pl.wm = 64, pl.wn = 64;
        pl.stages = 4;
      } else if (unaligned) {
        /* packed operands, fewer than 3.5 waves of wide tiles: 128x64x32 tiles
         * of 4 warps, two CTAs per SM (206 registers, 96 KiB each): measured
         * 425.8 us = 1.035x cuBLAS at 2049x4097x1025, against 517.7 us for
         * 128x128x16 + pack (0.85x) and 431.5 us for 128x64x16 (H200 run 6) */
        pl.bm = 128, pl.bn = 64, pl.bk = 16; /* bk=32 spills with acc=step (255 regs) */
        pl.wm = 64, pl.wn = 32;
        pl.stages = 4;
        pl.minblocks = 2;
      } else {
        /* bk=16 x 4 stages (64 KiB): the tail guards of bk=32 pushed the
         * swizzled 2049x4097x1025 kernel to 255 registers with spills */
        pl.bm = 128, pl.bn = 128, pl.bk = 16;
        pl.wm = 64, pl.wn = 32;
        pl.stages = 4;
      }
    }
  }
  if (pl.mma == TSR_MMA_TF32) pl.acc = TSR_ACC_CHAIN;
  if (packs && unaligned) {
    pl.pack = unaligned;
    pl.vec = pick_vec(p, unaligned);
  }
  ffma_fragment_ring(p, &pl);
  ffma_producer(p, &pl);
  ffma_producer_padded(p, &pl);
  tsr__emit_tail_slices(p, &pl);
  *out = pl;
}
