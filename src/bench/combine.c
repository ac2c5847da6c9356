/* The bench under MPI (docs/protocol.md, "Under MPI"): each rank's
 * directory is a one-process run of its shapes; this file writes what ties
 * them together, combined.json (schema tessera-bench-mpi/1) and report.md,
 * and renders that report from combined.json and the ranks' results.json
 * alone, so the audit can regenerate it. Every number in the report is the
 * rank's own table value (tsr__bench_tables), formatted as report.md
 * formats it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "core/hash.h"
#include "sys/file.h"

static const char *jstr(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

int tsr__bench_combined_digest(const json_t *combined, char out[65]) {
  json_t *d = json_copy((json_t *)combined);
  if (!d) return -1;
  json_object_del(d, "digest");
  char *text = tsr__canonical_json(d);
  json_decref(d);
  if (!text) return -1;
  static const char prefix[] = TSR_BENCH_MPI_SCHEMA " digest\n";
  size_t lp = sizeof prefix - 1, lt = strlen(text);
  char *buf = malloc(lp + lt);
  int rc = -1;
  if (buf) {
    memcpy(buf, prefix, lp);
    memcpy(buf + lp, text, lt);
    rc = tsr__sha256_hex(buf, lp + lt, out);
  }
  free(buf);
  free(text);
  return rc;
}

/* The device key as one line: "GPU <name> (<n> SMs, sm_<cc>, driver <d>,
 * NVRTC <v>); CPU <model> (<n> online)". */
static void key_text(FILE *f, const json_t *key) {
  const json_t *gpu = json_object_get(key, "gpu"), *cpu = json_object_get(key, "cpu");
  const char *sep = "";
  if (gpu) {
    if (json_is_object(gpu))
      fprintf(f, "GPU %s (%lld SMs, compute capability %s, driver %lld, NVRTC %s)", jstr(gpu, "device"),
              (long long)json_integer_value(json_object_get(gpu, "sm_count")),
              jstr(gpu, "compute_capability"),
              (long long)json_integer_value(json_object_get(gpu, "cuda_driver_version")),
              jstr(gpu, "nvrtc_version"));
    else
      fprintf(f, "GPU none usable");
    sep = "; ";
  }
  if (cpu)
    fprintf(f, "%sCPU %s (%lld online)", sep, jstr(cpu, "cpu_model"),
            (long long)json_integer_value(json_object_get(cpu, "ncpu_online")));
}

/* Index of the per_rank entry whose shapes hold label, -1 when none. */
static int rank_of_shape(const json_t *per_rank, const char *label) {
  for (size_t i = 0; i < json_array_size(per_rank); i++) {
    const json_t *sh = json_object_get(json_array_get(per_rank, i), "shapes");
    for (size_t j = 0; j < json_array_size(sh); j++)
      if (!strcmp(json_string_value(json_array_get(sh, j)) ? json_string_value(json_array_get(sh, j)) : "",
                  label))
        return (int)i;
  }
  return -1;
}

/* The cell of (shape, route) in one metric table of tables.json, or NULL. */
static const json_t *find_cell(const json_t *arr, const char *shape, const char *route, const char *key) {
  for (size_t i = 0; i < json_array_size(arr); i++) {
    const json_t *c = json_array_get(arr, i);
    if (!strcmp(jstr(c, "shape"), shape) && !strcmp(jstr(c, key), route)) return c;
  }
  return NULL;
}

/* One shape's table: a row per measured route, a column per metric (as
 * report.md prints a cell: µs %.3f, ⚠ when unstable, (k/N) when not every
 * round is valid, FAILED when none), then the accuracy columns; then the
 * paired ratios of that shape. */
