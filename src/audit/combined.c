/* The audit of a combined directory of `tessera-mpi bench` (docs/audit.md,
 * "Combined directories"; the format in docs/protocol.md, "Under MPI"):
 * every rank directory combined.json lists is audited as a one-process run
 * (tsr__audit_check), then the combination: each directory present with the
 * recorded results.json SHA-256 and digest, its command line the job's with
 * only its --shapes and --out, the same protocol on every rank, every shape
 * of the command measured exactly once and by the rank the documented
 * division deals it to, one device model (and each rank's results agreeing
 * with its key), the combined digest, and report.md regenerated from the
 * rank results and compared whole. Restated from the format definition: no
 * bench code is called (the report renderer is passed in). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit/audit_internal.h"
#include "core/hash.h"
#include "measure/zoo.h"
#include "sys/file.h"

#define FAIL tsr__audit_fail
#define S_(o, k) tsr__audit_str(o, k)

int tsr__audit_is_combined(const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/combined.json", dir);
  struct stat sb;
  return lstat(path, &sb) == 0;
}

static char *canon(const json_t *v) { return v ? json_dumps(v, TSR_AUDIT_CANONICAL_FLAGS) : NULL; }

/* 1 when both are the same JSON value (canonical text). */
static int same_json(const json_t *a, const json_t *b) {
  char *x = canon(a), *y = canon(b);
  int same = x && y && !strcmp(x, y);
  free(x);
  free(y);
  return same;
}

/* SHA-256("tessera-bench-mpi/1 digest\n" || canon(doc without digest)). */
static int combined_digest(const json_t *doc, char out[65]) {
  json_t *d = json_copy((json_t *)doc);
  if (!d) return -1;
  json_object_del(d, "digest");
  char *text = canon(d);
  json_decref(d);
  if (!text) return -1;
  static const char prefix[] = TSR_AUDIT_MPI_SCHEMA " digest\n";
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

/* The division (docs/protocol.md, "Under MPI"): shapes in decreasing
 * m·n·k·batch (the token's own batch, else 1),
 * ties in command order, dealt round-robin. owner[i] for shape i. */
static void deal(const json_t *shapes, int ranks, int *owner) {
  size_t S = json_array_size(shapes);
  int *ix = malloc((S ? S : 1) * sizeof *ix);
  double *w = malloc((S ? S : 1) * sizeof *w);
  for (size_t i = 0; i < S; i++) {
    tsr__shape_token t;
    const char *l = json_string_value(json_array_get(shapes, i));
    if (!l || tsr__shape_token_parse(l, &t, NULL, 0)) t.m = t.n = t.k = 0;
    w[i] = (double)t.m * (double)t.n * (double)t.k * (double)t.batch;
    ix[i] = (int)i;
  }
  for (size_t i = 1; i < S; i++)
    for (size_t j = i; j > 0 && w[ix[j]] > w[ix[j - 1]]; j--) {
      int t = ix[j];
      ix[j] = ix[j - 1];
      ix[j - 1] = t;
    }
  for (size_t i = 0; i < S; i++) owner[ix[i]] = ranks > 0 ? (int)(i % (size_t)ranks) : 0;
  free(ix);
  free(w);
}

/* The command line a rank's own run records: the job's without --preset,
 * --shapes and --out, then --shapes, --out, and for a preset job the
 * protocol's samples, sample window and warm-up. */
static json_t *rank_command(const json_t *job, const char *shapes, const char *out, const json_t *proto,
                            int preset) {
  json_t *v = json_array();
  size_t n = json_array_size(job);
  for (size_t i = 0; i < n; i++) {
    const char *t = json_string_value(json_array_get(job, i));
    if (!t) t = "";
    int drop = 0;
    static const char *const opts[] = {"--preset", "--shapes", "--out"};
    for (int j = 0; j < 3 && !drop; j++) {
      size_t l = strlen(opts[j]);
      if (!strcmp(t, opts[j])) drop = 2;
      else if (!strncmp(t, opts[j], l) && t[l] == '=') drop = 1;
    }
    if (drop == 2) i++;
    if (!drop) json_array_append_new(v, json_string(t));
  }
  json_array_append_new(v, json_string("--shapes"));
  json_array_append_new(v, json_string(shapes));
  json_array_append_new(v, json_string("--out"));
  json_array_append_new(v, json_string(out));
  if (preset) {
    static const char *const keys[][2] = {{"--samples", "samples"}, {"--sample-ms", "sample_ms"},
                                          {"--warmup-ms", "warmup_ms"}};
    for (int j = 0; j < 3; j++) {
      char buf[32];
      snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(json_object_get(proto, keys[j][1])));
      json_array_append_new(v, json_string(keys[j][0]));
      json_array_append_new(v, json_string(buf));
    }
  }
  return v;
}

