#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/walk_enum.h"

void tsr__walk_enumerate(const tsr_walk *w, uint32_t h, uint32_t wdt, uint32_t *rows,
                         uint32_t *cols) {
  uint64_t n = 0;
  if (w->kind == TSR_WALK_LINEAR) {
    for (uint32_t r = 0; r < h; r++)
      for (uint32_t c = 0; c < wdt; c++) rows[n] = r, cols[n++] = c;
    return;
  }
  uint32_t R = w->r;
  /* Stripe level: R program rows at a time, the last one possibly shorter. */
  for (uint64_t s = 0; s < h; s += R) {
    uint32_t sh = (uint32_t)(h - s < R ? h - s : R);
    if (w->kind == TSR_WALK_STRIPE) {
      /* Column-first inside the stripe. */
      for (uint32_t c = 0; c < wdt; c++)
        for (uint32_t r = 0; r < sh; r++) rows[n] = (uint32_t)s + r, cols[n++] = c;
      continue;
    }
    uint32_t C = w->c < wdt ? w->c : wdt;
    /* Rectangle level: C columns at a time, row-major inside. */
    for (uint64_t c0 = 0; c0 < wdt; c0 += C) {
      uint32_t sw = (uint32_t)(wdt - c0 < C ? wdt - c0 : C);
      for (uint32_t r = 0; r < sh; r++)
        for (uint32_t c = 0; c < sw; c++) rows[n] = (uint32_t)s + r, cols[n++] = (uint32_t)c0 + c;
    }
  }
}

int tsr__walk_check_one(const tsr_walk *w, uint32_t h, uint32_t wdt, char *why, size_t cap) {
  uint64_t n = (uint64_t)h * wdt;
  uint32_t *er = malloc(n * sizeof *er), *ec = malloc(n * sizeof *ec);
  unsigned char *seen = calloc(n, 1);
  int ok = er && ec && seen;
  char wt[64], nt[64];
  tsr_walk norm = *w;
  tsr_walk_normalize(&norm, h, wdt);
  tsr_walk_format(w, wt, sizeof wt);
  tsr_walk_format(&norm, nt, sizeof nt);
  if (!ok) snprintf(why, cap, "out of memory");
  if (ok) tsr__walk_enumerate(w, h, wdt, er, ec);
  for (uint64_t i = 0; ok && i < n; i++) {
    uint32_t r, c, nr, nc;
    tsr_walk_map(w, h, wdt, (uint32_t)i, &r, &c);
    tsr_walk_map(&norm, h, wdt, (uint32_t)i, &nr, &nc);
    if (r >= h || c >= wdt) {
      snprintf(why, cap, "%s on %ux%u: ordinal %llu maps outside to (%u,%u)", wt, h, wdt,
               (unsigned long long)i, r, c);
      ok = 0;
    } else if (seen[(uint64_t)r * wdt + c]++) {
      snprintf(why, cap, "%s on %ux%u: tile (%u,%u) visited twice (ordinal %llu)", wt, h, wdt, r,
               c, (unsigned long long)i);
      ok = 0;
    } else if (r != er[i] || c != ec[i]) {
      snprintf(why, cap, "%s on %ux%u: ordinal %llu maps to (%u,%u), constructive order says (%u,%u)",
               wt, h, wdt, (unsigned long long)i, r, c, er[i], ec[i]);
      ok = 0;
    } else if (nr != r || nc != c) {
      snprintf(why, cap, "%s on %ux%u normalizes to %s, which differs at ordinal %llu", wt, h, wdt,
               nt, (unsigned long long)i);
      ok = 0;
    }
  }
  free(er);
  free(ec);
  free(seen);
  return ok;
}

static void check_into(const tsr_walk *w, uint32_t h, uint32_t wdt, tsr__walk_check_report *rep) {
  char why[256];
  rep->combinations++;
  rep->ordinals += (uint64_t)h * wdt;
  if (!tsr__walk_check_one(w, h, wdt, why, sizeof why)) {
    if (!rep->failures) snprintf(rep->first_failure, sizeof rep->first_failure, "%s", why);
    rep->failures++;
  }
}

void tsr__walk_check_all(uint32_t max_grid, uint32_t max_req, tsr__walk_check_report *rep) {
  memset(rep, 0, sizeof *rep);
  for (uint32_t h = 1; h <= max_grid; h++)
    for (uint32_t wdt = 1; wdt <= max_grid; wdt++) {
      check_into(&(tsr_walk){TSR_WALK_LINEAR, 1, 1}, h, wdt, rep);
      for (uint32_t r = 1; r <= max_req; r++) {
        check_into(&(tsr_walk){TSR_WALK_STRIPE, r, 1}, h, wdt, rep);
        for (uint32_t c = 1; c <= max_req; c++)
          check_into(&(tsr_walk){TSR_WALK_RECT, r, c}, h, wdt, rep);
      }
    }
}
