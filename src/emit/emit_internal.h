/* Emitter internals shared by emit.c, ozaki.c, geometry.c and plans.c: the
 * geometry a (problem, plan) pair realizes, computed once by
 * tsr__emit_geometry and used by the legality check and every code
 * generator; the generators' string builder and shared pieces. */
#ifndef TSR_EMIT_EMIT_INTERNAL_H
#define TSR_EMIT_EMIT_INTERNAL_H

#include <stdarg.h>

#include "emit/emit.h"

/* One operand (A or B) as the kernel sees it: a logical BK x BMN tile per
 * step. FFMA stores it in shared memory with rows along k (s[k * ls + x]) so
 * that the inner product reads consecutive m (or n) with 128-bit loads;
 * tf32x3 keeps the global layout (rows along x, s[x * ls + k], when the
 * operand is k-contiguous) so every copy is a straight 16-byte cp.async. */
typedef struct {
  char name;        /* 'a' or 'b' */
  int staged;       /* 1: through shared memory, 0: view (global -> registers) */
  int kmajor;       /* 1: global is contiguous along k (A with op N, B with op T) */
  int srows_x;      /* 1: shared rows are indexed by x (s[x * ls + k]); else by k */
  int bmn;          /* tile extent along m (A) or n (B) */
  int64_t ext;      /* problem extent along m (A) or n (B) */
  int64_t ld;       /* leading dimension of the stored tensor */
  int64_t stride;   /* batch stride */
  int ls;           /* shared row stride in floats: (srows_x ? bk : bmn) + pad */
  int tile_floats;  /* floats of one tile in shared memory (0 when view), rounded up to 4 */
  int stage_floats; /* floats of one stage: one tile, or big + small tiles (split=pack, tf32x3) */
  int tail;         /* 1 when ext % bmn != 0 (0 when packed: padded to tiles) */
  int tk;           /* 1 when the loads need K guards (K tail, not packed) */
  int vec;          /* global-load vector width of this operand */
  int kl_step;      /* kloop >= 1, staged: rows between a thread's copy passes (NT / copies per row) */
  int kl_passes;    /* ... and the passes of one K block's copy */
  /* pack prologue: the operand is read from W + poff as a zero-padded
   * prows x ld tensor per batch item (stride = prows * ld); src_kmajor and
   * src_ld/src_stride describe the user's tensor the prologue reads. */
  int packed, src_kmajor;
  int64_t src_ld, src_stride, prows, poff;
  /* split=pack with tf32x3: the small parts, same layout as the big ones
   * (poff), at W + poff_small; 0 otherwise */
  int64_t poff_small;
  uint64_t pre_blocks;
  int pre_q;        /* values of one packed row per prologue thread: 4, or 8 (wgmma planes, transposed) */
  int pre_tiled;    /* 1: the transposing prologue of 32x32 tiles through shared memory */
  /* tf32x3 fragment loads (docs/emit.md "Fragment loads"):
   *  ldsm: 1 = ldmatrix .b16 x4/x2 on 8x4-float blocks of an [x][k] layout;
   *  fv:   [k][x] layouts: width (4, 2, 1) of the LDS that fetches one
   *        thread's fragments of fv consecutive MMA tiles at once (the warp
   *        tile's rows/columns are permuted so those sit side by side);
   *  swz:  XOR swizzle of 16-byte chunks instead of padding (pad == 0):
   *        [x][k]: chunk ^ ((row >> swz_sh) & (swz_z - 1));
   *        [k][x]: chunk ^ ((k & 3) << 1). */
  int ldsm, fv, swz, swz_z, swz_sh;
} tsr__emit_operand;

/* split=producer-tma, split=tma: the rows of an operand's tensor map (the
 * outer extent): [k][x] rows (k, or the packed copy's rows), or, kept as
 * [x][k] rows (kfrag, k-contiguous), its m (n) extent or packed rows */
static inline int64_t tsr__tma_rows(const tsr__emit_operand *o, const tsr_problem *p) {
  return o->packed ? o->prows : o->kmajor ? o->ext : p->k;
}

