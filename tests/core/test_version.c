/* One version, from CMake's project(VERSION): the generated header's
 * TSR_VERSION matches CMakeLists.txt and its MAJOR/MINOR/PATCH, and
 * tsr_version() returns it both from the static library linked here and
 * from libtessera.so loaded at run time (which exports tsr_ names only). */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tessera.h"
#include "source_dir.h"

static void test_header_matches_cmake(void **state) {
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", TSR_VERSION_MAJOR, TSR_VERSION_MINOR, TSR_VERSION_PATCH);
  assert_string_equal(TSR_VERSION, want);
  char path[4096];
  snprintf(path, sizeof path, "%s/CMakeLists.txt", test_source_dir()); /* a carried build too */
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[512], found[64] = "";
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "project(tessera VERSION %63[0-9.]", found) == 1) break;
  fclose(f);
  assert_string_equal(found, TSR_VERSION);
}

static void test_static_library(void **state) { assert_string_equal(tsr_version(), TSR_VERSION); }

/* libtessera.so beside this test executable (the build dir, wherever the
 * build was carried), else in the build dir it was compiled in. */
static void *open_shared(void) {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
  if (n > 0) {
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (slash) {
      strcpy(slash, "/libtessera.so");
      void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h) return h;
    }
  }
  return dlopen(TSR_BUILD_DIR "/libtessera.so", RTLD_NOW | RTLD_LOCAL);
}

static void test_shared_library(void **state) {
  void *h = open_shared();
  if (!h) fail_msg("dlopen libtessera.so: %s", dlerror());
  const char *(*version)(void);
  *(void **)&version = dlsym(h, "tsr_version");
  assert_non_null(version);
  assert_string_equal(version(), TSR_VERSION);
  assert_non_null(dlsym(h, "tsr_gemm"));
  /* Internal functions stay inside the library. */
  assert_null(dlsym(h, "tsr__fail"));
  assert_null(dlsym(h, "tsr__backend_get"));
  dlclose(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_header_matches_cmake),
      cmocka_unit_test(test_static_library),
      cmocka_unit_test(test_shared_library),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
