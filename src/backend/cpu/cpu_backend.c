/* CPU backend: executes a plan with GotoBLAS/BLIS-style blocking.
 *
 * Work decomposition. The output of each batch item is cut into bm×bn
 * macro-tiles (an H×W grid); the plan's walk maps the linear task ordinal to
 * a tile, and worker threads take ordinals in order from one atomic counter
 * (batch-major, walk order inside a batch item). A task owns its C tile:
 *
 *   for each K block (bk):            pack bm×bk of op(A), bk×bn of op(B)
 *     for each tn-column micro-panel: (bk×tn of B stays in L1)
 *       for each tm-row micro-panel:  micro-kernel tm×tn over bk (A from L2)
 *
 * With several tile rows and at least 2 tile columns per thread a task is
 * instead a whole tile column (run_column): per K block its bk×bn block of
 * op(B) is packed once and every tile row runs against it; the walk does not
 * apply then. With fewer columns op(B) is prepacked once for all tiles.
 *
 * Packing absorbs both transposes and all leading dimensions; edge panels
 * are zero-padded so kernels always compute a full tm×tn tile; partial tiles
 * go through a small buffer and are merged with alpha/beta. The first K
 * block applies beta (beta == 0 never reads C), later blocks accumulate.
 *
 * With a=view,b=view nothing is packed: direct kernels read op(A) and the
 * rows of op(B) in place (op(B) = N only) and take partial tiles; this is
 * for operands that fit in cache, where packing costs more than it saves.
 *
 * M == 1 or N == 1 (GEMV) runs neither: the matrix is streamed once in
 * place by the GEMV kernels, the output split in pieces between the
 * threads; of the plan only threads and isa apply there.
 *
 * splitk = S > 1 (staged plans): K is cut into S slices of whole K blocks;
 * task (tile, slice) writes its sum into a private partial of the tile, and
 * a second phase adds the S partials in slice order (deterministic) and
 * applies alpha/beta. For outputs too small to give every core a tile and
 * K long enough to share instead.
 *
 * Plan fields used: bm, bn, bk, tm, tn, a, b, walk, splitk, threads, isa.
 * Fields the CPU does not use must hold the defaults of the built-in plan:
 * wm=1, wn=1, stages=1, vec=1, pad=0, mma=ffma. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cpu/cpu_kernels.h"
#include "sys/assert.h"
#include "core/backend.h"
#include "core/context.h"
#include "core/inputs.h"

#define TSR__CPU_MAX_THREADS 256
/* Problems under this many flops (2·M·N·K·batch) default to one thread. */
#define TSR__CPU_SERIAL_FLOPS 1.5e6
/* ... and under this many, with op(B) = N and AVX-512, to a=view,b=view (AVX2:
 * by the size of its op(B) block, TSR__CPU_AVX2_VIEW_B_BYTES). */
#define TSR__CPU_VIEW_FLOPS 8e6
/* Per-thread packing buffers above this are rejected as a plan error. */
#define TSR__CPU_MAX_PACK_BYTES (512ull << 20)
/* Split-K partial outputs (splitk × batch × M × N floats) above this are
 * rejected as a plan error. */
#define TSR__CPU_MAX_PARTIAL_BYTES (256ull << 20)

static const char *const isa_name[] = {"auto", "generic", "avx2", "avx512"};

static const tsr__cpu_kernel *kernels_of(tsr_isa isa) {
  switch (isa) {
    case TSR_ISA_AVX512: return tsr__cpu_kernels_avx512;
    case TSR_ISA_AVX2: return tsr__cpu_kernels_avx2;
    default: return tsr__cpu_kernels_generic;
  }
}

static const tsr__cpu_kernel *find_kernel(tsr_isa isa, int tm, int tn) {
  for (const tsr__cpu_kernel *k = kernels_of(isa); k->fn; k++)
    if (k->tm == tm && k->tn == tn) return k;
  return NULL;
}

static tsr_isa best_isa(void) {
  if (tsr__cpu_isa_supported(TSR_ISA_AVX512)) return TSR_ISA_AVX512;
  if (tsr__cpu_isa_supported(TSR_ISA_AVX2)) return TSR_ISA_AVX2;
  return TSR_ISA_GENERIC;
}

/* Resolves plan->isa (auto: the best supported ISA with a tm×tn kernel) to
 * a kernel; on failure writes the reason naming the field. */
static tsr_status resolve_kernel(const tsr_plan *plan, const tsr__cpu_kernel **out, char *msg,
                                 size_t cap) {
  if ((unsigned)plan->isa > TSR_ISA_AVX512)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED, "plan: isa=%d is not a known ISA",
                        (int)plan->isa);
  tsr_isa isa = plan->isa;
  if (isa == TSR_ISA_AUTO) {
    const tsr_isa order[] = {TSR_ISA_AVX512, TSR_ISA_AVX2, TSR_ISA_GENERIC};
    for (int i = 0; i < 3; i++)
      if (tsr__cpu_isa_supported(order[i]) && (*out = find_kernel(order[i], plan->tm, plan->tn)))
        return TSR_OK;
    isa = best_isa(); /* explain against the best ISA */
  } else if (!tsr__cpu_isa_supported(isa)) {
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                        "plan: isa=%s is not supported by this CPU (available: generic%s%s)",
                        isa_name[isa], tsr__cpu_isa_supported(TSR_ISA_AVX2) ? ", avx2" : "",
                        tsr__cpu_isa_supported(TSR_ISA_AVX512) ? ", avx512" : "");
  }
  if ((*out = find_kernel(isa, plan->tm, plan->tn))) return TSR_OK;
  char avail[256] = "";
  size_t len = 0;
  int tm_known = 0;
  for (const tsr__cpu_kernel *k = kernels_of(isa); k->fn; k++) {
    len += (size_t)snprintf(avail + len, sizeof avail - len, "%s%dx%d", len ? ", " : "", k->tm,
                            k->tn);
    if (len >= sizeof avail) len = sizeof avail - 1;
    tm_known |= k->tm == plan->tm;
  }
  if (!tm_known)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                        "plan: tm=%d has no %s micro-kernel (available tm x tn: %s)", plan->tm,
                        isa_name[isa], avail);
  return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                      "plan: tn=%d has no %s micro-kernel with tm=%d (available tm x tn: %s)",
                      plan->tn, isa_name[isa], plan->tm, avail);
}

static int online_cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > TSR__CPU_MAX_THREADS ? TSR__CPU_MAX_THREADS : (int)n;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return cdiv(a, b) * b; }

/* Bytes of one thread's packing buffers: the A block, the B block and the
 * edge-tile buffer, each 64-byte aligned. */
static uint64_t pack_bytes(const tsr_plan *pl) {
  uint64_t a = (uint64_t)round_up(pl->bm, pl->tm) * (uint64_t)pl->bk * 4;
  uint64_t b = (uint64_t)round_up(pl->bn, pl->tn) * (uint64_t)pl->bk * 4;
  uint64_t t = (uint64_t)pl->tm * (uint64_t)pl->tn * 4;
  return ((a + 63) & ~63ull) + ((b + 63) & ~63ull) + ((t + 63) & ~63ull);
}

static tsr_status cpu_available(tsr_context *ctx) { return TSR_OK; }

/* Default plan for this machine class (2-core Zen AVX-512 with 48 KiB L1d,
 * 1 MiB L2 per core; same logic elsewhere):
 *  - micro-tile: avx512 12x32 (24 zmm accumulators), avx2 6x16, generic 4x8; short M
 *    takes 8x32 (AVX-512) or 4x24 (AVX2) where that pads it less (below);
 *  - bk: K cut into equal blocks of at most 1280 (1024 at K = 4096, one
 *    block at K = 1025). Measured (docs/perf.md,
 *    step 5): long K blocks beat an L1-resident B micro-panel, because every
 *    micro-kernel call pays a C tile update; the micro-panels stream from
 *    L2 well enough;
 *  - bm: the packed A block bm×bk about 384 KiB of L2 (96 rows at bk 1024,
 *    at most 192), bn as wide as keeps the shared K×bn column of packed B
 *    within a quarter of L3 (8 MiB of 32; tsr__cpu_l3_bytes), 512..1536, if
 *    that still leaves 8 tasks per core, else 512 (A is re-packed once per bn
 *    columns); a grid of column tasks takes up to 1024 columns where K is
 *    long and the cores' bk×bn blocks fit half of L3 (AVX-512, and AVX2 with
 *    op(B) = N, below), its columns a multiple of the cores; both
 *    cut into equal tiles and the grid split further until its tiles divide
 *    evenly among the cores, so small shapes (512³) still keep every core
 *    busy. */
/* Whether a grid of h tile rows and ncols tile columns (all batch items)
 * runs as whole-column tasks (run_column) on nt threads: several rows and
 * enough columns to share evenly (docs/log/perf-notebook.md, session 5:
 * llm-train). */
static int column_tasks(int64_t h, uint64_t ncols, int64_t nt) {
  return h > 1 && (ncols >= 4 * (uint64_t)nt ||
                   (ncols >= 2 * (uint64_t)nt && ncols % (uint64_t)nt == 0));
}

