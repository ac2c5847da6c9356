#include <stdlib.h>

#include "sys/assert.h"
#include "core/backend.h"
#include "core/context.h"

tsr_status tsr_context_create(tsr_context **out) {
  if (!out) return TSR_ERR_INVALID;
  *out = calloc(1, sizeof **out);
  return *out ? TSR_OK : TSR_ERR_NOMEM;
}

void tsr_context_destroy(tsr_context *ctx) {
  if (!ctx) return;
  for (int k = TSR_BACKEND_CPU; k < TSR_BACKEND_COUNT; k++) {
    const tsr__backend *be = tsr__backend_get((tsr_backend_kind)k);
    TSR_ASSERT(be); /* the registry has every kind but AUTO */
    if (be->context_release && ctx->backend_state[k]) be->context_release(ctx);
  }
  free(ctx);
}

const char *tsr_context_message(const tsr_context *ctx) { return ctx ? ctx->msg : ""; }
