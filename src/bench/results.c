/* Raw results document helpers: non-finite reals, receipts, atomic write. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "core/hash.h"
#include "sys/file.h"

json_t *tsr__json_real(double v) {
  if (isfinite(v)) return json_real(v);
  if (isnan(v)) return json_string("nan");
  return json_string(v > 0 ? "inf" : "-inf");
}

double tsr__json_to_double(const json_t *v) {
  if (json_is_number(v)) return json_number_value(v);
  if (json_is_string(v)) {
    const char *s = json_string_value(v);
    if (!strcmp(s, "inf")) return INFINITY;
    if (!strcmp(s, "-inf")) return -INFINITY;
  }
  return NAN;
}

json_t *tsr__receipt_json(const tsr_receipt *r, const char *phase, int64_t expected) {
  json_t *o = json_object();
  json_object_set_new(o, "phase", json_string(phase));
  json_object_set_new(o, "checked", json_integer(r->checked));
  json_object_set_new(o, "expected", json_integer(expected));
  json_object_set_new(o, "failed", json_integer(r->failed));
  json_object_set_new(o, "first_fail", json_integer(r->first_fail));
  json_object_set_new(o, "max_abs_err", tsr__json_real(r->max_abs_err));
  json_object_set_new(o, "max_rel_err", tsr__json_real(r->max_rel_err));
  json_object_set_new(o, "rel_fro_err", tsr__json_real(r->rel_fro_err));
  json_object_set_new(o, "atol", tsr__json_real(r->atol));
  json_object_set_new(o, "rtol", tsr__json_real(r->rtol));
  json_object_set_new(o, "passed", json_boolean(r->passed && r->checked == expected));
  /* contract receipts (docs/accuracy.md): the figures the audit re-judges */
  if (r->contract != TSR_PREC_AUTO) {
    json_object_set_new(o, "contract", json_string(tsr_precision_name(r->contract)));
    json_object_set_new(o, "strict_rel_fro", tsr__json_real(r->strict_rel_fro));
    json_object_set_new(o, "fro_limit", isnan(r->fro_limit) ? json_null() : tsr__json_real(r->fro_limit));
    json_object_set_new(o, "worst_bound_ratio", tsr__json_real(r->worst_bound_ratio));
    json_object_set_new(o, "bound_failed", json_integer(r->bound_failed));
    json_object_set_new(o, "class_failed", json_integer(r->class_failed));
  }
  return o;
}

char *tsr__json_file_text(const json_t *doc, size_t *len) {
  char *text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
  if (!text) return NULL;
  size_t n = strlen(text);
  char *t = realloc(text, n + 2);
  if (!t) {
    free(text);
    return NULL;
  }
  t[n] = '\n';
  t[n + 1] = '\0';
  *len = n + 1;
  return t;
}

int tsr__json_write_atomic(const json_t *doc, const char *path, char *msg, size_t cap) {
  size_t len = 0;
  char *text = tsr__json_file_text(doc, &len);
  if (!text) {
    snprintf(msg, cap, "cannot serialize JSON for %s", path);
    return -1;
  }
  tsr__span part = {text, len};
  int rc = tsr__write_atomic(path, &part, 1, msg, cap) ? -1 : 0;
  free(text);
  return rc;
}

/* ---- tamper evidence (docs/protocol.md, "Hash chain and digest") ---------- */
char *tsr__canonical_json(const json_t *v) {
  return json_dumps(v, TSR_BENCH_CANONICAL_FLAGS);
}

/* SHA-256 of prefix || [prev || "\n"] || canon(v). */
static int hash_tagged(const char *prefix, const char *prev, const json_t *v, char out[65]) {
  char *text = tsr__canonical_json(v);
  if (!text) return -1;
  size_t lp = strlen(prefix), lv = prev ? strlen(prev) + 1 : 0, lt = strlen(text);
  char *buf = malloc(lp + lv + lt + 1);
  int rc = -1;
  if (buf) {
    memcpy(buf, prefix, lp);
    if (prev) {
      memcpy(buf + lp, prev, lv - 1);
      buf[lp + lv - 1] = '\n';
    }
    memcpy(buf + lp + lv, text, lt);
    rc = tsr__sha256_hex(buf, lp + lv + lt, out);
  }
  free(buf);
  free(text);
  return rc;
}

/* The fields fixed before the first row: what the chain starts from. */
static json_t *genesis_object(const json_t *doc) {
  static const char *const top[] = {"schema", "tessera_version", "started_utc", "command_line",
                                    "protocol", "host", "device", "routes",
                                    "oracle_precompute", "torch_process"};
  json_t *g = json_object();
  for (size_t i = 0; i < sizeof top / sizeof *top; i++) {
    json_t *v = json_object_get(doc, top[i]);
    if (v) json_object_set(g, top[i], v);
  }
  const json_t *art = json_object_get(doc, "artifacts");
  const json_t *exe = json_object_get(art, "executable");
  json_t *a = json_object(), *e = json_object();
  static const char *const exe_keys[] = {"path", "sha256"};
  for (int i = 0; i < 2; i++) {
    json_t *v = json_object_get(exe, exe_keys[i]);
    if (v) json_object_set(e, exe_keys[i], v);
  }
  json_object_set_new(a, "executable", e);
  if (json_object_get(art, "torch_script"))
    json_object_set(a, "torch_script", json_object_get(art, "torch_script"));
  json_object_set_new(g, "artifacts", a);
  const json_t *order = json_object_get(doc, "order");
  json_t *o = json_object();
  static const char *const order_keys[] = {"base_routes", "design", "planned"};
  for (int i = 0; i < 3; i++) {
    json_t *v = json_object_get(order, order_keys[i]);
    if (v) json_object_set(o, order_keys[i], v);
  }
  json_object_set_new(g, "order", o);
  return g;
}

int tsr__chain_genesis(const json_t *doc, char out[65]) {
  json_t *g = genesis_object(doc);
  int rc = hash_tagged("tessera-bench/3 genesis\n", NULL, g, out);
  json_decref(g);
  return rc;
}

int tsr__chain_link(const char prev[65], const json_t *row, char out[65]) {
  json_t *r = json_copy((json_t *)row); /* shallow: only "chain" is left out */
  if (!r) return -1;
  json_object_del(r, "chain");
  int rc = hash_tagged("tessera-bench/3 row\n", prev, r, out);
  json_decref(r);
  return rc;
}

int tsr__chain_digest(const json_t *doc, char out[65]) {
  json_t *d = json_copy((json_t *)doc);
  if (!d) return -1;
  json_object_del(d, "digest");
  int rc = hash_tagged("tessera-bench/3 digest\n", NULL, d, out);
  json_decref(d);
  return rc;
}
