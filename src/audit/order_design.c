/* The documented order design recomputed from its rule (docs/protocol.md
 * "Order"), and the balance of a realized order, independently of
 * src/measure/order.c. */
#include <string.h>

#include "audit/audit.h"

void tsr__audit_design(int R, int S, int rounds, int *route_at, int *shape_at) {
  for (int r = 0; r < rounds; r++) {
    for (int p = 0; p < R; p++) {
      int q = (r & 1) ? R - 1 - p : p; /* odd rounds: the previous round reversed */
      route_at[(size_t)r * R + p] = (q + r / 2) % R;
    }
    for (int j = 0; j < S; j++) shape_at[(size_t)r * S + j] = (j + r) % S;
  }
}

int tsr__audit_balance(const int *pos, int R, int S, int rounds, int *position_counts,
                       int *pair_counts) {
  int problems = 0;
  memset(position_counts, 0, (size_t)S * R * R * sizeof *position_counts);
  memset(pair_counts, 0, (size_t)S * R * R * sizeof *pair_counts);
  for (int s = 0; s < S; s++) {
    int *pc = position_counts + (size_t)s * R * R, *pp = pair_counts + (size_t)s * R * R;
    for (int r = 0; r < rounds; r++) {
      const int *P = pos + ((size_t)r * S + s) * R;
      for (int x = 0; x < R; x++) {
        if (P[x] < 0) {
          problems++; /* a route missing from this (round, shape) */
          continue;
        }
        if (P[x] < R) pc[x * R + P[x]]++;
        else problems++;
        for (int y = 0; y < R; y++)
          if (y != x && P[y] >= 0 && P[x] < P[y]) pp[x * R + y]++;
      }
    }
    for (int x = 0; x < R; x++) {
      for (int p = 0; p < R; p++)
        if (pc[x * R + p] != pc[0]) problems++;
      for (int y = x + 1; y < R; y++)
        if (pp[x * R + y] != pp[y * R + x]) problems++;
    }
  }
  return problems;
}
