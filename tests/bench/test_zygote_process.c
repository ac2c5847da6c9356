/* How the orchestrator starts and stops the torch zygote (torch_zygote.c):
 * the real torch_route.py --zygote reaches its ready line (torch or not),
 * stays in this process's group, and is gone (reaped, socket removed) after
 * the stop; python3 missing from PATH fails at once with the line of a
 * failed exec in the log; a zygote that never says ready fails after the
 * timeout and is stopped. No child is left behind on any path. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench/bench.h"
#include "source_dir.h"
#include "sys/clock.h"

static char dir[64], log_path[128];

static int setup(void **state) {
  snprintf(dir, sizeof dir, "/tmp/tsr-zygote-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  snprintf(log_path, sizeof log_path, "%s/zygote.log", dir);
  return 0;
}

static int teardown(void **state) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void no_children_left(void) {
  int st;
  assert_int_equal(waitpid(-1, &st, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
}

static int have_python3(void) { return system("command -v python3 >/dev/null 2>&1") == 0; }

static void test_start_stop(void **state) {
  if (!have_python3()) skip();
  char script[4096];
  snprintf(script, sizeof script, "%s/src/bench/routes/torch_route.py", test_source_dir());
  tsr__torch_zygote z;
  json_t *ready = NULL;
  char msg[512] = "";
  assert_int_equal(tsr__torch_zygote_start(&z, script, log_path, 120, &ready, msg, sizeof msg), 0);
  assert_true(json_is_true(json_object_get(ready, "ready")));
  assert_int_equal(json_integer_value(json_object_get(ready, "pid")), z.pid);
  assert_int_equal(getpgid(z.pid), getpgrp());
  struct stat st;
  assert_int_equal(stat(z.sock, &st), 0);
  assert_true(S_ISSOCK(st.st_mode));
  char sock[sizeof z.sock];
  memcpy(sock, z.sock, sizeof sock);
  tsr__torch_zygote_stop(&z);
  assert_int_equal(z.pid, 0);
  assert_int_equal(stat(sock, &st), -1);
  json_decref(ready);
  no_children_left();
}

static void test_no_python3(void **state) {
  char *path = strdup(getenv("PATH") ? getenv("PATH") : "");
  setenv("PATH", dir, 1); /* an empty directory */
  tsr__torch_zygote z;
  json_t *ready = NULL;
  char msg[512] = "", want[512];
  int64_t t0 = tsr__now_ns();
  int rc = tsr__torch_zygote_start(&z, "/nonexistent/torch_route.py", log_path, 120, &ready, msg,
                                   sizeof msg);
  int64_t took = tsr__now_ns() - t0;
  setenv("PATH", path, 1);
  free(path);
  assert_int_equal(rc, -1);
  assert_null(ready);
  assert_int_equal(z.pid, 0);
  assert_true(took < 60 * 1000000000LL); /* reported, not waited out */
  snprintf(want, sizeof want, "torch zygote gave no ready line within 120 s (see %s)", log_path);
  assert_string_equal(msg, want);
  FILE *f = fopen(log_path, "r");
  assert_non_null(f);
  char line[256] = "";
  assert_non_null(fgets(line, sizeof line, f));
  fclose(f);
  assert_string_equal(line, "torch zygote: cannot run python3: No such file or directory\n");
  unlink(log_path);
  no_children_left();
}

/* A "zygote" that reads its stdin and never prints: the start fails after
 * its 1 s and stops it through the stdin EOF. */
static void test_never_ready(void **state) {
  if (!have_python3()) skip();
  char script[128];
  snprintf(script, sizeof script, "%s/silent.py", dir);
  FILE *f = fopen(script, "w");
  assert_non_null(f);
  fputs("import sys\nsys.stdin.read()\n", f);
  fclose(f);
  tsr__torch_zygote z;
  json_t *ready = NULL;
  char msg[512] = "", want[512];
  assert_int_equal(tsr__torch_zygote_start(&z, script, log_path, 1, &ready, msg, sizeof msg), -1);
  assert_null(ready);
  assert_int_equal(z.pid, 0);
  snprintf(want, sizeof want, "torch zygote gave no ready line within 1 s (see %s)", log_path);
  assert_string_equal(msg, want);
  no_children_left();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_start_stop),
      cmocka_unit_test(test_no_python3),
      cmocka_unit_test(test_never_ready),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
