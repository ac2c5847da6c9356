/* openblas route: cblas_sgemm through dlopen (see openblas.h). */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/context.h"
#include "core/inputs.h"
#include "bench/routes/openblas.h"

/* CBLAS enum values (cblas.h), fixed by the standard interface. */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                         const float *a, int lda, const float *b, int ldb, float beta, float *c,
                         int ldc);
typedef void (*set_threads_fn)(int);
typedef int (*get_threads_fn)(void);
typedef char *(*get_config_fn)(void);

static struct {
  void *handle;
  sgemm_fn sgemm;
  set_threads_fn set_threads;
  get_threads_fn get_threads;
  get_config_fn get_config;
  char path[4096];
} ob;

static const char *const candidates[] = {
    "libopenblas.so.0",
    "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0",
    "/usr/lib/x86_64-linux-gnu/libopenblas.so.0",
};

tsr_status tsr__openblas_available(tsr_context *ctx) {
  if (ob.handle) return TSR_OK;
  char tried[1024] = "";
  void *h = NULL;
  for (size_t i = 0; i < sizeof candidates / sizeof *candidates && !h; i++) {
    h = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      size_t l = strlen(tried);
      snprintf(tried + l, sizeof tried - l, "%s%s", l ? ", " : "", candidates[i]);
    }
  }
  if (!h) return tsr__fail(ctx, TSR_ERR_UNSUPPORTED, "openblas: no library found (tried %s)", tried);
  static const char *const names[] = {"cblas_sgemm", "openblas_set_num_threads",
                                      "openblas_get_num_threads", "openblas_get_config"};
  void *syms[4];
  for (int i = 0; i < 4; i++) {
    syms[i] = dlsym(h, names[i]);
    if (!syms[i]) {
      dlclose(h);
      return tsr__fail(ctx, TSR_ERR_UNSUPPORTED, "openblas: symbol %s missing", names[i]);
    }
  }
  ob.handle = h;
  ob.sgemm = (sgemm_fn)syms[0];
  ob.set_threads = (set_threads_fn)syms[1];
  ob.get_threads = (get_threads_fn)syms[2];
  ob.get_config = (get_config_fn)syms[3];
  Dl_info info;
  if (dladdr(syms[0], &info) && info.dli_fname) snprintf(ob.path, sizeof ob.path, "%s", info.dli_fname);
  return TSR_OK;
}

const char *tsr__openblas_path(void) { return ob.path; }
const char *tsr__openblas_config(void) { return ob.get_config ? ob.get_config() : ""; }
int tsr__openblas_threads(void) { return ob.get_threads ? ob.get_threads() : 0; }

void tsr__openblas_default_plan(tsr_context *ctx, const tsr_problem *p, tsr_plan *out) {
  (void)ctx;
  memset(out, 0, sizeof *out);
  out->threads = 0;
}

tsr_status tsr__openblas_realize(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                                 tsr_plan_info *info) {
  memset(info, 0, sizeof *info);
  info->plan = *plan;
  info->regs = info->local_bytes = -1;
  info->precision = TSR_PREC_STRICT;
  int64_t ar, ac, lda, sa, br, bc, ldb, sb, cr, cc, ldc, sc;
  tsr__stored_dims(p, TSR_TENSOR_A, &ar, &ac, &lda, &sa);
  tsr__stored_dims(p, TSR_TENSOR_B, &br, &bc, &ldb, &sb);
  tsr__stored_dims(p, TSR_TENSOR_C, &cr, &cc, &ldc, &sc);
  /* LP64 CBLAS: every extent and leading dimension must fit an int. */
  const int64_t v[6] = {p->m, p->n, p->k, lda, ldb, ldc};
  static const char *const nm[6] = {"m", "n", "k", "lda", "ldb", "ldc"};
  for (int i = 0; i < 6; i++)
    if (v[i] > INT_MAX)
      return tsr__fail(ctx, TSR_ERR_OVERFLOW, "openblas: %s=%lld exceeds the LP64 int range",
                       nm[i], (long long)v[i]);
  info->threads = (uint32_t)(plan->threads > 0 ? plan->threads : 0);
  return TSR_OK;
}

