/* The audit of results.json: schema, protocol, routes, every row and
 * sample, receipts, instrumentation, artifacts and the order; then the
 * tables (tables.c) and the report (report_md.c) against the recomputation. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit_internal.h"
#include "core/hash.h"
#include "measure/zoo.h"
#include "tessera.h"
#include "sys/file.h"

/* ---- reasons and findings ------------------------------------------------ */
static const char *const reason_names[] = {
#define TSR__AR_NAME(id, name, text) name,
    TSR__AUDIT_REASONS(TSR__AR_NAME)
#undef TSR__AR_NAME
};
static const char *const reason_texts[] = {
#define TSR__AR_TEXT(id, name, text) text,
    TSR__AUDIT_REASONS(TSR__AR_TEXT)
#undef TSR__AR_TEXT
};

const char *tsr__audit_reason_name(tsr__audit_reason r) {
  return (unsigned)r < TSR__AR_COUNT ? reason_names[r] : "?";
}
const char *tsr__audit_reason_text(tsr__audit_reason r) {
  return (unsigned)r < TSR__AR_COUNT ? reason_texts[r] : "?";
}
int tsr__audit_reason_is_structural(tsr__audit_reason r) {
  switch (r) {
  case TSR__AR_SCHEMA:
  case TSR__AR_PROTOCOL:
  case TSR__AR_ROUTE:
  case TSR__AR_ROW_UNEXPECTED:
  case TSR__AR_ROW_DUPLICATE:
  case TSR__AR_SAMPLE_COUNT:
  case TSR__AR_SAMPLE_VALUE:
  case TSR__AR_CALL_COUNT:
    return 1;
  default:
    return 0;
  }
}
int tsr__audit_reason_find(const char *name) {
  for (int i = 0; i < TSR__AR_COUNT; i++)
    if (!strcmp(reason_names[i], name)) return i;
  return -1;
}

void tsr__audit_result_init(tsr__audit_result *r) { memset(r, 0, sizeof *r); }
void tsr__audit_result_free(tsr__audit_result *r) {
  if (!r) return;
  free(r->items);
  memset(r, 0, sizeof *r);
}

void tsr__audit_fail(tsr__audit_result *r, tsr__audit_reason reason, const char *where,
                     const char *fmt, ...) {
  r->total++;
  r->counts[reason]++;
  if (r->n >= TSR_AUDIT_MAX_FINDINGS) return;
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 32;
    tsr__audit_finding *t = realloc(r->items, cap * sizeof *t);
    if (!t) return;
    r->items = t;
    r->cap = cap;
  }
  tsr__audit_finding *f = &r->items[r->n++];
  f->reason = reason;
  snprintf(f->where, sizeof f->where, "%s", where);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->detail, sizeof f->detail, fmt, ap);
  va_end(ap);
}

int tsr__audit_has(const tsr__audit_result *r, tsr__audit_reason reason) {
  return r->counts[reason] > 0;
}

void tsr__audit_note(tsr__audit_result *r, const char *fmt, ...) {
  if (r->nnotes >= TSR_AUDIT_MAX_NOTES) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->notes[r->nnotes++], sizeof r->notes[0], fmt, ap);
  va_end(ap);
}

/* ---- format definition ---------------------------------------------------- */
const char *const tsr__audit_metric_names[TSR__AUDIT_METRICS] = {
    "gpu_batch", "gpu_single", "e2e_batch", "e2e_single", "wall_batch", "wall_single"};
int tsr__audit_metric_is_gpu(int m) { return m < 4; }
static int metric_is_single(int m) { return m == 1 || m == 3 || m == 5; }

typedef struct {
  const char *name, *kind, *runner, *backend;
  int generated; /* the row records a generated-source SHA-256 */
} route_fmt;
static const route_fmt route_table[] = {
    {"tessera-gpu", "gpu", "backend", "cuda", 1}, {"hand", "gpu", "backend", "hand", 1},
    {"cublas", "gpu", "backend", "cublas", 0},    {"torch", "gpu", "torch", NULL, 0},
    {"tessera-cpu", "cpu", "backend", "cpu", 0},  {"openblas", "cpu", "openblas", NULL, 0},
    {"tessera-gpu-default", "gpu", "backend", "cuda", 1},
    {"tessera-cpu-default", "cpu", "backend", "cpu", 0},
    {"cublas-tf32", "gpu", "backend", "cublas", 0},   {"torch-tf32", "gpu", "torch", NULL, 0},
};

/* The precision mode a route always runs (NULL: it follows the protocol's). */
static const char *route_precision(const char *name) {
  static const char *const fixed[][2] = {{"hand", "strict"},    {"cublas", "strict"},
                                         {"torch", "strict"},   {"openblas", "strict"},
                                         {"cublas-tf32", "tf32"}, {"torch-tf32", "tf32"}};
  for (size_t i = 0; name && i < sizeof fixed / sizeof *fixed; i++)
    if (!strcmp(fixed[i][0], name)) return fixed[i][1];
  return NULL;
}
static const route_fmt *route_fmt_find(const char *name) {
  for (size_t i = 0; name && i < sizeof route_table / sizeof *route_table; i++)
    if (!strcmp(route_table[i].name, name)) return &route_table[i];
  return NULL;
}
int tsr__audit_route_is_cpu_backend(const char *name) {
  const route_fmt *f = route_fmt_find(name);
  return f && f->backend && !strcmp(f->backend, "cpu");
}
/* tessera's kernels give the same bits for the same plan and inputs, run to
 * run (a CPU task owns its C tile; split-K reduces in a fixed order); the
 * peers are not held to it. */
int tsr__audit_route_deterministic(const char *name) {
  const route_fmt *f = route_fmt_find(name);
  return f && f->backend && (!strcmp(f->backend, "cpu") || !strcmp(f->backend, "cuda") ||
                             !strcmp(f->backend, "hand"));
}
int tsr__audit_route_is_torch(const char *name) {
  const route_fmt *f = route_fmt_find(name);
  return f && !strcmp(f->runner, "torch");
}

/* ---- JSON helpers ----------------------------------------------------------- */
const char *tsr__audit_str(const json_t *o, const char *key) {
  return json_string_value(json_object_get(o, key));
}
int tsr__audit_int(const json_t *o, const char *key, json_int_t *out) {
  const json_t *v = json_object_get(o, key);
  if (!json_is_integer(v)) return 0;
  *out = json_integer_value(v);
  return 1;
}
int tsr__audit_num(const json_t *v, double *out) {
  if (json_is_integer(v)) *out = (double)json_integer_value(v);
  else if (json_is_real(v)) *out = json_real_value(v);
  else if (json_is_string(v) && !strcmp(json_string_value(v), "nan")) *out = NAN;
  else if (json_is_string(v) && !strcmp(json_string_value(v), "inf")) *out = INFINITY;
  else if (json_is_string(v) && !strcmp(json_string_value(v), "-inf")) *out = -INFINITY;
  else return 0;
  return 1;
}
int tsr__audit_is(const json_t *o, const char *key, const char *value) {
  const char *s = json_string_value(json_object_get(o, key));
  return s && !strcmp(s, value);
}
#define S_(o, k) tsr__audit_str(o, k)
#define FAIL tsr__audit_fail

