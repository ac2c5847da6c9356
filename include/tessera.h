/* tessera — planned, generated, validated FP32 GEMM.
 *
 * The whole public API. C = alpha * op(A) * op(B) + beta * C, row-major,
 * FP32, optionally batched. A problem plus a plan (the single source of truth
 * for tiling, walk and pipeline) is executed by a backend (cpu, cuda, cublas,
 * hand); every output can be validated against an FP64 oracle.
 *
 * Threads: a tsr_context is not thread-safe (one message buffer; GPU state,
 * module cache and CPU worker pool created on first use). Use a context from
 * one thread at a time, or give each thread its own. Distinct contexts may
 * run concurrently: what they share is locked (library loaders, tuning
 * database lookup memo) or atomic on disk (CUBIN cache, tuning database).
 * Calls without a context touch only their arguments. A GPU call leaves the
 * device's primary CUDA context current on the calling thread. */
#ifndef TESSERA_H
#define TESSERA_H

#include <stddef.h>
#include <stdint.h>

/* TSR_VERSION "X.Y.Z" and TSR_VERSION_MAJOR/MINOR/PATCH, generated from
 * CMake's project(VERSION). */
#include "tessera_version.h"

/* Marks the exported API: libtessera.so is built with hidden visibility. */
#if defined(__GNUC__)
#define TSR_API __attribute__((visibility("default")))
#else
#define TSR_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library linked at run time (TSR_VERSION is the one
 * compiled against). */
TSR_API const char *tsr_version(void);

/* ---- status ------------------------------------------------------------ */
/* One list, one enum, one message table (src/core/status.c). */
#define TSR_STATUS_LIST(X)                                                   \
  X(TSR_OK, "ok")                                                            \
  X(TSR_ERR_INVALID, "invalid argument")                                     \
  X(TSR_ERR_PARSE, "malformed text")                                         \
  X(TSR_ERR_REJECTED, "plan rejected")                                       \
  X(TSR_ERR_OVERFLOW, "extent exceeds a launch or index limit")              \
  X(TSR_ERR_NOMEM, "out of memory")                                          \
  X(TSR_ERR_NO_CUDA, "no CUDA driver found")                                 \
  X(TSR_ERR_NO_DEVICE, "no CUDA device")                                     \
  X(TSR_ERR_CUDA, "CUDA driver error")                                       \
  X(TSR_ERR_NVRTC, "NVRTC compilation failed")                               \
  X(TSR_ERR_CUBLAS, "cuBLAS error")                                          \
  X(TSR_ERR_IO, "I/O error")                                                 \
  X(TSR_ERR_VALIDATION, "validation failed")                                 \
  X(TSR_ERR_UNSUPPORTED, "unsupported on this backend")                      \
  X(TSR_ERR_DB, "tuning database error")

typedef enum {
#define TSR_X_ENUM(name, msg) name,
  TSR_STATUS_LIST(TSR_X_ENUM)
#undef TSR_X_ENUM
  TSR_STATUS_COUNT
} tsr_status;

/* Static text for a status; never NULL. */
TSR_API const char *tsr_status_str(tsr_status s);
/* The enum's identifier, e.g. "TSR_ERR_PARSE". */
TSR_API const char *tsr_status_name(tsr_status s);

/* ---- context ----------------------------------------------------------- */
/* A context owns backend state (loaded libraries, module cache, device
 * buffers) and the message buffer that explains the last failure. */
typedef struct tsr_context tsr_context;

TSR_API tsr_status tsr_context_create(tsr_context **out);
TSR_API void tsr_context_destroy(tsr_context *ctx); /* NULL is a no-op */
/* Details of the last failing call on this context ("" when none). */
TSR_API const char *tsr_context_message(const tsr_context *ctx);

/* ---- problem ----------------------------------------------------------- */
typedef enum { TSR_OP_N = 0, TSR_OP_T = 1 } tsr_op;

/* Precision mode: the arithmetic class a caller asks for (docs/accuracy.md).
 *  AUTO   the fastest mode that meets the FP32 contract for the problem on the
 *         backend (strict or fp32x3); the default.
 *  STRICT IEEE FP32 products and sums (FFMA; the class of cuBLAS pedantic).
 *  FP32X3 tensor-core 3xTF32 split that meets the same FP32 contract.
 *  TF32   opt-in: TF32 operands (11 significant bits), FP32 accumulation; its
 *         own documented bound, below FP32.
 *  OZAKI  INT8 tensor cores, exact integer products of operands scaled per row
 *         (A) and column (B) to fixed point and split into residues modulo
 *         pairwise coprime moduli (Ozaki scheme II; docs/accuracy.md); the
 *         number of moduli sets the accuracy; held to the FP32 contract.
 * The FP32 contract (strict, fp32x3, ozaki): on the same inputs, relative Frobenius
 * error vs FP64 at most 1.25 x the strict FP32 reference's, every element
 * within (K + 64) u (|alpha| |A||B| + |beta| |C0|), u = 2^-24, and the NaN/Inf
 * class of every element equal to the FP64 reference's. */
