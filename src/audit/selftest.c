/* `tessera audit --self-test DIR`: the auditor must reject corrupted copies
 * of a real results directory, each for the right reason, and pass the
 * pristine copy (BRIEF §7; docs/audit.md lists the corruptions). Copies are
 * written to a temporary directory and re-read from disk, so the loader is
 * part of what is tested. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"

typedef struct {
  json_t *results, *tables;
  char *tables_text; /* written as is unless tables_changed */
  char *report;
  json_t *svgs, *logs; /* {name: text}; logs NULL: no logs/ */
  int tables_changed;
  const char *variant; /* set by a mutation that chose a variant */
  tsr__audit_reason expect;
  const tsr__audit_options *opt; /* the self-test's (its renderer) */
  const char *digest;            /* audit this copy against this --digest */
  char digest_buf[65];
} copy;

static json_t *rows_of(copy *c) { return json_object_get(c->results, "rows"); }

static int is_ok_row(const json_t *row) {
  const json_t *res = json_object_get(row, "result");
  const char *a = json_string_value(json_object_get(row, "status"));
  const char *b = json_string_value(json_object_get(res, "status"));
  return a && b && !strcmp(a, "ok") && !strcmp(b, "ok");
}

/* A valid row near the middle of the run (the first and last are special). */
static json_t *middle_ok_row(copy *c, size_t *index) {
  json_t *rows = rows_of(c);
  size_t n = json_array_size(rows);
  for (size_t k = 0; k < n; k++) {
    size_t i = (n / 2 + k) % n;
    if (is_ok_row(json_array_get(rows, i))) {
      if (index) *index = i;
      return json_array_get(rows, i);
    }
  }
  return NULL;
}

static void flip_hex(json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  if (!s || !*s) return;
  char *t = strdup(s);
  t[0] = t[0] == '0' ? '1' : '0';
  json_object_set_new(o, key, json_string(t));
  free(t);
}

/* ---- the corruptions -------------------------------------------------------- */
static int c_missing_row(copy *c) {
  size_t i;
  if (!middle_ok_row(c, &i)) return -1;
  json_array_remove(rows_of(c), i);
  json_array_remove(json_object_get(json_object_get(c->results, "order"), "realized"), i);
  return 0;
}

static int c_wrong_order(copy *c) {
  json_t *rows = rows_of(c), *realized = json_object_get(json_object_get(c->results, "order"), "realized");
  for (size_t i = 0; i + 1 < json_array_size(rows); i++) {
    json_t *a = json_array_get(rows, i), *b = json_array_get(rows, i + 1);
    if (!json_equal(json_object_get(a, "round"), json_object_get(b, "round"))) continue;
    /* b ran first: a self-consistent record of an execution off the design. */
    static const char *const keys[] = {"seq", "position", "shape_position"};
    for (int k = 0; k < 3; k++) {
      json_t *x = json_incref(json_object_get(a, keys[k])), *y = json_incref(json_object_get(b, keys[k]));
      json_object_set_new(a, keys[k], y);
      json_object_set_new(b, keys[k], x);
    }
    json_incref(a);
    json_incref(b);
    json_array_set_new(rows, i, b);
    json_array_set_new(rows, i + 1, a);
    json_t *ra = json_array_get(realized, i), *rb = json_array_get(realized, i + 1);
    if (ra && rb) {
      json_t *x = json_incref(json_object_get(ra, "seq")), *y = json_incref(json_object_get(rb, "seq"));
      json_object_set_new(ra, "seq", y);
      json_object_set_new(rb, "seq", x);
      json_incref(ra);
      json_incref(rb);
      json_array_set_new(realized, i, rb);
      json_array_set_new(realized, i + 1, ra);
    }
    return 0;
  }
  return -1;
}

static int c_invalid_output(copy *c) {
  json_t *row = middle_ok_row(c, NULL);
  json_t *r = json_array_get(json_object_get(json_object_get(row, "result"), "validation"), 1);
  if (!r) return -1;
  json_object_set_new(r, "passed", json_false());
  json_object_set_new(r, "failed", json_integer(3));
  json_object_set_new(r, "first_fail", json_integer(17));
  json_object_set_new(r, "max_abs_err", json_real(1.0));
  return 0;
}

static int c_nan_time(copy *c) {
  json_t *row = middle_ok_row(c, NULL);
  json_t *metrics = json_object_get(json_object_get(row, "result"), "metrics");
  void *it = json_object_iter(metrics);
  json_t *s = it ? json_array_get(json_object_iter_value(it), 0) : NULL;
  if (!s) return -1;
  json_object_set_new(s, "ns", json_string("nan"));
  return 0;
}

static int c_missing_source_hash(copy *c) {
  json_t *rows = rows_of(c);
  for (size_t i = 0; i < json_array_size(rows); i++) {
    json_t *pi = json_object_get(json_object_get(json_array_get(rows, i), "result"), "plan_info");
    if (json_is_string(json_object_get(pi, "source_sha256"))) {
      json_object_set_new(pi, "source_sha256", json_null());
      return 0;
    }
  }
  /* No generated-source route ran (a CPU run): the executable is the only
   * source identity of the measured code; remove its hash. */
  json_t *exe = json_object_get(json_object_get(c->results, "artifacts"), "executable");
  if (!json_object_get(exe, "sha256")) return -1;
  json_object_del(exe, "sha256");
  c->variant = "no generated-source route in this run: artifacts.executable.sha256 removed";
  c->expect = TSR__AR_ARTIFACT_HASH;
  return 0;
}

static int c_wrong_element_count(copy *c) {
  json_t *row = middle_ok_row(c, NULL);
  json_t *r = json_array_get(json_object_get(json_object_get(row, "result"), "validation"), 0);
  json_int_t n = json_integer_value(json_object_get(r, "checked"));
  if (!r || n < 2) return -1;
  /* A receipt that passed over one element fewer than M×N×batch. */
  json_object_set_new(r, "checked", json_integer(n - 1));
  json_object_set_new(r, "expected", json_integer(n - 1));
  return 0;
}

