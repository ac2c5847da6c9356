/* The process spawner (spawn.h). fork + execve rather than posix_spawn:
 * PR_SET_PDEATHSIG and "every other descriptor closed" have no spawn
 * attribute. Between fork and execve the child calls only async-signal-safe
 * functions (raw system calls): everything that allocates — the PATH lookup,
 * the environment — is prepared before the fork. */
#include "sys/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sys/assert.h"
#include "sys/clock.h"

extern char **environ;


#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* ---- before the fork ------------------------------------------------------ */
/* The file execvp would run, into buf (the PATH lookup, done here because
 * execvp may allocate). 0, or an errno value (ENOENT, EACCES, ENAMETOOLONG). */
static int resolve(const char *file, char *buf, size_t cap) {
  if (!*file) return ENOENT;
  if (strchr(file, '/')) {
    if ((size_t)snprintf(buf, cap, "%s", file) >= cap) return ENAMETOOLONG;
    return 0;
  }
  const char *path = getenv("PATH");
  if (!path) path = "/bin:/usr/bin"; /* glibc's default for execvp */
  int err = ENOENT;
  for (const char *s = path;; s++) {
    const char *e = strchr(s, ':');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    /* an empty entry is the current directory */
    int w = n ? snprintf(buf, cap, "%.*s/%s", (int)n, s, file) : snprintf(buf, cap, "%s", file);
    struct stat st;
    if (w > 0 && (size_t)w < cap && stat(buf, &st) == 0 && S_ISREG(st.st_mode)) {
      if (access(buf, X_OK) == 0) return 0;
      err = EACCES;
    }
    if (!e) break;
    s = e;
  }
  return err;
}

static int same_name(const char *a, const char *b) {
  size_t n = strcspn(a, "=");
  return strncmp(a, b, n) == 0 && b[n] == '=';
}

/* environ with env_add over it (malloc'ed array; the strings are borrowed). */
static char **build_env(char *const *add) {
  size_t ne = 0, na = 0;
  while (environ && environ[ne]) ne++;
  while (add[na]) na++;
  char **env = malloc((ne + na + 1) * sizeof *env);
  if (!env) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < ne; i++) {
    int over = 0;
    for (size_t j = 0; j < na && !over; j++) over = same_name(add[j], environ[i]);
    if (!over) env[k++] = environ[i];
  }
  for (size_t j = 0; j < na; j++) env[k++] = add[j];
  env[k] = NULL;
  return env;
}

/* ---- between fork and execve: async-signal-safe only ---------------------- */
static _Noreturn void child_fail(int errfd) {
  int e = errno;
  while (write(errfd, &e, sizeof e) < 0 && errno == EINTR) {
  }
  _exit(127);
}

static _Noreturn void child(const tsr__spawn_opts *o, const char *path, char *const *envp,
                            int errfd, pid_t parent, const sigset_t *mask, int fd_limit) {
  /* A handler of the parent must not run here, nor survive into the
   * program (execve would reset it anyway; ignored signals stay ignored). */
  for (int sig = 1; sig < NSIG; sig++) {
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL) {
      sa.sa_handler = SIG_DFL;
      sa.sa_flags = 0;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, NULL);
    }
  }
  if (o->new_group && setpgid(0, 0) != 0) child_fail(errfd);
  if (o->die_with_parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(errfd);
    if (getppid() != parent) _exit(127); /* the parent died before the prctl */
  }
  /* Every `from` is first copied above every `to` (and the error pipe moved
   * there too), so one redirection cannot clobber another's source. */
  int top = 2;
  for (int i = 0; i < o->nfds; i++)
    if (o->fds[i].to > top) top = o->fds[i].to;
  if (errfd <= top) {
    int moved = fcntl(errfd, F_DUPFD_CLOEXEC, top + 1);
    if (moved < 0) child_fail(errfd);
    errfd = moved;
  }
  int tmp[TSR__SPAWN_MAX_FDS];
  for (int i = 0; i < o->nfds; i++)
    if ((tmp[i] = fcntl(o->fds[i].from, F_DUPFD_CLOEXEC, top + 1)) < 0) child_fail(errfd);
  for (int i = 0; i < o->nfds; i++)
    if (dup2(tmp[i], o->fds[i].to) < 0) child_fail(errfd); /* the copy is not close-on-exec */
  for (int fd = 3; fd <= top; fd++) {
    int wanted = 0;
    for (int i = 0; i < o->nfds; i++) wanted |= o->fds[i].to == fd;
    if (!wanted) close(fd);
  }
  /* Everything above: closed at the execve (the error pipe only then). */