typedef enum {
  TSR_PREC_AUTO = 0,
  TSR_PREC_STRICT = 1,
  TSR_PREC_FP32X3 = 2,
  TSR_PREC_TF32 = 3,
  TSR_PREC_OZAKI = 4,
  TSR_PREC_COUNT
} tsr_precision;

/* "auto", "strict", "fp32x3", "tf32". */
TSR_API const char *tsr_precision_name(tsr_precision p);
TSR_API tsr_status tsr_precision_parse(const char *text, tsr_precision *p, char *msg, size_t cap);

/* Row-major. With op_a == N, A is M×K and A(i,k) = A[i*lda + k]; with T it
 * is stored K×M and op(A)(i,k) = A[k*lda + i]. Likewise B (K×N or N×K).
 * Leading dimensions and batch strides of 0 mean "compact"; tsr_problem_check
 * fills them in. Batch items are independent. beta == 0 never reads C. */
typedef struct {
  int64_t m, n, k;
  int64_t batch;
  tsr_op op_a, op_b;
  float alpha, beta;
  int64_t lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c;
  tsr_precision precision; /* AUTO after tsr_problem_init */
} tsr_problem;

/* m×n×k, batch 1, alpha 1, beta 0, compact. */
TSR_API void tsr_problem_init(tsr_problem *p, int64_t m, int64_t n, int64_t k);
/* Validates extents (positive, index space within int64, leading dimensions
 * large enough) and fills compact defaults. On failure writes one line
 * naming the field and value into msg. */
TSR_API tsr_status tsr_problem_check(tsr_problem *p, char *msg, size_t cap);
/* "MxNxK" with positive decimal extents. */
TSR_API tsr_status tsr_shape_parse(const char *text, int64_t *m, int64_t *n, int64_t *k,
                           char *msg, size_t cap);
/* Element counts of the stored A, B, C for all batches (0 on overflow). */
TSR_API int64_t tsr_problem_elems_a(const tsr_problem *p);
TSR_API int64_t tsr_problem_elems_b(const tsr_problem *p);
TSR_API int64_t tsr_problem_elems_c(const tsr_problem *p);

/* ---- program walks ----------------------------------------------------- */
/* A walk maps the linear physical program ordinal i to a logical output tile
 * (row, col) of an H×W tile grid. Batch axes are independent of the walk. */
typedef enum { TSR_WALK_LINEAR = 0, TSR_WALK_RECT = 1, TSR_WALK_STRIPE = 2 } tsr_walk_kind;

typedef struct {
  tsr_walk_kind kind;
  uint32_t r; /* rect rows / stripe rows (ignored for linear) */
  uint32_t c; /* rect columns (rect only) */
} tsr_walk;

/* "linear", "rect:RxC", "stripe:R". */
TSR_API tsr_status tsr_walk_parse(const char *text, tsr_walk *w, char *msg, size_t cap);
/* Canonical text; returns the length that would have been written. */
TSR_API int tsr_walk_format(const tsr_walk *w, char *buf, size_t cap);
/* Checks the request against an H×W grid: non-zero extents, H*W and R*W
 * within uint32 (the launch index type). */
TSR_API tsr_status tsr_walk_check(const tsr_walk *w, uint32_t h, uint32_t wdt, char *msg, size_t cap);
/* Rewrites w into its canonical equivalent on an H×W grid: C clamped to W,
 * R clamped to H, every identity case becomes linear, rect:Rx1 becomes
 * stripe:R. Two walks that visit in the same order normalize equal. */
TSR_API void tsr_walk_normalize(tsr_walk *w, uint32_t h, uint32_t wdt);
/* Ordinal i < H*W → (row, col). Requires a checked walk. */
TSR_API void tsr_walk_map(const tsr_walk *w, uint32_t h, uint32_t wdt, uint32_t i,
                  uint32_t *row, uint32_t *col);

