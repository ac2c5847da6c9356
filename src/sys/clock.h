/* The monotonic clock every timed region and deadline uses. */
#ifndef TSR_SYS_CLOCK_H
#define TSR_SYS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t tsr__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
