#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int tsr_cli_usage_error(const char *verb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tessera %s: ", verb);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return TSR_EXIT_USAGE;
}

int tsr_cli_option_index(const char *a, const char *const *names, int n) {
  for (int j = 0; j < n; j++)
    if (!strcmp(a, names[j])) return j;
  return -1;
}

int tsr_cli_parse_float(const char *verb, const char *name, const char *text, float *out) {
  char *end;
  errno = 0;
  double v = strtod(text ? text : "", &end);
  if (!text || !*text || *end || errno || !isfinite(v) || fabs(v) > 3.4e38) {
    tsr_cli_usage_error(verb, "%s: '%s' is not a finite number", name, text ? text : "");
    return -1;
  }
  *out = (float)v;
  return 0;
}

int tsr_cli_parse_inputs(const char *verb, const char *text, tsr_inputs *out) {
  char msg[256];
  if (tsr_inputs_parse(text, out, msg, sizeof msg)) {
    tsr_cli_usage_error(verb, "--%s", msg);
    return -1;
  }
  return 0;
}

int tsr_cli_parse_precision(const char *verb, const char *text, tsr_precision *out) {
  char msg[256];
  if (tsr_precision_parse(text, out, msg, sizeof msg)) {
    tsr_cli_usage_error(verb, "--%s", msg);
    return -1;
  }
  return 0;
}

int tsr_cli_parse_int(const char *verb, const char *name, const char *text, long long lo,
                      long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(text ? text : "", &end, 10);
  if (!text || !*text || *end || errno || v < lo || v > hi) {
    tsr_cli_usage_error(verb, "%s: '%s' is not an integer in %lld..%lld", name, text ? text : "",
                        lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

#include <string.h>

const char tsr_cli_problem_help[] =
    "  --shape MxNxK   extents of C = alpha*op(A)*op(B) + beta*C (required)\n"
    "  --batch B       independent batch items (default 1)\n"
    "  --trans-a       op(A) = A^T (A stored K×M)\n"
    "  --trans-b       op(B) = B^T (B stored N×K)\n"
    "  --alpha A       scalar (default 1)\n"
    "  --beta B        scalar (default 0: C is never read)\n"
    "  --plan TEXT     key=value,... over the backend's default plan, e.g.\n"
    "                  bm=128,bn=128,bk=16,walk=rect:4x8 (tessera plan shows every key)\n"
    "  --backend B     auto (default: cuda when a GPU is usable, else cpu), cpu, cuda,\n"
    "                  cublas, hand\n"
    "  --precision P   auto (default: the fastest mode meeting the FP32 contract),\n"
    "                  strict (IEEE FP32 FFMA), fp32x3 (tensor-core 3xTF32 split, same\n"
    "                  contract), tf32 (TF32 operands: opt-in, its own bound);\n"
    "                  docs/accuracy.md\n";

void tsr_cli_problem_defaults(tsr_cli_problem_opts *o, const char *backend) {
  memset(o, 0, sizeof *o);
  o->backend = backend;
  o->batch = 1;
  o->alpha = 1.0f;
  o->beta = 0.0f;
}

int tsr_cli_problem_option(const char *verb, int argc, char **argv, int *i,
                           tsr_cli_problem_opts *o) {
  const char *a = argv[*i];
  if (!strcmp(a, "--trans-a")) return o->trans_a = 1;
  if (!strcmp(a, "--trans-b")) return o->trans_b = 1;
  static const char *const valued[] = {"--shape", "--plan",  "--backend",  "--batch",
                                       "--alpha", "--beta", "--precision"};
  int k = tsr_cli_option_index(a, valued, 7);
  if (k < 0) return 0;
  if (*i + 1 >= argc) {
    tsr_cli_usage_error(verb, "%s: needs a value", a);
    return -1;
  }
  const char *v = argv[++*i];
  switch (k) {
    case 0: o->shape = v; return 1;
    case 1: o->plan = v; return 1;
    case 2: o->backend = v; return 1;
    case 3: return tsr_cli_parse_int(verb, "--batch", v, 1, 65535, &o->batch) ? -1 : 1;
    case 4: return tsr_cli_parse_float(verb, "--alpha", v, &o->alpha) ? -1 : 1;
    case 5: return tsr_cli_parse_float(verb, "--beta", v, &o->beta) ? -1 : 1;
    default: return tsr_cli_parse_precision(verb, v, &o->precision) ? -1 : 1;
  }
}

int tsr_cli_problem_finish(const char *verb, tsr_context *ctx, const tsr_cli_problem_opts *o,
                           tsr_problem *p, tsr_backend_kind *backend, tsr_plan *plan,
                           char *source, size_t cap) {
  char msg[512];
  int64_t m, n, k;
  if (!o->shape) return tsr_cli_usage_error(verb, "--shape: required (MxNxK)");
  if (tsr_shape_parse(o->shape, &m, &n, &k, msg, sizeof msg))
    return tsr_cli_usage_error(verb, "%s", msg);
  tsr_problem_init(p, m, n, k);
  p->batch = o->batch;
  p->op_a = o->trans_a ? TSR_OP_T : TSR_OP_N;
  p->op_b = o->trans_b ? TSR_OP_T : TSR_OP_N;
  p->alpha = o->alpha;
  p->beta = o->beta;
  p->precision = o->precision;
  if (tsr_problem_check(p, msg, sizeof msg)) return tsr_cli_usage_error(verb, "%s", msg);
  tsr_backend_kind b;
  if (tsr_backend_parse(o->backend, &b, msg, sizeof msg)) return tsr_cli_usage_error(verb, "%s", msg);
  if (b == TSR_BACKEND_AUTO)
    b = tsr_backend_available(ctx, TSR_BACKEND_CUDA) == TSR_OK ? TSR_BACKEND_CUDA : TSR_BACKEND_CPU;
  *backend = b;
  tsr_status st = tsr_plan_lookup(ctx, b, p, plan, source, cap);
  if (st) return tsr_cli_usage_error(verb, "%s", tsr_context_message(ctx));
  if (o->plan && tsr_plan_parse(o->plan, plan, msg, sizeof msg))
    return tsr_cli_usage_error(verb, "%s", msg);
  return TSR_EXIT_OK;
}
