/* sys/spawn.h: exit codes and signal deaths reported as such, a deadline
 * that kills the whole process group (a grandchild included) and reaps, the
 * SIGTERM grace, stdout captured through a pipe (capped), exec failures
 * reported at once, no descriptor leaked into the child, the environment
 * additions, death with the parent, and EINTR storms. The test process is a
 * child subreaper, so orphaned grandchildren come back to it and their fate
 * (killed by SIGKILL) is asserted from their wait status. Deadlines are
 * short but every assertion is an ordering fact, never a duration bound
 * that a loaded machine could break. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sys/clock.h"
#include "sys/spawn.h"

#define MS 1000000LL

static void no_children_left(void) {
  int st;
  assert_int_equal(waitpid(-1, &st, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
}

/* Reaps pid (a grandchild that came back to this subreaper), waiting at
 * most 10 s; returns its wait status. */
static int reap_orphan(pid_t pid) {
  int st = 0;
  for (int i = 0; i < 1000; i++) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) return st;
    assert_int_equal(w, 0);
    struct timespec ts = {0, 10 * MS};
    nanosleep(&ts, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  fail_msg("process %d still alive 10 s after its group was killed", (int)pid);
  return st;
}

/* One line from fd (at most 10 s), as a number. */
static long read_number(int fd) {
  char buf[64];
  size_t len = 0;
  int64_t until = tsr__now_ns() + 10000 * MS;
  while (len < sizeof buf - 1 && !memchr(buf, '\n', len) && tsr__now_ns() < until) {
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, 100) <= 0) continue;
    ssize_t got = read(fd, buf + len, sizeof buf - 1 - len);
    if (got <= 0) break;
    len += (size_t)got;
  }
  buf[len] = '\0';
  assert_non_null(memchr(buf, '\n', len));
  return strtol(buf, NULL, 10);
}

/* sh -c script, fds and capture as given; returns the spawn's result code. */
static int run_sh(const char *script, const tsr__spawn_fd *fds, int nfds, int new_group,
                  tsr__proc *p) {
  char *argv[] = {"sh", "-c", (char *)script, NULL};
  tsr__spawn_opts o = {.file = "sh", .argv = argv, .fds = fds, .nfds = nfds, .new_group = new_group};
  char msg[256];
  return tsr__spawn(&o, p, msg, sizeof msg);
}

static void test_exit_code(void **state) {
  tsr__proc p;
  assert_int_equal(run_sh("exit 7", NULL, 0, 1, &p), TSR__SPAWN_OK);
  assert_true(p.pid > 0);
  assert_true(p.group);
  tsr__spawn_result r;
  tsr__spawn_wait(&p, 0, 0, NULL, &r);
  assert_true(r.exited);
  assert_int_equal(r.code, 7);
  assert_false(r.signaled);
  assert_false(r.timed_out);
  assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 7);
  assert_true(r.wall_ns > 0);
  no_children_left();
}

static void test_signal_death(void **state) {
  tsr__proc p;
  assert_int_equal(run_sh("kill -USR1 $$; sleep 30", NULL, 0, 0, &p), TSR__SPAWN_OK);
  tsr__spawn_result r;
  tsr__spawn_wait(&p, tsr__now_ns() + 20000 * MS, 0, NULL, &r);
  assert_false(r.exited);
  assert_true(r.signaled);
  assert_int_equal(r.sig, SIGUSR1);
  assert_false(r.timed_out);
  no_children_left();
}

/* The leader and a background grandchild that would outlive it, both
 * sleeping 30 s: at the deadline both die; the grandchild's own wait status
 * says SIGKILL. */
static void test_deadline_kills_group(void **state) {
  int pfd[2];
  assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
  tsr__spawn_fd fds[] = {{pfd[1], 3}};
  tsr__proc p;
  assert_int_equal(run_sh("sleep 30 & echo $! >&3; exec sleep 30", fds, 1, 1, &p), TSR__SPAWN_OK);
  close(pfd[1]);
  pid_t grandchild = (pid_t)read_number(pfd[0]); /* it exists before the deadline starts */
  close(pfd[0]);
  assert_true(grandchild > 0);
  int64_t deadline = tsr__now_ns() + 200 * MS;
  tsr__spawn_result r;
  tsr__spawn_wait(&p, deadline, 0, NULL, &r);
  assert_true(tsr__now_ns() >= deadline);
  assert_true(r.timed_out);
  assert_false(r.exited);
  assert_false(r.signaled); /* the deadline's kill is not a crash */
  assert_true(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL);
  assert_true(p.t0_ns + r.wall_ns >= deadline);
  int st = reap_orphan(grandchild);
  assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  no_children_left();
}

