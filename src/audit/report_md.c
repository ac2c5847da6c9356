/* report.md against the recomputation: the summary line, the failed-rows
 * table, and in every metric section each cell (µs, 3 decimals, ⚠ and
 * (valid/total) marks), each unstable-spread line and each paired ratio
 * (median [min, max], slower/count). Numbers are compared as printed: the
 * text must equal the recomputed value rendered the same way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_internal.h"
#include "measure/zoo.h"

#define FAIL tsr__audit_fail
#define REPORT(c, where, ...) FAIL((c)->res, TSR__AR_REPORT_MISMATCH, where, __VA_ARGS__)

static const char *const titles[TSR__AUDIT_METRICS] = {
    "GPU batch (", "GPU single (", "E2E batch (", "E2E single (", "CPU wall batch (", "CPU wall single ("};

/* Splits a table line "| a | b |" into trimmed cells (in place). */
static int split_cells(char *line, char **cells, int max) {
  int n = 0;
  char *p = line;
  if (*p != '|') return 0;
  p++;
  while (*p && n < max) {
    char *e = strchr(p, '|');
    if (!e) break;
    *e = '\0';
    while (*p == ' ') p++;
    char *t = e;
    while (t > p && t[-1] == ' ') *--t = '\0';
    cells[n++] = p;
    p = e + 1;
  }
  return n;
}

static int route_of(const tsr__audit_ctx *c, const char *name) {
  for (int x = 0; x < c->R; x++)
    if (!strcmp(c->base[x], name)) return x;
  return -1;
}
static int cmp_seq(const void *a, const void *b) {
  json_int_t x = *(const json_int_t *)a, y = *(const json_int_t *)b;
  return (x > y) - (x < y);
}
static int shape_of(const tsr__audit_ctx *c, const char *label) {
  return tsr__audit_shape_index(c, label);
}

typedef struct {
  tsr__audit_ctx *c;
  int rounds, S, R;
  char *seen_cell, *seen_ratio, *seen_unstable; /* [(m*S + s)*R + x] */
  char *seen_metric;
  double thr;
} rstate;

static const double *p50s(const rstate *st, int m, int s, int x) {
  return &st->c->p50[(((size_t)m * st->S + s) * st->R + x) * st->rounds];
}

static void check_cell(rstate *st, int m, int s, int x, const char *text) {
  tsr__audit_ctx *c = st->c;
  char where[200];
  snprintf(where, sizeof where, "report.md %s cell (%.64s, %s)", tsr__audit_metric_names[m],
           c->shapes[s].label, c->base[x]);
  char *seen = &st->seen_cell[((size_t)m * st->S + s) * st->R + x];
  if ((*seen)++) {
    REPORT(c, where, "appears more than once");
    return;
  }
  const double *p = p50s(st, m, s, x);
  int valid = 0;
  for (int r = 0; r < st->rounds; r++) valid += isfinite(p[r]) != 0;
  double med = tsr__audit_median(p, (size_t)st->rounds), sp = tsr__audit_spread(p, (size_t)st->rounds);
  int unstable = isfinite(sp) && sp > st->thr;
  char num[64] = "";
  const char *rest = text;
  if (!strncmp(text, "**FAILED**", 10)) {
    rest = text + 10;
    if (!isnan(med)) REPORT(c, where, "shows FAILED, recomputed %.3f µs", med / 1000.0);
  } else {
    size_t n = strcspn(text, " ");
    snprintf(num, sizeof num, "%.*s", (int)(n < 63 ? n : 63), text);
    rest = text + n;
    c->res->report_numbers++;
    if (isnan(med)) REPORT(c, where, "shows %s, recomputed: no valid round (FAILED)", num);
    else if (!tsr__audit_printed_equal(num, "%.3f", med / 1000.0))
      REPORT(c, where, "shows %s µs, recomputed %.3f µs (%.17g ns)", num, med / 1000.0, med);
  }
  while (*rest == ' ') rest++;
  int warn = !strncmp(rest, "⚠", strlen("⚠"));
  if (warn) rest += strlen("⚠");
  while (*rest == ' ') rest++;
  if (warn != unstable)
    REPORT(c, where, "%s the unstable mark; recomputed spread %.4g vs threshold %g", warn ? "has" : "lacks",
           sp, st->thr);
  long long k = -1, tot = -1;
  int mark = *rest == '(' && sscanf(rest, "(%lld/%lld)", &k, &tot) == 2;
  if (mark != (valid != st->rounds) || (mark && (k != valid || tot != st->rounds)))
    REPORT(c, where, "valid-round mark '%.20s', recomputed %d of %d rounds valid", rest, valid, st->rounds);
}

