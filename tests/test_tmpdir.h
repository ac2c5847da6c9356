/* A test's private scratch folder and whole-file reads (cmocka setup and
 * teardown call test_tmpdir_make / test_tmpdir_remove). Included by one
 * translation unit each: everything is static. */
#ifndef TSR_TESTS_TMPDIR_H
#define TSR_TESTS_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

static char tmpdir[256];

/* prefix like "/tmp/tsr_tune_db": a fresh folder PREFIX_XXXXXX. 0 or -1. */
static int test_tmpdir_make(const char *prefix) {
  snprintf(tmpdir, sizeof tmpdir, "%s_XXXXXX", prefix);
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int test_tmpdir_remove(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

static void path_in(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", tmpdir, name);
}

/* The whole file (NUL-terminated copy, n without it); asserts it exists. */
static unsigned char *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)len + 1);
  assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
  b[len] = 0;
  fclose(f);
  *n = (size_t)len;
  return b;
}

#endif
