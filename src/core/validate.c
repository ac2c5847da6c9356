/* Complete-output validation against the FP64 oracle; NaN/Inf never pass. */
#include <math.h>

#include "core/context.h"
#include "core/inputs.h"

void tsr_validate(const tsr_problem *p, const float *c, const double *ref, double atol,
                  double rtol, tsr_receipt *r) {
  int64_t cr, cc, ldc, sc;
  tsr__stored_dims(p, TSR_TENSOR_C, &cr, &cc, &ldc, &sc);
  *r = (tsr_receipt){0};
  r->first_fail = -1;
  r->atol = atol;
  r->rtol = rtol;
  double err2 = 0.0, ref2 = 0.0;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t i = 0; i < p->m; i++)
      for (int64_t j = 0; j < p->n; j++) {
        int64_t li = (b * p->m + i) * p->n + j;
        double want = ref[li];
        double got = (double)c[b * sc + i * ldc + j];
        double err = fabs(got - want);
        int ok = isfinite(got) && err <= atol + rtol * fabs(want);
        if (!isfinite(got)) err = INFINITY;
        r->checked++;
        if (!ok) {
          if (r->failed == 0) r->first_fail = li;
          r->failed++;
        }
        if (err > r->max_abs_err || (isnan(err) && !isnan(r->max_abs_err))) r->max_abs_err = err;
        double rel = want != 0.0 ? err / fabs(want) : (err == 0.0 ? 0.0 : INFINITY);
        if (rel > r->max_rel_err) r->max_rel_err = rel;
        err2 += err * err;
        ref2 += want * want;
      }
  r->rel_fro_err = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
  r->passed = r->failed == 0 && r->checked == p->batch * p->m * p->n;
}