/* A leader that exits on its own leaves no member of its group behind. */
static void test_exit_sweeps_group(void **state) {
  int pfd[2];
  assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
  tsr__spawn_fd fds[] = {{pfd[1], 3}};
  tsr__proc p;
  assert_int_equal(run_sh("sleep 30 & echo $! >&3; exit 0", fds, 1, 1, &p), TSR__SPAWN_OK);
  close(pfd[1]);
  pid_t grandchild = (pid_t)read_number(pfd[0]);
  close(pfd[0]);
  tsr__spawn_result r;
  tsr__spawn_wait(&p, 0, 0, NULL, &r);
  assert_true(r.exited);
  assert_int_equal(r.code, 0);
  assert_false(r.timed_out);
  int st = reap_orphan(grandchild);
  assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  no_children_left();
}

/* The grace: SIGTERM first (it dies of it), and SIGKILL after the grace
 * when SIGTERM is ignored. */
static void test_grace(void **state) {
  int pfd[2];
  assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
  tsr__spawn_fd fds[] = {{pfd[1], 3}};
  tsr__proc p;
  assert_int_equal(run_sh("echo 1 >&3; exec sleep 30", fds, 1, 1, &p), TSR__SPAWN_OK);
  close(pfd[1]);
  assert_int_equal(read_number(pfd[0]), 1);
  close(pfd[0]);
  tsr__spawn_result r;
  tsr__spawn_wait(&p, tsr__now_ns() + 100 * MS, 20000 * MS, NULL, &r);
  assert_true(r.timed_out);
  assert_true(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGTERM);

  assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
  fds[0].from = pfd[1];
  assert_int_equal(run_sh("trap '' TERM; echo 1 >&3; exec sleep 30", fds, 1, 1, &p),
                   TSR__SPAWN_OK);
  close(pfd[1]);
  assert_int_equal(read_number(pfd[0]), 1); /* the trap is set (exec keeps SIGTERM ignored) */
  close(pfd[0]);
  int64_t deadline = tsr__now_ns() + 100 * MS, grace = 300 * MS;
  tsr__spawn_wait(&p, deadline, grace, NULL, &r);
  assert_true(tsr__now_ns() >= deadline + grace);
  assert_true(r.timed_out);
  assert_true(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL);
  no_children_left();
}

static void test_capture(void **state) {
  int pfd[2];
  assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
  tsr__spawn_fd fds[] = {{pfd[1], 1}};
  tsr__proc p;
  assert_int_equal(run_sh("printf 'hello\\n'; printf world", fds, 1, 0, &p), TSR__SPAWN_OK);
  close(pfd[1]);
  tsr__spawn_capture cap = {.fd = pfd[0]};
  tsr__spawn_result r;
  tsr__spawn_wait(&p, 0, 0, &cap, &r);
  assert_true(r.exited);
  assert_int_equal(r.code, 0);
  assert_string_equal(cap.buf, "hello\nworld");
  assert_int_equal(cap.len, 11);
  free(cap.buf);

  /* 100000 bytes through a cap of 100: the child is never blocked on a
   * full pipe, the first 100 are kept. */
  assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
  fds[0].from = pfd[1];
  assert_int_equal(run_sh("head -c 100000 /dev/zero | tr '\\0' x; exit 3", fds, 1, 0, &p),
                   TSR__SPAWN_OK);
  close(pfd[1]);
  cap = (tsr__spawn_capture){.fd = pfd[0], .max = 100};
  tsr__spawn_wait(&p, tsr__now_ns() + 20000 * MS, 0, &cap, &r);
  assert_false(r.timed_out);
  assert_true(r.exited);
  assert_int_equal(r.code, 3);
  assert_int_equal(cap.len, 100);
  assert_int_equal(strspn(cap.buf, "x"), 100);
  assert_int_equal(cap.buf[100], '\0');
  free(cap.buf);

  /* Large output, no cap: all of it. */
  assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
  fds[0].from = pfd[1];
  assert_int_equal(run_sh("head -c 300000 /dev/zero | tr '\\0' y", fds, 1, 0, &p), TSR__SPAWN_OK);
  close(pfd[1]);
  cap = (tsr__spawn_capture){.fd = pfd[0]};
  tsr__spawn_wait(&p, 0, 0, &cap, &r);
  assert_int_equal(cap.len, 300000);
  assert_int_equal(strspn(cap.buf, "y"), 300000);
  free(cap.buf);
  no_children_left();
}