static int c_instrumented_control(copy *c) {
  json_t *rows = rows_of(c), *row = NULL;
  for (size_t i = 0; i < json_array_size(rows) && !row; i++) {
    json_t *r = json_array_get(rows, i);
    const char *route = json_string_value(json_object_get(r, "route"));
    if (is_ok_row(r) && route && strncmp(route, "tessera-", 8)) row = r; /* a peer: a control */
  }
  if (!row) row = middle_ok_row(c, NULL);
  if (!row) return -1;
  json_t *ins = json_object(), *markers = json_array();
  json_array_append_new(markers, json_string("env CUDA_INJECTION64_PATH=/opt/nvidia/nsight-systems/"
                                             "target-linux-x64/libToolsInjection64.so"));
  json_object_set_new(ins, "instrumented", json_true());
  json_object_set_new(ins, "markers", markers);
  json_object_set_new(json_object_get(row, "result"), "instrumentation", ins);
  return 0;
}

static int c_changed_artifact(copy *c) {
  json_t *exe = json_object_get(json_object_get(c->results, "artifacts"), "executable");
  if (!json_is_string(json_object_get(exe, "sha256_at_end"))) return -1;
  flip_hex(exe, "sha256_at_end"); /* "unchanged" still claims true */
  return 0;
}

static int c_artifact_on_disk(copy *c) {
  json_t *art = json_object_get(c->results, "artifacts");
  json_t *lib = json_array_get(json_object_get(art, "libraries"), 0);
  if (lib && json_is_string(json_object_get(lib, "sha256"))) {
    flip_hex(lib, "sha256");
    c->variant = "artifacts.libraries[0].sha256 changed";
    return 0;
  }
  json_t *exe = json_object_get(art, "executable");
  if (!json_is_string(json_object_get(exe, "sha256"))) return -1;
  flip_hex(exe, "sha256");
  flip_hex(exe, "sha256_at_end");
  c->variant = "artifacts.executable sha256 and sha256_at_end changed consistently";
  return 0;
}

static int c_table_value(copy *c) {
  json_t *cell = json_array_get(json_object_get(json_array_get(json_object_get(c->tables, "metrics"), 0), "cells"), 0);
  json_t *v = json_object_get(cell, "median_of_p50");
  if (!cell) return -1;
  json_object_set_new(cell, "median_of_p50", json_real(json_is_real(v) ? json_real_value(v) * 1.001 : 1.0));
  c->tables_changed = 1;
  return 0;
}

static int c_report_value(copy *c) {
  /* The first number of the first metric table row. */
  char *p = c->report;
  while ((p = strstr(p, "\n## ")) != NULL) {
    p += 4;
    if (!strncmp(p, "FAILED", 6)) continue;
    char *sep = strstr(p, "\n|---|");
    if (!sep) return -1;
    char *row = strchr(sep + 1, '\n');
    if (!row || row[1] != '|') return -1;
    char *cell = strchr(row + 2, '|'); /* after the shape */
    if (!cell) return -1;
    char *d = cell;
    while (*d && *d != '\n' && !(*d >= '0' && *d <= '9')) d++;
    if (!(*d >= '0' && *d <= '9')) return -1;
    while ((d[1] >= '0' && d[1] <= '9') || d[1] == '.') d++; /* last digit of the number */
    *d = *d == '9' ? '0' : (char)(*d + 1);
    return 0;
  }
  return -1;
}

/* The first valid row's accuracy receipt claims it passed while its own
 * figures break the contract: rel. Frobenius twice the limit (or, under
 * 1024 outputs, one element over its bound). */
static int c_accuracy_breach(copy *c) {
  json_t *rows = rows_of(c);
  for (size_t i = 0; i < json_array_size(rows); i++) {
    json_t *row = json_array_get(rows, i);
    json_t *a = json_object_get(json_object_get(row, "result"), "accuracy");
    if (!is_ok_row(row) || !json_is_object(a)) continue;
    const json_t *lim = json_object_get(a, "fro_limit");
    if (json_is_number(lim)) {
      json_object_set_new(a, "rel_fro_err", json_real(2.0 * json_number_value(lim)));
    } else {
      json_object_set_new(a, "failed", json_integer(1));
      json_object_set_new(a, "bound_failed", json_integer(1));
      json_object_set_new(a, "worst_bound_ratio", json_real(2.0));
    }
    return 0;
  }
  return -1;
}


/* ---- the evidence probes (docs/audit.md, "Self-consistency") --------------------- */
static json_t *result_of(json_t *row) { return json_object_get(row, "result"); }

/* The first valid row (from the middle) that has a batch metric. */
static json_t *ok_row_batch(copy *c, json_t **arr, const char **metric) {
  json_t *rows = rows_of(c);
  size_t n = json_array_size(rows);
  static const char *const batch[] = {"gpu_batch", "e2e_batch", "wall_batch"};
  for (size_t k = 0; k < n; k++) {
    json_t *row = json_array_get(rows, (n / 2 + k) % n);
    if (!is_ok_row(row)) continue;
    for (int m = 0; m < 3; m++) {
      json_t *a = json_object_get(json_object_get(result_of(row), "metrics"), batch[m]);
      if (json_array_size(a)) {
        *arr = a;
        *metric = batch[m];
        return row;
      }
    }
  }
  return NULL;
}

/* Re-renders every derived file from c->results with the protocol's
 * threshold (or thr >= 0), as `tessera report` would: a forger's step. */