static void check_ratio(rstate *st, int m, int s, int ref, int y, const char *rtext, const char *stext) {
  tsr__audit_ctx *c = st->c;
  char where[200];
  snprintf(where, sizeof where, "report.md %s ratio (%.64s, %s/%s)", tsr__audit_metric_names[m],
           c->shapes[s].label, c->base[ref], c->base[y]);
  char *seen = &st->seen_ratio[((size_t)m * st->S + s) * st->R + y];
  if ((*seen)++) {
    REPORT(c, where, "appears more than once");
    return;
  }
  double *q = malloc((size_t)st->rounds * sizeof *q);
  tsr__audit_pair pr;
  tsr__audit_pairs(p50s(st, m, s, ref), p50s(st, m, s, y), (size_t)st->rounds, q, &pr);
  free(q);
  char a[64], b[64], d[64];
  long long slower = -1, count = -1;
  if (sscanf(stext, "%lld/%lld", &slower, &count) != 2 || slower != (long long)pr.slower ||
      count != (long long)pr.count)
    REPORT(c, where, "slower '%.20s', recomputed %zu/%zu", stext, pr.slower, pr.count);
  if (!pr.count) {
    if (strcmp(rtext, "—")) REPORT(c, where, "shows '%.40s', recomputed: no paired round", rtext);
    return;
  }
  if (sscanf(rtext, "%63s [%63[^,], %63[^]]]", a, b, d) != 3) {
    REPORT(c, where, "'%.40s' is not 'median [min, max]'; recomputed %.3f [%.3f, %.3f]", rtext,
           pr.median, pr.min, pr.max);
    return;
  }
  c->res->report_numbers += 3;
  if (!tsr__audit_printed_equal(a, "%.3f", pr.median) || !tsr__audit_printed_equal(b, "%.3f", pr.min) ||
      !tsr__audit_printed_equal(d, "%.3f", pr.max))
    REPORT(c, where, "shows %s [%s, %s], recomputed %.3f [%.3f, %.3f]", a, b, d, pr.median, pr.min,
           pr.max);
}

static void check_unstable_line(rstate *st, int m, const char *line) {
  tsr__audit_ctx *c = st->c;
  /* "- ROUTE, SHAPE: per-round p50 spread X% (max/min − 1)" */
  char route[64], shape[96], pct[64];
  /* the shape ends at ": per-round" (a shape token may hold a ':' itself) */
  const char *tail = strstr(line, ": per-round p50 spread ");
  if (!tail || sscanf(line, "- %63[^,], ", route) != 1 || sscanf(tail, ": per-round p50 spread %63[^%]%%", pct) != 1)
    return;
  const char *sh0 = line + 2 + strlen(route) + 2;
  if (sh0 > tail || (size_t)(tail - sh0) >= sizeof shape) return;
  snprintf(shape, sizeof shape, "%.*s", (int)(tail - sh0), sh0);
  int x = route_of(c, route), s = shape_of(c, shape);
  char where[200];
  snprintf(where, sizeof where, "report.md %s unstable line (%.64s, %.40s)", tsr__audit_metric_names[m],
           shape, route);
  if (x < 0 || s < 0) {
    REPORT(c, where, "names a shape or route that was not measured");
    return;
  }
  st->seen_unstable[((size_t)m * st->S + s) * st->R + x]++;
  const double *p = p50s(st, m, s, x);
  double sp = tsr__audit_spread(p, (size_t)st->rounds);
  c->res->report_numbers++;
  if (!(isfinite(sp) && sp > st->thr))
    REPORT(c, where, "listed unstable, recomputed spread %.4g is not above %g", sp, st->thr);
  else if (!tsr__audit_printed_equal(pct, "%.1f", sp * 100))
    REPORT(c, where, "spread %s%%, recomputed %.1f%%", pct, sp * 100);
}

