/* tables.json against the auditor's recomputation from the raw samples:
 * the metric list, every cell (per-round p50s, median, spread, unstable,
 * valid rounds), every paired ratio, the failure list and the balance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_internal.h"

#define FAIL tsr__audit_fail

static double num_or_nan(const json_t *v, int *ok) {
  double d = NAN;
  if (json_is_null(v)) return NAN;
  if (!tsr__audit_num(v, &d) || !isfinite(d)) *ok = 0; /* tables store finite numbers or null */
  return d;
}

/* Compares one recorded value (number or null) with the recomputed one. */
static void cmp(tsr__audit_ctx *c, const char *where, const char *field, const json_t *got,
                double want) {
  int ok = 1;
  double g = num_or_nan(got, &ok);
  if (!got) ok = 0;
  if (ok && tsr__audit_close(g, want)) return;
  char gs[64];
  if (!got) snprintf(gs, sizeof gs, "missing");
  else if (json_is_null(got)) snprintf(gs, sizeof gs, "null");
  else if (!ok) snprintf(gs, sizeof gs, "not a finite number");
  else snprintf(gs, sizeof gs, "%.17g", g);
  FAIL(c->res, TSR__AR_TABLE_MISMATCH, where, "%s is %s, recomputed %.17g%s", field, gs, want,
       isnan(want) ? " (null)" : "");
}

static void cmp_int(tsr__audit_ctx *c, const char *where, const char *field, const json_t *o,
                    long long want) {
  json_int_t v;
  if (tsr__audit_int(o, field, &v) && v == want) return;
  FAIL(c->res, TSR__AR_TABLE_MISMATCH, where, "%s is %s%lld, recomputed %lld", field,
       json_is_integer(json_object_get(o, field)) ? "" : "not an integer: ",
       (long long)(json_is_integer(json_object_get(o, field)) ? v : 0), want);
}

/* o[key] must hold one value per round, each equal to want[r]. */
static void cmp_by_round(tsr__audit_ctx *c, const char *where, const json_t *o, const char *key,
                         const double *want, int rounds) {
  const json_t *by = json_object_get(o, key);
  if (json_array_size(by) != (size_t)rounds) {
    FAIL(c->res, TSR__AR_TABLE_MISMATCH, where, "%s has %zu entries for %d rounds", key,
         json_array_size(by), rounds);
    return;
  }
  for (int r = 0; r < rounds; r++) {
    char f[48];
    snprintf(f, sizeof f, "%s[%d]", key, r);
    cmp(c, where, f, json_array_get(by, (size_t)r), want[r]);
  }
}

static void cmp_str(tsr__audit_ctx *c, const char *where, const char *field, const json_t *o,
                    const char *want) {
  const char *s = tsr__audit_str(o, field);
  if (want ? (s && !strcmp(s, want)) : json_is_null(json_object_get(o, field))) return;
  FAIL(c->res, TSR__AR_TABLE_MISMATCH, where, "%s is '%.60s', expected '%s'", field,
       s ? s : "(not a string)", want ? want : "null");
}

/* Route indices of metric m's kind in base order; returns the count. */
static int metric_routes(const tsr__audit_ctx *c, int m, int *idx) {
  int n = 0;
  for (int x = 0; x < c->R; x++)
    if (c->base_gpu[x] == tsr__audit_metric_is_gpu(m)) idx[n++] = x;
  return n;
}

/* The accuracy table, recomputed from the rows' accuracy receipts: its own
 * median (not the bench's statistics code) and counts. */