static int regenerate(copy *c, double thr) {
  if (!c->opt || !c->opt->render) return -1;
  if (thr < 0) {
    json_t *t = json_object_get(json_object_get(c->results, "protocol"), "unstable_threshold");
    thr = json_is_number(t) ? json_number_value(t) : 0.10;
  }
  json_t *files = NULL;
  char msg[256];
  if (c->opt->render(c->results, thr, &files, msg, sizeof msg)) return -1;
  json_t *svgs = json_object();
  const char *name;
  json_t *v;
  json_object_foreach(files, name, v) {
    if (!strcmp(name, "tables.json")) {
      free(c->tables_text);
      c->tables_text = strdup(json_string_value(v));
      c->tables_changed = 0;
    } else if (!strcmp(name, "report.md")) {
      free(c->report);
      c->report = strdup(json_string_value(v));
    } else
      json_object_set(svgs, name, v);
  }
  json_decref(c->svgs);
  c->svgs = svgs;
  json_decref(files);
  return c->tables_text && c->report ? 0 : -1;
}

static int c_calls_doubled(copy *c) {
  json_t *arr;
  const char *metric;
  if (!ok_row_batch(c, &arr, &metric)) return -1;
  for (size_t i = 0; i < json_array_size(arr); i++) {
    json_t *smp = json_array_get(arr, i);
    json_object_set_new(smp, "calls", json_integer(2 * json_integer_value(json_object_get(smp, "calls"))));
  }
  return 0;
}

static int c_samples_exceed_child(copy *c) {
  json_t *row = middle_ok_row(c, NULL), *res = result_of(row);
  json_int_t sum = 0;
  const char *k;
  json_t *arr;
  json_object_foreach(json_object_get(res, "metrics"), k, arr)
  for (size_t i = 0; i < json_array_size(arr); i++)
    sum += json_integer_value(json_object_get(json_array_get(arr, i), "ns"));
  if (!row || sum < 2) return -1;
  json_object_set_new(res, "child_ns", json_integer(sum / 2)); /* the child ran half its samples' time */
  return 0;
}

static int c_sequence_gap(copy *c) {
  json_t *rows = rows_of(c), *realized = json_object_get(json_object_get(c->results, "order"), "realized");
  size_t n = json_array_size(rows);
  if (n < 3) return -1;
  /* rows from the middle on shifted by one: execution n/2 is not shown */
  for (size_t i = n / 2; i < n; i++) {
    json_object_set_new(json_array_get(rows, i), "seq", json_integer((json_int_t)i + 1));
    json_t *re = json_array_get(realized, i);
    if (re) json_object_set_new(re, "seq", json_integer((json_int_t)i + 1));
  }
  return 0;
}

static int c_finish_before_start(copy *c) {
  if (!json_is_string(json_object_get(c->results, "started_utc"))) return -1;
  json_object_set_new(c->results, "finished_utc", json_string("2000-01-01T00:00:00Z"));
  return 0;
}

static int c_other_device(copy *c) {
  json_t *routes = json_object_get(c->results, "routes"), *rows = rows_of(c);
  for (size_t i = 0; i < json_array_size(rows); i++) {
    json_t *row = json_array_get(rows, i);
    if (!is_ok_row(row)) continue;
    const char *route = json_string_value(json_object_get(row, "route"));
    for (size_t j = 0; j < json_array_size(routes); j++) {
      json_t *rt = json_array_get(routes, j);
      if (!route || strcmp(route, json_string_value(json_object_get(rt, "name")) ?: "")) continue;
      void *it = json_object_iter(json_object_get(rt, "versions"));
      json_t *rv = json_object_get(result_of(row), "versions");
      if (!it || !json_is_object(rv)) break;
      /* the row claims another device / library than its route's probe saw */
      json_object_set_new(rv, json_object_iter_key(it), json_string("NVIDIA A100-SXM4-80GB"));
      return 0;
    }
  }
  /* No route probe records versions (a tessera-cpu-only run): the probe
   * claims a device that no row reports. */
  json_t *rt = json_array_get(routes, 0), *v = json_object_get(rt, "versions");
  if (!json_is_object(v) || !json_is_true(json_object_get(rt, "available"))) return -1;
  json_object_set_new(v, "device", json_string("NVIDIA A100-SXM4-80GB"));
  c->variant = "no probe records versions: routes[0].versions.device added, which no row reports";
  return 0;
}

static int c_other_threads(copy *c) {
  json_t *res = result_of(middle_ok_row(c, NULL));
  json_t *t = json_object_get(res, "threads_requested");
  if (!json_is_integer(t)) return -1;
  json_object_set_new(res, "threads_requested", json_integer(json_integer_value(t) + 7));
  return 0;
}

static int c_argv_route(copy *c) {
  json_t *argv = json_object_get(middle_ok_row(c, NULL), "argv");
  for (size_t i = 0; i + 1 < json_array_size(argv); i++)
    if (!strcmp(json_string_value(json_array_get(argv, i)) ?: "", "--route")) {
      const char *r = json_string_value(json_array_get(argv, i + 1));
      json_array_set_new(argv, i + 1, json_string(r && !strcmp(r, "cublas") ? "hand" : "cublas"));
      return 0;
    }
  return -1;
}

static int c_oracle_key(copy *c) {
  json_t *o = json_object_get(result_of(middle_ok_row(c, NULL)), "oracle");
  const char *k = json_string_value(json_object_get(o, "key"));
  if (!k) return -1;
  char buf[600];
  snprintf(buf, sizeof buf, "%s1", k); /* another seed: seed=1 -> seed=11 */
  json_object_set_new(o, "key", json_string(buf));
  return 0;
}

static int c_plan_changed(copy *c) {
  json_t *rows = rows_of(c);
  size_t n = json_array_size(rows);
  /* a row of a later round whose route and shape ran in round 0 with a plan */
  for (size_t i = n / 2; i < n; i++) {
    json_t *pi = json_object_get(result_of(json_array_get(rows, i)), "plan_info");
    const char *plan = json_string_value(json_object_get(pi, "plan"));
    if (!plan || !json_integer_value(json_object_get(json_array_get(rows, i), "round"))) continue;
    char buf[600];
    snprintf(buf, sizeof buf, "%s,tuned", plan);
    json_object_set_new(pi, "plan", json_string(buf));
    return 0;
  }
  return -1;
}

