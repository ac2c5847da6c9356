/* The openblas benchmark route: cblas_sgemm from the system OpenBLAS,
 * loaded with dlopen at run time (libopenblas.so.0, then the Debian
 * openblas-pthread path). It has the shape of a backend vtable so that the
 * bench measures it through the same prepared execution as tessera's CPU
 * backend (tsr__exec_create_vt, measure/exec.h), but it is not a tessera
 * backend: nothing outside src/bench uses it. Only openblas.c opens the
 * vtable; the runner sees the entry points below. */
#ifndef TSR_ROUTES_OPENBLAS_H
#define TSR_ROUTES_OPENBLAS_H

#include "tessera.h"

struct tsr__backend;
/* The vtable that tsr__exec_create_vt prepares: the entry points below,
 * and prepare() passes plan->threads (> 0) to openblas_set_num_threads. */
extern const struct tsr__backend tsr__route_openblas;

/* dlopen + resolve every symbol, naming the missing one in the context. */
tsr_status tsr__openblas_available(tsr_context *ctx);
/* The route's own plan: threads only (0: OpenBLAS's own count). */
void tsr__openblas_default_plan(tsr_context *ctx, const tsr_problem *p, tsr_plan *out);
/* Before any input exists: every extent and leading dimension must fit
 * LP64 CBLAS's int; info->precision is strict (FP32 cblas_sgemm). */
tsr_status tsr__openblas_realize(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                                 tsr_plan_info *info);

/* After a successful available(): the path dlopen resolved, the
 * openblas_get_config() text and the thread count OpenBLAS reports. */
const char *tsr__openblas_path(void);
const char *tsr__openblas_config(void);
int tsr__openblas_threads(void);

#endif
