/* The torch zygote: one `python3 torch_route.py --zygote SOCKET` per bench
 * run. It imports torch once (no CUDA) and forks a fresh process for every
 * torch row, which then creates its own CUDA context; interpreter start and
 * `import torch` (seconds) leave the per-row cost. docs/protocol.md. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "sys/clock.h"
#include "sys/spawn.h"

static int64_t mono_ms(void) { return tsr__now_ns() / 1000000; }

int tsr__torch_zygote_start(tsr__torch_zygote *z, const char *script, const char *log_path,
                            int timeout_s, json_t **ready, char *msg, size_t cap) {
  memset(z, 0, sizeof *z);
  *ready = NULL;
  /* sun_path holds 108 bytes: a short path of our own, not under --out. */
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp || strlen(tmp) > 60) tmp = "/tmp";
  snprintf(z->sock, sizeof z->sock, "%s/tessera-torch-%ld.sock", tmp, (long)getpid());
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC)) goto sys_fail;
  if (pipe2(out, O_CLOEXEC)) {
    close(in[0]), close(in[1]);
    goto sys_fail;
  }
  int logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  tsr__spawn_fd fds[3] = {{in[0], 0}, {out[1], 1}, {logfd, 2}};
  char *argv[] = {"python3", (char *)script, "--zygote", z->sock, NULL};
  /* In this process's group (its rows' kills never reach it); it dies with
   * this process. */
  tsr__spawn_opts o = {.file = "python3", .argv = argv, .fds = fds, .nfds = logfd >= 0 ? 3 : 2,
                       .die_with_parent = 1};
  tsr__proc proc;
  char smsg[512];
  int sp = tsr__spawn(&o, &proc, smsg, sizeof smsg), err = errno;
  close(in[0]);
  close(out[1]);
  if (sp != TSR__SPAWN_OK) {
    close(in[1]);
    close(out[0]);
    if (sp == TSR__SPAWN_NOEXEC) { /* its line where the zygote's stderr would go */
      if (logfd >= 0) dprintf(logfd, "torch zygote: %s\n", smsg);
      else fprintf(stderr, "torch zygote: %s\n", smsg);
      snprintf(msg, cap, "torch zygote gave no ready line within %d s (see %s)", timeout_s, log_path);
    } else {
      snprintf(msg, cap, "torch zygote: %s", strerror(err));
    }
    if (logfd >= 0) close(logfd);
    return -1;
  }
  if (logfd >= 0) close(logfd);
  z->pid = proc.pid;
  z->stdin_fd = in[1];
  /* The ready line: one JSON object and a newline. */
  char line[4096];
  size_t len = 0;
  int64_t deadline = mono_ms() + (int64_t)timeout_s * 1000;
  while (len + 1 < sizeof line && !memchr(line, '\n', len)) {
    int64_t left = deadline - mono_ms();
    if (left <= 0) break;
    struct pollfd pf = {out[0], POLLIN, 0};
    int r = poll(&pf, 1, (int)left);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    ssize_t got = read(out[0], line + len, sizeof line - 1 - len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    len += (size_t)got;
  }
  close(out[0]);
  line[len] = '\0';
  json_error_t jerr;
  json_t *j = json_loads(line, JSON_DISABLE_EOF_CHECK, &jerr);
  if (!json_is_true(json_object_get(j, "ready"))) {
    snprintf(msg, cap, "torch zygote gave no ready line within %d s (see %s)", timeout_s, log_path);
    json_decref(j);
    tsr__torch_zygote_stop(z);
    return -1;
  }
  *ready = j;
  return 0;
sys_fail:
  snprintf(msg, cap, "torch zygote: %s", strerror(errno));
  return -1;
}

void tsr__torch_zygote_stop(tsr__torch_zygote *z) {
  if (!z->pid) return;
  close(z->stdin_fd); /* EOF on its stdin: it closes the socket and exits */
  tsr__proc proc = {.pid = z->pid}; /* not a group of its own: the kill is its alone */
  tsr__spawn_result r;
  tsr__spawn_wait(&proc, tsr__now_ns() + 5000000000LL, 0, NULL, &r);
  unlink(z->sock); /* in case it was killed before removing it */
  z->pid = 0;
}