/* One row of report.md's accuracy section against the rows' accuracy
 * receipts: the median relative Frobenius error as printed (%.3g) and the
 * rounds that met the contract. Returns 1 when the cell exists. */
static int cmp_double_asc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static int check_accuracy_row(tsr__audit_ctx *c, int s, int r, const char *err_text,
                              const char *met_text) {
  double *v = malloc((size_t)c->rounds * sizeof *v);
  int have = 0, met = 0;
  for (int k = 0; v && k < c->rounds; k++) {
    const json_t *row = c->slot[((size_t)k * c->S + s) * c->R + r];
    const json_t *a = json_object_get(json_object_get(row, "result"), "accuracy");
    if (!json_is_object(a)) continue;
    double e = NAN;
    tsr__audit_num(json_object_get(a, "rel_fro_err"), &e);
    v[have++] = isfinite(e) ? e : INFINITY;
    met += json_is_true(json_object_get(a, "passed"));
  }
  char where[200];
  snprintf(where, sizeof where, "report.md accuracy (%.64s, %s)", c->shapes[s].label, c->base[r]);
  if (!have) {
    REPORT(c, where, "a row for a cell without accuracy receipts");
    free(v);
    return 0;
  }
  qsort(v, (size_t)have, sizeof *v, cmp_double_asc);
  double med = have % 2 ? v[have / 2] : 0.5 * (v[have / 2 - 1] + v[have / 2]);
  free(v);
  char want[64], want_met[64];
  snprintf(want, sizeof want, "%.3g", med);
  snprintf(want_met, sizeof want_met, "%s%d/%d%s", met == have ? "" : "**", met, have,
           met == have ? "" : "**");
  if (strcmp(err_text, want))
    REPORT(c, where, "rel. Frobenius err '%.30s', recomputed %s", err_text, want);
  if (strcmp(met_text, want_met))
    REPORT(c, where, "contract met '%.30s', recomputed %s", met_text, want_met);
  c->res->report_numbers++;
  return 1;
}

/* ---- the standings by zoo class (docs/zoo.md), recomputed ------------------
 * Each shape's class from the zoo's own definition (seed 1), its ratio from
 * the rows' samples, the geometric mean and the worst shape of each class
 * from those: the renderer's section is not trusted. */
#define ZOO_SLOTS 16 /* classes, then "(not in the zoo)" */
typedef struct {
  tsr__zoo_shape *zs;
  int nz, zoo_run;
  int *cls;          /* [s]: class index, ZOO_NONE when not in the zoo */
  char (*canon)[64]; /* [s]: the canonical token of the shape's problem */
  int m, ref, peer, table; /* the section being read: -1 when none */
  char sections[TSR__AUDIT_METRICS];
  char *seen_class, *seen_shape; /* [m*ZOO_SLOTS + class], [m*S + s] */
} zoo_state;

static int zoo_nclasses(void) {
  int n = 0;
  while (tsr__zoo_classes[n]) n++;
  return n;
}
#define ZOO_NONE zoo_nclasses()

static void zoo_init(zoo_state *z, const tsr__audit_ctx *c) {
  memset(z, 0, sizeof *z);
  z->m = z->ref = z->peer = -1;
  z->nz = tsr__zoo(1, 0, NULL, 0);
  z->zs = calloc((size_t)z->nz, sizeof *z->zs);
  z->cls = calloc((size_t)c->S + 1, sizeof *z->cls);
  z->canon = calloc((size_t)c->S + 1, sizeof *z->canon);
  z->seen_class = calloc((size_t)TSR__AUDIT_METRICS * ZOO_SLOTS, 1);
  z->seen_shape = calloc((size_t)TSR__AUDIT_METRICS * c->S + 1, 1);
  if (!z->zs || !z->cls || !z->canon || !z->seen_class || !z->seen_shape) return;
  tsr__zoo(1, 0, z->zs, z->nz);
  int in = 0, classes = 0, first = -1;
  for (int s = 0; s < c->S; s++) {
    const tsr__audit_shape *sh = &c->shapes[s];
    tsr_op oa = sh->op_a == 'T' ? TSR_OP_T : TSR_OP_N, ob = sh->op_b == 'T' ? TSR_OP_T : TSR_OP_N;
    const tsr__zoo_shape *e = tsr__zoo_find(z->zs, z->nz, sh->m, sh->n, sh->k, sh->batch, oa, ob);
    z->cls[s] = ZOO_NONE;
    for (int k = 0; e && tsr__zoo_classes[k]; k++)
      if (!strcmp(tsr__zoo_classes[k], e->cls)) z->cls[s] = k;
    in += e != NULL;
    if (e && first < 0) first = z->cls[s], classes = 1;
    else if (e && z->cls[s] != first) classes = 2;
    tsr__shape_token_format(sh->m, sh->n, sh->k, sh->batch, oa, ob, z->canon[s], sizeof z->canon[s]);
  }
  const char *preset = tsr__audit_str(c->proto, "preset");
  z->zoo_run = (preset && (!strcmp(preset, "zoo") || !strcmp(preset, "zoo-quick"))) || (in && in == c->S && classes > 1);
}

