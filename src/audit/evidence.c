/* The raw document against itself: every field that has a second source is
 * compared with it (docs/audit.md, "Self-consistency"). The recorded command
 * line against the protocol (the design it implies must be present in
 * full); per row: the child's argv, times against the child's own run time,
 * the calibration rule, the device and library versions against the route's
 * probe, thread counts, oracle keys, receipts against the protocol's
 * tolerances and their own logic, output hashes, the log fields; over the
 * run: the sequence, the timestamps, plans and outputs across rounds, the
 * logs directory and the oracle precompute list. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit/audit_internal.h"
#include "core/hash.h"
#include "measure/zoo.h"

#define FAIL tsr__audit_fail
#define S_(o, k) tsr__audit_str(o, k)

/* ---- the bench's command line, restated (cli/cmd_bench.c) ----------------- */
/* Preset shape lists and defaults (docs/protocol.md, `tessera bench --help`). */
static const char *const preset_seed[] = {
    "128x128x61",   "512x512x512",    "1024x1024x1024", "1024x1024x1537", "2049x4097x1025",
    "4096x4096x4096", "4096x4096x11008", "8192x8192x8192", "32x32x32",       "128x128x128",
    "256x1024x128", "1024x128x256",   "127x193x61",     "513x257x129"};
static const char *const preset_quick[] = {"128x128x61", "256x256x256", "513x257x129",
                                           "1024x1024x1024"};
/* A preset's shapes as labels (a new array), NULL when it is not a preset:
 * the zoo presets restated from the zoo's definition (measure/zoo.h, seed
 * 1, every entry). */
static json_t *preset_shapes(const char *preset) {
  int quick = !strcmp(preset, "quick"), zquick = !strcmp(preset, "zoo-quick");
  json_t *out = json_array();
  if (quick || !strcmp(preset, "seed")) {
    for (int i = 0; i < (quick ? 4 : 14); i++)
      json_array_append_new(out, json_string(quick ? preset_quick[i] : preset_seed[i]));
  } else if (zquick || !strcmp(preset, "zoo")) {
    int n = tsr__zoo(1, zquick, NULL, 0);
    tsr__zoo_shape *zs = calloc((size_t)n, sizeof *zs);
    if (zs) tsr__zoo(1, zquick, zs, n);
    for (int i = 0; zs && i < n; i++) json_array_append_new(out, json_string(zs[i].label));
    free(zs);
  } else {
    json_decref(out);
    out = NULL;
  }
  return out;
}

/* The base order of the routes run when --routes is not given. */
static const char *const default_routes[] = {"tessera-gpu", "hand",        "cublas",
                                             "torch",       "tessera-cpu", "openblas"};

#define CL_MAX 64
typedef struct {
  const char *name[CL_MAX]; /* without the leading "--" */
  size_t nlen[CL_MAX];
  const char *value[CL_MAX]; /* NULL for a flag */
  int n;
} cl_opts;

static int cl_is_flag(const char *name, size_t len) {
  static const char *const flags[] = {"trans-a", "trans-b", "no-progress", "help", "oracle-only"};
  for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
    if (strlen(flags[i]) == len && !strncmp(flags[i], name, len)) return 1;
  return 0;
}

/* Options of argv[from..]: "--name value", "--name=value" or a flag. */
static void cl_parse(const json_t *argv, size_t from, cl_opts *o) {
  o->n = 0;
  for (size_t i = from; i < json_array_size(argv) && o->n < CL_MAX; i++) {
    const char *t = json_string_value(json_array_get(argv, i));
    if (!t || strncmp(t, "--", 2)) continue;
    const char *name = t + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const char *value = NULL;
    if (eq) value = eq + 1;
    else if (!cl_is_flag(name, len) && i + 1 < json_array_size(argv))
      value = json_string_value(json_array_get(argv, ++i));
    o->name[o->n] = name;
    o->nlen[o->n] = len;
    o->value[o->n++] = value;
  }
}

/* The last occurrence's value (a later option overrides); *given set. */
static const char *cl_get(const cl_opts *o, const char *name, int *given) {
  *given = 0;
  const char *v = NULL;
  for (int i = 0; i < o->n; i++)
    if (o->nlen[i] == strlen(name) && !strncmp(o->name[i], name, o->nlen[i])) {
      *given = 1;
      v = o->value[i];
    }
  return v;
}

static int split_count(const char *list) {
  int n = 0;
  for (const char *p = list; p && *p;) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l) n++;
    if (!e) break;
    p = e + 1;
  }
  return n;
}
/* Item i of a comma list into buf (empty items skipped). */
static int split_item(const char *list, int i, char *buf, size_t cap) {
  int n = 0;
  for (const char *p = list; p && *p;) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l && n++ == i) {
      snprintf(buf, cap, "%.*s", (int)l, p);
      return 0;
    }
    if (!e) break;
    p = e + 1;
  }
  return -1;
}

static void cl_int(tsr__audit_ctx *c, const cl_opts *o, const char *opt, const char *key,
                   long long dflt, int have_default) {
  int given;
  const char *v = cl_get(o, opt, &given);
  json_int_t got;
  if (!given && !have_default) return;
  char *end = NULL;
  long long want = given ? (v ? strtoll(v, &end, 10) : -1) : dflt;
  if (given && (!v || !*v || *end)) {
    FAIL(c->res, TSR__AR_COMMAND_LINE, "command_line", "--%s '%.40s' is not an integer", opt, v ? v : "");
    return;
  }
  if (!tsr__audit_int(c->proto, key, &got) || got != want)
    FAIL(c->res, TSR__AR_COMMAND_LINE, "command_line", "%s--%s %lld, the protocol records %s %lld",
         given ? "" : "(default) ", opt, want, key, (long long)got);
}

static void cl_str(tsr__audit_ctx *c, const cl_opts *o, const char *opt, const char *key,
                   const char *dflt) {
  int given;
  const char *v = cl_get(o, opt, &given);
  const char *want = given ? v : dflt;
  if (!want) return;
  const char *got = S_(c->proto, key);
  if (!got || strcmp(got, want))
    FAIL(c->res, TSR__AR_COMMAND_LINE, "command_line", "%s--%s %.40s, the protocol records %s '%.40s'",
         given ? "" : "(default) ", opt, want, key, got ? got : "(missing)");
}

static void cl_real(tsr__audit_ctx *c, const cl_opts *o, const char *opt, const char *key,
                    double dflt, int have_default, int as_float) {
  int given;
  const char *v = cl_get(o, opt, &given);
  if (!given && !have_default) return;
  double want = dflt, got = NAN;
  if (given) {
    char *end = NULL;
    want = v ? strtod(v, &end) : NAN;
    if (!v || !*v || *end) {
      FAIL(c->res, TSR__AR_COMMAND_LINE, "command_line", "--%s '%.40s' is not a number", opt, v ? v : "");
      return;
    }
  }
  tsr__audit_num(json_object_get(c->proto, key), &got);
  int same = as_float ? (float)want == (float)got : want == got;
  if (!same)
    FAIL(c->res, TSR__AR_COMMAND_LINE, "command_line", "%s--%s %.17g, the protocol records %s %.17g",
         given ? "" : "(default) ", opt, want, key, got);
}

/* The shapes: --shapes, or a preset's list. *quick when the preset is
 * quick (its defaults differ). */