/* Cuts m×n into equal tiles of at most mc_max×nc_max (multiples of tm, tn),
 * then splits further (M first, then N) until the tasks share evenly among
 * nt cores or there are at least 8 per core. An M of at most m_keep rows is
 * kept whole when N fits one tile column. Returns the task count. */
static int64_t split_grid(int64_t m, int64_t n, int64_t batch, int64_t nt, int tm, int tn,
                          int64_t mc_max, int64_t nc_max, int64_t m_keep, int64_t *bm,
                          int64_t *bn) {
  int64_t gm0 = cdiv(m, mc_max), gn0 = cdiv(n, nc_max), tasks = 0;
  /* An M that fits one tile row is not cut: one tile row packs op(B) once
   * inside its tiles, with no prepack phase and its second hand-off
   * (docs/log/perf-notebook.md, session 5: 64x2240x64). */
  const int m_whole = gm0 == 1 || (gn0 == 1 && m <= m_keep);
  for (int extra = 0; extra < 16; extra++) {
    int64_t gm = m_whole ? 1 : gm0 + (extra + 1) / 2, gn = m_whole ? gn0 + extra : gn0 + extra / 2;
    int64_t cbm = round_up(cdiv(m, gm), tm), cbn = round_up(cdiv(n, gn), tn);
    int64_t t = cdiv(m, cbm) * cdiv(n, cbn) * batch;
    if (extra == 0 || t % nt == 0 || t >= 8 * nt) {
      *bm = cbm;
      *bn = cbn;
      tasks = t;
      if (t % nt == 0 || t >= 8 * nt) break;
    }
  }
  return tasks;
}

/* AVX2 reads the operands in place where its tile's bk×bn block of op(B)
 * (read again by every 6-row strip of op(A)) stays within half a 512 KiB L2,
 * with op(B) = N. Zen 1, session 44, in place against packed, one binary
 * alternated: 48³ 8.2 → 6.3 µs, 96³ 48 → 36, 256³ (128 KiB) 523 → 507,
 * 64×256³ (256 KiB) 32.3 → 31.3 ms, 4096×16×16384 (80 KiB) 47.1 → 32.1 ms;
 * 512³ (1 MiB) 4.05 → 4.37 ms, 1024³ (2 MiB) 31 → 56 ms: rows of op(B) a
 * power-of-two stride apart share L1 sets, and its strips fall out of L2. */
#define TSR__CPU_AVX2_VIEW_B_BYTES (256ull << 10)

static void cpu_default_plan(tsr_context *ctx, const tsr_problem *p, tsr_plan *out) {
  (void)ctx;
  const tsr_isa isa = best_isa();
  int tm = isa == TSR_ISA_AVX512 ? 12 : isa == TSR_ISA_AVX2 ? 6 : 4;
  int tn = isa == TSR_ISA_AVX512 ? 32 : isa == TSR_ISA_AVX2 ? 16 : 8;
  const int64_t kc_max = 1280;
  int64_t m = p->m > 0 ? p->m : 1, n = p->n > 0 ? p->n : 1, k = p->k > 0 ? p->k : 1;
  /* bn: the K×bn column of packed B the cores share stays within a quarter
   * of L3 (8 MiB of 32), 512..1536 columns: wider tiles re-pack A less often. */
  const uint64_t l3 = tsr__cpu_l3_bytes();
  int64_t nc_max = (int64_t)(l3 / 16) / k;
  if (nc_max > 1536) nc_max = 1536;
  if (nc_max < 512) nc_max = 512;
  int64_t batch = p->batch > 0 ? p->batch : 1;
  double flops = 2.0 * (double)m * (double)n * (double)k * (double)batch;
  int serial = flops < TSR__CPU_SERIAL_FLOPS;
  int64_t nt = serial ? 1 : online_cores();
  /* Split K when the whole output is one tile (at most 192 rows of tm and
   * 512 columns) and K is long: cutting M or N instead would have every
   * thread pack all of the other operand (docs/log/perf-notebook.md,
   * session 5). K blocks then come in a multiple of the thread count so the
   * slices are equal. */
  int splitk = 1;
  if (nt > 1 && batch == 1 && m > 1 && n > 1 && k >= 2048 && round_up(m, tm) <= 192 &&
      round_up(n, tn) <= 512 && k >= 4 * (m > n ? m : n) && k / nt >= 256)
    splitk = (int)nt;
  /* A short M padded to 12 rows wastes up to 11 rows of every tile: 8x32
   * when its padding is smaller by more than its ~5 % slower inner loop
   * (docs/log/perf-notebook.md, session 5: one core, 64x2240x64 0.90 → 1.00
   * of OpenBLAS, 64x64x8192 0.94 → 1.08). The view kernels (below) take
   * partial rows and keep 12. */
  const int view512 = isa == TSR_ISA_AVX512 && flops < TSR__CPU_VIEW_FLOPS &&
                      p->op_b == TSR_OP_N && splitk == 1;
  if (isa == TSR_ISA_AVX512 && !view512 && m <= 192 &&
      round_up(m, 8) * 105 < round_up(m, 12) * 100)
    tm = 8;
  /* AVX2 likewise: 4x24 where its padded output is smaller by more than its
   * ~4 % slower inner loop (Zen 1, session 43: 48x4096x4096:NT, no padding
   * either way, 31.0 against 32.3 ms), e.g. 32 rows (6x16 pads them to 36)
   * and 8 (to 12); 32x32 keeps 6x16 (4x24 pads 32 columns to 48). With
   * op(B) = T only (so never where AVX2 reads in place, below): with
   * op(B) = N, 6x16 at the same bn ran 16.0 against 20.0 ms at 16x4096x4096
   * (8 rows 11.8 against 14.6, 32 rows 24.2 against 26.6; session 44). */
  if (isa == TSR_ISA_AVX2 && p->op_b == TSR_OP_T && m <= 192 &&
      round_up(m, 4) * round_up(n, 24) * 104 < round_up(m, 6) * round_up(n, 16) * 100)
    tm = 4, tn = 24;
  int64_t nkb = round_up(cdiv(k, kc_max), splitk);
  int64_t bk = cdiv(k, nkb);
  /* A block bm×bk about 384 KiB (bm 96 at bk 1024), never above 192 rows. */
  int64_t mc_max = 96 * 1024 / bk;
  if (mc_max > 192) mc_max = 192;
  if (mc_max < tm) mc_max = tm;
  /* Below TSR__CPU_SERIAL_FLOPS one core computes alone: a second thread
   * saves less than the hand-off risks (docs/perf.md, CPU step 12: at 64³
   * one and two threads tie on the median, and two lose whole rounds 10×
   * when the second vCPU is late). */
  int64_t bm, bn;
  /* AVX2: a single tile column of up to two A blocks' rows is cut along N
   * instead of M, so no prepack phase runs before the tiles (each thread
   * packs all of A, at most ~768 KiB): 256³ on 2 cores 1.05 -> 0.98-0.99
   * of OpenBLAS's time (Zen 3, session 10; AVX-512 not measured). */
  const int64_t m_keep = isa == TSR_ISA_AVX512 ? mc_max : 2 * mc_max;
  int64_t tasks =
      split_grid(m, n, batch, splitk > 1 ? 1 : nt, tm, tn, mc_max, nc_max, m_keep, &bm, &bn);
  /* Wide tiles only when there are still plenty of tasks: with fewer than
   * 8 per core one late thread leaves the other idle for a whole tile
   * (docs/perf.md, step 10: 1024×1024×1537 had 10 tasks at bn 1024). */
  if (splitk > 1) { /* one tile: the slices share the cores */
    bm = round_up(m, tm);
    bn = round_up(n, tn);
  } else if (nc_max > 512 && tasks < 8 * nt)
    split_grid(m, n, batch, nt, tm, tn, mc_max, 512, m_keep, &bm, &bn);
  else if ((isa == TSR_ISA_AVX512 || p->op_b == TSR_OP_N) && nc_max < 1024) {
    /* Column tasks pack only a bk×bn block of op(B), so the K×bn bound
     * above does not apply to them; up to 1024 columns halve A's re-packs.
     * AVX2 (Zen 3, session 10): 512x4096x4096, one thread, 0.97 -> 0.98 of
     * OpenBLAS's speed; with op(B) = T, whose B pack transposes too,
     * 512x4096x11008:NT read 1.00 -> 1.02 of OpenBLAS's time, so it keeps
     * 512 there. AVX-512 (neutral on Zen 5, session 5; Intel guest, session
     * 26): A's pack 5 % -> 2.8 % of a 512x4096x4096 call, and on 2 cores
     * 512x4096x4096 0.979 / 0.871 -> 1.022 / 0.913 of OpenBLAS's speed,
     * 512x4096x11008:NT 0.984 / 0.984 -> 1.015 / 1.004 (two pairs;
     * docs/log/perf-notebook.md). */
    /* The cores' bk×bn blocks together within half of L3: on a Zen 1 guest's
     * 8 MiB, two 4 MiB blocks of 1024 columns overflowed it, and 512x4096x4096
     * ran 3 % slower alone and 10–15 % in a whole zoo-quick run than with 512
     * (session 44); 32 MiB keeps 1024. */
    int64_t col_max = (int64_t)(l3 / 2 / ((uint64_t)nt * (uint64_t)bk * 4));
    if (col_max > 1024) col_max = 1024;
    int64_t wbm, wbn;
    int64_t wt = col_max > 512 ? split_grid(m, n, batch, nt, tm, tn, mc_max, col_max, m_keep,
                                            &wbm, &wbn)
                               : 0;
    if (wt >= 8 * nt && column_tasks(cdiv(m, wbm), (uint64_t)(cdiv(n, wbn) * batch), nt))
      bm = wbm, bn = wbn;
  }
  /* Column tasks hand whole tile columns to the cores: fewer than 8 a core
   * come in a multiple of the cores (Zen 1, session 44: 640x4608x3456, nine
   * columns of 512 on two cores 304 ms, ten of 464 276 ms). */
  if (splitk == 1 && batch == 1 && column_tasks(cdiv(m, bm), (uint64_t)cdiv(n, bn), nt)) {
    const int64_t cols = cdiv(n, bn);
    if (cols % nt != 0 && cols < 8 * nt) {
      const int64_t wbn = round_up(cdiv(n, round_up(cols, nt)), tn);
      if (cdiv(n, wbn) % nt == 0) bn = wbn;
    }
  }
  /* Walk down each tile column (stripe over the whole grid height): tasks
   * running at the same time share one K×bn column of packed op(B), which
   * stays in L3, so B leaves DRAM once per column rather than once per tile
   * row (A, re-read once per column, is the smaller stream). */
  uint32_t grid_h = (uint32_t)cdiv(m, bm);
  tsr_walk walk = {TSR_WALK_STRIPE, grid_h, 1};
  tsr_walk_normalize(&walk, grid_h, (uint32_t)cdiv(n, bn));
  /* Small operands read in place: while they sit in L1/L2, packing them
   * costs more than it saves (docs/perf.md, CPU step 13: 32³ 0.45 → 0.75
   * of OpenBLAS, 128×128×61 0.94 → 1.03–1.10; 256³ ties, 513×257×129
   * loses). The direct kernels' tiles are the packed defaults': 12×32
   * (AVX-512), 6×16 (AVX2; Zen 1, session 44: packing was a fifth of a 48³
   * call). */
  const int view =
      isa == TSR_ISA_AVX512
          ? view512 && tm == TSR__CPU_DIRECT_AVX512_TM && tn == TSR__CPU_DIRECT_AVX512_TN
          : isa == TSR_ISA_AVX2 && p->op_b == TSR_OP_N && splitk == 1 &&
                tm == TSR__CPU_DIRECT_AVX2_TM && tn == TSR__CPU_DIRECT_AVX2_TN &&
                (uint64_t)bk * (uint64_t)bn * 4 <= TSR__CPU_AVX2_VIEW_B_BYTES;
  tsr_input_mode mode = view ? TSR_IN_VIEW : TSR_IN_STAGED;
  *out = (tsr_plan){.bm = (int)bm, .bn = (int)bn, .bk = (int)bk, .wm = 1, .wn = 1, .tm = tm,
                    .tn = tn, .stages = 1, .vec = 1, .a = mode, .b = mode,
                    .pad = 0, .walk = walk, .splitk = splitk, .threads = serial ? 1 : 0,
                    .isa = TSR_ISA_AUTO, .mma = TSR_MMA_FFMA};
}

