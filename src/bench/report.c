/* The report: every value recomputed from the raw document's samples.
 * tables.json holds the computed numbers (for the auditor to cross-check),
 * report.md renders them, ratios_<metric>.svg draws the paired ratios. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "sys/file.h"

/* Sizes a document may give the report (docs/protocol.md, the audit's
 * limits too): every allocation and loop below is bounded by them or by the
 * document's own length. */
#define MAX_ROUNDS 1000000
#define MAX_SHAPES 100000
#define MAX_SLOTS ((size_t)1 << 20) /* rounds × shapes × routes */

/* ---- growable text ------------------------------------------------------ */
typedef struct {
  char *s;
  size_t len, cap;
  int oom; /* some text was lost: the buffer must not be used */
} sbuf;

static void sb_printf(sbuf *b, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *f, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, f);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, f, ap);
    va_end(ap);
    if (n < 0) return;
    if (b->s && (size_t)n < room) {
      b->len += (size_t)n;
      return;
    }
    size_t want = b->len + (size_t)n + 1;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < want) cap *= 2;
    char *t = realloc(b->s, cap);
    if (!t) {
      b->oom = 1;
      return;
    }
    b->s = t;
    b->cap = cap;
  }
}

static const char *jstr(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* Element i of a JSON array as text ("" when it is not a string). */
static const char *jstr_at(const json_t *a, size_t i) {
  const char *s = json_string_value(json_array_get(a, i));
  return s ? s : "";
}

/* ---- tables ------------------------------------------------------------- */
static double row_p50(const json_t *row, const char *metric) {
  if (strcmp(jstr(row, "status"), "ok")) return NAN;
  const json_t *res = json_object_get(row, "result");
  if (strcmp(jstr(res, "status"), "ok")) return NAN;
  const json_t *arr = json_object_get(json_object_get(res, "metrics"), metric);
  size_t n = json_array_size(arr);
  if (!n) return NAN;
  /* n is bounded by the document's length (one element per sample). */
  int64_t *ns = malloc(n * sizeof *ns), *calls = malloc(n * sizeof *calls);
  if (!ns || !calls) {
    free(ns);
    free(calls);
    return NAN;
  }
  for (size_t i = 0; i < n; i++) {
    const json_t *s = json_array_get(arr, i);
    ns[i] = json_integer_value(json_object_get(s, "ns"));
    calls[i] = json_integer_value(json_object_get(s, "calls"));
  }
  double p = tsr__sample_p50(ns, calls, n);
  free(ns);
  free(calls);
  return p;
}

/* The accuracy table (docs/accuracy.md): per (shape, route), the accuracy
 * receipts of the rounds that reached their accuracy check, the median of
 * their relative Frobenius errors and in how many rounds the contract was
 * met. Only in tessera-bench/2 documents with accuracy receipts. */
static json_t *accuracy_table(const json_t *doc, json_t *index, int rounds) {
  const json_t *proto = json_object_get(doc, "protocol");
  const char *fam = json_string_value(json_object_get(proto, "accuracy_inputs"));
  if (!fam) return NULL;
  const json_t *shapes = json_object_get(proto, "shapes");
  const json_t *base = json_object_get(json_object_get(doc, "order"), "base_routes");
  json_t *out = json_object(), *cells = json_array();
  json_object_set_new(out, "inputs", json_string(fam));
  json_object_set_new(out, "statistic",
                      json_string("per cell: the accuracy receipts of the rounds that reached "
                                  "their accuracy check; rel_fro_median: median of their "
                                  "relative Frobenius errors; rounds_met: receipts that passed"));
  double *v = malloc((size_t)(rounds > 0 ? rounds : 1) * sizeof *v);
  for (size_t si = 0; si < json_array_size(shapes); si++) {
    const char *shape = jstr(json_array_get(shapes, si), "label");
    for (size_t ri = 0; ri < json_array_size(base); ri++) {
      const char *route = json_string_value(json_array_get(base, ri));
      json_t *by = json_array();
      int have = 0, met = 0;
      const char *prec = NULL, *contract = NULL;
      double strict = NAN, limit = NAN;
      for (int r = 0; r < rounds; r++) {
        char key[512];
        snprintf(key, sizeof key, "%d|%s|%s", r, shape, route ? route : "");
        const json_t *res = json_object_get(json_object_get(index, key), "result");
        const json_t *a = json_object_get(res, "accuracy");
        v[r] = NAN;
        if (json_is_object(a)) {
          v[r] = tsr__json_to_double(json_object_get(a, "rel_fro_err"));
          have++;
          met += json_is_true(json_object_get(a, "passed"));
          if (!prec) prec = json_string_value(json_object_get(res, "precision"));
          if (!contract) contract = json_string_value(json_object_get(a, "contract"));
          strict = tsr__json_to_double(json_object_get(a, "strict_rel_fro"));
          limit = tsr__json_to_double(json_object_get(a, "fro_limit"));
        }
        json_array_append_new(by, num_or_null(v[r]));
      }
      if (!have) {
        json_decref(by);
        continue;
      }
      json_t *cell = json_object();
      json_object_set_new(cell, "shape", json_string(shape));
      json_object_set_new(cell, "route", json_string(route ? route : ""));
      json_object_set_new(cell, "precision", prec ? json_string(prec) : json_null());
      json_object_set_new(cell, "contract", contract ? json_string(contract) : json_null());
      json_object_set_new(cell, "rounds_total", json_integer(rounds));
      json_object_set_new(cell, "rounds_checked", json_integer(have));
      json_object_set_new(cell, "rounds_met", json_integer(met));
      json_object_set_new(cell, "rel_fro_by_round", by);
      json_object_set_new(cell, "rel_fro_median", num_or_null(tsr__median(v, (size_t)rounds)));
      json_object_set_new(cell, "strict_rel_fro", num_or_null(strict));
      json_object_set_new(cell, "fro_limit", num_or_null(limit));
      json_array_append_new(cells, cell);
    }
  }
  free(v);
  json_object_set_new(out, "cells", cells);
  return out;
}

/* The document's extents within the limits above, and distinct shape
 * labels. The rounds (those run, where --max-seconds stopped the run), or -1
 * with msg set. */
static int tables_extents(const json_t *doc, size_t *nbase_out, char *msg, size_t cap) {
  const json_t *proto = json_object_get(doc, "protocol");
  const json_t *jrounds = json_object_get(proto, "rounds");
  const json_t *shapes = json_object_get(proto, "shapes");
  const json_t *base = json_object_get(json_object_get(doc, "order"), "base_routes");
  if (!json_is_integer(jrounds) || json_integer_value(jrounds) < 1 ||
      json_integer_value(jrounds) > MAX_ROUNDS) {
    snprintf(msg, cap, "protocol.rounds: %s%lld is not an integer in [1, %d]",
             json_is_integer(jrounds) ? "" : "missing or not an integer: ",
             (long long)json_integer_value(jrounds), MAX_ROUNDS);
    return -1;
  }
  int rounds = (int)json_integer_value(jrounds);
  size_t nshapes = json_array_size(shapes);
  size_t nbase = json_array_size(base) < TSR_BENCH_MAX_ROUTES ? json_array_size(base) : TSR_BENCH_MAX_ROUTES;
  if (nshapes > MAX_SHAPES || (size_t)rounds * nshapes * (nbase ? nbase : 1) > MAX_SLOTS) {
    snprintf(msg, cap, "protocol: %d rounds × %zu shapes × %zu routes is beyond %zu rows", rounds,
             nshapes, nbase, MAX_SLOTS);
    return -1;
  }
  /* Each (round, shape, route) names one row: labels must be distinct text
   * (a set, not pairwise comparisons: 10^5 shapes must stay cheap). */
  json_t *labels = json_object();
  for (size_t i = 0; i < nshapes; i++) {
    const char *li = json_string_value(json_object_get(json_array_get(shapes, i), "label"));
    const json_t *j = li ? json_object_get(labels, li) : NULL;
    if (!li || j || json_object_set_new(labels, li, json_integer((json_int_t)i))) {
      if (!li) snprintf(msg, cap, "protocol.shapes[%zu]: no label", i);
      else if (j)
        snprintf(msg, cap, "protocol.shapes[%zu]: label '%.64s' repeats shapes[%lld]", i, li,
                 (long long)json_integer_value(j));
      else snprintf(msg, cap, "out of memory for %zu shapes", nshapes);
      json_decref(labels);
      return -1;
    }
  }
  json_decref(labels);
  /* a run stopped by --max-seconds: its tables are over the rounds it ran */
  const json_t *st = json_object_get(doc, "stopped");
  if (st && !json_is_null(st)) {
    const json_t *rr = json_object_get(st, "rounds_run");
    if (!json_is_object(st) || !json_is_integer(rr) || json_integer_value(rr) < 1 ||
        json_integer_value(rr) >= rounds) {
      snprintf(msg, cap, "stopped.rounds_run: not an integer in [1, %d) (protocol.rounds %d)", rounds,
               rounds);
      return -1;
    }
    rounds = (int)json_integer_value(rr);
  }
  *nbase_out = nbase;
  return rounds;
}

/* What the metric tables share: the document's parts, the row index and
 * per-round scratch (x, y, q: rounds each; p50: routes × rounds). */
typedef struct {
  const json_t *shapes, *base, *routes;
  json_t *index; /* (round|shape|route) → row */
  int rounds;
  size_t nbase;
  double threshold;
  double *x, *y, *q, *p50;
} tables_ctx;

/* The cells of one shape for the nr routes mr of metric mname; each
 * route's per-round p50s are left in tc->p50 for the ratios. */
static void metric_cells(tables_ctx *tc, const char *mname, const char *shape, const char *const *mr,
                         int nr, json_t *cells) {
  int rounds = tc->rounds;
  for (int i = 0; i < nr; i++) {
    json_t *cell = json_object(), *by = json_array();
    int valid = 0;
    for (int r = 0; r < rounds; r++) {
      char key[512];
      snprintf(key, sizeof key, "%d|%s|%s", r, shape, mr[i]);
      double v = row_p50(json_object_get(tc->index, key), mname);
      tc->x[r] = v;
      tc->p50[(size_t)i * rounds + r] = v;
      if (isfinite(v)) valid++;
      json_array_append_new(by, num_or_null(v));
    }
    double med = tsr__median(tc->x, (size_t)rounds), spread = tsr__spread(tc->x, (size_t)rounds);
    json_object_set_new(cell, "shape", json_string(shape));
    json_object_set_new(cell, "route", json_string(mr[i]));
    json_object_set_new(cell, "rounds_total", json_integer(rounds));
    json_object_set_new(cell, "rounds_valid", json_integer(valid));
    json_object_set_new(cell, "p50_by_round", by);
    json_object_set_new(cell, "median_of_p50", num_or_null(med));
    json_object_set_new(cell, "spread", num_or_null(spread));
    json_object_set_new(cell, "unstable", json_boolean(isfinite(spread) && spread > tc->threshold));
    json_array_append_new(cells, cell);
  }
}

/* The paired ratios of one shape: reference route ref_idx against every
 * other route, from the p50s metric_cells left. */
static void metric_ratios(tables_ctx *tc, const char *shape, const char *ref, int ref_idx,
                          const char *const *mr, int nr, json_t *ratios) {
  int rounds = tc->rounds;
  for (int i = 0; i < nr; i++) {
    if (i == ref_idx) continue;
    for (int r = 0; r < rounds; r++) {
      tc->x[r] = tc->p50[(size_t)ref_idx * rounds + r];
      tc->y[r] = tc->p50[(size_t)i * rounds + r];
    }
    tsr__paired pr;
    tsr__paired_ratios(tc->x, tc->y, (size_t)rounds, tc->q, &pr);
    json_t *o = json_object(), *by = json_array();
    for (int r = 0; r < rounds; r++) json_array_append_new(by, num_or_null(tc->q[r]));
    json_object_set_new(o, "shape", json_string(shape));
    json_object_set_new(o, "reference", json_string(ref));
    json_object_set_new(o, "peer", json_string(mr[i]));
    json_object_set_new(o, "ratio_by_round", by);
    json_object_set_new(o, "count", json_integer((json_int_t)pr.count));
    json_object_set_new(o, "median", num_or_null(pr.median));
    json_object_set_new(o, "min", num_or_null(pr.min));
    json_object_set_new(o, "max", num_or_null(pr.max));
    json_object_set_new(o, "slower", json_integer((json_int_t)pr.slower));
    json_array_append_new(ratios, o);
  }
}

/* Metric m's table, or NULL when no route of its kind was measured. */
static json_t *metric_table(tables_ctx *tc, int m) {
  const char *mname = tsr__metric_name((tsr__metric)m);
  int gpu = tsr__metric_is_gpu((tsr__metric)m);
  /* Routes of this metric's kind, in base order. */
  const char *mr[TSR_BENCH_MAX_ROUTES];
  int nr = 0;
  for (size_t i = 0; i < tc->nbase && nr < TSR_BENCH_MAX_ROUTES; i++) {
    const char *name = json_string_value(json_array_get(tc->base, i));
    for (size_t j = 0; name && j < json_array_size(tc->routes); j++) {
      const json_t *rt = json_array_get(tc->routes, j);
      if (!strcmp(jstr(rt, "name"), name) && !strcmp(jstr(rt, "kind"), gpu ? "gpu" : "cpu")) {
        mr[nr++] = name;
        break;
      }
    }
  }
  if (!nr) return NULL;
  const char *ref = gpu ? "tessera-gpu" : "tessera-cpu";
  int ref_idx = -1;
  for (int i = 0; i < nr; i++)
    if (!strcmp(mr[i], ref)) ref_idx = i;
  json_t *jm = json_object(), *cells = json_array(), *ratios = json_array();
  json_object_set_new(jm, "metric", json_string(mname));
  json_object_set_new(jm, "unit", json_string("ns_per_call"));
  json_object_set_new(jm, "reference", ref_idx >= 0 ? json_string(ref) : json_null());
  json_t *jr = json_array();
  for (int i = 0; i < nr; i++) json_array_append_new(jr, json_string(mr[i]));
  json_object_set_new(jm, "routes", jr);
  for (size_t si = 0; si < json_array_size(tc->shapes); si++) {
    const char *shape = jstr(json_array_get(tc->shapes, si), "label");
    metric_cells(tc, mname, shape, mr, nr, cells);
    if (ref_idx >= 0) metric_ratios(tc, shape, ref, ref_idx, mr, nr, ratios);
  }
  json_object_set_new(jm, "cells", cells);
  json_object_set_new(jm, "ratios", ratios);
  return jm;
}

/* Every failed row: seq, round, shape, route, status, detail. */
static json_t *failures_json(const json_t *rows) {
  json_t *fails = json_array();
  for (size_t i = 0; i < json_array_size(rows); i++) {
    const json_t *row = json_array_get(rows, i);
    if (!strcmp(jstr(row, "status"), "ok")) continue;
    json_t *f = json_object();
    json_object_set(f, "seq", json_object_get(row, "seq"));
    json_object_set(f, "round", json_object_get(row, "round"));
    json_object_set_new(f, "shape", json_string(jstr(row, "shape")));
    json_object_set_new(f, "route", json_string(jstr(row, "route")));
    json_object_set_new(f, "status", json_string(jstr(row, "status")));
    json_object_set_new(f, "detail", json_string(jstr(row, "detail")));
    json_array_append_new(fails, f);
  }
  return fails;
}

json_t *tsr__bench_tables(const json_t *doc, double threshold, char *msg, size_t cap) {
  /* the previous schema (no accuracy receipts) still reports */
  if (strcmp(jstr(doc, "schema"), TSR_BENCH_SCHEMA) && strcmp(jstr(doc, "schema"), "tessera-bench/2") &&
      strcmp(jstr(doc, "schema"), "tessera-bench/1")) {
    snprintf(msg, cap, "schema: '%s' is not %s", jstr(doc, "schema"), TSR_BENCH_SCHEMA);
    return NULL;
  }
  const json_t *proto = json_object_get(doc, "protocol");
  if (threshold < 0) {
    threshold = tsr__json_to_double(json_object_get(proto, "unstable_threshold"));
    if (!isfinite(threshold)) threshold = 0.10;
  }
  tables_ctx tc = {0};
  int rounds = tables_extents(doc, &tc.nbase, msg, cap);
  if (rounds < 0) return NULL;
  const json_t *rows = json_object_get(doc, "rows");
  tc.shapes = json_object_get(proto, "shapes");
  tc.base = json_object_get(json_object_get(doc, "order"), "base_routes");
  tc.routes = json_object_get(doc, "routes");
  tc.rounds = rounds;
  tc.threshold = threshold;

  /* (round|shape|route) → row */
  json_t *index = json_object();
  tc.index = index;
  for (size_t i = 0; i < json_array_size(rows); i++) {
    const json_t *row = json_array_get(rows, i);
    char key[512];
    snprintf(key, sizeof key, "%lld|%s|%s", (long long)json_integer_value(json_object_get(row, "round")),
             jstr(row, "shape"), jstr(row, "route"));
    json_object_set(index, key, (json_t *)row);
  }

  json_t *out = json_object();
  json_object_set_new(out, "schema", json_string(TSR_BENCH_TABLES_SCHEMA));
  json_object_set_new(out, "unstable_threshold", json_real(threshold));
  json_object_set_new(out, "rounds", json_integer(rounds));
  json_object_set_new(out, "statistic",
                      json_string("per round: p50 of samples (ns/calls each; even count: mean of "
                                  "the two middle values); cell: median of per-round p50s; ratio: "
                                  "median of same-round ratios reference/peer"));
  json_t *jmetrics = json_array();
  tc.x = malloc((size_t)rounds * sizeof *tc.x);
  tc.y = malloc((size_t)rounds * sizeof *tc.y);
  tc.q = malloc((size_t)rounds * sizeof *tc.q);
  tc.p50 = malloc((size_t)TSR_BENCH_MAX_ROUTES * (size_t)rounds * sizeof *tc.p50);
  if (!tc.x || !tc.y || !tc.q || !tc.p50) {
    snprintf(msg, cap, "out of memory for %d rounds", rounds);
    free(tc.x), free(tc.y), free(tc.q), free(tc.p50);
    json_decref(jmetrics);
    json_decref(out);
    json_decref(index);
    return NULL;
  }
  for (int m = 0; m < TSR_METRIC_COUNT; m++) {
    json_t *jm = metric_table(&tc, m);
    if (jm) json_array_append_new(jmetrics, jm);
  }
  free(tc.x);
  free(tc.y);
  free(tc.q);
  free(tc.p50);
  json_object_set_new(out, "metrics", jmetrics);
  json_object_set_new(out, "failures", failures_json(rows));
  const json_t *check = json_object_get(json_object_get(doc, "order"), "check");
  json_object_set_new(out, "order_balanced", json_boolean(json_is_true(json_object_get(check, "balanced"))));
  json_t *acc = accuracy_table(doc, index, rounds);
  if (acc) json_object_set_new(out, "accuracy", acc);
  json_decref(index);
  return out;
}

/* ---- rendering ---------------------------------------------------------- */
static const char *metric_title(const char *m) {
  if (!strcmp(m, "gpu_batch")) return "GPU batch (CUDA events around n back-to-back calls, / n)";
  if (!strcmp(m, "gpu_single")) return "GPU single (CUDA events around one synchronized call)";
  if (!strcmp(m, "e2e_batch")) return "E2E batch (host clock around n calls + sync, / n)";
  if (!strcmp(m, "e2e_single")) return "E2E single (host clock around one call + sync)";
  if (!strcmp(m, "wall_batch")) return "CPU wall batch (host clock around n calls, / n)";
  if (!strcmp(m, "wall_single")) return "CPU wall single (host clock around one call)";
  return m;
}

static void us(sbuf *b, double ns) { sb_printf(b, "%.3f", ns / 1000.0); }

static void render_failures(sbuf *b, const json_t *fails) {
  if (!json_array_size(fails)) return;
  sb_printf(b, "## FAILED ROWS (%zu)\n\nThese rows have no time; they are excluded from every median "
               "and ratio below and counted in each cell's valid-round count.\n\n"
               "| seq | round | M×N×K | route | status | detail |\n|---:|---:|---|---|---|---|\n",
            json_array_size(fails));
  for (size_t i = 0; i < json_array_size(fails); i++) {
    const json_t *f = json_array_get(fails, i);
    char detail[300];
    snprintf(detail, sizeof detail, "%s", jstr(f, "detail"));
    for (char *c = detail; *c; c++)
      if (*c == '|' || *c == '\n') *c = ' ';
    sb_printf(b, "| %lld | %lld | %s | %s | **%s** | %s |\n",
              (long long)json_integer_value(json_object_get(f, "seq")),
              (long long)json_integer_value(json_object_get(f, "round")), jstr(f, "shape"),
              jstr(f, "route"), jstr(f, "status"), detail);
  }
  sb_printf(b, "\n");
}

/* A metric's table of cells, then its unstable cells listed. */
static void render_cells(sbuf *b, const json_t *jm, double threshold) {
  const json_t *routes = json_object_get(jm, "routes"), *cells = json_object_get(jm, "cells");
  size_t nr = json_array_size(routes);
  sb_printf(b, "## %s\n\nMedian of per-round p50s, µs per call (lower is better). "
               "⚠ = unstable (per-round p50 spread > %.0f%%); (k/N) = only k of N rounds valid.\n\n| M×N×K |",
            metric_title(jstr(jm, "metric")), threshold * 100);
  for (size_t i = 0; i < nr; i++) sb_printf(b, " %s |", jstr_at(routes, i));
  sb_printf(b, "\n|---|");
  for (size_t i = 0; i < nr; i++) sb_printf(b, "---:|");
  sb_printf(b, "\n");
  sbuf unstable = {0};
  for (size_t c = 0; c < json_array_size(cells); c++) {
    const json_t *cell = json_array_get(cells, c);
    if (c % nr == 0) sb_printf(b, "| %s |", jstr(cell, "shape"));
    double med = tsr__json_to_double(json_object_get(cell, "median_of_p50"));
    long long valid = json_integer_value(json_object_get(cell, "rounds_valid"));
    long long total = json_integer_value(json_object_get(cell, "rounds_total"));
    sb_printf(b, " ");
    if (!isfinite(med)) sb_printf(b, "**FAILED**");
    else us(b, med);
    if (json_is_true(json_object_get(cell, "unstable"))) {
      double sp = tsr__json_to_double(json_object_get(cell, "spread"));
      sb_printf(b, " ⚠");
      sb_printf(&unstable, "- %s, %s: per-round p50 spread %.1f%% (max/min − 1)\n",
                jstr(cell, "route"), jstr(cell, "shape"), sp * 100);
    }
    if (valid != total) sb_printf(b, " (%lld/%lld)", valid, total);
    sb_printf(b, " |");
    if (c % nr == nr - 1) sb_printf(b, "\n");
  }
  sb_printf(b, "\n");
  if (unstable.len) {
    sb_printf(b, "**Unstable** (threshold %.0f%%):\n\n%s\n", threshold * 100, unstable.s);
  }
  if (unstable.oom) b->oom = 1;
  free(unstable.s);
}

/* A metric's paired ratios, or why it has none. */
static void render_ratios(sbuf *b, const json_t *jm) {
  const json_t *ratios = json_object_get(jm, "ratios");
  if (!json_array_size(ratios)) {
    if (json_is_null(json_object_get(jm, "reference")))
      sb_printf(b, "No paired ratios: the reference route (tessera-%s) was not measured.\n\n",
                strncmp(jstr(jm, "metric"), "wall", 4) ? "gpu" : "cpu");
    return;
  }
  const char *ref = jstr(jm, "reference");
  sb_printf(b, "Paired ratios %s / peer: median of same-round ratios [min, max]; "
               "slower = rounds where %s was slower / rounds paired.\n\n| M×N×K |", ref, ref);
  size_t np = 0;
  const char *first_shape = jstr(json_array_get(ratios, 0), "shape");
  for (size_t i = 0; i < json_array_size(ratios); i++) {
    const json_t *o = json_array_get(ratios, i);
    if (strcmp(jstr(o, "shape"), first_shape)) break;
    sb_printf(b, " %s/%s | slower |", ref, jstr(o, "peer"));
    np++;
  }
  sb_printf(b, "\n|---|");
  for (size_t i = 0; i < np; i++) sb_printf(b, "---:|---:|");
  sb_printf(b, "\n");
  for (size_t i = 0; i < json_array_size(ratios); i++) {
    const json_t *o = json_array_get(ratios, i);
    if (i % np == 0) sb_printf(b, "| %s |", jstr(o, "shape"));
    long long cnt = json_integer_value(json_object_get(o, "count"));
    if (!cnt) sb_printf(b, " — | 0/0 |");
    else
      sb_printf(b, " %.3f [%.3f, %.3f] | %lld/%lld |",
                tsr__json_to_double(json_object_get(o, "median")),
                tsr__json_to_double(json_object_get(o, "min")),
                tsr__json_to_double(json_object_get(o, "max")),
                (long long)json_integer_value(json_object_get(o, "slower")), cnt);
    if (i % np == np - 1) sb_printf(b, "\n");
  }
  sb_printf(b, "\n");
}

static void render_accuracy(sbuf *b, const json_t *acc) {
  const json_t *cells = json_object_get(acc, "cells");
  sb_printf(b, "## Accuracy (%s inputs; docs/accuracy.md)\n\nEach route's output on %s inputs "
               "against the FP64 oracle, held to the contract of the precision mode it ran: "
               "relative Frobenius error (median over rounds), the strict FP32 reference's on "
               "the same inputs, the contract's limit (1.25x strict's; 2^-10 for tf32; none "
               "under 1024 outputs), and the rounds that met it. A row that breaks its "
               "contract is a failed row: it has no time.\n\n"
               "| M×N×K | route | precision | rel. Frobenius err | strict FP32 ref. | limit | "
               "contract met |\n|---|---|---|---:|---:|---:|---:|\n",
            jstr(acc, "inputs"), jstr(acc, "inputs"));
  for (size_t i = 0; i < json_array_size(cells); i++) {
    const json_t *c = json_array_get(cells, i);
    double e = tsr__json_to_double(json_object_get(c, "rel_fro_median"));
    double st = tsr__json_to_double(json_object_get(c, "strict_rel_fro"));
    double li = tsr__json_to_double(json_object_get(c, "fro_limit"));
    long long met = json_integer_value(json_object_get(c, "rounds_met"));
    long long chk = json_integer_value(json_object_get(c, "rounds_checked"));
    sb_printf(b, "| %s | %s | %s | %.3g | %.3g | ", jstr(c, "shape"), jstr(c, "route"),
              jstr(c, "precision"), e, st);
    if (isfinite(li)) sb_printf(b, "%.3g", li);
    else sb_printf(b, "-");
    sb_printf(b, " | %s%lld/%lld%s |\n", met == chk ? "" : "**", met, chk, met == chk ? "" : "**");
  }
  sb_printf(b, "\n");
}

static void render_tables(sbuf *b, const json_t *tables, double threshold) {
  const json_t *metrics = json_object_get(tables, "metrics");
  render_failures(b, json_object_get(tables, "failures"));
  for (size_t mi = 0; mi < json_array_size(metrics); mi++) {
    const json_t *jm = json_array_get(metrics, mi);
    render_cells(b, jm, threshold);
    render_ratios(b, jm);
  }
  const json_t *acc = json_object_get(tables, "accuracy");
  if (json_is_object(acc)) render_accuracy(b, acc);
}

/* Paired ratios of one metric with [min, max] whiskers on a log axis. */
static char *render_svg(const json_t *jm) {
  const json_t *ratios = json_object_get(jm, "ratios");
  size_t n = json_array_size(ratios);
  double lo = 1.0, hi = 1.0;
  for (size_t i = 0; i < n; i++) {
    const json_t *o = json_array_get(ratios, i);
    double a = tsr__json_to_double(json_object_get(o, "min")), z = tsr__json_to_double(json_object_get(o, "max"));
    if (isfinite(a) && a < lo) lo = a;
    if (isfinite(z) && z > hi) hi = z;
  }
  lo /= 1.15;
  hi *= 1.15;
  const double X0 = 300, X1 = 760, ROW = 24, TOP = 64;
  double H = TOP + ROW * (double)n + 50;
  double llo = log(lo), lhi = log(hi);
#define XPOS(v) (X0 + (X1 - X0) * (log(v) - llo) / (lhi - llo))
  sbuf b = {0};
  sb_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"%.0f\" "
                "viewBox=\"0 0 800 %.0f\" font-family=\"monospace\" font-size=\"12\">\n",
            H, H);
  sb_printf(&b, "<rect width=\"800\" height=\"%.0f\" fill=\"white\"/>\n", H);
  sb_printf(&b, "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">%s: %s / peer</text>\n",
            jstr(jm, "metric"), jstr(jm, "reference"));
  sb_printf(&b, "<text x=\"10\" y=\"38\">dot: median of same-round ratios; bar: [min, max] over "
                "rounds; left of 1 = %s faster (log scale)</text>\n",
            jstr(jm, "reference"));
  static const double ticks[] = {0.05, 0.1, 0.2, 0.25, 0.5, 0.667, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2, 4, 5, 10, 20};
  double last_x = -100;
  for (size_t t = 0; t < sizeof ticks / sizeof *ticks; t++) {
    double v = ticks[t];
    if (v < lo || v > hi) continue;
    double xp = XPOS(v);
    if (xp - last_x < 34 && v != 1.0) continue;
    last_x = xp;
    sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"%s\" %s/>\n", xp,
              TOP - 8, xp, TOP + ROW * (double)n, v == 1.0 ? "black" : "#ddd",
              v == 1.0 ? "stroke-dasharray=\"4,3\"" : "");
    sb_printf(&b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%g</text>\n", xp,
              TOP + ROW * (double)n + 16, v);
  }
  for (size_t i = 0; i < n; i++) {
    const json_t *o = json_array_get(ratios, i);
    double yc = TOP + ROW * (double)i + ROW / 2;
    double md = tsr__json_to_double(json_object_get(o, "median"));
    double a = tsr__json_to_double(json_object_get(o, "min")), z = tsr__json_to_double(json_object_get(o, "max"));
    sb_printf(&b, "<text x=\"10\" y=\"%.1f\">%s vs %s</text>\n", yc + 4, jstr(o, "shape"), jstr(o, "peer"));
    if (!isfinite(md)) {
      sb_printf(&b, "<text x=\"%.0f\" y=\"%.1f\" fill=\"red\">no valid pair</text>\n", X0, yc + 4);
      continue;
    }
    const char *col = md <= 1.0 ? "#1a7f37" : "#c0392b";
    sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
              XPOS(a), yc, XPOS(z), yc, col);
    sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", XPOS(a), yc - 5, XPOS(a), yc + 5, col);
    sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", XPOS(z), yc - 5, XPOS(z), yc + 5, col);
    sb_printf(&b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>median %.4f [%.4f, %.4f] slower %lld/%lld</title></circle>\n",
              XPOS(md), yc, col, md, a, z, (long long)json_integer_value(json_object_get(o, "slower")),
              (long long)json_integer_value(json_object_get(o, "count")));
  }
