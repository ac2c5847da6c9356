/* The MPI plumbing of tessera-mpi shared by its verbs (cli/tune_mpi.c,
 * cli/bench_mpi.c; docs/tune.md, "Scale-out"): start and end, the local
 * rank's GPU, agreement on an exit code, whole files between ranks and
 * written atomically. Compiled only into the MPI build (TSR_WITH_MPI); the
 * plain tessera never links MPI. */
#ifdef TSR_WITH_MPI
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include "cli.h"

#define CHUNK (1 << 28)

static int g_rank, g_size, g_local, g_node_has_root;
static MPI_Comm g_node = MPI_COMM_NULL;

int tsr_cli_mpi_rank(void) { return g_rank; }
int tsr_cli_mpi_size(void) { return g_size; }
int tsr_cli_mpi_local(void) { return g_local; }
int tsr_cli_mpi_node_has_root(void) { return g_node_has_root; }

/* CUDA_VISIBLE_DEVICES for the local rank: the local rank's entry of an
 * existing list (modulo its length; a single entry, e.g. set per task by
 * Slurm, stays), else the local rank itself. Set before any CUDA call. */
static void pick_gpu(void) {
  const char *vis = getenv("CUDA_VISIBLE_DEVICES");
  char buf[64];
  if (vis && *vis) {
    int n = 1;
    for (const char *c = vis; *c; c++) n += *c == ',';
    if (n == 1) return;
    const char *c = vis;
    for (int i = 0; i < g_local % n; i++) c = strchr(c, ',') + 1;
    size_t len = strcspn(c, ",");
    if (len >= sizeof buf) return;
    memcpy(buf, c, len);
    buf[len] = '\0';
  } else {
    snprintf(buf, sizeof buf, "%d", g_local);
  }
  setenv("CUDA_VISIBLE_DEVICES", buf, 1);
}

int tsr_cli_mpi_begin(const char *verb) {
  int provided = 0;
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    return tsr_cli_usage_error(verb, "MPI_Init_thread failed");
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  /* the ranks of this host: the local rank picks the GPU */
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &g_node);
  MPI_Comm_rank(g_node, &g_local);
  int root_here = g_rank == 0;
  MPI_Allreduce(&root_here, &g_node_has_root, 1, MPI_INT, MPI_MAX, g_node);
  if (provided < MPI_THREAD_SERIALIZED && g_size > 1) {
    tsr_cli_usage_error(verb, "the MPI library gives no thread support (MPI_THREAD_SERIALIZED "
                              "needed by rank 0's dispatcher)");
    MPI_Finalize();
    return TSR_EXIT_USAGE;
  }
  pick_gpu();
  return TSR_EXIT_OK;
}

int tsr_cli_mpi_end(int rc) {
  if (g_node != MPI_COMM_NULL) MPI_Comm_free(&g_node);
  MPI_Finalize();
  return rc;
}

int tsr_cli_mpi_agree_max(int v) {
  int m = v;
  MPI_Allreduce(&v, &m, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

int tsr_cli_mpi_read_file(const char *path, char **buf, int64_t *len) {
  *buf = NULL;
  *len = -1;
  FILE *f = fopen(path, "rb");
  if (!f) return errno == ENOENT ? 0 : -1;
  struct stat sb;
  if (fstat(fileno(f), &sb) || !(*buf = malloc((size_t)sb.st_size + 1)) ||
      fread(*buf, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
    fclose(f);
    free(*buf);
    *buf = NULL;
    return -1;
  }
  fclose(f);
  *len = sb.st_size;
  return 0;
}

int tsr_cli_mpi_write_atomic(const char *path, const char *buf, int64_t len) {
  char tmp[PATH_MAX + 48];
  snprintf(tmp, sizeof tmp, "%s.rank%d.%ld.tmp", path, g_rank, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  int64_t off = 0;
  while (off < len) {
    ssize_t w = write(fd, buf + off, (size_t)(len - off));
    if (w <= 0) break;
    off += w;
  }
  int ok = off == len && fsync(fd) == 0;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, path)) {
    unlink(tmp);
    return -1;
  }
  return 0;
}

void tsr_cli_mpi_send_bytes(const char *buf, int64_t len, int dest, int tag) {
  MPI_Send(&len, 1, MPI_INT64_T, dest, tag, MPI_COMM_WORLD);
  for (int64_t off = 0; off < len; off += CHUNK) {
    int n = (int)(len - off < CHUNK ? len - off : CHUNK);
    MPI_Send(buf + off, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
  }
}

/* Out of memory mid-transfer leaves the peers waiting: the job ends. */
void *tsr_cli_mpi_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    tsr_cli_error(NULL, "rank %d: out of memory for a file transfer", g_rank);
    MPI_Abort(MPI_COMM_WORLD, TSR_EXIT_USAGE);
  }
  return p;
}

char *tsr_cli_mpi_recv_bytes(int src, int tag, int64_t *len) {
  MPI_Recv(len, 1, MPI_INT64_T, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (*len < 0) return NULL;
  char *buf = tsr_cli_mpi_xmalloc((size_t)*len);
  for (int64_t off = 0; off < *len; off += CHUNK) {
    int n = (int)(*len - off < CHUNK ? *len - off : CHUNK);
    MPI_Recv(buf + off, n, MPI_BYTE, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return buf;
}
#endif
