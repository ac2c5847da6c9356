/* Standings by zoo class (docs/zoo.md): a run's paired time ratios of a
 * route against a peer, grouped by the zoo class of each shape, with the
 * accuracy beside them. The report's class section and `tessera zoo
 * --summarize` both come from here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

static const char *js(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

static const json_t *find_cell(const json_t *cells, const char *route, const char *shape) {
  for (size_t i = 0; i < json_array_size(cells); i++) {
    const json_t *c = json_array_get(cells, i);
    if (!strcmp(js(c, "route"), route) && !strcmp(js(c, "shape"), shape)) return c;
  }
  return NULL;
}

/* The problem of protocol.shapes[i]: its own batch and ops, else the run's. */
static const tsr__zoo_shape *find_shape(const json_t *proto, const json_t *sh,
                                        const tsr__zoo_shape *zs, int nz, tsr_op *opa, tsr_op *opb,
                                        json_int_t *batch) {
  const json_t *kind = json_object_get(sh, "op_a") ? sh : proto;
  *opa = *js(kind, "op_a") == 'T' ? TSR_OP_T : TSR_OP_N;
  *opb = *js(kind, "op_b") == 'T' ? TSR_OP_T : TSR_OP_N;
  *batch = json_integer_value(json_object_get(json_object_get(sh, "batch") ? sh : proto, "batch"));
  if (*batch < 1) *batch = 1;
  return tsr__zoo_find(zs, nz, json_integer_value(json_object_get(sh, "m")),
                       json_integer_value(json_object_get(sh, "n")),
                       json_integer_value(json_object_get(sh, "k")), *batch, *opa, *opb);
}

/* The kernel every ok row of route at shape label ran: 1 with *id (one
 * identity across its rounds: the generated source's sha256, else, on the
 * CPU backend, which generates none, the plan it executed), 2 when the
 * rounds ran different kernels, 0 when a row has neither or the route is a
 * peer's (its "plan" names a library call), -1 without ok rows. */
static int route_kernel(const json_t *doc, const char *route, const char *label, const char **id) {
  const json_t *rows = json_object_get(doc, "rows");
  int seen = 0;
  *id = NULL;
  /* tessera's own routes (they follow the bench's mode); a peer's plan text names its call */
  const tsr__route *rt = tsr__route_find(route);
  if (!rt || rt->kind != TSR_ROUTE_BACKEND || rt->precision != TSR_PREC_AUTO) return 0;
  for (size_t i = 0; i < json_array_size(rows); i++) {
    const json_t *row = json_array_get(rows, i);
    if (strcmp(js(row, "route"), route) || strcmp(js(row, "shape"), label) || strcmp(js(row, "status"), "ok"))
      continue;
    const json_t *pi = json_object_get(json_object_get(row, "result"), "plan_info");
    const char *s = json_string_value(json_object_get(pi, "source_sha256"));
    if (!s) s = json_string_value(json_object_get(pi, "plan"));
    if (!s) return 0;
    if (*id && strcmp(s, *id)) return 2;
    *id = s;
    seen = 1;
  }
  return seen ? 1 : -1;
}

int tsr__bench_zoo_shapes(const json_t *doc, const tsr__zoo_shape *zs, int nz, unsigned *classes) {
  const json_t *proto = json_object_get(doc, "protocol"), *shapes = json_object_get(proto, "shapes");
  int in = 0;
  for (size_t i = 0; i < json_array_size(shapes); i++) {
    tsr_op oa, ob;
    json_int_t b;
    const tsr__zoo_shape *e = find_shape(proto, json_array_get(shapes, i), zs, nz, &oa, &ob, &b);
    if (!e) continue;
    in++;
    for (int c = 0; tsr__zoo_classes[c]; c++)
      if (!strcmp(tsr__zoo_classes[c], e->cls)) *classes |= 1u << c;
  }
  return in;
}

