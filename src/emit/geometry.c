/* Legality and geometry of a (problem, plan) pair on the GPU target: every
 * rejection is one line naming the field, its value and the limit. Runs
 * before any allocation or compilation. Every hardware limit comes from the
 * target (emit/target.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/context.h"
#include "emit/emit_internal.h"

/* int32 row/column/k coordinates in device code (the generated code's
 * limit, not the target's: the target's limits are all in tsr__gpu_target) */
#define MAX_COORD 2147483647ll

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static tsr_status reject(char *msg, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static tsr_status reject(char *msg, size_t cap, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  return tsr__failbuf(msg, cap, TSR_ERR_REJECTED, "%s", line);
}

/* Vector width vs the operand's layout: the vector runs along the contiguous
 * axis of the stored tensor, so the tile extent on that axis, the leading
 * dimension and the batch stride must all be multiples of vec (base pointers
 * are assumed 16-byte aligned, as cudaMalloc gives). */
static tsr_status check_vec(const tsr_problem *p, const tsr_plan *pl, const tsr__emit_operand *o,
                            char *msg, size_t cap) {
  int v = o->vec;
  if (v == 1 || o->packed) return TSR_OK; /* a packed operand picks its own vec */
  if (o->kmajor && pl->bk % v)
    return reject(msg, cap, "plan: vec=%d needs bk=%d to be a multiple of %d (%c is contiguous along k)",
                  v, pl->bk, v, o->name - 32);
  if (!o->kmajor && o->bmn % v)
    return reject(msg, cap, "plan: vec=%d needs %s=%d to be a multiple of %d", v,
                  o->name == 'a' ? "bm" : "bn", o->bmn, v);
  if (o->ld % v)
    return reject(msg, cap, "plan: vec=%d needs ld%c=%lld to be a multiple of %d", v, o->name,
                  (long long)o->ld, v);
  if (p->batch > 1 && o->stride % v)
    return reject(msg, cap, "plan: vec=%d needs stride_%c=%lld to be a multiple of %d", v,
                  o->name, (long long)o->stride, v);
  if (o->staged && o->srows_x == o->kmajor && o->ls % v) /* direct copy: vector stores */
    return reject(msg, cap,
                  "plan: pad=%d makes the shared %c row %d floats, not a multiple of vec=%d",
                  pl->pad, o->name - 32, o->ls, v);
  return TSR_OK;
}

static void init_operand(tsr__emit_operand *o, char name, const tsr_problem *p,
                         const tsr_plan *pl, const tsr__emit_geo *g) {
  int tf32 = g->tf32;
  memset(o, 0, sizeof *o);
  o->name = name;
  if (name == 'a') {
    o->staged = pl->a == TSR_IN_STAGED;
    o->kmajor = p->op_a == TSR_OP_N;
    o->bmn = pl->bm;
    o->ext = p->m;
    o->ld = p->lda;
    o->stride = p->stride_a;
  } else {
    o->staged = pl->b == TSR_IN_STAGED;
    o->kmajor = p->op_b == TSR_OP_T;
    o->bmn = pl->bn;
    o->ext = p->n;
    o->ld = p->ldb;
    o->stride = p->stride_b;
  }
  o->vec = pl->vec;
  if (g->wg) {
    /* wgmma: both operands k-major in shared memory (the tf32 wgmma has no
     * transpose), as 8-row x 16-byte core matrices (docs/emit.md "wgmma");
     * a stage holds the big parts' tile (the copy lands there and the split
     * rounds it in place), then for wgmma-tf32x3 the small parts' tile */
    o->srows_x = 1;
    o->ls = pl->bk;
    o->tail = o->ext % o->bmn != 0;
    o->tile_floats = o->bmn * pl->bk;
    o->stage_floats = o->tile_floats * (g->x3 ? 2 : 1);
    o->fv = 1;
    return;
  }
  /* split=pack stores both operands k-contiguous ([x][k] shared rows, the
   * prologue transposing where needed): ldmatrix then delivers the stored
   * TF32 parts straight into the MMA's register pairs/quads, while a V-wide
   * LDS of a [k][x] tile needs a register move per element to pair k rows
   * t and t+4 (the inline split wrote them in place for free) */
  /* FFMA kfrag: [x][k] rows, read 4 K steps per LDS.128 (docs/emit.md) */
  o->srows_x = tf32 ? o->kmajor || g->presplit
                    : !g->wg && (pl->kfrag & (name == 'a' ? TSR_PACK_A : TSR_PACK_B)) != 0;
  o->ls = (o->srows_x ? pl->bk : o->bmn) + pl->pad;
  o->tail = o->ext % o->bmn != 0;
  if (o->staged) {
    o->tile_floats = (int)((((int64_t)(o->srows_x ? o->bmn : pl->bk) * o->ls) + 3) / 4 * 4);
    /* split=pack, tf32x3: the small parts' tile follows the big parts' */
    o->stage_floats = o->tile_floats * (g->presplit && g->x3 ? 2 : 1);
  }
  o->fv = 1;
  if (!tf32 || !o->staged) return;
  if (o->srows_x) {
    /* [x][k]: ldmatrix needs 16-byte row addresses (row stride % 4 == 0).
     * Swizzle when unpadded and a row is 2, 4 or a multiple of 8 chunks:
     * 8 consecutive rows then hit 8 distinct 16-byte bank groups. */
    o->ldsm = o->ls % 4 == 0;
    if (o->ldsm && pl->pad == 0 && (pl->bk == 8 || pl->bk == 16 || pl->bk % 32 == 0)) {
      o->swz = 1;
      o->swz_z = pl->bk / 4 < 8 ? pl->bk / 4 : 8;
      o->swz_sh = o->swz_z == 8 ? 0 : o->swz_z == 4 ? 1 : 2;
    }
  } else {
    /* [k][x]: one LDS of fv floats fetches fv MMA tiles' fragments. */
    int tiles = name == 'a' ? g->mi : g->ni;
    /* A's fv is also its split group (GA): with acc=step on a 64x64 warp
     * tile, GA=4 (32 fragment registers) spills at 255; 2 fits */
    int vmax = name == 'a' && !g->chain && g->mi * g->ni >= 32 ? 2 : 4;
    for (int v = vmax; v > 1; v /= 2)
      if (tiles % v == 0 && o->ls % v == 0) {
        o->fv = v;
        break;
      }
    /* Swizzle when unpadded and a row is whole groups of 8 chunks. */
    if (pl->pad == 0 && o->bmn % 32 == 0) o->swz = 1;
  }
}

/* Pack prologue layout (docs/emit.md "Pack"): the operand as the main
 * kernel reads it from W. Its orientation is the shared tile's (tf32x3 keeps
 * the stored orientation; FFMA's [k][x] shared rows want x-contiguous, so a
 * k-contiguous operand is transposed), so every tile copy is direct. Extents
 * are padded with zeros to whole tiles (x to bmn, k to bk) and rows to a
 * multiple of 4 floats: no guards and 16-byte copies in the main kernel. */
static void apply_pack(tsr__emit_operand *o, const tsr_problem *p, const tsr_plan *pl) {
  o->src_kmajor = o->kmajor;
  o->src_ld = o->ld;
  o->src_stride = o->stride;
  int bit = o->name == 'a' ? TSR_PACK_A : TSR_PACK_B;
  if (!((int)pl->pack & bit)) return;
  o->packed = 1;
  int64_t kp = ceil_div(p->k, pl->bk) * pl->bk;
  int64_t xp = ceil_div(o->ext, o->bmn) * o->bmn;
  o->kmajor = o->srows_x;
  o->prows = o->kmajor ? xp : kp;
  o->ld = ((o->kmajor ? kp : xp) + 3) / 4 * 4;
  o->stride = o->prows * o->ld; /* bounded by the int32 coordinate checks */
  o->tail = 0;
  int ext = o->kmajor ? pl->bk : o->bmn; /* tile extent along the contiguous axis */
  for (int v = 4; v >= 1; v /= 2)
    if (ext % v == 0 && (!o->staged || o->ls % v == 0)) {
      o->vec = v;
      break;
    }
}

tsr_precision tsr__emit_plan_precision(const tsr_plan *pl) {
  return pl->mma == TSR_MMA_TF32X3 || pl->mma == TSR_MMA_WGMMA_TF32X3 ? TSR_PREC_FP32X3
         : pl->mma == TSR_MMA_TF32 || pl->mma == TSR_MMA_WGMMA_TF32   ? TSR_PREC_TF32
         : pl->mma == TSR_MMA_WGMMA_S8                                ? TSR_PREC_OZAKI
                                                                      : TSR_PREC_STRICT;
}

static const char *split_name(const tsr__emit_geo *g) {
  return g->preg ? "producer-reg" : g->pbulk ? "producer-bulk" : g->ppack ? "producer-pack" : "producer";
}

/* the FFMA producer's split name, for messages */
static const char *ff_split_name(const tsr__emit_geo *g) {
  return g->ffself ? "tma" : g->fftma ? "producer-tma" : "producer";
}

static const char *mma_name(tsr_mma m) {
  static const char *const names[] = {"ffma", "tf32x3", "tf32", "wgmma-tf32x3", "wgmma-tf32",
                                      "gemv", "wgmma-s8"};
  return (unsigned)m < sizeof names / sizeof *names ? names[m] : "?";
}

/* Fields by kind, the precision mode, and the fields every GPU plan needs. */
static tsr_status check_fields(const tsr_problem *p, const tsr_plan *pl, tsr__emit_geo *g,
                               char *msg, size_t cap) {
  if ((unsigned)pl->mma > TSR_MMA_WGMMA_S8)
    return reject(msg, cap,
                  "plan: mma=%d is not ffma, tf32x3, tf32, wgmma-tf32x3, wgmma-tf32, gemv or "
                  "wgmma-s8",
                  (int)pl->mma);
  if (pl->acc != TSR_ACC_STEP && pl->acc != TSR_ACC_CHAIN)
    return reject(msg, cap, "plan: acc=%d is not step or chain", (int)pl->acc);
  g->wg = pl->mma == TSR_MMA_WGMMA_TF32X3 || pl->mma == TSR_MMA_WGMMA_TF32;
  g->tf32 = pl->mma == TSR_MMA_TF32X3 || pl->mma == TSR_MMA_TF32; /* mma.sync families */
  g->x3 = pl->mma == TSR_MMA_TF32X3 || pl->mma == TSR_MMA_WGMMA_TF32X3;
  g->chain = pl->acc == TSR_ACC_CHAIN;
  if (pl->mma == TSR_MMA_FFMA && g->chain)
    return reject(msg, cap, "plan: acc=chain is unused by mma=ffma and must be step");
  if ((unsigned)pl->split > TSR_SPLIT_TMA)
    return reject(msg, cap,
                  "plan: split=%d is not inline, pack, producer, producer-reg, producer-pack, "
                  "producer-bulk, producer-tma or tma",
                  (int)pl->split);
  if (pl->split == TSR_SPLIT_PRODUCER_TMA && pl->mma != TSR_MMA_FFMA)
    return reject(msg, cap,
                  "plan: split=producer-tma is the FFMA producer's (mma=ffma), not mma=%s's",
                  mma_name(pl->mma));
  if (pl->split == TSR_SPLIT_TMA && pl->mma != TSR_MMA_FFMA)
    return reject(msg, cap,
                  "plan: split=tma is the FFMA kernel's TMA ring (mma=ffma), not mma=%s's",
                  mma_name(pl->mma));
  g->producer = pl->split == TSR_SPLIT_PRODUCER || pl->split == TSR_SPLIT_PRODUCER_REG ||
                pl->split == TSR_SPLIT_PRODUCER_PACK || pl->split == TSR_SPLIT_PRODUCER_BULK;
  g->preg = pl->split == TSR_SPLIT_PRODUCER_REG;
  /* producer-bulk is producer-pack with tiled planes and bulk copies */
  g->pbulk = pl->split == TSR_SPLIT_PRODUCER_BULK;
  g->ppack = pl->split == TSR_SPLIT_PRODUCER_PACK || g->pbulk;
  /* mma=ffma, split=producer: a copying warpgroup beside the multiplying
   * threads (docs/emit.md "FFMA producer"); none of the wgmma producer's
   * fields apply. split=producer-tma (mma=ffma only): the same consumers,
   * the producer one warp, one of whose threads copies each operand's K
   * block with one TMA tensor copy. split=tma: the same ring and boxes
   * without a producer, the four consumer warps taking turns refilling the
   * slot the others left a block before (NT threads: 4 blocks an SM fit) */
  g->ffself = pl->split == TSR_SPLIT_TMA;
  g->fftma = pl->split == TSR_SPLIT_PRODUCER_TMA || g->ffself;
  g->ffprod = pl->mma == TSR_MMA_FFMA && (pl->split == TSR_SPLIT_PRODUCER || g->fftma);
  g->ff_pthreads = g->ffself ? 0 : g->fftma ? 32 : 128;
  /* setmaxnreg moves a producer warpgroup's registers to the consumers:
   * split=producer's, and producer-tma's at 4 blocks (docs/emit.md "Four
   * blocks an SM"), where the copying warp's three siblings are launched
   * for it and leave at once */
  g->ff_setmax = g->ffprod && (!g->fftma || (!g->ffself && pl->minblocks == 4));
  g->ff_plaunch = g->ff_setmax ? 128 : g->ff_pthreads;
  if (g->ffprod) g->producer = 0;
  const char *ffs = ff_split_name(g);
  if (g->ffprod && (pl->kloop < 1 || pl->kloop > 3))
    return reject(msg, cap,
                  "plan: split=%s with mma=ffma needs kloop=1, 2 or 3 (the producer's "
                  "copies from running pointers; 3: two fragment sets in the consumers), not "
                  "kloop=%d",
                  ffs, pl->kloop);
  if (pl->kwait != 0 && pl->kwait != 1)
    return reject(msg, cap, "plan: kwait=%d is not 0 or 1", pl->kwait);
  if (pl->kwait && !(g->ffprod && pl->kloop < 3))
    return reject(msg, cap,
                  "plan: kwait=1 tests the full barriers of an FFMA producer ring "
                  "(mma=ffma, split=producer, producer-tma or tma) with kloop=1 or 2");
  if (pl->pelect != 0 && pl->pelect != 1)
    return reject(msg, cap, "plan: pelect=%d is not 0 or 1", pl->pelect);
  if (pl->pelect && !(g->ffprod && g->fftma && !g->ffself))
    return reject(msg, cap,
                  "plan: pelect=1 elects the copying lane of the TMA producer warp "
                  "(mma=ffma, split=producer-tma)");
  if (pl->krel < 0 || pl->krel > 2)
    return reject(msg, cap, "plan: krel=%d is not 0, 1 or 2", pl->krel);
  if (pl->krel && !(g->ffprod && g->fftma && !g->ffself && pl->kloop <= 2 && !pl->kunroll &&
                    !pl->kwait))
    return reject(msg, cap,
                  "plan: krel=%d frees the TMA producer ring's slots %s (mma=ffma, "
                  "split=producer-tma, kloop 1 or 2, kunroll=0, kwait=0); krel=0 frees each "
                  "after its block (the strict default's krel=1 needs krel=0 beside kloop=3, "
                  "kunroll=1 or kwait=1)",
                  pl->krel, pl->krel == 1 ? "after the block's last shared loads" : "in pairs");
  if (pl->kunroll && g->ffprod && (g->ffself || pl->kwait))
    return reject(msg, cap,
                  "plan: kunroll=1 with mma=ffma unrolls the consumers' loop of split=producer "
                  "or producer-tma with kwait=0, not split=%s with kwait=%d",
                  ffs, pl->kwait);
  if (g->ffself && pl->minblocks != 0 && (pl->minblocks < 2 || pl->minblocks > 4))
    return reject(msg, cap,
                  "plan: split=tma with mma=ffma runs 2 (minblocks=0 or 2), 3 or 4 blocks per "
                  "SM (its registers are compiled for that count), not minblocks=%d",
                  pl->minblocks);
  if (g->fftma && !g->ffself && pl->minblocks != 0 && (pl->minblocks < 2 || pl->minblocks > 4))
    return reject(msg, cap,
                  "plan: split=producer-tma with mma=ffma runs 2 (minblocks=0 or 2), 3 or 4 "
                  "blocks per SM (its registers are compiled for that count; at 4 a producer "
                  "warpgroup gives its surplus to the consumers), not minblocks=%d",
                  pl->minblocks);
  if (g->ffprod && !g->fftma && pl->minblocks != 0 && pl->minblocks != 2 && pl->minblocks != 3)
    return reject(msg, cap,
                  "plan: split=%s with mma=ffma runs 2 (minblocks=0 or 2) or 3 blocks per "
                  "SM (setmaxnreg splits the registers of that count), not minblocks=%d",
                  ffs, pl->minblocks);
  if (g->ffprod && pl->stages > 15)
    return reject(msg, cap,
                  "plan: split=%s with mma=ffma frees each of its stages through a "
                  "named barrier (1..15): stages=%d is more than 15",
                  ffs, pl->stages);
  if (g->ffprod && (pl->a != TSR_IN_STAGED || pl->b != TSR_IN_STAGED))
    return reject(msg, cap, "plan: split=%s with mma=ffma needs a=staged and b=staged", ffs);
  if (g->producer && !g->wg)
    return reject(msg, cap,
                  "plan: split=%s is only supported by the wgmma families; mma=%s splits "
                  "inline or in the pack prologue",
                  split_name(g), mma_name(pl->mma));
  /* split=producer-pack: the pack prologue stores the TF32 planes (as
   * split=pack does for mma.sync) and the producer only copies them */
  g->presplit = pl->split == TSR_SPLIT_PACK || g->ppack;
  if (pl->mma == TSR_MMA_FFMA && g->presplit)
    return reject(msg, cap, "plan: split=pack is unused by mma=ffma and must be inline");
  if (g->wg && pl->split == TSR_SPLIT_PACK)
    return reject(msg, cap,
                  "plan: split=pack is not supported by mma=%s (it splits in shared memory); use "
                  "split=inline, or split=producer-pack for the prologue's planes",
                  mma_name(pl->mma));
  /* The precision mode is part of the problem (docs/accuracy.md): a plan
   * runs exactly one mode, and auto admits only modes meeting the FP32
   * contract. */
  g->precision = tsr__emit_plan_precision(pl);
  if (p->precision != TSR_PREC_AUTO && p->precision != g->precision)
    return reject(msg, cap, "plan: mma=%s runs precision %s, but the problem asks for %s",
                  mma_name(pl->mma), tsr_precision_name(g->precision),
                  tsr_precision_name(p->precision));
  if (p->precision == TSR_PREC_AUTO && g->precision == TSR_PREC_TF32)
    return reject(msg, cap,
                  "plan: mma=%s is below the FP32 contract; it runs only with precision tf32",
                  mma_name(pl->mma));
  if (pl->threads != 0)
    return reject(msg, cap, "plan: threads=%d is a CPU field; GPU plans need threads=0",
                  pl->threads);
  if (pl->isa != TSR_ISA_AUTO)
    return reject(msg, cap, "plan: isa is a CPU field; GPU plans need isa=auto");
  const struct { const char *name; int v, min; } pos[] = {
      {"bm", pl->bm, 1}, {"bn", pl->bn, 1}, {"bk", pl->bk, 1}, {"wm", pl->wm, 1},
      {"wn", pl->wn, 1}, {"tm", pl->tm, 1}, {"tn", pl->tn, 1}, {"stages", pl->stages, 1},
      {"splitk", pl->splitk, 1}, {"pad", pl->pad, 0}};
  for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
    if (pos[i].v < pos[i].min)
      return reject(msg, cap, "plan: %s=%d must be at least %d", pos[i].name, pos[i].v,
                    pos[i].min);
  if (pl->vec != 1 && pl->vec != 2 && pl->vec != 4)
    return reject(msg, cap, "plan: vec=%d is not 1, 2 or 4", pl->vec);
  if (pl->a != TSR_IN_STAGED && pl->a != TSR_IN_VIEW)
    return reject(msg, cap, "plan: a=%d is not staged or view", (int)pl->a);
  if (pl->b != TSR_IN_STAGED && pl->b != TSR_IN_VIEW)
    return reject(msg, cap, "plan: b=%d is not staged or view", (int)pl->b);
  if ((unsigned)pl->kfrag > TSR_PACK_AB)
    return reject(msg, cap, "plan: kfrag=%d is not none, a, b or ab", (int)pl->kfrag);
  if (pl->kfrag != TSR_PACK_NONE && pl->mma != TSR_MMA_FFMA)
    return reject(msg, cap, "plan: kfrag is unused by mma=%s and must be none", mma_name(pl->mma));
  if (pl->kloop < 0 || pl->kloop > 4)
    return reject(msg, cap, "plan: kloop=%d is not 0, 1, 2, 3 or 4", pl->kloop);
  if (pl->kloop >= 3 && (pl->a != TSR_IN_STAGED || pl->b != TSR_IN_STAGED || pl->kfrag != TSR_PACK_NONE))
    return reject(msg, cap, "plan: kloop=%d needs both operands staged as [k][x] rows (a=staged, "
                  "b=staged, kfrag=none)", pl->kloop);
  if (pl->kloop >= 3 && pl->bk % 2)
    return reject(msg, cap, "plan: kloop=%d needs an even bk (two fragment sets), not bk=%d",
                  pl->kloop, pl->bk);
  if (pl->kloop && pl->mma != TSR_MMA_FFMA)
    return reject(msg, cap, "plan: kloop=%d is unused by mma=%s and must be 0", pl->kloop,
                  mma_name(pl->mma));
  if (pl->kinner < 0)
    return reject(msg, cap,
                  "plan: kinner=%d is not 0 (the K block's steps written out) or a divisor of "
                  "bk below it",
                  pl->kinner);
  if (pl->kinner && pl->mma != TSR_MMA_FFMA)
    return reject(msg, cap, "plan: kinner=%d is unused by mma=%s and must be 0 (FFMA only)",
                  pl->kinner, mma_name(pl->mma));
  if (pl->kinner && (pl->kinner >= pl->bk || pl->bk % pl->kinner))
    return reject(msg, cap,
                  "plan: kinner=%d does not divide bk=%d into two or more trips of the K "
                  "block's inner loop (0 writes the block out)",
                  pl->kinner, pl->bk);
  if (pl->kinner && (pl->kloop >= 3 || pl->kfrag != TSR_PACK_NONE))
    return reject(msg, cap,
                  "plan: kinner=%d splits the K block of the FFMA block function (kfrag=none, "
                  "kloop 0-2); kloop=3-4's fragment ring and kfrag's groups of 4 steps write "
                  "the block out (kinner=0)",
                  pl->kinner);
  if (pl->kunroll < 0 || pl->kunroll > 1)
    return reject(msg, cap, "plan: kunroll=%d is not 0 or 1", pl->kunroll);
  if (pl->kunroll && pl->kloop != 1 && pl->kloop != 2)
    return reject(msg, cap, "plan: kunroll=1 unrolls the kloop=1 or kloop=2 loop, not kloop=%d",
                  pl->kloop);
  if (pl->kloop && pl->stages < 2)
    return reject(msg, cap, "plan: kloop=%d needs a cp.async ring (stages >= 2), not stages=%d",
                  pl->kloop, pl->stages);
  if (pl->moduli != 0)
    return reject(msg, cap, "plan: moduli=%d is unused by mma=%s and must be 0", pl->moduli,
                  mma_name(pl->mma));
  if (pl->gstride != 0)
    return reject(msg, cap, "plan: gstride=%d is unused by mma=%s and must be 0", pl->gstride,
                  mma_name(pl->mma));
  if (pl->rvec != 0)
    return reject(msg, cap, "plan: rvec=%d is unused by mma=%s and must be 0", pl->rvec,
                  mma_name(pl->mma));
  if (pl->lanerows != 0)
    return reject(msg, cap, "plan: lanerows=%d is unused by mma=%s and must be 0", pl->lanerows,
                  mma_name(pl->mma));
  if (pl->forder < 0 || pl->forder > TSR__FORDER_MAX)
    return reject(msg, cap, "plan: forder=%d is not 0..%d", pl->forder, TSR__FORDER_MAX);
  if (pl->forder && pl->mma != TSR_MMA_FFMA)
    return reject(msg, cap, "plan: forder=%d is unused by mma=%s and must be 0 (FFMA only)",
                  pl->forder, mma_name(pl->mma));
  /* tail slices (docs/emit.md "Tail slices"): the FFMA epilogue only */
  if (pl->tailk < 0 || pl->tailk == 1 || pl->tailk > TSR__TAILK_MAX)
    return reject(msg, cap, "plan: tailk=%d is not 0 (off) or 2..%d slices", pl->tailk,
                  TSR__TAILK_MAX);
  if (pl->tailk && pl->mma != TSR_MMA_FFMA)
    return reject(msg, cap, "plan: tailk=%d is unused by mma=%s and must be 0 (FFMA tiles only)",
                  pl->tailk, mma_name(pl->mma));
  if (pl->tailk && pl->wave < 1)
    return reject(msg, cap,
                  "plan: tailk=%d needs wave (the CTAs resident at once: SMs x blocks per SM), "
                  "not wave=%d",
                  pl->tailk, pl->wave);
  if (!pl->tailk && pl->wave != 0)
    return reject(msg, cap, "plan: wave=%d is used only with tailk and must be 0 without it",
                  pl->wave);
  if (pl->tailk && pl->splitk != 1)
    return reject(msg, cap, "plan: tailk=%d slices the last wave's tiles; it needs splitk=1, not "
                  "splitk=%d", pl->tailk, pl->splitk);
  if (pl->tailk && p->batch != 1)
    return reject(msg, cap, "plan: tailk=%d needs one problem (batch 1), not batch=%lld", pl->tailk,
                  (long long)p->batch);
  return TSR_OK;
}

/* The grid's walk (normalized: one row or column is linear), the K blocks
 * and the split-K and batch limits of the grid's y and z axes (g->h, g->w
 * set). */
static tsr_status check_walk_k_batch(const tsr_problem *p, const tsr__gpu_target *t,
                                     tsr__emit_geo *g, char *msg, size_t cap) {
  const tsr_plan *pl = &g->plan;
  char wm[256];
  if (tsr_walk_check(&pl->walk, g->h, g->w, wm, sizeof wm) != TSR_OK)
    return tsr__failbuf(msg, cap, TSR_ERR_REJECTED, "plan: %s", wm);
  tsr_walk_normalize(&g->plan.walk, g->h, g->w);
  g->nkb = ceil_div(p->k, pl->bk);
  if ((int64_t)pl->splitk > (int64_t)t->grid[1])
    return reject(msg, cap, "plan: splitk=%d exceeds the gridDim.y limit %u", pl->splitk,
                  t->grid[1]);
  if (pl->splitk > g->nkb)
    return reject(msg, cap, "plan: splitk=%d exceeds the %lld K blocks (k=%lld, bk=%d)",
                  pl->splitk, (long long)g->nkb, (long long)p->k, pl->bk);
  if (p->batch > (int64_t)t->grid[2])
    return reject(msg, cap, "problem: batch=%lld exceeds the gridDim.z limit %u",
                  (long long)p->batch, t->grid[2]);
  return TSR_OK;
}

/* wgmma (docs/emit.md "wgmma"): bm/wm warpgroups (1 or 2) of 128 threads,
 * each owning wm rows (wm/64 slices of the m64 instruction) x bn columns in
 * bn/wn chunks of one m64n<wn>k8 instruction; sm_90a only. The register
 * estimate is the FP32 accumulators + one chunk's partial sum (acc=step)
 * + ~40 addresses and descriptors. */
static tsr_status check_block_wgmma(const tsr_plan *pl, const tsr__gpu_target *t,
                                    tsr__emit_geo *g, char *msg, size_t cap) {
  if (t->cc != 90)
    return reject(msg, cap,
                  "plan: mma=%s needs sm_90a (wgmma); the target is sm_%u%u", mma_name(pl->mma),
                  t->cc / 10, t->cc % 10);
  if (pl->tm != 1 || pl->tn != 1)
    return reject(msg, cap, "plan: %s=%d is unused by the tensor-core families and must be 1",
                  pl->tm != 1 ? "tm" : "tn", pl->tm != 1 ? pl->tm : pl->tn);
  if (pl->a == TSR_IN_VIEW || pl->b == TSR_IN_VIEW)
    return reject(msg, cap, "plan: %s=view is not supported by the tensor-core families (staged only)",
                  pl->a == TSR_IN_VIEW ? "a" : "b");
  if (pl->wm % 64)
    return reject(msg, cap,
                  "plan: wm=%d is not a multiple of 64 (a warpgroup's rows, in m64 wgmma slices)",
                  pl->wm);
  if (pl->bm % pl->wm)
    return reject(msg, cap, "plan: bm=%d is not a multiple of wm=%d", pl->bm, pl->wm);
  if (pl->bm / pl->wm > 2)
    return reject(msg, cap,
                  "plan: bm=%d over wm=%d gives %d warpgroups; mma=%s runs 1 or 2 (bm = wm or 2*wm)",
                  pl->bm, pl->wm, pl->bm / pl->wm, mma_name(pl->mma));
  if (pl->wn % 8 || pl->wn > 256)
    return reject(msg, cap,
                  "plan: wn=%d is not a multiple of 8 up to 256 (the wgmma instruction's N)",
                  pl->wn);
  if (pl->bn > 256)
    return reject(msg, cap, "plan: bn=%d exceeds 256 (one warpgroup owns all bn columns)", pl->bn);
  if (pl->bn % pl->wn)
    return reject(msg, cap, "plan: bn=%d is not a multiple of wn=%d (the wgmma N chunk)", pl->bn,
                  pl->wn);
  if (pl->bk % 8)
    return reject(msg, cap, "plan: bk=%d is not a multiple of 8 (the tensor-core MMA K step)",
                  pl->bk);
  if (pl->stages < 2)
    return reject(msg, cap,
                  "plan: stages=%d; mma=%s needs stages >= 2 (the next block is split while the "
                  "current one multiplies)",
                  pl->stages, mma_name(pl->mma));
  if (pl->pad != 0)
    return reject(msg, cap,
                  "plan: pad=%d; mma=%s uses the unpadded core-matrix layout and needs pad=0",
                  pl->pad, mma_name(pl->mma));
  g->wgs = pl->bm / pl->wm;
  g->mw = pl->wm / 64;
  g->nc = pl->bn / pl->wn;
  g->warps_m = g->wgs * 4;
  g->warps_n = 1;
  g->nthreads = 128 * (g->wgs + g->producer);
  if ((uint32_t)g->nthreads > t->threads_block)
    return reject(msg, cap, "plan: %d threads per block (%d warpgroups of 128) exceed the limit %u",
                  g->nthreads, g->wgs, t->threads_block);
  /* split=producer with two consumer warpgroups: 384 threads start at 168
   * registers, so setmaxnreg moves registers to the consumers (emit.h:
   * producer 88, consumers 208; ptxas spilled the producer's loops at 40 and
   * 64) */
  unsigned rcap = !g->producer || g->wgs != 2 ? t->regs_thread
                  : g->pbulk                  ? (unsigned)TSR__WG_BULK_CONSUMER_REGS
                                              : (unsigned)TSR__WG_CONSUMER_REGS;
  /* acc=step promotes every 8-deep K step (docs/accuracy.md "wgmma"): a
   * second partial-sum buffer lets the next step run during a promotion,
   * for wn <= 64 (32 registers) where the estimate stays within 232 (ptxas:
   * 128x128 wn=128 with two 64-register buffers spilled 32 bytes, TT vec=1);
   * beside a producer the bound is exclusive (ptxas spilled 480 bytes at
   * exactly 232: 256x128 wn=64 bk=16, split=producer-bulk) */
  int pcap = (rcap < 232u ? (int)rcap : 232) - (g->producer ? 1 : 0);
  g->parts = g->chain ? 0 : pl->wn <= 64 && g->mw * pl->bn / 2 + pl->wn + 40 <= pcap ? 2 : 1;
  /* producer-bulk's consumers copy nothing: with one m64 slice and one chunk
   * (wm=64, wn=bn) two full-width buffers fit their 232 registers (64 + 2 x
   * 64 + ~24 at bn=128), so the next step's wgmmas run during a promotion */
  if (g->pbulk && !g->chain && g->mw == 1 && g->nc == 1 && pl->bn + pl->bn / 2 + 24 <= (int)rcap)
    g->parts = 2;
  /* ~40 for addresses, descriptors and the copies; a consumer beside a
   * producer does no copies (measured: 256x128 wm=128 wn=128 compiles at
   * 208 without spills; two 32-register partial-sum buffers did spill at 216) */
  g->reg_estimate = g->mw * pl->bn / 2 + g->parts * pl->wn / 2 + (g->producer ? 16 : 40);
  if ((int64_t)g->reg_estimate > (int64_t)rcap)
    return reject(msg, cap,
                  "plan: estimated %d registers per thread (accumulators %d x %d / 2 + partial "
                  "sum %d / 2 + %d) exceed %u%s",
                  g->reg_estimate, g->mw, pl->bn, g->parts * pl->wn, g->producer ? 16 : 40, rcap,
                  rcap != t->regs_thread ? " (a consumer's share beside the producer warpgroup)" : "");
  /* setmaxnreg only where the consumers need more than the even share of
   * 168: it needs the kernel compiled at exactly 168 per thread, and ptxas
   * compiled small tiles (128x64 wn=64, bulk) at 125, which the runtime must
   * then refuse */
  g->maxnreg = g->producer && g->wgs == 2 && g->reg_estimate > 128;
  if (g->producer && pl->minblocks > 1)
    return reject(msg, cap, "plan: minblocks=%d; split=%s runs one block per SM (minblocks 0 or 1)",
                  pl->minblocks, split_name(g));
  /* split=producer: the producer's copies per stage, (bm + bn) x bk / vec
   * over its 128 threads, each with its own address. Beside two consumers it
   * has 88 registers: ptxas spilled 1608 bytes at 48 copies (256x128x16,
   * vec=1; the H200 run rejected it at 1240), 192 at 32, none at 12-24
   * (vec=4, or smaller tiles) */
  if (g->producer && !g->preg && !g->pbulk && g->wgs == 2) {
    /* producer-pack copies two planes (big, small) of each operand, and its
     * loop keeps more addresses live: ptxas spilled 220 bytes at 24 copies
     * (256x128 bk=16), none at 12 (bk=8); the H200 ran the spilling plan at
     * 1.07x cuBLAS's time against 0.82x without (session 5) */
    /* producer-pack's operands are packed: 16-byte copies whatever vec says */
    int v = g->ppack ? 4 : pl->vec > 0 ? pl->vec : 1;
    int copies = (g->ppack ? 2 : 1) * (pl->bm + pl->bn) * pl->bk / (128 * v);
    if (copies > (g->ppack ? 16 : 32))
      return reject(msg, cap,
                    "plan: split=%s copies %s(bm=%d + bn=%d) x bk=%d / vec=%d = %d values per "
                    "producer thread and stage, more than %d (its 88 registers spill): use vec=4 "
                    "(pack=ab where rows are unaligned) or a smaller bk",
                    g->ppack ? "producer-pack" : "producer", g->ppack ? "2 planes x " : "", pl->bm,
                    pl->bn, pl->bk, v, copies, g->ppack ? 16 : 32);
  }
  /* producer-reg: two K blocks' float4s of A and B in flight, 128 producer
   * threads; the producer has 88 registers beside two consumers (ptxas: 2 x
   * 24 floats compile without spills) */
  if (g->preg) {
    int per = ((pl->bm * pl->bk / 4 + 127) / 128 + (pl->bn * pl->bk / 4 + 127) / 128) * 4;
    int lim = g->wgs == 2 ? 24 : 96;
    if (per > lim)
      return reject(msg, cap,
                    "plan: split=producer-reg holds two K blocks in the producer's registers: "
                    "(bm=%d + bn=%d) x bk=%d is %d floats per producer thread and block, more "
                    "than %d",
                    pl->bm, pl->bn, pl->bk, per, lim);
  }
  return TSR_OK;
}

/* Block = warps_m x warps_n warps; the family's warp tile and register estimate. */
static tsr_status check_block(const tsr_problem *p, const tsr_plan *pl,
                              const tsr__gpu_target *t, tsr__emit_geo *g, char *msg, size_t cap) {
  (void)p;
  if (g->wg) return check_block_wgmma(pl, t, g, msg, cap);
  if (pl->bm % pl->wm)
    return reject(msg, cap, "plan: bm=%d is not a multiple of wm=%d", pl->bm, pl->wm);
  if (pl->bn % pl->wn)
    return reject(msg, cap, "plan: bn=%d is not a multiple of wn=%d", pl->bn, pl->wn);
  g->warps_m = pl->bm / pl->wm;
  g->warps_n = pl->bn / pl->wn;
  int64_t nthreads = (int64_t)g->warps_m * g->warps_n * 32;
  if (nthreads > (int64_t)t->threads_block)
    return reject(msg, cap,
                  "plan: %lld threads per block (%dx%d warps of 32, bm/wm x bn/wn) exceed the "
                  "limit %u",
                  (long long)nthreads, g->warps_m, g->warps_n, t->threads_block);
  g->nthreads = (int)nthreads;
  /* the FFMA producer's 128 copying threads run the consumers' copy code
   * (same thread count, same passes); setmaxnreg needs whole warpgroups */
  if (g->ffprod && g->nthreads != 128)
    return reject(msg, cap,
                  "plan: split=%s with mma=ffma needs 4 warps (bm/wm x bn/wn = 4); "
                  "this plan has %dx%d",
                  ff_split_name(g), g->warps_m, g->warps_n);

  if (g->tf32) {
    if (pl->tm != 1 || pl->tn != 1)
      return reject(msg, cap, "plan: %s=%d is unused by the tensor-core families and must be 1",
                    pl->tm != 1 ? "tm" : "tn", pl->tm != 1 ? pl->tm : pl->tn);
    if (pl->wm % 16)
      return reject(msg, cap, "plan: wm=%d is not a multiple of 16 (the tensor-core MMA M step)",
                    pl->wm);
    if (pl->wn % 8)
      return reject(msg, cap, "plan: wn=%d is not a multiple of 8 (the tensor-core MMA N step)",
                    pl->wn);
    if (pl->bk % 8)
      return reject(msg, cap, "plan: bk=%d is not a multiple of 8 (the tensor-core MMA K step)",
                    pl->bk);
    if (pl->a == TSR_IN_VIEW || pl->b == TSR_IN_VIEW)
      return reject(msg, cap, "plan: %s=view is not supported by the tensor-core families (staged only)",
                    pl->a == TSR_IN_VIEW ? "a" : "b");
    g->mi = pl->wm / 16;
    g->ni = pl->wn / 8;
    /* accumulators + big/small fragments of A (4 each) and B (2 each) + ~24
     * addresses (+4 for the step partial sum) */
    g->reg_estimate = pl->wm * pl->wn / 32 + 8 * g->mi + 4 * g->ni + 24 + (g->chain ? 0 : 4);
  } else {
    if (pl->wm % pl->tm)
      return reject(msg, cap, "plan: wm=%d is not a multiple of tm=%d", pl->wm, pl->tm);
    if (pl->wn % pl->tn)
      return reject(msg, cap, "plan: wn=%d is not a multiple of tn=%d", pl->wn, pl->tn);
    g->lr = pl->wm / pl->tm;
    g->lc = pl->wn / pl->tn;
    if (g->lr * g->lc != 32)
      return reject(msg, cap,
                    "plan: warp tile %dx%d over micro-tile %dx%d gives %dx%d = %d lanes, not 32 "
                    "(wm*wn must equal 32*tm*tn)",
                    pl->wm, pl->wn, pl->tm, pl->tn, g->lr, g->lc, g->lr * g->lc);
    if (pl->tm > 4 && pl->tm % 4)
      return reject(msg, cap, "plan: tm=%d must be 1..4 or a multiple of 4", pl->tm);
    if (pl->tn > 4 && pl->tn % 4)
      return reject(msg, cap, "plan: tn=%d must be 1..4 or a multiple of 4", pl->tn);
    /* kfrag: a thread's rows (columns) are one per lane row (column), so
     * its k-fragment LDS.128s of a warp phase hit distinct rows */
    g->fm = pl->kfrag & TSR_PACK_A ? 1 : pl->tm < 4 ? pl->tm : 4;
    g->fn = pl->kfrag & TSR_PACK_B ? 1 : pl->tn < 4 ? pl->tn : 4;
    /* accumulators + one A and one B fragment set (double-buffered by the
     * scheduler) + ~16 addresses */
    g->reg_estimate = pl->tm * pl->tn + 2 * (pl->tm + pl->tn) + 16;
    if (g->ffprod) {
      /* 256 threads x ff_blocks per SM: the kernel is compiled for 65536 /
       * (256 x blocks) registers (8-granular: 128 at 2 blocks, 80 at 3) and
       * setmaxnreg gives the producer's surplus to the consumers */
      g->ff_blocks = pl->minblocks ? pl->minblocks : 2;
      g->ff_regs = 65536 / (256 * g->ff_blocks) / 8 * 8;
      g->ff_preg = g->ff_blocks == 2 && pl->kloop < 3 ? TSR__FF_PRODUCER_REGS
                                                      : TSR__FF_PRODUCER_REGS_TIGHT;
      g->ff_creg = 2 * g->ff_regs - g->ff_preg; /* 216, 224 or 128: below 255 */
      if (g->fftma && g->ff_setmax) {
        /* producer-tma at 4 blocks: NT + 32 threads would be compiled for
         * 96, which spills the 8x8 tile (session 31); the warpgroup split
         * above instead, with the TMA producer's 24: 64 -> 24 / 104 */
        g->ff_preg = TSR__FF_TMA_PRODUCER_REGS;
        g->ff_creg = 2 * g->ff_regs - g->ff_preg;
      } else if (g->fftma) {
        /* NT + 32 threads: compiled for 65536 / (160 x blocks), 8-granular
         * (200 at 2 blocks, 136 at 3), every thread alike: no setmaxnreg
         * (it moves registers between whole warpgroups, and the producer
         * warp needs few); split=tma: NT threads, 128 at 4 blocks */
        g->ff_regs = 65536 / ((g->nthreads + g->ff_pthreads) * g->ff_blocks) / 8 * 8;
        g->ff_preg = g->ff_creg = g->ff_regs;
      }
      /* TMA copies (split=tma, producer-tma): no consumer holds copy state,
       * and under a tight cap ptxas keeps one fragment set: accumulators +
       * one set + ~8 (local builds, no spills: 12x8 at 128 registers, 16x8
       * and 8x16 at 168; 8x8 at 128 used 110-123) */
      if (g->fftma) g->reg_estimate = pl->tm * pl->tn + pl->tm + pl->tn + 8;
      if (g->reg_estimate > g->ff_creg)
        return reject(msg, cap,
                      "plan: estimated %d registers per consumer thread exceed the %d that "
                      "split=%s leaves them at %d blocks per SM",
                      g->reg_estimate, g->ff_creg, ff_split_name(g),
                      g->ff_blocks);
    }
  }
  if ((int64_t)g->reg_estimate > (int64_t)t->regs_thread)
    return reject(msg, cap,
                  "plan: estimated %d registers per thread (accumulators + fragments) exceed %u",
                  g->reg_estimate, t->regs_thread);
  return TSR_OK;
}

/* Operands (staging, packing), vector width and shared memory. */
static tsr_status check_operands(const tsr_problem *p, const tsr_plan *pl,
                                 const tsr__gpu_target *t, tsr__emit_geo *g, char *msg,
                                 size_t cap) {
  init_operand(&g->a, 'a', p, pl, g);
  init_operand(&g->b, 'b', p, pl, g);
  if ((unsigned)pl->pack > TSR_PACK_AB)
    return reject(msg, cap, "plan: pack=%d is not none, a, b or ab", (int)pl->pack);
  /* split=pack: the prologue splits both operands, so both are packed
   * (normalized like the walk: the source shows pack=ab) */
  if (g->presplit) g->plan.pack = TSR_PACK_AB;
  /* wgmma reads both operands k-major: an x-contiguous one (A with op T, B
   * with op N) is transposed by the pack prologue (normalized likewise: the
   * source shows the pack that runs) */
  if (g->wg) {
    if (!g->a.kmajor) g->plan.pack = (tsr_pack)(g->plan.pack | TSR_PACK_A);
    if (!g->b.kmajor) g->plan.pack = (tsr_pack)(g->plan.pack | TSR_PACK_B);
  }
  apply_pack(&g->a, p, &g->plan);
  apply_pack(&g->b, p, &g->plan);
  for (int i = 0; i < 2; i++) {
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    if (g->tf32 || g->wg || !o->srows_x) continue;
    char U = (char)(o->name - 32);
    const char *kf = pl->kfrag == TSR_PACK_AB ? "ab" : i ? "b" : "a";
    if (!o->staged)
      return reject(msg, cap, "plan: kfrag=%s reads %c from shared memory; %c=view has none", kf,
                    U, o->name);
    if (!o->kmajor)
      return reject(msg, cap,
                    "plan: kfrag=%s needs %c contiguous along k (op %s) or packed (pack=%c)", kf,
                    U, i ? "T" : "N", o->name);
    if (pl->bk % 4 || o->ls % 4)
      return reject(msg, cap,
                    "plan: kfrag=%s needs bk=%d and the shared %c row bk+pad=%d floats to be "
                    "multiples of 4 (one LDS.128 reads 4 K steps)",
                    kf, pl->bk, U, o->ls);
  }
  if (!g->a.staged && !g->b.staged && pl->stages != 1)
    return reject(msg, cap, "plan: stages=%d needs a staged operand (a=view,b=view); use stages=1",
                  pl->stages);
  tsr_status s;
  if ((s = check_vec(p, pl, &g->a, msg, cap)) != TSR_OK) return s;
  if ((s = check_vec(p, pl, &g->b, msg, cap)) != TSR_OK) return s;
  for (int i = 0; i < 2 && pl->kloop && !g->fftma; i++) { /* after check_vec: vec divides the rows */
    /* kloop=1: every pass of a thread's copy moves its row by NT / per, so
     * the passes sit at constant offsets from one pointer */
    tsr__emit_operand *o = i ? &g->b : &g->a;
    if (!o->staged) continue;
    int direct = o->srows_x == o->kmajor;
    int rows = direct ? (o->srows_x ? o->bmn : pl->bk) : o->bmn;
    int per = direct ? (o->srows_x ? pl->bk : o->bmn) / o->vec : pl->bk;
    o->kl_step = g->nthreads / per;
    o->kl_passes = rows * per / g->nthreads;
    if (g->nthreads % per || (rows * per) % g->nthreads)
      return reject(msg, cap,
                    "plan: kloop=%d needs the %d threads to copy %c in whole passes of rows (%d "
                    "rows of %d copies)",
                    pl->kloop, g->nthreads, o->name - 32, rows, per);
  }
  for (int i = 0; i < 2 && g->fftma; i++) {
    /* a TMA box of the stored (or packed) operand landing dense (pad=0) at a
     * 128-byte aligned stage: bk rows x bm (bn) floats of [k][x] rows, or,
     * with kfrag (a k-contiguous operand kept as [x][k] shared rows), bm (bn)
     * rows x bk floats; the tensor map's strides are 16-byte multiples */
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    char U = (char)(o->name - 32);
    /* kfrag already demands srows_x => kmajor (check above) */
    if (o->kmajor && !o->srows_x)
      return reject(msg, cap,
                    "plan: split=%s copies [k][x] rows, but %c is contiguous along k: "
                    "use pack=%c (the prologue's [k][x] copy) or kfrag=%c (boxes of [x][k] rows)",
                    ff_split_name(g), U, o->name, o->name);
    if (pl->pad != 0)
      return reject(msg, cap,
                    "plan: split=%s lands dense boxes (shared rows of %s floats): "
                    "pad=%d must be 0",
                    ff_split_name(g), o->srows_x ? "bk" : "bm, bn", pl->pad);
    int inner = o->srows_x ? pl->bk : o->bmn;
    if (o->ld % 4 || inner % 4)
      return reject(msg, cap,
                    "plan: split=%s needs 16-byte rows: ld%c=%lld and %s=%d must be "
                    "multiples of 4",
                    ff_split_name(g), o->name, (long long)o->ld,
                    o->srows_x ? "bk" : i ? "bn" : "bm", inner);
    int64_t rows = tsr__tma_rows(o, p);
    if (p->batch > 1 && (o->stride % 4 || o->stride < rows * o->ld))
      return reject(msg, cap,
                    "plan: split=%s needs whole batch items 16-byte apart: stride_%c=%lld "
                    "must be a multiple of 4 and at least %lld (%s x ld%c)",
                    ff_split_name(g), o->name, (long long)o->stride, (long long)(rows * o->ld),
                    o->kmajor ? (i ? "n" : "m") : "k", o->name);
    if ((o->stage_floats * 4) % 128)
      return reject(msg, cap,
                    "plan: split=%s needs 128-byte aligned stages: %c's stage of %d "
                    "floats (bk=%d x %d) is not a multiple of 32 floats",
                    ff_split_name(g), U, o->stage_floats, pl->bk, o->bmn);
  }
  g->smem_bytes = (uint64_t)pl->stages * (uint64_t)(g->a.stage_floats + g->b.stage_floats) * 4;
  if (g->ffprod) {
    g->smem_bytes += 8u * (uint64_t)pl->stages; /* a full mbarrier per stage */
  } else if (g->preg || g->ppack) {
    g->smem_bytes += 16u * (uint64_t)pl->stages; /* full and empty mbarriers per stage */
  } else if (g->producer) {
    /* the producer's raw copies (3 K blocks in flight where they fit sm_90's
     * shared memory, else 2: the source must not depend on the target), then
     * a full and an empty mbarrier per stage */
    uint64_t raw1 = (uint64_t)(g->a.tile_floats + g->b.tile_floats) * 4;
    g->raw = g->smem_bytes + 3 * raw1 + 16u * (uint64_t)pl->stages <=
                     tsr__target_sm90.smem_block_optin
                 ? 3
                 : 2;
    g->smem_bytes += (uint64_t)g->raw * raw1 + 16u * (uint64_t)pl->stages;
  }
  if (g->smem_bytes > t->smem_block_optin)
    return reject(msg, cap,
                  "plan: shared memory %.1f KiB (%llu bytes) exceeds the %.1f KiB limit "
                  "(bm=%d,bn=%d,bk=%d,stages=%d,pad=%d%s)",
                  g->smem_bytes / 1024.0, (unsigned long long)g->smem_bytes,
                  t->smem_block_optin / 1024.0, pl->bm, pl->bn, pl->bk, pl->stages, pl->pad,
                  g->pbulk            ? ",split=producer-bulk: TF32 planes per stage"
                  : g->ppack          ? ",split=producer-pack: TF32 planes per stage"
                  : g->presplit && g->x3 ? ",split=pack: big and small tiles per stage"
                  : g->preg           ? ",split=producer-reg: TF32 planes per stage"
                  : g->producer       ? ",split=producer: TF32 planes per stage + raw blocks"
                                      : "");
  return TSR_OK;
}

/* Occupancy hint: minblocks blocks must fit one SM's shared memory (part
 * of it reserved per block), threads and registers. */
static tsr_status check_occupancy(const tsr_problem *p, const tsr_plan *pl,
                                  const tsr__gpu_target *t, tsr__emit_geo *g, char *msg,
                                  size_t cap) {
  (void)p;
  if (pl->minblocks < 0)
    return reject(msg, cap, "plan: minblocks=%d must be at least 0", pl->minblocks);
  /* the FFMA producer: two blocks an SM unless minblocks says 3 (its own
   * register split, geometry of check_block) */
  if (g->ffprod) {
    int mb = g->ff_blocks;
    uint64_t need = (uint64_t)mb * (g->smem_bytes + t->smem_block_reserved);
    if (need > t->smem_sm || (int64_t)mb * (g->nthreads + g->ff_plaunch) > (int64_t)t->threads_sm)
      return reject(msg, cap,
                    "plan: split=%s with mma=ffma runs %d blocks per SM: %d x (%llu + %u) "
                    "bytes of shared memory or %d x %d threads exceed the SM's %u / %u",
                    ff_split_name(g), mb, mb,
                    (unsigned long long)g->smem_bytes, t->smem_block_reserved, mb,
                    g->nthreads + g->ff_plaunch, t->smem_sm, t->threads_sm);
    return TSR_OK;
  }
  if (pl->minblocks > 1) {
    int mb = pl->minblocks;
    uint64_t need = (uint64_t)mb * (g->smem_bytes + t->smem_block_reserved);
    if ((uint32_t)mb > t->blocks_sm)
      return reject(msg, cap, "plan: minblocks=%d exceeds the %u resident blocks of an SM", mb,
                    t->blocks_sm);
    if (need > t->smem_sm)
      return reject(msg, cap,
                    "plan: minblocks=%d needs %d x (%llu + %u) = %llu bytes of shared memory, "
                    "more than the SM's %u",
                    mb, mb, (unsigned long long)g->smem_bytes, t->smem_block_reserved,
                    (unsigned long long)need, t->smem_sm);
    if ((int64_t)mb * g->nthreads > (int64_t)t->threads_sm)
      return reject(msg, cap, "plan: minblocks=%d x %d threads exceed the SM's %u threads", mb,
                    g->nthreads, t->threads_sm);
    /* mb * nthreads <= threads_sm here, so it fits an int */
    int cap_regs = (int)(t->regs_sm / (uint32_t)(mb * g->nthreads)) / 8 * 8;
    if (cap_regs > (int)t->regs_thread) cap_regs = (int)t->regs_thread;
    /* floor: the accumulators plus ~24 for one fragment and addresses (the
     * compiler may still spill; the runtime's spill check rejects that) */
    int floor_regs = (g->wg ? g->mw * pl->bn / 2 : g->tf32 ? pl->wm * pl->wn / 32 : pl->tm * pl->tn) + 24;
    if (cap_regs < floor_regs)
      return reject(msg, cap,
                    "plan: minblocks=%d caps registers at %d per thread, below the %d the "
                    "accumulators and one fragment set need",
                    mb, cap_regs, floor_regs);
  }
  return TSR_OK;
}

/* Coordinates, the grid and its walk, K blocks, split-K, batch and tails. */
static tsr_status check_grid(const tsr_problem *p, const tsr_plan *pl,
                             const tsr__gpu_target *t, tsr__emit_geo *g, char *msg, size_t cap) {
  /* Coordinates are int32 in device code (offsets may be 64-bit). */
  const struct { const char *name; int64_t v; int t; } ext[] = {
      {"m", p->m, pl->bm}, {"n", p->n, pl->bn}, {"k", p->k, pl->bk}};
  for (int i = 0; i < 3; i++)
    if (ext[i].v > MAX_COORD - ext[i].t)
      return reject(msg, cap, "problem: %s=%lld exceeds the int32 coordinate range of the GPU kernels",
                    ext[i].name, (long long)ext[i].v);

  /* Grid. */
  int64_t h = ceil_div(p->m, pl->bm), w = ceil_div(p->n, pl->bn);
  if ((uint64_t)h * (uint64_t)w > t->grid[0])
    return reject(msg, cap, "plan: grid of %lldx%lld = %llu tiles exceeds the gridDim.x limit %llu",
                  (long long)h, (long long)w, (unsigned long long)(h * w),
                  (unsigned long long)t->grid[0]);
  g->h = (uint32_t)h;
  g->w = (uint32_t)w;
  {
    tsr_status gs = check_walk_k_batch(p, t, g, msg, cap);
    if (gs != TSR_OK) return gs;
  }
  g->tail_m = p->m % pl->bm != 0;
  g->tail_n = p->n % pl->bn != 0;
  g->tail_k = p->k % pl->bk != 0;
  if (pl->tailk) { /* the whole waves' tiles, then the rest in tailk slices each */
    uint64_t tiles = (uint64_t)g->h * g->w, wave = (uint64_t)pl->wave;
    g->tail_d = tiles / wave * wave;
    g->tail_r = tiles - g->tail_d;
    if (pl->tailk > g->nkb)
      return reject(msg, cap, "plan: tailk=%d exceeds the %lld K blocks (k=%lld, bk=%d)", pl->tailk,
                    (long long)g->nkb, (long long)p->k, pl->bk);
    if (g->tail_d + g->tail_r * (uint64_t)pl->tailk > t->grid[0])
      return reject(msg, cap, "plan: tailk=%d makes a grid of %llu CTAs, over the gridDim.x limit %u",
                    pl->tailk, (unsigned long long)(g->tail_d + g->tail_r * (uint64_t)pl->tailk),
                    t->grid[0]);
  }
  g->a.tk = g->tail_k && !g->a.packed;
  g->b.tk = g->tail_k && !g->b.packed;
  return TSR_OK;
}

/* The fields a family with its own geometry (mma=gemv, mma=wgmma-s8) fixes:
 * each of `fixed` at its value, both operands staged, acc=step, kfrag=none,
 * isa=auto. One line naming the first field that differs. */
typedef struct { const char *name; int v, want; } fixed_field;
static tsr_status check_fixed_fields(const tsr_plan *pl, const char *fam, const fixed_field *fixed,
                                     size_t n, char *msg, size_t cap) {
  for (size_t i = 0; i < n; i++)
    if (fixed[i].v != fixed[i].want)
      return reject(msg, cap, "plan: %s=%d is unused by mma=%s and must be %d", fixed[i].name,
                    fixed[i].v, fam, fixed[i].want);
  if (pl->a != TSR_IN_STAGED || pl->b != TSR_IN_STAGED)
    return reject(msg, cap, "plan: %c=view is unused by mma=%s and must be staged",
                  pl->a != TSR_IN_STAGED ? 'a' : 'b', fam);
  if (pl->acc != TSR_ACC_STEP) return reject(msg, cap, "plan: acc is unused by mma=%s and must be step", fam);
  if (pl->kfrag != TSR_PACK_NONE)
    return reject(msg, cap, "plan: kfrag is unused by mma=%s and must be none", fam);
  if (pl->isa != TSR_ISA_AUTO)
    return reject(msg, cap, "plan: isa is a CPU field; GPU plans need isa=auto");
  return TSR_OK;
}

/* mma=gemv (docs/emit.md "GEMV"): problems with M <= 16 or N <= 16. The
 * big operand is B when M <= N, else A; the plan's tile on the short side
 * (bm when B is big, bn when A is big) covers it whole (S <= 16 outputs per
 * big-axis position), the other (bx) is the CTA's outputs along the big
 * axis. threads is the CTA's thread count, vec the load width along the big
 * operand's contiguous axis, bk the K block that split-K slices are made
 * of. Fields the family does not use must hold their defaults. */
static tsr_status check_gemv(const tsr_problem *p, const tsr_plan *pl, const tsr__gpu_target *t,
                             tsr__emit_geo *g, char *msg, size_t cap) {
  g->gemv = 1;
  g->precision = TSR_PREC_STRICT;
  if (p->precision != TSR_PREC_AUTO && p->precision != TSR_PREC_STRICT)
    return reject(msg, cap, "plan: mma=gemv runs precision strict, but the problem asks for %s",
                  tsr_precision_name(p->precision));
  const fixed_field fixed[] = {
      {"wm", pl->wm, 1},       {"wn", pl->wn, 1},         {"tm", pl->tm, 1},
      {"tn", pl->tn, 1},       {"stages", pl->stages, 1}, {"pad", pl->pad, 0},
      {"kloop", pl->kloop, 0}, {"moduli", pl->moduli, 0}, {"gstride", pl->gstride, 0},
      {"rvec", pl->rvec, 0},   {"tailk", pl->tailk, 0}, {"wave", pl->wave, 0},
      {"forder", pl->forder, 0}, {"kwait", pl->kwait, 0}, {"pelect", pl->pelect, 0},
      {"krel", pl->krel, 0}, {"kinner", pl->kinner, 0}, {"lazy", pl->lazy, 0},
      {"lazyk", pl->lazyk, 0}};
  tsr_status fs = check_fixed_fields(pl, "gemv", fixed, sizeof fixed / sizeof fixed[0], msg, cap);
  if (fs != TSR_OK) return fs;
  if (pl->split != TSR_SPLIT_INLINE)
    return reject(msg, cap, "plan: split is unused by mma=gemv and must be inline");
  if (pl->pack != TSR_PACK_NONE)
    return reject(msg, cap, "plan: pack is not supported by mma=gemv and must be none");
  if (pl->vec != 1 && pl->vec != 2 && pl->vec != 4)
    return reject(msg, cap, "plan: vec=%d is not 1, 2 or 4", pl->vec);
  const struct { const char *name; int v, min; } pos[] = {
      {"bm", pl->bm, 1}, {"bn", pl->bn, 1}, {"bk", pl->bk, 1}, {"splitk", pl->splitk, 1},
      {"minblocks", pl->minblocks, 0}};
  for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
    if (pos[i].v < pos[i].min)
      return reject(msg, cap, "plan: %s=%d must be at least %d", pos[i].name, pos[i].v,
                    pos[i].min);
  if (pl->threads < 32 || pl->threads % 32 || (uint32_t)pl->threads > t->threads_block)
    return reject(msg, cap,
                  "plan: mma=gemv needs threads (the CTA's) to be a multiple of 32 from 32 to %u, "
                  "not %d",
                  t->threads_block, pl->threads);
  g->nthreads = pl->threads;
  g->gv_bigb = p->m <= p->n;
  int64_t small = g->gv_bigb ? p->m : p->n, big = g->gv_bigb ? p->n : p->m;
  if (small > 16)
    return reject(msg, cap, "plan: mma=gemv needs M <= 16 or N <= 16, not m=%lld n=%lld",
                  (long long)p->m, (long long)p->n);
  g->gv_s = (int)small;
  int st = g->gv_bigb ? pl->bm : pl->bn; /* the short side's tile */
  if (st < small || st > 16)
    return reject(msg, cap,
                  "plan: mma=gemv covers the short side whole: %s=%d must be from %s=%lld to 16",
                  g->gv_bigb ? "bm" : "bn", st, g->gv_bigb ? "m" : "n", (long long)small);
  g->gv_bx = g->gv_bigb ? pl->bn : pl->bm;
  const char *bxn = g->gv_bigb ? "bn" : "bm";
  /* the operands as emit_fix and the reduction read them */
  g->a = (tsr__emit_operand){.name = 'a', .kmajor = p->op_a == TSR_OP_N, .ext = p->m,
                             .ld = p->lda, .stride = p->stride_a, .vec = 1};
  g->b = (tsr__emit_operand){.name = 'b', .kmajor = p->op_b == TSR_OP_T, .ext = p->n,
                             .ld = p->ldb, .stride = p->stride_b, .vec = 1};
  tsr__emit_operand *bo = g->gv_bigb ? &g->b : &g->a, *so = g->gv_bigb ? &g->a : &g->b;
  bo->vec = pl->vec;
  g->gv_kc = bo->kmajor;
  int v = pl->vec, warps = pl->threads / 32;
  char B = (char)(bo->name - 32);
  if (v > 1 && bo->ld % v)
    return reject(msg, cap, "plan: vec=%d needs ld%c=%lld to be a multiple of %d", v, bo->name,
                  (long long)bo->ld, v);
  if (v > 1 && p->batch > 1 && bo->stride % v)
    return reject(msg, cap, "plan: vec=%d needs stride_%c=%lld to be a multiple of %d", v,
                  bo->name, (long long)bo->stride, v);
  if (pl->lanerows != 0 && pl->lanerows != 1 && pl->lanerows != 2 && pl->lanerows != 4)
    return reject(msg, cap, "plan: lanerows=%d is not 0, 1, 2 or 4", pl->lanerows);
  if (pl->lanerows && !g->gv_kc)
    return reject(msg, cap,
                  "plan: lanerows=%d needs the big operand %c contiguous along k (op %s); it is "
                  "contiguous along %s",
                  pl->lanerows, B, bo->name == 'a' ? "N" : "T", g->gv_bigb ? "n" : "m");
  if (pl->lanerows) {
    /* lane per row: each thread owns lanerows rows of the big operand and
     * walks its K slice along them; the short operand's K block is staged
     * as [k][SP] (S padded to a multiple of 4) in two buffers */
    g->gv_lr = pl->lanerows;
    g->gv_sp = (g->gv_s + 3) / 4 * 4;
    if (g->gv_bx != pl->threads * pl->lanerows)
      return reject(msg, cap,
                    "plan: mma=gemv lanerows=%d gives each of the %d threads %d rows: %s=%d must "
                    "be threads x lanerows = %d",
                    pl->lanerows, pl->threads, pl->lanerows, bxn, g->gv_bx,
                    pl->threads * pl->lanerows);
    if (pl->bk % v)
      return reject(msg, cap,
                    "plan: vec=%d needs bk=%d to be a multiple of %d (%c is contiguous along k)", v,
                    pl->bk, v, B);
    g->smem_bytes = 2u * (uint64_t)pl->bk * (uint64_t)g->gv_sp * 4u;
    /* two register sets of the rows' K block (the next one loads while this
     * one is multiplied), the sums, addresses */
    int64_t regs = 2 * (int64_t)g->gv_lr * pl->bk + (int64_t)g->gv_lr * g->gv_s + 24;
    if (regs > (int64_t)t->regs_thread)
      return reject(msg, cap,
                    "plan: mma=gemv lanerows=%d with bk=%d holds 2 x %d row values and %d sums "
                    "per thread: an estimated %lld registers exceed %u",
                    pl->lanerows, pl->bk, g->gv_lr * pl->bk, g->gv_lr * g->gv_s, (long long)regs,
                    t->regs_thread);
    g->reg_estimate = (int)regs;
  } else if (g->gv_kc) {
    /* a warp per output (R outputs per warp at once), lanes along k */
    if (g->gv_bx % warps)
      return reject(msg, cap,
                    "plan: mma=gemv with %c contiguous along k gives each of the %d warps %s/%d "
                    "outputs: %s=%d is not a multiple of %d",
                    B, warps, bxn, warps, bxn, g->gv_bx, warps);
    g->gv_r = g->gv_bx / warps;
    if (g->gv_r > 8)
      return reject(msg, cap, "plan: %s=%d over %d warps gives %d outputs per warp, more than 8",
                    bxn, g->gv_bx, warps, g->gv_r);
    if (pl->bk % v)
      return reject(msg, cap,
                    "plan: vec=%d needs bk=%d to be a multiple of %d (%c is contiguous along k)", v,
                    pl->bk, v, B);
    /* the short operand: vector loads where it is contiguous along k too */
    int64_t ks = so->kmajor ? 1 : so->ld, ss = so->kmajor ? so->ld : 1;
    g->gv_svec = v > 1 && ks == 1 && (small == 1 || ss % v == 0) &&
                 (p->batch == 1 || so->stride % v == 0);
    g->reg_estimate = g->gv_r * g->gv_s + g->gv_r * v + v + 24;
  } else {
    /* vec consecutive outputs per thread, thread groups along k */
    if (g->gv_bx % v)
      return reject(msg, cap, "plan: vec=%d needs %s=%d to be a multiple of %d", v, bxn, g->gv_bx,
                    v);
    int per = g->gv_bx / v;
    if (per > pl->threads || pl->threads % per)
      return reject(msg, cap,
                    "plan: mma=gemv with %c contiguous along %s: %s/vec = %d threads per K row "
                    "must divide threads=%d",
                    B, g->gv_bigb ? "n" : "m", bxn, per, pl->threads);
    g->gv_kg = pl->threads / per;
    if (g->gv_kg > 1) g->smem_bytes = (uint64_t)g->gv_kg * (uint64_t)small * (uint64_t)g->gv_bx * 4;
    g->reg_estimate = g->gv_s * v + v + 24;
  }
  if (g->smem_bytes > t->smem_block_optin) {
    char what[96];
    if (g->gv_lr)
      snprintf(what, sizeof what, "2 buffers of bk=%d x %d short values", pl->bk, g->gv_sp);
    else
      snprintf(what, sizeof what, "%d thread groups x %d x %s=%d partial sums", g->gv_kg,
               g->gv_s, bxn, g->gv_bx);
    return reject(msg, cap, "plan: shared memory %.1f KiB (%llu bytes: %s) exceeds the %.1f KiB limit",
                  g->smem_bytes / 1024.0, (unsigned long long)g->smem_bytes, what,
                  t->smem_block_optin / 1024.0);
  }
  if ((int64_t)g->reg_estimate > (int64_t)t->regs_thread)
    return reject(msg, cap, "plan: estimated %d registers per thread (accumulators) exceed %u",
                  g->reg_estimate, t->regs_thread);
  if (pl->minblocks > 1 &&
      ((uint32_t)pl->minblocks > t->blocks_sm ||
       (int64_t)pl->minblocks * pl->threads > (int64_t)t->threads_sm ||
       (uint64_t)pl->minblocks * (g->smem_bytes + t->smem_block_reserved) > t->smem_sm))
    return reject(msg, cap,
                  "plan: minblocks=%d blocks of %d threads and %llu bytes do not fit one SM",
                  pl->minblocks, pl->threads, (unsigned long long)g->smem_bytes);
  /* the K loops step at most 32 * vec (lanes) or KG <= 1024 (groups) past k1 */
  const struct { const char *name; int64_t v; int t; } ext[] = {
      {"m", p->m, pl->bm}, {"n", p->n, pl->bn}, {"k", p->k, pl->bk > 1024 ? pl->bk : 1024}};
  for (int i = 0; i < 3; i++)
    if (ext[i].v > MAX_COORD - ext[i].t)
      return reject(msg, cap, "problem: %s=%lld exceeds the int32 coordinate range of the GPU kernels",
                    ext[i].name, (long long)ext[i].v);
  int64_t nx = ceil_div(big, g->gv_bx);
  if ((uint64_t)nx > t->grid[0])
    return reject(msg, cap, "plan: %lld CTAs along %s exceed the gridDim.x limit %llu",
                  (long long)nx, g->gv_bigb ? "n" : "m", (unsigned long long)t->grid[0]);
  g->h = g->gv_bigb ? 1u : (uint32_t)nx;
  g->w = g->gv_bigb ? (uint32_t)nx : 1u;
  {
    tsr_status gs = check_walk_k_batch(p, t, g, msg, cap);
    if (gs != TSR_OK) return gs;
  }
  g->tail_m = p->m % (g->gv_bigb ? st : g->gv_bx) != 0;
  g->tail_n = p->n % (g->gv_bigb ? g->gv_bx : st) != 0;
  g->tail_k = p->k % pl->bk != 0;
  return TSR_OK;
}

/* Workspace: split-K partials (batch x splitk compact m x n), then the
 * packed operands, 64-float (256-byte) aligned. */
static tsr_status layout_workspace(const tsr_problem *p, const tsr_plan *pl,
                                   const tsr__gpu_target *t, tsr__emit_geo *g, char *msg,
                                   size_t cap) {
  /* Split-K workspace: batch x splitk compact m x n partials. */
  if (pl->splitk > 1) {
    uint64_t mn = (uint64_t)p->m * (uint64_t)p->n;
    uint64_t bs = (uint64_t)p->batch * (uint64_t)pl->splitk;
    if (mn > INT64_MAX / bs / 4)
      return reject(msg, cap, "plan: splitk=%d workspace exceeds the int64 index space",
                    pl->splitk);
    uint64_t elems = mn * bs;
    g->workspace_bytes = elems * 4;
    uint64_t total = (uint64_t)p->batch * mn;
    g->reduce_blocks = (total + 255) / 256;
    if (g->reduce_blocks > t->grid[0])
      return reject(msg, cap, "plan: split-K reduction needs %llu blocks, more than %llu",
                    (unsigned long long)g->reduce_blocks, (unsigned long long)t->grid[0]);
  }

  /* Tail slices: tail_r x tailk compact bm x bn partials (unit j = slice x
   * tail_r + tile - tail_d), one reduction thread per tail tile element */
  if (pl->tailk && g->tail_r) {
    uint64_t units = g->tail_r * (uint64_t)pl->tailk, tile = (uint64_t)pl->bm * (uint64_t)pl->bn;
    g->workspace_bytes = units * tile * 4;
    g->reduce_blocks = (g->tail_r * tile + 255) / 256;
    if (g->reduce_blocks > t->grid[0])
      return reject(msg, cap, "plan: tailk=%d reduction needs %llu blocks, more than %llu",
                    pl->tailk, (unsigned long long)g->reduce_blocks,
                    (unsigned long long)t->grid[0]);
  }

  /* lazy=P: the producer warps pack A (transposed) piece by piece */
  if (pl->lazy < 0 || pl->lazy > 64)
    return reject(msg, cap, "plan: lazy=%d is not 0 (a prologue packs A) or 1..64 (K blocks a "
                  "claimed piece of A)", pl->lazy);
  if (pl->lazy && !(g->ffprod && g->fftma && !g->ffself && !pl->pelect))
    return reject(msg, cap,
                  "plan: lazy=%d packs A in the TMA producer warp (mma=ffma, split=producer-tma, "
                  "pelect=0)", pl->lazy);
  static const char *const packs[] = {"none", "a", "b", "ab"}; /* by the pack bits */
  if (pl->lazy && !(g->a.packed && g->a.kmajor != g->a.src_kmajor && g->a.bmn % 32 == 0))
    return reject(msg, cap,
                  "plan: lazy=%d packs A where the plan packs it transposed (pack=a or ab, "
                  "op(A)=N) with bm a multiple of 32; here pack=%s, op(A)=%s, bm=%d",
                  pl->lazy, packs[(unsigned)pl->pack & 3u], p->op_a == TSR_OP_N ? "N" : "T", pl->bm);
  /* lazyk=G: a pack kernel of G CTAs beside the main kernel packs the pieces */
  if (pl->lazyk < 0 || pl->lazyk > TSR__LAZYK_MAX)
    return reject(msg, cap, "plan: lazyk=%d is not 0 (the producer warps pack A's pieces) or 1..%d "
                  "(CTAs of a pack kernel beside the main kernel)", pl->lazyk, TSR__LAZYK_MAX);
  if (pl->lazyk && !pl->lazy)
    return reject(msg, cap, "plan: lazyk=%d packs lazy=P's pieces of A; here lazy=0", pl->lazyk);

  /* Packed operands follow the partials in W, 64-float (256-byte) aligned. */
  {
    uint64_t off = (g->workspace_bytes / 4 + 63) / 64 * 64;
    tsr__emit_operand *ops[2] = {&g->a, &g->b};
    for (int i = 0; i < 2; i++) {
      tsr__emit_operand *o = ops[i];
      if (!o->packed) continue;
      uint64_t per = (uint64_t)o->stride, items = (uint64_t)p->batch;
      uint64_t parts = g->presplit && g->x3 ? 2 : 1; /* split=pack, tf32x3: big, small */
      if (per > (uint64_t)INT64_MAX / 8 / items / parts ||
          off > (uint64_t)INT64_MAX / 8 - parts * (per * items + 63))
        return reject(msg, cap, "plan: pack=%s%s workspace for %c exceeds the int64 index space",
                      g->plan.pack == TSR_PACK_AB ? "ab" : i ? "b" : "a",
                      parts == 2 ? ",split=pack" : "", o->name - 32);
      o->poff = (int64_t)off;
      off += (per * items + 63) / 64 * 64;
      if (parts == 2) {
        o->poff_small = (int64_t)off;
        off += (per * items + 63) / 64 * 64;
      }
      /* one thread per 16-byte chunk; the wgmma planes' transposing pack
       * takes 32 bytes of a packed row per thread, so each store fills a
       * whole 32-byte sector (16-byte stores to 32 rows per warp half-filled
       * theirs: the 4096^3 prologue took ~0.37 ms, H200 run 17) */
      o->pre_q = g->wg && g->presplit && !g->pbulk && o->kmajor != o->src_kmajor && o->ld % 8 == 0
                     ? 8
                     : 4;
      /* other transposing packs go through shared memory in 32x32 tiles
       * (one CTA each): loads coalesced along the user's contiguous axis,
       * whole 128-byte rows stored (session 16: 2048x4096x4096 NT with
       * pack=b 1.166x cuBLAS's time with the column-walking prologue,
       * 1.095x with the tiles) */
      o->pre_tiled = o->pre_q == 4 && !g->presplit && !g->pbulk && o->kmajor != o->src_kmajor;
      o->pre_blocks = o->pre_tiled ? (uint64_t)ceil_div(o->prows, 32) * (uint64_t)ceil_div(o->ld, 32)
                                   : (per / (uint64_t)o->pre_q + 255) / 256;
      if (o->pre_blocks > t->grid[0])
        return reject(msg, cap, "plan: pack prologue for %c needs %llu blocks, more than %llu",
                      o->name - 32, (unsigned long long)o->pre_blocks,
                      (unsigned long long)t->grid[0]);
    }
    /* lazy=P: A's claim flags after the packed operands */
    if (pl->lazy) {
      g->lazy_np = ceil_div(g->nkb, pl->lazy);
      g->lazy_n = (uint64_t)p->batch * g->h * (uint64_t)g->lazy_np;
      g->lazy_off = off;
      off += (g->lazy_n + 63) / 64 * 64;
    }
    if (g->a.packed || g->b.packed) g->workspace_bytes = off * 4;
  }
  return TSR_OK;
}

/* 256 = 2^8, 255 = 3 5 17, 253 = 11 23, 247 = 13 19, 217 = 7 31, the rest
 * prime: pairwise coprime */
const int tsr__ozaki_moduli[TSR__OZAKI_MAX_MODULI] = {256, 255, 253, 251, 247, 241,
                                                      239, 233, 229, 227, 223, 217};

/* The guard's K stride (plan key gstride): past 64 the magnitude GEMM's
 * share is already below 1/(64 (moduli + 1)) of the main kernel. */
#define OZAKI_MAX_GSTRIDE 64

/* bits_a + bits_b for n moduli at depth k */
static int ozaki_total_bits(int n, int64_t k) {
  double lp = 0;
  for (int i = 0; i < n; i++) lp += log2((double)tsr__ozaki_moduli[i]);
  int lk = 0;
  while ((1ll << lk) < k) lk++;
  return (int)floor(lp) - lk + 1;
}

int tsr__ozaki_gstride_for(int64_t k, int bk) {
  int64_t nkb = (k + bk - 1) / bk, s = nkb / 32;
  return s < 2 ? 0 : s > OZAKI_MAX_GSTRIDE ? OZAKI_MAX_GSTRIDE : (int)s;
}

int tsr__ozaki_moduli_for(int64_t k, int bits) {
  for (int n = 3; n < TSR__OZAKI_MAX_MODULI; n++)
    if (ozaki_total_bits(n, k) / 2 >= bits) return n;
  return TSR__OZAKI_MAX_MODULI;
}

/* Largest K whose int32 sums of K products of two balanced int8 residues
 * (|r| <= 128) stay exact: K * 2^14 < 2^31. */
#define OZAKI_MAX_K 131071

/* mma=wgmma-s8 (docs/emit.md "Ozaki"): the warp-specialized wgmma kernel of
 * split=producer-bulk on INT8 planes, one modulus per grid row (y), the pack
 * prologue and the reconstruction. Fields the family does not use must hold
 * their defaults. */
static tsr_status check_ozaki(const tsr_problem *p, const tsr_plan *pl, const tsr__gpu_target *t,
                              tsr__emit_geo *g, char *msg, size_t cap) {
  g->s8 = 1;
  g->wg = 1;
  g->precision = TSR_PREC_OZAKI;
  if (p->precision != TSR_PREC_AUTO && p->precision != TSR_PREC_OZAKI)
    return reject(msg, cap, "plan: mma=wgmma-s8 runs precision ozaki, but the problem asks for %s",
                  tsr_precision_name(p->precision));
  if (t->cc != 90)
    return reject(msg, cap, "plan: mma=wgmma-s8 needs sm_90a (wgmma); the target is sm_%u%u",
                  t->cc / 10, t->cc % 10);
  const fixed_field fixed[] = {
      {"tm", pl->tm, 1},     {"tn", pl->tn, 1},         {"pad", pl->pad, 0},
      {"kloop", pl->kloop, 0}, {"threads", pl->threads, 0}, {"splitk", pl->splitk, 1},
      {"vec", pl->vec, 4},   {"lanerows", pl->lanerows, 0}, {"tailk", pl->tailk, 0},
      {"wave", pl->wave, 0}, {"forder", pl->forder, 0}, {"kwait", pl->kwait, 0},
      {"pelect", pl->pelect, 0}, {"krel", pl->krel, 0}, {"kinner", pl->kinner, 0}, {"lazy", pl->lazy, 0},
      {"lazyk", pl->lazyk, 0}};
  tsr_status fs = check_fixed_fields(pl, "wgmma-s8", fixed, sizeof fixed / sizeof fixed[0], msg, cap);
  if (fs != TSR_OK) return fs;
  if (pl->split != TSR_SPLIT_PRODUCER_BULK)
    return reject(msg, cap,
                  "plan: mma=wgmma-s8 runs split=producer-bulk (the prologue writes the residue "
                  "planes tile by tile)");
  if (pl->moduli < 3 || pl->moduli > TSR__OZAKI_MAX_MODULI)
    return reject(msg, cap, "plan: moduli=%d; mma=wgmma-s8 takes 3 to %d moduli", pl->moduli,
                  TSR__OZAKI_MAX_MODULI);
  if (pl->minblocks > 1)
    return reject(msg, cap, "plan: minblocks=%d; split=producer-bulk runs one block per SM "
                  "(minblocks 0 or 1)", pl->minblocks);
  if (pl->gstride < 0 || pl->gstride > OZAKI_MAX_GSTRIDE)
    return reject(msg, cap, "plan: gstride=%d; the guard's K stride is 0 to %d (0: every K block)",
                  pl->gstride, OZAKI_MAX_GSTRIDE);
  const struct { const char *name; int v; } pos[] = {
      {"bm", pl->bm}, {"bn", pl->bn}, {"bk", pl->bk}, {"wm", pl->wm}, {"wn", pl->wn},
      {"stages", pl->stages}};
  for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
    if (pos[i].v < 1)
      return reject(msg, cap, "plan: %s=%d must be at least 1", pos[i].name, pos[i].v);
  if (pl->wm % 64)
    return reject(msg, cap,
                  "plan: wm=%d is not a multiple of 64 (a warpgroup's rows, in m64 wgmma slices)",
                  pl->wm);
  if (pl->bm % pl->wm || pl->bm / pl->wm > 2)
    return reject(msg, cap, "plan: bm=%d must be wm=%d or 2*wm (1 or 2 consumer warpgroups)",
                  pl->bm, pl->wm);
  if (pl->wn % 16 || pl->wn > 256)
    return reject(msg, cap,
                  "plan: wn=%d is not a multiple of 16 up to 256 (the .s8 wgmma instruction's N)",
                  pl->wn);
  if (pl->bn > 256 || pl->bn % pl->wn)
    return reject(msg, cap, "plan: bn=%d must be a multiple of wn=%d up to 256", pl->bn, pl->wn);
  if (pl->bk % 32)
    return reject(msg, cap, "plan: bk=%d is not a multiple of 32 (the .s8 wgmma K step)", pl->bk);
  if (pl->stages < 2)
    return reject(msg, cap, "plan: stages=%d; mma=wgmma-s8 needs stages >= 2", pl->stages);
  if (p->k > OZAKI_MAX_K)
    return reject(msg, cap,
                  "problem: k=%lld exceeds %d, where the INT8 residues' int32 sums stay exact "
                  "(mma=wgmma-s8)",
                  (long long)p->k, OZAKI_MAX_K);
  g->nmod = pl->moduli;
  g->gstride = pl->gstride > 1 ? pl->gstride : 1;
  if (pl->rvec != 0 && pl->rvec != 1 && pl->rvec != 4)
    return reject(msg, cap, "plan: rvec=%d; the reconstruction takes 1 or 4 outputs per thread",
                  pl->rvec);
  g->rvec = pl->rvec == 4 ? 4 : 1;
  g->producer = 1;
  g->pbulk = 1;
  g->wgs = pl->bm / pl->wm;
  g->mw = pl->wm / 64;
  g->nc = pl->bn / pl->wn;
  g->warps_m = g->wgs * 4;
  g->warps_n = 1;
  g->nthreads = 128 * (g->wgs + 1);
  /* int32 accumulators + ~24 addresses and descriptors (no partial sums: the
   * integer sums need no promotion) */
  g->reg_estimate = g->mw * pl->bn / 2 + 24;
  unsigned rcap = g->wgs == 2 ? (unsigned)TSR__WG_BULK_CONSUMER_REGS : t->regs_thread;
  if ((int64_t)g->reg_estimate > (int64_t)rcap)
    return reject(msg, cap, "plan: estimated %d registers per thread (accumulators %d x %d / 2 + 24) exceed %u",
                  g->reg_estimate, g->mw, pl->bn, rcap);
  g->maxnreg = g->wgs == 2 && g->reg_estimate > 128;
  /* bits: |sum_k a'b'| <= K 2^(bits_a - 1) 2^(bits_b - 1) must stay below
   * half the moduli's product P, where the balanced residues represent
   * [-P/2, P/2) exactly: bits_a + bits_b = floor(log2 P) - ceil(log2 K) + 1 */
  int tb = ozaki_total_bits(g->nmod, p->k);
  g->bits_a = (tb + 1) / 2 < 31 ? (tb + 1) / 2 : 31;
  g->bits_b = tb / 2 < 31 ? tb / 2 : 31;
  if (g->bits_b < 8)
    return reject(msg, cap,
                  "plan: moduli=%d leaves %d bits per operand at k=%lld (at least 8); use more "
                  "moduli",
                  g->nmod, g->bits_b, (long long)p->k);
  /* operands as the fix-up and the pack prologue read them (the user's) */
  g->a = (tsr__emit_operand){.name = 'a', .kmajor = 1, .ext = p->m, .bmn = pl->bm, .vec = 4,
                             .packed = 1, .src_kmajor = p->op_a == TSR_OP_N, .src_ld = p->lda,
                             .src_stride = p->stride_a, .staged = 1};
  g->b = (tsr__emit_operand){.name = 'b', .kmajor = 1, .ext = p->n, .bmn = pl->bn, .vec = 4,
                             .packed = 1, .src_kmajor = p->op_b == TSR_OP_T, .src_ld = p->ldb,
                             .src_stride = p->stride_b, .staged = 1};
  g->plan.pack = TSR_PACK_AB; /* normalized: the source shows the pack that runs */
  /* the stages, the residues' staging tile (bm x (bn + 16) bytes), the mbarriers */
  g->smem_bytes = (uint64_t)pl->stages * ((uint64_t)pl->bm + (uint64_t)pl->bn) * (uint64_t)pl->bk +
                  (uint64_t)pl->bm * ((uint64_t)pl->bn + 16u) + 16u * (uint64_t)pl->stages;
  if (g->smem_bytes > t->smem_block_optin)
    return reject(msg, cap,
                  "plan: shared memory %.1f KiB (%llu bytes) exceeds the %.1f KiB limit "
                  "(bm=%d,bn=%d,bk=%d,stages=%d: INT8 planes per stage + a bm x (bn + 16) staging tile)",
                  g->smem_bytes / 1024.0, (unsigned long long)g->smem_bytes,
                  t->smem_block_optin / 1024.0, pl->bm, pl->bn, pl->bk, pl->stages);
  /* coordinates, the grid and its walk, K blocks, batch, tails (packed: no K guards) */
  tsr_status gs = check_grid(p, pl, t, g, msg, cap);
  if (gs != TSR_OK) return gs;
  const int64_t h = g->h, w = g->w;
  /* workspace (bytes, each part 256-byte aligned) */
  g->kp = g->nkb * pl->bk;
  g->a.prows = h * pl->bm;
  g->b.prows = w * pl->bn;
  g->a.ld = g->b.ld = g->kp;
  uint64_t bt = (uint64_t)p->batch, nm = (uint64_t)g->nmod;
  uint64_t pa = (uint64_t)g->a.prows * (uint64_t)g->kp, pb = (uint64_t)g->b.prows * (uint64_t)g->kp;
  uint64_t mn = (uint64_t)p->m * (uint64_t)p->n;
  /* the product residues' rows are N rounded up to 16 bytes (16-byte stores) */
  uint64_t mnp = (uint64_t)p->m * (((uint64_t)p->n + 15u) / 16u * 16u);
  /* planes: one per modulus and the magnitudes' (the guard's) */
  const double total = (double)(nm + 1) * (double)bt * ((double)pa + (double)pb) +
                       (double)bt * ((double)mn * 4.0 + (double)mnp * (double)nm) +
                       12.0 * (double)bt * (double)(g->a.prows + g->b.prows);
  if (total > 0x1p61)
    return reject(msg, cap, "plan: mma=wgmma-s8 workspace (%.3g bytes) exceeds the int64 index space",
                  total);
#define OZ_ALIGN(x) (((x) + 255u) / 256u * 256u)
  g->wb_pa = 0;
  g->wb_pb = OZ_ALIGN(g->wb_pa + (nm + 1) * bt * pa);
  g->wb_sa = OZ_ALIGN(g->wb_pb + (nm + 1) * bt * pb);
  g->wb_sb = OZ_ALIGN(g->wb_sa + 4u * bt * (uint64_t)g->a.prows);
  g->wb_na = OZ_ALIGN(g->wb_sb + 4u * bt * (uint64_t)g->b.prows);
  g->wb_nb = OZ_ALIGN(g->wb_na + 8u * bt * (uint64_t)g->a.prows);
  g->wb_l = OZ_ALIGN(g->wb_nb + 8u * bt * (uint64_t)g->b.prows);
  g->wb_r = OZ_ALIGN(g->wb_l + 4u * bt * mn);
  g->workspace_bytes = OZ_ALIGN(g->wb_r + bt * nm * mnp);
#undef OZ_ALIGN
  /* the pack prologue: one CTA per 8 rows (a core matrix's) per batch item */
  g->a.pre_blocks = (uint64_t)g->a.prows / 8;
  g->b.pre_blocks = (uint64_t)g->b.prows / 8;
  /* rvec=4: a thread per quad of the residue planes' NP-byte rows */
  g->reduce_blocks = g->rvec == 4 ? (bt * mnp / 4 + 255) / 256 : (bt * mn + 255) / 256;
  if (g->a.pre_blocks > t->grid[0] || g->b.pre_blocks > t->grid[0] || g->reduce_blocks > t->grid[0])
    return reject(msg, cap, "plan: the prologue or reconstruction grid exceeds the gridDim.x limit %llu",
                  (unsigned long long)t->grid[0]);
  if ((uint64_t)g->nmod + 1 > t->grid[1])
    return reject(msg, cap, "plan: moduli=%d exceeds the gridDim.y limit %u", g->nmod, t->grid[1]);
  return TSR_OK;
}

tsr_status tsr__emit_geometry(const tsr_problem *p, const tsr_plan *plan,
                              const tsr__gpu_target *t, tsr__emit_geo *g, char *msg, size_t cap) {
  memset(g, 0, sizeof *g);
  if (!p || !plan) return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "emit: NULL problem or plan");
  if (!t) return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "emit: NULL target");
  {
    tsr_problem q = *p;
    char pm[256];
    if (tsr_problem_check(&q, pm, sizeof pm) != TSR_OK)
      return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "%s", pm);
    if (memcmp(&q, p, sizeof q) != 0)
      return tsr__failbuf(msg, cap, TSR_ERR_INVALID,
                          "emit: problem has unfilled defaults (call tsr_problem_check first)");
  }
  g->plan = *plan;
  tsr_status s;
  if (plan->mma == TSR_MMA_GEMV) {
    if ((s = check_gemv(p, plan, t, g, msg, cap)) || (s = layout_workspace(p, plan, t, g, msg, cap)))
      return s;
  } else if (plan->mma == TSR_MMA_WGMMA_S8) {
    if ((s = check_ozaki(p, plan, t, g, msg, cap))) return s;
  } else if ((s = check_fields(p, plan, g, msg, cap)) || (s = check_block(p, plan, t, g, msg, cap)) ||
      (s = check_operands(p, plan, t, g, msg, cap)) ||
      (s = check_occupancy(p, plan, t, g, msg, cap)) || (s = check_grid(p, plan, t, g, msg, cap)) ||
      (s = layout_workspace(p, plan, t, g, msg, cap)))
    return s;
  /* 64-bit offsets when any tensor (or the workspace) spans 2^31 elements. */
  int64_t ea = tsr_problem_elems_a(p), eb = tsr_problem_elems_b(p), ec = tsr_problem_elems_c(p);
  if (ea <= 0 || eb <= 0 || ec <= 0)
    return reject(msg, cap, "problem: tensor extents exceed the int64 index space");
  g->idx64 = ea > MAX_COORD || eb > MAX_COORD || ec > MAX_COORD ||
             g->workspace_bytes / 4 > (uint64_t)MAX_COORD ||
             g->reduce_blocks * 256 > (uint64_t)MAX_COORD; /* reduction thread index */
  return TSR_OK;
}