static int c_receipt_tolerance(copy *c) {
  json_t *r = json_array_get(json_object_get(result_of(middle_ok_row(c, NULL)), "validation"), 0);
  if (!r) return -1;
  if (json_object_get(r, "contract")) {
    const json_t *l = json_object_get(r, "fro_limit");
    json_object_set_new(r, "fro_limit", json_real(json_is_number(l) ? 2 * json_number_value(l) : 1e-3));
    c->variant = "a contract receipt: fro_limit doubled";
  } else {
    const json_t *a = json_object_get(r, "atol");
    json_object_set_new(r, "atol", json_real((json_is_number(a) ? json_number_value(a) : 0) + 0.5));
  }
  return 0;
}

static int c_nan_error_passed(copy *c) {
  json_t *r = json_array_get(json_object_get(result_of(middle_ok_row(c, NULL)), "validation"), 0);
  if (!r || !json_is_true(json_object_get(r, "passed"))) return -1;
  json_object_set_new(r, "rel_fro_err", json_string("nan"));
  return 0;
}

static int c_output_differs(copy *c) {
  json_t *rows = rows_of(c);
  for (size_t i = 0; i < json_array_size(rows); i++) {
    json_t *row = json_array_get(rows, i);
    const char *route = json_string_value(json_object_get(row, "route"));
    json_t *r = json_array_get(json_object_get(result_of(row), "validation"), 1);
    if (!is_ok_row(row) || !route || strncmp(route, "tessera-", 8) || !json_object_get(r, "output_sha256"))
      continue;
    flip_hex(r, "output_sha256");
    return 0;
  }
  return -1;
}

static int c_revived_crash_log(copy *c) {
  size_t i;
  json_t *row = middle_ok_row(c, &i);
  if (!row) return -1;
  char name[300];
  snprintf(name, sizeof name, "%04lld-r%02lld-%s-%s.log",
           (long long)json_integer_value(json_object_get(row, "seq")),
           (long long)json_integer_value(json_object_get(row, "round")),
           json_string_value(json_object_get(row, "shape")) ?: "?",
           json_string_value(json_object_get(row, "route")) ?: "?");
  if (!c->logs) c->logs = json_object();
  /* the log its crash left; the row says ok and records no log */
  json_object_set_new(c->logs, name, json_string("bench-run: TSR_BENCH_TEST_CRASH: raising SIGSEGV\n"));
  return 0;
}

/* The last shape deleted everywhere and the order re-laid by the design
 * for the remaining shapes: only the recorded command line still names it. */
static int c_dropped_shape(copy *c) {
  json_t *proto = json_object_get(c->results, "protocol"), *shapes = json_object_get(proto, "shapes");
  json_t *order = json_object_get(c->results, "order");
  size_t S = json_array_size(shapes);
  if (S < 2) return -1;
  const char *drop = json_string_value(json_object_get(json_array_get(shapes, S - 1), "label"));
  if (!drop) return -1;
  char *gone = strdup(drop);
  size_t S2 = S - 1;
  json_array_remove(shapes, S - 1);
  json_t *rows = rows_of(c), *kept = json_array();
  for (size_t i = 0; i < json_array_size(rows); i++) {
    json_t *row = json_array_get(rows, i);
    if (strcmp(json_string_value(json_object_get(row, "shape")) ?: "", gone)) json_array_append(kept, row);
  }
  /* re-lay: round, then the shape's design position (s - r) mod S2, then position */
  size_t n = json_array_size(kept);
  json_t **v = calloc(n ? n : 1, sizeof *v);
  long long *key = calloc(n ? n : 1, sizeof *key);
  for (size_t i = 0; v && key && i < n; i++) {
    json_t *row = json_array_get(kept, i);
    long long r = json_integer_value(json_object_get(row, "round"));
    long long s = 0;
    for (size_t k = 0; k < S2; k++)
      if (!strcmp(json_string_value(json_object_get(json_array_get(shapes, k), "label")) ?: "",
                  json_string_value(json_object_get(row, "shape")) ?: ""))
        s = (long long)k;
    long long j = ((s - r) % (long long)S2 + (long long)S2) % (long long)S2;
    json_object_set_new(row, "shape_position", json_integer(j));
    v[i] = row;
    key[i] = (r * (long long)S2 + j) * 1000 + json_integer_value(json_object_get(row, "position"));
  }
  for (size_t i = 1; v && key && i < n; i++) /* insertion sort by key */
    for (size_t k = i; k > 0 && key[k - 1] > key[k]; k--) {
      long long t = key[k]; key[k] = key[k - 1]; key[k - 1] = t;
      json_t *x = v[k]; v[k] = v[k - 1]; v[k - 1] = x;
    }
  json_t *nrows = json_array(), *realized = json_array();
  size_t failed = 0;
  for (size_t i = 0; v && i < n; i++) {
    json_object_set_new(v[i], "seq", json_integer((json_int_t)i));
    json_array_append(nrows, v[i]);
    json_array_append_new(realized, json_pack("{s:I, s:O, s:O, s:O}", "seq", (json_int_t)i, "round",
                                              json_object_get(v[i], "round"), "shape",
                                              json_object_get(v[i], "shape"), "route",
                                              json_object_get(v[i], "route")));
    failed += !is_ok_row(v[i]) || strcmp(json_string_value(json_object_get(v[i], "status")) ?: "", "ok");
  }
  free(v);
  free(key);
  json_decref(kept);
  json_object_set_new(c->results, "rows", nrows);
  json_object_set_new(order, "realized", realized);
  json_t *planned = json_object_get(order, "planned");
  for (size_t r = 0; r < json_array_size(planned); r++) {
    json_t *ps = json_array();
    for (size_t j = 0; j < S2; j++)
      json_array_append(ps, json_object_get(json_array_get(shapes, (j + r) % S2), "label"));
    json_object_set_new(json_array_get(planned, r), "shapes", ps);
  }
  json_t *chk = json_object_get(order, "check");
  json_object_set_new(chk, "entries", json_integer((json_int_t)n));
  json_array_remove(json_object_get(chk, "position_counts"), S - 1);
  json_array_remove(json_object_get(chk, "pair_counts"), S - 1);
  json_t *sum = json_object_get(c->results, "summary");
  json_object_set_new(sum, "rows", json_integer((json_int_t)n));
  json_object_set_new(sum, "failed_rows", json_integer((json_int_t)failed));
  json_t *pre = json_object_get(c->results, "oracle_precompute");
  if (json_array_size(pre) == S) json_array_remove(pre, S - 1);
  free(gone);
  if (regenerate(c, -1)) c->variant = "no renderer: the derived files were not regenerated";
  return 0;
}