int tsr__bench_zoo_rows(const json_t *doc, const json_t *tables, const char *metric,
                        const char *ref, const char *peer, const tsr__zoo_shape *zs, int nz,
                        tsr__zoo_row **rows, int *nrows, char *msg, size_t cap) {
  const json_t *proto = json_object_get(doc, "protocol");
  const json_t *mt = NULL, *metrics = json_object_get(tables, "metrics");
  for (size_t i = 0; i < json_array_size(metrics); i++)
    if (!strcmp(js(json_array_get(metrics, i), "metric"), metric)) mt = json_array_get(metrics, i);
  if (!mt) {
    snprintf(msg, cap, "has no metric %s", metric);
    return -1;
  }
  const json_t *ratios = json_object_get(mt, "ratios");
  const json_t *acc = json_object_get(json_object_get(tables, "accuracy"), "cells");
  const json_t *shapes = json_object_get(proto, "shapes");
  int found = 0;
  for (size_t i = 0; i < json_array_size(shapes); i++) {
    const json_t *sh = json_array_get(shapes, i);
    const char *label = js(sh, "label");
    const json_t *r = NULL;
    for (size_t j = 0; j < json_array_size(ratios); j++) {
      const json_t *x = json_array_get(ratios, j);
      if (!strcmp(js(x, "reference"), ref) && !strcmp(js(x, "peer"), peer) && !strcmp(js(x, "shape"), label))
        r = x;
    }
    /* a shape without a paired round (every round of one side failed) has
     * no ratio to stand on: left out of the standings */
    if (!r || !isfinite(tsr__json_to_double(json_object_get(r, "median")))) continue;
    tsr__zoo_row *nr = realloc(*rows, (size_t)(*nrows + 1) * sizeof **rows);
    if (!nr) {
      snprintf(msg, cap, "out of memory");
      return -1;
    }
    *rows = nr;
    tsr__zoo_row *z = &nr[(*nrows)++];
    memset(z, 0, sizeof *z);
    /* the shape's own problem kind (since shapes carry one), else the run's */
    tsr_op opa, opb;
    json_int_t batch;
    z->z = find_shape(proto, sh, zs, nz, &opa, &opb, &batch);
    int64_t m = json_integer_value(json_object_get(sh, "m")), n = json_integer_value(json_object_get(sh, "n")),
            k = json_integer_value(json_object_get(sh, "k"));
    /* the zoo's label: extents, batch and ops whatever the run's token said */
    tsr__shape_token_format(m, n, k, batch, opa, opb, z->label, sizeof z->label);
    z->ratio = tsr__json_to_double(json_object_get(r, "median"));
    z->lo = tsr__json_to_double(json_object_get(r, "min"));
    z->hi = tsr__json_to_double(json_object_get(r, "max"));
    const json_t *cr = find_cell(acc, ref, label), *cp = find_cell(acc, peer, label);
    z->err_ref = cr ? tsr__json_to_double(json_object_get(cr, "rel_fro_median")) : NAN;
    z->err_peer = cp ? tsr__json_to_double(json_object_get(cp, "rel_fro_median")) : NAN;
    z->met = cr ? (int)json_integer_value(json_object_get(cr, "rounds_met")) : 0;
    z->checked = cr ? (int)json_integer_value(json_object_get(cr, "rounds_checked")) : 0;
    const char *sr, *sp;
    int kr = route_kernel(doc, ref, label, &sr), kp = route_kernel(doc, peer, label, &sp);
    if (kr == 1 && kp == 1) z->kernels = !strcmp(sr, sp);
    else if (kr >= 1 && kp >= 1) z->kernels = 0; /* one route's rounds ran different kernels */
    else z->kernels = -1;
    found++;
  }
  return found;
}

const char *const tsr__zoo_pairs[TSR__ZOO_PAIRS][3] = {{"tessera-gpu", "cublas", "gpu_batch"},
                                                       {"tessera-cpu", "openblas", "wall_batch"}};

