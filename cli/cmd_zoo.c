/* tessera zoo: the shape zoo (docs/zoo.md) as a table, JSON, or the
 * `tessera bench` command line that runs it in one run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit/audit.h"
#include "bench/bench.h"
#include "cli.h"
#include "measure/zoo.h"

static const char *const formats[] = {"table", "json", "bench", NULL};
static const char *const heldopts[] = {"all", "only", "without", NULL};

static int keep(const tsr__zoo_shape *z, const char *cls, int held) {
  if (cls && strcmp(z->cls, cls)) return 0;
  return held == 0 || (held == 1) == (z->held_back != 0);
}

/* The `tessera bench` line that runs the listed shapes in one run: each
 * label is a bench shape token with its own batch and ops (docs/protocol.md). */
static void print_bench(const tsr__zoo_shape *zs, int n, const char *cls, int held, int quick) {
  int first = 1;
  for (int i = 0; i < n; i++) {
    if (!keep(&zs[i], cls, held)) continue;
    printf("%s%s", first ? "tessera bench --shapes " : ",", zs[i].label);
    first = 0;
  }
  if (!first) printf("   # %s\n", quick ? "zoo-quick" : "zoo");
}

/* ---- --summarize: per-class standings of bench runs over the zoo -------- */
#define MAX_DIRS 64

/* The rows of one run: its tables recomputed from results.json (never the
 * derived tables.json), the metric's paired ratios of ref against peer, the
 * accuracy receipts of both. 0, or 2 after a message naming the directory. */
static int summarize_dir(const char *dir, const char *metric, const char *ref, const char *peer,
                         const tsr__zoo_shape *zs, int nz, tsr__zoo_row **rows, int *nrows) {
  char msg[1200];
  json_t *doc = NULL;
  if (tsr__audit_load_results(dir, &doc, msg, sizeof msg))
    return tsr_cli_usage_error("zoo", "--summarize: %s", msg);
  json_t *tables = tsr__bench_tables(doc, 0.10, msg, sizeof msg);
  if (!tables) {
    json_decref(doc);
    return tsr_cli_usage_error("zoo", "--summarize: '%s': %s", dir, msg);
  }
  int rc = 0, found = tsr__bench_zoo_rows(doc, tables, metric, ref, peer, zs, nz, rows, nrows, msg,
                                          sizeof msg);
  if (found < 0) rc = tsr_cli_usage_error("zoo", "--summarize: '%s' %s", dir, msg);
  else if (!found)
    rc = tsr_cli_usage_error("zoo", "--summarize: '%s' has no paired %s / %s ratios in %s", dir,
                             ref, peer, metric);
  json_decref(tables);
  json_decref(doc);
  return rc;
}

static int summarize(const char **dirs, int ndirs, const char *metric, const char *ref,
                     const char *peer, uint64_t seed) {
  int nz = tsr__zoo(seed, 0, NULL, 0);
  tsr__zoo_shape *zs = calloc((size_t)nz, sizeof *zs);
  if (!zs) return tsr_cli_usage_error("zoo", "out of memory");
  tsr__zoo(seed, 0, zs, nz);
  tsr__zoo_row *rows = NULL;
  int nrows = 0, rc = 0;
  for (int d = 0; !rc && d < ndirs; d++)
    rc = summarize_dir(dirs[d], metric, ref, peer, zs, nz, &rows, &nrows);
  if (!rc) {
    char *md = tsr__bench_zoo_summary_md(rows, nrows, ref, peer, metric);
    if (md) fputs(md, stdout);
    else rc = tsr_cli_usage_error("zoo", "out of memory");
    free(md);
  }
  free(rows);
  free(zs);
  return rc ? rc : TSR_EXIT_OK;
}

