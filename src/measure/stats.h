/* The statistics and balanced round orders of the measurement protocol
 * (docs/protocol.md): per-round p50, median of round p50s, paired same-round
 * ratios, spread; the rotation + reversal order design and the balance check
 * of a realized order. Used by bench (orchestration, report) and tune (the
 * replay); the audit recomputes all of it independently (src/audit) and
 * must not use this file. */
#ifndef TSR_MEASURE_STATS_H
#define TSR_MEASURE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* ---- order design (order.c) -------------------------------------------- */
/* Round r takes the base route order rotated by floor(r/2); odd rounds are
 * the exact reverse of the preceding round. route_order[r*R + p] is the
 * base index of the route at position p of round r. Shape order rotates
 * by one each round: shape_order[r*S + j] = (j + r) mod S. */
void tsr__order_design(int routes, int shapes, int rounds, int *route_order, int *shape_order);

/* Balance of a realized order: seq[i] = (round, shape, route) in execution
 * order. Checks that within every (round, shape) each route ran exactly
 * once, that per shape every route held every position equally often, and
 * that every ordered pair occurred equally often in both precedences.
 * Returns a JSON object {balanced, rounds, position_counts, pair_counts,
 * problems[]} (new reference). */
typedef struct {
  int round, shape, route;
} tsr__order_entry;
json_t *tsr__order_check(const tsr__order_entry *seq, size_t n, int routes, int shapes,
                         int rounds);

/* ---- statistics (stats.c) ---------------------------------------------- */
/* Median of the finite values among v[0..n) (NaN entries are missing
 * rounds and skipped): middle value, or the mean of the two middle values
 * when the count is even. NaN when no finite value. */
double tsr__median(const double *v, size_t n);
/* p50 of one round's samples, each taken as ns[i] / calls[i] (per call). */
double tsr__sample_p50(const int64_t *ns, const int64_t *calls, size_t n);

typedef struct {
  size_t count;  /* rounds where both values exist */
  double median; /* median of same-round ratios x/y */
  double min, max;
  size_t slower; /* rounds with x/y > 1 (x slower) */
} tsr__paired;
/* Same-round ratios x[r]/y[r] over rounds where both are finite and > 0;
 * ratios[r] receives each ratio (NaN where missing) when non-NULL. */
void tsr__paired_ratios(const double *x, const double *y, size_t rounds, double *ratios,
                        tsr__paired *out);
/* max/min - 1 over the finite values (NaN when fewer than one). */
double tsr__spread(const double *v, size_t n);

#endif