#ifdef SYS_close_range
  if (syscall(SYS_close_range, (unsigned)top + 1, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
#endif
    for (int fd = top + 1; fd < fd_limit; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
  sigprocmask(SIG_SETMASK, mask, NULL);
  execve(path, o->argv, envp);
  child_fail(errfd);
}

/* ---- the parent ------------------------------------------------------------ */
int tsr__spawn(const tsr__spawn_opts *o, tsr__proc *p, char *msg, size_t cap) {
  TSR_ASSERT(o->file && o->argv && o->argv[0] && o->nfds >= 0 && o->nfds <= TSR__SPAWN_MAX_FDS);
  memset(p, 0, sizeof *p);
  char path[PATH_MAX];
  int err = resolve(o->file, path, sizeof path);
  if (err) {
    snprintf(msg, cap, "cannot run %s: %s", o->file, strerror(err));
    errno = err;
    return TSR__SPAWN_NOEXEC;
  }
  char **envp = o->env_add ? build_env(o->env_add) : environ;
  if (!envp) {
    snprintf(msg, cap, "cannot start %s: %s", o->file, strerror(ENOMEM));
    errno = ENOMEM;
    return TSR__SPAWN_FAILED;
  }
  struct rlimit rl;
  int fd_limit = 1 << 16;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    fd_limit = rl.rlim_cur < (1u << 20) ? (int)rl.rlim_cur : 1 << 20;
  int ep[2];
  if (pipe2(ep, O_CLOEXEC) != 0) {
    err = errno;
    if (envp != environ) free(envp);
    snprintf(msg, cap, "cannot start %s: %s", o->file, strerror(err));
    errno = err;
    return TSR__SPAWN_FAILED;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t parent = getpid();
  int64_t t0 = tsr__now_ns();
  pid_t pid = fork();
  if (pid == 0) {
    close(ep[0]);
    child(o, path, envp, ep[1], parent, &old, fd_limit);
  }
  err = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(ep[1]);
  if (envp != environ) free(envp);
  if (pid < 0) {
    close(ep[0]);
    snprintf(msg, cap, "cannot start %s: %s", o->file, strerror(err));
    errno = err;
    return TSR__SPAWN_FAILED;
  }
  /* The child's errno if it did not reach the program, else end of file at
   * the execve. */
  int cerr = 0;
  size_t got = 0;
  while (got < sizeof cerr) {
    ssize_t r = read(ep[0], (char *)&cerr + got, sizeof cerr - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(ep[0]);
  if (got) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (got < sizeof cerr) cerr = EIO;
    snprintf(msg, cap, "cannot run %s: %s", o->file, strerror(cerr));
    errno = cerr;
    return TSR__SPAWN_NOEXEC;
  }
  p->pid = pid;
  p->group = o->new_group;
  p->t0_ns = t0;
  return TSR__SPAWN_OK;
}

/* 1 when pid has exited (left unreaped, so its id stays ours). */
static int has_exited(pid_t pid) {
  for (;;) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0) return si.si_pid == pid;
    if (errno != EINTR) return 1; /* ECHILD: reaped already (SIGCHLD ignored) */
  }
}

static int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  return -1;
#endif
}

/* One read into the capture (a full buffer reads into scratch and drops).
 * 0 at end of file or an error. */
static int read_some(tsr__spawn_capture *c, size_t *bcap) {
  char scratch[4096];
  for (;;) {
    char *dst = scratch;
    size_t room = sizeof scratch;
    if (c->buf && (!c->max || c->len < c->max)) {
      if (*bcap - c->len < sizeof scratch + 1) {
        size_t want = *bcap * 2;
        if (c->max && want > c->max + 1) want = c->max + 1;
        char *nb = want > *bcap ? realloc(c->buf, want) : NULL;
        if (nb) c->buf = nb, *bcap = want;
      }
      if (*bcap - c->len > 1) {
        dst = c->buf + c->len;
        room = *bcap - c->len - 1;
        if (c->max && room > c->max - c->len) room = c->max - c->len;
      }
    }
    ssize_t got = read(c->fd, dst, room);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 1;
    if (got <= 0) return 0;
    if (dst != scratch) c->len += (size_t)got;
    return 1;
  }
}

/* Waits until pid exits, the capture (when open) reaches end of file, or
 * until_ns (0: none) passes. */
static void wait_loop(pid_t pid, int pidfd, int64_t until_ns, tsr__spawn_capture *c, size_t *bcap,
                      int *gone, int *eof) {
  int64_t nap = 1000000;
  for (;;) {
    if (!*gone) *gone = has_exited(pid);
    if (*gone && *eof) return;
    int64_t now = tsr__now_ns();
    if (until_ns && now >= until_ns) return;
    struct pollfd pf[2];
    int n = 0, ci = -1;
    if (!*eof) {
      pf[n] = (struct pollfd){c->fd, POLLIN, 0};
      ci = n++;
    }
    if (!*gone && pidfd >= 0) pf[n++] = (struct pollfd){pidfd, POLLIN, 0};
    int64_t wait_ns = until_ns ? until_ns - now : -1;
    if (!*gone && pidfd < 0) { /* no pidfd: look again after a nap (1 ms doubling to 20 ms) */
      if (wait_ns < 0 || wait_ns > nap) wait_ns = nap;
      nap = nap * 2 < 20000000 ? nap * 2 : 20000000;
    }
    int ms = wait_ns < 0 ? -1 : wait_ns / 1000000 + 1 > INT_MAX ? INT_MAX : (int)(wait_ns / 1000000 + 1);
    int r = poll(pf, (nfds_t)n, ms);
    if (r < 0) {
      if (errno != EINTR) { /* ENOMEM: don't spin */
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
      }
      continue;
    }
    if (ci >= 0 && pf[ci].revents && !read_some(c, bcap)) *eof = 1;
  }
}

void tsr__spawn_wait(const tsr__proc *p, int64_t deadline_ns, int64_t grace_ns,
                     tsr__spawn_capture *cap, tsr__spawn_result *r) {
  TSR_ASSERT(p->pid > 0);
  memset(r, 0, sizeof *r);
  size_t bcap = 0;
  int eof = 1, gone = 0;
  if (cap) {
    cap->len = 0;
    cap->buf = malloc(bcap = 8192);
    if (!cap->buf) bcap = 0;
    eof = cap->fd < 0;
  }
  int pidfd = open_pidfd(p->pid);
  wait_loop(p->pid, pidfd, deadline_ns, cap, &bcap, &gone, &eof);
  if (!gone) {
    r->timed_out = 1;
    pid_t target = p->group ? -p->pid : p->pid;
    if (grace_ns > 0) {
      kill(target, SIGTERM);
      int stop_reading = 1;
      wait_loop(p->pid, pidfd, tsr__now_ns() + grace_ns, NULL, NULL, &gone, &stop_reading);
    }
    if (!gone) kill(target, SIGKILL);
  }
  /* p is exited or dying but unreaped, so its id still names its group:
   * whatever it left in there goes with it. */
  if (p->group) kill(-p->pid, SIGKILL);
  if (pidfd >= 0) close(pidfd);
  int status = 0;
  pid_t w;
  while ((w = waitpid(p->pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (p->t0_ns) r->wall_ns = tsr__now_ns() - p->t0_ns;
  if (w == p->pid) {
    r->status = status;
    if (WIFEXITED(status)) r->exited = 1, r->code = WEXITSTATUS(status);
    if (WIFSIGNALED(status) && !r->timed_out) r->signaled = 1, r->sig = WTERMSIG(status);
  }
  if (cap) {
    if (cap->fd >= 0) close(cap->fd);
    if (cap->buf) cap->buf[cap->len] = '\0';
  }
}
