/* The derived files as a whole: report.md, tables.json and every SVG chart
 * regenerated from results.json with the protocol's parameters and compared
 * byte for byte (text, units, prose, thresholds, lists: not only the
 * recognised numbers); and the numbers each chart prints (its tooltips:
 * median [min, max], slower/count per shape and peer) recomputed here from
 * the raw samples, independently of the renderer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_internal.h"

#define FAIL tsr__audit_fail

/* Line number, column and text around the first difference of a and b. */
static void first_difference(const char *a, size_t na, const char *b, size_t nb, char *out, size_t cap) {
  size_t i = 0, line = 1, start = 0;
  while (i < na && i < nb && a[i] == b[i]) {
    if (a[i] == '\n') line++, start = i + 1;
    i++;
  }
  if (i >= na && i >= nb) {
    snprintf(out, cap, "identical");
    return;
  }
  size_t from = i - start > 40 ? i - 40 : start; /* some context before the difference */
  size_t ea = from, eb = from;
  while (ea < na && a[ea] != '\n' && ea - from < 100) ea++;
  while (eb < nb && b[eb] != '\n' && eb - from < 100) eb++;
  if (i >= na)
    snprintf(out, cap, "line %zu: the file ends; regenerated goes on '%.*s'", line, (int)(eb - from), b + from);
  else if (i >= nb)
    snprintf(out, cap, "line %zu: '%.*s', where the regenerated file ends", line, (int)(ea - from), a + from);
  else
    snprintf(out, cap, "line %zu, column %zu: '%s%.*s', regenerated '%s%.*s'", line, i - start + 1,
             from > start ? "…" : "", (int)(ea - from), a + from, from > start ? "…" : "",
             (int)(eb - from), b + from);
  for (char *p = out; *p; p++)
    if ((unsigned char)*p < 0x20) *p = '?';
}

static void compare(tsr__audit_ctx *c, tsr__audit_reason reason, const char *name, const char *have,
                    size_t nhave, const json_t *want) {
  const char *w = json_string_value(want);
  size_t nw = json_string_length(want);
  c->res->files_compared++;
  if (!have) {
    FAIL(c->res, reason, name, "missing; results.json renders it");
    return;
  }
  if (nhave == nw && !memcmp(have, w, nw)) return;
  char diff[300];
  first_difference(have, nhave, w, nw, diff, sizeof diff);
  FAIL(c->res, reason, name, "differs from the file regenerated from results.json (protocol "
       "threshold %g): %s", c->threshold, diff);
}

/* ---- chart numbers, recomputed --------------------------------------------------- */
static int route_of(const tsr__audit_ctx *c, const char *name) {
  for (int x = 0; x < c->R; x++)
    if (!strcmp(c->base[x], name)) return x;
  return -1;
}