static void render_shape(FILE *f, const json_t *tables, const json_t *doc, const char *shape) {
  const json_t *metrics = json_object_get(tables, "metrics");
  const json_t *acc = json_object_get(json_object_get(tables, "accuracy"), "cells");
  const json_t *base = json_object_get(json_object_get(doc, "order"), "base_routes");
  fprintf(f, "| route |");
  for (size_t m = 0; m < json_array_size(metrics); m++)
    fprintf(f, " %s µs |", jstr(json_array_get(metrics, m), "metric"));
  fprintf(f, " precision | rel. Frobenius err | contract met |\n|---|");
  for (size_t m = 0; m < json_array_size(metrics); m++) fprintf(f, "---:|");
  fprintf(f, "---|---:|---:|\n");
  for (size_t r = 0; r < json_array_size(base); r++) {
    const char *route = json_string_value(json_array_get(base, r));
    if (!route) continue;
    fprintf(f, "| %s |", route);
    for (size_t m = 0; m < json_array_size(metrics); m++) {
      const json_t *cell = find_cell(json_object_get(json_array_get(metrics, m), "cells"), shape, route, "route");
      if (!cell) {
        fprintf(f, " - |");
        continue;
      }
      double med = tsr__json_to_double(json_object_get(cell, "median_of_p50"));
      long long valid = json_integer_value(json_object_get(cell, "rounds_valid"));
      long long total = json_integer_value(json_object_get(cell, "rounds_total"));
      if (isfinite(med)) fprintf(f, " %.3f", med / 1000.0);
      else fprintf(f, " **FAILED**");
      if (json_is_true(json_object_get(cell, "unstable"))) fprintf(f, " ⚠");
      if (valid != total) fprintf(f, " (%lld/%lld)", valid, total);
      fprintf(f, " |");
    }
    const json_t *a = find_cell(acc, shape, route, "route");
    if (a) {
      long long met = json_integer_value(json_object_get(a, "rounds_met"));
      long long chk = json_integer_value(json_object_get(a, "rounds_checked"));
      fprintf(f, " %s | %.3g | %s%lld/%lld%s |\n", jstr(a, "precision"),
              tsr__json_to_double(json_object_get(a, "rel_fro_median")), met == chk ? "" : "**", met,
              chk, met == chk ? "" : "**");
    } else {
      fprintf(f, " - | - | - |\n");
    }
  }
  int header = 0;
  for (size_t m = 0; m < json_array_size(metrics); m++) {
    const json_t *jm = json_array_get(metrics, m), *ratios = json_object_get(jm, "ratios");
    for (size_t i = 0; i < json_array_size(ratios); i++) {
      const json_t *o = json_array_get(ratios, i);
      if (strcmp(jstr(o, "shape"), shape)) continue;
      if (!header++)
        fprintf(f, "\nPaired ratios reference / peer: median of same-round ratios [min, max]; "
                   "slower = rounds where the reference was slower / rounds paired.\n\n"
                   "| metric | ratio | median [min, max] | slower |\n|---|---|---:|---:|\n");
      long long cnt = json_integer_value(json_object_get(o, "count"));
      fprintf(f, "| %s | %s/%s |", jstr(jm, "metric"), jstr(o, "reference"), jstr(o, "peer"));
      if (!cnt) fprintf(f, " — | 0/0 |\n");
      else
        fprintf(f, " %.3f [%.3f, %.3f] | %lld/%lld |\n", tsr__json_to_double(json_object_get(o, "median")),
                tsr__json_to_double(json_object_get(o, "min")), tsr__json_to_double(json_object_get(o, "max")),
                (long long)json_integer_value(json_object_get(o, "slower")), cnt);
    }
  }
  fprintf(f, "\n");
}

/* The job's standings by zoo class (docs/zoo.md), over every rank's rows
 * in zoo order, when the job ran over zoo shapes: a zoo preset, or shapes
 * all in the zoo and of more than one class (as the one-process report). */
static long zoo_index(const tsr__zoo_row *r, const tsr__zoo_shape *zs) {
  return r->z ? (long)(r->z - zs) : 1L << 30; /* not in the zoo: last */
}
static void render_zoo_classes(FILE *f, const json_t *combined, json_t *const *docs, json_t **tables,
                               size_t n) {
  int nz = tsr__zoo(1, 0, NULL, 0);
  tsr__zoo_shape *zs = calloc((size_t)nz, sizeof *zs);
  if (!zs) return;
  tsr__zoo(1, 0, zs, nz);
  const json_t *cl = json_object_get(combined, "command_line");
  int zoo_run = 0;
  for (size_t i = 0; i + 1 < json_array_size(cl); i++) {
    const char *a = json_string_value(json_array_get(cl, i)), *b = json_string_value(json_array_get(cl, i + 1));
    if (a && b && !strcmp(a, "--preset") && (!strcmp(b, "zoo") || !strcmp(b, "zoo-quick"))) zoo_run = 1;
    if (a && (!strcmp(a, "--preset=zoo") || !strcmp(a, "--preset=zoo-quick"))) zoo_run = 1;
  }
  if (!zoo_run) {
    unsigned classes = 0;
    size_t in = 0, all = 0;
    for (size_t r = 0; r < n; r++) {
      if (!docs[r]) continue;
      in += (size_t)tsr__bench_zoo_shapes(docs[r], zs, nz, &classes);
      all += json_array_size(json_object_get(json_object_get(docs[r], "protocol"), "shapes"));
    }
    zoo_run = in && in == all && (classes & (classes - 1));
  }
  const char *const(*pairs)[3] = tsr__zoo_pairs;
  for (size_t p = 0; zoo_run && p < TSR__ZOO_PAIRS; p++) {
    tsr__zoo_row *rows = NULL;
    int nr = 0;
    char msg[256];
    for (size_t r = 0; r < n; r++)
      if (docs[r] && tables[r])
        tsr__bench_zoo_rows(docs[r], tables[r], pairs[p][2], pairs[p][0], pairs[p][1], zs, nz,
                            &rows, &nr, msg, sizeof msg);
    if (nr) {
      for (int i = 1; i < nr; i++) /* stable insertion sort into zoo order */
        for (int j = i; j > 0 && zoo_index(&rows[j], zs) < zoo_index(&rows[j - 1], zs); j--) {
          tsr__zoo_row t = rows[j];
          rows[j] = rows[j - 1];
          rows[j - 1] = t;
        }
      char *md = tsr__bench_zoo_summary_md(rows, nr, pairs[p][0], pairs[p][1], pairs[p][2]);
      if (md) fprintf(f, "%s\n", md);
      free(md);
    }
    free(rows);
  }
  free(zs);
}