typedef struct {
  tsr_problem p;
  int64_t lda, sa, ldb, sb, ldc, sc;
  const float *a, *b;
  float *c, *c0;
  int64_t nc;
} ob_exec;

static tsr_status ob_prepare(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                             const float *a, const float *b, const float *c0, void **exec) {
  tsr_status st = tsr__openblas_available(ctx);
  if (st) return st;
  ob_exec *e = calloc(1, sizeof *e);
  if (!e) return tsr__fail(ctx, TSR_ERR_NOMEM, "openblas: out of host memory");
  int64_t r, c;
  tsr__stored_dims(p, TSR_TENSOR_A, &r, &c, &e->lda, &e->sa);
  tsr__stored_dims(p, TSR_TENSOR_B, &r, &c, &e->ldb, &e->sb);
  tsr__stored_dims(p, TSR_TENSOR_C, &r, &c, &e->ldc, &e->sc);
  e->p = *p;
  e->a = a;
  e->b = b;
  e->nc = tsr_problem_elems_c(p);
  e->c = malloc((size_t)e->nc * sizeof(float));
  e->c0 = c0 ? malloc((size_t)e->nc * sizeof(float)) : NULL;
  if (!e->c || (c0 && !e->c0)) {
    free(e->c);
    free(e->c0);
    free(e);
    return tsr__fail(ctx, TSR_ERR_NOMEM, "openblas: out of host memory for C");
  }
  if (c0) memcpy(e->c0, c0, (size_t)e->nc * sizeof(float));
  if (plan->threads > 0) ob.set_threads(plan->threads);
  *exec = e;
  if (c0) memcpy(e->c, c0, (size_t)e->nc * sizeof(float));
  else tsr_poison(p, e->c);
  return TSR_OK;
}

static tsr_status ob_reset_c(void *exec) {
  ob_exec *e = exec;
  if (e->c0) memcpy(e->c, e->c0, (size_t)e->nc * sizeof(float));
  else tsr_poison(&e->p, e->c);
  return TSR_OK;
}

static tsr_status ob_launch(void *exec, int n) {
  ob_exec *e = exec;
  const tsr_problem *p = &e->p;
  int ta = p->op_a == TSR_OP_T ? CBLAS_TRANS : CBLAS_NO_TRANS;
  int tb = p->op_b == TSR_OP_T ? CBLAS_TRANS : CBLAS_NO_TRANS;
  for (int i = 0; i < n; i++)
    for (int64_t bt = 0; bt < p->batch; bt++)
      ob.sgemm(CBLAS_ROW_MAJOR, ta, tb, (int)p->m, (int)p->n, (int)p->k, p->alpha,
               e->a + bt * e->sa, (int)e->lda, e->b + bt * e->sb, (int)e->ldb, p->beta,
               e->c + bt * e->sc, (int)e->ldc);
  return TSR_OK;
}

static tsr_status ob_sync(void *exec) { return TSR_OK; }

static tsr_status ob_download(void *exec, float *c) {
  ob_exec *e = exec;
  for (int64_t bt = 0; bt < e->p.batch; bt++)
    for (int64_t i = 0; i < e->p.m; i++)
      memcpy(c + bt * e->sc + i * e->ldc, e->c + bt * e->sc + i * e->ldc,
             (size_t)e->p.n * sizeof(float));
  return TSR_OK;
}

static void ob_exec_info(void *exec, tsr_plan_info *info) {
  info->threads = (uint32_t)tsr__openblas_threads();
}

static void ob_destroy(void *exec) {
  ob_exec *e = exec;
  if (!e) return;
  free(e->c);
  free(e->c0);
  free(e);
}

const tsr__backend tsr__route_openblas = {
    .api = TSR__BACKEND_API,
    .name = "openblas",
    .is_gpu = 0,
    .available = tsr__openblas_available,
    .default_plan = tsr__openblas_default_plan,
    .realize = tsr__openblas_realize,
    .prepare = ob_prepare,
    .reset_c = ob_reset_c,
    .launch = ob_launch,
    .sync = ob_sync,
    .event_time = NULL,
    .download = ob_download,
    .exec_info = ob_exec_info,
    .destroy = ob_destroy,
    .context_release = NULL,
};