#undef XPOS
  sb_printf(&b, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">ratio %s / peer</text>\n</svg>\n",
            (X0 + X1) / 2, H - 8, jstr(jm, "reference"));
  if (b.oom) {
    free(b.s);
    return NULL;
  }
  return b.s;
}

/* A rendered file into files {name: text}; text NULL (a buffer that could
 * not grow) is an error. */
static int add_file(json_t *files, const char *name, const char *text, size_t len, char *msg,
                    size_t cap) {
  json_t *s = text ? json_stringn_nocheck(text, len) : NULL;
  if (!s || json_object_set_new(files, name, s)) {
    snprintf(msg, cap, "out of memory rendering %s", name);
    return -1;
  }
  return 0;
}

/* One summary paragraph first, so the printed tables stand on their own. */
static void render_summary(sbuf *t, const json_t *doc, const json_t *tables) {
  const json_t *rts = json_object_get(doc, "routes");
  const json_t *chk = json_object_get(json_object_get(doc, "order"), "check");
  sb_printf(t, "%zu rows, %zu failed; order %s; measured:", json_array_size(json_object_get(doc, "rows")),
            json_array_size(json_object_get(tables, "failures")),
            json_is_true(json_object_get(chk, "balanced")) ? "balanced" : "NOT BALANCED");
  for (size_t i = 0; i < json_array_size(rts); i++)
    if (json_is_true(json_object_get(json_array_get(rts, i), "available")))
      sb_printf(t, " %s", jstr(json_array_get(rts, i), "name"));
  sb_printf(t, "\n");
  for (size_t i = 0; i < json_array_size(rts); i++) {
    const json_t *rt = json_array_get(rts, i);
    if (!json_is_true(json_object_get(rt, "available")))
      sb_printf(t, "- skipped %s: %s\n", jstr(rt, "name"), jstr(rt, "reason"));
  }
  sb_printf(t, "\n");
}

