/* Leave-one-out over a tuning database (tessera tune --loo): every entry's
 * shape looked up as if unseen — the nearest and class passes over the other
 * entries, under the lookup's own rules — and the plan served priced by the
 * entry's own tune document, where its search measured that plan. An offline
 * estimate of what the lookup does to shapes it was not tuned on, from
 * measurements already made (docs/tune.md "Leave-one-out"). */
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "measure/zoo.h"
#include "tune/tune.h"

/* One tune document: its problem's key and its candidates. */
typedef struct {
  char backend[16], precision[16], finished[32], path[600];
  int64_t m, n, k, batch;
  char op_a, op_b;
  json_t *doc;
} loo_doc;

typedef struct {
  loo_doc *v;
  size_t n, cap;
} loo_docs;

static void docs_free(loo_docs *d) {
  for (size_t i = 0; i < d->n; i++) json_decref(d->v[i].doc);
  free(d->v);
}

static const char *jstr(json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

/* Reads the document at path into d (a later "finished" replaces an earlier
 * document of the same problem). TSR_ERR_INVALID names the file and field. */
static tsr_status doc_add(tsr_context *ctx, loo_docs *d, const char *path) {
  json_error_t e;
  json_t *j = json_load_file(path, 0, &e);
  if (!j)
    return tsr__fail(ctx, TSR_ERR_INVALID, "--loo: %s: not JSON (line %d: %s)", path, e.line,
                     e.text);
  loo_doc x = {0};
  json_t *p = json_object_get(j, "problem");
  long long m, n, k;
  if (strcmp(jstr(j, "schema"), "tessera-tune/1") || !json_is_object(p) ||
      sscanf(jstr(p, "shape"), "%lldx%lldx%lld", &m, &n, &k) != 3 ||
      !json_is_array(json_object_get(j, "candidates")) ||
      !json_is_object(json_object_get(j, "incumbent"))) {
    json_decref(j);
    return tsr__fail(ctx, TSR_ERR_INVALID,
                     "--loo: %s: not a tune document (schema tessera-tune/1 with problem.shape, "
                     "incumbent and candidates)",
                     path);
  }
  x.m = m, x.n = n, x.k = k;
  x.batch = json_integer_value(json_object_get(p, "batch"));
  if (x.batch < 1) x.batch = 1;
  x.op_a = jstr(p, "op_a")[0], x.op_b = jstr(p, "op_b")[0];
  snprintf(x.backend, sizeof x.backend, "%s", jstr(j, "backend"));
  snprintf(x.precision, sizeof x.precision, "%s", jstr(p, "precision"));
  snprintf(x.finished, sizeof x.finished, "%s", jstr(j, "finished"));
  snprintf(x.path, sizeof x.path, "%s", path);
  x.doc = j;
  for (size_t i = 0; i < d->n; i++) {
    loo_doc *o = &d->v[i];
    if (o->m == x.m && o->n == x.n && o->k == x.k && o->batch == x.batch && o->op_a == x.op_a &&
        o->op_b == x.op_b && !strcmp(o->backend, x.backend) && !strcmp(o->precision, x.precision)) {
      if (strcmp(x.finished, o->finished) >= 0) {
        json_decref(o->doc);
        *o = x;
      } else {
        json_decref(j);
      }
      return TSR_OK;
    }
  }
  if (d->n == d->cap) {
    size_t nc = d->cap ? 2 * d->cap : 64;
    loo_doc *t = realloc(d->v, nc * sizeof *t);
    if (!t) {
      json_decref(j);
      return tsr__fail(ctx, TSR_ERR_NOMEM, "--loo: out of memory");
    }
    d->v = t, d->cap = nc;
  }
  d->v[d->n++] = x;
  return TSR_OK;
}

/* Every tune_*.json under dir (not recursive), in name order. */
static tsr_status docs_dir(tsr_context *ctx, loo_docs *d, const char *dir) {
  struct dirent **names;
  int nn = scandir(dir, &names, NULL, alphasort);
  if (nn < 0) return tsr__fail(ctx, TSR_ERR_IO, "--loo: cannot read folder %s", dir);
  tsr_status st = TSR_OK;
  for (int i = 0; i < nn; i++) {
    const char *nm = names[i]->d_name;
    size_t L = strlen(nm);
    if (st == TSR_OK && !strncmp(nm, "tune_", 5) && L > 5 && !strcmp(nm + L - 5, ".json")) {
      char path[600];
      if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, nm) >= sizeof path)
        st = tsr__fail(ctx, TSR_ERR_INVALID, "--loo: path too long under %s", dir);
      else st = doc_add(ctx, d, path);
    }
    free(names[i]);
  }
  free(names);
  return st;
}