static int c_oracle_list(copy *c) {
  json_t *pre = json_object_get(c->results, "oracle_precompute");
  if (!json_is_array(pre)) return -1;
  if (json_array_size(pre)) {
    json_array_remove(pre, json_array_size(pre) - 1);
    return 0;
  }
  json_t *shapes = json_object_get(json_object_get(c->results, "protocol"), "shapes");
  json_array_append_new(pre, json_pack("{s:O, s:I, s:n}", "shape",
                                       json_object_get(json_array_get(shapes, 0), "label"), "wall_ns",
                                       (json_int_t)1000, "result"));
  c->variant = "no oracle cache in this run: a precompute entry added";
  return 0;
}

static int c_svg_bar_moved(copy *c) {
  const char *name;
  json_t *v;
  /* the first tooltip's median rewritten, as if its bar moved */
  json_object_foreach(c->svgs, name, v) {
    const char *t = json_string_value(v), *m = t ? strstr(t, "<title>median ") : NULL;
    if (!m) continue;
    size_t off = (size_t)(m - t) + strlen("<title>median ");
    char *u = strdup(t);
    if (!u) return -1;
    u[off] = u[off] == '0' ? '1' : '0';
    json_object_set_new(c->svgs, name, json_string(u));
    free(u);
    return 0;
  }
  /* no pair with a valid round anywhere: draw a bar where there is none */
  static const char *const gap = ">no valid pair<";
  json_object_foreach(c->svgs, name, v) {
    const char *t = json_string_value(v), *m = t ? strstr(t, gap) : NULL;
    if (!m) continue;
    char *u = malloc(strlen(t) + 100);
    if (!u) return -1;
    sprintf(u, "%.*s><title>median 0.5000 [0.5000, 0.5000] slower 0/8</title><%s", (int)(m - t), t,
            m + strlen(gap));
    json_object_set_new(c->svgs, name, json_string(u));
    free(u);
    c->variant = "no valid pair in any chart: a tooltip drawn where the chart said none";
    return 0;
  }
  return -1;
}

static int c_report_prose(copy *c) {
  char *p = strstr(c->report, "Never a ratio of medians");
  if (!p) return -1;
  memcpy(p, "Often", 5); /* "Often a ratio of medians": prose outside every table */
  return 0;
}

static int c_threshold_from_tables(copy *c) {
  /* the report regenerated with a threshold that hides every unstable cell */
  if (regenerate(c, 1e9)) return -1;
  return 0;
}

/* Every sample of one route scaled by 0.9 (rounded), every derived file
 * regenerated: the numbers all agree with each other. */
static int rescale_route(copy *c) {
  json_t *rows = rows_of(c);
  const char *route = NULL;
  for (size_t i = 0; i < json_array_size(rows) && !route; i++)
    if (is_ok_row(json_array_get(rows, i))) route = json_string_value(json_object_get(json_array_get(rows, i), "route"));
  if (!route) return -1;
  char *rt = strdup(route);
  for (size_t i = 0; i < json_array_size(rows); i++) {
    json_t *row = json_array_get(rows, i);
    if (strcmp(json_string_value(json_object_get(row, "route")) ?: "", rt)) continue;
    const char *k;
    json_t *arr;
    json_object_foreach(json_object_get(result_of(row), "metrics"), k, arr)
    for (size_t q = 0; q < json_array_size(arr); q++) {
      json_t *smp = json_array_get(arr, q);
      json_int_t ns = json_integer_value(json_object_get(smp, "ns"));
      json_object_set_new(smp, "ns", json_integer(ns * 9 / 10 > 0 ? ns * 9 / 10 : 1));
    }
  }
  free(rt);
  return regenerate(c, -1);
}

static int c_forgery(copy *c) { return rescale_route(c); }

/* The same forgery with every chain link and the digest recomputed: self-
 * consistent (the chain is not a signature), rejected only by the digest
 * quoted before it (--digest). */
static int c_rechained_forgery(copy *c) {
  const char *dg = json_string_value(json_object_get(c->results, "digest"));
  if (!dg || !json_is_object(json_object_get(c->results, "chain"))) return -1;
  snprintf(c->digest_buf, sizeof c->digest_buf, "%s", dg);
  if (rescale_route(c)) return -1;
  json_t *rows = rows_of(c), *ch = json_object_get(c->results, "chain");
  char link[65];
  if (tsr__audit_chain_genesis(c->results, link)) return -1;
  json_object_set_new(ch, "genesis", json_string(link));
  for (size_t i = 0; i < json_array_size(rows); i++) {
    if (tsr__audit_chain_link(link, json_array_get(rows, i), link)) return -1;
    json_object_set_new(json_array_get(rows, i), "chain", json_string(link));
  }
  json_object_set_new(ch, "head", json_string(link));
  if (tsr__audit_chain_digest(c->results, link)) return -1;
  json_object_set_new(c->results, "digest", json_string(link));
  if (regenerate(c, -1)) return -1; /* report.md quotes the new digest */
  c->digest = c->digest_buf;
  return 0;
}

