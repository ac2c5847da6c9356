/* The one way tessera starts a child process and waits for it: the bench
 * rows (/proc/self/exe bench-run), the torch route's python3 and its zygote,
 * the tuner's replay children. A child gets only the descriptors asked for
 * (0, 1, 2 unless replaced, plus the listed ones), optionally its own process
 * group and death with its parent; the wait reads an optional output pipe,
 * honours a monotonic deadline (then kills the child, or its whole group) and
 * always reaps, so no path leaves a zombie or a stray member of the group. */
#ifndef TSR_SYS_SPAWN_H
#define TSR_SYS_SPAWN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TSR__SPAWN_MAX_FDS 16

/* The parent's descriptor `from` becomes the child's descriptor `to`. */
typedef struct {
  int from, to;
} tsr__spawn_fd;

typedef struct {
  const char *file;     /* the program: a path, or a name looked up in PATH */
  char *const *argv;    /* argv[0] included, NULL-terminated */
  char *const *env_add; /* NAME=value entries over the inherited environment
                         * (NULL-terminated); NULL: the environment as is */
  const tsr__spawn_fd *fds; /* applied as if at once (a `from` may be another's `to`) */
  int nfds;                 /* at most TSR__SPAWN_MAX_FDS */
  int new_group;       /* its own process group (pgid = pid): the deadline kill
                        * and the final sweep reach everything it started */
  int die_with_parent; /* SIGKILL when this process dies (PR_SET_PDEATHSIG) */
} tsr__spawn_opts;

/* A started child. A plain value: a process that was started elsewhere as
 * this process's child can be waited for as {.pid = pid}. */
typedef struct {
  pid_t pid;
  int group;     /* pid is also the id of its own process group */
  int64_t t0_ns; /* tsr__now_ns() just before the fork */
} tsr__proc;

typedef struct {
  int status;        /* the raw wait status */
  int exited, code;  /* WIFEXITED, WEXITSTATUS */
  int signaled, sig; /* died from a signal that was not the deadline's kill */
  int timed_out;     /* still running at the deadline: killed */
  int64_t wall_ns;   /* from t0_ns to the reap */
} tsr__spawn_result;

/* Output read while waiting: fd's bytes until end of file. */
typedef struct {
  int fd;     /* the read end; the wait closes it */
  size_t max; /* keep at most max bytes (the rest is read and dropped); 0: all */
  char *buf;  /* out: malloc'ed, NUL-terminated (NULL only when out of memory) */
  size_t len; /* out: bytes kept */
} tsr__spawn_capture;

enum {
  TSR__SPAWN_OK = 0,
  TSR__SPAWN_NOEXEC = 1, /* the program could not be executed; nothing is left running */
  TSR__SPAWN_FAILED = -1 /* no process could be made (pipe, fork, memory) */
};

/* Starts o->file. Returns TSR__SPAWN_OK with *p, or TSR__SPAWN_NOEXEC /
 * TSR__SPAWN_FAILED with errno set and one line in msg ("cannot run python3:
 * No such file or directory"). An exec failure is known when this returns:
 * the child reports it through a close-on-exec pipe and is reaped here. */
int tsr__spawn(const tsr__spawn_opts *o, tsr__proc *p, char *msg, size_t cap);

/* Waits for p to exit, reading cap (optional) until end of file meanwhile.
 * deadline_ns: tsr__now_ns() value, 0 for none. At the deadline, if p has not
 * exited it is timed out: SIGTERM to p (its group when p->group), after
 * grace_ns SIGKILL; if it has exited but cap is still open (a descendant
 * holds it), reading stops there. A group's members left after p exits are
 * killed before p is reaped. Always reaps p; EINTR is retried throughout. */
void tsr__spawn_wait(const tsr__proc *p, int64_t deadline_ns, int64_t grace_ns,
                     tsr__spawn_capture *cap, tsr__spawn_result *r);

#endif