/* The time of text (a whole plan) over the incumbent's in doc, when its
 * search measured it (status ok, as planned or as realized); NAN otherwise. */
static double doc_ratio(const loo_doc *d, const char *text) {
  json_t *inc = json_object_get(d->doc, "incumbent");
  double it = json_number_value(json_object_get(inc, "time_ns"));
  json_t *c;
  size_t i;
  if (!(it > 0)) return NAN;
  json_array_foreach(json_object_get(d->doc, "candidates"), i, c) {
    if (strcmp(jstr(c, "status"), "ok")) continue;
    if (strcmp(jstr(c, "plan"), text) && strcmp(jstr(c, "realized"), text)) continue;
    double t = json_number_value(json_object_get(c, "time_ns"));
    if (t > 0) return t / it;
  }
  return NAN;
}

tsr_status tsr__tune_loo(tsr_context *ctx, tsr__tune_db *db, const char *const *dirs, int ndirs,
                         FILE *out, tsr__tune_loo_summary *sum) {
  memset(sum, 0, sizeof *sum);
  sum->geomean = 1.0;
  loo_docs docs = {0};
  tsr_status st = TSR_OK;
  for (int i = 0; i < ndirs && st == TSR_OK; i++) st = docs_dir(ctx, &docs, dirs[i]);
  if (st) {
    docs_free(&docs);
    return st;
  }
  sqlite3 *h = tsr__tune_db_handle(db);
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(h,
                         "SELECT device, arch, driver, nvrtc, tessera_version, backend, m, n, k, "
                         "op_a, op_b, batch, precision, decision FROM tuned WHERE backend IN "
                         "('cpu','cuda') ORDER BY device, arch, driver, nvrtc, tessera_version, "
                         "backend, precision, op_a, op_b, batch, m, n, k",
                         -1, &s, NULL)) {
    docs_free(&docs);
    return tsr__fail(ctx, TSR_ERR_DB, "--loo: %s", sqlite3_errmsg(h));
  }
  fprintf(out,
          "leave-one-out: each entry's shape looked up as unseen (nearest and class passes "
          "over the other entries);\n%zu tune document%s (the latest of each problem) priced "
          "the plans served\n",
          docs.n, docs.n == 1 ? "" : "s");
  char last[400] = "", msg[1200];
  double logsum = 0;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    tsr__tune_target t;
    memset(&t, 0, sizeof t);
    snprintf(t.device, sizeof t.device, "%s", (const char *)sqlite3_column_text(s, 0));
    snprintf(t.arch, sizeof t.arch, "%s", (const char *)sqlite3_column_text(s, 1));
    snprintf(t.driver, sizeof t.driver, "%s", (const char *)sqlite3_column_text(s, 2));
    snprintf(t.nvrtc, sizeof t.nvrtc, "%s", (const char *)sqlite3_column_text(s, 3));
    snprintf(t.version, sizeof t.version, "%s", (const char *)sqlite3_column_text(s, 4));
    snprintf(t.backend, sizeof t.backend, "%s", (const char *)sqlite3_column_text(s, 5));
    const char *prec = (const char *)sqlite3_column_text(s, 12);
    tsr_backend_kind b;
    tsr_problem p;
    tsr_problem_init(&p, sqlite3_column_int64(s, 6), sqlite3_column_int64(s, 7),
                     sqlite3_column_int64(s, 8));
    p.op_a = !strcmp((const char *)sqlite3_column_text(s, 9), "T") ? TSR_OP_T : TSR_OP_N;
    p.op_b = !strcmp((const char *)sqlite3_column_text(s, 10), "T") ? TSR_OP_T : TSR_OP_N;
    p.batch = sqlite3_column_int64(s, 11);
    char label[96], key[400];
    tsr__shape_token_format(p.m, p.n, p.k, p.batch, p.op_a, p.op_b, label, sizeof label);
    tsr__tune_target_format(&t, key, sizeof key);
    if (strcmp(key, last)) {
      fprintf(out, "target %s\n", key);
      snprintf(last, sizeof last, "%s", key);
    }
    sum->entries++;
    if (tsr_backend_parse(t.backend, &b, msg, sizeof msg) ||
        tsr_precision_parse(prec, &p.precision, msg, sizeof msg) ||
        tsr_problem_check(&p, msg, sizeof msg)) {
      fprintf(out, "  %-24s %-7s entry unreadable (%s)\n", label, prec, msg);
      continue;
    }
    tsr_plan got;
    char src[128];
    int r = tsr__tune_lookup_unseen(ctx, db, &t, b, &p, &got, src, sizeof src, msg, sizeof msg);
    if (r < 0) {
      st = tsr__fail(ctx, TSR_ERR_DB, "--loo: %s", msg);
      break;
    }
    if (r == 0) {
      fprintf(out, "  %-24s %-7s default\n", label, prec);
      continue;
    }
    sum->served++;
    char text[TSR__TUNE_PLAN_CAP * 2];
    tsr_plan_format(&got, text, sizeof text);
    const loo_doc *d = NULL;
    for (size_t i = 0; i < docs.n && !d; i++) {
      const loo_doc *o = &docs.v[i];
      if (o->m == p.m && o->n == p.n && o->k == p.k && o->batch == p.batch &&
          o->op_a == (p.op_a ? 'T' : 'N') && o->op_b == (p.op_b ? 'T' : 'N') &&
          !strcmp(o->backend, t.backend) && !strcmp(o->precision, prec))
        d = o;
    }
    double ratio = d ? doc_ratio(d, text) : NAN;
    if (!d) {
      fprintf(out, "  %-24s %-7s %s: no tune document\n", label, prec, src);
    } else if (isnan(ratio)) {
      fprintf(out, "  %-24s %-7s %s: not measured in its tune\n", label, prec, src);
    } else {
      fprintf(out, "  %-24s %-7s %s: %.3f of the incumbent's time in its tune\n", label, prec, src,
              ratio);
      sum->measured++;
      logsum += log(ratio);
      if (ratio > 1.0) sum->slower++;
      if (ratio > sum->worst) {
        sum->worst = ratio;
        snprintf(sum->worst_shape, sizeof sum->worst_shape, "%s", label);
      }
    }
  }
  if (st == TSR_OK && rc != SQLITE_DONE)
    st = tsr__fail(ctx, TSR_ERR_DB, "--loo: %s", sqlite3_errmsg(h));
  sqlite3_finalize(s);
  docs_free(&docs);
  if (st) return st;
  if (sum->measured) sum->geomean = exp(logsum / sum->measured);
  fprintf(out, "summary: %d entr%s, %d served another entry's plan, %d of those measured in their "
               "own tune",
          sum->entries, sum->entries == 1 ? "y" : "ies", sum->served, sum->measured);
  if (sum->measured)
    fprintf(out, ": geomean %.3f of the incumbent's time, %d slower (worst %.3f at %s)",
            sum->geomean, sum->slower, sum->worst, sum->worst_shape);
  fputc('\n', out);
  return TSR_OK;
}
