/* tessera audit DIR: the independent audit of a bench results directory
 * (src/audit/, docs/audit.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "bench/bench.h"
#include "cli.h"

/* --digest: sha256:HEX (or bare HEX) into the 65-byte buffer at opt->dest. */
static int opt_digest(const char *verb, const tsr_cli_opt *opt, const char *text) {
  if (tsr__audit_parse_digest(text, opt->dest))
    return tsr_cli_usage_error(verb, "--digest: '%.80s' is not a SHA-256 (64 hex digits, "
                                     "optionally after 'sha256:')", text), -1;
  return 0;
}

static const char audit_usage[] =
    "usage: tessera audit [--json] [--current-artifacts] [--digest D] [--self-test] DIR\n"
    "\n"
    "DIR with a combined.json (tessera-mpi bench): every rank directory is audited\n"
    "as below, then the combination (each directory present with its recorded\n"
    "SHA-256 and digest, every shape of the command measured once by the rank the\n"
    "division deals it to, one device model, report.md regenerated and compared).\n"
    "\n"
    "Re-derives a bench results directory from its raw data, without the bench's\n"
    "statistics, order or validation code, and rejects it on any discrepancy:\n"
    "schema and protocol parameters; every (round, shape, route) row exactly once;\n"
    "sample counts as declared, every sample finite and positive, positive call\n"
    "counts; element counts M×N×batch; validation receipts (or the row reported\n"
    "failed); no instrumented/profiled row; the realized order equal to the\n"
    "documented design and balanced; every tables.json value and paired ratio and\n"
    "every number in report.md recomputed from the raw nanoseconds (1e-9 relative);\n"
    "source and artifact hashes recorded (and unchanged during the run); every field\n"
    "with a second source against it (calibration, child run time, sequence,\n"
    "timestamps, argv, device, threads, oracle keys, plans, receipts, logs) and the\n"
    "design the recorded command line implies; report.md, tables.json and every\n"
    "chart regenerated and compared whole; the hash chain and the digest.\n"
    "\n";
static const char audit_footer[] =
    "Each finding prints as 'REJECT <reason>: <row or field>: <detail>'; the reasons\n"
    "are listed in docs/audit.md.\n"
    "exit: 0 pass, 1 audit failure (or a self-test case not rejected), 2 unusable\n"
    "input (missing directory or file, truncated or non-JSON file, bad option)\n";

/* --self-test: the verdict on the corrupted copies, as text or JSON. */
static int audit_self_test(const char *dir, const tsr__audit_options *opt, int json) {
  char msg[1200];
  json_t *cases = json ? json_array() : NULL;
  int rc = tsr__audit_self_test(dir, opt, json ? NULL : stdout, cases, msg, sizeof msg);
  if (rc == 2) {
    json_decref(cases);
    return tsr_cli_usage_error("audit", "%s", msg);
  }
  if (json) {
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string(TSR_AUDIT_SCHEMA));
    json_object_set_new(o, "dir", json_string(dir));
    json_object_set_new(o, "self_test", json_string(rc ? "fail" : "pass"));
    json_object_set_new(o, "cases", cases);
    json_dumpf(o, stdout, JSON_INDENT(2));
    printf("\n");
    json_decref(o);
  } else
    printf("self-test: %s\n", rc ? "FAIL" : "PASS");
  return rc ? TSR_EXIT_FAIL : TSR_EXIT_OK;
}

