/* A test's private on-disk CUBIN cache: XDG_CACHE_HOME pointed at a fresh
 * folder (cmocka group setup / teardown call cubin_cache_make / _remove),
 * and a count of the CUBINs in it. Included by one translation unit each:
 * everything is static. Needs <cmocka.h> and backend/cuda/gpu.h first. */
#ifndef TSR_TESTS_CUBIN_CACHE_H
#define TSR_TESTS_CUBIN_CACHE_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char cache_root[256];

/* prefix like "/tmp/tsr-prefetch": a fresh folder PREFIX-XXXXXX. 0 or -1. */
static int cubin_cache_make(const char *prefix) {
  snprintf(cache_root, sizeof cache_root, "%s-XXXXXX", prefix);
  if (!mkdtemp(cache_root)) return -1;
  return setenv("XDG_CACHE_HOME", cache_root, 1);
}

static int cubin_cache_remove(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_root);
  return system(cmd) == 0 ? 0 : -1;
}

/* CUBIN files in the cache's module folder (0 before the first write). */
static int cubins_on_disk(void) {
  char dir[512];
  assert_int_equal(tsr__cubin_cache_dir(dir, sizeof dir), 0);
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    n += len > 6 && !strcmp(e->d_name + len - 6, ".cubin");
  }
  closedir(d);
  return n;
}

#endif