/* Threads a run of this plan uses: plan.threads (0 = all online cores),
 * never more than there are tasks. */
static int run_threads(const tsr_plan *plan, uint64_t tasks) {
  int t = plan->threads > 0 ? plan->threads : online_cores();
  if ((uint64_t)t > tasks) t = (int)tasks;
  return t < 1 ? 1 : t;
}

/* The direct (a=view,b=view) kernel for a plan: AVX-512 when it is allowed
 * and tm×tn fits its register tile, else AVX2 likewise, else the portable
 * one. *isa receives the ISA of the code that runs. */
static tsr_status resolve_direct(const tsr_plan *plan, tsr__cpu_dkernel *dk, tsr_isa *isa,
                                 char *msg, size_t cap) {
  /* the vector direct kernels, widest first: each takes its tn and up to tm rows */
  static const struct { tsr_isa isa; int tm, tn; tsr__cpu_dkernel fn; } vec[] = {
      {TSR_ISA_AVX512, TSR__CPU_DIRECT_AVX512_TM, TSR__CPU_DIRECT_AVX512_TN, tsr__cpu_direct_avx512},
      {TSR_ISA_AVX2, TSR__CPU_DIRECT_AVX2_TM, TSR__CPU_DIRECT_AVX2_TN, tsr__cpu_direct_avx2}};
  int fitsgen = plan->tn <= TSR__CPU_DIRECT_GENERIC_TN && plan->tm <= TSR__CPU_DIRECT_GENERIC_TM;
  if ((unsigned)plan->isa > TSR_ISA_AVX512)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED, "plan: isa=%d is not a known ISA",
                        (int)plan->isa);
  if (plan->isa != TSR_ISA_AUTO && !tsr__cpu_isa_supported(plan->isa))
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED, "plan: isa=%s is not supported by this CPU",
                        isa_name[plan->isa]);
  for (size_t v = 0; v < sizeof vec / sizeof vec[0]; v++) {
    const int fits = plan->tn == vec[v].tn && plan->tm <= vec[v].tm;
    if ((plan->isa == TSR_ISA_AUTO || plan->isa == vec[v].isa) &&
        tsr__cpu_isa_supported(vec[v].isa) && fits) {
      *dk = vec[v].fn;
      *isa = vec[v].isa;
      return TSR_OK;
    }
    if (plan->isa == vec[v].isa)
      return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                          "plan: tm=%d, tn=%d with a=view,b=view: the %s direct kernel needs "
                          "tn=%d and tm<=%d",
                          plan->tm, plan->tn, isa_name[vec[v].isa], vec[v].tn, vec[v].tm);
  }
  if (!fitsgen)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                        "plan: tm=%d, tn=%d with a=view,b=view: the direct kernels take tm<=%d "
                        "and tn<=%d",
                        plan->tm, plan->tn, TSR__CPU_DIRECT_GENERIC_TM, TSR__CPU_DIRECT_GENERIC_TN);
  *dk = tsr__cpu_direct_generic;
  *isa = TSR_ISA_GENERIC;
  return TSR_OK;
}

/* kern: the packed micro-kernel (staged plans); dk and disa: the direct
 * kernel and its ISA (view plans). */