/* The standings of the rows a predicate keeps: count, geometric mean of the
 * ratios, the worst row, the reference's accuracy rounds and its largest
 * error relative to the peer's. */
typedef struct {
  int cnt, met, checked;
  double geo, eworst;
  const tsr__zoo_row *w;
} group;
static int in_class(const tsr__zoo_row *r, const char *cls) { /* cls NULL: in no class */
  return cls ? r->z && !strcmp(r->z->cls, cls) : !r->z;
}
static int kernels_differ(const tsr__zoo_row *r, const char *unused) {
  (void)unused;
  return r->kernels == 0;
}
static group group_of(const tsr__zoo_row *r, int n, int (*keep)(const tsr__zoo_row *, const char *),
                      const char *arg) {
  group g = {0};
  double lsum = 0;
  for (int i = 0; i < n; i++) {
    if (!keep(&r[i], arg)) continue;
    g.cnt++;
    lsum += log(r[i].ratio);
    g.met += r[i].met, g.checked += r[i].checked;
    if (!g.w || r[i].ratio > g.w->ratio) g.w = &r[i];
    double e = r[i].err_ref / r[i].err_peer;
    if (isfinite(e) && e > g.eworst) g.eworst = e;
  }
  if (g.cnt) g.geo = exp(lsum / g.cnt);
  return g;
}

char *tsr__bench_zoo_summary_md(const tsr__zoo_row *r, int n, const char *ref, const char *peer,
                                const char *metric) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  fprintf(f, "## %s time / %s time (%s), by zoo class\n\n", ref, peer, metric);
  fprintf(f, "| class | shapes | geomean | worst shape | worst ratio [min, max] | contract met | "
             "max err %s / err %s |\n|---|---:|---:|---|---|---:|---:|\n", ref, peer);
  for (int c = 0;; c++) { /* every class, then the shapes of no class (cls NULL) */
    const char *cls = tsr__zoo_classes[c];
    group g = group_of(r, n, in_class, cls);
    if (g.cnt)
      fprintf(f, "| %s | %d | %.3f | %s | %.3f [%.3f, %.3f] | %d/%d | %.3g |\n",
              cls ? cls : "(not in the zoo)", g.cnt, g.geo, g.w->label, g.w->ratio, g.w->lo, g.w->hi,
              g.met, g.checked, g.eworst);
    if (!cls) break;
  }
  int known = 0, same = 0;
  for (int i = 0; i < n; i++) {
    known += r[i].kernels >= 0;
    same += r[i].kernels == 1;
  }
  if (known) {
    fprintf(f, "\n%d of %d shapes ran the same kernel on both routes: their ratios are the "
               "protocol's noise, not a plan's effect (kernels: same).", same, n);
    group g = group_of(r, n, kernels_differ, NULL);
    if (g.cnt)
      fprintf(f, " Over the %d whose kernels differ: geomean %.3f, worst %s %.3f [%.3f, %.3f].", g.cnt,
              g.geo, g.w->label, g.w->ratio, g.w->lo, g.w->hi);
    fprintf(f, "\n");
  }
  fprintf(f, "\n| class | shape | %s / %s [min, max] | err %s | err %s |%s\n|---|---|---|---:|---:|%s\n",
          ref, peer, ref, peer, known ? " kernels |" : "", known ? "---|" : "");
  for (int i = 0; i < n; i++)
    fprintf(f, "| %s | %s | %.3f [%.3f, %.3f] | %.3g | %.3g |%s\n", r[i].z ? r[i].z->cls : "-",
            r[i].label, r[i].ratio, r[i].lo, r[i].hi, r[i].err_ref, r[i].err_peer,
            !known ? "" : r[i].kernels == 1 ? " same |" : r[i].kernels == 0 ? " differ |" : " – |");
  if (fclose(f)) {
    free(buf);
    return NULL;
  }
  return buf;
}