static void cl_check_shapes(tsr__audit_ctx *c, const cl_opts *o, int *quick) {
  tsr__audit_result *res = c->res;
  int given;
  const char *shapes = cl_get(o, "shapes", &given);
  int have_shapes = given;
  const char *preset = cl_get(o, "preset", &given);
  const json_t *ppre = json_object_get(c->proto, "preset");
  if (given && preset) {
    *quick = !strcmp(preset, "quick");
    if (!json_is_string(ppre) || strcmp(json_string_value(ppre), preset))
      FAIL(res, TSR__AR_COMMAND_LINE, "command_line", "--preset %.20s, the protocol records preset %.20s",
           preset, json_is_string(ppre) ? json_string_value(ppre) : "null");
  } else if (!json_is_null(ppre)) {
    FAIL(res, TSR__AR_COMMAND_LINE, "command_line", "no --preset, the protocol records preset %.20s",
         json_is_string(ppre) ? json_string_value(ppre) : "?");
  }
  int nwant = 0;
  json_t *plist = NULL;
  if (have_shapes && shapes) nwant = split_count(shapes);
  else if (given && preset && (plist = preset_shapes(preset))) {
    nwant = (int)json_array_size(plist);
  } else if (given && preset) {
    FAIL(res, TSR__AR_COMMAND_LINE, "command_line", "--preset '%.20s' is not seed, quick, zoo or zoo-quick", preset);
  } else {
    FAIL(res, TSR__AR_COMMAND_LINE, "command_line", "names no shapes (--shapes or --preset)");
  }
  if (!nwant) {
    json_decref(plist);
    return;
  }
  char buf[128], dropped[256] = "";
  int same = nwant == c->S, ndropped = 0;
  for (int i = 0; i < nwant; i++) {
    const char *w = plist ? json_string_value(json_array_get(plist, (size_t)i))
                          : (split_item(shapes, i, buf, sizeof buf) ? "" : buf);
    if (i < c->S && strcmp(c->shapes[i].label, w)) same = 0;
    if (tsr__audit_shape_index(c, w) < 0) {
      size_t l = strlen(dropped);
      if (l < sizeof dropped - 80) snprintf(dropped + l, sizeof dropped - l, "%s%s", ndropped ? ", " : "", w);
      ndropped++;
    }
  }
  json_decref(plist);
  if (ndropped)
    FAIL(res, TSR__AR_COMMAND_LINE, "protocol.shapes", "the command line names %d shapes, the "
         "protocol has %d: %s missing (a dropped shape)", nwant, c->S, dropped);
  else if (!same)
    FAIL(res, TSR__AR_COMMAND_LINE, "protocol.shapes", "differ from the command line's %d shapes "
         "(order or extra shapes)", nwant);
}

/* The routes: --routes, or the default table order; every one recorded
 * (measured or skipped with its reason), in that order. */
static void cl_check_routes(tsr__audit_ctx *c, const cl_opts *o) {
  int given;
  const char *routes = cl_get(o, "routes", &given);
  const json_t *jr = json_object_get(c->doc, "routes");
  int nr = given && routes ? split_count(routes) : (int)(sizeof default_routes / sizeof *default_routes);
  int same = (size_t)nr == json_array_size(jr);
  char buf[64], missing[200] = "";
  for (int i = 0; i < nr; i++) {
    const char *w = given && routes ? (split_item(routes, i, buf, sizeof buf) ? "" : buf) : default_routes[i];
    const char *got = S_(json_array_get(jr, (size_t)i), "name");
    if (!got || strcmp(got, w)) same = 0;
    int found = 0;
    for (size_t j = 0; j < json_array_size(jr); j++) found |= tsr__audit_is(json_array_get(jr, j), "name", w);
    if (!found && strlen(missing) < sizeof missing - 40)
      snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " %s", w);
  }
  if (!same)
    FAIL(c->res, TSR__AR_COMMAND_LINE, "routes", "the command line %s %d routes, results.json records "
         "%zu%s%s", given ? "names" : "(default) runs", nr, json_array_size(jr),
         missing[0] ? "; missing:" : " (order differs)", missing);
}

/* The protocol's parameters: given, or the bench's defaults (a quick
 * preset's where it has its own). */
static void cl_check_parameters(tsr__audit_ctx *c, const cl_opts *o, int quick) {
  int given;
  /* Rounds: --rounds, else 2R over the measured routes. */
  cl_int(c, o, "rounds", "rounds", 2LL * c->R, 1);
  cl_int(c, o, "samples", "samples", quick ? 3 : 5, 1);
  cl_int(c, o, "sample-ms", "sample_ms", quick ? 10 : 20, 1);
  cl_int(c, o, "warmup-ms", "warmup_ms", quick ? 50 : 100, 1);
  cl_int(c, o, "timeout", "timeout_s", 300, 1);
  cl_int(c, o, "seed", "seed", 1, 1);
  cl_int(c, o, "batch", "batch", 1, 1);
  json_int_t ncpu = -1;
  int have_ncpu = tsr__audit_int(json_object_get(c->doc, "host"), "ncpu_online", &ncpu);
  cl_int(c, o, "threads", "threads", ncpu, have_ncpu);
  cl_str(c, o, "inputs", "inputs", "dyadic");
  if (c->v2) {
    cl_str(c, o, "precision", "precision", "auto");
    const char *acc = cl_get(o, "accuracy", &given);
    const char *want = given ? acc : "random";
    const json_t *ai = json_object_get(c->proto, "accuracy_inputs");
    const char *got = json_is_string(ai) ? json_string_value(ai) : "off";
    if (!want || strcmp(want, got))
      FAIL(c->res, TSR__AR_COMMAND_LINE, "command_line", "%s--accuracy %.20s, the protocol records "
           "accuracy_inputs %.20s", given ? "" : "(default) ", want ? want : "?", got);
  }
  cl_real(c, o, "alpha", "alpha", 1.0, 1, 1);
  cl_real(c, o, "beta", "beta", 0.0, 1, 1);
  /* atol/rtol defaults changed between schemas: checked when given */
  cl_real(c, o, "atol", "atol", 0, 0, 0);
  cl_real(c, o, "rtol", "rtol", 0, 0, 0);
  cl_real(c, o, "unstable-threshold", "unstable_threshold", 0.10, 1, 0);
  int ta, tb;
  cl_get(o, "trans-a", &ta);
  cl_get(o, "trans-b", &tb);
  if (!tsr__audit_is(c->proto, "op_a", ta ? "T" : "N") || !tsr__audit_is(c->proto, "op_b", tb ? "T" : "N"))
    FAIL(c->res, TSR__AR_COMMAND_LINE, "command_line", "--trans-a/--trans-b give op(A)=%s op(B)=%s, the "
         "protocol records %.2s %.2s", ta ? "T" : "N", tb ? "T" : "N", S_(c->proto, "op_a") ? S_(c->proto, "op_a") : "?",
         S_(c->proto, "op_b") ? S_(c->proto, "op_b") : "?");
}

