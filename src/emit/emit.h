/* The CUDA C emitter: plan + problem → kernel source. This module owns every
 * generated-code string. Same (problem, plan) → byte-identical source.
 *
 * Kernel ABI (every generated main kernel and the hand kernel):
 *   extern "C" __global__ void <main_name>(const float *A, const float *B,
 *                                          float *C, float *W,
 *                                          float alpha, float beta);
 * Extents, leading dimensions, batch strides, ops and beta == 0 are baked in
 * as compile-time constants (the source is specialized to the problem).
 * A, B, C are the stored tensors of all batch items. W is the split-K
 * workspace (NULL when workspace_bytes == 0). When splitk > 1 a second kernel
 *   extern "C" __global__ void <reduce_name>(const float *W, float *C,
 *                                            float alpha, float beta);
 * sums the partials in a fixed order (bit-identical run to run) and applies
 * alpha/beta. Launch: grid/block/smem_bytes as given here; the launcher
 * raises the dynamic shared-memory limit when smem_bytes > 48 KiB.
 *
 * Pack prologue (plan pack=a|b|ab, docs/emit.md "Pack"): npre kernels with
 * the main kernel's ABI, launched in order before it (no dynamic shared
 * memory), each copying one operand of every batch item into W, zero-padded
 * to whole tiles. Workspace layout (floats): split-K partials at 0
 * (batch x splitk x m x n), packed A at pack_off[0], packed B at pack_off[1]
 * (each 64-float aligned; 0 when not packed); workspace_bytes covers all.
 * With split=pack (tf32x3) each packed operand is its TF32 big parts at
 * pack_off[i], followed by its small parts (same layout, 64-float aligned). */
#ifndef TSR_EMIT_EMIT_H
#define TSR_EMIT_EMIT_H

#include "emit/target.h"
#include "tessera.h"

/* split=producer with two consumer warpgroups (384 threads): the kernel is
 * compiled for 168 registers per thread, 64512 per CTA, and setmaxnreg can
 * only redistribute those (an increase beyond what the producer released
 * blocks forever): 128 x producer + 256 x consumer <= 64512. ptxas compiles
 * the device script's producer plans without spills at 88 / 208. */
#define TSR__WG_PRODUCER_REGS 88
#define TSR__WG_CONSUMER_REGS 208
_Static_assert(128 * TSR__WG_PRODUCER_REGS + 256 * TSR__WG_CONSUMER_REGS <= 168 * 384,
               "setmaxnreg: the roles' registers exceed the CTA's allocation");
/* split=producer-bulk: one producer thread issues bulk copies, so the
 * producer warpgroup keeps 40 (setmaxnreg's floor is 24) and each consumer
 * thread gets 232 */
#define TSR__WG_BULK_PRODUCER_REGS 40
#define TSR__WG_BULK_CONSUMER_REGS 232
_Static_assert(128 * TSR__WG_BULK_PRODUCER_REGS + 256 * TSR__WG_BULK_CONSUMER_REGS <= 168 * 384,
               "setmaxnreg: the roles' registers exceed the CTA's allocation");

/* mma=ffma, split=producer: 128 consumer and 128 producer threads, B CTAs
 * an SM (2, or 3 with minblocks=3), so the kernel is compiled for 65536 /
 * (256 B) registers per thread rounded down to 8 (128, 80) and setmaxnreg
 * gives the consumers what the producer leaves: 2 x that - the producer's
 * (geometry.c). The producer (cp.async from running pointers) keeps 40 at two
 * blocks (216 a consumer), 32 beside kloop=3's fragment sets (224) and at
 * three blocks (128) */
#define TSR__FF_PRODUCER_REGS 40
#define TSR__FF_PRODUCER_REGS_TIGHT 32
/* split=producer-tma at 4 blocks: the producer warpgroup issues TMA boxes
 * from one lane, the least setmaxnreg allows */
#define TSR__FF_TMA_PRODUCER_REGS 24

/* plan key lazyk: at most this many CTAs in the pack kernel beside the GEMM */
#define TSR__LAZYK_MAX 1024
/* ... of this many warps each (at most 128 registers: one CTA fits beside
 * three of the strict default's, 3 x 160 threads x 112 registers) */
#define TSR__LAZYK_WARPS 2
/* plan key tailk: at most this many K slices of a tail tile */
#define TSR__TAILK_MAX 64
/* The default plans' tail slices (docs/emit.md "Tail slices"): on a
 * three-block FFMA producer plan of one problem with split-K 1, where two or
 * more whole waves of 3 x 132 CTAs leave a last wave of at most half a wave,
 * sets tailk (2..6) and wave; 1 when set, 0 when the rule does not apply. */
int tsr__emit_tail_slices(const tsr_problem *p, tsr_plan *pl);
/* plan key forder: the FFMA order's seeds 0..this; 1 = rows serpentine, the
 * three-block producer tile's default (session 22, s22-forder*.txt: 4096^3
 * 0.979 -> 0.962 of cuBLAS's time, 8192^3 0.953 -> 0.939, 14 of 15 shapes
 * faster) */
#define TSR__FORDER_MAX 4096
#define TSR__FORDER_SERPENTINE 1

/* mma=wgmma-s8 (the Ozaki family): at most this many moduli; the fewest
 * (3..12) that keep `bits` bits per operand at depth k (the default plans
 * and the tuner take 25: docs/accuracy.md "ozaki") */
#define TSR__OZAKI_MAX_MODULI 12
int tsr__ozaki_moduli_for(int64_t k, int bits);
/* The guard's K stride (plan key gstride) of the default plans and the
 * tuner at depth k in bk-deep blocks: the magnitudes' GEMM keeps at least 32
 * blocks (2048 k values at bk = 64), where a simulation of the guard
 * (scripts/ozaki-guard-sim, docs/accuracy.md "ozaki") recomputed no output
 * of the wide family at K = 2048..16384; 0 below 64 blocks (every block) */