/* ---- plan -------------------------------------------------------------- */
typedef enum { TSR_IN_STAGED = 0, TSR_IN_VIEW = 1 } tsr_input_mode;
typedef enum { TSR_ISA_AUTO = 0, TSR_ISA_GENERIC, TSR_ISA_AVX2, TSR_ISA_AVX512 } tsr_isa;
/* GPU inner product (docs/emit.md, docs/accuracy.md): FP32 FFMA (precision
 * strict); 3xTF32 tensor-core MMA, a big/small TF32 split of each operand
 * (precision fp32x3); one TF32 MMA of the rounded operands (precision tf32).
 * The WGMMA_ values are the same two tensor-core modes on Hopper's
 * warpgroup MMA (wgmma.mma_async, sm_90a only): operands split once in
 * shared memory, read through shared-memory matrix descriptors. GEMV is
 * strict FP32 FFMA for problems with M <= 16 or N <= 16 (docs/emit.md
 * "GEMV"): the big operand streams once with vector loads, each CTA covers
 * the short side whole; threads is then the CTA's thread count. WGMMA_S8
 * is the Ozaki family (precision ozaki, sm_90a only, docs/emit.md "Ozaki"):
 * a pack prologue scales A's rows and B's columns to integers and writes
 * their residues modulo each of `moduli` moduli as INT8 planes; the main
 * kernel multiplies one modulus per grid row with wgmma m64nNk32 .s8 (exact
 * int32 sums) and stores the product's residue; the reconstruction kernel
 * recovers each element by the Chinese remainder theorem. */
typedef enum {
  TSR_MMA_FFMA = 0,
  TSR_MMA_TF32X3 = 1,
  TSR_MMA_TF32 = 2,
  TSR_MMA_WGMMA_TF32X3 = 3,
  TSR_MMA_WGMMA_TF32 = 4,
  TSR_MMA_GEMV = 5,
  TSR_MMA_WGMMA_S8 = 6
} tsr_mma;
/* Tensor-core accumulation (mma=tf32x3, tf32): STEP promotes each 8-deep K
 * step's MMA partial sum into an FP32 register accumulator with an IEEE add
 * (the tensor core truncates when it accumulates; over a whole K loop that
 * bias grows linearly in K); CHAIN accumulates every MMA into the same
 * tensor-core accumulator (the pre-contract scheme, kept reachable so the
 * tuner's accuracy rejection can be shown; fine for tf32). */
typedef enum { TSR_ACC_STEP = 0, TSR_ACC_CHAIN = 1 } tsr_acc;
/* Operands packed by the GPU prologue: none, A, B or both (bit 0 A, bit 1 B). */
typedef enum { TSR_PACK_NONE = 0, TSR_PACK_A = 1, TSR_PACK_B = 2, TSR_PACK_AB = 3 } tsr_pack;
/* Where the tensor-core families (mma=tf32x3, tf32) split operands into
 * TF32 parts: INLINE in the main loop, per fragment element loaded (every
 * warp re-splits its fragments); PACK once, in the pack prologue, which then
 * stores the big (and, for tf32x3, small) parts of both operands in the
 * workspace (pack is then ab whatever the pack field says). Same products in
 * the same order: bit-identical results. PRODUCER (wgmma families only): a
 * producer warpgroup copies each K block and writes its TF32 planes while
 * the consumer warpgroups multiply (warp specialization, docs/emit.md);
 * PRODUCER_REG: the same with the K block loaded into the producer's
 * registers (no raw copy in shared memory); PRODUCER_PACK: the pack prologue
 * writes the planes (as PACK) and the producer only copies them;
 * PRODUCER_BULK: the pack prologue writes the planes tile by tile in the
 * shared-memory layout, and one producer thread moves each stage with bulk
 * (TMA) copies that complete on the stage's mbarrier.
 * FFMA: INLINE; PRODUCER (a copying warpgroup beside 4 multiplying warps),
 * PRODUCER_TMA (a producer warp issuing TMA tensor copies), TMA (no producer:
 * the first multiplying warp issues them). */
typedef enum {
  TSR_SPLIT_INLINE = 0,
  TSR_SPLIT_PACK = 1,
  TSR_SPLIT_PRODUCER = 2,    /* cp.async into raw buffers, split from there */
  TSR_SPLIT_PRODUCER_REG = 3, /* loads into the producer's registers, split there */
  TSR_SPLIT_PRODUCER_PACK = 4, /* the pack prologue splits; the producer copies the TF32 planes */
  TSR_SPLIT_PRODUCER_BULK = 5, /* ... as tiles, moved by bulk copies (one producer thread) */
  TSR_SPLIT_PRODUCER_TMA = 6, /* mma=ffma: one producer warp, TMA tensor copies of [k][x] tiles */
  TSR_SPLIT_TMA = 7           /* mma=ffma: no producer; the consumers' first warp issues the TMA copies */
} tsr_split;