/* The text verdict: each finding, the counts, the evidence, PASS or FAIL. */
static void print_verdict(const tsr__audit_result *res, const char *dir, const tsr__audit_options *opt) {
  for (size_t i = 0; i < res->n; i++)
    printf("REJECT %s: %s: %s\n", tsr__audit_reason_name(res->items[i].reason), res->items[i].where,
           res->items[i].detail);
  if (res->total > res->n) printf("(%zu more findings not shown)\n", res->total - res->n);
  printf("audit %s: %zu rows (%zu ok, %zu failed) over %d rounds × %d shapes × %d routes; "
         "%zu samples; %zu receipts, %lld elements validated; order %s; recomputed %zu table "
         "cells, %zu paired ratios, %zu report numbers; artifacts %s",
         dir, res->rows, res->rows_ok, res->rows_failed, res->rounds, res->shapes, res->routes,
         res->samples, res->receipts, (long long)res->elements,
         res->order_balanced ? "= design, balanced" : "NOT balanced", res->cells, res->ratios,
         res->report_numbers, opt->current_artifacts ? "hashed on disk" : "recorded (not compared to disk)");
  if (opt->current_artifacts) printf(" (%zu files, %zu sources regenerated)", res->artifacts_hashed, res->sources_regenerated);
  printf("\n");
  printf("evidence: %zu chain links, %zu output hashes, %zu row logs, %zu files compared whole, "
         "%zu chart numbers; digest %s%s\n", res->chain_links, res->output_hashes, res->logs_checked,
         res->files_compared, res->svg_numbers, res->digest[0] ? "sha256:" : "none", res->digest);
  if (opt->digest)
    printf("--digest sha256:%s: %s\n", opt->digest, res->digest_verified ? "verified" : "NOT verified");
  for (int i = 0; i < res->nnotes; i++) printf("note: %s\n", res->notes[i]);
  if (res->total) {
    printf("FAIL: %zu findings:", res->total);
    for (int i = 0; i < TSR__AR_COUNT; i++)
      if (res->counts[i]) printf(" %s %zu", tsr__audit_reason_name((tsr__audit_reason)i), res->counts[i]);
    printf("\n");
  } else
    printf("PASS\n");
}

/* A combined directory of tessera-mpi bench: every rank directory's verdict,
 * then the combination's findings, then one PASS or FAIL over all. */
static int audit_combined(const char *dir, const tsr__audit_options *opt, int json) {
  char msg[1200];
  tsr__audit_combined cb;
  if (tsr__audit_combined_check(dir, opt, tsr__bench_combined_render, &cb, msg, sizeof msg)) {
    tsr__audit_combined_free(&cb);
    return tsr_cli_usage_error("audit", "%s", msg);
  }
  tsr__audit_options ro = *opt;
  ro.digest = NULL; /* --digest names the combination */
  size_t total = cb.comb.total, counts[TSR__AR_COUNT];
  for (int i = 0; i < TSR__AR_COUNT; i++) counts[i] = cb.comb.counts[i];
  for (size_t r = 0; r < cb.nranks; r++) {
    total += cb.ranks[r].total;
    for (int i = 0; i < TSR__AR_COUNT; i++) counts[i] += cb.ranks[r].counts[i];
  }
  if (json) {
    json_t *o = json_object(), *ranks = json_array(), *reasons = json_object();
    json_object_set_new(o, "schema", json_string(TSR_AUDIT_SCHEMA));
    json_object_set_new(o, "combined", json_true());
    json_object_set_new(o, "verdict", json_string(total ? "fail" : "pass"));
    json_object_set_new(o, "digest", json_string(cb.comb.digest));
    json_object_set_new(o, "digest_verified", json_boolean(cb.comb.digest_verified));
    json_object_set_new(o, "findings_total", json_integer((json_int_t)total));
    for (int i = 0; i < TSR__AR_COUNT; i++)
      if (counts[i]) json_object_set_new(reasons, tsr__audit_reason_name((tsr__audit_reason)i), json_integer((json_int_t)counts[i]));
    json_object_set_new(o, "reasons", reasons);
    for (size_t r = 0; r < cb.nranks; r++) {
      json_t *x = cb.loaded[r] ? tsr__audit_result_json(&cb.ranks[r], cb.dirs[r]) : json_null();
      json_array_append_new(ranks, x);
    }
    json_object_set_new(o, "ranks", ranks);
    json_object_set_new(o, "combination", tsr__audit_result_json(&cb.comb, dir));
    json_dumpf(o, stdout, JSON_INDENT(2));
    printf("\n");
    json_decref(o);
  } else {
    for (size_t r = 0; r < cb.nranks; r++)
      if (cb.loaded[r]) {
        print_verdict(&cb.ranks[r], cb.dirs[r], &ro);
        printf("\n");
      }
    for (size_t i = 0; i < cb.comb.n; i++)
      printf("REJECT %s: %s: %s\n", tsr__audit_reason_name(cb.comb.items[i].reason), cb.comb.items[i].where,
             cb.comb.items[i].detail);
    if (cb.comb.total > cb.comb.n) printf("(%zu more findings not shown)\n", cb.comb.total - cb.comb.n);
    size_t audited = 0;
    for (size_t r = 0; r < cb.nranks; r++) audited += (size_t)cb.loaded[r];
    printf("combination %s: %zu ranks (%zu rank directories audited), %zu shapes of the command; "
           "report.md %s; digest sha256:%s\n", dir, cb.nranks, audited, cb.shapes,
           cb.report_compared ? "regenerated and compared whole" : "not compared", cb.comb.digest);
    if (opt->digest)
      printf("--digest sha256:%s: %s\n", opt->digest, cb.comb.digest_verified ? "verified" : "NOT verified");
    for (int i = 0; i < cb.comb.nnotes; i++) printf("note: %s\n", cb.comb.notes[i]);
    if (total) {
      printf("FAIL: %zu findings:", total);
      for (int i = 0; i < TSR__AR_COUNT; i++)
        if (counts[i]) printf(" %s %zu", tsr__audit_reason_name((tsr__audit_reason)i), counts[i]);
      printf("\n");
    } else
      printf("PASS\n");
  }
  tsr__audit_combined_free(&cb);
  return total ? TSR_EXIT_FAIL : TSR_EXIT_OK;
}