static void zoo_free(zoo_state *z) {
  free(z->zs);
  free(z->cls);
  free(z->canon);
  free(z->seen_class);
  free(z->seen_shape);
}

static void zoo_pair(const rstate *st, int m, int s, int ref, int y, tsr__audit_pair *pr) {
  double *q = malloc((size_t)st->rounds * sizeof *q);
  memset(pr, 0, sizeof *pr);
  if (q) tsr__audit_pairs(p50s(st, m, s, ref), p50s(st, m, s, y), (size_t)st->rounds, q, pr);
  free(q);
}

/* "## REF time / PEER time (METRIC), by zoo class" */
static int zoo_heading(const rstate *st, zoo_state *z, const char *line) {
  char a[64], b[64], met[32];
  if (!strstr(line, "), by zoo class")) return 0;
  z->m = z->ref = z->peer = -1;
  z->table = 0;
  if (sscanf(line, "## %63s time / %63s time (%31[^)]), by zoo class", a, b, met) != 3) {
    REPORT(st->c, "report.md zoo classes", "heading '%.80s' is not 'REF time / PEER time (METRIC), by zoo class'", line);
    return 1;
  }
  for (int m = 0; m < TSR__AUDIT_METRICS; m++)
    if (!strcmp(tsr__audit_metric_names[m], met)) z->m = m;
  z->ref = route_of(st->c, a);
  z->peer = route_of(st->c, b);
  if (z->m < 0 || z->ref < 0 || z->peer < 0) {
    REPORT(st->c, "report.md zoo classes", "names %s / %s in %s: not measured routes and a metric", a, b, met);
    z->m = -1;
  } else if (z->sections[z->m]++) {
    REPORT(st->c, "report.md zoo classes", "a second section for %s", met);
  }
  return 1;
}

