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

/* Shared option helpers (cli/common.c). */
/* Prints "tessera <verb>: <msg>" to stderr and returns TSR_EXIT_USAGE. */
int tsr_cli_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parse a finite float for option `name`; 0 on success. */
int tsr_cli_parse_float(const char *verb, const char *name, const char *text, float *out);
/* Parse an integer in [lo, hi] for option `name`; 0 on success. */
int tsr_cli_parse_int(const char *verb, const char *name, const char *text, long long lo,
                      long long hi, long long *out);

#endif
