/* Balanced round orders (BRIEF §6): rotation + exact reversal, and the check
 * of a realized execution order. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/stats.h"

void tsr__order_design(int routes, int shapes, int rounds, int *route_order, int *shape_order) {
  for (int r = 0; r < rounds; r++) {
    int rot = r / 2;
    for (int p = 0; p < routes; p++) {
      /* Odd rounds reverse the preceding (even) round exactly. */
      int q = (r % 2) ? routes - 1 - p : p;
      route_order[r * routes + p] = (q + rot) % routes;
    }
    for (int j = 0; j < shapes; j++) shape_order[r * shapes + j] = (j + r) % shapes;
  }
}

static void problem(json_t *problems, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(json_t *problems, const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  json_array_append_new(problems, json_string(buf));
}

json_t *tsr__order_check(const tsr__order_entry *seq, size_t n, int R, int S, int rounds) {
  json_t *out = json_object(), *problems = json_array();
  /* pos[(r*S + s)*R + route] = position within its (round, shape), -1 absent */
  size_t cells = (size_t)rounds * S * R;
  int *pos = malloc((cells ? cells : 1) * sizeof *pos);
  int *next = calloc((size_t)rounds * S + 1, sizeof *next);
  for (size_t i = 0; i < cells; i++) pos[i] = -1;
  for (size_t i = 0; i < n; i++) {
    const tsr__order_entry *e = &seq[i];
    if (e->round < 0 || e->round >= rounds || e->shape < 0 || e->shape >= S || e->route < 0 ||
        e->route >= R) {
      problem(problems, "entry %zu: (round %d, shape %d, route %d) out of range", i, e->round,
              e->shape, e->route);
      continue;
    }
    size_t rs = (size_t)e->round * S + e->shape;
    if (pos[rs * R + e->route] >= 0)
      problem(problems, "round %d shape %d: route %d ran twice", e->round, e->shape, e->route);
    else
      pos[rs * R + e->route] = next[rs]++;
  }
  for (int r = 0; r < rounds; r++)
    for (int s = 0; s < S; s++)
      for (int x = 0; x < R; x++)
        if (pos[((size_t)r * S + s) * R + x] < 0)
          problem(problems, "round %d shape %d: route %d missing", r, s, x);

  /* Position counts per shape: every route must hold every position equally
   * often (rounds / R times). */
  json_t *jpos = json_array(), *jpair = json_array();
  int *pc = calloc((size_t)R * R + 1, sizeof *pc), *pp = calloc((size_t)R * R + 1, sizeof *pp);
  for (int s = 0; s < S; s++) {
    memset(pc, 0, (size_t)R * R * sizeof *pc);
    memset(pp, 0, (size_t)R * R * sizeof *pp);
    for (int r = 0; r < rounds; r++) {
      const int *P = &pos[((size_t)r * S + s) * R];
      for (int x = 0; x < R; x++) {
        if (P[x] < 0) continue;
        pc[x * R + P[x]]++;
        for (int y = 0; y < R; y++)
          if (y != x && P[y] >= 0 && P[x] < P[y]) pp[x * R + y]++; /* x before y */
      }
    }
    json_t *ms = json_array(), *mp = json_array();
    for (int x = 0; x < R; x++) {
      json_t *row = json_array(), *prow = json_array();
      for (int p = 0; p < R; p++) {
        json_array_append_new(row, json_integer(pc[x * R + p]));
        if (pc[x * R + p] != pc[0])
          problem(problems, "shape %d: route %d holds position %d %d times, route 0 position 0 %d",
                  s, x, p, pc[x * R + p], pc[0]);
      }
      for (int y = 0; y < R; y++) {
        json_array_append_new(prow, json_integer(pp[x * R + y]));
        if (y > x && pp[x * R + y] != pp[y * R + x])
          problem(problems, "shape %d: route %d precedes route %d %d times, the reverse %d times",
                  s, x, y, pp[x * R + y], pp[y * R + x]);
      }
      json_array_append_new(ms, row);
      json_array_append_new(mp, prow);
    }
    json_array_append_new(jpos, ms);
    json_array_append_new(jpair, mp);
  }
  free(pc);
  free(pp);
  free(pos);
  free(next);
  json_object_set_new(out, "balanced", json_boolean(json_array_size(problems) == 0));
  json_object_set_new(out, "rounds", json_integer(rounds));
  json_object_set_new(out, "entries", json_integer((json_int_t)n));
  json_object_set_new(out, "position_counts", jpos); /* [shape][route][position] */
  json_object_set_new(out, "pair_counts", jpair);    /* [shape][x][y]: x ran before y */
  json_object_set_new(out, "problems", problems);
  return out;
}
