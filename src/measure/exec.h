/* The prepared execution (public as tsr_exec, tessera.h): one problem, one
 * realized plan, one backend's prepared call. Everything above the measure
 * layer (bench, tune, api, cli, tools) runs a backend through it and never
 * through the backend vtable (src/core/backend.h). */
#ifndef TSR_MEASURE_EXEC_H
#define TSR_MEASURE_EXEC_H

#include "tessera.h"

struct tsr__backend; /* src/core/backend.h: only the measure layer opens it */

/* Compile from scratch: module caches bypassed (the tuner's --no-cache). */
#define TSR__EXEC_BYPASS_CACHE 1

/* Realize plan on p (the realized plan is prepared), prepare with A, B, C0
 * (c0 NULL when beta == 0), fill the info. On failure the context message
 * says why and *out is NULL. */
tsr_status tsr__exec_create(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                            const tsr_plan *plan, const float *a, const float *bmat,
                            const float *c0, int flags, tsr_exec **out);
/* The same for a vtable that is not one of the library's backends (a
 * bench-only peer such as OpenBLAS, src/bench/routes). */
tsr_status tsr__exec_create_vt(tsr_context *ctx, const struct tsr__backend *vt,
                               const tsr_problem *p, const tsr_plan *plan, const float *a,
                               const float *bmat, const float *c0, int flags, tsr_exec **out);

/* tsr_plan_realize through the backend's check slot where it has one: the
 * same acceptance and resources, no source hash in info (the tuner's space
 * and lookup check ~10^5 plans; emitting each one's source was most of it). */
tsr_status tsr__exec_check(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                           const tsr_plan *plan, tsr_plan_info *info);

/* Compiling ahead (the backend's optional precompile slot): 1 when backend
 * b (not AUTO) compiles kernels that a later prepare can find in its
 * on-disk module cache (cuda), else 0 (cpu, cublas, hand). */
int tsr__exec_can_precompile(tsr_backend_kind b);
/* Compiles plan's kernels for p into b's on-disk module cache for a device
 * of compute capability cc_major.cc_minor (tsr_backend_describe's), with no
 * device, no device memory and no module load; the prepare of the same
 * plan on that device then loads them from disk. Any thread may call it
 * with a context of its own: ctx only gets the message, nothing of it is
 * opened (the tuner's background compiles, src/tune/prefetch.c). *cached:
 * 1 when the cache already held them. TSR_OK only when they are on disk;
 * TSR_ERR_UNSUPPORTED when b has nothing to compile ahead. */
tsr_status tsr__exec_precompile(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                                const tsr_plan *plan, int cc_major, int cc_minor, int *cached);

/* 1 for a GPU backend (device-event timing exists), else 0. */
int tsr__exec_is_gpu(const tsr_exec *e);
/* The problem as prepared (checked, with the route's precision). */
const tsr_problem *tsr__exec_problem(const tsr_exec *e);

/* The steps the measurement layer composes (measure.h): restore C to C0,
 * n back-to-back calls (asynchronous on a GPU), wait for everything
 * enqueued, device-event time around n calls (GPU only), download C. */
tsr_status tsr__exec_reset(tsr_exec *e);
tsr_status tsr__exec_launch(tsr_exec *e, int64_t n);
tsr_status tsr__exec_sync(tsr_exec *e);
tsr_status tsr__exec_event_time(tsr_exec *e, int64_t n, int64_t *ns);
tsr_status tsr__exec_download(tsr_exec *e, float *c);

#endif