typedef struct {
  tsr_plan plan; /* walk normalized for the grid */
  int tf32;      /* an mma.sync tensor-core family (mma=tf32x3 or tf32): shared layouts, fragments */
  int wg;        /* a wgmma family (mma=wgmma-tf32x3 or wgmma-tf32; tf32 is 0 then) */
  int x3;        /* mma=tf32x3 or wgmma-tf32x3: big/small split, three MMAs */
  int chain;     /* acc=chain: MMAs accumulate in the tensor-core accumulator */
  int presplit;  /* split=pack: the prologue stores TF32 parts, the loop loads them */
  tsr_precision precision; /* the mode the plan runs */
  int nthreads, warps_m, warps_n;
  /* ffma lane layout: lanes form an lr x lc grid (lane = lr_i * lc + lc_i);
   * a thread owns tm rows as tm/fm fragments of fm consecutive rows spaced
   * lr*fm apart (likewise columns with fn, lc). */
  int lr, lc, fm, fn;
  /* tf32x3: warp tile = mi x ni MMA tiles of 16 x 8. */
  int mi, ni;
  /* wgmma: wgs warpgroups of 128 threads, each owning wm rows (mw slices of
   * 64) x bn columns (nc chunks of wn, one wgmma m64n<wn>k8 each) */
  int wgs, mw, nc;
  int producer;       /* split=producer: wgs consumer warpgroups + one producer warpgroup */
  int preg;           /* split=producer-reg: the producer loads each K block into registers */
  int ppack;          /* split=producer-pack: the producer copies the prologue's TF32 planes */
  int pbulk;          /* split=producer-bulk: ... tiled planes, by bulk copies (implies ppack) */
  int raw;            /* split=producer: raw (unsplit) K-block buffers of the producer's copies */
  int parts;          /* wgmma acc=step: partial-sum buffers (2: the next step runs while one is promoted) */
  int maxnreg;        /* producer with 2 consumers: setmaxnreg moves registers to the consumers */
  int ffprod;         /* mma=ffma, split=producer(-tma)/tma: NT threads multiply from a ring of full mbarriers */
  int fftma;          /* ... split=producer-tma: one producer warp, TMA tensor copies */
  int ffself;         /* ... split=tma: TMA copies, no producer (the consumer warps take turns issuing them) */
  int ff_pthreads;    /* ... the producer's threads at its barriers: 128, or 32 with fftma, 0 with ffself */
  int ff_plaunch;     /* ... the producer's threads launched: ff_pthreads, or 128 with fftma at 4
                       * blocks (a warpgroup, for setmaxnreg; three of its warps leave at once) */
  int ff_setmax;      /* ... setmaxnreg moves the producer warpgroup's registers to the consumers */
  int ff_blocks;      /* ... blocks per SM (minblocks, default 2) */
  int ff_regs, ff_preg, ff_creg; /* ... registers compiled for, producer's and consumers' after setmaxnreg */
  uint32_t h, w;      /* tile grid */
  int64_t nkb;        /* K blocks */
  int tail_m, tail_n, tail_k;
  /* tailk: programs < tail_d own whole tiles; the last tail_r tiles run in
   * tailk K slices (programs tail_d + j, unit j = slice x tail_r + tile) */
  uint64_t tail_d, tail_r;
  int idx64;          /* 64-bit offsets needed */
  uint64_t smem_bytes;
  uint64_t workspace_bytes;
  /* lazy=P (docs/emit.md "Lazy pack"): A's claim flags, one uint32 per
   * piece (P K blocks of a tile row) and batch item, at float offset
   * lazy_off of W; lazy_np pieces a tile row, lazy_n flags in all */
  uint64_t lazy_off, lazy_n;
  int64_t lazy_np;
  uint64_t reduce_blocks;
  int reg_estimate;
  /* mma=gemv (docs/emit.md "GEMV"): the big operand (B when M <= N, else
   * A) streams once; every CTA covers the short side (S <= 16) whole and
   * bx outputs along the big axis. */
  int gemv;
  int gv_bigb; /* 1: B is big (outputs along n); 0: A is big (along m) */
  int gv_kc;   /* 1: the big operand is contiguous along k: warps along k, shuffle reduction */
  int gv_s;    /* the short extent (M when B is big, else N) */
  int gv_bx;   /* outputs per CTA along the big axis */
  int gv_r;    /* k-contiguous: outputs per warp */
  int gv_kg;   /* x-contiguous: thread groups splitting the CTA's K range (vec outputs a thread) */
  int gv_svec; /* k-contiguous: the short operand's loads along k are vec wide */
  int gv_lr;   /* lane per row (plan lanerows): big-operand rows per thread; 0: lanes along k */
  int gv_sp;   /* lane per row: S padded to a multiple of 4 (the staged [k][SP] rows) */
  /* mma=wgmma-s8 (docs/emit.md "Ozaki"): nmod moduli; A's rows and B's
   * columns scaled to integers of at most bits_a / bits_b bits (sign
   * included); planes of kp int8 residues per packed row (prows = the
   * operand's rows padded to its tile); workspace byte offsets of the
   * planes (modulus-major, then batch item), the per-row / per-column
   * scale exponents (int32, batch-major) and the product residues (uint8,
   * batch x modulus x M x N). */
  int s8, nmod, bits_a, bits_b;
  int gstride; /* the guard's magnitude GEMM sums K blocks 0, gstride, ... (>= 1) */
  int rvec;    /* outputs per reconstruction thread: 1, or 4 of one row */
  int64_t kp;
  uint64_t wb_pa, wb_pb, wb_sa, wb_sb, wb_r;
  /* ... the rows' / columns' 1-norms (FP64) and the magnitude product's
   * int32 sums (the guard's lower bound of |A||B|, grid row nmod) */
  uint64_t wb_na, wb_nb, wb_l;
  tsr__emit_operand a, b;
} tsr__emit_geo;

/* mma=wgmma-s8: the moduli, pairwise coprime, at most 256 so that every
 * residue fits int8 in its balanced range; a plan uses the first nmod. */
extern const int tsr__ozaki_moduli[TSR__OZAKI_MAX_MODULI];

/* Fills g; TSR_OK or a rejection with one line in msg. */
tsr_status tsr__emit_geometry(const tsr_problem *p, const tsr_plan *plan,
                              const tsr__gpu_target *t, tsr__emit_geo *g, char *msg, size_t cap);

/* The generated source under construction: appended to with printf formats;
 * a failed allocation sets oom and makes every later append a no-op (the
 * caller reports it once). */
typedef struct {
  char *p;
  size_t len, cap;
  int oom;
} tsr__sb;
void tsr__sb_vput(tsr__sb *s, const char *fmt, va_list ap);

/* Pieces of emit.c that the Ozaki generator (ozaki.c) prints too: the index
 * type of the problem's extents, the walk (linear ordinal -> tile), the strict
 * k-ascending fix-up tsr_fix; and that generator itself (mma=wgmma-s8). */
const char *tsr__emit_idx_t(const tsr__emit_geo *g);
void tsr__emit_walk(tsr__sb *s, const tsr__emit_geo *g);
void tsr__emit_fix(tsr__sb *s, const tsr__emit_geo *g);
void tsr__emit_ozaki(tsr__sb *s, const tsr_problem *p, const tsr__emit_geo *g);

#endif