/* One struct, the single source of truth. GPU meaning: block tile bm×bn,
 * K block bk, warp tile wm×wn, per-thread micro-tile tm×tn, shared-memory
 * stages, global-load vector width (floats), A/B staged through shared
 * memory or read directly, shared-memory row padding (floats), walk of the
 * CTA grid, split-K factor. CPU meaning: macro-tile bm×bn (MC×NC), K block
 * bk (KC), register micro-tile tm×tn, walk of the macro-tile grid, threads
 * (0 = all cores), micro-kernel ISA. mma selects the GPU kernel family;
 * mma=gemv reads threads as its CTA's thread count. Fields a backend does not use must hold
 * their defaults. */
typedef struct {
  int bm, bn, bk;
  int wm, wn;
  int tm, tn;
  int stages;
  int vec;
  tsr_input_mode a, b;
  int pad;
  tsr_walk walk;
  int splitk;
  int threads;
  tsr_isa isa;
  tsr_mma mma;
  tsr_acc acc; /* mma=tf32x3 / tf32 only; STEP otherwise */
  /* GPU occupancy hint: 0 = none (default), N >= 1 = the kernel is compiled
   * with __launch_bounds__(threads, N) (registers capped so that N blocks fit
   * on one SM) and the plan must fit N blocks' shared memory on one SM.
   * The FFMA rings take 2 (0) or 3; split=tma and split=producer-tma also 4
   * (the latter with a producer warpgroup whose setmaxnreg gives the
   * consumers its registers; measured slower, docs/emit.md). */
  int minblocks;
  /* GPU operand staging prologue (docs/emit.md "Pack"): the listed operands
   * are first copied by a prologue kernel into the workspace, zero-padded to
   * whole tiles along m/n and k with 16-byte rows, so the main kernel reads
   * them with 16-byte copies and no tail guards. Part of every call. */
  tsr_pack pack;
  tsr_split split; /* mma=tf32x3 / tf32 only; INLINE otherwise */
  /* mma=ffma only (docs/emit.md "k fragments"): the listed operands are
   * kept in shared memory as [x][k] rows (16-byte copies of a k-contiguous
   * operand) and each thread reads 4 K steps of one of its rows with one
   * 128-bit LDS; its rows (A) / columns (B) are then spaced a lane row /
   * column apart instead of in runs of 4. NONE: the [k][x] layout. The plan
   * text names it only when not none. */
  tsr_pack kfrag;
  /* mma=ffma, stages >= 2 (docs/emit.md "kloop"): 0 = each K block's copy
   * addresses, slot and load branch computed from the block index; 1 = each
   * staged operand's copy source is one pointer per thread advanced by a K
   * block per iteration (the passes of a copy at constant offsets from it),
   * slots as running indices, and the copy unconditional (the last
   * stages-1 iterations copy the last block again into the free slot).
   * Named in the plan text only when not 0. */
  int kloop;
  /* kloop=1 or 2 (docs/emit.md "kunroll"): 1 = the K-block loop's body
   * written out once per ring slot (stages times), so every slot is a
   * compile-time constant (no slot arithmetic; shared addresses fold into
   * the instructions); 0 = one body, slots as running indices. Named in the
   * plan text only when not 0. */
  int kunroll;
  /* mma=wgmma-s8 only: the number of moduli (3..12; each adds one INT8 GEMM
   * and about 8 bits to the integer product, so the operands keep more bits);
   * 0 for every other family. Named in the plan text only when not 0. */
  int moduli;
  /* mma=wgmma-s8 only (docs/accuracy.md "ozaki", the guard): the guard's
   * magnitude GEMM sums every gstride-th K block only (blocks 0, gstride,
   * 2 gstride, ...): a sum over fewer nonnegative products is still a lower
   * bound of |A||B|, looser by about gstride on spread-out rows, and costs
   * 1/gstride of an INT8 GEMM. 0 (or 1): every block. Named in the plan text
   * only when not 0. */
  int gstride;
  /* mma=wgmma-s8 only: outputs per thread of the reconstruction kernel, 1 or
   * 4 (four of one row: the residues read as one 32-bit word per modulus,
   * the row's scale and norm once). 0 = 1. Named in the plan text only when
   * not 0. */
  int rvec;
  /* mma=gemv with a big operand contiguous along k only (docs/emit.md
   * "GEMV", lane per row): 0 = lanes along k (a warp per output, shuffle
   * sum); 1, 2 or 4 = each lane owns that many big-operand rows and walks
   * its K slice along them, the short operand's K block staged in shared
   * memory as [k][S] (broadcast reads). Named in the plan text only when
   * not 0. */
  int lanerows;
  /* mma=ffma, splitk=1, one problem (docs/emit.md "Tail slices"): the
   * tiles past the last whole wave of `wave` CTAs run in tailk K slices
   * each (partials in the workspace, summed by the reduction in slice
   * order), so the grid's last, partial wave is tailk times finer. 0 = off.
   * wave: the CTAs resident at once on the device (SMs x blocks per SM),
   * required with tailk. Both named in the plan text only when not 0. */
  int tailk;
  int wave;
  /* mma=ffma only (docs/emit.md "FFMA order"): the order of a K step's TM x
   * TN FMAs in the source. 0 = row by row (i outer, j inner); 1 = rows
   * serpentine (every other row right to left, so consecutive FMAs share an
   * operand across rows too); N >= 2 = rows and columns shuffled by seed N,
   * serpentine. Each sum stays k-ascending: outputs bit-identical; only
   * ptxas's register allocation and schedule change. Named in the plan text
   * only when not 0. */
  int forder;
  /* the FFMA producer rings (split=producer, producer-tma, tma) with kloop 1
   * or 2 (docs/emit.md "Early full-barrier test"): 0 = each K block's
   * consumers wait on its full barrier at its top; 1 = they test block
   * it+1's barrier (test_wait) at the top of block it and wait only if it had
   * not landed (session 27: 2-7 % slower, so not a default). Outputs
   * bit-identical. Named in the plan text only when 1. */
  int kwait;
  /* split=producer-tma (docs/emit.md "Elected TMA producer"): 0 = the
   * producer warp's lane 0 issues each K block's two boxes inside a branch
   * of its own (ptxas wraps each copy in a loop over the lanes, ~50
   * instructions a K block); 1 = the converged warp issues them, one lane
   * elected by elect.sync (~30). Same copies: outputs bit-identical. Named
   * in the plan text only when 1. */
  int pelect;
  /* split=producer-tma, kloop 1-2 (docs/emit.md "The slot's reads fenced
   * before its refill"): 0 = the consumers fence their reads of a slot and
   * free it after the block's last FFMAs; 1 = right after the block's last
   * shared loads, before the last K step's FFMAs (the fence waits for those
   * loads only); 2 = in pairs, after every second block (one fence for
   * two slots; a slot goes back a block later). The strict default takes 1
   * wherever it applies (session 31). Same sums: outputs bit-identical.
   * Named in the plan text only when set. */
  int krel;
  /* mma=ffma (docs/emit.md "The K block's inner loop"): 0 = a thread's
   * K block runs its bk K steps written out (the loop body is the whole
   * block: 1111 instructions, 17.8 KB of code at the strict default); S
   * (dividing bk, below it) = an inner loop of bk/S trips of S steps
   * written out, so a long K block's loop fits the instruction cache
   * (session 32: bk=32's 35 KB body spent 16 % of its stall samples
   * waiting for instructions). Same sums in the same order: outputs
   * bit-identical. Named in the plan text only when set. */
  int kinner;
  /* split=producer-tma with A packed and transposed (docs/emit.md "Lazy
   * pack"): 0 = a prologue kernel packs the whole of A before the main
   * kernel starts; P = no prologue for A: the main kernel's producer warps
   * pack it in pieces of P K blocks by a tile row's bm rows; a warp at a
   * piece's first K block claims what is unclaimed of it and the next two
   * (one compare-and-swap a piece and call), packs those, and waits for the
   * piece's flag if another warp holds it. The same packed values: outputs
   * bit-identical. Measured slower than the prologue (session 40). Named in
   * the plan text only when set. */
  int lazy;
  /* with lazy=P (docs/emit.md "Pack kernel beside the GEMM"): 0 = the
   * producer warps claim and pack the pieces; G (1..1024) = a pack kernel of
   * G CTAs packs them, piece by piece in K order, launched before the main
   * kernel, which starts as its programmatic dependent so that the two run
   * at once; the producer warps only wait for each piece's flag. The same
   * packed values: outputs bit-identical. Measured slower than the prologue
   * (session 42). Named in the plan text only when set. */
  int lazyk;
} tsr_plan;