/* The oracle cache, the torch script and process, and --out. */
static void cl_check_files(tsr__audit_ctx *c, const cl_opts *o) {
  tsr__audit_result *res = c->res;
  int given;
  const char *cache = cl_get(o, "oracle-cache", &given);
  const json_t *pc = json_object_get(c->proto, "oracle_cache");
  if (given && cache && !strcmp(cache, "none") ? !json_is_null(pc)
      : given && cache ? !(json_is_string(pc) && !strcmp(json_string_value(pc), cache))
                       : !json_is_string(pc))
    FAIL(res, TSR__AR_COMMAND_LINE, "command_line", "--oracle-cache %.60s, the protocol records %.60s",
         given && cache ? cache : "(default: a cache directory)", json_is_string(pc) ? json_string_value(pc) : "null");
  const char *ts = cl_get(o, "torch-script", &given);
  const char *tsp = S_(json_object_get(json_object_get(c->doc, "artifacts"), "torch_script"), "path");
  if (given && ts && (!tsp || strcmp(ts, tsp)))
    FAIL(res, TSR__AR_COMMAND_LINE, "command_line", "--torch-script %.100s, artifacts.torch_script is %.100s",
         ts, tsp ? tsp : "(missing)");
  const char *tp = cl_get(o, "torch-process", &given);
  const json_t *ttp = json_object_get(c->doc, "torch_process");
  if (json_is_object(ttp)) {
    const char *mode = S_(ttp, "mode");
    int exec = given && tp && !strcmp(tp, "exec");
    /* fork falls back to exec with its reason recorded */
    int ok = mode && (exec ? !strcmp(mode, "exec")
                           : !strcmp(mode, "fork") || (!strcmp(mode, "exec") && S_(ttp, "fallback_reason")));
    if (!ok)
      FAIL(res, TSR__AR_COMMAND_LINE, "torch_process.mode", "'%.10s', the command line asks for %s",
           mode ? mode : "(missing)", exec ? "exec" : "fork");
  }
  const char *out = cl_get(o, "out", &given);
  if (given && out) snprintf(c->out_dir, sizeof c->out_dir, "%s", out);
}

json_t *tsr__audit_command_shapes(const json_t *cl) {
  size_t verb = 0;
  for (size_t i = 0; i < json_array_size(cl) && i < 3 && !verb; i++) {
    const char *t = json_string_value(json_array_get(cl, i));
    if (t && !strcmp(t, "bench")) verb = i + 1;
  }
  if (!verb) return NULL;
  cl_opts o;
  cl_parse(cl, verb, &o);
  int given, pgiven;
  const char *shapes = cl_get(&o, "shapes", &given);
  const char *preset = cl_get(&o, "preset", &pgiven);
  json_t *out = json_array(), *p = NULL;
  char buf[128];
  if (given && shapes) {
    for (int i = 0; i < split_count(shapes); i++)
      if (!split_item(shapes, i, buf, sizeof buf)) json_array_append_new(out, json_string(buf));
  } else if (pgiven && preset && (p = preset_shapes(preset))) {
    json_array_extend(out, p);
    json_decref(p);
  } else {
    json_decref(out);
    return NULL;
  }
  return out;
}

void tsr__audit_check_command_line(tsr__audit_ctx *c) {
  const json_t *cl = json_object_get(c->doc, "command_line");
  size_t verb = 0;
  for (size_t i = 0; i < json_array_size(cl) && i < 3 && !verb; i++)
    if (!strcmp(json_string_value(json_array_get(cl, i)) ? json_string_value(json_array_get(cl, i)) : "", "bench"))
      verb = i + 1;
  if (!verb) {
    FAIL(c->res, TSR__AR_COMMAND_LINE, "command_line", "is not a `tessera bench` command line");
    return;
  }
  cl_opts o;
  cl_parse(cl, verb, &o);
  int quick = 0;
  cl_check_shapes(c, &o, &quick);
  cl_check_routes(c, &o);
  cl_check_parameters(c, &o, quick);
  cl_check_files(c, &o);
}

/* ---- one row ---------------------------------------------------------------- */
static int num(const json_t *o, const char *key, double *v) {
  return tsr__audit_num(json_object_get(o, key), v);
}

/* Fixed-format facts of a row: its argv against the route, shape and protocol. */
static void check_argv(tsr__audit_ctx *c, const json_t *row, const char *where, const char *route,
                       const char *shape) {
  tsr__audit_result *res = c->res;
  const json_t *argv = json_object_get(row, "argv");
  const char *verb = json_string_value(json_array_get(argv, 1));
  if (!verb || strcmp(verb, "bench-run")) {
    FAIL(res, TSR__AR_ROW_ARGV, where, "argv is not a `tessera bench-run` command line");
    return;
  }
  cl_opts o;
  cl_parse(argv, 2, &o);
  int six = tsr__audit_shape_index(c, shape);
  const tsr__audit_shape *sh = &c->shapes[six >= 0 ? six : 0]; /* the row's (indexed by label) */
  static const char *const known[] = {"route", "shape", "batch", "trans-a", "trans-b", "alpha",
                                      "beta", "inputs", "precision", "accuracy", "seed", "samples",
                                      "sample-ms", "warmup-ms", "threads", "atol", "rtol",
                                      "oracle-cache", "work-dir", "torch-script", "torch-zygote",
                                      "result-fd"};
  for (int i = 0; i < o.n; i++) {
    int k = 0;
    for (size_t j = 0; j < sizeof known / sizeof *known && !k; j++)
      k = strlen(known[j]) == o.nlen[i] && !strncmp(known[j], o.name[i], o.nlen[i]);
    if (!k)
      FAIL(res, TSR__AR_ROW_ARGV, where, "argv has --%.*s, which the bench does not pass",
           (int)(o.nlen[i] < 40 ? o.nlen[i] : 40), o.name[i]);
  }
  struct {
    const char *opt, *want;
  } eq[24];
  int n = 0;
  json_int_t v;
  eq[n].opt = "route", eq[n++].want = route;
  eq[n].opt = "shape", eq[n++].want = shape;
  char b_batch[32], b_seed[32], b_samples[32], b_sms[32], b_wms[32], b_thr[32];
#define INTOPT(o_, key_, buf_)                                                                    \
  do {                                                                                           \
    if (tsr__audit_int(c->proto, key_, &v)) snprintf(buf_, sizeof buf_, "%lld", (long long)v);   \
    else snprintf(buf_, sizeof buf_, "?");                                                       \
    eq[n].opt = o_, eq[n++].want = buf_;                                                         \
  } while (0)
  snprintf(b_batch, sizeof b_batch, "%lld", (long long)sh->batch); /* the shape's */
  eq[n].opt = "batch", eq[n++].want = b_batch;
  INTOPT("seed", "seed", b_seed);
  INTOPT("samples", "samples", b_samples);
  INTOPT("sample-ms", "sample_ms", b_sms);
  INTOPT("warmup-ms", "warmup_ms", b_wms);
  INTOPT("threads", "threads", b_thr);
#undef INTOPT
  eq[n].opt = "inputs", eq[n++].want = S_(c->proto, "inputs");
  const json_t *pc = json_object_get(c->proto, "oracle_cache");
  eq[n].opt = "oracle-cache", eq[n++].want = json_is_string(pc) ? json_string_value(pc) : "none";
  eq[n].opt = "result-fd", eq[n++].want = "3";
  if (c->v2) {
    eq[n].opt = "precision", eq[n++].want = S_(c->proto, "precision");
    eq[n].opt = "accuracy", eq[n++].want = c->accuracy_inputs ? c->accuracy_inputs : "off";
  }
  const char *tsp = S_(json_object_get(json_object_get(c->doc, "artifacts"), "torch_script"), "path");
  if (tsp) eq[n].opt = "torch-script", eq[n++].want = tsp;
  const json_t *tp = json_object_get(c->doc, "torch_process");
  int zygote = tsr__audit_route_is_torch(route) && tsr__audit_is(tp, "mode", "fork") && S_(tp, "socket");
  if (zygote) eq[n].opt = "torch-zygote", eq[n++].want = S_(tp, "socket");
  char wd[4200];
  if (c->out_dir[0]) {
    snprintf(wd, sizeof wd, "%s/tmp", c->out_dir);
    eq[n].opt = "work-dir", eq[n++].want = wd;
  } else if (c->work_dir) {
    eq[n].opt = "work-dir", eq[n++].want = c->work_dir;
  }
  for (int i = 0; i < n; i++) {
    int given;
    const char *got = cl_get(&o, eq[i].opt, &given);
    if (!eq[i].want) continue;
    if (!given || !got || strcmp(got, eq[i].want))
      FAIL(res, TSR__AR_ROW_ARGV, where, "argv --%s %.60s, the %s gives %.60s", eq[i].opt,
           given && got ? got : "(absent)",
           !strcmp(eq[i].opt, "route") || !strcmp(eq[i].opt, "shape") ? "row" : "protocol", eq[i].want);
  }
  int given;
  if (!c->work_dir) c->work_dir = cl_get(&o, "work-dir", &given);
  if (!zygote && (cl_get(&o, "torch-zygote", &given), given))
    FAIL(res, TSR__AR_ROW_ARGV, where, "argv names a torch zygote, but this row does not fork from one");
  /* Reals as the bench prints them: alpha/beta %.9g of the float, atol/rtol %.17g. */
  static const char *const reals[] = {"alpha", "beta", "atol", "rtol"};
  for (int i = 0; i < 4; i++) {
    const char *got = cl_get(&o, reals[i], &given);
    double p = NAN, g = NAN;
    num(c->proto, reals[i], &p);
    char *end = NULL;
    if (got) g = strtod(got, &end);
    int same = got && end && !*end && (i < 2 ? (float)g == (float)p : g == p);
    if (!same)
      FAIL(res, TSR__AR_ROW_ARGV, where, "argv --%s %.30s, the protocol's %s is %.17g", reals[i],
           given && got ? got : "(absent)", reals[i], p);
  }
  int ta, tb;
  cl_get(&o, "trans-a", &ta);
  cl_get(&o, "trans-b", &tb);
  if (ta != (sh->op_a == 'T') || tb != (sh->op_b == 'T'))
    FAIL(res, TSR__AR_ROW_ARGV, where, "argv --trans-a/--trans-b disagree with the shape's op_a/op_b (%c%c)",
         sh->op_a, sh->op_b);
}