typedef struct {
  const char *name, *what;
  tsr__audit_reason expect;
  int (*apply)(copy *);
  int needs_current; /* only with --current-artifacts */
  int needs_accuracy; /* only for runs with accuracy receipts (tessera-bench/2) */
  int needs_v3;       /* only for tamper-evident runs (tessera-bench/3) */
} corruption;

static const corruption cases[] = {
    {"missing_row", "one valid row (and its realized entry) deleted", TSR__AR_ROW_MISSING, c_missing_row, 0, 0, 0},
    {"wrong_order", "two adjacent executions of a round swapped (record kept self-consistent)",
     TSR__AR_ORDER_DESIGN, c_wrong_order, 0, 0, 0},
    {"invalid_output", "after_timing receipt of a valid row: passed=false, 3 failed elements",
     TSR__AR_VALIDATION, c_invalid_output, 0, 0, 0},
    {"nan_time", "one sample's ns replaced by \"nan\"", TSR__AR_SAMPLE_VALUE, c_nan_time, 0, 0, 0},
    {"missing_source_hash", "generated-source SHA-256 of a row set to null", TSR__AR_SOURCE_HASH,
     c_missing_source_hash, 0, 0, 0},
    {"wrong_element_count", "a passed receipt over M×N×batch − 1 elements", TSR__AR_ELEMENT_COUNT,
     c_wrong_element_count, 0, 0, 0},
    {"instrumented_control", "a peer row marked instrumented (CUDA_INJECTION64_PATH)",
     TSR__AR_INSTRUMENTED, c_instrumented_control, 0, 0, 0},
    {"changed_artifact", "executable sha256_at_end differs from sha256 (unchanged still true)",
     TSR__AR_ARTIFACT_CHANGED, c_changed_artifact, 0, 0, 0},
    {"table_value", "tables.json: first cell's median_of_p50 × 1.001", TSR__AR_TABLE_MISMATCH,
     c_table_value, 0, 0, 0},
    {"report_value", "report.md: last digit of the first table number changed",
     TSR__AR_REPORT_MISMATCH, c_report_value, 0, 0, 0},
    {"artifact_on_disk", "a recorded artifact hash no longer matches the file on disk",
     TSR__AR_ARTIFACT_CHANGED, c_artifact_on_disk, 1, 0, 0},
    {"accuracy_breach", "an accuracy receipt says passed while its figures break the contract",
     TSR__AR_ACCURACY, c_accuracy_breach, 0, 1, 0},
    {"calls_doubled", "a valid row's batch samples claim twice the calls (its time halves); the "
     "calibration still says the old count", TSR__AR_CALIBRATION, c_calls_doubled, 0, 0, 0},
    {"samples_exceed_child", "a row's child_ns set to half the sum of its samples",
     TSR__AR_CHILD_TIME, c_samples_exceed_child, 0, 0, 0},
    {"sequence_gap", "seq (and realized) of the second half shifted by one: a hidden execution",
     TSR__AR_SEQUENCE, c_sequence_gap, 0, 0, 0},
    {"finish_before_start", "finished_utc set before started_utc", TSR__AR_TIMESTAMPS,
     c_finish_before_start, 0, 0, 0},
    {"other_device", "a row's versions claim another GPU than its route's probe", TSR__AR_ROW_DEVICE,
     c_other_device, 0, 0, 0},
    {"other_threads", "a row's threads_requested differs from the protocol's", TSR__AR_ROW_THREADS,
     c_other_threads, 0, 0, 0},
    {"argv_route", "a row's argv names another route", TSR__AR_ROW_ARGV, c_argv_route, 0, 0, 0},
    {"oracle_key", "a row's oracle key names another seed", TSR__AR_ROW_ORACLE, c_oracle_key, 0, 0, 0},
    {"plan_changed", "a later round's plan text differs from round 0's", TSR__AR_ROW_PLAN, c_plan_changed, 0, 0, 0},
    {"receipt_tolerance", "a receipt's atol is not the protocol's (contract receipt: fro_limit doubled)",
     TSR__AR_RECEIPT_TOLERANCE, c_receipt_tolerance, 0, 0, 0},
    {"nan_error_passed", "a passed receipt's Frobenius error is NaN", TSR__AR_RECEIPT_LOGIC,
     c_nan_error_passed, 0, 0, 0},
    {"revived_crash_log", "the crash log of a row that now says ok, left in logs/",
     TSR__AR_LOG, c_revived_crash_log, 0, 0, 0},
    {"dropped_shape", "the last shape deleted everywhere, the order re-laid and every derived "
     "file regenerated: only the command line still names it", TSR__AR_COMMAND_LINE, c_dropped_shape, 0, 0, 0},
    {"oracle_list", "the oracle precompute list loses its last shape", TSR__AR_ORACLE_LIST, c_oracle_list, 0, 0, 0},
    {"svg_bar_moved", "the first chart's first tooltip median changed", TSR__AR_SVG_MISMATCH,
     c_svg_bar_moved, 0, 0, 0},
    {"report_prose", "report.md prose outside every table changed", TSR__AR_REPORT_MISMATCH, c_report_prose, 0, 0, 0},
    {"threshold_regenerated", "tables and report regenerated with an unstable threshold of 1e9",
     TSR__AR_TABLE_MISMATCH, c_threshold_from_tables, 0, 0, 0},
    {"output_differs", "a deterministic route's after_timing output SHA-256 differs from before_timing",
     TSR__AR_OUTPUT_HASH, c_output_differs, 0, 0, 1},
    {"forgery", "one route's samples x0.9, every derived file regenerated", TSR__AR_CHAIN, c_forgery, 0, 0, 1},
    {"rechained_forgery", "the same forgery with every chain link and the digest recomputed, "
     "audited with --digest of the original", TSR__AR_DIGEST, c_rechained_forgery, 0, 0, 1},
};