/* Parse "key=value,..." (any subset of keys, in any order, each at most
 * once) over the defaults given in *p. A whole plan, one naming every key
 * tsr_plan_format always writes (bm ... split), is taken as it is: the
 * optional keys it leaves out (kfrag, kloop, ... lazyk: named only when
 * set) are unset, not *p's. Unknown keys, bad values and duplicates are
 * rejected naming the key. */
TSR_API tsr_status tsr_plan_parse(const char *text, tsr_plan *p, char *msg, size_t cap);
/* Canonical text with every key in a fixed order; parse(format(p)) == p
 * over any base. */
TSR_API int tsr_plan_format(const tsr_plan *p, char *buf, size_t cap);
/* Field-wise equality. */
TSR_API int tsr_plan_equal(const tsr_plan *a, const tsr_plan *b);

typedef enum {
  TSR_BACKEND_AUTO = 0,
  TSR_BACKEND_CPU,
  TSR_BACKEND_CUDA,   /* tessera's generated kernels */
  TSR_BACKEND_CUBLAS, /* cublasSgemm, pedantic FP32 */
  TSR_BACKEND_HAND,   /* handwritten fixed-geometry CUDA kernel */
  TSR_BACKEND_COUNT
} tsr_backend_kind;

TSR_API const char *tsr_backend_name(tsr_backend_kind b);
/* TSR_OK when the backend can run here; otherwise the reason is in the
 * context message (e.g. TSR_ERR_NO_CUDA). AUTO is always available. */