/* logs/NNNN-rRR-SHAPE-ROUTE.log of a row. */
static void log_name(const json_t *row, char *buf, size_t cap) {
  json_int_t seq = -1, round = -1;
  tsr__audit_int(row, "seq", &seq);
  tsr__audit_int(row, "round", &round);
  snprintf(buf, cap, "logs/%04lld-r%02lld-%s-%s.log", (long long)seq, (long long)round,
           S_(row, "shape") ? S_(row, "shape") : "", S_(row, "route") ? S_(row, "route") : "");
}

static void check_log_fields(tsr__audit_ctx *c, const json_t *row, const char *where, int ok_row) {
  const json_t *log = json_object_get(row, "log"), *tail = json_object_get(row, "stderr_tail");
  char want[400];
  log_name(row, want, sizeof want);
  if (!json_is_null(log) && (!json_is_string(log) || strcmp(json_string_value(log), want)))
    FAIL(c->res, TSR__AR_LOG, where, "log '%.100s', the row's log is %s", json_is_string(log) ? json_string_value(log) : "?", want);
  if (ok_row && tail)
    FAIL(c->res, TSR__AR_LOG, where, "an ok row carries the stderr tail of a failed one");
  if (!ok_row && !json_is_string(tail))
    FAIL(c->res, TSR__AR_LOG, where, "a failed row without its stderr tail");
}

/* Receipt figures: a receipt's own logic and its tolerance against the
 * protocol. contract: the row's mode for contract receipts (NULL: an
 * atol/rtol receipt); ref_strict: the reference error of the inputs. */