/* A rank's results against its device key: the CPU it names, and every
 * available GPU route's probe versions. */
static void check_device(tsr__audit_result *res, const char *where, const json_t *key, const json_t *doc) {
  const json_t *cpu = json_object_get(key, "cpu"), *gpu = json_object_get(key, "gpu");
  const json_t *host = json_object_get(doc, "host");
  if (json_is_object(cpu) && (!same_json(json_object_get(cpu, "cpu_model"), json_object_get(host, "cpu_model")) ||
                              !same_json(json_object_get(cpu, "ncpu_online"), json_object_get(host, "ncpu_online"))))
    FAIL(res, TSR__AR_DEVICE_MIX, where, "results.json host is CPU '%.80s' (%lld online), the device key "
         "names '%.80s' (%lld online)", S_(host, "cpu_model") ? S_(host, "cpu_model") : "?",
         (long long)json_integer_value(json_object_get(host, "ncpu_online")),
         S_(cpu, "cpu_model") ? S_(cpu, "cpu_model") : "?",
         (long long)json_integer_value(json_object_get(cpu, "ncpu_online")));
  const json_t *routes = json_object_get(doc, "routes");
  static const char *const keys[] = {"device", "sm_count", "compute_capability", "cuda_driver_version",
                                     "nvrtc_version"};
  for (size_t i = 0; i < json_array_size(routes); i++) {
    const json_t *rt = json_array_get(routes, i);
    if (!tsr__audit_is(rt, "kind", "gpu") || !json_is_true(json_object_get(rt, "available"))) continue;
    if (!json_is_object(gpu)) {
      FAIL(res, TSR__AR_DEVICE_MIX, where, "route %.40s measured a GPU, the device key has %s",
           S_(rt, "name") ? S_(rt, "name") : "?", gpu ? "no usable GPU" : "no GPU part");
      continue;
    }
    const json_t *v = json_object_get(rt, "versions");
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
      const json_t *x = json_object_get(v, keys[k]);
      if (x && !same_json(x, json_object_get(gpu, keys[k])))
        FAIL(res, TSR__AR_DEVICE_MIX, where, "route %.40s probed %s differently from the device key",
             S_(rt, "name") ? S_(rt, "name") : "?", keys[k]);
    }
  }
}

/* The first line where two texts differ, for the finding. */
static void first_diff(const char *a, const char *b, char *buf, size_t cap) {
  int line = 1;
  const char *la = a, *lb = b;
  while (*a && *a == *b) {
    if (*a == '\n') {
      line++;
      la = a + 1;
      lb = b + 1;
    }
    a++;
    b++;
  }
  snprintf(buf, cap, "line %d: file has '%.80s', regenerated '%.80s'", line, la, lb);
  for (char *p = buf; *p; p++)
    if (*p == '\n') *p = ' ';
}

