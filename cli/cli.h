/* The tessera command: one function per verb, each with its own --help.
 * Exit codes: 0 ok, 1 validation/audit failure, 2 bad input or unusable
 * environment for the request. */
#ifndef TSR_CLI_H
#define TSR_CLI_H

#include "tessera.h"

#define TSR_EXIT_OK 0
#define TSR_EXIT_FAIL 1
#define TSR_EXIT_USAGE 2

typedef struct {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv); /* argv[0] is the verb */
} tsr_cli_verb;

int tsr_cli_gemm(int argc, char **argv);
int tsr_cli_plan(int argc, char **argv);
int tsr_cli_walk(int argc, char **argv);
int tsr_cli_emit(int argc, char **argv);
int tsr_cli_tune(int argc, char **argv);
int tsr_cli_bench(int argc, char **argv);
int tsr_cli_report(int argc, char **argv);
int tsr_cli_audit(int argc, char **argv);
/* Hidden: one bench measurement in its own process (run by tsr_cli_bench). */
int tsr_cli_bench_run(int argc, char **argv);

/* Shared option helpers (cli/common.c). */
/* Prints "tessera <verb>: <msg>" to stderr and returns TSR_EXIT_USAGE. */
int tsr_cli_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Index of option `a` in names[0..n), or -1. */
int tsr_cli_option_index(const char *a, const char *const *names, int n);
/* Parse a finite float for option `name`; 0 on success. */
int tsr_cli_parse_float(const char *verb, const char *name, const char *text, float *out);
/* Parse --inputs (dyadic | random | normal | wide); 0 on success. */
int tsr_cli_parse_inputs(const char *verb, const char *text, tsr_inputs *out);
/* Parse --precision (auto | strict | fp32x3 | tf32); 0 on success. */
int tsr_cli_parse_precision(const char *verb, const char *text, tsr_precision *out);
/* Parse an integer in [lo, hi] for option `name`; 0 on success. */
int tsr_cli_parse_int(const char *verb, const char *name, const char *text, long long lo,
                      long long hi, long long *out);

#endif

/* Problem/plan options shared by gemm, plan, emit (and later verbs). */
typedef struct {
  const char *shape;     /* --shape MxNxK (required) */
  const char *plan;      /* --plan TEXT over the backend's default plan */
  const char *backend;   /* --backend auto|cpu|cuda|cublas|hand */
  long long batch;       /* --batch */
  int trans_a, trans_b;  /* --trans-a, --trans-b */
  float alpha, beta;     /* --alpha, --beta */
  tsr_precision precision; /* --precision */
} tsr_cli_problem_opts;

void tsr_cli_problem_defaults(tsr_cli_problem_opts *o, const char *backend);
/* If argv[*i] is a shared option, consume it (and its value): returns 1;
 * returns 0 when not a shared option, -1 after printing a usage error. */
int tsr_cli_problem_option(const char *verb, int argc, char **argv, int *i,
                           tsr_cli_problem_opts *o);
extern const char tsr_cli_problem_help[];
/* Build and check the problem; resolve the backend (auto → cuda when usable,
 * else cpu); default plan (tuning database, else built-in) overlaid by
 * --plan; source (may be NULL) receives where the plan came from, as
 * tsr_plan_lookup says it. Prints one usage line and returns TSR_EXIT_USAGE
 * on bad input. */
int tsr_cli_problem_finish(const char *verb, tsr_context *ctx, const tsr_cli_problem_opts *o,
                           tsr_problem *p, tsr_backend_kind *backend, tsr_plan *plan,
                           char *source, size_t cap);