static void check_receipt(tsr__audit_ctx *c, const char *where, const char *label, const json_t *r,
                          const char *prec, int contract, double ref_strict) {
  tsr__audit_result *res = c->res;
  json_int_t checked = -1, expected = -1, failed = -1, first = -2;
  double ea = NAN, er = NAN, ef = NAN, atol = NAN, rtol = NAN;
  int have = tsr__audit_int(r, "checked", &checked) & tsr__audit_int(r, "expected", &expected) &
             tsr__audit_int(r, "failed", &failed) & tsr__audit_int(r, "first_fail", &first) &
             num(r, "max_abs_err", &ea) & num(r, "max_rel_err", &er) & num(r, "rel_fro_err", &ef);
  num(r, "atol", &atol);
  num(r, "rtol", &rtol);
  int passed = json_is_true(json_object_get(r, "passed"));
  if (!have) {
    FAIL(res, TSR__AR_RECEIPT_LOGIC, where, "%s: needs checked, expected, failed, first_fail, "
         "max_abs_err, max_rel_err, rel_fro_err", label);
    return;
  }
  /* logic */
  if (failed < 0 || failed > checked)
    FAIL(res, TSR__AR_RECEIPT_LOGIC, where, "%s: %lld failed of %lld checked", label, (long long)failed,
         (long long)checked);
  if ((failed == 0) != (first == -1) || (failed > 0 && (first < 0 || first >= checked)))
    FAIL(res, TSR__AR_RECEIPT_LOGIC, where, "%s: first_fail %lld with %lld failed elements (-1 exactly "
         "when none failed)", label, (long long)first, (long long)failed);
  if (isnan(ea) || isnan(er) || isnan(ef) || ea < 0 || er < 0 || ef < 0)
    FAIL(res, TSR__AR_RECEIPT_LOGIC, where, "%s: errors %g, %g, %g%s: an error is a non-negative "
         "number (never NaN)", label, ea, er, ef, passed ? ", marked passed" : "");
  else if (ea == 0 && (er != 0 || ef != 0))
    FAIL(res, TSR__AR_RECEIPT_LOGIC, where, "%s: max abs error 0 but max rel %g, Frobenius %g", label, er, ef);
  else if (ea > 0 && er == 0)
    FAIL(res, TSR__AR_RECEIPT_LOGIC, where, "%s: max abs error %g but max rel error 0", label, ea);
  if (passed && (failed != 0 || checked != expected))
    FAIL(res, TSR__AR_RECEIPT_LOGIC, where, "%s: passed with %lld failed of %lld checked (%lld expected)",
         label, (long long)failed, (long long)checked, (long long)expected);
  if (!contract) {
    if (passed != (failed == 0 && checked == expected))
      FAIL(res, TSR__AR_RECEIPT_LOGIC, where, "%s: %s with %lld failed of %lld", label,
           passed ? "passed" : "not passed", (long long)failed, (long long)checked);
    if (atol == 0 && rtol == 0 && failed == 0 && ea != 0 && !isnan(ea))
      FAIL(res, TSR__AR_RECEIPT_LOGIC, where, "%s: exact check (atol = rtol = 0) with no failed "
           "element, but max abs error %g", label, ea);
    /* tolerance: the protocol's */
    double pa = NAN, pr = NAN;
    num(c->proto, "atol", &pa);
    num(c->proto, "rtol", &pr);
    if (atol != pa || rtol != pr)
      FAIL(res, TSR__AR_RECEIPT_TOLERANCE, where, "%s: atol %g, rtol %g; the protocol's are %g, %g",
           label, atol, rtol, pa, pr);
    return;
  }
  /* a contract receipt (docs/accuracy.md) */
  if (!isnan(atol) || !isnan(rtol))
    FAIL(res, TSR__AR_RECEIPT_TOLERANCE, where, "%s: atol %g, rtol %g on a contract receipt (none apply)",
         label, atol, rtol);
  const char *ct = S_(r, "contract");
  if (!ct || (prec && strcmp(ct, prec)))
    FAIL(res, TSR__AR_RECEIPT_TOLERANCE, where, "%s: contract %.20s, but the row ran %.20s", label,
         ct ? ct : "(missing)", prec ? prec : "?");
  double strict = NAN, limit = NAN, worst = NAN;
  json_int_t bf = -1, cf = -1;
  num(r, "strict_rel_fro", &strict);
  num(r, "worst_bound_ratio", &worst);
  tsr__audit_int(r, "bound_failed", &bf);
  tsr__audit_int(r, "class_failed", &cf);
  const json_t *lim = json_object_get(r, "fro_limit");
  if (!json_is_null(lim)) tsr__audit_num(lim, &limit);
  if (!(strict == ref_strict || (isnan(strict) && isnan(ref_strict))))
    FAIL(res, TSR__AR_RECEIPT_TOLERANCE, where, "%s: strict reference error %.17g, its oracle records "
         "%.17g", label, strict, ref_strict);
  double want_limit = NAN;
  if (checked >= 1024 && ct) want_limit = !strcmp(ct, "tf32") ? 0x1p-10 : 1.25 * strict;
  if (isnan(want_limit) != isnan(limit) ||
      (!isnan(limit) && !(fabs(limit - want_limit) <= TSR_AUDIT_RTOL * fabs(want_limit))))
    FAIL(res, TSR__AR_RECEIPT_TOLERANCE, where, "%s: Frobenius limit %g, the %.20s contract gives %g",
         label, limit, ct ? ct : "?", want_limit);
  if (bf < 0 || cf < 0 || bf > failed || cf > failed - bf)
    FAIL(res, TSR__AR_RECEIPT_LOGIC, where, "%s: %lld over the bound + %lld of the wrong class > %lld failed",
         label, (long long)bf, (long long)cf, (long long)failed);
  if ((bf > 0) != (worst > 1.0))
    FAIL(res, TSR__AR_RECEIPT_LOGIC, where, "%s: %lld over the bound, worst bound ratio %g", label,
         (long long)bf, worst);
  int verdict = failed == 0 && checked == expected && (isnan(want_limit) || ef <= want_limit);
  if (verdict != passed)
    FAIL(res, TSR__AR_RECEIPT_LOGIC, where, "%s: %s, its figures say %s (Frobenius %g, limit %g)", label,
         passed ? "passed" : "failed", verdict ? "passed" : "failed", ef, want_limit);
}

/* The expected oracle key (src/measure/oracle_cache.c's format). */
static void oracle_key(const tsr__audit_ctx *c, const tsr__audit_shape *sh, const char *inputs,
                       json_int_t seed, char *buf, size_t cap) {
  double al = NAN, be = NAN;
  num(c->proto, "alpha", &al);
  num(c->proto, "beta", &be);
  snprintf(buf, cap, "gen=%d m=%lld n=%lld k=%lld batch=%lld ops=%c%c alpha=%a beta=%a inputs=%s seed=%" PRIu64,
           c->v2 ? 2 : 1, (long long)sh->m, (long long)sh->n, (long long)sh->k, (long long)sh->batch,
           sh->op_a == 'T' ? 'T' : 'N', sh->op_b == 'T' ? 'T' : 'N', (double)(float)al,
           (double)(float)be, inputs ? inputs : "?", (uint64_t)seed);
}

static void check_oracle_record(tsr__audit_ctx *c, const char *where, const char *label,
                                const json_t *o, const char *want_key) {
  const char *key = S_(o, "key"), *sha = S_(o, "key_sha256"), *src = S_(o, "source");
  char want_sha[65] = "";
  tsr__sha256_hex(want_key, strlen(want_key), want_sha);
  if (!key || strcmp(key, want_key))
    FAIL(c->res, TSR__AR_ROW_ORACLE, where, "%s key '%.150s', the row's problem gives '%.150s'", label,
         key ? key : "(missing)", want_key);
  if (!sha || strcmp(sha, want_sha))
    FAIL(c->res, TSR__AR_ROW_ORACLE, where, "%s key_sha256 %.16s… is not the SHA-256 of its key (%.16s…)",
         label, sha ? sha : "(missing)", want_sha);
  int cache = json_is_string(json_object_get(c->proto, "oracle_cache"));
  int ok_src = src && (!strcmp(src, "gpu") || !strcmp(src, "cpu") ||
                       (cache && (!strcmp(src, "cache:gpu") || !strcmp(src, "cache:cpu"))));
  if (!ok_src)
    FAIL(c->res, TSR__AR_ROW_ORACLE, where, "%s source '%.20s' (gpu, cpu%s)", label, src ? src : "(missing)",
         cache ? ", cache:gpu, cache:cpu" : "; no cache in this run");
}

/* Plan text "…threads=N…": N, or -1. */
static long long plan_threads(const char *plan) {
  const char *t = plan ? strstr(plan, "threads=") : NULL;
  return t ? strtoll(t + 8, NULL, 10) : -1;
}

/* Times: the child's own clock inside the parent's; for a valid row the
 * calibration rule and the samples within the child's run time. */