static tsr_status check_plan(const tsr_problem *p, const tsr_plan *plan,
                             const tsr__cpu_kernel **kern, tsr__cpu_dkernel *dk, tsr_isa *disa,
                             char *msg, size_t cap) {
  *kern = NULL;
  *dk = NULL;
  const struct { const char *name; int v; } pos[] = {
      {"bm", plan->bm}, {"bn", plan->bn}, {"bk", plan->bk}, {"tm", plan->tm}, {"tn", plan->tn}};
  for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
    if (pos[i].v < 1)
      return tsr__failbuf(msg, cap, TSR_ERR_REJECTED, "plan: %s=%d must be at least 1",
                          pos[i].name, pos[i].v);
  /* GPU-only fields: each must keep its default (the value named as the plan
   * text spells it) */
  tsr_plan want = *plan;
  want.wm = want.wn = want.stages = want.vec = 1;
  want.pad = want.minblocks = 0;
  want.mma = TSR_MMA_FFMA;
  want.acc = TSR_ACC_STEP;
  want.pack = TSR_PACK_NONE;
  want.split = TSR_SPLIT_INLINE;
  want.kfrag = TSR_PACK_NONE;
  want.kloop = 0;
  want.kunroll = 0;
  want.lanerows = 0;
  want.tailk = want.wave = want.forder = want.kwait = want.pelect = want.krel = want.kinner = want.lazy =
      want.lazyk = 0;
  if (!tsr_plan_equal(&want, plan)) {
    char have_txt[512], want_txt[512];
    tsr_plan_format(plan, have_txt, sizeof have_txt);
    tsr_plan_format(&want, want_txt, sizeof want_txt);
    /* the first field whose text differs */
    const char *h = have_txt, *w = want_txt;
    while (*h && *w) {
      size_t hl = strcspn(h, ","), wl = strcspn(w, ",");
      if (hl != wl || strncmp(h, w, hl) != 0)
        return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                            "plan: %.*s is not used by the cpu backend (it must be %.*s)", (int)hl,
                            h, (int)wl, w);
      h += hl + (h[hl] == ',');
      w += wl + (w[wl] == ',');
    }
    /* kfrag, kloop, kunroll, lanerows, tailk, wave, forder, kwait, pelect, krel, kinner, lazy and lazyk are written only when set: the extra field */
    if (*h)
      return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                          "plan: %.*s is not used by the cpu backend (a GPU kernel key)",
                          (int)strcspn(h, ","), h);
  }
  if (plan->threads < 0 || plan->threads > TSR__CPU_MAX_THREADS)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED, "plan: threads=%d is outside 0..%d",
                        plan->threads, TSR__CPU_MAX_THREADS);
  if ((unsigned)plan->a > TSR_IN_VIEW || (unsigned)plan->b > TSR_IN_VIEW)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED, "plan: a=%d, b=%d: input modes are staged or view",
                        (int)plan->a, (int)plan->b);
  if (plan->a != plan->b)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                        "plan: a=%s with b=%s: the cpu backend packs both operands (staged) or "
                        "reads both in place (view)",
                        plan->a == TSR_IN_VIEW ? "view" : "staged",
                        plan->b == TSR_IN_VIEW ? "view" : "staged");
  const int view = plan->a == TSR_IN_VIEW;
  if (plan->splitk < 1)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED, "plan: splitk=%d must be at least 1",
                        plan->splitk);
  if (plan->splitk > 1 && view)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                        "plan: splitk=%d with a=view,b=view: split-K runs staged plans only",
                        plan->splitk);
  if (view && p->op_b != TSR_OP_N)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                        "plan: b=view needs op(B) = N on the cpu backend (it reads rows of op(B) "
                        "in place); use a=staged,b=staged");
  tsr_status st = view ? resolve_direct(plan, dk, disa, msg, cap) : resolve_kernel(plan, kern, msg, cap);
  if (st) return st;
  if (plan->bm % plan->tm)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED, "plan: bm=%d is not a multiple of tm=%d",
                        plan->bm, plan->tm);
  if (plan->bn % plan->tn)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED, "plan: bn=%d is not a multiple of tn=%d",
                        plan->bn, plan->tn);
  uint64_t bytes = view ? 0 : pack_bytes(plan);
  if (bytes > TSR__CPU_MAX_PACK_BYTES)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                        "plan: bm=%d, bk=%d need %llu bytes of packing buffers per thread "
                        "(limit %llu)",
                        plan->bm, plan->bk, (unsigned long long)bytes,
                        (unsigned long long)TSR__CPU_MAX_PACK_BYTES);
  if (plan->splitk > 1) {
    int64_t nkb = cdiv(p->k, plan->bk);
    if (plan->splitk > nkb)
      return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                          "plan: splitk=%d is more than the %lld K blocks of bk=%d", plan->splitk,
                          (long long)nkb, plan->bk);
    double pbytes = 4.0 * plan->splitk * (double)p->batch * (double)p->m * (double)p->n;
    if (pbytes > (double)TSR__CPU_MAX_PARTIAL_BYTES)
      return tsr__failbuf(msg, cap, TSR_ERR_REJECTED,
                          "plan: splitk=%d needs %.0f bytes of partial outputs (limit %llu)",
                          plan->splitk, pbytes, (unsigned long long)TSR__CPU_MAX_PARTIAL_BYTES);
  }
  uint64_t h = (uint64_t)cdiv(p->m, plan->bm), w = (uint64_t)cdiv(p->n, plan->bn);
  if (h > UINT32_MAX || w > UINT32_MAX)
    return tsr__failbuf(msg, cap, TSR_ERR_OVERFLOW, "plan: tile grid %llux%llu exceeds uint32",
                        (unsigned long long)h, (unsigned long long)w);
  if (p->batch > UINT32_MAX)
    return tsr__failbuf(msg, cap, TSR_ERR_OVERFLOW, "problem: batch=%lld exceeds uint32",
                        (long long)p->batch);
  return tsr_walk_check(&plan->walk, (uint32_t)h, (uint32_t)w, msg, cap);
}

static tsr_status cpu_realize(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                              tsr_plan_info *info) {
  memset(info, 0, sizeof *info);
  char msg[512];
  const tsr__cpu_kernel *kern;
  tsr__cpu_dkernel dk;
  tsr_isa disa = TSR_ISA_AUTO;
  tsr_precision runs;
  tsr_status st = tsr__precision_require(ctx, "cpu", p, 1u << TSR_PREC_STRICT, TSR_PREC_STRICT, &runs);
  if (st) return st;
  st = check_plan(p, plan, &kern, &dk, &disa, msg, sizeof msg);
  if (st) return tsr__fail(ctx, st, "%s", msg);
  info->plan = *plan;
  info->precision = runs;
  info->plan.isa = kern ? kern->isa : disa; /* the realized kernel's ISA, never auto */
  uint32_t h = (uint32_t)cdiv(p->m, plan->bm), w = (uint32_t)cdiv(p->n, plan->bn);
  tsr_walk_normalize(&info->plan.walk, h, w);
  info->grid_rows = h;
  info->grid_cols = w;
  info->grid_batch = (uint32_t)p->batch;
  info->threads =
      (uint32_t)run_threads(plan, (uint64_t)h * w * (uint64_t)p->batch * (uint64_t)plan->splitk);
  info->smem_bytes = kern ? pack_bytes(plan) * info->threads : 0;
  info->regs = info->local_bytes = -1;
  info->tail_m = p->m % plan->bm != 0;
  info->tail_n = p->n % plan->bn != 0;
  info->tail_k = p->k % plan->bk != 0;
  return TSR_OK;
}

/* ---- execution ---------------------------------------------------------- */

typedef struct {
  const tsr_problem *p;
  const tsr_plan *plan;
  tsr__cpu_ukernel kern;
  tsr__cpu_dkernel dkern; /* non-NULL: a=view,b=view, nothing packed */
  tsr__cpu_packer pack;
  /* The macro-kernel's loop order: 1 = A micro-panels outer (AVX2 and
   * generic kernels), 0 = B micro-panels outer (AVX-512, not measured). */
  int a_outer;
  const float *a, *b;
  float *c;
  int64_t lda, ldb, ldc, sa, sb, sc;
  uint32_t h, w;
  uint64_t tasks;
  uint64_t next; /* next task ordinal (atomic) */
  int oom;       /* a thread could not get its buffers (atomic) */
  tsr__cpu_pool *pool;
  /* op(B) of every batch item packed once up front (NULL: per tile):
   * tn-column panels of K×tn, column j0 of item bt at bfull + bt*bstride
   * + j0*K. */
  float *bfull;
  int64_t bstride;
  /* op(A) of every batch item packed once up front (NULL: per tile):
   * tm-row panels of K×tm, row i0 of item bt at afull + bt*astride + i0*K;
   * the first bunits prepack items pack op(B), the rest op(A). */
  float *afull;
  int64_t astride;
  uint64_t bunits;
  /* Tasks are whole tile columns (run_column), batch-major: task t is
   * column t % w of batch item t / w. */
  int columns;
  uint64_t pack_units, next_unit; /* prepack work items (atomic counter) */
  /* splitk > 1: slice s of batch item bt sums K blocks [s·nkb/S,
   * (s+1)·nkb/S) (none empty when S <= nkb) into the M×N partial at
   * part + (s*batch + bt)*M*N (row stride N). */
  float *part;
  int64_t nkb;
  uint64_t red_units, next_red; /* reduction work items (atomic counter) */
} job;

/* Columns of op(B) per prepack work item: about 256, and always a whole
 * number of tn-wide panels, so that no two items write the same panel (a
 * unit boundary inside a panel overlapped its neighbour's zero padding and
 * overran the buffer at the last one; tn = 48 found it). */
#define TSR__CPU_PREPACK_COLS 256
static int64_t prepack_cols(int tn) {
  int64_t c = (TSR__CPU_PREPACK_COLS / tn) * tn;
  return c > 0 ? c : tn;
}

/* Row i0 of batch item bt in the prepacked op(A), K step p0: tm-row panels
 * of K x tm each (the panel stride is K * tm). */
static float *apanel(const job *j, int64_t bt, int64_t i0, int64_t p0) {
  return j->afull + bt * j->astride + i0 * j->p->k + p0 * j->plan->tm;
}

/* Whole panels of W floats, a line prefetched per 16; inlined with W a
 * constant, so each memcpy has a constant size (pack_block). */
static inline __attribute__((always_inline)) void copy_panels(float *d, const float *s,
                                                              const float *pf, int64_t whole,
                                                              int64_t kc, const int w) {
  for (int64_t r0 = 0; r0 < whole; r0 += w) {
    for (int j = 0; j < w; j += 16) __builtin_prefetch(pf + r0 + j);
    memcpy(d + r0 * kc, s + r0, (size_t)w * sizeof *d);
  }
}

/* Packs rows [0, len) of a block into consecutive w-wide micro-panels
 * (panel q at dst + q*w*kc). When each k-step is contiguous in memory
 * (rs == 1) the block is read k-row by k-row: long sequential runs that the
 * hardware prefetcher follows, instead of one short strided run per panel.
 * prefetch: also fetch the run 8 k-steps ahead. The prepack of all of op(B)
 * goes without: with it, the llm-train shapes' prepacked path ran 7–15 %
 * slower (docs/log/perf-notebook.md, session 5: llm-train). */