int tsr__ozaki_gstride_for(int64_t k, int bk);
/* The Ozaki family's default plan for p (precision ozaki's, and auto's in
 * the large class): every field of *pl set */
void tsr__emit_ozaki_plan(const tsr_problem *p, tsr_plan *pl);

typedef struct {
  char *source;        /* NUL-terminated CUDA C, malloc'd */
  size_t len;
  char sha256[65];     /* hex SHA-256 of source */
  char main_name[64];
  char reduce_name[64]; /* "" when no reduction kernel */
  uint32_t grid[3], block[3];
  uint32_t reduce_grid[3], reduce_block[3];
  uint32_t smem_bytes;      /* dynamic shared memory of the main kernel */
  uint64_t workspace_bytes; /* split-K partials + packed operands */
  int npre;                 /* prologue kernels, launched before main in order */
  struct {
    char name[64];
    uint32_t grid[3], block[3];
  } pre[2];
  uint64_t pack_off[2];     /* float offsets of packed A, B (split=pack: big parts) in W (0 = not packed) */
  /* lazy=P (docs/emit.md "Lazy pack"): no prologue for A; the main kernel
   * takes one parameter more after the tensor maps, `unsigned epoch`, the
   * number of calls before this one since its lazy_n uint32 claim flags at
   * float offset lazy_off of W were zeroed (the runtime zeroes them once
   * per set of buffers and counts its launches; a call must not start
   * before the previous one ended: one stream). lazy_n = 0: none. */
  uint64_t lazy_off, lazy_n;
  /* lazyk=G (docs/emit.md "Pack kernel beside the GEMM"): 1 = the last
   * prologue kernel (tsr_gemm_pack_a, G CTAs, the main kernel's parameters
   * with the call count) lets the main kernel start at once: the main
   * kernel is launched with programmatic stream serialization and waits for
   * each piece's flag itself */
  int pdl;
  /* registers per thread the main kernel must be compiled with (0 = any):
   * setmaxnreg redistributes exactly those, and asks for more would block */
  int regs_exact;
  /* 1: the main kernel is persistent (it loops over grid[0] work items with
   * a stride of gridDim.x): the runtime may launch fewer CTAs, e.g. one per
   * SM; any grid of 1..grid[0] CTAs computes the same result */
  int persistent;
  /* split=producer-tma: the main kernel's two trailing parameters are TMA
   * tensor maps (CUtensorMap, 128 bytes each) of A and B, in that order, as
   * 3D tensors of 4-byte floats: dim[0] the contiguous x extent, dim[1] the
   * rows (k), dim[2] the batch; stride[] in floats between rows and between
   * batch items; box {box[0], box[1], 1}; zeros outside. The runtime encodes
   * them once per set of device buffers (cuTensorMapEncodeTiled), at W + off
   * floats when packed, else at the user's tensor. */
  int ntmap;
  struct {
    int packed;
    uint64_t off;
    uint64_t dim[3], stride[2];
    uint32_t box[2];
  } tmap[2];
} tsr__kernel_src;

/* Legality of the plan for the GPU target (no allocation, no compile):
 * threads per block, shared memory per block, the minblocks occupancy hint
 * against one SM's shared memory, threads and registers, the register
 * estimate, divisibility of tiles by warp and micro tiles, vector width vs
 * alignment, grid limits, all read from target (&tsr__target_sm90 without
 * a device). On rejection writes one line naming the first violated limit.
 * The target only decides acceptance: an accepted plan's source does not
 * depend on it. */
tsr_status tsr__emit_check(const tsr_problem *p, const tsr_plan *plan,
                           const tsr__gpu_target *target, char *msg, size_t cap);
/* Generate the source (calls tsr__emit_check first). plan is the realized
 * plan (walk already normalized for the grid). */
tsr_status tsr__emit_gemm(const tsr_problem *p, const tsr_plan *plan,
                          const tsr__gpu_target *target, tsr__kernel_src *out, char *msg,
                          size_t cap);
/* tsr__emit_gemm without the source: every launch field of *out, source
 * NULL and sha256 empty (the tuner's space realizes ~10^5 plans; the
 * source text was most of that cost). */
tsr_status tsr__emit_gemm_launch(const tsr_problem *p, const tsr_plan *plan,
                                 const tsr__gpu_target *target, tsr__kernel_src *out, char *msg,
                                 size_t cap);
void tsr__kernel_src_free(tsr__kernel_src *k); /* NULL is a no-op */

/* The precision mode a GPU plan runs: ffma strict, tf32x3 fp32x3, tf32 tf32. */
tsr_precision tsr__emit_plan_precision(const tsr_plan *pl);

/* Default GPU plan table (checked in; src/emit/plans.c), for the problem's
 * precision mode (auto: the fastest mode meeting the FP32 contract). */
void tsr__emit_default_plan(const tsr_problem *p, tsr_plan *out);
/* The same table for a device of compute capability cc (major * 10 +
 * minor): the wgmma families (sm_90a) only where cc is 90;
 * tsr__emit_default_plan is this with 90. */
void tsr__emit_default_plan_cc(const tsr_problem *p, unsigned cc, tsr_plan *out);
/* The default table's class of the problem ("skinny-m", "skinny-n", "small",
 * "small-unaligned", "medium", "large"; static text): the tuner's lookup
 * lets an unseen shape inherit a tuned plan of its class. */
const char *tsr__emit_plan_class(const tsr_problem *p);

#endif