/* One line of the class table or of the shape table. */
static void zoo_line(const rstate *st, zoo_state *z, char **cell, int n) {
  tsr__audit_ctx *c = st->c;
  if (z->m < 0) return;
  if (!strcmp(cell[0], "class")) {
    z->table = n > 1 && !strcmp(cell[1], "shapes") ? 1 : 2;
    return;
  }
  int want = -1, nk = zoo_nclasses();
  for (int k = 0; k < nk; k++)
    if (!strcmp(cell[0], tsr__zoo_classes[k])) want = k;
  if (!strcmp(cell[0], z->table == 1 ? "(not in the zoo)" : "-")) want = nk;
  char where[200];
  if (z->table == 1 && n >= 7) {
    snprintf(where, sizeof where, "report.md zoo classes (%s, %.40s)", tsr__audit_metric_names[z->m], cell[0]);
    if (want < 0) {
      REPORT(c, where, "is not a zoo class");
      return;
    }
    if (z->seen_class[z->m * ZOO_SLOTS + want]++) REPORT(c, where, "appears more than once");
    int cnt = 0, worst = -1;
    double lsum = 0;
    tsr__audit_pair wp = {0};
    for (int s = 0; s < c->S; s++) {
      if (z->cls[s] != want) continue;
      tsr__audit_pair pr;
      zoo_pair(st, z->m, s, z->ref, z->peer, &pr);
      if (!pr.count) continue;
      cnt++;
      lsum += log(pr.median);
      if (worst < 0 || pr.median > wp.median) worst = s, wp = pr;
    }
    char a[64], b[64], d[64];
    c->res->report_numbers += 5;
    if (!cnt) REPORT(c, where, "shown, but no shape of it has a paired round");
    else if (atoi(cell[1]) != cnt || !tsr__audit_printed_equal(cell[2], "%.3f", exp(lsum / cnt)))
      REPORT(c, where, "%s shapes, geomean %s; recomputed %d, %.3f", cell[1], cell[2], cnt, exp(lsum / cnt));
    else if (strcmp(cell[3], z->canon[worst]))
      REPORT(c, where, "worst shape %.64s, recomputed %s", cell[3], z->canon[worst]);
    else if (sscanf(cell[4], "%63s [%63[^,], %63[^]]]", a, b, d) != 3 ||
             !tsr__audit_printed_equal(a, "%.3f", wp.median) || !tsr__audit_printed_equal(b, "%.3f", wp.min) ||
             !tsr__audit_printed_equal(d, "%.3f", wp.max))
      REPORT(c, where, "worst ratio %.40s, recomputed %.3f [%.3f, %.3f]", cell[4], wp.median, wp.min, wp.max);
  } else if (z->table == 2 && n >= 5) {
    int s = -1;
    for (int i = 0; i < c->S && s < 0; i++)
      if (!strcmp(z->canon[i], cell[1])) s = i;
    snprintf(where, sizeof where, "report.md zoo shapes (%s, %.64s)", tsr__audit_metric_names[z->m], cell[1]);
    if (s < 0) {
      REPORT(c, where, "is not a shape of the run");
      return;
    }
    if (z->seen_shape[(size_t)z->m * c->S + s]++) REPORT(c, where, "appears more than once");
    if (want != z->cls[s])
      REPORT(c, where, "class %.30s, the zoo's is %s", cell[0], z->cls[s] < nk ? tsr__zoo_classes[z->cls[s]] : "-");
    tsr__audit_pair pr;
    zoo_pair(st, z->m, s, z->ref, z->peer, &pr);
    char a[64], b[64], d[64];
    c->res->report_numbers += 3;
    if (!pr.count || sscanf(cell[2], "%63s [%63[^,], %63[^]]]", a, b, d) != 3 ||
        !tsr__audit_printed_equal(a, "%.3f", pr.median) || !tsr__audit_printed_equal(b, "%.3f", pr.min) ||
        !tsr__audit_printed_equal(d, "%.3f", pr.max))
      REPORT(c, where, "ratio %.40s, recomputed %.3f [%.3f, %.3f] (%zu paired rounds)", cell[2], pr.median,
             pr.min, pr.max, pr.count);
  }
}

/* A run over zoo shapes (a zoo preset, or zoo shapes of more than one
 * class) shows, for tessera's route against its peer where
 * both ran, every class and every shape with a paired round. */
static void zoo_all_shown(const rstate *st, const zoo_state *z) {
  tsr__audit_ctx *c = st->c;
  static const char *const pairs[][3] = {{"tessera-gpu", "cublas", "gpu_batch"},
                                         {"tessera-cpu", "openblas", "wall_batch"}};
  for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++) {
    int ref = route_of(c, pairs[p][0]), peer = route_of(c, pairs[p][1]), m = -1;
    for (int i = 0; i < TSR__AUDIT_METRICS; i++)
      if (!strcmp(tsr__audit_metric_names[i], pairs[p][2])) m = i;
    if (ref < 0 || peer < 0 || m < 0) continue;
    int any = 0;
    for (int s = 0; s < c->S; s++) {
      tsr__audit_pair pr;
      zoo_pair(st, m, s, ref, peer, &pr);
      if (!pr.count) continue;
      any = 1;
      char where[200];
      snprintf(where, sizeof where, "report.md zoo classes (%s, %.64s)", pairs[p][2], z->canon[s]);
      if (z->zoo_run && z->sections[m] && !z->seen_shape[(size_t)m * c->S + s]) REPORT(c, where, "shape not shown");
      if (z->zoo_run && z->sections[m] && !z->seen_class[m * ZOO_SLOTS + z->cls[s]]) REPORT(c, where, "its class is not shown");
    }
    if (z->zoo_run && any && !z->sections[m])
      REPORT(c, "report.md", "a run over zoo shapes, but no %s / %s section by zoo class", pairs[p][0], pairs[p][1]);
    if (!z->zoo_run && z->sections[m])
      REPORT(c, "report.md", "a section by zoo class, but the run is not over zoo shapes");
  }
}