static void test_exec_failure(void **state) {
  char dir[] = "/tmp/tsr-spawn-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char plain[64];
  snprintf(plain, sizeof plain, "%s/plain", dir);
  int fd = open(plain, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
  close(fd);
  static const struct {
    const char *file;
    int err;
  } cases[] = {
      {"/nonexistent/tsr-prog", ENOENT},
      {"tsr-no-such-program-in-path", ENOENT},
      {NULL, EACCES}, /* a regular file without x: execve itself fails */
      {"/tmp", EACCES},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *file = cases[i].file ? cases[i].file : plain;
    char *argv[] = {(char *)file, NULL};
    tsr__spawn_opts o = {.file = file, .argv = argv, .new_group = 1};
    tsr__proc p = {.pid = 123};
    char msg[256], want[256];
    errno = 0;
    assert_int_equal(tsr__spawn(&o, &p, msg, sizeof msg), TSR__SPAWN_NOEXEC);
    assert_int_equal(errno, cases[i].err);
    assert_int_equal(p.pid, 0);
    snprintf(want, sizeof want, "cannot run %s: %s", file, strerror(cases[i].err));
    assert_string_equal(msg, want);
    no_children_left();
  }
  unlink(plain);
  rmdir(dir);
}

/* The shell's descriptors; the glob's own directory descriptor is listed
 * but closed by the time the loop tests it. */
#define LIST_FDS "for f in /proc/$$/fd/*; do [ -L \"$f\" ] && printf '%s ' \"${f##*/}\"; done; true"

/* The child sees 0, 1, 2 and what was asked (here fd 5), nothing else:
 * neither a descriptor of the parent without close-on-exec nor the pipes. */
static void test_no_fd_leak(void **state) {
  int leak = open("/dev/null", O_RDONLY); /* deliberately inheritable */
  assert_true(leak >= 0);
  int high = dup2(leak, 40);
  assert_int_equal(high, 40);
  int pfd[2];
  assert_int_equal(pipe(pfd), 0); /* inheritable too */
  int extra = open("/dev/null", O_WRONLY | O_CLOEXEC);
  tsr__spawn_fd fds[] = {{pfd[1], 1}, {extra, 5}};
  tsr__proc p;
  assert_int_equal(run_sh(LIST_FDS, fds, 2, 0, &p),
                   TSR__SPAWN_OK);
  close(pfd[1]);
  close(extra);
  tsr__spawn_capture cap = {.fd = pfd[0]};
  tsr__spawn_result r;
  tsr__spawn_wait(&p, 0, 0, &cap, &r);
  assert_int_equal(r.code, 0);
  /* the glob lists in lexical order */
  assert_string_equal(cap.buf, "0 1 2 5 ");
  free(cap.buf);
  close(leak);
  close(high);
  no_children_left();
}

/* Redirections apply as if at once: 8 -> 9 and 9 -> 8 swap (sh takes one digit). */
static void test_fd_swap(void **state) {
  int a[2], b[2];
  assert_int_equal(pipe2(a, O_CLOEXEC), 0);
  assert_int_equal(pipe2(b, O_CLOEXEC), 0);
  assert_int_equal(dup2(a[1], 8), 8);
  assert_int_equal(dup2(b[1], 9), 9);
  close(a[1]);
  close(b[1]);
  tsr__spawn_fd fds[] = {{8, 9}, {9, 8}};
  tsr__proc p;
  assert_int_equal(run_sh("echo A >&8; echo B >&9", fds, 2, 0, &p), TSR__SPAWN_OK);
  close(8);
  close(9);
  tsr__spawn_result r;
  tsr__spawn_wait(&p, 0, 0, NULL, &r);
  assert_int_equal(r.code, 0);
  char buf[8] = {0};
  assert_int_equal(read(a[0], buf, sizeof buf - 1), 2);
  assert_string_equal(buf, "B\n"); /* a's write end was the child's 9 */
  memset(buf, 0, sizeof buf);
  assert_int_equal(read(b[0], buf, sizeof buf - 1), 2);
  assert_string_equal(buf, "A\n");
  close(a[0]);
  close(b[0]);
  no_children_left();
}

static void test_env(void **state) {
  setenv("TSR_SPAWN_TEST_OLD", "old", 1);
  setenv("TSR_SPAWN_TEST_KEEP", "kept", 1);
  int pfd[2];
  assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
  char *argv[] = {"sh", "-c",
                  "printf '%s %s %s' \"$TSR_SPAWN_TEST_OLD\" \"$TSR_SPAWN_TEST_KEEP\" \"$TSR_SPAWN_TEST_NEW\";"
                  " env | grep -c '^TSR_SPAWN_TEST_OLD='",
                  NULL};
  char *add[] = {"TSR_SPAWN_TEST_OLD=over", "TSR_SPAWN_TEST_NEW=new", NULL};
  tsr__spawn_fd fds[] = {{pfd[1], 1}};
  tsr__spawn_opts o = {.file = "sh", .argv = argv, .env_add = add, .fds = fds, .nfds = 1};
  tsr__proc p;
  char msg[256];
  assert_int_equal(tsr__spawn(&o, &p, msg, sizeof msg), TSR__SPAWN_OK);
  close(pfd[1]);
  tsr__spawn_capture cap = {.fd = pfd[0]};
  tsr__spawn_result r;
  tsr__spawn_wait(&p, 0, 0, &cap, &r);
  assert_string_equal(cap.buf, "over kept new1\n");
  free(cap.buf);
  assert_string_equal(getenv("TSR_SPAWN_TEST_OLD"), "old"); /* ours untouched */
  unsetenv("TSR_SPAWN_TEST_OLD");
  unsetenv("TSR_SPAWN_TEST_KEEP");
  no_children_left();
}

/* die_with_parent: a child spawned by an intermediate process dies when
 * that process exits. */
static void test_die_with_parent(void **state) {
  int pfd[2];
  assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
  pid_t mid = fork();
  assert_true(mid >= 0);
  if (mid == 0) {
    char *argv[] = {"sleep", "30", NULL};
    tsr__spawn_opts o = {.file = "sleep", .argv = argv, .die_with_parent = 1};
    tsr__proc p;
    char msg[256];
    if (tsr__spawn(&o, &p, msg, sizeof msg) != TSR__SPAWN_OK) _exit(1);
    char line[32];
    int n = snprintf(line, sizeof line, "%d\n", (int)p.pid);
    _exit(write(pfd[1], line, (size_t)n) == n ? 0 : 1);
  }
  close(pfd[1]);
  pid_t sleeper = (pid_t)read_number(pfd[0]);
  close(pfd[0]);
  int st;
  assert_int_equal(waitpid(mid, &st, 0), mid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  st = reap_orphan(sleeper);
  assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  no_children_left();
}

static volatile sig_atomic_t alarms;
static void on_alarm(int sig) { alarms++; }

/* A signal every millisecond (no SA_RESTART): every interrupted call is
 * retried; the results are those of a quiet run. */
static void test_eintr(void **state) {
  struct sigaction sa = {0}, old;
  sa.sa_handler = on_alarm;
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
  struct itimerval it = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
  assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
  for (int i = 0; i < 3; i++) {
    int pfd[2];
    assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
    tsr__spawn_fd fds[] = {{pfd[1], 1}};
    tsr__proc p;
    assert_int_equal(run_sh("sleep 0.1; echo done; exit 5", fds, 1, 1, &p), TSR__SPAWN_OK);
    close(pfd[1]);
    tsr__spawn_capture cap = {.fd = pfd[0]};
    tsr__spawn_result r;
    tsr__spawn_wait(&p, tsr__now_ns() + 30000 * MS, 0, &cap, &r);
    assert_false(r.timed_out);
    assert_true(r.exited);
    assert_int_equal(r.code, 5);
    assert_string_equal(cap.buf, "done\n");
    free(cap.buf);
  }
  setitimer(ITIMER_REAL, &off, NULL);
  sigaction(SIGALRM, &old, NULL);
  assert_true(alarms > 0);
  no_children_left();
}

int main(void) {
  /* orphaned grandchildren come back here, so their end can be checked */
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exit_code),          cmocka_unit_test(test_signal_death),
      cmocka_unit_test(test_deadline_kills_group), cmocka_unit_test(test_exit_sweeps_group),
      cmocka_unit_test(test_grace),              cmocka_unit_test(test_capture),
      cmocka_unit_test(test_exec_failure),       cmocka_unit_test(test_no_fd_leak),
      cmocka_unit_test(test_fd_swap),            cmocka_unit_test(test_env),
      cmocka_unit_test(test_die_with_parent),    cmocka_unit_test(test_eintr),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