static int is_hex64(const char *s) {
  if (!s || strlen(s) != 64) return 0;
  for (const char *p = s; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
  return 1;
}
int tsr__audit_is_hex64(const char *s) { return is_hex64(s); }

/* "row seq N (round r, SHAPE, ROUTE)" */
void tsr__audit_row_where(const json_t *row, size_t index, char *buf, size_t cap) {
  json_int_t seq = -1, round = -1;
  int has_seq = tsr__audit_int(row, "seq", &seq);
  tsr__audit_int(row, "round", &round);
  const char *shape = S_(row, "shape"), *route = S_(row, "route");
  if (has_seq)
    snprintf(buf, cap, "row seq %lld (round %lld, %.64s, %.32s)", (long long)seq, (long long)round,
             shape ? shape : "?", route ? route : "?");
  else
    snprintf(buf, cap, "rows[%zu] (round %lld, %.64s, %.32s)", index, (long long)round,
             shape ? shape : "?", route ? route : "?");
}

/* ---- protocol ---------------------------------------------------------------- */
static int proto_int(tsr__audit_ctx *c, const char *key, long long lo, long long hi,
                     json_int_t *out) {
  json_int_t v;
  if (!tsr__audit_int(c->proto, key, &v) || v < lo || v > hi) {
    char where[96], got[48] = "missing";
    snprintf(where, sizeof where, "protocol.%s", key);
    const json_t *j = json_object_get(c->proto, key);
    if (json_is_integer(j)) snprintf(got, sizeof got, "%lld", (long long)json_integer_value(j));
    else if (j) snprintf(got, sizeof got, "not an integer");
    FAIL(c->res, TSR__AR_PROTOCOL, where, "%s, must be an integer in [%lld, %lld]", got, lo, hi);
    return 0;
  }
  if (out) *out = v;
  return 1;
}

static void proto_real(tsr__audit_ctx *c, const char *key, int nonneg) {
  double v;
  const json_t *j = json_object_get(c->proto, key);
  if (!(json_is_real(j) || json_is_integer(j)) || !tsr__audit_num(j, &v) || !isfinite(v) ||
      (nonneg && v < 0)) {
    char where[96];
    snprintf(where, sizeof where, "protocol.%s", key);
    FAIL(c->res, TSR__AR_PROTOCOL, where, "must be a finite%s number", nonneg ? " non-negative" : "");
  }
}

static void proto_enum(tsr__audit_ctx *c, const char *key, const char *a, const char *b) {
  const char *s = S_(c->proto, key);
  if (!s || (strcmp(s, a) && strcmp(s, b))) {
    char where[96];
    snprintf(where, sizeof where, "protocol.%s", key);
    FAIL(c->res, TSR__AR_PROTOCOL, where, "'%.40s' is not '%s' or '%s'", s ? s : "(missing)", a, b);
  }
}

static void check_names(tsr__audit_ctx *c, const char *key, int first, int count) {
  const json_t *a = json_object_get(c->proto, key);
  int ok = json_is_array(a) && json_array_size(a) == (size_t)count;
  for (int i = 0; ok && i < count; i++) {
    const char *s = json_string_value(json_array_get(a, (size_t)i));
    ok = s && !strcmp(s, tsr__audit_metric_names[first + i]);
  }
  if (!ok) {
    char where[96];
    snprintf(where, sizeof where, "protocol.%s", key);
    FAIL(c->res, TSR__AR_PROTOCOL, where, "must list the documented metrics in order");
  }
}

/* The document's top-level fields: present with their types. */
static void check_top_level(tsr__audit_ctx *c) {
  tsr__audit_result *res = c->res;
  const json_t *doc = c->doc;
  int complete = json_is_true(json_object_get(doc, "complete"));
  if (!complete)
    FAIL(res, TSR__AR_INCOMPLETE, "complete", "results.json is not marked complete (run interrupted?)");
  /* finished_utc and summary are written when the run completes: an
   * interrupted run lacks them by design (reported as incomplete). */
  static const char *const strs[] = {"tessera_version", "started_utc", "finished_utc"};
  for (size_t i = 0; i < 3; i++)
    if (!S_(doc, strs[i]) && (complete || i < 2 || json_object_get(doc, strs[i])))
      FAIL(res, TSR__AR_SCHEMA, strs[i], "missing or not a string");
  static const char *const objs[] = {"protocol", "host", "device", "artifacts", "order", "summary"};
  for (size_t i = 0; i < 6; i++)
    if (!json_is_object(json_object_get(doc, objs[i])) &&
        (complete || i < 5 || json_object_get(doc, objs[i])))
      FAIL(res, TSR__AR_SCHEMA, objs[i], "missing or not an object");
  static const char *const arrs[] = {"command_line", "routes", "rows"};
  for (size_t i = 0; i < 3; i++)
    if (!json_is_array(json_object_get(doc, arrs[i])))
      FAIL(res, TSR__AR_SCHEMA, arrs[i], "missing or not an array");
}

/* The protocol's scalar parameters. Returns 0 when samples, rounds or batch
 * is unusable. */
static int check_protocol_values(tsr__audit_ctx *c) {
  tsr__audit_result *res = c->res;
  json_int_t v;
  int ok = 1;
  ok &= proto_int(c, "samples", 1, 1000000, &v);
  c->samples = ok ? (int)v : 0;
  int rounds_ok = proto_int(c, "rounds", 1, 1000000, &v);
  c->rounds = rounds_ok ? (int)v : 0;
  ok &= rounds_ok;
  proto_int(c, "sample_ms", 1, INT32_MAX, NULL);
  proto_int(c, "warmup_ms", 0, INT32_MAX, NULL);
  proto_int(c, "timeout_s", 1, INT32_MAX, NULL);
  proto_int(c, "threads", 1, 1 << 20, NULL);
  proto_int(c, "seed", INT64_MIN, INT64_MAX, NULL);
  if (proto_int(c, "batch", 1, INT32_MAX, &v)) c->batch = v;
  else ok = 0;
  {
    const char *in = S_(c->proto, "inputs");
    if (!in || (strcmp(in, "dyadic") && strcmp(in, "random") &&
                (!c->v2 || (strcmp(in, "normal") && strcmp(in, "wide")))))
      FAIL(res, TSR__AR_PROTOCOL, "protocol.inputs", "'%.20s' is not an input family",
           in ? in : "(missing)");
  }
  if (c->v2) {
    const char *pr = S_(c->proto, "precision");
    if (!pr || (strcmp(pr, "auto") && strcmp(pr, "strict") && strcmp(pr, "fp32x3") && strcmp(pr, "tf32") &&
                strcmp(pr, "ozaki")))
      FAIL(res, TSR__AR_PROTOCOL, "protocol.precision", "'%.20s' is not a precision mode",
           pr ? pr : "(missing)");
    const json_t *ai = json_object_get(c->proto, "accuracy_inputs");
    c->accuracy_inputs = json_string_value(ai);
    if (!json_is_null(ai) && (!c->accuracy_inputs || (strcmp(c->accuracy_inputs, "random") &&
                                                      strcmp(c->accuracy_inputs, "normal") &&
                                                      strcmp(c->accuracy_inputs, "wide")))) {
      FAIL(res, TSR__AR_PROTOCOL, "protocol.accuracy_inputs", "must be null, random, normal or wide");
      c->accuracy_inputs = NULL;
    }
    if (c->accuracy_inputs) proto_int(c, "accuracy_seed", INT64_MIN, INT64_MAX, NULL);
  }
  proto_enum(c, "op_a", "N", "T");
  proto_enum(c, "op_b", "N", "T");
  proto_real(c, "atol", 1);
  proto_real(c, "rtol", 1);
  proto_real(c, "unstable_threshold", 1);
  c->threshold = 0.10;
  tsr__audit_num(json_object_get(c->proto, "unstable_threshold"), &c->threshold);
  proto_real(c, "alpha", 0);
  proto_real(c, "beta", 0);
  const json_t *pre = json_object_get(c->proto, "preset");
  if (!json_is_null(pre) && !json_is_string(pre))
    FAIL(res, TSR__AR_PROTOCOL, "protocol.preset", "must be null or a string");
  const json_t *oc = json_object_get(c->proto, "oracle_cache");
  if (!json_is_null(oc) && !json_is_string(oc))
    FAIL(res, TSR__AR_PROTOCOL, "protocol.oracle_cache", "must be null or a path");
  check_names(c, "metrics_gpu", 0, 4);
  check_names(c, "metrics_cpu", 4, 2);
  return ok;
}

/* protocol.shapes into c->shapes and the label index. Returns 0 when they
 * are unusable. */
static int check_protocol_shapes(tsr__audit_ctx *c) {
  tsr__audit_result *res = c->res;
  const json_t *shapes = json_object_get(c->proto, "shapes");
  size_t ns = json_array_size(shapes);
  if (!ns || ns > 100000) {
    FAIL(res, TSR__AR_PROTOCOL, "protocol.shapes", "must be a non-empty array (has %zu)", ns);
    return 0;
  }
  int ok = 1;
  c->shapes = calloc(ns, sizeof *c->shapes);
  c->shape_ix = json_object();
  c->S = (int)ns;
  for (size_t i = 0; i < ns && c->shapes && c->shape_ix; i++) {
    const json_t *s = json_array_get(shapes, i);
    tsr__audit_shape *sh = &c->shapes[i];
    char where[64];
    snprintf(where, sizeof where, "protocol.shapes[%zu]", i);
    json_int_t m = 0, n = 0, k = 0;
    sh->label = S_(s, "label");
    /* label → first shape with it: linear lookups would make a document
     * of many shapes and rows quadratic. */
    const json_t *first = sh->label ? json_object_get(c->shape_ix, sh->label) : NULL;
    if (sh->label && !first && json_object_set_new(c->shape_ix, sh->label, json_integer((json_int_t)i))) {
      FAIL(res, TSR__AR_PROTOCOL, where, "out of memory indexing the shapes");
      ok = 0;
      break;
    }
    if (!sh->label || !tsr__audit_int(s, "m", &m) || !tsr__audit_int(s, "n", &n) ||
        !tsr__audit_int(s, "k", &k) || m < 1 || n < 1 || k < 1) {
      FAIL(res, TSR__AR_PROTOCOL, where, "needs a label and positive integer m, n, k");
      ok = 0;
      continue;
    }
    sh->m = m;
    sh->n = n;
    sh->k = k;
    /* The shape's problem kind: its own fields (written since shapes carry
     * their own batch and ops), else the protocol's. */
    const char *pa = S_(c->proto, "op_a"), *pb = S_(c->proto, "op_b");
    const char *oa = json_object_get(s, "op_a") ? S_(s, "op_a") : pa;
    const char *ob = json_object_get(s, "op_b") ? S_(s, "op_b") : pb;
    json_int_t b = c->batch;
    if (json_object_get(s, "batch") && (!tsr__audit_int(s, "batch", &b) || b < 1 || b > INT32_MAX)) {
      FAIL(res, TSR__AR_PROTOCOL, where, "batch must be a positive integer");
      b = c->batch;
    }
    if (!oa || !ob || strlen(oa) != 1 || strlen(ob) != 1 || !strchr("NT", *oa) || !strchr("NT", *ob)) {
      FAIL(res, TSR__AR_PROTOCOL, where, "op_a and op_b must be N or T");
      oa = ob = "N";
    }
    sh->batch = b;
    sh->op_a = *oa;
    sh->op_b = *ob;
    /* The label is the bench's token (docs/protocol.md, "Shapes"), written
     * as the bench writes it; what it gives for itself must be the entry's,
     * what it leaves open the protocol's. */
    tsr__shape_token t;
    char label[96], msg[160];
    if (tsr__shape_token_parse(sh->label, &t, msg, sizeof msg)) {
      FAIL(res, TSR__AR_PROTOCOL, where, "label '%.64s' is not a shape token: %s", sh->label, msg);
    } else {
      char bb[32] = "", oo[8] = "";
      if (t.has_batch) snprintf(bb, sizeof bb, "%lld*", (long long)t.batch);
      if (t.has_ops) snprintf(oo, sizeof oo, ":%c%c", t.op_a == TSR_OP_T ? 'T' : 'N', t.op_b == TSR_OP_T ? 'T' : 'N');
      snprintf(label, sizeof label, "%s%lldx%lldx%lld%s", bb, (long long)m, (long long)n, (long long)k, oo);
      char wa = t.has_ops ? (t.op_a == TSR_OP_T ? 'T' : 'N') : pa ? *pa : '?';
      char wb = t.has_ops ? (t.op_b == TSR_OP_T ? 'T' : 'N') : pb ? *pb : '?';
      json_int_t wbatch = t.has_batch ? t.batch : c->batch;
      if (strcmp(label, sh->label))
        FAIL(res, TSR__AR_PROTOCOL, where, "label '%.64s' is not %s", sh->label, label);
      else if (wbatch != sh->batch || wa != sh->op_a || wb != sh->op_b)
        FAIL(res, TSR__AR_PROTOCOL, where, "label '%.64s' gives batch %lld ops %c%c, the entry records "
             "batch %lld ops %c%c", sh->label, (long long)wbatch, wa, wb, (long long)sh->batch,
             sh->op_a, sh->op_b);
    }
    if (first) {
      FAIL(res, TSR__AR_PROTOCOL, where, "label '%.64s' repeats shapes[%lld]", sh->label,
           (long long)json_integer_value(first));
      ok = 0;
    }
  }
  if (!c->shapes || !c->shape_ix) ok = 0;
  return ok;
}

/* doc.stopped (a run that --max-seconds ended early): its reason, the rounds
 * it ran (1 to fewer than protocol.rounds) and the deadline in the protocol;
 * from here on c->rounds is the rounds run, every row and table over them.
 * Returns 0 when the record is unusable. */
static int check_stopped(tsr__audit_ctx *c) {
  tsr__audit_result *res = c->res;
  c->rounds_planned = c->rounds;
  const json_t *st = json_object_get(c->doc, "stopped");
  if (!st || json_is_null(st)) return 1;
  json_int_t run = 0, planned = 0;
  const json_t *ms = json_object_get(c->proto, "max_seconds");
  if (!json_is_object(st) || !tsr__audit_is(st, "reason", "max-seconds")) {
    FAIL(res, TSR__AR_PROTOCOL, "stopped", "not a stop by max-seconds");
    return 0;
  }
  if (!json_is_number(ms) || !(json_number_value(ms) > 0)) {
    FAIL(res, TSR__AR_PROTOCOL, "stopped", "protocol.max_seconds is not a positive number");
    return 0;
  }
  if (!tsr__audit_int(st, "rounds_planned", &planned) || planned != c->rounds) {
    FAIL(res, TSR__AR_PROTOCOL, "stopped.rounds_planned", "%lld, the protocol has %d", (long long)planned,
         c->rounds);
    return 0;
  }
  if (!tsr__audit_int(st, "rounds_run", &run) || run < 1 || run >= c->rounds) {
    FAIL(res, TSR__AR_PROTOCOL, "stopped.rounds_run", "%lld is not in [1, %d)", (long long)run, c->rounds);
    return 0;
  }
  c->rounds = (int)run;
  return 1;
}

static void check_protocol(tsr__audit_ctx *c) {
  check_top_level(c);
  c->proto = json_object_get(c->doc, "protocol");
  int ok = check_protocol_values(c);
  ok &= check_protocol_shapes(c);
  if (ok) ok &= check_stopped(c);
  c->usable = ok;
}

/* ---- routes ------------------------------------------------------------------ */
static void check_routes(tsr__audit_ctx *c) {
  tsr__audit_result *res = c->res;
  const json_t *routes = json_object_get(c->doc, "routes");
  const char *avail[TSR_AUDIT_MAX_ROUTES];
  int navail = 0, ok = 1;
  size_t seen[sizeof route_table / sizeof *route_table] = {0};
  for (size_t i = 0; i < json_array_size(routes); i++) {
    const json_t *rt = json_array_get(routes, i);
    char where[64];
    snprintf(where, sizeof where, "routes[%zu]", i);
    const char *name = S_(rt, "name");
    const route_fmt *f = route_fmt_find(name);
    if (!f) {
      FAIL(res, TSR__AR_ROUTE, where, "unknown route '%.40s'", name ? name : "(missing)");
      ok = 0;
      continue;
    }
    if (seen[f - route_table]++) FAIL(res, TSR__AR_ROUTE, where, "route '%s' listed twice", name);
    const char *kind = S_(rt, "kind"), *runner = S_(rt, "runner");
    if (!kind || strcmp(kind, f->kind) || !runner || strcmp(runner, f->runner))
      FAIL(res, TSR__AR_ROUTE, where, "%s: kind/runner '%.8s'/'%.12s', the format says '%s'/'%s'",
           name, kind ? kind : "?", runner ? runner : "?", f->kind, f->runner);
    const json_t *av = json_object_get(rt, "available");
    if (!json_is_boolean(av)) {
      FAIL(res, TSR__AR_SCHEMA, where, "%s: 'available' is not a boolean", name);
      continue;
    }
    const json_t *reason = json_object_get(rt, "reason");
    if (json_is_true(av) ? !json_is_null(reason) : !json_is_string(reason))
      FAIL(res, TSR__AR_ROUTE, where, "%s: reason must be null when available, a text when skipped",
           name);
    if (json_is_true(av)) {
      if (navail < TSR_AUDIT_MAX_ROUTES) avail[navail++] = name;
      else ok = 0;
    }
  }
  const json_t *base = json_object_get(json_object_get(c->doc, "order"), "base_routes");
  size_t nb = json_array_size(base);
  if (!json_is_array(base) || nb != (size_t)navail) {
    FAIL(res, TSR__AR_ROUTE, "order.base_routes", "has %zu routes, %d are available", nb, navail);
    ok = 0;
  }
  for (int i = 0; ok && i < navail; i++) {
    const char *b = json_string_value(json_array_get(base, (size_t)i));
    if (!b || strcmp(b, avail[i])) {
      FAIL(res, TSR__AR_ROUTE, "order.base_routes", "position %d is '%.40s', the available routes "
           "in order give '%s'", i, b ? b : "?", avail[i]);
      ok = 0;
    }
  }
  if (ok) {
    c->R = navail;
    for (int i = 0; i < navail; i++) {
      c->base[i] = avail[i];
      c->base_gpu[i] = !strcmp(route_fmt_find(avail[i])->kind, "gpu");
    }
  }
  if (!ok || navail == 0) c->usable = 0;
}

static int route_index(const tsr__audit_ctx *c, const char *name) {
  for (int i = 0; name && i < c->R; i++)
    if (!strcmp(c->base[i], name)) return i;
  return -1;
}
int tsr__audit_shape_index(const tsr__audit_ctx *c, const char *label) {
  const json_t *i = label ? json_object_get(c->shape_ix, label) : NULL;
  return i ? (int)json_integer_value(i) : -1;
}

/* ---- one row ------------------------------------------------------------------- */
static void check_receipts(tsr__audit_ctx *c, const char *where, const json_t *result, int ok_row,
                           int64_t want) {
  tsr__audit_result *res = c->res;
  const json_t *val = json_object_get(result, "validation");
  static const char *const phases[2] = {"before_timing", "after_timing"};
  if (ok_row && (!json_is_array(val) || json_array_size(val) != 2)) {
    FAIL(res, TSR__AR_VALIDATION, where, "a valid row needs 2 validation receipts, has %zu",
         json_array_size(val));
  }
  for (size_t i = 0; i < json_array_size(val); i++) {
    const json_t *r = json_array_get(val, i);
    json_int_t checked = -1, expected = -1, failed = -1;
    int have = tsr__audit_int(r, "checked", &checked) & tsr__audit_int(r, "expected", &expected) &
               tsr__audit_int(r, "failed", &failed);
    const char *phase = S_(r, "phase");
    c->res->receipts++;
    if (!have || !json_is_boolean(json_object_get(r, "passed")) || !phase) {
      FAIL(res, TSR__AR_SCHEMA, where, "validation[%zu]: needs phase, checked, expected, failed, passed", i);
      continue;
    }
    if (expected != want || checked != want)
      FAIL(res, TSR__AR_ELEMENT_COUNT, where,
           "validation[%zu] (%s): checked %lld, expected %lld; M×N×batch is %lld", i, phase,
           (long long)checked, (long long)expected, (long long)want);
    else if (ok_row)
      c->res->elements += checked;
    if (!ok_row) continue;
    if (i < 2 && strcmp(phase, phases[i]))
      FAIL(res, TSR__AR_VALIDATION, where, "validation[%zu] phase '%.20s', expected '%s'", i, phase, phases[i]);
    if (!json_is_true(json_object_get(r, "passed")) || failed != 0)
      FAIL(res, TSR__AR_VALIDATION, where,
           "validation[%zu] (%s) did not pass (%lld of %lld elements failed) but the row is 'ok'",
           i, phase, (long long)failed, (long long)checked);
  }
}

/* The accuracy receipt (docs/accuracy.md), re-judged from its own figures:
 * the contract it applied is the row's precision mode, its Frobenius limit
 * is the contract's (1.25 x the strict reference's error, 2^-10 for tf32,
 * none under 1024 outputs), its counts are consistent, its verdict follows
 * from them, and the row's status agrees with the verdict. */
static void check_accuracy(tsr__audit_ctx *c, const char *where, const json_t *result,
                           const char *status, const char *route, const tsr__audit_shape *sh,
                           int64_t want) {
  tsr__audit_result *res = c->res;
  const char *prec = S_(result, "precision"), *fixed = route_precision(route);
  const char *asked = S_(c->proto, "precision");
  int validated = !strcmp(status, "ok") || !strcmp(status, "failed_accuracy");
  if (prec || validated) {
    if (!prec || (strcmp(prec, "strict") && strcmp(prec, "fp32x3") && strcmp(prec, "tf32") &&
                  strcmp(prec, "ozaki")))
      FAIL(res, TSR__AR_ACCURACY, where, "result.precision '%.20s' is not a mode that ran",
           prec ? prec : "(missing)");
    else if (fixed && strcmp(prec, fixed))
      FAIL(res, TSR__AR_ACCURACY, where, "precision %s, but route %s runs %s", prec, route, fixed);
    else if (!fixed && asked && strcmp(asked, "auto") && strcmp(prec, asked))
      FAIL(res, TSR__AR_ACCURACY, where, "precision %s, but the protocol asks for %s", prec, asked);
    else if (!fixed && asked && !strcmp(asked, "auto") && !strcmp(prec, "tf32"))
      FAIL(res, TSR__AR_ACCURACY, where, "precision tf32 ran under auto (below the FP32 contract)");
  }
  const json_t *a = json_object_get(result, "accuracy");
  if (!c->accuracy_inputs) {
    if (a) FAIL(res, TSR__AR_ACCURACY, where, "an accuracy receipt, but the protocol asks for none");
    if (!strcmp(status, "failed_accuracy"))
      FAIL(res, TSR__AR_ROW_STATUS, where, "failed_accuracy, but the protocol asks for no accuracy check");
    return;
  }
  if (!validated) return; /* the row never reached its accuracy check */
  if (!json_is_object(a)) {
    FAIL(res, TSR__AR_ACCURACY, where, "a validated row has no accuracy receipt");
    return;
  }
  json_int_t checked = -1, expected = -1, failed = -1, bfail = -1, cfail = -1, seed = -1, pseed = -2;
  double rel = NAN, strict = NAN, limit = NAN, worst = NAN;
  const json_t *lim = json_object_get(a, "fro_limit");
  int have = tsr__audit_int(a, "checked", &checked) & tsr__audit_int(a, "expected", &expected) &
             tsr__audit_int(a, "failed", &failed) & tsr__audit_int(a, "bound_failed", &bfail) &
             tsr__audit_int(a, "class_failed", &cfail) & tsr__audit_int(a, "seed", &seed) &
             tsr__audit_num(json_object_get(a, "rel_fro_err"), &rel) &
             tsr__audit_num(json_object_get(a, "strict_rel_fro"), &strict) &
             tsr__audit_num(json_object_get(a, "worst_bound_ratio"), &worst) &
             (json_is_null(lim) || tsr__audit_num(lim, &limit)) &
             json_is_boolean(json_object_get(a, "passed"));
  const char *contract = S_(a, "contract"), *inputs = S_(a, "inputs");
  if (!have || !contract || !inputs || !tsr__audit_is(a, "phase", "accuracy")) {
    FAIL(res, TSR__AR_SCHEMA, where, "accuracy: needs phase, inputs, seed, contract, checked, "
                                     "expected, failed, bound_failed, class_failed, rel_fro_err, "
                                     "strict_rel_fro, fro_limit, worst_bound_ratio, passed");
    return;
  }
  c->res->receipts++;
  if (expected != want || checked != want)
    FAIL(res, TSR__AR_ELEMENT_COUNT, where, "accuracy: checked %lld, expected %lld; M×N×batch is %lld",
         (long long)checked, (long long)expected, (long long)want);
  if (strcmp(inputs, c->accuracy_inputs))
    FAIL(res, TSR__AR_ACCURACY, where, "accuracy on %.20s inputs, the protocol asks for %s", inputs,
         c->accuracy_inputs);
  tsr__audit_int(c->proto, "accuracy_seed", &pseed);
  if (seed != pseed)
    FAIL(res, TSR__AR_ACCURACY, where, "accuracy seed %lld, the protocol's is %lld", (long long)seed,
         (long long)pseed);
  const char *key = S_(json_object_get(a, "oracle"), "key");
  char want_key[160];
  snprintf(want_key, sizeof want_key, "m=%lld n=%lld k=%lld", (long long)sh->m, (long long)sh->n,
           (long long)sh->k);
  char want_in[40];
  snprintf(want_in, sizeof want_in, "inputs=%s ", inputs);
  if (!key || !strstr(key, want_key) || !strstr(key, want_in))
    FAIL(res, TSR__AR_ACCURACY, where, "accuracy.oracle.key does not name %s and %s inputs", want_key, inputs);
  if (prec && strcmp(contract, prec))
    FAIL(res, TSR__AR_ACCURACY, where, "accuracy contract %.20s, but the row ran %s", contract, prec);
  /* the limit the contract sets */
  double want_limit = NAN;
  if (checked >= 1024) want_limit = !strcmp(contract, "tf32") ? 0x1p-10 : 1.25 * strict;
  if (isnan(want_limit) != isnan(limit) ||
      (!isnan(limit) && !(fabs(limit - want_limit) <= TSR_AUDIT_RTOL * fabs(want_limit))))
    FAIL(res, TSR__AR_ACCURACY, where, "accuracy.fro_limit %g, the %s contract gives %g", limit,
         contract, want_limit);
  if (!(strict >= 0) || !(rel >= 0) || !(worst >= 0))
    FAIL(res, TSR__AR_ACCURACY, where, "accuracy: errors must be non-negative numbers");
  if (bfail < 0 || cfail < 0 || bfail > failed || cfail > failed - bfail || failed > checked)
    FAIL(res, TSR__AR_ACCURACY, where, "accuracy counts inconsistent: %lld failed, %lld over the "
                                       "bound, %lld of the wrong class",
         (long long)failed, (long long)bfail, (long long)cfail);
  if ((bfail > 0) != (worst > 1.0))
    FAIL(res, TSR__AR_ACCURACY, where, "accuracy: %lld over the bound but worst ratio %g",
         (long long)bfail, worst);
  int verdict = failed == 0 && checked == want && (isnan(want_limit) || rel <= want_limit);
  int recorded = json_is_true(json_object_get(a, "passed"));
  if (verdict != recorded)
    FAIL(res, TSR__AR_ACCURACY, where, "accuracy receipt says %s, its figures say %s (rel. "
                                       "Frobenius %g, limit %g, %lld failed)",
         recorded ? "passed" : "failed", verdict ? "passed" : "failed", rel, want_limit,
         (long long)failed);
  if (!strcmp(status, "ok") && !verdict)
    FAIL(res, TSR__AR_ACCURACY, where, "row 'ok' but it breaks its %s contract", contract);
  if (!strcmp(status, "failed_accuracy") && verdict)
    FAIL(res, TSR__AR_ROW_STATUS, where, "failed_accuracy, but the accuracy receipt is met");
}

static void check_metrics(tsr__audit_ctx *c, const char *where, const json_t *result, int gpu) {
  tsr__audit_result *res = c->res;
  const json_t *metrics = json_object_get(result, "metrics");
  if (!json_is_object(metrics)) {
    FAIL(res, TSR__AR_SAMPLE_COUNT, where, "result.metrics missing");
    return;
  }
  const char *key;
  const json_t *val;
  json_object_foreach((json_t *)metrics, key, val) {
    int m = -1;
    for (int i = 0; i < TSR__AUDIT_METRICS; i++)
      if (!strcmp(key, tsr__audit_metric_names[i])) m = i;
    if (m < 0 || tsr__audit_metric_is_gpu(m) != gpu)
      FAIL(res, TSR__AR_SAMPLE_COUNT, where, "metric '%.40s' does not belong to a %s route", key,
           gpu ? "GPU" : "CPU");
  }
  for (int m = gpu ? 0 : 4; m < (gpu ? 4 : 6); m++) {
    const char *mn = tsr__audit_metric_names[m];
    const json_t *arr = json_object_get(metrics, mn);
    if (!json_is_array(arr) || json_array_size(arr) != (size_t)c->samples) {
      FAIL(res, TSR__AR_SAMPLE_COUNT, where, "%s: %zu samples, the protocol declares %d", mn,
           json_array_size(arr), c->samples);
    }
    for (size_t i = 0; i < json_array_size(arr); i++) {
      const json_t *s = json_array_get(arr, i), *ns = json_object_get(s, "ns"),
                   *calls = json_object_get(s, "calls");
      res->samples++;
      double d = NAN;
      if (!json_is_integer(ns) || json_integer_value(ns) <= 0) {
        char text[64] = "missing";
        if (json_is_string(ns)) snprintf(text, sizeof text, "\"%.20s\"", json_string_value(ns));
        else if (tsr__audit_num(ns, &d)) snprintf(text, sizeof text, "%.17g", d);
        FAIL(res, TSR__AR_SAMPLE_VALUE, where, "%s sample %zu: ns is %s, not a finite positive integer",
             mn, i, text);
      }
      if (!json_is_integer(calls) || json_integer_value(calls) <= 0)
        FAIL(res, TSR__AR_CALL_COUNT, where, "%s sample %zu: calls is not a positive integer", mn, i);
      else if (metric_is_single(m) && json_integer_value(calls) != 1)
        FAIL(res, TSR__AR_CALL_COUNT, where, "%s sample %zu: %lld calls in a single-call metric", mn,
             i, (long long)json_integer_value(calls));
    }
  }
}

static void check_instrumentation(tsr__audit_ctx *c, const char *where, const json_t *result) {
  const json_t *ins = json_object_get(result, "instrumentation");
  if (!json_is_object(ins) || !json_is_boolean(json_object_get(ins, "instrumented")) ||
      !json_is_array(json_object_get(ins, "markers"))) {
    FAIL(c->res, TSR__AR_INSTRUMENTATION_UNRECORDED, where,
         "result.instrumentation {instrumented, markers} missing: cannot tell a profiled run "
         "from a control");
    return;
  }
  const json_t *markers = json_object_get(ins, "markers");
  if (json_is_true(json_object_get(ins, "instrumented")) || json_array_size(markers)) {
    const char *m0 = json_string_value(json_array_get(markers, 0));
    FAIL(c->res, TSR__AR_INSTRUMENTED, where, "instrumented run (%zu markers%s%.200s)",
         json_array_size(markers), m0 ? ": " : "", m0 ? m0 : "");
  }
}

/* Torch rows of a run that records its torch process mode (docs/protocol.md):
 * with "fork" every row names the zygote and a forked child that is neither
 * the zygote nor the row's own bench child, and a valid row's child exited
 * 0; with "exec" every row says exec. Runs from before the record carry no
 * top-level torch_process and are not checked. */
static void check_torch_process(tsr__audit_ctx *c, const char *where, const json_t *result,
                                int ok_row) {
  const json_t *top = json_object_get(c->doc, "torch_process");
  if (!json_is_object(top)) return;
  const char *mode = S_(top, "mode");
  const json_t *tp = json_object_get(result, "torch_process");
  const char *rmode = S_(tp, "mode");
  if (!mode || (strcmp(mode, "fork") && strcmp(mode, "exec"))) {
    FAIL(c->res, TSR__AR_ISOLATION, "torch_process.mode", "'%.20s' is neither fork nor exec",
         mode ? mode : "(missing)");
    return;
  }
  const char *want = !strcmp(mode, "fork") ? "zygote-fork" : "exec";
  if (!rmode || strcmp(rmode, want)) {
    /* A row's child that could not reach the zygote still says zygote-fork;
     * a missing record is only tolerated on rows without a child result. */
    FAIL(c->res, TSR__AR_ISOLATION, where, "torch_process.mode '%.20s', the run's mode is %s",
         rmode ? rmode : "(missing)", want);
    return;
  }
  if (strcmp(want, "zygote-fork")) return;
  json_int_t zpid = -1, cpid = -1, rpid = -1, code = -1;
  int has_z = tsr__audit_int(tp, "pid", &zpid), has_c = tsr__audit_int(tp, "child_pid", &cpid);
  tsr__audit_int(result, "pid", &rpid);
  if (!ok_row && !has_c) return; /* the zygote was unreachable: a failed row, no child */
  if (!has_z || !has_c || zpid <= 0 || cpid <= 0 || cpid == zpid || cpid == rpid) {
    FAIL(c->res, TSR__AR_ISOLATION, where,
         "forked torch child %lld, zygote %lld, row process %lld: not a process of its own",
         (long long)cpid, (long long)zpid, (long long)rpid);
    return;
  }
  if (ok_row && (!tsr__audit_int(tp, "exit_code", &code) || code != 0))
    FAIL(c->res, TSR__AR_ISOLATION, where, "valid row, but its forked torch child exited %lld",
         (long long)code);
}

static void check_row(tsr__audit_ctx *c, const json_t *row, size_t index, int si, int ri) {
  tsr__audit_result *res = c->res;
  char where[192];
  tsr__audit_row_where(row, index, where, sizeof where);
  const char *status = S_(row, "status");
  static const char *const statuses[] = {"ok",      "failed_validation", "error",
                                         "crashed", "timeout",           "failed_accuracy"};
  int known = 0;
  for (size_t i = 0; status && i < (c->v2 ? 6u : 5u); i++) known |= !strcmp(status, statuses[i]);
  if (!known) {
    FAIL(res, TSR__AR_SCHEMA, where, "status '%.30s' is not in the documented vocabulary",
         status ? status : "(missing)");
    return;
  }
  int ok_row = !strcmp(status, "ok");
  res->rows++;
  if (ok_row) res->rows_ok++;
  else res->rows_failed++;
  const json_t *result = json_object_get(row, "result"), *ex = json_object_get(row, "exit");
  if (!json_is_object(ex)) FAIL(res, TSR__AR_SCHEMA, where, "exit record missing");
  {
    /* the row's own problem kind, where it records one: its shape's */
    const tsr__audit_shape *sh = &c->shapes[si];
    json_int_t rb = 0;
    char ra[2] = {sh->op_a, 0}, rbo[2] = {sh->op_b, 0};
    if ((json_object_get(row, "batch") && (!tsr__audit_int(row, "batch", &rb) || rb != sh->batch)) ||
        (json_object_get(row, "op_a") && !tsr__audit_is(row, "op_a", ra)) ||
        (json_object_get(row, "op_b") && !tsr__audit_is(row, "op_b", rbo)))
      FAIL(res, TSR__AR_PROBLEM, where, "row records batch %lld ops %.2s%.2s, its shape %.64s is batch "
           "%lld ops %c%c", (long long)rb, S_(row, "op_a") ? S_(row, "op_a") : "?",
           S_(row, "op_b") ? S_(row, "op_b") : "?", sh->label, (long long)sh->batch, sh->op_a, sh->op_b);
  }
  tsr__audit_check_row_evidence(c, row, where, si, ri);
  if (ok_row) {
    json_int_t code = -1;
    if (!tsr__audit_int(ex, "code", &code) || code != 0 || json_is_true(json_object_get(ex, "timed_out")))
      FAIL(res, TSR__AR_ROW_STATUS, where, "status 'ok' but the child did not exit 0");
    if (!json_is_object(result) || !tsr__audit_is(result, "status", "ok"))
      FAIL(res, TSR__AR_ROW_STATUS, where, "status 'ok' but the child result is %s",
           json_is_object(result) ? "not 'ok'" : "missing");
  }
  if (!json_is_object(result)) {
    if (!json_is_null(result)) FAIL(res, TSR__AR_SCHEMA, where, "result is neither null nor an object");
    return;
  }
  const char *row_schema = c->v3 ? TSR_AUDIT_ROW_SCHEMA : c->v2 ? TSR_AUDIT_ROW_SCHEMA_V2 : TSR_AUDIT_ROW_SCHEMA_V1;
  if (!tsr__audit_is(result, "schema", row_schema))
    FAIL(res, TSR__AR_SCHEMA, where, "result.schema is not %s", row_schema);
  const char *rr = S_(result, "route"), *rs = S_(result, "shape");
  if (!rr || !rs || !tsr__audit_is(row, "route", rr) || !tsr__audit_is(row, "shape", rs))
    FAIL(res, TSR__AR_ROW_IDENTITY, where, "child result is for (%.64s, %.32s)", rs ? rs : "?",
         rr ? rr : "?");
  check_instrumentation(c, where, result);
  const route_fmt *rf = route_fmt_find(c->base[ri]);
  if (rf && !strcmp(rf->runner, "torch")) check_torch_process(c, where, result, ok_row);

  /* The problem: element counts, then the rest against the protocol. */
  const tsr__audit_shape *sh = &c->shapes[si];
  const json_t *prob = json_object_get(result, "problem");
  json_int_t m = -1, n = -1, k = -1, b = -1;
  tsr__audit_int(prob, "m", &m);
  tsr__audit_int(prob, "n", &n);
  tsr__audit_int(prob, "k", &k);
  tsr__audit_int(prob, "batch", &b);
  int64_t want = sh->m * sh->n * sh->batch;
  if (m != sh->m || n != sh->n || b != sh->batch)
    FAIL(res, TSR__AR_ELEMENT_COUNT, where, "problem M×N×batch %lld×%lld×%lld, the shape gives %lld×%lld×%lld",
         (long long)m, (long long)n, (long long)b, (long long)sh->m, (long long)sh->n, (long long)sh->batch);
  if (k != sh->k) FAIL(res, TSR__AR_PROBLEM, where, "problem K %lld, the shape has %lld", (long long)k, (long long)sh->k);
  static const char *const same[] = {"op_a", "op_b"};
  for (int i = 0; i < 2; i++) {
    const char *x = S_(prob, same[i]);
    char y[2] = {i ? sh->op_b : sh->op_a, 0};
    if (!x || strcmp(x, y))
      FAIL(res, TSR__AR_PROBLEM, where, "problem.%s '%.4s', the shape's '%s'", same[i], x ? x : "?", y);
  }
  static const char *const reals[] = {"alpha", "beta"};
  for (int i = 0; i < 2; i++) {
    double x = NAN, y = NAN;
    tsr__audit_num(json_object_get(prob, reals[i]), &x);
    tsr__audit_num(json_object_get(c->proto, reals[i]), &y);
    /* The child stores the float value; the protocol the parsed double. */
    if (!(isfinite(x) && isfinite(y) && (float)x == (float)y))
      FAIL(res, TSR__AR_PROBLEM, where, "problem.%s %g, protocol %g", reals[i], x, y);
  }
  check_receipts(c, where, result, ok_row, want);
  if (c->v2) check_accuracy(c, where, result, status, c->base[ri], sh, want);

  if (ok_row) {
    check_metrics(c, where, result, c->base_gpu[ri]);
    const route_fmt *f = route_fmt_find(c->base[ri]);
    const json_t *pi = json_object_get(result, "plan_info");
    const char *src = S_(pi, "source_sha256");
    if (f && f->generated && !is_hex64(src))
      FAIL(res, TSR__AR_SOURCE_HASH, where, "plan_info.source_sha256 %s for a generated-source route",
           src ? "malformed" : "missing");
  } else {
    const json_t *metrics = json_object_get(result, "metrics");
    if (json_object_size(metrics))
      FAIL(res, TSR__AR_ROW_STATUS, where, "failed row (%s) carries samples", status);
  }
  /* Every mapped library must be in the run's hashed inventory. */
  const json_t *libs = json_object_get(result, "libraries");
  for (size_t i = 0; i < json_array_size(libs); i++) {
    const char *p = json_string_value(json_array_get(libs, i));
    int found = p && json_object_get(c->lib_ix, p);
    if (!found)
      FAIL(res, TSR__AR_ARTIFACT_HASH, where, "mapped library %.200s is not in artifacts.libraries",
           p ? p : "(not a string)");
  }
}

/* ---- rows, order ---------------------------------------------------------------- */
/* The design and the realized order's tallies, shared by the order checks. */
typedef struct {
  int *route_at, *shape_at;   /* the design: route / shape at each position of round r */
  int *route_pos, *shape_pos; /* inverse */
  int *pos;                   /* realized position of each (round, shape, route) */
  int *next;                  /* next free position of each (round, shape) */
  int *pc, *pp;               /* balance: position counts and pair counts */
} order_work;

/* Every row: its identity, its place in the realized order against the
 * design and the recorded order; then the row itself (check_row). */
static void check_rows_in_order(tsr__audit_ctx *c, order_work *w) {
  tsr__audit_result *res = c->res;
  const json_t *rows = json_object_get(c->doc, "rows");
  const json_t *order = json_object_get(c->doc, "order");
  size_t nrows = json_array_size(rows);
  int R = c->R, S = c->S, rounds = c->rounds;
  const json_t *realized = json_object_get(order, "realized");
  if (!json_is_array(realized) || json_array_size(realized) != nrows)
    FAIL(res, TSR__AR_ORDER_RECORD, "order.realized", "%zu entries for %zu rows",
         json_array_size(realized), nrows);
  long long prev_d = -1, prev_seq = -1;
  size_t design_problems = 0;
  for (size_t i = 0; i < nrows; i++) {
    const json_t *row = json_array_get(rows, i);
    char where[192];
    tsr__audit_row_where(row, i, where, sizeof where);
    json_int_t seq, round, position, shape_position;
    const char *shape = S_(row, "shape"), *route = S_(row, "route");
    if (!json_is_object(row) || !tsr__audit_int(row, "seq", &seq) ||
        !tsr__audit_int(row, "round", &round) || !tsr__audit_int(row, "position", &position) ||
        !tsr__audit_int(row, "shape_position", &shape_position) || !shape || !route) {
      FAIL(res, TSR__AR_SCHEMA, where, "needs integer seq, round, position, shape_position and "
           "string shape, route");
      continue;
    }
    int si = tsr__audit_shape_index(c, shape), ri = route_index(c, route);
    if (round < 0 || round >= rounds || si < 0 || ri < 0) {
      FAIL(res, TSR__AR_ROW_UNEXPECTED, where, "%s is not part of this run",
           round < 0 || round >= rounds ? "the round" : si < 0 ? "the shape" : "the route");
      continue;
    }
    if (seq <= prev_seq)
      FAIL(res, TSR__AR_ORDER_RECORD, where, "seq %lld does not increase (previous %lld)",
           (long long)seq, prev_seq);
    prev_seq = seq;
    const json_t *re = json_array_get(realized, i);
    json_int_t rseq = -1, rround = -1;
    tsr__audit_int(re, "seq", &rseq);
    tsr__audit_int(re, "round", &rround);
    if (rseq != seq || rround != round || !tsr__audit_is(re, "shape", shape) ||
        !tsr__audit_is(re, "route", route))
      FAIL(res, TSR__AR_ORDER_RECORD, where, "order.realized[%zu] names another execution", i);
    size_t s = ((size_t)round * S + si) * R + ri;
    if (c->slot[s]) {
      FAIL(res, TSR__AR_ROW_DUPLICATE, where, "(round %lld, %s, %s) already ran", (long long)round,
           shape, route);
      continue;
    }
    c->slot[s] = row;
    size_t g = (size_t)round * S + si;
    w->pos[s] = w->next[g]++;
    /* Design index: round-major, then the round's shape order, then its route order. */
    int j = w->shape_pos[(size_t)round * S + si], p = w->route_pos[(size_t)round * R + ri];
    long long d = ((long long)round * S + j) * R + p;
    if ((d <= prev_d || position != p || shape_position != j) && design_problems++ < 50) {
      if (d <= prev_d)
        FAIL(res, TSR__AR_ORDER_DESIGN, where, "ran after an execution that the design places later "
             "(design index %lld ≤ %lld)", d, prev_d);
      else
        FAIL(res, TSR__AR_ORDER_DESIGN, where, "at position %lld, shape position %lld; the design "
             "gives %d, %d", (long long)position, (long long)shape_position, p, j);
    }
    if (d > prev_d) prev_d = d;
    if (w->pos[s] != position && design_problems++ < 50)
      FAIL(res, TSR__AR_ORDER_DESIGN, where, "realized position %d in its (round, shape), recorded %lld",
           w->pos[s], (long long)position);
    check_row(c, row, i, si, ri);
  }
}

/* Every (round, shape, route) of the design has its row. */
static void check_missing_rows(tsr__audit_ctx *c) {
  tsr__audit_result *res = c->res;
  int R = c->R, S = c->S, rounds = c->rounds;
  size_t missing = 0;
  for (int r = 0; r < rounds; r++)
    for (int s = 0; s < S; s++)
      for (int x = 0; x < R; x++)
        if (!c->slot[((size_t)r * S + s) * R + x]) {
          char where[192];
          snprintf(where, sizeof where, "round %d, %.64s, %s", r, c->shapes[s].label, c->base[x]);
          if (missing++ < 200) FAIL(res, TSR__AR_ROW_MISSING, where, "no row");
          else res->total++, res->counts[TSR__AR_ROW_MISSING]++;
        }
}

/* The planned order as recorded: every round the protocol asked for, also
 * where --max-seconds ran fewer (the design of round r does not depend on
 * the number of rounds, so the rounds run are the planned order's prefix). */
static void check_planned(tsr__audit_ctx *c, const order_work *w) {
  tsr__audit_result *res = c->res;
  int R = c->R, S = c->S, rounds = c->rounds_planned;
  const json_t *planned = json_object_get(json_object_get(c->doc, "order"), "planned");
  if (!json_is_array(planned) || json_array_size(planned) != (size_t)rounds)
    FAIL(res, TSR__AR_ORDER_RECORD, "order.planned", "%zu rounds, the protocol has %d",
         json_array_size(planned), rounds);
  for (int r = 0; r < rounds && json_is_array(planned); r++) {
    const json_t *pr = json_array_get(planned, (size_t)r);
    const json_t *prt = json_object_get(pr, "routes"), *psh = json_object_get(pr, "shapes");
    json_int_t rr = -1;
    tsr__audit_int(pr, "round", &rr);
    int ok = rr == r && json_array_size(prt) == (size_t)R && json_array_size(psh) == (size_t)S;
    for (int p = 0; ok && p < R; p++) {
      const char *n = json_string_value(json_array_get(prt, (size_t)p));
      ok = n && !strcmp(n, c->base[w->route_at[(size_t)r * R + p]]);
    }
    for (int j = 0; ok && j < S; j++) {
      const char *n = json_string_value(json_array_get(psh, (size_t)j));
      ok = n && !strcmp(n, c->shapes[w->shape_at[(size_t)r * S + j]].label);
    }
    if (!ok) {
      char where[64];
      snprintf(where, sizeof where, "order.planned[%d]", r);
      FAIL(res, TSR__AR_ORDER_RECORD, where, "differs from the documented design");
    }
  }
}

/* Balance, recomputed from the realized positions. */
static void check_balance(tsr__audit_ctx *c, order_work *w) {
  tsr__audit_result *res = c->res;
  int R = c->R, S = c->S, rounds = c->rounds;
  int problems = tsr__audit_balance(w->pos, R, S, rounds, w->pc, w->pp);
  c->balanced = problems == 0;
  res->order_balanced = c->balanced;
  if (!problems) return;
  char ex[200] = "";
  for (int s = 0; s < S && !ex[0]; s++)
    for (int x = 0; x < R && !ex[0]; x++)
      for (int q = 0; q < R && !ex[0]; q++) {
        const int *P = w->pc + (size_t)s * R * R, *Q = w->pp + (size_t)s * R * R;
        if (P[x * R + q] != P[0])
          snprintf(ex, sizeof ex, "%.64s: %s holds position %d %d times, %s position 0 %d times",
                   c->shapes[s].label, c->base[x], q, P[x * R + q], c->base[0], P[0]);
        else if (q > x && Q[x * R + q] != Q[q * R + x])
          snprintf(ex, sizeof ex, "%.64s: %s precedes %s %d times, the reverse %d times",
                   c->shapes[s].label, c->base[x], c->base[q], Q[x * R + q], Q[q * R + x]);
      }
  if (!ex[0]) snprintf(ex, sizeof ex, "some (round, shape) lacks a route");
  FAIL(res, TSR__AR_ORDER_BALANCE, "order", "%d balance problems over %d rounds (%s)", problems,
       rounds, ex);
}

/* order.check as recorded against the recomputed balance and counts. */
static void check_order_record(tsr__audit_ctx *c, const order_work *w) {
  tsr__audit_result *res = c->res;
  int R = c->R, S = c->S, rounds = c->rounds;
  size_t nrows = json_array_size(json_object_get(c->doc, "rows"));
  const json_t *chk = json_object_get(json_object_get(c->doc, "order"), "check");
  if (!json_is_object(chk)) {
    FAIL(res, TSR__AR_ORDER_RECORD, "order.check", "missing");
    return;
  }
  if (json_is_true(json_object_get(chk, "balanced")) != c->balanced)
    FAIL(res, TSR__AR_ORDER_RECORD, "order.check.balanced", "records %s, the realized order is %s",
         json_is_true(json_object_get(chk, "balanced")) ? "true" : "false",
         c->balanced ? "balanced" : "not balanced");
  json_int_t v = -1;
  if (!tsr__audit_int(chk, "rounds", &v) || v != rounds)
    FAIL(res, TSR__AR_ORDER_RECORD, "order.check.rounds", "%lld, the protocol has %d", (long long)v, rounds);
  if (!tsr__audit_int(chk, "entries", &v) || v != (json_int_t)nrows)
    FAIL(res, TSR__AR_ORDER_RECORD, "order.check.entries", "%lld for %zu rows", (long long)v, nrows);
  static const char *const mats[2] = {"position_counts", "pair_counts"};
  for (int k = 0; k < 2; k++) {
    const json_t *a = json_object_get(chk, mats[k]);
    const int *mine = k ? w->pp : w->pc;
    int ok = json_array_size(a) == (size_t)S;
    for (int s = 0; ok && s < S; s++) {
      const json_t *as = json_array_get(a, (size_t)s);
      ok = json_array_size(as) == (size_t)R;
      for (int x = 0; ok && x < R; x++) {
        const json_t *ax = json_array_get(as, (size_t)x);
        ok = json_array_size(ax) == (size_t)R;
        for (int y = 0; ok && y < R; y++) {
          const json_t *e = json_array_get(ax, (size_t)y);
          ok = json_is_integer(e) && json_integer_value(e) == mine[((size_t)s * R + x) * R + y];
        }
      }
    }
    if (!ok) {
      char where[64];
      snprintf(where, sizeof where, "order.check.%s", mats[k]);
      FAIL(res, TSR__AR_ORDER_RECORD, where, "differs from the counts of the realized order");
    }
  }
}

/* Source hashes: one per (generated route, shape), the same in every round. */
static void check_source_hashes(tsr__audit_ctx *c) {
  int R = c->R, S = c->S, rounds = c->rounds;
  for (int x = 0; x < R; x++) {
    const route_fmt *f = route_fmt_find(c->base[x]);
    if (!f || !f->generated) continue;
    for (int s = 0; s < S; s++) {
      const char *first = NULL;
      for (int r = 0; r < rounds; r++) {
        const json_t *row = c->slot[((size_t)r * S + s) * R + x];
        const char *h = S_(json_object_get(json_object_get(row, "result"), "plan_info"), "source_sha256");
        if (!h || !tsr__audit_is(row, "status", "ok")) continue;
        if (!first) first = h;
        else if (strcmp(first, h)) {
          char where[192];
          tsr__audit_row_where(row, 0, where, sizeof where);
          FAIL(c->res, TSR__AR_SOURCE_HASH, where, "source_sha256 %.16s… differs from round 0's %.16s… "
               "(same plan must give the same source)", h, first);
        }
      }
    }
  }
}

/* Samples → per-round p50 of every valid row, for the tables and report. */
static void compute_p50s(tsr__audit_ctx *c) {
  int R = c->R, S = c->S, rounds = c->rounds;
  size_t slots = (size_t)rounds * S * R;
  c->p50 = malloc((size_t)TSR__AUDIT_METRICS * slots * sizeof *c->p50);
  if (!c->p50) return;
  for (size_t i = 0; i < (size_t)TSR__AUDIT_METRICS * slots; i++) c->p50[i] = NAN;
  for (int r = 0; r < rounds; r++)
    for (int s = 0; s < S; s++)
      for (int x = 0; x < R; x++) {
        const json_t *row = c->slot[((size_t)r * S + s) * R + x];
        const json_t *result = json_object_get(row, "result");
        if (!row || !tsr__audit_is(row, "status", "ok") || !tsr__audit_is(result, "status", "ok"))
          continue;
        for (int m = 0; m < TSR__AUDIT_METRICS; m++) {
          if (tsr__audit_metric_is_gpu(m) != c->base_gpu[x]) continue;
          const json_t *arr = json_object_get(json_object_get(result, "metrics"), tsr__audit_metric_names[m]);
          size_t n = json_array_size(arr);
          if (!n) continue;
          int64_t *ns = malloc(n * sizeof *ns), *calls = malloc(n * sizeof *calls);
          if (!ns || !calls) {
            free(ns);
            free(calls);
            continue;
          }
          for (size_t q = 0; q < n; q++) {
            const json_t *e = json_array_get(arr, q), *a = json_object_get(e, "ns"), *b = json_object_get(e, "calls");
            ns[q] = json_is_integer(a) ? json_integer_value(a) : 0;
            calls[q] = json_is_integer(b) ? json_integer_value(b) : 0;
          }
          c->p50[(((size_t)m * S + s) * R + x) * rounds + r] = tsr__audit_row_p50(ns, calls, n);
          free(ns);
          free(calls);
        }
      }
}

static void check_rows_and_order(tsr__audit_ctx *c) {
  int R = c->R, S = c->S, rounds = c->rounds, planned = c->rounds_planned;
  size_t slots = (size_t)rounds * S * R;
  order_work w;
  c->slot = calloc(slots, sizeof *c->slot);
  /* the design of every planned round (the rounds run, where --max-seconds
   * stopped the run, are its prefix) */
  w.route_at = malloc((size_t)planned * R * sizeof *w.route_at);
  w.shape_at = malloc((size_t)planned * S * sizeof *w.shape_at);
  w.route_pos = malloc((size_t)rounds * R * sizeof *w.route_pos);
  w.shape_pos = malloc((size_t)rounds * S * sizeof *w.shape_pos);
  w.pos = malloc(slots * sizeof *w.pos);
  w.next = calloc((size_t)rounds * S, sizeof *w.next);
  w.pc = malloc((size_t)S * R * R * sizeof *w.pc);
  w.pp = malloc((size_t)S * R * R * sizeof *w.pp);
  if (!c->slot || !w.route_at || !w.shape_at || !w.route_pos || !w.shape_pos || !w.pos || !w.next ||
      !w.pc || !w.pp) {
    FAIL(c->res, TSR__AR_PROTOCOL, "protocol", "out of memory for %zu order slots", slots);
    c->usable = 0;
    goto out;
  }
  tsr__audit_design(R, S, planned, w.route_at, w.shape_at);
  for (int r = 0; r < rounds; r++) {
    for (int p = 0; p < R; p++) w.route_pos[(size_t)r * R + w.route_at[(size_t)r * R + p]] = p;
    for (int j = 0; j < S; j++) w.shape_pos[(size_t)r * S + w.shape_at[(size_t)r * S + j]] = j;
  }
  for (size_t i = 0; i < slots; i++) w.pos[i] = -1;
  check_rows_in_order(c, &w);
  check_missing_rows(c);
  check_planned(c, &w);
  check_balance(c, &w);
  check_order_record(c, &w);
  check_source_hashes(c);
  compute_p50s(c);
out:
  free(w.route_at);
  free(w.shape_at);
  free(w.route_pos);
  free(w.shape_pos);
  free(w.pos);
  free(w.next);
  free(w.pc);
  free(w.pp);
}

/* ---- artifacts ---------------------------------------------------------------- */
static void hash_on_disk(tsr__audit_ctx *c, const char *where, const char *path, const char *sha) {
  if (!c->opt || !c->opt->current_artifacts || !path || !is_hex64(sha)) return;
  char now[65], why[300];
  c->res->artifacts_hashed++;
  /* The path comes from the document: a FIFO or a device there must not
   * hang the hash (sys/file.h refuses anything but a regular file). */
  int fd;
  uint64_t size;
  if (tsr__open_regular(path, UINT64_MAX, &fd, &size, why, sizeof why)) {
    FAIL(c->res, TSR__AR_ARTIFACT_CHANGED, where, "%.300s", why);
    return;
  }
  close(fd);
  if (tsr__sha256_file(path, now))
    FAIL(c->res, TSR__AR_ARTIFACT_CHANGED, where, "%.200s cannot be read now", path);
  else if (strcmp(now, sha))
    FAIL(c->res, TSR__AR_ARTIFACT_CHANGED, where, "%.200s has sha256 %.16s… on disk, recorded %.16s…",
         path, now, sha);
}

static void check_artifacts(tsr__audit_ctx *c) {
  tsr__audit_result *res = c->res;
  const json_t *art = json_object_get(c->doc, "artifacts");
  const json_t *exe = json_object_get(art, "executable");
  const char *sha = S_(exe, "sha256"), *end = S_(exe, "sha256_at_end"), *path = S_(exe, "path");
  if (!path || !is_hex64(sha))
    FAIL(res, TSR__AR_ARTIFACT_HASH, "artifacts.executable", "path or sha256 %s",
         sha ? "malformed" : "missing");
  if (!is_hex64(end))
    FAIL(res, TSR__AR_ARTIFACT_HASH, "artifacts.executable.sha256_at_end", "%s",
         end ? "malformed" : "missing");
  else if (is_hex64(sha) && strcmp(sha, end))
    FAIL(res, TSR__AR_ARTIFACT_CHANGED, "artifacts.executable", "sha256 %.16s… at the start, %.16s… "
         "at the end: the executable changed during the run", sha, end);
  if (!json_is_true(json_object_get(exe, "unchanged")))
    FAIL(res, TSR__AR_ARTIFACT_CHANGED, "artifacts.executable.unchanged", "is not true");
  hash_on_disk(c, "artifacts.executable", path, sha);
  const json_t *libs = json_object_get(art, "libraries");
  if (!json_is_array(libs)) FAIL(res, TSR__AR_ARTIFACT_HASH, "artifacts.libraries", "missing");
  for (size_t i = 0; i < json_array_size(libs); i++) {
    const json_t *l = json_array_get(libs, i);
    char where[64];
    snprintf(where, sizeof where, "artifacts.libraries[%zu]", i);
    if (!S_(l, "path") || !is_hex64(S_(l, "sha256")))
      FAIL(res, TSR__AR_ARTIFACT_HASH, where, "%.200s: sha256 missing or malformed",
           S_(l, "path") ? S_(l, "path") : "(no path)");
    else
      hash_on_disk(c, where, S_(l, "path"), S_(l, "sha256"));
  }
  const json_t *ts = json_object_get(art, "torch_script");
  int torch = route_index(c, "torch") >= 0;
  if (torch && (!S_(ts, "path") || !is_hex64(S_(ts, "sha256"))))
    FAIL(res, TSR__AR_ARTIFACT_HASH, "artifacts.torch_script", "the torch route ran but the script's "
         "sha256 is missing or malformed");
  if (json_is_object(ts) && is_hex64(S_(ts, "sha256")))
    hash_on_disk(c, "artifacts.torch_script", S_(ts, "path"), S_(ts, "sha256"));
}

/* --current-artifacts: regenerate each generated source from the recorded
 * problem and plan with this build's emitter and compare its SHA-256. */
static void regenerate_sources(tsr__audit_ctx *c) {
  if (!c->opt || !c->opt->current_artifacts || !c->usable || !c->slot) return;
  for (int x = 0; x < c->R; x++) {
    const route_fmt *f = route_fmt_find(c->base[x]);
    if (!f || !f->generated) continue;
    for (int s = 0; s < c->S; s++) {
      const json_t *row = NULL;
      for (int r = 0; r < c->rounds && !row; r++) {
        const json_t *cand = c->slot[((size_t)r * c->S + s) * c->R + x];
        if (cand && !!tsr__audit_is(cand, "status", "ok")) row = cand;
      }
      if (!row) continue;
      char where[192];
      tsr__audit_row_where(row, 0, where, sizeof where);
      const json_t *result = json_object_get(row, "result"), *prob = json_object_get(result, "problem");
      const char *want = S_(json_object_get(result, "plan_info"), "source_sha256");
      const char *plan_text = S_(json_object_get(result, "plan_info"), "plan");
      if (!is_hex64(want)) continue; /* already reported */
      tsr_problem p;
      tsr_problem_init(&p, c->shapes[s].m, c->shapes[s].n, c->shapes[s].k);
      p.batch = c->shapes[s].batch;
      p.op_a = tsr__audit_is(prob, "op_a", "T") ? TSR_OP_T : TSR_OP_N;
      p.op_b = tsr__audit_is(prob, "op_b", "T") ? TSR_OP_T : TSR_OP_N;
      double al = 1, be = 0;
      tsr__audit_num(json_object_get(prob, "alpha"), &al);
      tsr__audit_num(json_object_get(prob, "beta"), &be);
      p.alpha = (float)al;
      p.beta = (float)be;
      char msg[512], got[65] = "";
      if (tsr_problem_check(&p, msg, sizeof msg)) {
        FAIL(c->res, TSR__AR_SOURCE_HASH, where, "cannot regenerate the source: %s", msg);
        continue;
      }
      /* the backend's own source slot (the emitter for cuda, the fixed
       * kernel for hand): what this build compiles for the row's plan */
      const char *prec = S_(result, "precision");
      if (prec) tsr_precision_parse(prec, &p.precision, msg, sizeof msg);
      tsr_backend_kind bk = TSR_BACKEND_AUTO;
      int known = tsr_backend_parse(f->backend, &bk, msg, sizeof msg) == TSR_OK && bk != TSR_BACKEND_AUTO;
      tsr_plan plan;
      if (known) tsr_plan_builtin(NULL, bk, &p, &plan); /* every key comes from plan_text */
      char *src = NULL;
      if (!known || !plan_text || tsr_plan_parse(plan_text, &plan, msg, sizeof msg) ||
          !(src = tsr_plan_source(bk, &p, &plan))) {
        FAIL(c->res, TSR__AR_SOURCE_HASH, where, "cannot regenerate the source from plan '%.120s'",
             plan_text ? plan_text : "(missing)");
        continue;
      }
      tsr__sha256_hex(src, strlen(src), got);
      free(src);
      c->res->sources_regenerated++;
      if (strcmp(got, want))
        FAIL(c->res, TSR__AR_SOURCE_HASH, where, "this build generates source %.16s…, recorded %.16s…",
             got, want);
    }
  }
}

static void check_summary(tsr__audit_ctx *c) {
  const json_t *sum = json_object_get(c->doc, "summary"), *rows = json_object_get(c->doc, "rows");
  size_t failed = 0;
  for (size_t i = 0; i < json_array_size(rows); i++) {
    const char *st = S_(json_array_get(rows, i), "status");
    if (!st || strcmp(st, "ok")) failed++;
  }
  json_int_t n = -1, f = -1;
  if (!tsr__audit_int(sum, "rows", &n) || n != (json_int_t)json_array_size(rows))
    FAIL(c->res, TSR__AR_SUMMARY, "summary.rows", "%lld, results.json has %zu rows", (long long)n,
         json_array_size(rows));
  if (!tsr__audit_int(sum, "failed_rows", &f) || f != (json_int_t)failed)
    FAIL(c->res, TSR__AR_SUMMARY, "summary.failed_rows", "%lld, results.json has %zu failed rows",
         (long long)f, failed);
  if (c->usable && json_array_size(rows) != (size_t)c->rounds * c->S * c->R && c->res->counts[TSR__AR_ROW_MISSING] == 0 &&
      c->res->counts[TSR__AR_ROW_DUPLICATE] == 0 && c->res->counts[TSR__AR_ROW_UNEXPECTED] == 0 &&
      c->res->counts[TSR__AR_SCHEMA] == 0)
    FAIL(c->res, TSR__AR_SUMMARY, "rows", "%zu rows for %d rounds × %d shapes × %d routes",
         json_array_size(rows), c->rounds, c->S, c->R);
}

void tsr__audit_check(const tsr__audit_input *in, const tsr__audit_options *opt,
                      tsr__audit_result *res) {
  tsr__audit_ctx c;
  memset(&c, 0, sizeof c);
  c.in = in;
  c.opt = opt;
  c.res = res;
  c.doc = in->results;
  c.version = tsr__audit_is(c.doc, "schema", TSR_AUDIT_BENCH_SCHEMA)      ? 3
              : tsr__audit_is(c.doc, "schema", TSR_AUDIT_BENCH_SCHEMA_V2) ? 2
                                                                          : 1;
  c.v2 = c.version >= 2;
  c.v3 = c.version >= 3;
  res->schema_version = c.version;
  res->legacy_schema = !c.v3;
  if (c.version == 1)
    tsr__audit_note(res, "schema tessera-bench/1, written before the accuracy contract "
                         "(docs/accuracy.md): it carries no precision modes or accuracy receipts to audit");
  if (!c.v3)
    tsr__audit_note(res, "schema tessera-bench/%d, written before tamper evidence (tessera-bench/3): "
                         "no hash chain, digest or output hashes, so nothing pins its raw samples; "
                         "audited on what it records", c.version);
  check_protocol(&c);
  check_routes(&c);
  if (c.usable) tsr__audit_check_command_line(&c);
  res->rounds = c.rounds;
  res->shapes = c.S;
  res->routes = c.R;
  if (c.usable && (size_t)c.rounds * c.S * c.R > TSR_AUDIT_MAX_SLOTS) {
    FAIL(res, TSR__AR_PROTOCOL, "protocol.rounds", "%d rounds × %d shapes × %d routes is beyond %u rows",
         c.rounds, c.S, c.R, TSR_AUDIT_MAX_SLOTS);
    c.usable = 0;
  }
  /* The inventory's paths as a set, for the rows' mapped libraries. */
  c.lib_ix = json_object();
  const json_t *inv = json_object_get(json_object_get(c.doc, "artifacts"), "libraries");
  for (size_t i = 0; c.lib_ix && i < json_array_size(inv); i++) {
    const char *q = S_(json_array_get(inv, i), "path");
    if (q) json_object_set_new(c.lib_ix, q, json_true());
  }
  if (c.usable) check_rows_and_order(&c);
  else if (json_array_size(json_object_get(c.doc, "rows")))
    FAIL(res, TSR__AR_PROTOCOL, "rows", "not audited: the protocol, shapes or routes are unusable");
  if (c.usable && c.slot) tsr__audit_check_run_evidence(&c);
  tsr__audit_check_chain(&c);
  check_artifacts(&c);
  regenerate_sources(&c);
  check_summary(&c);
  if (c.usable && c.p50 && !(opt && opt->results_only)) {
    tsr__audit_check_tables(&c);
    tsr__audit_check_report(&c);
    tsr__audit_check_outputs(&c);
  }
  free(c.shapes);
  json_decref(c.shape_ix);
  json_decref(c.lib_ix);
  free(c.slot);
  free(c.p50);
}

json_t *tsr__audit_result_json(const tsr__audit_result *r, const char *dir) {
  json_t *o = json_object(), *f = json_array(), *counts = json_object();
  json_object_set_new(o, "schema", json_string(TSR_AUDIT_SCHEMA));
  json_object_set_new(o, "legacy_schema", json_boolean(r->legacy_schema));
  json_object_set_new(o, "schema_version", json_integer(r->schema_version));
  json_object_set_new(o, "digest", r->digest[0] ? json_string(r->digest) : json_null());
  json_object_set_new(o, "digest_verified", json_boolean(r->digest_verified));
  json_t *notes = json_array();
  for (int i = 0; i < r->nnotes; i++) json_array_append_new(notes, json_string(r->notes[i]));
  json_object_set_new(o, "notes", notes);
  json_object_set_new(o, "dir", dir ? json_string(dir) : json_null());
  json_object_set_new(o, "verdict", json_string(r->total ? "fail" : "pass"));
  json_object_set_new(o, "findings_total", json_integer((json_int_t)r->total));
  for (int i = 0; i < TSR__AR_COUNT; i++)
    if (r->counts[i]) json_object_set_new(counts, reason_names[i], json_integer((json_int_t)r->counts[i]));
  json_object_set_new(o, "reasons", counts);
  for (size_t i = 0; i < r->n; i++) {
    json_t *e = json_object();
    json_object_set_new(e, "reason", json_string(reason_names[r->items[i].reason]));
    json_object_set_new(e, "where", json_string(r->items[i].where));
    json_object_set_new(e, "detail", json_string(r->items[i].detail));
    json_array_append_new(f, e);
  }
  json_object_set_new(o, "findings", f);
  json_t *cov = json_object();
  json_object_set_new(cov, "rows", json_integer((json_int_t)r->rows));
  json_object_set_new(cov, "rows_ok", json_integer((json_int_t)r->rows_ok));
  json_object_set_new(cov, "rows_failed", json_integer((json_int_t)r->rows_failed));
  json_object_set_new(cov, "rounds", json_integer(r->rounds));
  json_object_set_new(cov, "shapes", json_integer(r->shapes));
  json_object_set_new(cov, "routes", json_integer(r->routes));
  json_object_set_new(cov, "samples", json_integer((json_int_t)r->samples));
  json_object_set_new(cov, "receipts", json_integer((json_int_t)r->receipts));
  json_object_set_new(cov, "elements_validated", json_integer((json_int_t)r->elements));
  json_object_set_new(cov, "order_balanced", json_boolean(r->order_balanced));
  json_object_set_new(cov, "table_cells", json_integer((json_int_t)r->cells));
  json_object_set_new(cov, "table_ratios", json_integer((json_int_t)r->ratios));
  json_object_set_new(cov, "report_numbers", json_integer((json_int_t)r->report_numbers));
  json_object_set_new(cov, "artifacts_hashed", json_integer((json_int_t)r->artifacts_hashed));
  json_object_set_new(cov, "sources_regenerated", json_integer((json_int_t)r->sources_regenerated));
  json_object_set_new(cov, "svg_numbers", json_integer((json_int_t)r->svg_numbers));
  json_object_set_new(cov, "files_compared", json_integer((json_int_t)r->files_compared));
  json_object_set_new(cov, "output_hashes", json_integer((json_int_t)r->output_hashes));
  json_object_set_new(cov, "chain_links", json_integer((json_int_t)r->chain_links));
  json_object_set_new(cov, "logs_checked", json_integer((json_int_t)r->logs_checked));
  json_object_set_new(o, "checked", cov);
  return o;
}