/* The scan of report.md's lines: where it is and what it has seen. */
typedef struct {
  rstate st;
  zoo_state zoo;
  size_t nrows, nfailed;
  json_int_t *failed_seen; /* seqs of the FAILED ROWS table */
  size_t nfailed_seen;
  char *seen_acc; /* [s*R + r]: accuracy rows shown */
  int summary, section; /* section: -1 none, -2 failed rows, -3 accuracy, -4 zoo classes, else metric */
  int table;            /* 0 none, 1 cells, 2 ratios */
  int cols[TSR_AUDIT_MAX_ROUTES * 2 + 2], ncols, ref;
} rscan;

/* A metric section's table header: the routes of its columns. */
static void metric_header(rscan *sc, char **cell, int n) {
  tsr__audit_ctx *c = sc->st.c;
  int m = sc->section;
  sc->ncols = 0;
  sc->ref = -1;
  if (n >= 3 && strchr(cell[1], '/') && !strcmp(cell[2], "slower")) {
    sc->table = 2;
    for (int i = 1; i + 1 < n && sc->ncols < (int)(sizeof sc->cols / sizeof *sc->cols); i += 2) {
      char *slash = strchr(cell[i], '/');
      if (!slash) break;
      *slash = '\0';
      int r0 = route_of(c, cell[i]), y = route_of(c, slash + 1);
      if (r0 < 0 || y < 0) REPORT(c, "report.md", "%s ratio header names '%s/%s'", tsr__audit_metric_names[m], cell[i], slash + 1);
      sc->ref = r0;
      sc->cols[sc->ncols++] = y;
    }
  } else {
    sc->table = 1;
    for (int i = 1; i < n && sc->ncols < (int)(sizeof sc->cols / sizeof *sc->cols); i++) {
      int x = route_of(c, cell[i]);
      if (x < 0 || c->base_gpu[x] != tsr__audit_metric_is_gpu(m))
        REPORT(c, "report.md", "%s table header names route '%.40s'", tsr__audit_metric_names[m], cell[i]);
      sc->cols[sc->ncols++] = x;
    }
  }
}

/* A table line of a metric section: a header, or one shape's cells or ratios. */
static void metric_line(rscan *sc, char **cell, int n) {
  tsr__audit_ctx *c = sc->st.c;
  int m = sc->section;
  if (!strcmp(cell[0], "M×N×K")) { /* a table header */
    metric_header(sc, cell, n);
    return;
  }
  int s = shape_of(c, cell[0]);
  if (s < 0) {
    REPORT(c, "report.md", "%s table row for unknown shape '%.64s'", tsr__audit_metric_names[m], cell[0]);
    return;
  }
  if (sc->table == 1) {
    for (int i = 0; i < sc->ncols && i + 1 < n; i++)
      if (sc->cols[i] >= 0) check_cell(&sc->st, m, s, sc->cols[i], cell[i + 1]);
  } else if (sc->table == 2) {
    for (int i = 0; i < sc->ncols && 2 * i + 2 < n; i++)
      if (sc->cols[i] >= 0 && sc->ref >= 0)
        check_ratio(&sc->st, m, s, sc->ref, sc->cols[i], cell[2 * i + 1], cell[2 * i + 2]);
  }
}