static void pack_block(tsr__cpu_packer pack, int64_t kc, int64_t len, int w, const float *src,
                       int64_t rs, int64_t ks, float *dst, int prefetch) {
  if (rs != 1) { /* transposing: the packer reads w contiguous rows per panel */
    for (int64_t r0 = 0; r0 < len; r0 += w)
      pack(kc, len - r0 < w ? (int)(len - r0) : w, w, src + r0 * rs, rs, ks, dst + r0 * kc);
    return;
  }
  /* Whole panels of the default widths (avx512 32, avx2 16) copy a constant
   * size, which the compiler inlines: a libc call per 128 bytes cost about
   * as much as the copy (docs/log/perf-notebook.md, session 5: llm-train). */
  const int64_t whole = w == 32 || w == 16 ? len / w * w : 0;
  for (int64_t k = 0; k < kc; k++) {
    const float *s = src + k * ks;
    float *d = dst + k * w;
    const float *pf = prefetch && k + 8 < kc ? s + 8 * ks : s; /* the run 8 k-steps ahead */
    if (w == 32) copy_panels(d, s, pf, whole, kc, 32);
    else copy_panels(d, s, pf, whole, kc, 16);
    for (int64_t r0 = whole; r0 < len; r0 += w) {
      int n = len - r0 < w ? (int)(len - r0) : w;
      memcpy(d + r0 * kc, s + r0, (size_t)n * sizeof *d);
      for (int x = n; x < w; x++) d[r0 * kc + x] = 0.0f;
    }
  }
}

/* Origin and extent of tile (row, col): bm×bn, cut at the matrix edge. */
static void tile_span(const job *j, uint32_t row, uint32_t col, int64_t *i0, int64_t *j0,
                      int64_t *mlen, int64_t *nlen) {
  const int64_t bm = j->plan->bm, bn = j->plan->bn;
  *i0 = (int64_t)row * bm;
  *j0 = (int64_t)col * bn;
  *mlen = j->p->m - *i0 < bm ? j->p->m - *i0 : bm;
  *nlen = j->p->n - *j0 < bn ? j->p->n - *j0 : bn;
}

/* One tm×tn micro-tile of the macro-kernel: a full tile in place; an edge
 * tile as a full tile into the buffer, then the valid part merged. */
static inline void micro_tile(const job *j, const float *ap, const float *bp, float *edge,
                              float *ct, int64_t ldd, int mr, int nr, int64_t kc, float alpha,
                              float beta) {
  const int tm = j->plan->tm, tn = j->plan->tn;
  if (mr == tm && nr == tn) {
    j->kern(kc, ap, bp, ct, ldd, alpha, beta);
    return;
  }
  j->kern(kc, ap, bp, edge, tn, 1.0f, 0.0f);
  for (int i = 0; i < mr; i++) {
    float *cr = ct + i * ldd;
    const float *er = edge + i * tn;
    if (beta == 0.0f)
      for (int x = 0; x < nr; x++) cr[x] = alpha * er[x];
    else
      for (int x = 0; x < nr; x++) cr[x] = alpha * er[x] + beta * cr[x];
  }
}

/* The macro-kernel: an mlen×nlen block of C (at C, row stride ldd) from a
 * packed A block (tm-row micro-panel q at apack + q*aq, kc deep) and packed
 * B micro-panels (tn-column panel q at bp + q*bq). Each micro-tile gets the
 * same one kernel call in either loop order, so the order never changes a
 * result. AVX2 and generic: A micro-panels outer, so one A micro-panel
 * (kc×tm, 24 KiB at bk 1024) stays in L1 while the B block streams past it
 * in address order, as OpenBLAS's kernels do; with B micro-panels outer (a
 * 64 KiB panel at bk 1024, twice L1) both operands came from L2 and the
 * block's first pass from L3: 512x4096x4096 on Zen 3 ran 1.5-3 % slower,
 * ~5 % with a memory-streaming neighbour (docs/log/perf-notebook.md,
 * session 12). */
static void macro_kernel(const job *j, const float *apack, int64_t aq, const float *bp,
                         int64_t bq, float *edge, float *C, int64_t ldd, int64_t mlen,
                         int64_t nlen, int64_t kc, float alpha, float beta) {
  const int tm = j->plan->tm, tn = j->plan->tn;
  if (j->a_outer) {
    for (int64_t ir = 0; ir < mlen; ir += tm) { /* A micro-panels (L1) */
      const int mr = mlen - ir < tm ? (int)(mlen - ir) : tm;
      const float *bq0 = bp;
      for (int64_t jr = 0; jr < nlen; jr += tn, bq0 += bq) { /* B micro-panels, streamed */
        const int nr = nlen - jr < tn ? (int)(nlen - jr) : tn;
        micro_tile(j, apack + ir / tm * aq, bq0, edge, C + ir * ldd + jr, ldd, mr, nr, kc, alpha,
                   beta);
      }
    }
    return;
  }
  for (int64_t jr = 0; jr < nlen; jr += tn, bp += bq) { /* B micro-panels (L1) */
    const int nr = nlen - jr < tn ? (int)(nlen - jr) : tn;
    for (int64_t ir = 0; ir < mlen; ir += tm) { /* A micro-panels (L2) */
      const int mr = mlen - ir < tm ? (int)(mlen - ir) : tm;
      micro_tile(j, apack + ir / tm * aq, bp, edge, C + ir * ldd + jr, ldd, mr, nr, kc, alpha,
                 beta);
    }
  }
}

/* op(A)(i, k) at A[i*ars + k*aks]; op(B)(k, jj) at B[jj*brs + k*bks]. */
static void operand_strides(const job *j, int64_t *ars, int64_t *aks, int64_t *brs,
                            int64_t *bks) {
  const tsr_problem *p = j->p;
  *ars = p->op_a == TSR_OP_N ? j->lda : 1, *aks = p->op_a == TSR_OP_N ? 1 : j->lda;
  *brs = p->op_b == TSR_OP_N ? 1 : j->ldb, *bks = p->op_b == TSR_OP_N ? j->ldb : 1;
}

/* Sums K range [kbeg, kend) of tile (row, col) of batch item bt into
 * dst (row stride ldd) as alpha·sum + beta0·dst. */
static void run_tile(const job *j, float *apack, float *bpack, float *edge, int64_t bt,
                     uint32_t row, uint32_t col, int64_t kbeg, int64_t kend, float *dst,
                     int64_t ldd, float alpha, float beta0) {
  const tsr_problem *p = j->p;
  const int tm = j->plan->tm, tn = j->plan->tn;
  const int64_t bk = j->plan->bk;
  int64_t i0, j0, mlen, nlen, ars, aks, brs, bks;
  tile_span(j, row, col, &i0, &j0, &mlen, &nlen);
  operand_strides(j, &ars, &aks, &brs, &bks);
  const float *A = j->a + bt * j->sa, *B = j->b + bt * j->sb;
  float *C = dst + i0 * ldd + j0;
  for (int64_t p0 = kbeg; p0 < kend; p0 += bk) { /* K blocks */
    const int64_t kc = kend - p0 < bk ? kend - p0 : bk;
    const float beta = p0 == kbeg ? beta0 : 1.0f;
    const float *ap = apack;
    int64_t aq = kc * tm;
    if (j->afull)
      ap = apanel(j, bt, i0, p0), aq = p->k * tm;
    else
      pack_block(j->pack, kc, mlen, tm, A + i0 * ars + p0 * aks, ars, aks, apack, 1);
    if (j->bfull)
      macro_kernel(j, ap, aq, j->bfull + bt * j->bstride + j0 * p->k + p0 * tn, p->k * tn, edge,
                   C, ldd, mlen, nlen, kc, alpha, beta);
    else {
      pack_block(j->pack, kc, nlen, tn, B + j0 * brs + p0 * bks, brs, bks, bpack, 1);
      macro_kernel(j, ap, aq, bpack, kc * tn, edge, C, ldd, mlen, nlen, kc, alpha, beta);
    }
  }
}

/* A whole tile column (col, every tile row) in the BLIS order: per K block
 * the bk×bn block of op(B) is packed once, by this thread, and every tile
 * row's A block runs against it. Each output still sums its K blocks in
 * ascending order with the same kernel calls as run_tile: the results are
 * bit-identical to the tile order. */
static void run_column(const job *j, float *apack, float *bpack, float *edge, int64_t bt,
                       uint32_t col) {
  const tsr_problem *p = j->p;
  const int tm = j->plan->tm, tn = j->plan->tn;
  const int64_t bk = j->plan->bk;
  int64_t i0, j0, mlen, nlen, ars, aks, brs, bks;
  tile_span(j, 0, col, &i0, &j0, &mlen, &nlen);
  operand_strides(j, &ars, &aks, &brs, &bks);
  const float *A = j->a + bt * j->sa, *B = j->b + bt * j->sb;
  float *C = j->c + bt * j->sc + j0;
  for (int64_t p0 = 0; p0 < p->k; p0 += bk) { /* K blocks */
    const int64_t kc = p->k - p0 < bk ? p->k - p0 : bk;
    const float beta = p0 == 0 ? p->beta : 1.0f;
    pack_block(j->pack, kc, nlen, tn, B + j0 * brs + p0 * bks, brs, bks, bpack, 1);
    for (uint32_t row = 0; row < j->h; row++) {
      tile_span(j, row, col, &i0, &j0, &mlen, &nlen);
      if (j->afull)
        macro_kernel(j, apanel(j, bt, i0, p0), p->k * tm, bpack,
                     kc * tn, edge, C + i0 * j->ldc, j->ldc, mlen, nlen, kc, p->alpha, beta);
      else {
        pack_block(j->pack, kc, mlen, tm, A + i0 * ars + p0 * aks, ars, aks, apack, 1);
        macro_kernel(j, apack, kc * tm, bpack, kc * tn, edge, C + i0 * j->ldc, j->ldc, mlen,
                     nlen, kc, p->alpha, beta);
      }
    }
  }
}