int tsr_cli_audit(int argc, char **argv) {
  const char *verb = "audit", *dir = NULL;
  int json = 0, self_test = 0, have_digest = 0;
  char digest[65] = "";
  tsr__audit_options opt = {0};
  /* the bench's renderer: the derived files are regenerated and compared whole */
  opt.render = tsr__bench_render;
  tsr_cli_opt opts[] = {
      TSR_CLI_OPT_FLAG("--json", &json, "print the verdict as JSON (schema tessera-audit/1)"),
      TSR_CLI_OPT_CUSTOM("--digest", opt_digest, digest, "D",
                         "the run must be the one this digest (sha256:HEX, printed by\n"
                         "tessera bench and quoted in report.md) was quoted for"),
      TSR_CLI_OPT_FLAG("--current-artifacts", &opt.current_artifacts,
                       "also hash the recorded executable, libraries and torch\n"
                       "script on disk and regenerate every generated kernel\n"
                       "source with this build: each must match the record"),
      TSR_CLI_OPT_FLAG("--self-test", &self_test,
                       "audit corrupted copies of DIR in a temporary directory,\n"
                       "one per check (missing row, wrong order, invalid output,\n"
                       "..., doubled calls, a dropped shape, a moved chart bar,\n"
                       "a forgery with every derived file regenerated; the list\n"
                       "is in docs/audit.md); pass only when each is rejected\n"
                       "for its reason and the pristine copy passes"),
  };
  opts[1].seen = &have_digest;
  const tsr_cli_spec spec = {
      .verb = verb,
      .usage = audit_usage,
      .footer = audit_footer,
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
      .operands = &dir,
      .max_operands = 1,
      .operand_name = "DIR",
  };
  int prc = tsr_cli_parse(&spec, argc, argv);
  if (prc != TSR_CLI_CONTINUE) return prc;
  if (have_digest) opt.digest = digest;
  if (!dir) return tsr_cli_usage_error(verb, "DIR: missing (a bench results directory; see --help)");
  if (tsr__audit_is_combined(dir)) {
    if (self_test)
      return tsr_cli_usage_error(verb, "--self-test: %s is a combined directory (combined.json); run "
                                       "the self-test on each of its rank directories", dir);
    return audit_combined(dir, &opt, json);
  }
  if (self_test) return audit_self_test(dir, &opt, json);

  char msg[1200];
  tsr__audit_input in;
  if (tsr__audit_load_dir(dir, &in, msg, sizeof msg)) return tsr_cli_usage_error(verb, "%s", msg);
  tsr__audit_result res;
  tsr__audit_result_init(&res);
  tsr__audit_check(&in, &opt, &res);
  if (json) {
    json_t *o = tsr__audit_result_json(&res, dir);
    json_object_set_new(o, "current_artifacts", json_boolean(opt.current_artifacts));
    json_dumpf(o, stdout, JSON_INDENT(2));
    printf("\n");
    json_decref(o);
  } else {
    print_verdict(&res, dir, &opt);
  }
  int rc = res.total ? TSR_EXIT_FAIL : TSR_EXIT_OK;
  tsr__audit_result_free(&res);
  tsr__audit_input_free(&in);
  return rc;
}