/* The standings by zoo class (docs/zoo.md) of a run over zoo shapes: a
 * zoo preset, or every shape in the zoo (seed 1) and of more than one
 * class. One section per pair of
 * tessera's route and its peer that has paired ratios, the same text as
 * `tessera zoo --summarize DIR` prints. Nothing for other runs. */
static void render_zoo_classes(sbuf *t, const json_t *doc, const json_t *tables) {
  const json_t *proto = json_object_get(doc, "protocol");
  const char *preset = jstr(proto, "preset");
  int nz = tsr__zoo(1, 0, NULL, 0);
  tsr__zoo_shape *zs = calloc((size_t)nz, sizeof *zs);
  if (!zs) {
    t->oom = 1;
    return;
  }
  tsr__zoo(1, 0, zs, nz);
  int zoo_run = !strcmp(preset, "zoo") || !strcmp(preset, "zoo-quick");
  if (!zoo_run) {
    unsigned classes = 0;
    size_t in = (size_t)tsr__bench_zoo_shapes(doc, zs, nz, &classes);
    /* one class (a few squares, one decode shape) has no standings to speak of */
    zoo_run = in && in == json_array_size(json_object_get(proto, "shapes")) && (classes & (classes - 1));
  }
  const char *const(*pairs)[3] = tsr__zoo_pairs;
  for (size_t p = 0; zoo_run && p < TSR__ZOO_PAIRS; p++) {
    tsr__zoo_row *rows = NULL;
    int n = 0;
    char msg[256];
    if (tsr__bench_zoo_rows(doc, tables, pairs[p][2], pairs[p][0], pairs[p][1], zs, nz, &rows, &n,
                            msg, sizeof msg) > 0) {
      char *md = tsr__bench_zoo_summary_md(rows, n, pairs[p][0], pairs[p][1], pairs[p][2]);
      if (md) sb_printf(t, "%s\n", md);
      else t->oom = 1;
      free(md);
    }
    free(rows);
  }
  free(zs);
}

