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
  char *report;
  int tables_changed;
  const char *variant; /* set by a mutation that chose a variant */
  tsr__audit_reason expect;
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

typedef struct {
  const char *name, *what;
  tsr__audit_reason expect;
  int (*apply)(copy *);
  int needs_current; /* only with --current-artifacts */
  int needs_accuracy; /* only for runs with accuracy receipts (tessera-bench/2) */
} corruption;

static const corruption cases[] = {
    {"missing_row", "one valid row (and its realized entry) deleted", TSR__AR_ROW_MISSING, c_missing_row, 0, 0},
    {"wrong_order", "two adjacent executions of a round swapped (record kept self-consistent)",
     TSR__AR_ORDER_DESIGN, c_wrong_order, 0, 0},
    {"invalid_output", "after_timing receipt of a valid row: passed=false, 3 failed elements",
     TSR__AR_VALIDATION, c_invalid_output, 0, 0},
    {"nan_time", "one sample's ns replaced by \"nan\"", TSR__AR_SAMPLE_VALUE, c_nan_time, 0, 0},
    {"missing_source_hash", "generated-source SHA-256 of a row set to null", TSR__AR_SOURCE_HASH,
     c_missing_source_hash, 0, 0},
    {"wrong_element_count", "a passed receipt over M×N×batch − 1 elements", TSR__AR_ELEMENT_COUNT,
     c_wrong_element_count, 0, 0},
    {"instrumented_control", "a peer row marked instrumented (CUDA_INJECTION64_PATH)",
     TSR__AR_INSTRUMENTED, c_instrumented_control, 0, 0},
    {"changed_artifact", "executable sha256_at_end differs from sha256 (unchanged still true)",
     TSR__AR_ARTIFACT_CHANGED, c_changed_artifact, 0, 0},
    {"table_value", "tables.json: first cell's median_of_p50 × 1.001", TSR__AR_TABLE_MISMATCH,
     c_table_value, 0, 0},
    {"report_value", "report.md: last digit of the first table number changed",
     TSR__AR_REPORT_MISMATCH, c_report_value, 0, 0},
    {"artifact_on_disk", "a recorded artifact hash no longer matches the file on disk",
     TSR__AR_ARTIFACT_CHANGED, c_artifact_on_disk, 1, 0},
    {"accuracy_breach", "an accuracy receipt says passed while its figures break the contract",
     TSR__AR_ACCURACY, c_accuracy_breach, 0, 1},
};

