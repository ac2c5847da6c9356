/* The auditor's own statistics (docs/protocol.md "Statistics"), written
 * independently of src/measure/stats.c: per-row p50 of ns/calls, median of
 * per-round p50s, spread, same-round paired ratios. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"

/* Insertion sort: rounds and samples are small, and it keeps the auditor
 * free of any shared sorting helper. */
static void sort_doubles(double *v, size_t n) {
  for (size_t i = 1; i < n; i++) {
    double x = v[i];
    size_t j = i;
    while (j > 0 && v[j - 1] > x) {
      v[j] = v[j - 1];
      j--;
    }
    v[j] = x;
  }
}

double tsr__audit_median(const double *v, size_t n) {
  if (!n) return NAN;
  double *t = malloc(n * sizeof *t);
  if (!t) return NAN;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(v[i])) t[m++] = v[i];
  double med = NAN;
  if (m) {
    sort_doubles(t, m);
    med = (m & 1) ? t[m / 2] : (t[m / 2 - 1] + t[m / 2]) / 2.0;
  }
  free(t);
  return med;
}

double tsr__audit_row_p50(const int64_t *ns, const int64_t *calls, size_t n) {
  if (!n) return NAN;
  double *v = malloc(n * sizeof *v);
  if (!v) return NAN;
  for (size_t i = 0; i < n; i++)
    v[i] = (ns[i] > 0 && calls[i] > 0) ? (double)ns[i] / (double)calls[i] : NAN;
  double p = tsr__audit_median(v, n);
  free(v);
  return p;
}

double tsr__audit_spread(const double *v, size_t n) {
  double lo = INFINITY, hi = -INFINITY;
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(v[i])) continue;
    m++;
    if (v[i] < lo) lo = v[i];
    if (v[i] > hi) hi = v[i];
  }
  if (!m || lo <= 0) return NAN;
  return hi / lo - 1.0;
}

void tsr__audit_pairs(const double *ref, const double *peer, size_t rounds, double *ratios,
                      tsr__audit_pair *out) {
  out->count = out->slower = 0;
  out->median = out->min = out->max = NAN;
  double *q = malloc((rounds ? rounds : 1) * sizeof *q);
  for (size_t r = 0; r < rounds; r++) {
    double x = ref[r], y = peer[r], v = NAN;
    if (isfinite(x) && isfinite(y) && x > 0 && y > 0) v = x / y;
    if (ratios) ratios[r] = v;
    if (q) q[r] = v;
    if (isnan(v)) continue;
    out->min = out->count ? fmin(out->min, v) : v;
    out->max = out->count ? fmax(out->max, v) : v;
    out->count++;
    if (v > 1.0) out->slower++;
  }
  if (q) out->median = tsr__audit_median(q, rounds);
  free(q);
}

int tsr__audit_close(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (a == b) return 1;
  double scale = fmax(fabs(a), fabs(b));
  return fabs(a - b) <= TSR_AUDIT_RTOL * scale;
}

int tsr__audit_printed_equal(const char *text, const char *fmt, double v) {
  const double f[3] = {1.0, 1.0 + TSR_AUDIT_RTOL, 1.0 - TSR_AUDIT_RTOL};
  for (int i = 0; i < 3; i++) {
    char buf[64];
    snprintf(buf, sizeof buf, fmt, v * f[i]);
    if (!strcmp(buf, text)) return 1;
  }
  return 0;
}