TSR_API tsr_status tsr_backend_available(tsr_context *ctx, tsr_backend_kind b);
TSR_API tsr_status tsr_backend_parse(const char *text, tsr_backend_kind *b, char *msg, size_t cap);
/* AUTO → the first available of cuda, cpu; any other kind as given. */
TSR_API tsr_backend_kind tsr_backend_resolve(tsr_context *ctx, tsr_backend_kind b);

/* The machine behind a backend (tsr_backend_describe). */
typedef struct {
  char device[192];   /* GPU name, or CPU model + " (N cores)" */
  char arch[32];      /* "sm_90", or the best CPU micro-kernel ISA ("avx512") */
  char driver[32];    /* GPU driver version ("13000"), "" on the CPU */
  char nvrtc[32];     /* "13.0", "" when absent or on the CPU */
  int cc_major, cc_minor, sm_count; /* 0 on the CPU */
  int driver_version;               /* e.g. 13000; 0 on the CPU */
  int nvrtc_major, nvrtc_minor;     /* 0 when NVRTC is absent */
  int cublas_version;               /* 0 when cuBLAS is absent */
  uint64_t total_mem;               /* device memory, bytes; 0 on the CPU */
} tsr_device_info;
/* What backend b runs on (AUTO: the backend AUTO picks). The tuning
 * database keys its entries by these facts. TSR_ERR_UNSUPPORTED for a
 * backend that cannot say; its availability error when it cannot run. */
TSR_API tsr_status tsr_backend_describe(tsr_context *ctx, tsr_backend_kind b, tsr_device_info *out);

/* The backend's built-in plan for a problem: the default table only, never
 * the tuning database (the tuner's incumbent). b must not be AUTO. A GPU
 * backend's table depends on the device: with ctx, its device is opened
 * first (unavailable: sm_90's table, the context message cleared); with ctx
 * NULL, sm_90's table. */
TSR_API void tsr_plan_builtin(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                              tsr_plan *out);
/* The built-in default planner's class of the problem on backend b (static
 * text: "skinny-m", "skinny-n", "small", "small-unaligned", "medium",
 * "large"), or NULL where the backend has no classes: what the tuning
 * database's class lookup matches (docs/tune.md "Lookup"). */
TSR_API const char *tsr_plan_class(tsr_backend_kind b, const tsr_problem *p);

/* The source text backend b compiles for plan on p (the generated CUDA C of
 * the cuda backend, the fixed kernel of hand): malloc'd, NUL-terminated,
 * released with free(); NULL when b generates no source, the plan is
 * rejected, or memory runs out. Needs no device. */
TSR_API char *tsr_plan_source(tsr_backend_kind b, const tsr_problem *p, const tsr_plan *plan);

/* The default plan of a backend for a problem (from the tuning database when
 * one matches, else the built-in table). */
TSR_API tsr_status tsr_plan_default(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                            tsr_plan *out);
/* tsr_plan_default that also says where the plan came from (docs/tune.md):
 * "tuned (exact)", "tuned (exact, incumbent kept)", "tuned (nearest MxNxK)",
 * "default", "default (no tuned entry)", "default (no tuning database)",
 * "default (tuning database off)" or "default (tuning database unreadable)".
 * The database is ${XDG_CACHE_HOME:-$HOME/.cache}/tessera/tune.db, or env
 * TESSERA_TUNE_DB (a path, or "off"). An unreadable database warns once on
 * stderr and is never modified; the built-in default is used. source may be
 * NULL. */
TSR_API tsr_status tsr_plan_lookup(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                           tsr_plan *out, char *source, size_t cap);