/* ---- files ----------------------------------------------------------------------- */
static int write_text(const char *dir, const char *name, const char *text, size_t len) {
  char path[4800];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  int ok = fwrite(text, 1, len, f) == len;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}
static int write_json(const char *dir, const char *name, const json_t *doc) {
  char *s = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
  if (!s) return -1;
  int rc = write_text(dir, name, s, strlen(s));
  free(s);
  return rc;
}
/* The charts and logs of a copy. */
static int write_extras(const char *dir, const copy *c) {
  const char *name;
  json_t *v;
  json_object_foreach(c->svgs, name, v)
  if (json_is_string(v) && write_text(dir, name, json_string_value(v), json_string_length(v))) return -1;
  if (!c->logs) return 0;
  char logs[4400];
  snprintf(logs, sizeof logs, "%s/logs", dir);
  if (mkdir(logs, 0700)) return -1;
  json_object_foreach(c->logs, name, v)
  if (json_is_string(v) && write_text(logs, name, json_string_value(v), json_string_length(v))) return -1;
  return 0;
}
static void remove_copy(const char *dir, const copy *c) {
  static const char *const names[] = {"results.json", "tables.json", "report.md"};
  char path[4700];
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  const char *name;
  json_t *v;
  json_object_foreach(c ? c->svgs : NULL, name, v) {
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
  }
  json_object_foreach(c ? c->logs : NULL, name, v) {
    snprintf(path, sizeof path, "%s/logs/%s", dir, name);
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/logs", dir);
  rmdir(path);
  rmdir(dir);
}

/* Audits the copy in dir; fills res. 0, or -1 when the copy is unusable. */
static int audit_copy(const char *dir, const tsr__audit_options *opt, tsr__audit_result *res,
                      char *msg, size_t cap) {
  tsr__audit_input in;
  if (tsr__audit_load_dir(dir, &in, msg, cap)) return -1;
  tsr__audit_check(&in, opt, res);
  tsr__audit_input_free(&in);
  return 0;
}

static json_t *reasons_json(const tsr__audit_result *r) {
  json_t *a = json_array();
  for (int i = 0; i < TSR__AR_COUNT; i++)
    if (r->counts[i]) json_array_append_new(a, json_string(tsr__audit_reason_name((tsr__audit_reason)i)));
  return a;
}

/* What every copy of one self-test shares. */
typedef struct {
  const tsr__audit_options *opt;
  FILE *out;
  json_t *jcases;
  const tsr__audit_input *pristine;
  const char *root; /* the temporary directory of the copies */
  char *msg;
  size_t cap;
} selftest;

/* The pristine copy, byte for byte, must pass. 0 pass, 1 fail, 2 when it
 * cannot be written or audited (msg set). */
static int self_test_pristine(selftest *t, char *const raw[3], const size_t rawlen[3], const copy *p0) {
  const char *const *names = tsr__audit_files;
  char sub[4200];
  snprintf(sub, sizeof sub, "%s/pristine", t->root);
  tsr__audit_result res;
  tsr__audit_result_init(&res);
  char inner[1024];
  int ok = mkdir(sub, 0700) == 0;
  for (int i = 0; ok && i < 3; i++) ok = write_text(sub, names[i], raw[i], rawlen[i]) == 0;
  ok = ok && write_extras(sub, p0) == 0;
  if (!ok || audit_copy(sub, t->opt, &res, inner, sizeof inner)) {
    snprintf(t->msg, t->cap, "self-test: pristine copy in %s: %s", sub, ok ? inner : "cannot write");
    remove_copy(sub, p0);
    tsr__audit_result_free(&res);
    return 2;
  }
  remove_copy(sub, p0);
  int pass = res.total == 0;
  if (t->out) {
    if (pass) fprintf(t->out, "self-test: pristine copy passes (%zu rows, %zu samples, %zu table cells, %zu report numbers)\n",
                      res.rows, res.samples, res.cells, res.report_numbers);
    else
      fprintf(t->out, "self-test: pristine copy FAILS the audit (%zu findings; first: %s: %s: %s)\n", res.total,
              res.n ? tsr__audit_reason_name(res.items[0].reason) : "?", res.n ? res.items[0].where : "",
              res.n ? res.items[0].detail : "");
  }
  if (t->jcases) {
    json_t *o = json_object();
    json_object_set_new(o, "case", json_string("pristine"));
    json_object_set_new(o, "expected", json_string("pass"));
    json_object_set_new(o, "passed", json_boolean(pass));
    json_object_set_new(o, "reasons", reasons_json(&res));
    json_array_append_new(t->jcases, o);
  }
  tsr__audit_result_free(&res);
  return pass ? 0 : 1;
}

/* A case this run cannot show (says why). Returns 1 when cc is skipped. */
static int case_skipped(const selftest *t, const corruption *cc) {
  const json_t *results = t->pristine->results;
  if (cc->needs_current && !(t->opt && t->opt->current_artifacts)) return 1;
  if (cc->needs_accuracy &&
      !json_is_string(json_object_get(json_object_get(results, "protocol"), "accuracy_inputs"))) {
    if (t->out) fprintf(t->out, "self-test: %-21s skipped: the run has no accuracy receipts (%s)\n", cc->name,
                        json_string_value(json_object_get(results, "schema")));
    return 1;
  }
  if (cc->needs_v3 && !json_is_object(json_object_get(results, "chain"))) {
    if (t->out) fprintf(t->out, "self-test: %-21s skipped: %s predates tamper evidence (no hash chain, "
                        "digest or output hashes)\n", cc->name,
                        json_string_value(json_object_get(results, "schema")));
    return 1;
  }
  return 0;
}

/* One case's verdict, as text and as JSON. */
static void report_case(const selftest *t, const corruption *cc, const copy *c, int applied, int rejected,
                        const tsr__audit_result *res) {
  if (t->out) {
    if (!applied)
      fprintf(t->out, "self-test: %-21s NOT APPLICABLE to this run (%s): cannot show its rejection\n", cc->name, cc->what);
    else if (rejected) {
      size_t f = 0;
      while (f < res->n && res->items[f].reason != c->expect) f++;
      fprintf(t->out, "self-test: %-21s rejected: %s: %s: %s", cc->name, tsr__audit_reason_name(c->expect),
              f < res->n ? res->items[f].where : "", f < res->n ? res->items[f].detail : "");
      if (res->total > 1) fprintf(t->out, " (+%zu more findings)", res->total - 1);
      fprintf(t->out, "\n");
    } else
      fprintf(t->out, "self-test: %-21s NOT REJECTED with %s (%zu other findings)\n", cc->name,
              tsr__audit_reason_name(c->expect), res->total);
    if (c->variant) fprintf(t->out, "           (%s)\n", c->variant);
  }
  if (t->jcases) {
    json_t *o = json_object();
    json_object_set_new(o, "case", json_string(cc->name));
    json_object_set_new(o, "corruption", json_string(c->variant ? c->variant : cc->what));
    json_object_set_new(o, "expected", json_string(tsr__audit_reason_name(c->expect)));
    json_object_set_new(o, "applied", json_boolean(applied));
    json_object_set_new(o, "rejected", json_boolean(rejected));
    json_object_set_new(o, "reasons", reasons_json(res));
    if (res->n) {
      size_t f = 0;
      while (f < res->n && res->items[f].reason != c->expect) f++;
      if (f == res->n) f = 0;
      json_object_set_new(o, "where", json_string(res->items[f].where));
      json_object_set_new(o, "detail", json_string(res->items[f].detail));
    }
    json_array_append_new(t->jcases, o);
  }
}

/* One corrupted copy: applied, written, audited, removed; *rc becomes 1
 * when it is not rejected for its reason, 2 when it cannot be audited. */
static void self_test_case(selftest *t, const corruption *cc, int *rc) {
  const char *const *names = tsr__audit_files;
  const tsr__audit_input *pristine = t->pristine;
  const tsr__audit_options *opt = t->opt;
  copy c;
  memset(&c, 0, sizeof c);
  c.results = json_deep_copy(pristine->results);
  c.tables = json_deep_copy(pristine->tables);
  c.tables_text = strdup(pristine->tables_text ? pristine->tables_text : "");
  c.report = strdup(pristine->report);
  c.svgs = json_deep_copy(pristine->svgs);
  c.logs = pristine->logs ? json_deep_copy(pristine->logs) : NULL;
  c.expect = cc->expect;
  c.opt = opt;
  char sub[4200], inner[1024];
  snprintf(sub, sizeof sub, "%s/%s", t->root, cc->name);
  int applied = c.results && c.tables && c.tables_text && c.report && c.svgs && cc->apply(&c) == 0;
  int rejected = 0;
  tsr__audit_result res;
  tsr__audit_result_init(&res);
  if (applied) {
    int w = mkdir(sub, 0700) == 0 && write_json(sub, names[0], c.results) == 0 &&
            (c.tables_changed ? write_json(sub, names[1], c.tables)
                              : write_text(sub, names[1], c.tables_text, strlen(c.tables_text))) == 0 &&
            write_text(sub, names[2], c.report, strlen(c.report)) == 0 && write_extras(sub, &c) == 0;
    tsr__audit_options o = opt ? *opt : (tsr__audit_options){0};
    if (c.digest) o.digest = c.digest;
    if (!w || audit_copy(sub, &o, &res, inner, sizeof inner)) {
      snprintf(t->msg, t->cap, "self-test: %s copy in %s: %s", cc->name, sub, w ? inner : "cannot write");
      *rc = 2;
    }
    remove_copy(sub, &c);
    rejected = tsr__audit_has(&res, c.expect);
  }
  if (!rejected && *rc != 2) *rc = 1;
  report_case(t, cc, &c, applied, rejected, &res);
  tsr__audit_result_free(&res);
  json_decref(c.results);
  json_decref(c.tables);
  free(c.tables_text);
  free(c.report);
  json_decref(c.svgs);
  json_decref(c.logs);
}

int tsr__audit_self_test(const char *dir, const tsr__audit_options *opt, FILE *out, json_t *jcases,
                         char *msg, size_t cap) {
  char *raw[3];
  size_t rawlen[3];
  if (tsr__audit_read_dir(dir, raw, rawlen, msg, cap)) return 2;
  tsr__audit_input pristine;
  if (tsr__audit_load_raw(dir, raw, rawlen, &pristine, msg, cap) ||
      tsr__audit_load_extras(dir, &pristine, msg, cap)) {
    for (int i = 0; i < 3; i++) free(raw[i]);
    tsr__audit_input_free(&pristine);
    return 2;
  }
  copy p0;
  memset(&p0, 0, sizeof p0);
  p0.svgs = pristine.svgs;
  p0.logs = pristine.logs;
  const char *tmp = getenv("TMPDIR");
  char root[4096];
  snprintf(root, sizeof root, "%s/tessera-audit-selftest.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  int rc = 0;
  if (!mkdtemp(root)) {
    snprintf(msg, cap, "self-test: cannot create a temporary directory in %s: %s",
             tmp && *tmp ? tmp : "/tmp", strerror(errno));
    rc = 2;
    goto out;
  }
  selftest t = {opt, out, jcases, &pristine, root, msg, cap};
  rc = self_test_pristine(&t, raw, rawlen, &p0);
  if (rc == 2) goto rm_root;
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    if (!case_skipped(&t, &cases[k])) self_test_case(&t, &cases[k], &rc);
rm_root:
  rmdir(root);
out:
  for (int i = 0; i < 3; i++) free(raw[i]);
  tsr__audit_input_free(&pristine);
  return rc;
}