/* A tile read in place (a=view,b=view): tm×tn direct kernels over each K
 * block; no packing, no edge buffer (the kernels take partial tiles). */
static void run_tile_direct(const job *j, int64_t bt, uint32_t row, uint32_t col) {
  const tsr_problem *p = j->p;
  const int tm = j->plan->tm, tn = j->plan->tn;
  const int64_t bk = j->plan->bk;
  int64_t i0, j0, mlen, nlen;
  tile_span(j, row, col, &i0, &j0, &mlen, &nlen);
  const int64_t ars = p->op_a == TSR_OP_N ? j->lda : 1, aks = p->op_a == TSR_OP_N ? 1 : j->lda;
  const float *A = j->a + bt * j->sa + i0 * ars, *B = j->b + bt * j->sb + j0;
  float *C = j->c + bt * j->sc + i0 * j->ldc + j0;
  for (int64_t p0 = 0; p0 < p->k; p0 += bk) { /* K blocks */
    const int64_t kc = p->k - p0 < bk ? p->k - p0 : bk;
    const float beta = p0 == 0 ? p->beta : 1.0f;
    for (int64_t jr = 0; jr < nlen; jr += tn) {   /* column strips of op(B) */
      const int nr = nlen - jr < tn ? (int)(nlen - jr) : tn;
      for (int64_t ir = 0; ir < mlen; ir += tm) { /* row strips of op(A) */
        const int mr = mlen - ir < tm ? (int)(mlen - ir) : tm;
        j->dkern(kc, mr, nr, A + ir * ars + p0 * aks, ars, aks, B + p0 * j->ldb + jr, j->ldb,
                 C + ir * j->ldc + jr, j->ldc, p->alpha, beta);
      }
    }
  }
}

static void worker_direct(void *arg, int tid) {
  job *j = arg;
  const uint64_t hw = (uint64_t)j->h * j->w;
  for (;;) {
    uint64_t t = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
    if (t >= j->tasks) break;
    uint32_t row, col;
    tsr_walk_map(&j->plan->walk, j->h, j->w, (uint32_t)(t % hw), &row, &col);
    run_tile_direct(j, (int64_t)(t / hw), row, col);
  }
}

static void worker(void *arg, int tid) {
  job *j = arg;
  const tsr_plan *pl = j->plan;
  uint64_t abytes = ((uint64_t)round_up(pl->bm, pl->tm) * pl->bk * 4 + 63) & ~63ull;
  uint64_t bbytes = ((uint64_t)round_up(pl->bn, pl->tn) * pl->bk * 4 + 63) & ~63ull;
  float *buf = tsr__cpu_pool_scratch(j->pool, tid, pack_bytes(pl));
  if (!buf) {
    __atomic_store_n(&j->oom, 1, __ATOMIC_RELAXED);
    return;
  }
  float *apack = buf, *bpack = buf + abytes / 4, *edge = bpack + bbytes / 4;
  const uint64_t hw = (uint64_t)j->h * j->w;
  const int sk = pl->splitk;
  const tsr_problem *p = j->p;
  for (;;) {
    uint64_t t = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
    if (t >= j->tasks || __atomic_load_n(&j->oom, __ATOMIC_RELAXED)) break;
    if (j->columns) {
      run_column(j, apack, bpack, edge, (int64_t)(t / j->w), (uint32_t)(t % j->w));
      continue;
    }
    /* the slices of one tile are consecutive tasks: they run side by side */
    const uint64_t tile = t / (uint64_t)sk, s = t % (uint64_t)sk;
    const int64_t bt = (int64_t)(tile / hw);
    uint32_t row, col;
    tsr_walk_map(&pl->walk, j->h, j->w, (uint32_t)(tile % hw), &row, &col);
    if (sk == 1) {
      run_tile(j, apack, bpack, edge, bt, row, col, 0, p->k, j->c + bt * j->sc, j->ldc, p->alpha,
               p->beta);
      continue;
    }
    const int64_t bk = pl->bk, kbeg = (int64_t)s * j->nkb / sk * bk;
    const int64_t kend = ((int64_t)s + 1) * j->nkb / sk * bk < p->k
                             ? ((int64_t)s + 1) * j->nkb / sk * bk
                             : p->k;
    float *dst = j->part + ((int64_t)s * p->batch + bt) * p->m * p->n;
    run_tile(j, apack, bpack, edge, bt, row, col, kbeg, kend, dst, p->n, 1.0f, 0.0f);
  }
}

/* Split-K phase 2: C = alpha·(P_0 + P_1 + ...) + beta·C, partials added in
 * slice order, over units of TSR__CPU_REDUCE_ROWS rows of every batch item. */
#define TSR__CPU_REDUCE_ROWS 16
static void reduce_worker(void *arg, int tid) {
  job *j = arg;
  const tsr_problem *p = j->p;
  const int sk = j->plan->splitk;
  const int64_t per_item = cdiv(p->m, TSR__CPU_REDUCE_ROWS), slice = p->batch * p->m * p->n;
  const float alpha = p->alpha, beta = p->beta;
  for (;;) {
    uint64_t u = __atomic_fetch_add(&j->next_red, 1, __ATOMIC_RELAXED);
    if (u >= j->red_units) break;
    const int64_t bt = (int64_t)u / per_item, r0 = ((int64_t)u % per_item) * TSR__CPU_REDUCE_ROWS;
    const int64_t r1 = r0 + TSR__CPU_REDUCE_ROWS < p->m ? r0 + TSR__CPU_REDUCE_ROWS : p->m;
    for (int64_t i = r0; i < r1; i++) {
      const float *p0 = j->part + (bt * p->m + i) * p->n;
      float *cr = j->c + bt * j->sc + i * j->ldc;
      for (int64_t x = 0; x < p->n; x++) {
        float sum = p0[x];
        for (int s = 1; s < sk; s++) sum += p0[(int64_t)s * slice + x];
        cr[x] = beta == 0.0f ? alpha * sum : alpha * sum + beta * cr[x];
      }
    }
  }
}

/* Phase 1 when B or A is prepacked: column groups of op(B), then tile rows
 * of op(A), of every batch item. */
static void prepack_worker(void *arg, int tid) {
  job *j = arg;
  const tsr_problem *p = j->p;
  const int tn = j->plan->tn;
  const int64_t brs = p->op_b == TSR_OP_N ? 1 : j->ldb, bks = p->op_b == TSR_OP_N ? j->ldb : 1;
  const int64_t ucols = prepack_cols(tn);
  const uint64_t per_item = (uint64_t)cdiv(p->n, ucols);
  for (;;) {
    uint64_t u = __atomic_fetch_add(&j->next_unit, 1, __ATOMIC_RELAXED);
    if (u >= j->pack_units) break;
    if (u >= j->bunits) { /* tile row r of op(A) */
      const int64_t ars = p->op_a == TSR_OP_N ? j->lda : 1, aks = p->op_a == TSR_OP_N ? 1 : j->lda;
      const int64_t bt = (int64_t)((u - j->bunits) / j->h), bm = j->plan->bm;
      const int64_t i0 = (int64_t)((u - j->bunits) % j->h) * bm;
      pack_block(j->pack, p->k, p->m - i0 < bm ? p->m - i0 : bm, j->plan->tm,
                 j->a + bt * j->sa + i0 * ars, ars, aks, apanel(j, bt, i0, 0), 0);
      continue;
    }
    int64_t bt = (int64_t)(u / per_item), c0 = (int64_t)(u % per_item) * ucols;
    int64_t len = p->n - c0 < ucols ? p->n - c0 : ucols;
    pack_block(j->pack, p->k, len, tn, j->b + bt * j->sb + c0 * brs, brs, bks,
               j->bfull + bt * j->bstride + c0 * p->k, 0);
  }
}

/* ---- GEMV: M == 1 or N == 1 --------------------------------------------- */
/* The output is one row or one column: a tile of tm rows would compute tm−1
 * rows of zeros and packing would copy the whole matrix once more for a
 * single use. The matrix is streamed once in place instead (the plan's tile
 * fields do not apply; threads and isa do). The output of each batch item is
 * cut into pieces handed out like tiles. */
typedef struct {
  tsr__cpu_gemv fn;
  int64_t len, k;      /* outputs, reduction length */
  const float *mat;    /* output i, step k at mat[i*rs + k*ks] */
  int64_t rs, ks;
  const float *x;      /* step k at x[k*incx] */
  int64_t incx;
  float *y;            /* output i at y[i*incy] */
  int64_t incy;
  int64_t smat, sx, sy; /* batch strides */
  float alpha, beta;
  int64_t piece;        /* outputs per task */
  uint64_t per_item, tasks, next; /* next: atomic */
} gemv_job;

