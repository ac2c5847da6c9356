/* Backend registry and the backend-independent entry points. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/assert.h"
#include "core/backend.h"
#include "core/context.h"
#include "core/space.h"

static const char *const backend_names[TSR_BACKEND_COUNT] = {"auto", "cpu", "cuda", "cublas",
                                                             "hand"};

const char *tsr_backend_name(tsr_backend_kind b) {
  return (unsigned)b < TSR_BACKEND_COUNT ? backend_names[b] : "unknown";
}

tsr_status tsr_backend_parse(const char *text, tsr_backend_kind *b, char *msg, size_t cap) {
  for (int i = 0; i < TSR_BACKEND_COUNT; i++)
    if (text && strcmp(text, backend_names[i]) == 0) {
      *b = (tsr_backend_kind)i;
      return TSR_OK;
    }
  return tsr__failbuf(msg, cap, TSR_ERR_PARSE,
                      "backend: '%s' is not one of auto, cpu, cuda, cublas, hand",
                      text ? text : "");
}

tsr_status tsr_backend_available(tsr_context *ctx, tsr_backend_kind b) {
  if (b == TSR_BACKEND_AUTO) return TSR_OK;
  const tsr__backend *be = tsr__backend_get(b);
  if (!be) return tsr__fail(ctx, TSR_ERR_INVALID, "backend: %d unknown", (int)b);
  return be->available(ctx);
}

tsr_status tsr_backend_describe(tsr_context *ctx, tsr_backend_kind b, tsr_device_info *out) {
  if (!out) return tsr__fail(ctx, TSR_ERR_INVALID, "describe: NULL output");
  memset(out, 0, sizeof *out);
  b = tsr__backend_resolve(ctx, b);
  const tsr__backend *be = tsr__backend_get(b);
  if (!be) return tsr__fail(ctx, TSR_ERR_INVALID, "backend: %d unknown", (int)b);
  tsr_status st = be->available(ctx);
  if (st) return st;
  if (!be->describe)
    return tsr__fail(ctx, TSR_ERR_UNSUPPORTED, "backend %s cannot describe its machine", be->name);
  return be->describe(ctx, out);
}

tsr_backend_kind tsr_backend_resolve(tsr_context *ctx, tsr_backend_kind b) {
  return tsr__backend_resolve(ctx, b);
}

int tsr__plan_micro_tiles(tsr_backend_kind b, tsr_isa isa, int view, int (*tiles)[2], int cap) {
  const tsr__backend *be = tsr__backend_get(b);
  return be && be->micro_tiles ? be->micro_tiles(isa, view, tiles, cap) : 0;
}

const char *tsr_plan_class(tsr_backend_kind b, const tsr_problem *p) {
  const tsr__backend *be = tsr__backend_get(b);
  return be && be->plan_class && p ? be->plan_class(p) : NULL;
}

char *tsr_plan_source(tsr_backend_kind b, const tsr_problem *p, const tsr_plan *plan) {
  const tsr__backend *be = tsr__backend_get(b);
  if (!be || !be->source || !p || !plan) return NULL;
  tsr_problem q = *p;
  char msg[256];
  if (tsr_problem_check(&q, msg, sizeof msg)) return NULL;
  return be->source(&q, plan);
}

void tsr_plan_builtin(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p, tsr_plan *out) {
  const tsr__backend *be = tsr__backend_get(b);
  TSR_ASSERT(be != NULL);
  /* a GPU's table follows its device: open it first; unavailable, sm_90's
   * table stands (the run that needs the device reports why) */
  if (ctx && be->is_gpu && tsr_backend_available(ctx, b) != TSR_OK) tsr__clear(ctx);
  be->default_plan(ctx, p, out);
}

tsr_status tsr__precision_require(tsr_context *ctx, const char *backend, const tsr_problem *p,
                                  unsigned modes, tsr_precision auto_mode, tsr_precision *runs) {
  tsr_precision want = p->precision == TSR_PREC_AUTO ? auto_mode : p->precision;
  if (!(modes & (1u << want))) {
    char list[64] = "";
    for (int m = TSR_PREC_STRICT; m < TSR_PREC_COUNT; m++)
      if (modes & (1u << m))
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "",
                 tsr_precision_name((tsr_precision)m));
    return tsr__fail(ctx, TSR_ERR_UNSUPPORTED,
                     "precision: %s is not available on backend %s (it runs %s)",
                     tsr_precision_name(want), backend, list);
  }
  *runs = want;
  return TSR_OK;
}

const tsr__backend *tsr__backend_get(tsr_backend_kind k) {
  switch (k) {
    case TSR_BACKEND_CPU: return &tsr__backend_cpu;
    case TSR_BACKEND_CUDA: return &tsr__backend_cuda;
    case TSR_BACKEND_CUBLAS: return &tsr__backend_cublas;
    case TSR_BACKEND_HAND: return &tsr__backend_hand;
    default: return NULL;
  }
}

tsr_backend_kind tsr__backend_resolve(tsr_context *ctx, tsr_backend_kind k) {
  if (k != TSR_BACKEND_AUTO) return k;
  if (tsr__backend_cuda.available(ctx) == TSR_OK) return TSR_BACKEND_CUDA;
  tsr__clear(ctx);
  return TSR_BACKEND_CPU;
}

static tsr_status realize(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                          const tsr_plan *plan, tsr_plan_info *info, int light) {
  tsr__clear(ctx);
  const tsr__backend *be = tsr__backend_get(tsr__backend_resolve(ctx, b));
  if (!be) return tsr__fail(ctx, TSR_ERR_INVALID, "backend: %d unknown", (int)b);
  tsr_problem q = *p;
  char msg[512];
  tsr_status st = tsr_problem_check(&q, msg, sizeof msg);
  if (st) return tsr__fail(ctx, st, "%s", msg);
  tsr_plan_info tmp;
  return (light && be->check ? be->check : be->realize)(ctx, &q, plan, info ? info : &tmp);
}

tsr_status tsr_plan_realize(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                            const tsr_plan *plan, tsr_plan_info *info) {
  return realize(ctx, b, p, plan, info, 0);
}

tsr_status tsr__backend_check(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                              const tsr_plan *plan, tsr_plan_info *info) {
  return realize(ctx, b, p, plan, info, 1);
}