int tsr__audit_combined_check(const char *dir, const tsr__audit_options *opt,
                              tsr__audit_render_combined_fn render, tsr__audit_combined *out,
                              char *msg, size_t cap) {
  memset(out, 0, sizeof *out);
  tsr__audit_result_init(&out->comb);
  tsr__audit_result *res = &out->comb;
  char path[4200], *text = NULL;
  size_t len = 0;
  snprintf(path, sizeof path, "%s/combined.json", dir);
  if (tsr__read_file_capped(path, TSR_AUDIT_MAX_FILE_BYTES, &text, &len, msg, cap)) return -1;
  json_error_t err;
  json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
  free(text);
  const json_t *per = json_object_get(doc, "per_rank");
  if (!doc || !tsr__audit_is(doc, "schema", TSR_AUDIT_MPI_SCHEMA) || !json_is_array(per) ||
      json_array_size(per) > 100000) {
    snprintf(msg, cap, "%s: %s", path, !doc ? "truncated or not JSON (or a duplicate key)"
                                            : "not a tessera-bench-mpi/1 document with a per_rank array");
    json_decref(doc);
    return -1;
  }
  size_t n = json_array_size(per);
  out->nranks = n;
  out->dirs = calloc(n ? n : 1, sizeof *out->dirs);
  out->loaded = calloc(n ? n : 1, sizeof *out->loaded);
  out->ranks = calloc(n ? n : 1, sizeof *out->ranks);
  json_t **docs = calloc(n ? n : 1, sizeof *docs);
  if (!out->dirs || !out->loaded || !out->ranks || !docs) {
    snprintf(msg, cap, "out of memory");
    free(docs);
    json_decref(doc);
    return -1;
  }
  const json_t *cl = json_object_get(doc, "command_line"), *shapes = json_object_get(doc, "shapes");
  json_int_t nr = -1;
  if (!json_is_array(cl) || !json_is_array(shapes) || !tsr__audit_int(doc, "ranks", &nr) || nr != (json_int_t)n ||
      !json_is_object(json_object_get(doc, "device_key")))
    FAIL(res, TSR__AR_SCHEMA, "combined.json", "command_line, shapes, device_key or ranks (= %zu per_rank "
         "entries) missing or wrong", n);

  /* the combined digest */
  char dg[65] = "";
  if (combined_digest(doc, dg) || !tsr__audit_is(doc, "digest", dg))
    FAIL(res, TSR__AR_DIGEST, "combined.json", "digest %.64s, recomputed %s",
         S_(doc, "digest") ? S_(doc, "digest") : "(missing)", dg);
  snprintf(res->digest, sizeof res->digest, "%s", dg);
  if (opt && opt->digest) {
    res->digest_verified = !strcmp(opt->digest, dg) && tsr__audit_is(doc, "digest", dg);
    if (!res->digest_verified)
      FAIL(res, TSR__AR_DIGEST, "combined.json", "--digest %s is not this combination's (%s)", opt->digest, dg);
  }

  /* every rank directory, audited on its own */
  const char *out_dir = S_(doc, "out_dir");
  const json_t *proto0 = NULL;
  for (size_t i = 0; i < n; i++) {
    const json_t *pr = json_array_get(per, i);
    char where[64], want_dir[32];
    snprintf(where, sizeof where, "rank %zu", i);
    snprintf(want_dir, sizeof want_dir, "rank%zu", i);
    tsr__audit_result_init(&out->ranks[i]);
    json_int_t rk = -1;
    if (!tsr__audit_int(pr, "rank", &rk) || rk != (json_int_t)i || !tsr__audit_is(pr, "dir", want_dir) ||
        !json_is_array(json_object_get(pr, "shapes"))) {
      FAIL(res, TSR__AR_SCHEMA, where, "per_rank entry is not {rank %zu, dir %s, shapes [...]}", i, want_dir);
      snprintf(out->dirs[i], sizeof out->dirs[i], "%s/%s", dir, want_dir);
    } else {
      snprintf(out->dirs[i], sizeof out->dirs[i], "%s/%s", dir, want_dir);
    }
    struct stat sb;
    if (stat(out->dirs[i], &sb) || !S_ISDIR(sb.st_mode)) {
      FAIL(res, TSR__AR_RANK_DIR, where, "%s: %s", out->dirs[i], stat(out->dirs[i], &sb) ? strerror(errno) : "not a directory");
      continue;
    }
    tsr__audit_input in;
    char lmsg[1200];
    if (tsr__audit_load_dir(out->dirs[i], &in, lmsg, sizeof lmsg)) {
      FAIL(res, TSR__AR_RANK_DIR, where, "%s", lmsg);
      continue;
    }
    out->loaded[i] = 1;
    tsr__audit_options ro = opt ? *opt : (tsr__audit_options){0};
    ro.digest = NULL; /* --digest names the combination */
    tsr__audit_check(&in, &ro, &out->ranks[i]);
    docs[i] = json_incref(in.results);
    tsr__audit_input_free(&in);

    /* the rank's record in combined.json */
    char rp[4300], sha[65] = "";
    snprintf(rp, sizeof rp, "%s/results.json", out->dirs[i]);
    { /* the document's bytes, stored plain or as results.json.gz */
      char *rt = NULL, rm[256];
      size_t rl = 0;
      if (!tsr__read_doc_capped(rp, TSR_AUDIT_MAX_FILE_BYTES, &rt, &rl, rm, sizeof rm))
        tsr__sha256_hex(rt, rl, sha);
      free(rt);
    }
    if (!tsr__audit_is(pr, "results_sha256", sha))
      FAIL(res, TSR__AR_RANK_RECORD, where, "%s/results.json has SHA-256 %s, combined.json records %.64s",
           want_dir, sha, S_(pr, "results_sha256") ? S_(pr, "results_sha256") : "(missing)");
    if (!S_(docs[i], "digest") || !tsr__audit_is(pr, "digest", S_(docs[i], "digest")))
      FAIL(res, TSR__AR_RANK_RECORD, where, "run digest %.64s, combined.json records %.64s",
           S_(docs[i], "digest") ? S_(docs[i], "digest") : "(missing)", S_(pr, "digest") ? S_(pr, "digest") : "(missing)");
    const json_t *sum = json_object_get(docs[i], "summary");
    if (!same_json(json_object_get(sum, "rows"), json_object_get(pr, "rows")) ||
        !same_json(json_object_get(sum, "failed_rows"), json_object_get(pr, "failed_rows")))
      FAIL(res, TSR__AR_RANK_RECORD, where, "rows/failed rows differ from the run's summary");
    if (!same_json(json_object_get(json_object_get(docs[i], "host"), "hostname"), json_object_get(pr, "host")))
      FAIL(res, TSR__AR_RANK_RECORD, where, "host differs from the run's host");
    const json_t *proto = json_object_get(docs[i], "protocol"), *ps = json_object_get(proto, "shapes");
    json_t *labels = json_array();
    for (size_t j = 0; j < json_array_size(ps); j++)
      json_array_append_new(labels, json_string(S_(json_array_get(ps, j), "label") ? S_(json_array_get(ps, j), "label") : ""));
    if (!same_json(labels, json_object_get(pr, "shapes")))
      FAIL(res, TSR__AR_RANK_RECORD, where, "the run measured other shapes than combined.json records");
    /* its command: the job's, with only its own --shapes and --out */
    char *joined = NULL;
    size_t jl = 0;
    FILE *f = open_memstream(&joined, &jl);
    for (size_t j = 0; f && j < json_array_size(labels); j++)
      fprintf(f, "%s%s", j ? "," : "", json_string_value(json_array_get(labels, j)));
    if (f) fclose(f);
    char rdir[4300];
    snprintf(rdir, sizeof rdir, "%s/%s", out_dir ? out_dir : "", want_dir);
    /* a preset job: the rank's run states the preset's protocol values */
    int preset = 0;
    for (size_t j = 0; j < json_array_size(cl); j++) {
      const char *t = json_string_value(json_array_get(cl, j));
      if (t && (!strcmp(t, "--preset") || !strncmp(t, "--preset=", 9))) preset = 1;
    }
    json_t *want = rank_command(cl, joined ? joined : "", rdir, proto, preset);
    if (!same_json(want, json_object_get(docs[i], "command_line")))
      FAIL(res, TSR__AR_RANK_RECORD, where, "the run's command line is not the job's with only its "
           "--shapes %.80s and --out %.80s", joined ? joined : "", rdir);
    json_decref(want);
    free(joined);
    json_decref(labels);
    /* the same protocol (its shapes aside) and routes on every rank */
    if (!proto0) proto0 = proto;
    else {
      json_t *a = json_copy((json_t *)proto0), *b = json_copy((json_t *)proto);
      json_object_del(a, "shapes");
      json_object_del(b, "shapes");
      if (!same_json(a, b)) FAIL(res, TSR__AR_RANK_RECORD, where, "protocol differs from rank 0's (shapes aside)");
      json_decref(a);
      json_decref(b);
    }
    check_device(res, where, json_object_get(pr, "device_key"), docs[i]);
    if (!same_json(json_object_get(pr, "device_key"), json_object_get(doc, "device_key")))
      FAIL(res, TSR__AR_DEVICE_MIX, where, "device key differs from the job's (one device model per job)");
  }

  /* coverage: the command's shapes, each measured once, where the division deals it */
  json_t *want = tsr__audit_command_shapes(cl);
  if (!want) FAIL(res, TSR__AR_SHAPE_COVERAGE, "command_line", "names no shapes (--shapes or --preset)");
  else if (!same_json(want, shapes))
    FAIL(res, TSR__AR_SHAPE_COVERAGE, "shapes", "combined.json's shapes are not the command's");
  out->shapes = json_array_size(want);
  int *owner = calloc(json_array_size(want) + 1, sizeof *owner);
  deal(want, (int)n, owner);
  for (size_t s = 0; s < json_array_size(want); s++) {
    const char *label = json_string_value(json_array_get(want, s));
    int count = 0, by = -1;
    for (size_t i = 0; i < n; i++) {
      /* what the run measured; combined.json's list for a rank that cannot be read */
      const json_t *ps = docs[i] ? json_object_get(json_object_get(docs[i], "protocol"), "shapes") : NULL;
      const json_t *rs = json_object_get(json_array_get(per, i), "shapes");
      size_t m = docs[i] ? json_array_size(ps) : json_array_size(rs);
      for (size_t j = 0; j < m; j++) {
        const char *l = docs[i] ? S_(json_array_get(ps, j), "label") : json_string_value(json_array_get(rs, j));
        if (l && label && !strcmp(l, label)) {
          count++;
          if (by < 0) by = (int)i;
        }
      }
    }
    if (count == 0) FAIL(res, TSR__AR_SHAPE_COVERAGE, label ? label : "?", "measured by no rank (a lost shape)");
    else if (count > 1) FAIL(res, TSR__AR_SHAPE_COVERAGE, label ? label : "?", "measured %d times", count);
    else if (by != owner[s])
      FAIL(res, TSR__AR_SHAPE_COVERAGE, label ? label : "?", "measured by rank %d, the division deals it to rank %d",
           by, owner[s]);
  }
  for (size_t i = 0; i < n; i++) {
    const json_t *ps = docs[i] ? json_object_get(json_object_get(docs[i], "protocol"), "shapes") : NULL;
    for (size_t j = 0; j < json_array_size(ps); j++) {
      const char *l = S_(json_array_get(ps, j), "label");
      int found = 0;
      for (size_t s = 0; s < json_array_size(want) && l; s++)
        found |= !strcmp(json_string_value(json_array_get(want, s)), l);
      if (!found)
        FAIL(res, TSR__AR_SHAPE_COVERAGE, l ? l : "?", "rank %zu measured a shape the command does not name", i);
    }
  }
  free(owner);
  json_decref(want);

  /* report.md regenerated from combined.json and the rank results */
  if (render) {
    char *md = NULL, rmsg[512], *file = NULL;
    size_t flen = 0;
    snprintf(path, sizeof path, "%s/report.md", dir);
    if (tsr__read_file_capped(path, TSR_AUDIT_MAX_FILE_BYTES, &file, &flen, rmsg, sizeof rmsg))
      FAIL(res, TSR__AR_COMBINED_REPORT, "report.md", "%s", rmsg);
    else if (render(doc, docs, n, &md, rmsg, sizeof rmsg))
      FAIL(res, TSR__AR_COMBINED_REPORT, "report.md", "cannot be regenerated: %s", rmsg);
    else {
      out->report_compared = 1;
      if (strlen(md) != flen || memcmp(md, file, flen)) {
        char d[400];
        first_diff(file, md, d, sizeof d);
        FAIL(res, TSR__AR_COMBINED_REPORT, "report.md", "%s", d);
      }
    }
    free(md);
    free(file);
  } else {
    tsr__audit_note(res, "report.md not regenerated (no renderer)");
  }
  for (size_t i = 0; i < n; i++) json_decref(docs[i]);
  free(docs);
  json_decref(doc);
  return 0;
}

void tsr__audit_combined_free(tsr__audit_combined *c) {
  for (size_t i = 0; i < c->nranks && c->ranks; i++) tsr__audit_result_free(&c->ranks[i]);
  free(c->ranks);
  free(c->loaded);
  free(c->dirs);
  tsr__audit_result_free(&c->comb);
  memset(c, 0, sizeof *c);
}