/* What a plan becomes on a problem: the realized launch. */
typedef struct {
  tsr_plan plan;          /* normalized (walk canonical for this grid) */
  uint32_t grid_rows;     /* H: tiles along M */
  uint32_t grid_cols;     /* W: tiles along N */
  uint32_t grid_batch;    /* batch × splitk */
  uint32_t threads;       /* per block (GPU) or worker threads (CPU) */
  uint64_t smem_bytes;    /* per block (GPU) or packing buffers (CPU) */
  int regs;               /* registers per thread after compile, -1 unknown */
  int local_bytes;        /* local (spill) bytes per thread, -1 unknown */
  int tail_m, tail_n, tail_k; /* 1 when the axis has a partial tile */
  char source_sha256[65]; /* generated source hash ("" for non-generated) */
  tsr_precision precision; /* the mode this plan runs (never AUTO) */
} tsr_plan_info;

/* Checks the plan against the backend's target (shared memory, threads,
 * registers, divisibility, launch and index limits) before any allocation.
 * On rejection the context message names the first violated limit. */
TSR_API tsr_status tsr_plan_realize(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                            const tsr_plan *plan, tsr_plan_info *info);

/* ---- inputs, oracle, validation --------------------------------------- */
/* Input families: DYADIC (exact in FP32 and TF32: proves indexing), RANDOM
 * (uniform [-1, 1)), NORMAL (approximately N(0, 1): Irwin-Hall sum of 12
 * uniforms minus 6, exact arithmetic so every language reproduces it), WIDE
 * (uniform [-1, 1) times 2^e, e uniform integer in [-20, 20]). */
typedef enum {
  TSR_INPUTS_DYADIC = 0,
  TSR_INPUTS_RANDOM = 1,
  TSR_INPUTS_NORMAL = 2,
  TSR_INPUTS_WIDE = 3,
  TSR_INPUTS_COUNT
} tsr_inputs;
/* "dyadic", "random", "normal", "wide". */
TSR_API const char *tsr_inputs_name(tsr_inputs k);
TSR_API tsr_status tsr_inputs_parse(const char *text, tsr_inputs *k, char *msg, size_t cap);
typedef enum { TSR_TENSOR_A = 0, TSR_TENSOR_B = 1, TSR_TENSOR_C = 2 } tsr_tensor;

/* Fills the stored tensor (all batches, honouring leading dimensions and
 * strides; padding elements are set to 0) deterministically.
 * Dyadic: T_b[r][c] = (((r*a + c*b + batch*d) mod q) - o) / 8 with per-tensor
 * constants (see src/core/inputs.c); every product and partial sum of a GEMM
 * over them is exact in FP32. Random: uniform [-1, 1) from splitmix64 of
 * (seed, tensor, element index), 24-bit exact. */
TSR_API void tsr_fill(const tsr_problem *p, tsr_tensor t, tsr_inputs kind, uint64_t seed, float *buf);

/* FP64 reference of the whole output (all batches, compact m×n per batch,
 * ref[b*m*n + i*n + j]), computed without any code under test. C0 may be
 * NULL when beta == 0. Two optional by-products of the same pass (NULL: not
 * computed), the inputs of the accuracy contract (docs/accuracy.md):
 *  scale[e]        |alpha| (|op(A)||op(B)|)ij + |beta| |C0ij|, the scale of
 *                  the componentwise bound (rounded to float);
 *  strict_rel_fro  relative Frobenius error vs ref of the strict FP32
 *                  reference: per element a k-ascending FMA sum s in FP32,
 *                  then alpha*s (+ beta*C0 by FMA); over the elements where
 *                  both are finite. */
TSR_API tsr_status tsr_oracle_cpu(const tsr_problem *p, const float *a, const float *b, const float *c0,
                          double *ref, float *scale, double *strict_rel_fro);

/* The same reference computed on the GPU by a plain FP64 kernel that
 * shares no code with any route under test (same layout and summation order
 * as tsr_oracle_cpu). TSR_ERR_NO_CUDA / TSR_ERR_NO_DEVICE without a GPU. */
TSR_API tsr_status tsr_oracle_gpu(tsr_context *ctx, const tsr_problem *p, const float *a, const float *b,
                          const float *c0, double *ref, float *scale, double *strict_rel_fro);

/* A validation receipt. Two kinds:
 *  tolerance (tsr_validate): every element within atol + rtol*|ref|, exact
 *    when both are 0 (the dyadic check);
 *  contract (tsr_validate_contract): the accuracy contract of a precision
 *    mode (docs/accuracy.md): the componentwise bound on every element and the
 *    relative Frobenius limit.
 * Both compare NaN/Inf classes: where the reference (rounded to float) is
 * NaN or +-Inf the output must be the same class; elsewhere a non-finite
 * output always fails. */
