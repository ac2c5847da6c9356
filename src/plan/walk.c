/* Program walks: permutations of the linear physical ordinal onto the H×W
 * output-tile grid (BRIEF §4). Device code uses the same uint32 formulas,
 * emitted from src/emit. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sys/assert.h"
#include "core/context.h"

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* A positive uint32 in decimal; *end past it. 0 on failure. */
static int parse_u32(const char *s, const char **end, uint32_t *v) {
  if (!isdigit((unsigned char)*s)) return 0;
  uint64_t acc = 0;
  while (isdigit((unsigned char)*s)) {
    acc = acc * 10 + (uint64_t)(*s - '0');
    if (acc > UINT32_MAX) return 0;
    s++;
  }
  *v = (uint32_t)acc;
  *end = s;
  return 1;
}

tsr_status tsr_walk_parse(const char *text, tsr_walk *w, char *msg, size_t cap) {
  if (!text) return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "walk: empty");
  tsr_walk out = {TSR_WALK_LINEAR, 1, 1};
  const char *s;
  if (strcmp(text, "linear") == 0) {
    *w = out;
    return TSR_OK;
  } else if (strncmp(text, "rect:", 5) == 0) {
    s = text + 5;
    out.kind = TSR_WALK_RECT;
    if (!parse_u32(s, &s, &out.r) || (*s != 'x' && *s != 'X') || !parse_u32(s + 1, &s, &out.c) ||
        *s)
      return tsr__failbuf(msg, cap, TSR_ERR_PARSE,
                          "walk: '%s' is not rect:RxC with R, C in 1..4294967295", text);
    if (out.r == 0 || out.c == 0)
      return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "walk: '%s' has a zero %s", text,
                          out.r == 0 ? "R" : "C");
  } else if (strncmp(text, "stripe:", 7) == 0) {
    s = text + 7;
    out.kind = TSR_WALK_STRIPE;
    if (!parse_u32(s, &s, &out.r) || *s)
      return tsr__failbuf(msg, cap, TSR_ERR_PARSE,
                          "walk: '%s' is not stripe:R with R in 1..4294967295", text);
    if (out.r == 0) return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "walk: '%s' has a zero R", text);
  } else {
    return tsr__failbuf(msg, cap, TSR_ERR_PARSE,
                        "walk: '%s' is not one of linear, rect:RxC, stripe:R", text);
  }
  *w = out;
  return TSR_OK;
}

int tsr_walk_format(const tsr_walk *w, char *buf, size_t cap) {
  switch (w->kind) {
    case TSR_WALK_RECT: return snprintf(buf, cap, "rect:%ux%u", w->r, w->c);
    case TSR_WALK_STRIPE: return snprintf(buf, cap, "stripe:%u", w->r);
    default: return snprintf(buf, cap, "linear");
  }
}

tsr_status tsr_walk_check(const tsr_walk *w, uint32_t h, uint32_t wdt, char *msg, size_t cap) {
  if (h == 0 || wdt == 0)
    return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "walk: grid %ux%u has a zero extent", h, wdt);
  if ((uint64_t)h * wdt > UINT32_MAX)
    return tsr__failbuf(msg, cap, TSR_ERR_OVERFLOW,
                        "walk: grid %ux%u has %llu programs, more than the uint32 launch index",
                        h, wdt, (unsigned long long)h * wdt);
  switch (w->kind) {
    case TSR_WALK_LINEAR: return TSR_OK;
    case TSR_WALK_RECT:
      if (w->r == 0 || w->c == 0)
        return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "walk: rect:%ux%u has a zero extent", w->r,
                            w->c);
      break;
    case TSR_WALK_STRIPE:
      if (w->r == 0) return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "walk: stripe:0");
      break;
    default:
      return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "walk: kind %d unknown", (int)w->kind);
  }
  /* The stripe period R*W is the divisor in the device formula; with R
   * clamped to H it is at most H*W, but a request is checked as given too,
   * so that a caller who skips normalization cannot wrap it. */
  uint64_t rw = (uint64_t)min_u32(w->r, h) * wdt;
  if (rw > UINT32_MAX)
    return tsr__failbuf(msg, cap, TSR_ERR_OVERFLOW, "walk: R*W = %llu exceeds uint32",
                        (unsigned long long)rw);
  return TSR_OK;
}

void tsr_walk_normalize(tsr_walk *w, uint32_t h, uint32_t wdt) {
  switch (w->kind) {
    case TSR_WALK_RECT:
      w->r = min_u32(w->r, h);
      w->c = min_u32(w->c, wdt);
      if (w->r == 1 || w->c == wdt) { /* whole rows in order: linear */
        *w = (tsr_walk){TSR_WALK_LINEAR, 1, 1};
      } else if (w->c == 1) { /* one column per rectangle: a stripe */
        *w = (tsr_walk){TSR_WALK_STRIPE, w->r, 1};
      }
      break;
    case TSR_WALK_STRIPE:
      w->r = min_u32(w->r, h);
      w->c = 1;
      if (w->r == 1 || wdt == 1) *w = (tsr_walk){TSR_WALK_LINEAR, 1, 1};
      break;
    default:
      *w = (tsr_walk){TSR_WALK_LINEAR, 1, 1};
      break;
  }
}

void tsr_walk_map(const tsr_walk *w, uint32_t h, uint32_t wdt, uint32_t i, uint32_t *row,
                  uint32_t *col) {
  /* A checked walk (non-zero R, C: they divide below) and an ordinal inside
   * the grid; every caller loops below H*W. */
  TSR_ASSERT((uint64_t)i < (uint64_t)h * wdt);
  TSR_ASSERT(w->kind == TSR_WALK_LINEAR || (w->r > 0 && (w->kind != TSR_WALK_RECT || w->c > 0)));
  switch (w->kind) {
    case TSR_WALK_RECT: {
      uint32_t r = min_u32(w->r, h), c = min_u32(w->c, wdt);
      uint32_t period = r * wdt; /* checked <= UINT32_MAX */
      uint32_t stripe_start = (i / period) * r;
      uint32_t sh = min_u32(r, h - stripe_start);
      uint32_t local = i % period;
      uint32_t column_start = (local / (sh * c)) * c;
      uint32_t sw = min_u32(c, wdt - column_start);
      uint32_t inside = local % (sh * c);
      *row = stripe_start + inside / sw;
      *col = column_start + inside % sw;
      return;
    }
    case TSR_WALK_STRIPE: {
      uint32_t r = min_u32(w->r, h);
      uint32_t period = r * wdt;
      uint32_t stripe_start = (i / period) * r;
      uint32_t sh = min_u32(r, h - stripe_start);
      uint32_t local = i % period;
      *row = stripe_start + local % sh;
      *col = local / sh;
      return;
    }
    default:
      *row = i / wdt;
      *col = i % wdt;
      return;
  }
}
