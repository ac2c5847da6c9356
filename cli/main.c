/* tessera: plan, generate, run, validate and measure FP32 GEMM. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const tsr_cli_verb verbs[] = {
    {"gemm", "run one GEMM, validate every element against the FP64 oracle, time it", tsr_cli_gemm},
    {"plan", "print the realized plan for a shape, or the rejection", tsr_cli_plan},
    {"walk", "print or check a program walk over a tile grid", tsr_cli_walk},
    {"tune", "search plans under a budget, validate, replay, store in the tuning DB", tsr_cli_tune},
    {"emit", "print the generated CUDA C source of a plan", tsr_cli_emit},
    {"bench", "run the measurement protocol over every available route; raw JSON + report", tsr_cli_bench},
    {"report", "regenerate a bench run's report.md, tables.json and SVG from its raw JSON", tsr_cli_report},
    {"audit", "independently re-derive and check a bench results directory (--self-test)", tsr_cli_audit},
    {"zoo", "list the shape zoo (classes of the GEMMs users run) or the bench lines that run it", tsr_cli_zoo},
    {"bench-run", NULL, tsr_cli_bench_run}, /* hidden: one measurement per child process */
};

static void usage(FILE *f) {
  fprintf(f,
          "usage: tessera <verb> [options]   (tessera <verb> --help for each)\n"
          "\nverbs:\n");
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
    if (verbs[i].summary) fprintf(f, "  %-8s %s\n", verbs[i].name, verbs[i].summary);
  fprintf(f,
          "\nexit codes: 0 ok, 1 validation failure, 2 bad input\n"
          "tessera %s\n",
          tsr_version());
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return TSR_EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return TSR_EXIT_OK;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("tessera %s\n", tsr_version());
    return TSR_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
    if (!strcmp(argv[1], verbs[i].name)) return verbs[i].run(argc - 1, argv + 1);
  return tsr_cli_usage_error(NULL, "unknown verb '%s' (tessera --help lists them)", argv[1]);
}