typedef struct {
  int64_t checked;        /* elements compared */
  int64_t failed;         /* elements outside tolerance / bound or of the wrong class */
  int64_t first_fail;     /* linear index of the first failure, -1 if none */
  double max_abs_err;     /* over elements with a finite reference */
  double max_rel_err;
  double rel_fro_err;     /* ||C - ref||_F / ||ref||_F over finite-reference elements */
  double atol, rtol;      /* tolerance receipts */
  int passed;
  /* contract receipts (contract == TSR_PREC_AUTO for tolerance receipts) */
  tsr_precision contract;   /* STRICT or FP32X3: the FP32 contract; TF32: the TF32 bound */
  double strict_rel_fro;    /* the strict FP32 reference's error on the same inputs */
  double fro_limit;         /* limit applied to rel_fro_err; NaN when not applied */
  double worst_bound_ratio; /* max over elements of |c - ref| / componentwise bound */
  int64_t bound_failed;     /* elements over the componentwise bound */
  int64_t class_failed;     /* elements whose NaN/Inf/finite class differs */
} tsr_receipt;

/* Contract constants (docs/accuracy.md). */
#define TSR_CONTRACT_FRO_SLACK 1.25   /* FP32: rel. Frobenius <= slack x strict's */
#define TSR_CONTRACT_FRO_MIN_ELEMS 1024 /* fewer outputs: componentwise bound only */
#define TSR_CONTRACT_C0 64            /* FP32 componentwise: (K + C0) u */
#define TSR_CONTRACT_TF32_FRO 0x1p-10 /* TF32: rel. Frobenius <= 2^-10 */
#define TSR_CONTRACT_TF32_ELEM 0x1p-10 /* TF32 componentwise: (2^-10 + (K + C0) u) */

/* Poisons the stored C (all elements, including padding) with quiet NaN. */
TSR_API void tsr_poison(const tsr_problem *p, float *c);
/* Tolerance receipt: |c - ref| <= atol + rtol*|ref| on every element. */
TSR_API void tsr_validate(const tsr_problem *p, const float *c, const double *ref, double atol,
                  double rtol, tsr_receipt *r);
/* Contract receipt for the precision mode that ran (STRICT, FP32X3 or
 * TF32), from the oracle's ref, scale and strict_rel_fro. */
TSR_API void tsr_validate_contract(const tsr_problem *p, const float *c, const double *ref,
                           const float *scale, double strict_rel_fro, tsr_precision mode,
                           tsr_receipt *r);

/* ---- running ---------------------------------------------------------- */
/* One GEMM on host buffers: plan NULL means the backend's default plan. The
 * GPU backends upload, launch, synchronize and download. */
TSR_API tsr_status tsr_gemm(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                    const tsr_plan *plan, const float *a, const float *bmat, float *c);

/* ---- prepared execution ------------------------------------------------ */
/* One problem and one realized plan, prepared once (compiled, buffers
 * allocated, A, B and C0 uploaded) and then run or timed many times: what
 * tessera's own benchmark, tuner and tools measure through. */
typedef struct tsr_exec tsr_exec;
/* plan NULL: tsr_plan_default. c0 may be NULL when beta == 0 (C then starts
 * as NaN, which beta == 0 never reads); it is copied. A and B must stay
 * alive and unchanged while the exec is used: the CPU backend reads them in
 * place (GPU backends upload them here). The exec keeps ctx for its
 * messages: use it from the context's thread only, and destroy it before
 * the context. */
TSR_API tsr_status tsr_exec_create(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                                   const tsr_plan *plan, const float *a, const float *bmat,
                                   const float *c0, tsr_exec **out);
/* The realized plan (registers, spills and source hash once compiled) and
 * the precision mode it runs. */
TSR_API const tsr_plan_info *tsr_exec_info(const tsr_exec *e);
/* C = alpha op(A) op(B) + beta C0 once, copied into c (the problem's stored
 * layout; elements outside the m x n items, e.g. ld padding, untouched). */
TSR_API tsr_status tsr_exec_run(tsr_exec *e, float *c);
/* calls back-to-back calls, *ns their total time: device events on a GPU,
 * the monotonic clock on the CPU; C is restored to C0 and the queue drained
 * first, outside the timed region. What C holds afterwards is unspecified
 * until the next tsr_exec_run. */
TSR_API tsr_status tsr_exec_time(tsr_exec *e, int64_t calls, int64_t *ns);
TSR_API void tsr_exec_destroy(tsr_exec *e); /* NULL is a no-op */

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_H */