static void check_row_times(tsr__audit_ctx *c, const json_t *row, const json_t *result,
                            const char *where, int ok_row) {
  tsr__audit_result *res = c->res;
  json_int_t child = -1, wall = -1;
  int have_child = tsr__audit_int(result, "child_ns", &child);
  tsr__audit_int(json_object_get(row, "exit"), "wall_ns", &wall);
  if (ok_row && (!have_child || child <= 0))
    FAIL(res, TSR__AR_CHILD_TIME, where, "child_ns missing: the child's run time is not recorded");
  else if (have_child && wall >= 0 && child > wall)
    FAIL(res, TSR__AR_CHILD_TIME, where, "child ran %lld ns inside a process that lived %lld ns",
         (long long)child, (long long)wall);
  if (!ok_row) return;
  const json_t *cal = json_object_get(result, "calibration");
  const json_t *metrics = json_object_get(result, "metrics");
  json_int_t wc = -1, wb = -1, wns = -1, est = -1, cpb = -1, sms = 0, wms = 0;
  int have = tsr__audit_int(cal, "warmup_calls", &wc) & tsr__audit_int(cal, "warmup_batches", &wb) &
             tsr__audit_int(cal, "warmup_ns", &wns) & tsr__audit_int(cal, "est_call_ns", &est) &
             tsr__audit_int(cal, "calls_per_batch", &cpb);
  tsr__audit_int(c->proto, "sample_ms", &sms);
  tsr__audit_int(c->proto, "warmup_ms", &wms);
  /* out-of-range values are the protocol's finding; keep the products defined */
  sms = sms < 0 ? 0 : sms > INT32_MAX ? INT32_MAX : sms;
  wms = wms < 0 ? 0 : wms > INT32_MAX ? INT32_MAX : wms;
  if (!have) {
    FAIL(res, TSR__AR_CALIBRATION, where, "calibration record missing or incomplete");
  } else {
    /* n = ceil(sample_ms / t) in [1, 2^24] for the last warm-up batch's t per call */
    long long win = sms * 1000000LL;
    long long want = est <= 0 ? -1 : est >= win ? 1 : (win + est - 1) / est;
    if (want > (1 << 24)) want = 1 << 24;
    if (est < 1 || cpb != want)
      FAIL(res, TSR__AR_CALIBRATION, where, "calls_per_batch %lld, but %lld ns per call fills the "
           "%lld ms window with %lld calls", (long long)cpb, (long long)est, (long long)sms, want);
    if (wc < 1 || wb < 1 || wc < wb || wns < wms * 1000000LL)
      FAIL(res, TSR__AR_CALIBRATION, where, "warm-up of %lld calls in %lld batches over %lld ns "
           "(at least %lld ms)", (long long)wc, (long long)wb, (long long)wns, (long long)wms);
  }
  double sum = 0; /* a double: a document's values may be anything up to INT64_MAX */
  const char *key;
  const json_t *arr;
  json_object_foreach((json_t *)metrics, key, arr) {
    int batch_metric = strstr(key, "_batch") != NULL;
    for (size_t i = 0; i < json_array_size(arr); i++) {
      const json_t *smp = json_array_get(arr, i);
      json_int_t ns = 0, calls = 0;
      if (tsr__audit_int(smp, "ns", &ns) && ns > 0) sum += (double)ns;
      if (batch_metric && have && tsr__audit_int(smp, "calls", &calls) && calls > 0 && calls != cpb)
        FAIL(res, TSR__AR_CALIBRATION, where, "%s sample %zu: %lld calls, the calibration gives %lld",
             key, i, (long long)calls, (long long)cpb);
    }
  }
  if (have_child && sum + (double)(have && wns > 0 ? wns : 0) > (double)child)
    FAIL(res, TSR__AR_CHILD_TIME, where, "samples (%.0f ns) and warm-up (%lld ns) exceed the "
         "child's own run time (%lld ns)", sum, (long long)(have ? wns : 0), (long long)child);
}

/* Device and versions: what the route's probe saw, in every row. */
static void check_row_versions(tsr__audit_ctx *c, const char *route, const json_t *result,
                               const char *where, int ok_row) {
  const json_t *probe = NULL, *jr = json_object_get(c->doc, "routes");
  for (size_t i = 0; i < json_array_size(jr) && !probe; i++)
    if (tsr__audit_is(json_array_get(jr, i), "name", route)) probe = json_array_get(jr, i);
  const json_t *pv = json_object_get(probe, "versions"), *rv = json_object_get(result, "versions");
  const char *vk;
  const json_t *vv;
  json_object_foreach((json_t *)pv, vk, vv) {
    const json_t *mine = json_object_get(rv, vk);
    if ((mine || ok_row) && !json_equal((json_t *)vv, (json_t *)mine)) {
      char *a = json_dumps(vv, JSON_ENCODE_ANY | JSON_COMPACT), *b = mine ? json_dumps(mine, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
      FAIL(c->res, TSR__AR_ROW_DEVICE, where, "versions.%.40s %.80s, the route's probe saw %.80s", vk,
           b ? b : "(missing)", a ? a : "?");
      free(a);
      free(b);
    }
  }
}

/* Threads: requested as the protocol says; a CPU plan within them. */
static void check_row_threads(tsr__audit_ctx *c, int ri, const json_t *result, const char *where) {
  tsr__audit_result *res = c->res;
  const char *route = c->base[ri];
  json_int_t protothreads = -1;
  tsr__audit_int(c->proto, "threads", &protothreads);
  json_int_t treq = -1;
  if (!tsr__audit_int(result, "threads_requested", &treq) || treq != protothreads)
    FAIL(res, TSR__AR_ROW_THREADS, where, "threads_requested %lld, the protocol's threads %lld",
         (long long)treq, (long long)protothreads);
  const json_t *pi = json_object_get(result, "plan_info");
  const char *plan = S_(pi, "plan");
  if (c->base_gpu[ri] || !plan) return;
  json_int_t pt = -1;
  tsr__audit_int(pi, "threads", &pt);
  long long txt = plan_threads(plan);
  if (pt < 1 || pt > protothreads)
    FAIL(res, TSR__AR_ROW_THREADS, where, "plan_info.threads %lld, outside 1..%lld (the protocol's)",
         (long long)pt, (long long)protothreads);
  if (tsr__audit_route_is_cpu_backend(route) && txt != protothreads)
    FAIL(res, TSR__AR_ROW_THREADS, where, "plan threads=%lld, the protocol's threads %lld", txt,
         (long long)protothreads);
  json_int_t ot = -1;
  if (tsr__audit_int(json_object_get(result, "versions"), "openblas_threads", &ot) &&
      (ot != txt || ot > protothreads))
    FAIL(res, TSR__AR_ROW_THREADS, where, "openblas_threads %lld, plan threads=%lld, protocol %lld",
         (long long)ot, txt, (long long)protothreads);
}

/* Oracles: the timing inputs' and the accuracy receipt's keys. */
static void check_row_oracles(tsr__audit_ctx *c, const tsr__audit_shape *sh, const json_t *result,
                              const char *where, int ok_row) {
  char key[400];
  const json_t *orc = json_object_get(result, "oracle");
  json_int_t seed = -1;
  tsr__audit_int(c->proto, "seed", &seed);
  if (orc || ok_row) {
    oracle_key(c, sh, S_(c->proto, "inputs"), seed, key, sizeof key);
    check_oracle_record(c, where, "oracle", orc, key);
  }
  const json_t *acc = json_object_get(result, "accuracy");
  if (json_is_object(acc) && c->accuracy_inputs) {
    json_int_t aseed = -1;
    tsr__audit_int(c->proto, "accuracy_seed", &aseed);
    oracle_key(c, sh, c->accuracy_inputs, aseed, key, sizeof key);
    check_oracle_record(c, where, "accuracy.oracle", json_object_get(acc, "oracle"), key);
  }
}

/* Receipts: each against the protocol and its own figures; their output
 * hashes, the same bits twice for a deterministic route. */
static void check_row_receipts(tsr__audit_ctx *c, const char *route, const json_t *result,
                               const char *where) {
  tsr__audit_result *res = c->res;
  const json_t *orc = json_object_get(result, "oracle"), *acc = json_object_get(result, "accuracy");
  const char *prec = S_(result, "precision");
  int contract = c->v2 && !tsr__audit_is(c->proto, "inputs", "dyadic");
  double ostrict = NAN;
  num(orc, "strict_rel_fro", &ostrict);
  const json_t *val = json_object_get(result, "validation");
  const char *hash[2] = {NULL, NULL};
  for (size_t i = 0; i < json_array_size(val); i++) {
    const json_t *r = json_array_get(val, i);
    char label[48];
    snprintf(label, sizeof label, "validation[%zu]", i);
    check_receipt(c, where, label, r, prec, contract, ostrict);
    const char *h = S_(r, "output_sha256");
    if (c->v3) {
      if (!tsr__audit_is_hex64(h))
        FAIL(res, TSR__AR_OUTPUT_HASH, where, "%s: output_sha256 %s", label, h ? "malformed" : "missing");
      else res->output_hashes++;
    }
    if (i < 2) hash[i] = h;
  }
  if (json_is_object(acc)) {
    double astrict = NAN;
    num(json_object_get(acc, "oracle"), "strict_rel_fro", &astrict);
    check_receipt(c, where, "accuracy", acc, prec, 1, astrict);
    const char *h = S_(acc, "output_sha256");
    if (c->v3) {
      if (!tsr__audit_is_hex64(h))
        FAIL(res, TSR__AR_OUTPUT_HASH, where, "accuracy: output_sha256 %s", h ? "malformed" : "missing");
      else res->output_hashes++;
    }
  }
  if (c->v3 && tsr__audit_route_deterministic(route) && tsr__audit_is_hex64(hash[0]) &&
      tsr__audit_is_hex64(hash[1]) && strcmp(hash[0], hash[1]))
    FAIL(res, TSR__AR_OUTPUT_HASH, where, "before_timing output %.16s… and after_timing output %.16s… "
         "differ: the same deterministic kernel on the same inputs gave other bits", hash[0], hash[1]);
}

void tsr__audit_check_row_evidence(tsr__audit_ctx *c, const json_t *row, const char *where, int si,
                                   int ri) {
  const char *route = c->base[ri];
  const tsr__audit_shape *sh = &c->shapes[si];
  const char *status = S_(row, "status");
  int ok_row = status && !strcmp(status, "ok");
  check_argv(c, row, where, route, sh->label);
  check_log_fields(c, row, where, ok_row);
  const json_t *result = json_object_get(row, "result");
  if (!json_is_object(result)) return;
  check_row_times(c, row, result, where, ok_row);
  check_row_versions(c, route, result, where, ok_row);
  check_row_threads(c, ri, result, where);
  check_row_oracles(c, sh, result, where, ok_row);
  check_row_receipts(c, route, result, where);
}

/* ---- over the run ------------------------------------------------------------- */
static int parse_utc(const char *s, time_t *out) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  const char *e = s ? strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
  if (!e || *e) return -1;
  *out = timegm(&tm);
  return 0;
}

