/* libFuzzer harness: the CLI's option tables (cli/options.c, cli/common.c).
 * The input is an argument vector (arguments separated by NUL bytes) parsed
 * against a table with every option kind (flag, integer, real, float,
 * string, non-empty string, choice, the shared custom parsers, the shared
 * problem options) and one operand. Every outcome must be: go on with every
 * stored value inside its option's limits, --help on stdout, or exactly one
 * error line on stderr with no raw control character in it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static char err_buf[1 << 16], out_buf[1 << 16];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  char *argv[66];
  int argc = 0;
  argv[argc++] = "fuzz";
  for (size_t i = 0; i <= size && argc < 65;) {
    argv[argc++] = text + i;
    i += strlen(text + i) + 1;
  }
  argv[argc] = NULL;

  tsr_cli_problem_opts o;
  tsr_cli_problem_defaults(&o, "cpu");
  long long n = 5;
  double r = 0.5;
  float f = 1.0f;
  int flag = 0, choice = 0, acc = 0;
  tsr_inputs inputs = TSR_INPUTS_DYADIC;
  const char *s1 = NULL, *s2 = NULL, *operand = NULL;
  static const char *const choices[] = {"seed", "quick", NULL};
  tsr_cli_opt opts[TSR_CLI_PROBLEM_NOPTS + 10];
  size_t k = tsr_cli_problem_table(&o, opts);
  opts[k++] = (tsr_cli_opt)TSR_CLI_OPT_FLAG("--flag", &flag, "a flag");
  opts[k++] = (tsr_cli_opt)TSR_CLI_OPT_INT("--samples", &n, 1, 1000, "N", "an integer");
  opts[k++] = (tsr_cli_opt)TSR_CLI_OPT_REAL("--ratio", &r, 0.0, 1.0, "X", "a real");
  opts[k++] = (tsr_cli_opt)TSR_CLI_OPT_FLOAT("--scale", &f, -4.0, 4.0, "X", "a float");
  opts[k++] = (tsr_cli_opt)TSR_CLI_OPT_STRING("--out", &s1, "DIR", "a string");
  opts[k] = (tsr_cli_opt)TSR_CLI_OPT_STRING("--name", &s2, "S", "a non-empty string");
  opts[k++].flags = TSR_CLI_NONEMPTY;
  opts[k++] = (tsr_cli_opt)TSR_CLI_OPT_CHOICE("--preset", &choice, choices, "P", "a choice");
  opts[k++] = (tsr_cli_opt)TSR_CLI_OPT_CUSTOM("--inputs", tsr_cli_opt_inputs, &inputs, "I", "inputs");
  opts[k] = (tsr_cli_opt)TSR_CLI_OPT_CUSTOM("--accuracy", tsr_cli_opt_accuracy, &acc, "I", "accuracy");
  opts[k++].flags = TSR_CLI_HIDDEN;
  const tsr_cli_spec spec = {.verb = "fuzz", .usage = "usage: fuzz [options] [X]\n", .opts = opts,
                             .nopts = k, .operands = &operand, .max_operands = 1,
                             .operand_name = "X"};

  /* stdout and stderr into memory for the duration of the call */
  FILE *err = fmemopen(err_buf, sizeof err_buf, "w"), *out = fmemopen(out_buf, sizeof out_buf, "w");
  if (!err || !out) abort();
  FILE *old_err = stderr, *old_out = stdout;
  stderr = err;
  stdout = out;
  int rc = tsr_cli_parse(&spec, argc, argv);
  fflush(err);
  long elen = ftell(err);
  fflush(out);
  stderr = old_err;
  stdout = old_out;
  fclose(err);
  fclose(out);

  if (rc == TSR_CLI_CONTINUE) {
    if (elen != 0) abort(); /* success says nothing */
    if (n < 1 || n > 1000 || !(r >= 0.0 && r <= 1.0) || !(f >= -4.0f && f <= 4.0f)) abort();
    if (o.batch < 1 || o.batch > 65535 || !isfinite(o.alpha) || !isfinite(o.beta)) abort();
    if (s2 && !*s2) abort();
    if (choice < 0 || choice > 1) abort();
  } else if (rc == TSR_EXIT_USAGE) {
    /* exactly one line, its only control character the final newline */
    if (elen < 2 || elen >= (long)sizeof err_buf || err_buf[elen - 1] != '\n') abort();
    for (long i = 0; i < elen - 1; i++)
      if ((unsigned char)err_buf[i] < 0x20 || err_buf[i] == 0x7f) abort();
    if (strncmp(err_buf, "tessera fuzz: ", 14) != 0) abort();
  } else if (rc != TSR_EXIT_OK) {
    abort();
  }
  free(text);
  return 0;
}
