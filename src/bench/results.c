/* Raw results document helpers: non-finite reals, receipts, atomic write. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"

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

int tsr__json_write_atomic(const json_t *doc, const char *path, char *msg, size_t cap) {
  char tmp[4096];
  int len = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  if (len < 0 || (size_t)len >= sizeof tmp) {
    snprintf(msg, cap, "path too long: %s", path);
    return -1;
  }
  char *text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
  if (!text) {
    snprintf(msg, cap, "cannot serialize JSON for %s", path);
    return -1;
  }
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    snprintf(msg, cap, "cannot create %s: %s", tmp, strerror(errno));
    free(text);
    return -1;
  }
  size_t total = strlen(text), off = 0;
  int ok = 1;
  while (ok && off < total) {
    ssize_t w = write(fd, text + off, total - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ok = 0;
    else off += (size_t)w;
  }
  if (ok && write(fd, "\n", 1) != 1) ok = 0;
  if (ok && fsync(fd) != 0) ok = 0;
  int err = errno;
  if (close(fd) != 0) ok = 0;
  free(text);
  if (!ok) {
    snprintf(msg, cap, "cannot write %s: %s", tmp, strerror(err));
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, path) != 0) {
    snprintf(msg, cap, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}