/* report.md's head: the run, its protocol, routes, order, executable and digest. */
/* A CPU peer's library build as its first measured row recorded it, and any
 * environment variable that pinned it below its best kernels. */
static void render_route_versions(sbuf *r, const json_t *doc, const char *route) {
  const json_t *rows = json_object_get(doc, "rows");
  for (size_t i = 0; i < json_array_size(rows); i++) {
    const json_t *row = json_array_get(rows, i);
    if (strcmp(jstr(row, "route"), route)) continue;
    const json_t *v = json_object_get(json_object_get(row, "result"), "versions");
    const char *cfg = jstr(v, "openblas_config");
    if (!*cfg) continue;
    sb_printf(r, "; %s", cfg);
    const char *pin[] = {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"};
    for (size_t j = 0; j < sizeof pin / sizeof *pin; j++)
      if (*jstr(v, pin[j]))
        sb_printf(r, "; **%s=%s was set: the peer ran pinned, not at its best**", pin[j],
                  jstr(v, pin[j]));
    return;
  }
}

static void render_header(sbuf *r, const json_t *doc, double threshold, double proto_threshold) {
  const json_t *proto = json_object_get(doc, "protocol"), *host = json_object_get(doc, "host");
  sb_printf(r, "# tessera bench report\n\n");
  if (!json_is_true(json_object_get(doc, "complete")))
    sb_printf(r, "**INCOMPLETE RUN**: the raw document was not finished; tables cover the rows present.\n\n");
  sb_printf(r, "Generated from `results.json` alone (`tessera report DIR` regenerates this file, "
               "`tables.json` and the SVG charts). Schema %s; see docs/protocol.md.\n\n",
            jstr(doc, "schema"));
  sb_printf(r, "- started %s, finished %s; host %s, CPU %s (%lld online)\n", jstr(doc, "started_utc"),
            jstr(doc, "finished_utc"), jstr(host, "hostname"), jstr(host, "cpu_model"),
            (long long)json_integer_value(json_object_get(host, "ncpu_online")));
  const char *drv = jstr(json_object_get(doc, "device"), "nvidia_driver");
  sb_printf(r, "- device: %s\n", *drv ? drv : "no NVIDIA driver found");
  sb_printf(r, "- command:");
  const json_t *cl = json_object_get(doc, "command_line");
  for (size_t i = 0; i < json_array_size(cl); i++) sb_printf(r, " %s", jstr_at(cl, i));
  sb_printf(r, "\n- protocol: %lld rounds, %lld samples, sample window %lld ms, warm-up %lld ms, "
               "timeout %lld s, %s inputs (seed %lld), %lld CPU threads, batch %lld, op(A)=%s op(B)=%s, "
               "alpha %g, beta %g, atol %g, rtol %g\n",
            (long long)json_integer_value(json_object_get(proto, "rounds")),
            (long long)json_integer_value(json_object_get(proto, "samples")),
            (long long)json_integer_value(json_object_get(proto, "sample_ms")),
            (long long)json_integer_value(json_object_get(proto, "warmup_ms")),
            (long long)json_integer_value(json_object_get(proto, "timeout_s")), jstr(proto, "inputs"),
            (long long)json_integer_value(json_object_get(proto, "seed")),
            (long long)json_integer_value(json_object_get(proto, "threads")),
            (long long)json_integer_value(json_object_get(proto, "batch")), jstr(proto, "op_a"),
            jstr(proto, "op_b"), tsr__json_to_double(json_object_get(proto, "alpha")),
            tsr__json_to_double(json_object_get(proto, "beta")),
            tsr__json_to_double(json_object_get(proto, "atol")),
            tsr__json_to_double(json_object_get(proto, "rtol")));
  /* shapes with a problem kind of their own ("[B*]MxNxK[:XY]") */
  const json_t *shapes = json_object_get(proto, "shapes");
  size_t own = 0;
  for (size_t i = 0; i < json_array_size(shapes); i++) {
    const json_t *sh = json_array_get(shapes, i);
    if ((json_object_get(sh, "batch") &&
         json_integer_value(json_object_get(sh, "batch")) != json_integer_value(json_object_get(proto, "batch"))) ||
        (json_object_get(sh, "op_a") && strcmp(jstr(sh, "op_a"), jstr(proto, "op_a"))) ||
        (json_object_get(sh, "op_b") && strcmp(jstr(sh, "op_b"), jstr(proto, "op_b"))))
      own++;
  }
  if (own)
    sb_printf(r, "- %zu of %zu shapes have a batch or ops of their own (B* and :XY in their labels; "
                 "docs/protocol.md); the protocol's batch and ops are the others'\n",
              own, json_array_size(shapes));
  if (threshold != proto_threshold)
    sb_printf(r, "- **unstable threshold %g is not the protocol's (%g)**: these files were regenerated "
                 "with `tessera report --unstable-threshold`; the run's own report uses the "
                 "protocol's, and `tessera audit` checks that one\n",
              threshold, proto_threshold);
  const json_t *routes = json_object_get(doc, "routes");
  sb_printf(r, "- routes:\n");
  for (size_t i = 0; i < json_array_size(routes); i++) {
    const json_t *rt = json_array_get(routes, i);
    if (json_is_true(json_object_get(rt, "available"))) {
      sb_printf(r, "  - %s (%s): measured", jstr(rt, "name"), jstr(rt, "kind"));
      render_route_versions(r, doc, jstr(rt, "name"));
      sb_printf(r, "\n");
    } else
      sb_printf(r, "  - %s (%s): **skipped**: %s\n", jstr(rt, "name"), jstr(rt, "kind"), jstr(rt, "reason"));
  }
  const json_t *check = json_object_get(json_object_get(doc, "order"), "check");
  if (json_is_true(json_object_get(check, "balanced")))
    sb_printf(r, "- order: balanced (checked on the realized order: every route holds every position "
                 "equally often per shape, every ordered pair occurs equally often in both precedences)\n");
  else
    sb_printf(r, "- order: **NOT BALANCED** (%zu problems listed in results.json order.check)\n",
              json_array_size(json_object_get(check, "problems")));
  const json_t *jexe = json_object_get(json_object_get(doc, "artifacts"), "executable");
  sb_printf(r, "- executable sha256 %s%s\n", jstr(jexe, "sha256"),
            json_is_false(json_object_get(jexe, "unchanged")) ? " (**CHANGED during the run**)" : "");
  /* tessera-bench/3: the run's digest (docs/protocol.md), to quote elsewhere */
  if (json_is_object(json_object_get(doc, "chain"))) {
    const char *dg = jstr(doc, "digest");
    if (*dg)
      sb_printf(r, "- digest sha256:%s (the hash chain over results.json; `tessera audit --digest "
                   "%s DIR` verifies the run against it)\n", dg, dg);
    else
      sb_printf(r, "- digest: none (the run did not finish; its hash chain covers the rows present)\n");
  }
  sb_printf(r, "\nStatistics: per round, the p50 of the samples (each sample is ns / calls); a table "
               "value is the median of the per-round p50s; a paired ratio is the median over rounds "
               "of the same-round ratio, with its [min, max] and the count of rounds where the "
               "reference was slower. Never a ratio of medians, never a selected minimum.\n\n");
}

/* The charts (each linked from report.md), tables.json and report.md into
 * files; t holds the rendered tables, r report.md so far. 0, or -1 with msg. */
static int render_files(const json_t *tables, const sbuf *t, sbuf *r, json_t *files, char *msg,
                        size_t cap) {
  const json_t *metrics = json_object_get(tables, "metrics");
  int rc = files ? 0 : -1;
  if (!files) snprintf(msg, cap, "out of memory rendering the report");
  if (!rc && t->oom) {
    snprintf(msg, cap, "out of memory rendering the tables");
    rc = -1;
  }
  for (size_t i = 0; i < json_array_size(metrics) && !rc; i++) {
    const json_t *jm = json_array_get(metrics, i);
    if (!json_array_size(json_object_get(jm, "ratios"))) continue;
    char name[128];
    snprintf(name, sizeof name, "ratios_%s.svg", jstr(jm, "metric"));
    char *svg = render_svg(jm);
    rc = add_file(files, name, svg, svg ? strlen(svg) : 0, msg, cap);
    free(svg);
    sb_printf(r, "![%s paired ratios](%s)\n\n", jstr(jm, "metric"), name);
  }
  if (!rc) {
    size_t len = 0;
    char *text = tsr__json_file_text(tables, &len);
    rc = add_file(files, "tables.json", text, len, msg, cap);
    free(text);
  }
  if (!rc) rc = add_file(files, "report.md", r->oom ? NULL : r->s, r->len, msg, cap);
  return rc;
}

static int render(const json_t *doc, double threshold, json_t **files_out, char **md_tables,
                  char *msg, size_t cap) {
  *files_out = NULL;
  json_t *tables = tsr__bench_tables(doc, threshold, msg, cap);
  if (!tables) return -1;
  threshold = json_real_value(json_object_get(tables, "unstable_threshold"));
  double proto_threshold = tsr__json_to_double(json_object_get(json_object_get(doc, "protocol"), "unstable_threshold"));
  if (!isfinite(proto_threshold)) proto_threshold = 0.10;
  sbuf t = {0}, r = {0};
  render_summary(&t, doc, tables);
  render_tables(&t, tables, threshold);
  render_zoo_classes(&t, doc, tables);
  render_header(&r, doc, threshold, proto_threshold);
  sb_printf(&r, "%s", t.s ? t.s : "");
  json_t *files = json_object();
  int rc = render_files(tables, &t, &r, files, msg, cap);
  if (md_tables && !rc) *md_tables = t.s ? t.s : strdup("");
  else free(t.s);
  free(r.s);
  json_decref(tables);
  if (rc) json_decref(files);
  else *files_out = files;
  return rc;
}

int tsr__bench_render(const json_t *doc, double threshold, json_t **files, char *msg, size_t cap) {
  return render(doc, threshold, files, NULL, msg, cap);
}

int tsr__bench_report(const json_t *doc, const char *dir, double threshold, char **md_tables,
                      char *msg, size_t cap) {
  json_t *files = NULL;
  char *md = NULL;
  if (render(doc, threshold, &files, &md, msg, cap)) return -1;
  /* The charts, then tables.json, then report.md (which names the others). */
  static const char *const last[] = {"tables.json", "report.md"};
  int rc = 0;
  const char *name;
  json_t *text;
  json_object_foreach(files, name, text) {
    if (rc || !strcmp(name, last[0]) || !strcmp(name, last[1])) continue;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tsr__span part = {json_string_value(text), json_string_length(text)};
    rc = tsr__write_atomic(path, &part, 1, msg, cap) ? -1 : 0;
  }
  for (int i = 0; i < 2 && !rc; i++) {
    const json_t *t = json_object_get(files, last[i]);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, last[i]);
    tsr__span part = {json_string_value(t), json_string_length(t)};
    rc = tsr__write_atomic(path, &part, 1, msg, cap) ? -1 : 0;
  }
  json_decref(files);
  if (md_tables && !rc) *md_tables = md;
  else free(md);
  return rc;
}