static int cmp_double_asc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void check_accuracy_table(tsr__audit_ctx *c) {
  const json_t *acc = json_object_get(c->in->tables, "accuracy");
  if (!c->v2 || !c->accuracy_inputs) {
    if (acc) FAIL(c->res, TSR__AR_TABLE_MISMATCH, "tables.json accuracy", "present, but the run has no accuracy receipts");
    return;
  }
  if (!json_is_object(acc) || !tsr__audit_is(acc, "inputs", c->accuracy_inputs)) {
    FAIL(c->res, TSR__AR_TABLE_MISMATCH, "tables.json accuracy", "missing or not for %s inputs",
         c->accuracy_inputs);
    return;
  }
  const json_t *cells = json_object_get(acc, "cells");
  size_t ci = 0;
  double *v = malloc((size_t)c->rounds * sizeof *v);
  if (!v) return;
  for (int s = 0; s < c->S; s++)
    for (int r = 0; r < c->R; r++) {
      int have = 0, met = 0;
      for (int k = 0; k < c->rounds; k++) {
        const json_t *row = c->slot[((size_t)k * c->S + s) * c->R + r];
        const json_t *a = json_object_get(json_object_get(row, "result"), "accuracy");
        if (!json_is_object(a)) continue;
        double e = NAN;
        tsr__audit_num(json_object_get(a, "rel_fro_err"), &e);
        if (isfinite(e)) v[have] = e;
        else v[have] = INFINITY;
        have++;
        met += json_is_true(json_object_get(a, "passed"));
      }
      if (!have) continue;
      char where[192];
      snprintf(where, sizeof where, "tables.json accuracy (%s, %s)", c->shapes[s].label, c->base[r]);
      const json_t *cell = json_array_get(cells, ci++);
      if (!cell || !tsr__audit_is(cell, "shape", c->shapes[s].label) ||
          !tsr__audit_is(cell, "route", c->base[r])) {
        FAIL(c->res, TSR__AR_TABLE_MISMATCH, where, "no cell at accuracy.cells[%zu]", ci - 1);
        continue;
      }
      qsort(v, (size_t)have, sizeof *v, cmp_double_asc);
      double med = have % 2 ? v[have / 2] : 0.5 * (v[have / 2 - 1] + v[have / 2]);
      cmp_int(c, where, "rounds_checked", cell, have);
      cmp_int(c, where, "rounds_met", cell, met);
      cmp(c, where, "rel_fro_median", json_object_get(cell, "rel_fro_median"), med);
    }
  free(v);
  if (json_array_size(cells) != ci)
    FAIL(c->res, TSR__AR_TABLE_MISMATCH, "tables.json accuracy", "%zu cells, recomputed %zu",
         json_array_size(cells), ci);
}

/* One shape's cells of metric m (routes idx[0..nr) of its kind) from
 * cells[*ci] on. */
static void check_shape_cells(tsr__audit_ctx *c, int m, int s, const int *idx, int nr,
                              const json_t *cells, size_t *ci) {
  int rounds = c->rounds, S = c->S, R = c->R;
  double thr = c->threshold;
  const char *mname = tsr__audit_metric_names[m];
  for (int i = 0; i < nr; i++) {
    int x = idx[i];
    const double *p = &c->p50[(((size_t)m * S + s) * R + x) * rounds];
    const json_t *cell = json_array_get(cells, (*ci)++);
    char cw[200];
    snprintf(cw, sizeof cw, "tables.json %s cell (%.64s, %s)", mname, c->shapes[s].label, c->base[x]);
    if (!cell) continue;
    c->res->cells++;
    if (!tsr__audit_is(cell, "shape", c->shapes[s].label) || !tsr__audit_is(cell, "route", c->base[x])) {
      FAIL(c->res, TSR__AR_TABLE_MISMATCH, cw, "cell %zu names (%.64s, %.32s)", *ci - 1,
           tsr__audit_str(cell, "shape") ? tsr__audit_str(cell, "shape") : "?",
           tsr__audit_str(cell, "route") ? tsr__audit_str(cell, "route") : "?");
      continue;
    }
    int valid = 0;
    for (int r = 0; r < rounds; r++) valid += isfinite(p[r]) != 0;
    cmp_int(c, cw, "rounds_total", cell, rounds);
    cmp_int(c, cw, "rounds_valid", cell, valid);
    cmp_by_round(c, cw, cell, "p50_by_round", p, rounds);
    double med = tsr__audit_median(p, (size_t)rounds), sp = tsr__audit_spread(p, (size_t)rounds);
    cmp(c, cw, "median_of_p50", json_object_get(cell, "median_of_p50"), med);
    cmp(c, cw, "spread", json_object_get(cell, "spread"), sp);
    int unstable = isfinite(sp) && sp > thr;
    const json_t *ju = json_object_get(cell, "unstable");
    if (!json_is_boolean(ju) || json_is_true(ju) != unstable)
      FAIL(c->res, TSR__AR_TABLE_MISMATCH, cw, "unstable should be %s (spread %.6g, threshold %g)",
           unstable ? "true" : "false", sp, thr);
  }
}