int tsr__bench_combined_render(const json_t *combined, json_t *const *docs, size_t n, char **md,
                               char *msg, size_t cap) {
  *md = NULL;
  const json_t *per_rank = json_object_get(combined, "per_rank");
  if (json_array_size(per_rank) != n) {
    snprintf(msg, cap, "combined.json lists %zu ranks, %zu documents given", json_array_size(per_rank), n);
    return -1;
  }
  json_t **tables = calloc(n ? n : 1, sizeof *tables);
  if (!tables) {
    snprintf(msg, cap, "out of memory rendering the combined report");
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    if (docs[i] && !(tables[i] = tsr__bench_tables(docs[i], -1.0, msg, cap))) {
      for (size_t j = 0; j < i; j++) json_decref(tables[j]);
      free(tables);
      return -1;
    }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) {
    for (size_t i = 0; i < n; i++) json_decref(tables[i]);
    free(tables);
    snprintf(msg, cap, "out of memory rendering the combined report");
    return -1;
  }
  fprintf(f, "# tessera bench report (MPI: %zu ranks)\n\n", n);
  fprintf(f, "Generated from `combined.json` and each rank's `results.json` alone; `tessera audit DIR` "
             "audits every rank directory, regenerates this file and compares it whole. Schema %s; "
             "see docs/protocol.md (\"Under MPI\"). Each rank ran the one-process protocol on its "
             "shapes into its own directory, whose report.md has the full tables.\n\n",
          jstr(combined, "schema"));
  fprintf(f, "- started %s, finished %s\n- command:", jstr(combined, "started_utc"), jstr(combined, "finished_utc"));
  const json_t *cl = json_object_get(combined, "command_line");
  for (size_t i = 0; i < json_array_size(cl); i++)
    fprintf(f, " %s", json_string_value(json_array_get(cl, i)) ? json_string_value(json_array_get(cl, i)) : "");
  fprintf(f, "\n- device (every rank): ");
  key_text(f, json_object_get(combined, "device_key"));
  fprintf(f, "\n- shapes dealt to ranks: %s\n", jstr(combined, "division"));
  const char *dg = jstr(combined, "digest");
  fprintf(f, "- digest sha256:%s (combined.json; `tessera audit --digest %s DIR` verifies it)\n\n", dg, dg);
  fprintf(f, "| rank | host | CUDA_VISIBLE_DEVICES | directory | shapes | rows | failed | run digest |\n"
             "|---:|---|---|---|---|---:|---:|---|\n");
  for (size_t i = 0; i < n; i++) {
    const json_t *pr = json_array_get(per_rank, i), *sh = json_object_get(pr, "shapes");
    fprintf(f, "| %lld | %s | %s | %s |", (long long)json_integer_value(json_object_get(pr, "rank")),
            jstr(pr, "host"), json_is_string(json_object_get(pr, "cuda_visible_devices"))
                                  ? jstr(pr, "cuda_visible_devices") : "(unset)", jstr(pr, "dir"));
    for (size_t j = 0; j < json_array_size(sh); j++)
      fprintf(f, "%s%s", j ? ", " : " ", json_string_value(json_array_get(sh, j)) ? json_string_value(json_array_get(sh, j)) : "");
    fprintf(f, " | %lld | %lld | %s |\n", (long long)json_integer_value(json_object_get(pr, "rows")),
            (long long)json_integer_value(json_object_get(pr, "failed_rows")), jstr(pr, "digest"));
  }
  fprintf(f, "\nPer shape, the table of the rank that measured it: median of per-round p50s, µs per "
             "call (lower is better); ⚠ = unstable (per-round p50 spread above the protocol's "
             "threshold); (k/N) = only k of N rounds valid; the accuracy columns as in the "
             "one-process report (median relative Frobenius error over rounds, rounds that met the "
             "contract of the precision mode the row ran).\n\n");
  const json_t *shapes = json_object_get(combined, "shapes");
  for (size_t s = 0; s < json_array_size(shapes); s++) {
    const char *label = json_string_value(json_array_get(shapes, s));
    if (!label) continue;
    int r = rank_of_shape(per_rank, label);
    if (r < 0 || !docs[r]) {
      fprintf(f, "## %s\n\n**not measured** (no rank's results hold it)\n\n", label);
      continue;
    }
    const json_t *pr = json_array_get(per_rank, (size_t)r);
    fprintf(f, "## %s — rank %lld on %s (%s)\n\n", label, (long long)json_integer_value(json_object_get(pr, "rank")),
            jstr(pr, "host"), jstr(pr, "dir"));
    render_shape(f, tables[r], docs[r], label);
  }
  render_zoo_classes(f, combined, docs, tables, n);
  int bad = fclose(f) != 0 || !buf;
  for (size_t i = 0; i < n; i++) json_decref(tables[i]);
  free(tables);
  if (bad) {
    free(buf);
    snprintf(msg, cap, "out of memory rendering the combined report");
    return -1;
  }
  *md = buf;
  return 0;
}