/* The bench's stderr tail: the last max bytes, non-ASCII and control
 * characters but newline and tab as '?'. */
static char *log_tail(const char *text, size_t len, size_t max) {
  size_t from = len > max ? len - max : 0, n = len - from;
  char *t = malloc(n + 1);
  if (!t) return NULL;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)text[from + i];
    t[i] = (ch >= 0x80 || (ch < 0x20 && ch != '\n' && ch != '\t')) ? '?' : (char)ch;
  }
  t[n] = '\0';
  return t;
}

static void check_logs(tsr__audit_ctx *c) {
  tsr__audit_result *res = c->res;
  const json_t *rows = json_object_get(c->doc, "rows");
  const json_t *logs = c->in->logs;
  if (!c->in->dir) return; /* from memory: no directory to compare with */
  json_t *named = json_object();
  if (!named) return;
  size_t recorded = 0;
  for (size_t i = 0; i < json_array_size(rows); i++) {
    const json_t *row = json_array_get(rows, i);
    const char *log = S_(row, "log");
    if (!log || strncmp(log, "logs/", 5)) continue;
    recorded++;
    json_object_set_new(named, log + 5, json_integer((json_int_t)i));
    char where[192];
    tsr__audit_row_where(row, i, where, sizeof where);
    const json_t *text = logs ? json_object_get(logs, log + 5) : NULL;
    if (!text) {
      FAIL(res, TSR__AR_LOG, where, "records %.200s, which %s", log, logs ? "is not in logs/" : "is absent (DIR has no logs/)");
      continue;
    }
    if (json_is_null(text)) {
      FAIL(res, TSR__AR_LOG, where, "%.200s is over %zu bytes: not read", log, TSR_AUDIT_MAX_LOG_BYTES);
      continue;
    }
    res->logs_checked++;
    const char *t = json_string_value(text);
    size_t len = json_string_length(text);
    int ok_row = tsr__audit_is(row, "status", "ok");
    if (ok_row) {
      /* the child's own failure lines (src/bench/runner.c) */
      static const char *const marks[] = {"bench-run: VALIDATION FAILED", "bench-run: ACCURACY FAILED",
                                          "bench-run: TSR_BENCH_TEST_CRASH", "bench-run: TSR_BENCH_TEST_HANG"};
      for (size_t k = 0; k < sizeof marks / sizeof *marks; k++)
        if (strstr(t, marks[k])) {
          FAIL(res, TSR__AR_LOG, where, "status ok, but its log %.120s says '%s'", log, marks[k]);
          break;
        }
    } else {
      char *tail = log_tail(t, len, 2000);
      const char *st = S_(row, "stderr_tail");
      if (tail && st && strcmp(tail, st))
        FAIL(res, TSR__AR_LOG, where, "stderr_tail differs from the end of %.120s", log);
      free(tail);
    }
  }
  /* Every row log in logs/ belongs to the row that records it. */
  const char *name;
  const json_t *v;
  json_object_foreach((json_t *)logs, name, v) {
    unsigned seq;
    int used = 0;
    if (sscanf(name, "%u-r%*u-%n", &seq, &used) != 1 || !used) continue; /* probe-, oracle-, torch-zygote */
    if (json_object_get(named, name)) continue;
    char where[300];
    snprintf(where, sizeof where, "logs/%.200s", name);
    FAIL(res, TSR__AR_LOG, where, "a row log that no row records (row seq %u says log %s)", seq,
         seq < json_array_size(rows) && S_(json_array_get(rows, seq), "log") ? S_(json_array_get(rows, seq), "log") : "null");
  }
  json_decref(named);
  if (!logs && !recorded)
    tsr__audit_note(res, "DIR has no logs/ and no row records a log: there are no row logs to cross-check");
}

