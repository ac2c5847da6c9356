/* Statistics of the protocol: per-round p50, median of round p50s, paired
 * same-round ratios. Never a ratio of medians, never a selected minimum. */
#include <math.h>
#include <stdlib.h>

#include "measure/stats.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double tsr__median(const double *v, size_t n) {
  double *t = malloc((n ? n : 1) * sizeof *t);
  if (!t) return NAN;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(v[i])) t[m++] = v[i];
  double med = NAN;
  if (m) {
    qsort(t, m, sizeof *t, cmp_double);
    med = (m % 2) ? t[m / 2] : 0.5 * (t[m / 2 - 1] + t[m / 2]);
  }
  free(t);
  return med;
}

double tsr__sample_p50(const int64_t *ns, const int64_t *calls, size_t n) {
  double *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return NAN;
  for (size_t i = 0; i < n; i++) v[i] = calls[i] > 0 ? (double)ns[i] / (double)calls[i] : NAN;
  double med = tsr__median(v, n);
  free(v);
  return med;
}

void tsr__paired_ratios(const double *x, const double *y, size_t rounds, double *ratios,
                        tsr__paired *out) {
  double *t = malloc((rounds ? rounds : 1) * sizeof *t);
  *out = (tsr__paired){0, NAN, NAN, NAN, 0};
  for (size_t r = 0; r < rounds; r++) {
    double q = NAN;
    if (isfinite(x[r]) && isfinite(y[r]) && x[r] > 0 && y[r] > 0) q = x[r] / y[r];
    if (ratios) ratios[r] = q;
    if (t) t[r] = q;
    if (!isfinite(q)) continue;
    if (out->count == 0 || q < out->min) out->min = q;
    if (out->count == 0 || q > out->max) out->max = q;
    out->count++;
    if (q > 1.0) out->slower++;
  }
  if (t) out->median = tsr__median(t, rounds);
  free(t);
}

double tsr__spread(const double *v, size_t n) {
  double lo = NAN, hi = NAN;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(v[i])) continue;
    if (!(v[i] >= lo)) lo = v[i];
    if (!(v[i] <= hi)) hi = v[i];
  }
  if (!isfinite(lo) || lo <= 0) return NAN;
  return hi / lo - 1.0;
}