/* One line of report.md. */
static void scan_line(rscan *sc, char *line) {
  tsr__audit_ctx *c = sc->st.c;
  size_t rn, fn;
  char word[16];
  if (!sc->summary && sscanf(line, "%zu rows, %zu failed; order %15[^;]", &rn, &fn, word) == 3) {
    sc->summary = 1;
    int bal = !strcmp(word, "balanced");
    if (rn != sc->nrows || fn != sc->nfailed || bal != c->balanced)
      REPORT(c, "report.md summary line", "'%zu rows, %zu failed; order %s', recomputed %zu rows, "
             "%zu failed, order %s", rn, fn, word, sc->nrows, sc->nfailed, c->balanced ? "balanced" : "NOT BALANCED");
    return;
  }
  if (!strncmp(line, "## ", 3)) {
    sc->table = 0;
    sc->section = -1;
    if (zoo_heading(&sc->st, &sc->zoo, line)) {
      sc->section = -4;
      return;
    }
    if (!strncmp(line + 3, "FAILED ROWS", 11)) sc->section = -2;
    if (!strncmp(line + 3, "Accuracy (", 10)) sc->section = -3;
    for (int m = 0; m < TSR__AUDIT_METRICS; m++)
      if (!strncmp(line + 3, titles[m], strlen(titles[m]))) sc->section = m;
    if (sc->section >= 0 && sc->st.seen_metric[sc->section]++)
      REPORT(c, "report.md", "section for %s appears twice", tsr__audit_metric_names[sc->section]);
    return;
  }
  if (sc->section >= 0 && line[0] == '-') {
    check_unstable_line(&sc->st, sc->section, line);
    return;
  }
  if (line[0] != '|') {
    sc->table = 0;
    return;
  }
  char *cell[64];
  int n = split_cells(line, cell, 64);
  if (n < 1 || !strncmp(cell[0], "---", 3)) return;
  if (sc->section == -2) {
    long long seq;
    if (sscanf(cell[0], "%lld", &seq) == 1 && sc->nfailed_seen < sc->nrows) sc->failed_seen[sc->nfailed_seen++] = seq;
    return;
  }
  if (sc->section == -3) {
    if (n < 7 || !strcmp(cell[0], "M×N×K")) return;
    int s = shape_of(c, cell[0]), r = route_of(c, cell[1]);
    if (s < 0 || r < 0) REPORT(c, "report.md accuracy", "row for unknown (%.64s, %.40s)", cell[0], cell[1]);
    else if (sc->seen_acc[(size_t)s * c->R + r]++) REPORT(c, "report.md accuracy", "(%.64s, %.40s) shown twice", cell[0], cell[1]);
    else check_accuracy_row(c, s, r, cell[3], cell[6]);
    return;
  }
  if (sc->section == -4) {
    zoo_line(&sc->st, &sc->zoo, cell, n);
    return;
  }
  if (sc->section < 0) return;
  metric_line(sc, cell, n);
}

/* Every (shape, route) with accuracy receipts shown in the accuracy section. */
static void check_accuracy_shown(tsr__audit_ctx *c, const char *seen_acc) {
  for (int s = 0; c->v2 && c->accuracy_inputs && seen_acc && s < c->S; s++)
    for (int r = 0; r < c->R; r++) {
      if (seen_acc[(size_t)s * c->R + r]) continue;
      for (int k = 0; k < c->rounds; k++)
        if (json_object_get(json_object_get(c->slot[((size_t)k * c->S + s) * c->R + r], "result"), "accuracy")) {
          char where[200];
          snprintf(where, sizeof where, "report.md accuracy (%.64s, %s)", c->shapes[s].label, c->base[r]);
          REPORT(c, where, "accuracy receipts recorded but not shown");
          break;
        }
    }
}

/* Everything recomputed must have been shown exactly once. */
static void check_all_shown(const rstate *st) {
  tsr__audit_ctx *c = st->c;
  for (int m = 0; m < TSR__AUDIT_METRICS; m++) {
    int any = 0, refx = -1;
    const char *refname = tsr__audit_metric_is_gpu(m) ? "tessera-gpu" : "tessera-cpu";
    for (int x = 0; x < c->R; x++)
      if (c->base_gpu[x] == tsr__audit_metric_is_gpu(m)) {
        any = 1;
        if (!strcmp(c->base[x], refname)) refx = x;
      }
    if (!any) {
      if (st->seen_metric[m]) REPORT(c, "report.md", "has a %s section but no route of its kind ran", tsr__audit_metric_names[m]);
      continue;
    }
    if (!st->seen_metric[m]) {
      REPORT(c, "report.md", "no section for metric %s", tsr__audit_metric_names[m]);
      continue;
    }
    for (int s = 0; s < c->S; s++)
      for (int x = 0; x < c->R; x++) {
        if (c->base_gpu[x] != tsr__audit_metric_is_gpu(m)) continue;
        size_t k = ((size_t)m * c->S + s) * c->R + x;
        char where[200];
        snprintf(where, sizeof where, "report.md %s (%.64s, %s)", tsr__audit_metric_names[m],
                 c->shapes[s].label, c->base[x]);
        if (!st->seen_cell[k]) REPORT(c, where, "cell missing");
        if (refx >= 0 && x != refx && !st->seen_ratio[k]) REPORT(c, where, "paired ratio missing");
        double sp = tsr__audit_spread(p50s(st, m, s, x), (size_t)c->rounds);
        int unstable = isfinite(sp) && sp > st->thr;
        if (unstable && st->seen_unstable[k] != 1)
          REPORT(c, where, "unstable (spread %.1f%%) but listed %d times", sp * 100, st->seen_unstable[k]);
      }
  }
}

