/* tessera zoo: the shape zoo (docs/zoo.md) as a table, JSON, or the
 * `tessera bench` command lines that run it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "measure/zoo.h"

static const char *const formats[] = {"table", "json", "bench", NULL};
static const char *const heldopts[] = {"all", "only", "without", NULL};

static int keep(const tsr__zoo_shape *z, const char *cls, int held) {
  if (cls && strcmp(z->cls, cls)) return 0;
  return held == 0 || (held == 1) == (z->held_back != 0);
}

/* One `tessera bench` line per (op(A), op(B), batch) group: the bench runs
 * one problem kind per invocation. */
static void print_bench(const tsr__zoo_shape *zs, int n, const char *cls, int held, int quick) {
  int *done = calloc((size_t)n, sizeof *done);
  for (int i = 0; i < n; i++) {
    if (done[i] || !keep(&zs[i], cls, held)) continue;
    printf("tessera bench --shapes ");
    for (int j = i, first = 1; j < n; j++) {
      if (done[j] || !keep(&zs[j], cls, held) || zs[j].op_a != zs[i].op_a ||
          zs[j].op_b != zs[i].op_b || zs[j].batch != zs[i].batch)
        continue;
      done[j] = 1;
      printf("%s%lldx%lldx%lld", first ? "" : ",", (long long)zs[j].m, (long long)zs[j].n,
             (long long)zs[j].k);
      first = 0;
    }
    if (zs[i].op_a == TSR_OP_T) printf(" --trans-a");
    if (zs[i].op_b == TSR_OP_T) printf(" --trans-b");
    if (zs[i].batch > 1) printf(" --batch %lld", (long long)zs[i].batch);
    printf("   # %s\n", quick ? "zoo-quick" : "zoo");
  }
  free(done);
}

int tsr_cli_zoo(int argc, char **argv) {
  long long seed = 1;
  int quick = 0, format = 0, held = 0;
  const char *cls = NULL;
  const tsr_cli_opt opts[] = {
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
                         "lines that run it, one per transpose/batch group)"),
  };
  const tsr_cli_spec spec = {
      .verb = "zoo",
      .usage = "usage: tessera zoo [--seed S] [--quick] [--class C] [--held-back H] [--format F]\n"
               "\n"
               "Lists the shape zoo: named classes of the GEMMs users run (LLM training and\n"
               "decoding, GEMV, small outputs with long K, batched and attention-like,\n"
               "tall-skinny, squares) and seeded log-uniform random shapes, with a seeded\n"
               "held-back quarter for checking that tuned plans carry over (docs/zoo.md).\n"
               "\n",
      .footer = "exit: 0 ok, 2 bad input\n",
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
  };
  int rc = tsr_cli_parse(&spec, argc, argv);
  if (rc != TSR_CLI_CONTINUE) return rc;
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
