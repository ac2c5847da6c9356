/* Constructive walk enumeration: builds a walk's visit order with nested
 * loops over stripes, rectangles and cells — independently of the ordinal
 * formulas in walk.c — so the two can be checked against each other. */
#ifndef TSR_PLAN_WALK_ENUM_H
#define TSR_PLAN_WALK_ENUM_H

#include "tessera.h"

/* Writes the visit order of an H×W grid (H*W entries each). */
void tsr__walk_enumerate(const tsr_walk *w, uint32_t h, uint32_t wdt, uint32_t *rows,
                         uint32_t *cols);

typedef struct {
  uint64_t combinations; /* (grid, walk) pairs checked */
  uint64_t ordinals;     /* ordinals mapped */
  uint64_t failures;
  char first_failure[256];
} tsr__walk_check_report;

/* For every H, W in 1..max_grid and every walk (linear, rect:RxC and
 * stripe:R for R, C in 1..max_req): checks that tsr_walk_map equals the
 * constructive order, is a bijection, and that the normalized walk visits in
 * the same order. */
void tsr__walk_check_all(uint32_t max_grid, uint32_t max_req, tsr__walk_check_report *rep);
/* The same for one walk on one grid. Returns 1 when it passes. */
int tsr__walk_check_one(const tsr_walk *w, uint32_t h, uint32_t wdt, char *why, size_t cap);

#endif