static void check_svg_numbers(tsr__audit_ctx *c, const char *file, const char *text) {
  int m = -1;
  for (int i = 0; i < TSR__AUDIT_METRICS; i++) {
    char want[64];
    snprintf(want, sizeof want, "ratios_%s.svg", tsr__audit_metric_names[i]);
    if (!strcmp(file, want)) m = i;
  }
  const char *refname = m >= 0 && tsr__audit_metric_is_gpu(m) ? "tessera-gpu" : "tessera-cpu";
  int ref = m >= 0 ? route_of(c, refname) : -1;
  if (m < 0 || ref < 0) {
    FAIL(c->res, TSR__AR_SVG_MISMATCH, file, "a chart of no measured metric with a reference route");
    return;
  }
  char *copy = strdup(text);
  char *seen = calloc((size_t)c->S * c->R + 1, 1);
  double *q = malloc((size_t)c->rounds * sizeof *q);
  if (!copy || !seen || !q) goto out;
  int s = -1, y = -1;
  char *save = NULL;
  for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char shape[128], peer[64];
    if (sscanf(line, "<text x=\"10\" y=\"%*[^\"]\">%127s vs %63[^<]</text>", shape, peer) == 2) {
      s = tsr__audit_shape_index(c, shape);
      y = route_of(c, peer);
      char where[256];
      snprintf(where, sizeof where, "%s (%.100s vs %.40s)", file, shape, peer);
      if (s < 0 || y < 0 || y == ref || c->base_gpu[y] != tsr__audit_metric_is_gpu(m)) {
        FAIL(c->res, TSR__AR_SVG_MISMATCH, where, "names a shape or peer that has no paired ratio");
        s = y = -1;
      } else if (seen[(size_t)s * c->R + y]++) {
        FAIL(c->res, TSR__AR_SVG_MISMATCH, where, "drawn twice");
        s = y = -1;
      }
      continue;
    }
    if (s < 0 || y < 0) continue;
    const double *px = &c->p50[(((size_t)m * c->S + s) * c->R + ref) * c->rounds];
    const double *py = &c->p50[(((size_t)m * c->S + s) * c->R + y) * c->rounds];
    tsr__audit_pair pr;
    tsr__audit_pairs(px, py, (size_t)c->rounds, q, &pr);
    char where[256];
    snprintf(where, sizeof where, "%s (%.100s vs %.40s)", file, c->shapes[s].label, c->base[y]);
    const char *t = strstr(line, "<title>median ");
    if (strstr(line, ">no valid pair<")) {
      if (pr.count)
        FAIL(c->res, TSR__AR_SVG_MISMATCH, where, "says no valid pair, recomputed %zu paired rounds "
             "(median %.4f)", pr.count, pr.median);
      s = y = -1;
    } else if (t) {
      char a[64], b[64], d[64];
      long long slower = -1, count = -1;
      if (sscanf(t, "<title>median %63s [%63[^,], %63[^]]] slower %lld/%lld", a, b, d, &slower, &count) != 5) {
        FAIL(c->res, TSR__AR_SVG_MISMATCH, where, "tooltip is not 'median M [min, max] slower S/N'");
      } else {
        c->res->svg_numbers += 5;
        if (!pr.count || !tsr__audit_printed_equal(a, "%.4f", pr.median) ||
            !tsr__audit_printed_equal(b, "%.4f", pr.min) || !tsr__audit_printed_equal(d, "%.4f", pr.max) ||
            slower != (long long)pr.slower || count != (long long)pr.count)
          FAIL(c->res, TSR__AR_SVG_MISMATCH, where, "shows median %s [%s, %s] slower %lld/%lld, "
               "recomputed %.4f [%.4f, %.4f] slower %zu/%zu", a, b, d, slower, count, pr.median,
               pr.min, pr.max, pr.slower, pr.count);
      }
      s = y = -1;
    }
  }
  /* every paired ratio drawn */
  for (int sh = 0; sh < c->S; sh++)
    for (int x = 0; x < c->R; x++)
      if (x != ref && c->base_gpu[x] == tsr__audit_metric_is_gpu(m) && !seen[(size_t)sh * c->R + x]) {
        char where[256];
        snprintf(where, sizeof where, "%s (%.100s vs %.40s)", file, c->shapes[sh].label, c->base[x]);
        FAIL(c->res, TSR__AR_SVG_MISMATCH, where, "paired ratio not drawn");
      }
out:
  free(copy);
  free(seen);
  free(q);
}

void tsr__audit_check_outputs(tsr__audit_ctx *c) {
  const tsr__audit_input *in = c->in;
  const char *name;
  const json_t *v;
  json_object_foreach((json_t *)in->svgs, name, v) {
    if (json_is_string(v)) check_svg_numbers(c, name, json_string_value(v));
    else FAIL(c->res, TSR__AR_SVG_MISMATCH, name, "over %zu bytes: not read", TSR_AUDIT_MAX_FILE_BYTES);
  }
  if (!c->opt || !c->opt->render) {
    tsr__audit_note(c->res, "no renderer given: report.md, tables.json and the charts were not "
                            "regenerated for a whole-file comparison (their numbers were recomputed)");
    return;
  }
  json_t *files = NULL;
  char msg[512] = "";
  if (c->opt->render(c->doc, c->threshold, &files, msg, sizeof msg) || !json_is_object(files)) {
    FAIL(c->res, TSR__AR_REPORT_MISMATCH, "report.md", "cannot be regenerated from results.json: %.300s", msg);
    json_decref(files);
    return;
  }
  json_object_foreach(files, name, v) {
    if (!strcmp(name, "tables.json"))
      compare(c, TSR__AR_TABLE_MISMATCH, "tables.json", in->tables_text, in->tables_len, v);
    else if (!strcmp(name, "report.md"))
      compare(c, TSR__AR_REPORT_MISMATCH, "report.md", in->report, in->report_len, v);
    else if (in->svgs) {
      const json_t *have = json_object_get(in->svgs, name);
      compare(c, TSR__AR_SVG_MISMATCH, name, json_string_value(have), json_string_length(have), v);
    }
  }
  if (!in->svgs)
    tsr__audit_note(c->res, "read from memory: the SVG charts were not compared");
  json_object_foreach((json_t *)in->svgs, name, v)
    if (!json_object_get(files, name))
      FAIL(c->res, TSR__AR_SVG_MISMATCH, name, "results.json renders no such chart");
  json_decref(files);
}