int tsr__bench_combine(const char *dir, json_t *combined, char digest[65], char **md_out, char *msg,
                       size_t cap) {
  json_t *per_rank = json_object_get(combined, "per_rank");
  size_t n = json_array_size(per_rank);
  json_t **docs = calloc(n ? n : 1, sizeof *docs);
  int rc = docs ? 0 : -1;
  if (!docs) snprintf(msg, cap, "out of memory");
  for (size_t i = 0; i < n && !rc; i++) {
    json_t *pr = json_array_get(per_rank, i);
    char path[4200], sha[65], m2[512];
    snprintf(path, sizeof path, "%s/%s/results.json", dir, jstr(pr, "dir"));
    char *text = NULL;
    size_t len = 0;
    if (tsr__read_doc_capped(path, (size_t)1 << 30, &text, &len, m2, sizeof m2)) {
      snprintf(msg, cap, "%s", m2);
      rc = -1;
      break;
    }
    json_error_t err;
    docs[i] = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    tsr__sha256_hex(text, len, sha);
    free(text);
    if (!docs[i]) {
      snprintf(msg, cap, "%s: not JSON (%s)", path, err.text);
      rc = -1;
      break;
    }
    const json_t *sum = json_object_get(docs[i], "summary");
    json_object_set_new(pr, "results_sha256", json_string(sha));
    json_object_set_new(pr, "digest", json_string(jstr(docs[i], "digest")));
    json_object_set_new(pr, "rows", json_integer(json_integer_value(json_object_get(sum, "rows"))));
    json_object_set_new(pr, "failed_rows", json_integer(json_integer_value(json_object_get(sum, "failed_rows"))));
  }
  char *md = NULL;
  if (!rc) {
    char when[64];
    tsr__utc_now(when, sizeof when);
    json_object_set_new(combined, "finished_utc", json_string(when));
    if (tsr__bench_combined_digest(combined, digest)) {
      snprintf(msg, cap, "cannot compute the combined digest");
      rc = -1;
    } else {
      json_object_set_new(combined, "digest", json_string(digest));
      rc = tsr__bench_combined_render(combined, docs, n, &md, msg, cap);
    }
  }
  /* report.md first: combined.json, written last, is what makes DIR a combined run */
  if (!rc) {
    char path[4200];
    snprintf(path, sizeof path, "%s/report.md", dir);
    tsr__span part = {md, strlen(md)};
    rc = tsr__write_atomic(path, &part, 1, msg, cap) ? -1 : 0;
  }
  if (!rc) {
    char path[4200];
    snprintf(path, sizeof path, "%s/combined.json", dir);
    size_t len = 0;
    char *text = tsr__json_file_text(combined, &len);
    tsr__span part = {text, len};
    rc = text && !tsr__write_atomic(path, &part, 1, msg, cap) ? 0 : -1;
    if (!text) snprintf(msg, cap, "out of memory writing combined.json");
    free(text);
  }
  for (size_t i = 0; i < n && docs; i++) json_decref(docs[i]);
  free(docs);
  if (md_out && !rc) *md_out = md;
  else free(md);
  return rc;
}
