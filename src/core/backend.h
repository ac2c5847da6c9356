/* The backend vtable. Every backend (cpu, cuda, cublas, hand) sits behind one
 * of these; nothing above this layer knows how a backend computes. */
#ifndef TSR_CORE_BACKEND_H
#define TSR_CORE_BACKEND_H

#include "tessera.h"

/* The vtable's version: bump when a slot changes meaning. */
#define TSR__BACKEND_API 3

/* What a backend tells about the machine it runs on (the optional describe
 * slot; public as tsr_device_info): the tuning database's target key,
 * results files, tools. */
typedef tsr_device_info tsr__backend_desc;

/* prepare_flags: compile from scratch (module caches bypassed). */
#define TSR__PREPARE_BYPASS_CACHE 1

typedef struct tsr__backend {
  int api; /* TSR__BACKEND_API */
  const char *name;
  int is_gpu;
  /* TSR_OK when usable here (library loaded, device present); otherwise a
   * status with the reason in the context message. */
  tsr_status (*available)(tsr_context *ctx);
  /* Built-in default plan for the problem (no database lookup). ctx may be
   * NULL; a GPU backend's table follows the device ctx has opened (sm_90's
   * before any, or without ctx). */
  void (*default_plan)(tsr_context *ctx, const tsr_problem *p, tsr_plan *out);
  /* Legality and resources before any allocation; fills info. */
  tsr_status (*realize)(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                        tsr_plan_info *info);
  /* Compile, allocate, upload A, B and C0 (C0 may be NULL when beta == 0;
   * then C starts poisoned). The exec owns every resource it needs. */
  tsr_status (*prepare)(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                        const float *a, const float *b, const float *c0, void **exec);
  /* Restore C to its initial contents (C0, or NaN poison when beta == 0). */
  tsr_status (*reset_c)(void *exec);
  /* Enqueue n back-to-back calls (asynchronous on a GPU). */
  tsr_status (*launch)(void *exec, int n);
  /* Wait for everything enqueued. */
  tsr_status (*sync)(void *exec);
  /* GPU only (NULL on CPU): device-event time in ns around n calls, synchronized. */
  tsr_status (*event_time)(void *exec, int n, int64_t *ns);
  /* Copy the m×n logical elements of every batch item of C into c (stored
   * layout); elements of c outside them (ld padding) are left untouched. */
  tsr_status (*download)(void *exec, float *c);
  /* Fill info (registers, spills, source hash) for the prepared exec. */
  void (*exec_info)(void *exec, tsr_plan_info *info);
  void (*destroy)(void *exec); /* NULL is a no-op */
  /* Free ctx->backend_state[kind] (called from tsr_context_destroy). */
  void (*context_release)(tsr_context *ctx);
  /* ---- optional slots (NULL when the backend has none) ---- */
  /* The machine this backend runs on. */
  tsr_status (*describe)(tsr_context *ctx, tsr__backend_desc *out);
  /* prepare with TSR__PREPARE_* flags; NULL: flags have no meaning here. */
  tsr_status (*prepare_flags)(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                              const float *a, const float *b, const float *c0, int flags,
                              void **exec);
  /* The source text a realized plan compiles from (malloc'd, NUL-terminated;
   * NULL on out of memory or a rejected plan), for checking recorded
   * source hashes without a device. */
  char *(*source)(const tsr_problem *p, const tsr_plan *plan);
  /* The micro-tiles (tm, tn) compiled in for isa (view: of the direct
   * kernels of a=view,b=view plans, isa AUTO), at most cap of them into
   * tiles; returns how many there are (the tuner's space, src/tune). */
  int (*micro_tiles)(tsr_isa isa, int view, int (*tiles)[2], int cap);
  /* The default planner's class of the problem (static text), or NULL: the
   * tuning database's class lookup (docs/tune.md "Lookup"). */
  const char *(*plan_class)(const tsr_problem *p);
  /* realize without the source hash (info->source_sha256 left empty): the
   * same legality and resources, for callers that check many plans (the
   * tuner's space); NULL: realize is already cheap. */
  tsr_status (*check)(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                      tsr_plan_info *info);
  /* Compile the plan's kernels for p (checked) into the backend's on-disk
   * module cache for a device of compute capability cc_major.cc_minor (as
   * describe reports it), so that a later prepare of the same plan loads
   * them instead of compiling: emit and compile only, no device, no device
   * memory, no module load. ctx serves only for the message, so a thread
   * may run this with a context of its own while another thread uses the
   * device through the context that described it (the tuner's background
   * compiles, measure/exec.h). TSR_OK only when the compiled image is on
   * disk afterwards; *cached: 1 when it already was. NULL: nothing to
   * compile ahead (cpu, cublas, hand). */
  tsr_status (*precompile)(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                           int cc_major, int cc_minor, int *cached);
} tsr__backend;

/* A backend that runs only the given modes (bitmask of 1 << tsr_precision)
 * checks the problem's request: AUTO becomes `auto_mode`; a mode outside the
 * mask is TSR_ERR_UNSUPPORTED naming the backend. *runs gets the mode. */
tsr_status tsr__precision_require(tsr_context *ctx, const char *backend, const tsr_problem *p,
                                  unsigned modes, tsr_precision auto_mode, tsr_precision *runs);

/* tsr_plan_realize through the backend's check slot where it has one (no
 * source hash in info); the measure layer's tsr__exec_check for the layers
 * above. */
tsr_status tsr__backend_check(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                              const tsr_plan *plan, tsr_plan_info *info);

/* Table lookup; never NULL for a valid kind other than AUTO. */
const tsr__backend *tsr__backend_get(tsr_backend_kind k);
/* AUTO → the first available of cuda, cpu. */
tsr_backend_kind tsr__backend_resolve(tsr_context *ctx, tsr_backend_kind k);

/* In-place CPU GEMM on caller buffers (the fast path of tsr_gemm and the
 * BLAS shim): no copies; makes realize's checks (precision, plan) itself and
 * fails with realize's message. */
tsr_status tsr__cpu_gemm(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                         const float *a, const float *b, float *c);

extern const tsr__backend tsr__backend_cpu;
extern const tsr__backend tsr__backend_cuda;
extern const tsr__backend tsr__backend_cublas;
extern const tsr__backend tsr__backend_hand;

#endif