/* Every failed row in the FAILED ROWS table (sorted: a run of many failed
 * rows must not make this quadratic). */
static void check_failed_listed(tsr__audit_ctx *c, json_int_t *failed_seen, size_t nfailed_seen) {
  const json_t *rows = json_object_get(c->doc, "rows");
  qsort(failed_seen, nfailed_seen, sizeof *failed_seen, cmp_seq);
  for (size_t i = 0; i < json_array_size(rows); i++) {
    const json_t *row = json_array_get(rows, i);
    if (tsr__audit_is(row, "status", "ok")) continue;
    json_int_t seq = -1;
    tsr__audit_int(row, "seq", &seq);
    int found = bsearch(&seq, failed_seen, nfailed_seen, sizeof *failed_seen, cmp_seq) != NULL;
    if (!found) {
      char where[192];
      tsr__audit_row_where(row, i, where, sizeof where);
      FAIL(c->res, TSR__AR_FAILURE_UNREPORTED, where, "status '%.30s' but not in report.md's FAILED ROWS table",
           tsr__audit_str(row, "status") ? tsr__audit_str(row, "status") : "?");
    }
  }
}

void tsr__audit_check_report(tsr__audit_ctx *c) {
  if (!c->in->report) {
    REPORT(c, "report.md", "missing");
    return;
  }
  rscan sc;
  memset(&sc, 0, sizeof sc);
  rstate *st = &sc.st;
  *st = (rstate){c, c->rounds, c->S, c->R, NULL, NULL, NULL, NULL, c->threshold};
  size_t cells = (size_t)TSR__AUDIT_METRICS * c->S * c->R;
  st->seen_cell = calloc(cells, 1);
  st->seen_ratio = calloc(cells, 1);
  st->seen_unstable = calloc(cells, 1);
  st->seen_metric = calloc(TSR__AUDIT_METRICS, 1);
  char *text = strdup(c->in->report);
  const json_t *rows = json_object_get(c->doc, "rows");
  sc.nrows = json_array_size(rows);
  for (size_t i = 0; i < sc.nrows; i++) sc.nfailed += !tsr__audit_is(json_array_get(rows, i), "status", "ok");
  sc.failed_seen = calloc(sc.nrows + 1, sizeof *sc.failed_seen);
  sc.seen_acc = calloc((size_t)c->S * c->R + 1, 1);
  sc.section = -1;
  sc.ref = -1;
  zoo_init(&sc.zoo, c);
  if (!sc.zoo.zs || !sc.zoo.cls || !sc.zoo.canon || !sc.zoo.seen_class || !sc.zoo.seen_shape) goto out;
  if (!st->seen_cell || !st->seen_ratio || !st->seen_unstable || !st->seen_metric || !text || !sc.failed_seen)
    goto out;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) scan_line(&sc, line);
  if (!sc.summary) REPORT(c, "report.md summary line", "missing ('N rows, F failed; order ...')");
  check_accuracy_shown(c, sc.seen_acc);
  check_all_shown(st);
  zoo_all_shown(st, &sc.zoo);
  check_failed_listed(c, sc.failed_seen, sc.nfailed_seen);
out:
  free(st->seen_cell);
  free(st->seen_ratio);
  free(st->seen_unstable);
  free(st->seen_metric);
  free(text);
  free(sc.failed_seen);
  free(sc.seen_acc);
  zoo_free(&sc.zoo);
}