/* One shape's paired ratios of metric m: reference route ref against the
 * others, from ratios[*qi] on; q: per-round scratch. */
static void check_shape_ratios(tsr__audit_ctx *c, int m, int s, const int *idx, int nr, int ref,
                               const json_t *ratios, size_t *qi, double *q) {
  int rounds = c->rounds, S = c->S, R = c->R;
  const char *mname = tsr__audit_metric_names[m];
  const char *refname = tsr__audit_metric_is_gpu(m) ? "tessera-gpu" : "tessera-cpu";
  const double *px = &c->p50[(((size_t)m * S + s) * R + ref) * rounds];
  for (int i = 0; i < nr; i++) {
    int y = idx[i];
    if (y == ref) continue;
    const double *py = &c->p50[(((size_t)m * S + s) * R + y) * rounds];
    tsr__audit_pair pr;
    tsr__audit_pairs(px, py, (size_t)rounds, q, &pr);
    const json_t *o = json_array_get(ratios, (*qi)++);
    char rw[200];
    snprintf(rw, sizeof rw, "tables.json %s ratio (%.64s, %s/%s)", mname, c->shapes[s].label,
             refname, c->base[y]);
    if (!o) continue;
    c->res->ratios++;
    if (!tsr__audit_is(o, "shape", c->shapes[s].label) || !tsr__audit_is(o, "peer", c->base[y]) ||
        !tsr__audit_is(o, "reference", refname)) {
      FAIL(c->res, TSR__AR_TABLE_MISMATCH, rw, "ratio %zu names another (shape, reference, peer)", *qi - 1);
      continue;
    }
    cmp_by_round(c, rw, o, "ratio_by_round", q, rounds);
    cmp_int(c, rw, "count", o, (long long)pr.count);
    cmp_int(c, rw, "slower", o, (long long)pr.slower);
    cmp(c, rw, "median", json_object_get(o, "median"), pr.median);
    cmp(c, rw, "min", json_object_get(o, "min"), pr.min);
    cmp(c, rw, "max", json_object_get(o, "max"), pr.max);
  }
}

/* Metric m's table jm (routes idx[0..nr) of its kind); q: per-round scratch. */
static void check_metric_table(tsr__audit_ctx *c, int m, const json_t *jm, const int *idx, int nr,
                               double *q) {
  const char *mname = tsr__audit_metric_names[m];
  char where[160];
  snprintf(where, sizeof where, "tables.json metric %s", mname);
  const char *refname = tsr__audit_metric_is_gpu(m) ? "tessera-gpu" : "tessera-cpu";
  int ref = -1;
  for (int i = 0; i < nr; i++)
    if (!strcmp(c->base[idx[i]], refname)) ref = idx[i];
  cmp_str(c, where, "unit", jm, "ns_per_call");
  cmp_str(c, where, "reference", jm, ref >= 0 ? refname : NULL);
  const json_t *jr = json_object_get(jm, "routes");
  int rok = json_array_size(jr) == (size_t)nr;
  for (int i = 0; rok && i < nr; i++) {
    const char *s = json_string_value(json_array_get(jr, (size_t)i));
    rok = s && !strcmp(s, c->base[idx[i]]);
  }
  if (!rok) FAIL(c->res, TSR__AR_TABLE_MISMATCH, where, "routes differ from the measured %s routes in base order",
                 tsr__audit_metric_is_gpu(m) ? "GPU" : "CPU");
  const json_t *cells = json_object_get(jm, "cells"), *ratios = json_object_get(jm, "ratios");
  if (json_array_size(cells) != (size_t)c->S * nr)
    FAIL(c->res, TSR__AR_TABLE_MISMATCH, where, "%zu cells, recomputed %d", json_array_size(cells), c->S * nr);
  size_t want_ratios = ref >= 0 ? (size_t)c->S * (nr - 1) : 0;
  if (json_array_size(ratios) != want_ratios)
    FAIL(c->res, TSR__AR_TABLE_MISMATCH, where, "%zu ratios, recomputed %zu", json_array_size(ratios), want_ratios);
  size_t ci = 0, qi = 0;
  for (int s = 0; s < c->S; s++) {
    check_shape_cells(c, m, s, idx, nr, cells, &ci);
    if (ref >= 0) check_shape_ratios(c, m, s, idx, nr, ref, ratios, &qi, q);
  }
}

