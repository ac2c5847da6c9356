/* tessera report DIR: regenerate report.md, tables.json and the SVG charts
 * from DIR/results.json alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit/audit.h"
#include "bench/bench.h"
#include "cli.h"

int tsr_cli_report(int argc, char **argv) {
  const char *V = "report", *dir = NULL;
  double threshold = -1.0; /* the run's own */
  int quiet = 0;
  const tsr_cli_opt opts[] = {
      TSR_CLI_OPT_REAL("--unstable-threshold", &threshold, 0, HUGE_VAL, "X",
                       "flag a per-round p50 spread max/min-1 above X\n"
                       "(default: the value the run recorded, else 0.10)"),
      TSR_CLI_OPT_FLAG("--quiet", &quiet, "do not print the tables"),
  };
  const tsr_cli_spec spec = {
      .verb = V,
      .usage = "usage: tessera report DIR [--unstable-threshold X] [--quiet]\n"
               "\n"
               "Recomputes every table value of a bench run from the raw samples in\n"
               "DIR/results.json (schema tessera-bench/1 to /3) and rewrites DIR/report.md,\n"
               "DIR/tables.json and DIR/ratios_<metric>.svg; prints the tables.\n"
               "\n",
      .footer = "DIR/results.json must be a regular file of at most 1 GiB that `tessera audit`\n"
                "can load and whose structure it accepts (schema, protocol, routes, rows,\n"
                "samples); an interrupted run is reported as such.\n"
                "\n"
                "exit: 0 written, 1 the run has failed rows, 2 bad input or unreadable results\n",
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
      .operands = &dir,
      .max_operands = 1,
      .operand_name = "DIR",
  };
  int prc = tsr_cli_parse(&spec, argc, argv);
  if (prc != TSR_CLI_CONTINUE) return prc;
  if (!dir) return tsr_cli_usage_error(V, "DIR: missing (the directory of a bench run)");
  /* Refuses what the audit refuses as unusable or malformed (not what it
   * finds wrong in a well-formed run: an interrupted run still reports). */
  char msg[1200], *md = NULL;
  json_t *doc = NULL;
  if (tsr__audit_load_results(dir, &doc, msg, sizeof msg)) return tsr_cli_usage_error(V, "DIR: %s", msg);
  if (tsr__bench_report(doc, dir, threshold, &md, msg, sizeof msg)) {
    json_decref(doc);
    return tsr_cli_usage_error(V, "DIR: '%s': %s", dir, msg);
  }
  if (!quiet) fputs(md, stdout);
  free(md);
  int failed = 0;
  const json_t *rows = json_object_get(doc, "rows");
  for (size_t i = 0; i < json_array_size(rows); i++) {
    const char *st = json_string_value(json_object_get(json_array_get(rows, i), "status"));
    if (!st || strcmp(st, "ok")) failed++;
  }
  json_decref(doc);
  return failed ? TSR_EXIT_FAIL : TSR_EXIT_OK;
}
