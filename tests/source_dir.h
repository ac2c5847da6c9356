/* Where a test finds the source tree: $TSR_SOURCE_DIR when set (a build
 * carried to another machine, where the checkout sits at another path), else
 * the path CMake compiled in. */
#ifndef TSR_TESTS_SOURCE_DIR_H
#define TSR_TESTS_SOURCE_DIR_H
#include <stdlib.h>

static inline const char *test_source_dir(void) {
  const char *env = getenv("TSR_SOURCE_DIR");
  return env && *env ? env : TSR_SOURCE_DIR;
}
#endif