static void check_oracle_list(tsr__audit_ctx *c) {
  const json_t *pre = json_object_get(c->doc, "oracle_precompute");
  int cache = json_is_string(json_object_get(c->proto, "oracle_cache"));
  if (!json_is_array(pre)) {
    FAIL(c->res, TSR__AR_ORACLE_LIST, "oracle_precompute", "missing");
    return;
  }
  if (!cache) {
    if (json_array_size(pre))
      FAIL(c->res, TSR__AR_ORACLE_LIST, "oracle_precompute", "%zu entries, but the run has no oracle cache",
           json_array_size(pre));
    return;
  }
  if (json_array_size(pre) != (size_t)c->S)
    FAIL(c->res, TSR__AR_ORACLE_LIST, "oracle_precompute", "%zu entries for the protocol's %d shapes "
         "(one per shape, in order)", json_array_size(pre), c->S);
  json_int_t seed = -1, aseed = -1;
  tsr__audit_int(c->proto, "seed", &seed);
  tsr__audit_int(c->proto, "accuracy_seed", &aseed);
  for (size_t j = 0; j < json_array_size(pre); j++) {
    const json_t *e = json_array_get(pre, j), *r = json_object_get(e, "result");
    char where[96];
    snprintf(where, sizeof where, "oracle_precompute[%zu]", j);
    const char *shape = S_(e, "shape");
    if (j >= (size_t)c->S || !shape || strcmp(shape, c->shapes[j].label)) {
      FAIL(c->res, TSR__AR_ORACLE_LIST, where, "shape '%.64s', the protocol's shape %zu is %.64s",
           shape ? shape : "(missing)", j, j < (size_t)c->S ? c->shapes[j].label : "(none)");
      continue;
    }
    if (!tsr__audit_is(r, "status", "ok")) continue; /* a failed precompute: each child computed its own */
    char key[400], sha[65];
    oracle_key(c, &c->shapes[j], S_(c->proto, "inputs"), seed, key, sizeof key);
    tsr__sha256_hex(key, strlen(key), sha);
    if (!tsr__audit_is(r, "key_sha256", sha))
      FAIL(c->res, TSR__AR_ORACLE_LIST, where, "key_sha256 is not the SHA-256 of '%.150s'", key);
    const json_t *ra = json_object_get(r, "accuracy");
    if (c->accuracy_inputs && tsr__audit_is(ra, "status", "ok")) {
      oracle_key(c, &c->shapes[j], c->accuracy_inputs, aseed, key, sizeof key);
      tsr__sha256_hex(key, strlen(key), sha);
      if (!tsr__audit_is(ra, "key_sha256", sha))
        FAIL(c->res, TSR__AR_ORACLE_LIST, where, "accuracy key_sha256 is not the SHA-256 of '%.150s'", key);
    }
  }
}

void tsr__audit_check_run_evidence(tsr__audit_ctx *c) {
  tsr__audit_result *res = c->res;
  const json_t *rows = json_object_get(c->doc, "rows");
  size_t nrows = json_array_size(rows);

  /* The sequence: row i is execution i; a gap is an execution not shown. */
  size_t gaps = 0;
  for (size_t i = 0; i < nrows; i++) {
    json_int_t seq = -1;
    const json_t *row = json_array_get(rows, i);
    if (!tsr__audit_int(row, "seq", &seq) || seq == (json_int_t)i) continue;
    char where[192];
    tsr__audit_row_where(row, i, where, sizeof where);
    if (gaps++ < 20)
      FAIL(res, TSR__AR_SEQUENCE, where, "is row %zu of the file: seq runs 0, 1, 2, ... (%s)", i,
           seq > (json_int_t)i ? "executions are missing before it: a hidden re-run or dropped row"
                               : "a repeated or reordered execution");
    else
      res->total++, res->counts[TSR__AR_SEQUENCE]++;
  }

  /* Timestamps: whole seconds; everything recorded fits between them. */
  time_t t0 = 0, t1 = 0;
  const char *st = S_(c->doc, "started_utc"), *fi = S_(c->doc, "finished_utc");
  int h0 = st && !parse_utc(st, &t0), h1 = fi && !parse_utc(fi, &t1);
  if (st && !h0) FAIL(res, TSR__AR_TIMESTAMPS, "started_utc", "'%.40s' is not YYYY-MM-DDTHH:MM:SSZ", st);
  if (fi && !h1) FAIL(res, TSR__AR_TIMESTAMPS, "finished_utc", "'%.40s' is not YYYY-MM-DDTHH:MM:SSZ", fi);
  /* doubles: exact below 2^53 ns (104 days), and a document's values may be anything */
  double rows_ns = 0, pre_ns = 0;
  for (size_t i = 0; i < nrows; i++) {
    json_int_t w = 0;
    if (tsr__audit_int(json_object_get(json_array_get(rows, i), "exit"), "wall_ns", &w) && w > 0)
      rows_ns += (double)w;
  }
  const json_t *pre = json_object_get(c->doc, "oracle_precompute");
  for (size_t j = 0; j < json_array_size(pre); j++) {
    json_int_t w = 0;
    if (tsr__audit_int(json_array_get(pre, j), "wall_ns", &w) && w > 0) pre_ns += (double)w;
  }
  json_int_t total = -1;
  int have_total = tsr__audit_int(json_object_get(c->doc, "summary"), "wall_ns", &total);
  if (h0 && h1) {
    /* both stamps are whole seconds, and summary.wall_ns stops just after
     * the finish stamp: two seconds of slack */
    double span = (difftime(t1, t0) + 2) * 1e9;
    double took = (have_total ? (double)total : rows_ns) + pre_ns;
    if (t1 < t0)
      FAIL(res, TSR__AR_TIMESTAMPS, "finished_utc", "%s is before started_utc %s", fi, st);
    else if (took > span)
      FAIL(res, TSR__AR_TIMESTAMPS, "finished_utc", "the run took at least %.3f s (rows%s and oracle "
           "precompute), but %s to %s spans under %.0f s", took * 1e-9,
           have_total ? " in summary.wall_ns" : "", st, fi, span * 1e-9);
  }
  if (have_total && rows_ns > (double)total)
    FAIL(res, TSR__AR_TIMESTAMPS, "summary.wall_ns", "%lld ns, but the rows' child processes alone "
         "ran %.0f ns one after the other", (long long)total, rows_ns);

  /* Plans and deterministic outputs across rounds. */
  for (int x = 0; x < c->R; x++)
    for (int s = 0; s < c->S; s++) {
      const char *plan0 = NULL, *src0 = NULL, *out0 = NULL, *acc0 = NULL;
      for (int r = 0; r < c->rounds; r++) {
        const json_t *row = c->slot[((size_t)r * c->S + s) * c->R + x];
        const json_t *result = json_object_get(row, "result"), *pi = json_object_get(result, "plan_info");
        const char *plan = S_(pi, "plan"), *src = S_(pi, "plan_source");
        if (!plan) continue;
        char where[192];
        tsr__audit_row_where(row, 0, where, sizeof where);
        if (!plan0) plan0 = plan, src0 = src;
        else if (strcmp(plan, plan0))
          FAIL(res, TSR__AR_ROW_PLAN, where, "plan '%.120s', another round of this shape ran '%.120s'",
               plan, plan0);
        else if ((src || src0) && (!src || !src0 || strcmp(src, src0)))
          FAIL(res, TSR__AR_ROW_PLAN, where, "plan source '%.80s', another round's is '%.80s'",
               src ? src : "(missing)", src0 ? src0 : "(missing)");
        if (!c->v3 || !tsr__audit_route_deterministic(c->base[x]) || !tsr__audit_is(row, "status", "ok") ||
            strcmp(plan, plan0))
          continue;
        const char *o = S_(json_array_get(json_object_get(result, "validation"), 0), "output_sha256");
        const char *a = S_(json_object_get(result, "accuracy"), "output_sha256");
        if (o && !out0) out0 = o;
        else if (o && strcmp(o, out0))
          FAIL(res, TSR__AR_OUTPUT_HASH, where, "output %.16s…, another round's with the same plan "
               "and inputs was %.16s…: a deterministic kernel gave other bits", o, out0);
        if (a && !acc0) acc0 = a;
        else if (a && strcmp(a, acc0))
          FAIL(res, TSR__AR_OUTPUT_HASH, where, "accuracy output %.16s…, another round's was %.16s…", a, acc0);
      }
    }
  check_logs(c);
  check_oracle_list(c);
}
