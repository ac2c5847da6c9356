/* A plain fork-join over row ranges for host-side bulk work (input
 * generation, validation): large problems on many-core hosts would otherwise
 * spend seconds single-threaded outside every timed region. */
#ifndef TSR_CORE_PAR_H
#define TSR_CORE_PAR_H

#include <stdint.h>

/* Calls fn(arg, chunk, r0, r1) over [0, rows) split into contiguous chunks,
 * one per thread; sequential (one chunk) when total work is small. Returns
 * the number of chunks used (at most TSR__PAR_MAX). */
#define TSR__PAR_MAX 32
int tsr__parallel_rows(int64_t rows, double work, void (*fn)(void *arg, int chunk, int64_t r0, int64_t r1),
                       void *arg);

#endif