static void gemv_task(const gemv_job *g, uint64_t t) {
  const int64_t bt = (int64_t)(t / g->per_item), i0 = (int64_t)(t % g->per_item) * g->piece;
  const int64_t n = g->len - i0 < g->piece ? g->len - i0 : g->piece;
  g->fn(n, g->k, g->mat + bt * g->smat + i0 * g->rs, g->rs, g->ks, g->x + bt * g->sx, g->incx,
        g->y + bt * g->sy + i0 * g->incy, g->incy, g->alpha, g->beta);
}

static void gemv_worker(void *arg, int tid) {
  gemv_job *g = arg;
  for (;;) {
    uint64_t t = __atomic_fetch_add(&g->next, 1, __ATOMIC_RELAXED);
    if (t >= g->tasks) break;
    gemv_task(g, t);
  }
}

/* The context's pool, created on first use. A context is used by one thread
 * at a time (tessera.h); the lock is defensive: callers that take turns on
 * one context through their own lock (the BLAS shim) still get one pool. */
static pthread_mutex_t pool_create_lock = PTHREAD_MUTEX_INITIALIZER;

static tsr__cpu_pool *context_pool(tsr_context *ctx) {
  /* Created once: later calls skip the global lock. */
  tsr__cpu_pool *have = __atomic_load_n(&ctx->backend_state[TSR_BACKEND_CPU], __ATOMIC_ACQUIRE);
  if (have) return have;
  pthread_mutex_lock(&pool_create_lock);
  tsr__cpu_pool *pool = ctx->backend_state[TSR_BACKEND_CPU];
  if (!pool) {
    pool = tsr__cpu_pool_create();
    __atomic_store_n(&ctx->backend_state[TSR_BACKEND_CPU], pool, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&pool_create_lock);
  return pool;
}

static void cpu_context_release(tsr_context *ctx) {
  tsr__cpu_pool_destroy(ctx->backend_state[TSR_BACKEND_CPU]);
  ctx->backend_state[TSR_BACKEND_CPU] = NULL;
}

tsr_status tsr__cpu_gemm(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                         const float *a, const float *b, float *c) {
  char msg[512];
  const tsr__cpu_kernel *kern;
  tsr__cpu_dkernel dk;
  tsr_isa disa;
  tsr_precision runs; /* realize's checks, so that tsr_gemm need not realize first */
  tsr_status st = tsr__precision_require(ctx, "cpu", p, 1u << TSR_PREC_STRICT, TSR_PREC_STRICT, &runs);
  if (st) return st;
  st = check_plan(p, plan, &kern, &dk, &disa, msg, sizeof msg);
  if (st) return tsr__fail(ctx, st, "%s", msg);
  TSR_ASSERT((kern != NULL) != (dk != NULL)); /* a legal plan has exactly one kernel */
  job j = {.p = p, .plan = plan, .kern = kern ? kern->fn : NULL, .dkern = dk, .a = a, .b = b, .c = c};
  j.a_outer = kern && kern->isa != TSR_ISA_AVX512;
  j.pack = kern && kern->isa == TSR_ISA_AVX512 ? tsr__cpu_pack_avx512
           : kern && kern->isa == TSR_ISA_AVX2  ? tsr__cpu_pack_avx2
                                                : tsr__cpu_pack_generic;
  int64_t rows, cols;
  tsr__stored_dims(p, TSR_TENSOR_A, &rows, &cols, &j.lda, &j.sa);
  tsr__stored_dims(p, TSR_TENSOR_B, &rows, &cols, &j.ldb, &j.sb);
  tsr__stored_dims(p, TSR_TENSOR_C, &rows, &cols, &j.ldc, &j.sc);
  j.h = (uint32_t)cdiv(p->m, plan->bm);
  j.w = (uint32_t)cdiv(p->n, plan->bn);
  j.tasks = (uint64_t)j.h * j.w * (uint64_t)p->batch * (uint64_t)plan->splitk;
  /* The walk as realize normalizes it (an unnormalized one maps the same). */
  tsr_plan pl = *plan;
  tsr_walk_normalize(&pl.walk, j.h, j.w);
  j.plan = &pl;
  int nthreads = run_threads(plan, j.tasks);
  if (p->m == 1 || p->n == 1) {
    const tsr_isa gisa = kern ? kern->isa : disa;
    const int64_t ars = p->op_a == TSR_OP_N ? j.lda : 1, aks = p->op_a == TSR_OP_N ? 1 : j.lda;
    const int64_t brs = p->op_b == TSR_OP_N ? 1 : j.ldb, bks = p->op_b == TSR_OP_N ? j.ldb : 1;
    gemv_job g = {.fn = gisa == TSR_ISA_AVX512 ? tsr__cpu_gemv_avx512
                        : gisa == TSR_ISA_AVX2 ? tsr__cpu_gemv_avx2
                                               : tsr__cpu_gemv_generic,
                  .k = p->k,
                  .alpha = p->alpha, .beta = p->beta, .sy = j.sc};
    if (p->m == 1) { /* y = op(A) row 0 · op(B): outputs along the columns of op(B) */
      g.len = p->n, g.mat = b, g.rs = brs, g.ks = bks, g.smat = j.sb;
      g.x = a, g.incx = aks, g.sx = j.sa, g.y = c, g.incy = 1;
    } else { /* y = op(A) · op(B) column 0: outputs along the rows of op(A) */
      g.len = p->m, g.mat = a, g.rs = ars, g.ks = aks, g.smat = j.sa;
      g.x = b, g.incx = bks, g.sx = j.sb, g.y = c, g.incy = j.ldc;
    }
    /* Two pieces per thread (one late thread costs half a piece); pieces
     * of whole vectors (axpy) or row groups (dot). */
    g.piece = nthreads > 1 ? round_up(cdiv(g.len, 2 * (int64_t)nthreads), g.rs == 1 ? 16 : 4)
                           : g.len;
    g.per_item = (uint64_t)cdiv(g.len, g.piece);
    g.tasks = g.per_item * (uint64_t)p->batch;
    if ((uint64_t)nthreads > g.tasks) nthreads = (int)g.tasks;
    if (nthreads <= 1) { /* on the caller: no pool, no locks */
      for (uint64_t t = 0; t < g.tasks; t++) gemv_task(&g, t);
      return TSR_OK;
    }
    tsr__cpu_pool *gp = ctx ? context_pool(ctx) : tsr__cpu_pool_create();
    if (!gp) return tsr__fail(ctx, TSR_ERR_NOMEM, "cpu: out of memory for the thread pool");
    tsr__cpu_pool_lock(gp);
    int grc = tsr__cpu_pool_run(gp, nthreads, gemv_worker, &g);
    tsr__cpu_pool_unlock(gp);
    if (!ctx) tsr__cpu_pool_destroy(gp);
    if (grc)
      return tsr__fail(ctx, TSR_ERR_NOMEM, "cpu: could not start %d worker threads", nthreads);
    return TSR_OK;
  }
  if (j.dkern && nthreads == 1) { /* small and serial: on the caller, no pool, no locks */
    for (int64_t bt = 0; bt < p->batch; bt++) /* tiles are independent: any order */
      for (uint32_t row = 0; row < j.h; row++)
        for (uint32_t col = 0; col < j.w; col++) run_tile_direct(&j, bt, row, col);
    return TSR_OK;
  }
  tsr__cpu_pool *pool = ctx ? context_pool(ctx) : tsr__cpu_pool_create();
  if (!pool) return tsr__fail(ctx, TSR_ERR_NOMEM, "cpu: out of memory for the thread pool");
  j.pool = pool;
  tsr__cpu_pool_lock(pool);
  /* With several tile rows every B block would be packed once per row:
   * take whole tile columns per task (below), or else pack op(B) once
   * (phase 1), then run the tiles (phase 2). */
  int rc = 0;
  j.bstride = round_up(p->n, plan->tn) * p->k;
  uint64_t bbytes = (uint64_t)j.bstride * (uint64_t)p->batch * sizeof(float);
  if (j.dkern) {
    rc = tsr__cpu_pool_run(pool, nthreads, worker_direct, &j);
    goto ran;
  }
  /* Several tile rows and enough tile columns to share evenly: each thread
   * takes whole columns and packs each B block once for all their rows, so
   * op(B) is read once and no prepack phase runs before the tiles
   * (docs/log/perf-notebook.md, session 5: llm-train). */
  const uint64_t ncols = (uint64_t)j.w * (uint64_t)p->batch;
  const int nt_all = plan->threads > 0 ? plan->threads : online_cores();
  j.columns = plan->splitk == 1 && column_tasks(j.h, ncols, nt_all);
  if (j.columns) {
    j.tasks = ncols;
    nthreads = run_threads(plan, j.tasks);
  }
  /* Split-K partials share the pool's shared scratch with prepacked B (after
   * it, 64-byte aligned). */
  const int prepack = !j.columns && j.h > 1 && bbytes <= TSR__CPU_PREPACK_MAX_BYTES;
  if (plan->splitk > 1) {
    uint64_t off = prepack ? (bbytes + 63) & ~63ull : 0;
    uint64_t pbytes = 4ull * (uint64_t)plan->splitk * (uint64_t)p->batch * (uint64_t)p->m *
                      (uint64_t)p->n;
    float *sh = tsr__cpu_pool_shared(pool, (size_t)(off + pbytes));
    if (!sh) {
      tsr__cpu_pool_unlock(pool);
      if (!ctx) tsr__cpu_pool_destroy(pool);
      return tsr__fail(ctx, TSR_ERR_NOMEM, "cpu: out of memory for %llu bytes of split-K partials",
                       (unsigned long long)pbytes);
    }
    j.part = sh + off / 4;
    j.nkb = cdiv(p->k, plan->bk);
    j.red_units = (uint64_t)cdiv(p->m, TSR__CPU_REDUCE_ROWS) * (uint64_t)p->batch;
  }
  /* AVX2 and generic: with several tile rows and columns, op(A) is packed
   * once too, in the same phase, rather than once per tile column (4 times
   * at 512x4096x4096, 22 at 512x4096x11008:NT, by the 8x8 transposing
   * packer; OpenBLAS packs it once per K block and shares it). While it
   * stays well within L3 the tiles re-read the packed panels from there
   * (docs/log/perf-notebook.md, session 11). AVX-512 not measured: it keeps
   * packing A per tile. */
  j.astride = round_up(p->m, plan->tm) * p->k;
  const uint64_t abytes = (uint64_t)j.astride * (uint64_t)p->batch * sizeof(float);
  const int prepack_a = plan->splitk == 1 && kern->isa != TSR_ISA_AVX512 && j.h > 1 && j.w > 1 &&
                        (j.columns || prepack) && abytes <= TSR__CPU_PREPACK_A_MAX_BYTES;
  if (prepack || prepack_a) {
    const uint64_t boff = prepack ? (bbytes + 63) & ~63ull : 0;
    float *sh = tsr__cpu_pool_shared(pool, (size_t)(boff + (prepack_a ? abytes : 0)));
    j.bunits = prepack ? (uint64_t)cdiv(p->n, prepack_cols(plan->tn)) * (uint64_t)p->batch : 0;
    j.pack_units = j.bunits + (prepack_a ? (uint64_t)j.h * (uint64_t)p->batch : 0);
    if (sh) { /* else every tile packs its own blocks */
      j.bfull = prepack ? sh : NULL;
      j.afull = prepack_a ? sh + boff / 4 : NULL;
      int pt = nthreads < (int64_t)j.pack_units ? nthreads : (int)j.pack_units;
      rc = tsr__cpu_pool_run(pool, pt, prepack_worker, &j);
    }
  }
  if (!rc) rc = tsr__cpu_pool_run(pool, nthreads, worker, &j);
  if (!rc && j.part && !j.oom) {
    int rt = (uint64_t)nthreads < j.red_units ? nthreads : (int)j.red_units;
    rc = tsr__cpu_pool_run(pool, rt, reduce_worker, &j);
  }
ran:
  tsr__cpu_pool_unlock(pool);
  if (!ctx) tsr__cpu_pool_destroy(pool);
  if (rc) return tsr__fail(ctx, TSR_ERR_NOMEM, "cpu: could not start %d worker threads", nthreads);
  if (j.oom)
    return tsr__fail(ctx, TSR_ERR_NOMEM, "cpu: out of memory for %llu bytes of packing buffers",
                     (unsigned long long)pack_bytes(plan));
  return TSR_OK;
}

/* ---- vtable: exec over owned copies of C (benchmark harness) ------------- */

typedef struct {
  tsr_context *ctx;
  tsr_problem p;
  tsr_plan plan;
  const float *a, *b;
  float *c, *c0;
} cpu_exec;

static tsr_status cpu_prepare(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                              const float *a, const float *b, const float *c0, void **exec) {
  cpu_exec *e = calloc(1, sizeof *e);
  int64_t nc = tsr_problem_elems_c(p);
  if (!e) return tsr__fail(ctx, TSR_ERR_NOMEM, "cpu: out of host memory");
  e->c = malloc((size_t)nc * sizeof(float));
  e->c0 = c0 ? malloc((size_t)nc * sizeof(float)) : NULL;
  if (!e->c || (c0 && !e->c0)) {
    free(e->c);
    free(e->c0);
    free(e);
    return tsr__fail(ctx, TSR_ERR_NOMEM, "cpu: out of host memory for C");
  }
  if (c0) memcpy(e->c0, c0, (size_t)nc * sizeof(float));
  e->ctx = ctx;
  e->p = *p;
  e->plan = *plan;
  e->a = a;
  e->b = b;
  *exec = e;
  if (c0) memcpy(e->c, c0, (size_t)nc * sizeof(float));
  else tsr_poison(p, e->c);
  return TSR_OK;
}

static tsr_status cpu_reset_c(void *exec) {
  cpu_exec *e = exec;
  if (e->c0) memcpy(e->c, e->c0, (size_t)tsr_problem_elems_c(&e->p) * sizeof(float));
  else tsr_poison(&e->p, e->c);
  return TSR_OK;
}

static tsr_status cpu_launch(void *exec, int n) {
  cpu_exec *e = exec;
  for (int i = 0; i < n; i++) {
    tsr_status st = tsr__cpu_gemm(e->ctx, &e->p, &e->plan, e->a, e->b, e->c);
    if (st) return st;
  }
  return TSR_OK;
}

static tsr_status cpu_sync(void *exec) { return TSR_OK; }

static tsr_status cpu_download(void *exec, float *c) {
  cpu_exec *e = exec;
  int64_t r, cols, ld, stride;
  tsr__stored_dims(&e->p, TSR_TENSOR_C, &r, &cols, &ld, &stride);
  for (int64_t b = 0; b < e->p.batch; b++)
    for (int64_t i = 0; i < e->p.m; i++)
      memcpy(c + b * stride + i * ld, e->c + b * stride + i * ld, (size_t)e->p.n * sizeof(float));
  return TSR_OK;
}

static void cpu_exec_info(void *exec, tsr_plan_info *info) {}

static void cpu_destroy(void *exec) {
  cpu_exec *e = exec;
  if (!e) return;
  free(e->c);
  free(e->c0);
  free(e);
}

/* The CPU model (from /proc/cpuinfo, once) and the best micro-kernel ISA:
 * the tuning database's target key for CPU plans. */
static pthread_once_t cpu_model_once = PTHREAD_ONCE_INIT;
static char cpu_model[128] = "unknown CPU";

static void read_cpu_model(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10)) continue;
    const char *v = strchr(line, ':');
    if (!v) break;
    v++;
    while (*v == ' ' || *v == '\t') v++;
    snprintf(cpu_model, sizeof cpu_model, "%s", v);
    cpu_model[strcspn(cpu_model, "\n")] = '\0';
    break;
  }
  fclose(f);
}

