#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"

static const char *const status_text[] = {
#define TSR_X_TEXT(name, msg) msg,
    TSR_STATUS_LIST(TSR_X_TEXT)
#undef TSR_X_TEXT
};

static const char *const status_names[] = {
#define TSR_X_NAME(name, msg) #name,
    TSR_STATUS_LIST(TSR_X_NAME)
#undef TSR_X_NAME
};

const char *tsr_status_str(tsr_status s) {
  if ((int)s < 0 || s >= TSR_STATUS_COUNT) return "unknown status";
  return status_text[s];
}

const char *tsr_status_name(tsr_status s) {
  if ((int)s < 0 || s >= TSR_STATUS_COUNT) return "TSR_STATUS_UNKNOWN";
  return status_names[s];
}

tsr_status tsr__fail(tsr_context *ctx, tsr_status s, const char *fmt, ...) {
  if (ctx) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->msg, sizeof ctx->msg, fmt, ap);
    va_end(ap);
  }
  return s;
}

tsr_status tsr__failbuf(char *msg, size_t cap, tsr_status s, const char *fmt, ...) {
  if (msg && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
  }
  return s;
}

void tsr__clear(tsr_context *ctx) {
  if (ctx) ctx->msg[0] = '\0';
}