/* Every failed row listed, in row order, and nothing else. */
static void check_failures(tsr__audit_ctx *c, const json_t *t) {
  const json_t *fails = json_object_get(t, "failures"), *rows = json_object_get(c->doc, "rows");
  size_t fi = 0;
  for (size_t i = 0; i < json_array_size(rows); i++) {
    const json_t *row = json_array_get(rows, i);
    if (tsr__audit_is(row, "status", "ok")) continue;
    const json_t *f = json_array_get(fails, fi);
    json_int_t a = -1, b = -2;
    tsr__audit_int(row, "seq", &a);
    tsr__audit_int(f, "seq", &b);
    const char *st = tsr__audit_str(row, "status");
    if (!f || a != b || !st || !tsr__audit_is(f, "status", st)) {
      char where[192];
      tsr__audit_row_where(row, i, where, sizeof where);
      FAIL(c->res, TSR__AR_FAILURE_UNREPORTED, where, "status '%.30s' is not listed at tables.json failures[%zu]",
           st ? st : "?", fi);
      continue;
    }
    fi++;
  }
  if (json_array_size(fails) != fi)
    FAIL(c->res, TSR__AR_TABLE_MISMATCH, "tables.json failures", "%zu entries, %zu failed rows listed in order",
         json_array_size(fails), fi);
}

void tsr__audit_check_tables(tsr__audit_ctx *c) {
  const json_t *t = c->in->tables;
  if (!t) {
    FAIL(c->res, TSR__AR_TABLE_MISMATCH, "tables.json", "missing");
    return;
  }
  /* The threshold is the protocol's: tables regenerated with another one
   * (`tessera report --unstable-threshold`) are not the run's tables. */
  double thr = c->threshold, got = NAN;
  const json_t *jthr = json_object_get(t, "unstable_threshold");
  if (!tsr__audit_num(jthr, &got) || !isfinite(got) || got < 0)
    FAIL(c->res, TSR__AR_TABLE_MISMATCH, "tables.json unstable_threshold", "not a finite non-negative number");
  else if (got != thr)
    FAIL(c->res, TSR__AR_TABLE_MISMATCH, "tables.json unstable_threshold",
         "%g, the protocol's is %g (regenerated with another --unstable-threshold: not the run's tables)",
         got, thr);
  cmp_int(c, "tables.json", "rounds", t, c->rounds);
  if (!json_is_boolean(json_object_get(t, "order_balanced")) ||
      json_is_true(json_object_get(t, "order_balanced")) != c->balanced)
    FAIL(c->res, TSR__AR_TABLE_MISMATCH, "tables.json order_balanced", "recomputed %s",
         c->balanced ? "true" : "false");

  const json_t *metrics = json_object_get(t, "metrics");
  size_t mi = 0;
  double *q = malloc((size_t)c->rounds * sizeof *q);
  if (!q) return;
  for (int m = 0; m < TSR__AUDIT_METRICS; m++) {
    int idx[TSR_AUDIT_MAX_ROUTES];
    int nr = metric_routes(c, m, idx);
    if (!nr) continue;
    const char *mname = tsr__audit_metric_names[m];
    const json_t *jm = json_array_get(metrics, mi++);
    if (!jm || !tsr__audit_is(jm, "metric", mname)) {
      char where[160];
      snprintf(where, sizeof where, "tables.json metric %s", mname);
      FAIL(c->res, TSR__AR_TABLE_MISMATCH, where, "missing (metrics[%zu] is '%.30s')", mi - 1,
           jm && tsr__audit_str(jm, "metric") ? tsr__audit_str(jm, "metric") : "absent");
      continue;
    }
    check_metric_table(c, m, jm, idx, nr, q);
  }
  free(q);
  if (json_array_size(metrics) != mi)
    FAIL(c->res, TSR__AR_TABLE_MISMATCH, "tables.json metrics", "%zu metrics, recomputed %zu",
         json_array_size(metrics), mi);
  check_failures(c, t);
  check_accuracy_table(c);
}
