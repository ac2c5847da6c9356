/* Argument helpers of the standalone tools (gpu_bench, bench_cpu): one-line
 * usage errors with the tool's name, and numbers checked whole and in range. */
#ifndef TSR_TOOLS_TOOL_ARGS_H
#define TSR_TOOLS_TOOL_ARGS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* The tool's name in messages; each tool defines it. */
extern const char *const tool_name;

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", tool_name);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 2;
}

/* v as a number in [lo, hi] into *out; 0, or 2 after one line naming opt. */
static __attribute__((unused)) int parse_number(const char *opt, const char *v, double lo,
                                                double hi, double *out) {
  char *end;
  double x = strtod(v, &end);
  if (end == v || *end || !(x >= lo && x <= hi))
    return usage_error("%s: '%s' is not a number in [%g, %g]", opt, v, lo, hi);
  *out = x;
  return 0;
}

#endif