static int cpu_micro_tiles(tsr_isa isa, int view, int (*tiles)[2], int cap) {
  if (view) { /* the direct kernels: AVX-512's tm 4, 8, 12, AVX2's 3, 6 */
    int n = 0;
    for (int tm = 4; tm <= TSR__CPU_DIRECT_AVX512_TM; tm += 4, n++)
      if (n < cap) tiles[n][0] = tm, tiles[n][1] = TSR__CPU_DIRECT_AVX512_TN;
    for (int tm = 3; tm <= TSR__CPU_DIRECT_AVX2_TM; tm += 3, n++)
      if (n < cap) tiles[n][0] = tm, tiles[n][1] = TSR__CPU_DIRECT_AVX2_TN;
    return isa == TSR_ISA_AUTO ? n : 0;
  }
  const tsr__cpu_kernel *tab = isa == TSR_ISA_AVX512 ? tsr__cpu_kernels_avx512
                               : isa == TSR_ISA_AVX2 ? tsr__cpu_kernels_avx2
                               : isa == TSR_ISA_GENERIC ? tsr__cpu_kernels_generic
                                                        : NULL;
  int n = 0;
  for (const tsr__cpu_kernel *k = tab; k && k->fn; k++, n++)
    if (n < cap) tiles[n][0] = k->tm, tiles[n][1] = k->tn;
  return n;
}

static tsr_status cpu_describe(tsr_context *ctx, tsr__backend_desc *out) {
  (void)ctx;
  memset(out, 0, sizeof *out);
  pthread_once(&cpu_model_once, read_cpu_model);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  snprintf(out->device, sizeof out->device, "%s (%ld cores)", cpu_model, n < 1 ? 1 : n);
  snprintf(out->arch, sizeof out->arch, "%s",
           tsr__cpu_isa_supported(TSR_ISA_AVX512) ? "avx512"
           : tsr__cpu_isa_supported(TSR_ISA_AVX2) ? "avx2"
                                                  : "generic");
  return TSR_OK;
}

const tsr__backend tsr__backend_cpu = {
    .api = TSR__BACKEND_API,
    .name = "cpu",
    .is_gpu = 0,
    .available = cpu_available,
    .default_plan = cpu_default_plan,
    .realize = cpu_realize,
    .prepare = cpu_prepare,
    .reset_c = cpu_reset_c,
    .launch = cpu_launch,
    .sync = cpu_sync,
    .event_time = NULL,
    .download = cpu_download,
    .exec_info = cpu_exec_info,
    .destroy = cpu_destroy,
    .context_release = cpu_context_release,
    .describe = cpu_describe,
    .micro_tiles = cpu_micro_tiles,
};