/* ---- files ----------------------------------------------------------------------- */
static int write_text(const char *dir, const char *name, const char *text, size_t len) {
  char path[4400];
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
static void remove_copy(const char *dir) {
  static const char *const names[] = {"results.json", "tables.json", "report.md"};
  char path[4400];
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
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

int tsr__audit_self_test(const char *dir, const tsr__audit_options *opt, FILE *out, json_t *jcases,
                         char *msg, size_t cap) {
  const char *const *names = tsr__audit_files;
  char *raw[3];
  size_t rawlen[3];
  if (tsr__audit_read_dir(dir, raw, rawlen, msg, cap)) return 2;
  tsr__audit_input pristine;
  if (tsr__audit_load_raw(dir, raw, rawlen, &pristine, msg, cap)) {
    for (int i = 0; i < 3; i++) free(raw[i]);
    return 2;
  }
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
  /* The pristine copy, byte for byte. */
  char sub[4200];
  snprintf(sub, sizeof sub, "%s/pristine", root);
  tsr__audit_result res;
  tsr__audit_result_init(&res);
  char inner[1024];
  int ok = mkdir(sub, 0700) == 0;
  for (int i = 0; ok && i < 3; i++) ok = write_text(sub, names[i], raw[i], rawlen[i]) == 0;
  if (!ok || audit_copy(sub, opt, &res, inner, sizeof inner)) {
    snprintf(msg, cap, "self-test: pristine copy in %s: %s", sub, ok ? inner : "cannot write");
    remove_copy(sub);
    tsr__audit_result_free(&res);
    rc = 2;
    goto rm_root;
  }
  remove_copy(sub);
  int pass = res.total == 0;
  if (out) {
    if (pass) fprintf(out, "self-test: pristine copy passes (%zu rows, %zu samples, %zu table cells, %zu report numbers)\n",
                      res.rows, res.samples, res.cells, res.report_numbers);
    else
      fprintf(out, "self-test: pristine copy FAILS the audit (%zu findings; first: %s: %s: %s)\n", res.total,
              res.n ? tsr__audit_reason_name(res.items[0].reason) : "?", res.n ? res.items[0].where : "",
              res.n ? res.items[0].detail : "");
  }
  if (jcases) {
    json_t *o = json_object();
    json_object_set_new(o, "case", json_string("pristine"));
    json_object_set_new(o, "expected", json_string("pass"));
    json_object_set_new(o, "passed", json_boolean(pass));
    json_object_set_new(o, "reasons", reasons_json(&res));
    json_array_append_new(jcases, o);
  }
  if (!pass) rc = 1;
  tsr__audit_result_free(&res);

  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    const corruption *cc = &cases[k];
    if (cc->needs_current && !(opt && opt->current_artifacts)) continue;
    if (cc->needs_accuracy &&
        !json_is_string(json_object_get(json_object_get(pristine.results, "protocol"), "accuracy_inputs"))) {
      if (out) fprintf(out, "self-test: %-21s skipped: the run has no accuracy receipts (%s)\n", cc->name,
                       json_string_value(json_object_get(pristine.results, "schema")));
      continue;
    }
    copy c = {json_deep_copy(pristine.results), json_deep_copy(pristine.tables), strdup(pristine.report),
              0, NULL, cc->expect};
    snprintf(sub, sizeof sub, "%s/%s", root, cc->name);
    int applied = c.results && c.tables && c.report && cc->apply(&c) == 0;
    int rejected = 0;
    tsr__audit_result_init(&res);
    if (applied) {
      int w = mkdir(sub, 0700) == 0 && write_json(sub, names[0], c.results) == 0 &&
              (c.tables_changed ? write_json(sub, names[1], c.tables) : write_text(sub, names[1], raw[1], rawlen[1])) == 0 &&
              write_text(sub, names[2], c.report, strlen(c.report)) == 0;
      if (!w || audit_copy(sub, opt, &res, inner, sizeof inner)) {
        snprintf(msg, cap, "self-test: %s copy in %s: %s", cc->name, sub, w ? inner : "cannot write");
        rc = 2;
      }
      remove_copy(sub);
      rejected = tsr__audit_has(&res, c.expect);
    }
    if (!rejected && rc != 2) rc = 1;
    if (out) {
      if (!applied)
        fprintf(out, "self-test: %-21s NOT APPLICABLE to this run (%s): cannot show its rejection\n", cc->name, cc->what);
      else if (rejected) {
        size_t f = 0;
        while (f < res.n && res.items[f].reason != c.expect) f++;
        fprintf(out, "self-test: %-21s rejected: %s: %s: %s", cc->name, tsr__audit_reason_name(c.expect),
                f < res.n ? res.items[f].where : "", f < res.n ? res.items[f].detail : "");
        if (res.total > 1) fprintf(out, " (+%zu more findings)", res.total - 1);
        fprintf(out, "\n");
      } else
        fprintf(out, "self-test: %-21s NOT REJECTED with %s (%zu other findings)\n", cc->name,
                tsr__audit_reason_name(c.expect), res.total);
      if (c.variant) fprintf(out, "           (%s)\n", c.variant);
    }
    if (jcases) {
      json_t *o = json_object();
      json_object_set_new(o, "case", json_string(cc->name));
      json_object_set_new(o, "corruption", json_string(c.variant ? c.variant : cc->what));
      json_object_set_new(o, "expected", json_string(tsr__audit_reason_name(c.expect)));
      json_object_set_new(o, "applied", json_boolean(applied));
      json_object_set_new(o, "rejected", json_boolean(rejected));
      json_object_set_new(o, "reasons", reasons_json(&res));
      if (res.n) {
        size_t f = 0;
        while (f < res.n && res.items[f].reason != c.expect) f++;
        if (f == res.n) f = 0;
        json_object_set_new(o, "where", json_string(res.items[f].where));
        json_object_set_new(o, "detail", json_string(res.items[f].detail));
      }
      json_array_append_new(jcases, o);
    }
    tsr__audit_result_free(&res);
    json_decref(c.results);
    json_decref(c.tables);
    free(c.report);
  }
rm_root:
  rmdir(root);
out:
  for (int i = 0; i < 3; i++) free(raw[i]);
  tsr__audit_input_free(&pristine);
  return rc;
}
