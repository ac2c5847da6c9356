/* TSR_ASSERT is on in this (release) build: a broken invariant prints
 * file:line and the condition on stderr and aborts. Checked in a forked
 * child, directly and through a library invariant (tsr_walk_map's ordinal
 * outside the grid). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sys/assert.h"
#include "tessera.h"

/* Runs fn in a child with stderr captured into err; returns the wait status. */
static int run_child(void (*fn)(void), char *err, size_t cap) {
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct rlimit no_core = {0, 0}; /* an expected abort leaves no core file */
    setrlimit(RLIMIT_CORE, &no_core);
    dup2(fd[1], 2);
    close(fd[0]);
    fn();
    _exit(0);
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t r;
  while (n + 1 < cap && (r = read(fd[0], err + n, cap - 1 - n)) > 0) n += (size_t)r;
  err[n] = '\0';
  close(fd[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  return status;
}

static volatile int two = 2;
static void broken(void) { TSR_ASSERT(two + two == 5); }
static void holds(void) { TSR_ASSERT(two + two == 4); }

static void walk_outside(void) {
  tsr_walk w = {TSR_WALK_LINEAR, 1, 1};
  uint32_t r, c;
  tsr_walk_map(&w, 2, 3, 6, &r, &c);
}

static void test_direct(void **state) {
  char err[1024];
  int st = run_child(broken, err, sizeof err);
  assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
  if (!strstr(err, "test_assert.c:") || !strstr(err, "assertion failed: two + two == 5"))
    fail_msg("unexpected message: %s", err);
  st = run_child(holds, err, sizeof err);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  assert_string_equal(err, "");
}

static void test_library_invariant(void **state) {
  char err[1024];
  int st = run_child(walk_outside, err, sizeof err);
  assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
  if (!strstr(err, "walk.c:") || !strstr(err, "tsr_walk_map") || !strstr(err, "(uint64_t)i < (uint64_t)h * wdt"))
    fail_msg("unexpected message: %s", err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_direct),
      cmocka_unit_test(test_library_invariant),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
