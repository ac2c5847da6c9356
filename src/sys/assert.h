/* TSR_ASSERT(cond): an invariant of tessera's own code. Failing it is a bug,
 * not the environment (bad input, no GPU, OOM return a status instead): it
 * prints file:line, the function and the condition on stderr, then aborts.
 * Enabled in every build type, NDEBUG or not: the checks are cheap and a
 * silently wrong GEMM is worse than a crash. */
#ifndef TSR_SYS_ASSERT_H
#define TSR_SYS_ASSERT_H

#include <stdio.h>
#include <stdlib.h>

#define TSR_ASSERT(cond)                                                              \
  do {                                                                                \
    if (__builtin_expect(!(cond), 0)) {                                               \
      fprintf(stderr, "tessera: %s:%d: %s: assertion failed: %s\n", __FILE__, __LINE__, \
              __func__, #cond);                                                       \
      abort();                                                                        \
    }                                                                                 \
  } while (0)

#endif