int tsr_cli_zoo(int argc, char **argv) {
  long long seed = 1;
  int quick = 0, format = 0, held = 0;
  const char *cls = NULL, *metric = NULL, *ref = NULL, *peer = NULL;
  int summ = 0;
  const char *dirs[MAX_DIRS] = {0};
  const tsr_cli_opt opts[] = {
      TSR_CLI_OPT_FLAG("--summarize", &summ,
                       "instead of listing: per-class geometric means, worst shapes and\n"
                       "accuracy of the bench runs DIR... over the zoo (tables recomputed\n"
                       "from each DIR/results.json)"),
      TSR_CLI_OPT_STRING("--metric", &metric, "M",
                         "with --summarize: the metric (default gpu_batch, or wall_batch\n"
                         "for runs without GPU metrics)"),
      TSR_CLI_OPT_STRING("--route", &ref, "R",
                         "with --summarize: the measured route (default tessera-gpu, or\n"
                         "tessera-cpu for CPU runs)"),
      TSR_CLI_OPT_STRING("--peer", &peer, "P",
                         "with --summarize: the peer (default cublas, or openblas)"),
      TSR_CLI_OPT_INT("--seed", &seed, 0, 0x7fffffffffffffffLL, "S",
                      "the generator's seed (default 1): the random class and the\n"
                      "held-back quarter"),
      TSR_CLI_OPT_FLAG("--quick", &quick, "the zoo-quick subset (two smaller shapes per class)"),
      TSR_CLI_OPT_STRING("--class", &cls, "C",
                         "one class: square, llm-train, llm-decode, gemv, long-k,\n"
                         "batched, tall-skinny, random"),
      TSR_CLI_OPT_CHOICE("--held-back", &held, heldopts, "H",
                         "all (default), only the held-back quarter, or without it"),
      TSR_CLI_OPT_CHOICE("--format", &format, formats, "F",
                         "table (default), json, or bench (the tessera bench command\n"
                         "line that runs the listed shapes in one run; all of the zoo\n"
                         "is also tessera bench --preset zoo or zoo-quick)"),
  };
  const tsr_cli_spec spec = {
      .verb = "zoo",
      .usage = "usage: tessera zoo [--seed S] [--quick] [--class C] [--held-back H] [--format F]\n"
               "       tessera zoo --summarize [--metric M] [--route R] [--peer P] DIR...\n"
               "\n"
               "Lists the shape zoo: named classes of the GEMMs users run (LLM training and\n"
               "decoding, GEMV, small outputs with long K, batched and attention-like,\n"
               "tall-skinny, squares) and seeded log-uniform random shapes, with a seeded\n"
               "held-back quarter for checking that tuned plans carry over (docs/zoo.md).\n"
               "\n",
      .footer = "exit: 0 ok, 2 bad input\n",
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
      .operands = dirs,
      .max_operands = MAX_DIRS,
      .operand_name = "DIR",
  };
  int rc = tsr_cli_parse(&spec, argc, argv);
  if (rc != TSR_CLI_CONTINUE) return rc;
  int ndirs = 0;
  while (ndirs < MAX_DIRS && dirs[ndirs]) ndirs++;
  if (!summ && ndirs)
    return tsr_cli_usage_error("zoo", "DIR '%s': directories are read only with --summarize", dirs[0]);
  if (!summ && (metric || ref || peer))
    return tsr_cli_usage_error("zoo", "--metric, --route and --peer go with --summarize");
  if (summ) {
    if (!ndirs) return tsr_cli_usage_error("zoo", "--summarize: no DIR (bench results directories)");
    int cpu = ref ? strstr(ref, "cpu") != NULL : 0;
    if (!ref && !metric) {
      /* CPU runs have no GPU metrics: look at the first run's protocol */
      json_t *doc = NULL;
      char msg[1200];
      if (!tsr__audit_load_results(dirs[0], &doc, msg, sizeof msg)) {
        const json_t *rts = json_object_get(doc, "routes");
        for (size_t i = 0; i < json_array_size(rts); i++)
          if (!strcmp(json_string_value(json_object_get(json_array_get(rts, i), "name")) ?: "",
                      "tessera-cpu"))
            cpu = 1;
        json_decref(doc);
      }
    }
    return summarize(dirs, ndirs, metric ? metric : cpu ? "wall_batch" : "gpu_batch",
                     ref ? ref : cpu ? "tessera-cpu" : "tessera-gpu",
                     peer ? peer : cpu ? "openblas" : "cublas", (uint64_t)seed);
  }
  if (cls) {
    int found = 0;
    for (int c = 0; tsr__zoo_classes[c]; c++) found |= !strcmp(tsr__zoo_classes[c], cls);
    if (!found) return tsr_cli_usage_error("zoo", "--class: '%s' is not a zoo class (see --help)", cls);
  }
  int n = tsr__zoo((uint64_t)seed, quick, NULL, 0);
  tsr__zoo_shape *zs = calloc((size_t)n, sizeof *zs);
  if (!zs) return tsr_cli_usage_error("zoo", "out of memory");
  tsr__zoo((uint64_t)seed, quick, zs, n);
  if (format == 2) {
    print_bench(zs, n, cls, held, quick);
  } else if (format == 1) {
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
      if (keep(&zs[i], cls, held))
        json_array_append_new(
            a, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:s, s:s, s:b}", "class", zs[i].cls,
                         "label", zs[i].label, "m", (json_int_t)zs[i].m, "n", (json_int_t)zs[i].n,
                         "k", (json_int_t)zs[i].k, "batch", (json_int_t)zs[i].batch, "op_a",
                         zs[i].op_a == TSR_OP_T ? "T" : "N", "op_b",
                         zs[i].op_b == TSR_OP_T ? "T" : "N", "held_back", zs[i].held_back));
    json_t *doc = json_pack("{s:s, s:I, s:b, s:o}", "schema", "tessera-zoo/1", "seed",
                            (json_int_t)seed, "quick", quick, "shapes", a);
    json_dumpf(doc, stdout, JSON_INDENT(1));
    printf("\n");
    json_decref(doc);
  } else {
    printf("%-12s %-26s %7s %7s %7s %6s %4s %s\n", "class", "label", "M", "N", "K", "batch", "ops",
           "held back");
    for (int i = 0; i < n; i++)
      if (keep(&zs[i], cls, held))
        printf("%-12s %-26s %7lld %7lld %7lld %6lld %c%c   %s\n", zs[i].cls, zs[i].label,
               (long long)zs[i].m, (long long)zs[i].n, (long long)zs[i].k, (long long)zs[i].batch,
               zs[i].op_a == TSR_OP_T ? 'T' : 'N', zs[i].op_b == TSR_OP_T ? 'T' : 'N',
               zs[i].held_back ? "yes" : "");
  }
  free(zs);
  return TSR_EXIT_OK;
}
