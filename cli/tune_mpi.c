/* tessera-mpi tune: the work items of `tessera tune` (shapes x precision
 * modes x candidate blocks) run by the ranks of an MPI job (docs/tune.md,
 * "Scale-out"). Compiled only into the MPI build (TSR_WITH_MPI); the plain
 * tessera never links MPI.
 *
 * Design: every rank works. Rank 0 also runs a dispatcher thread that
 * hands the next pending item to whichever rank asks (a dynamic queue:
 * tune times differ by 100x between items); rank 0's own worker takes
 * items from the same queue under a mutex. Only the dispatcher thread
 * calls MPI while items run, so MPI_THREAD_SERIALIZED suffices. Each rank
 * tunes into its own file beside --db on its local disk (PATH stem +
 * .rank<R>.db), committed after every candidate; at the end rank 0
 * receives every rank file (and every other host's existing --db),
 * merges them with its own --db (merge.c's deterministic rule), and
 * broadcasts the merged bytes, which one rank per host writes atomically
 * to its local --db. A rerun of the same command skips items that have a
 * finished run in a rank file or in rank 0's --db. */
#ifdef TSR_WITH_MPI
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "cli.h"
#include "tune/tune.h"

enum { TAG_REQ = 1, TAG_ITEM, TAG_FILE };
#define TARGET_CAP 512

#define CHUNK (1 << 28)

/* PATH's rank file: "dir/tune.db" -> "dir/tune.rank3.db". */
static void rank_path(const char *db, int rank, char *buf, size_t cap) {
  size_t n = strlen(db);
  if (n > 3 && !strcmp(db + n - 3, ".db"))
    snprintf(buf, cap, "%.*s.rank%d.db", (int)(n - 3), db, rank);
  else
    snprintf(buf, cap, "%s.rank%d.db", db, rank);
}

/* ---- the queue ------------------------------------------------------------ */
typedef struct {
  int *pending;
  int n, next;
  pthread_mutex_t mu;
} queue;

static int take(queue *q) {
  pthread_mutex_lock(&q->mu);
  int i = q->next < q->n ? q->pending[q->next++] : -1;
  pthread_mutex_unlock(&q->mu);
  return i;
}

/* Rank 0's dispatcher: answers each request with the next item, or -1 once
 * the queue is empty; ends when every other rank got its -1. Polls with a
 * short sleep: a blocking receive spins a core that rank 0's own tunes
 * need. */
static void *dispatch(void *arg) {
  queue *q = arg;
  int finished = 0;
  while (finished < tsr_cli_mpi_size() - 1) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, MPI_COMM_WORLD, &flag, &st);
    if (!flag) {
      nanosleep(&(struct timespec){0, 2000000}, NULL);
      continue;
    }
    int dummy;
    MPI_Recv(&dummy, 1, MPI_INT, st.MPI_SOURCE, TAG_REQ, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int item = take(q);
    MPI_Send(&item, 1, MPI_INT, st.MPI_SOURCE, TAG_ITEM, MPI_COMM_WORLD);
    finished += item < 0;
  }
  return NULL;
}

static int next_item(queue *q) {
  if (tsr_cli_mpi_rank() == 0) return take(q);
  int req = 0, item = -1;
  MPI_Send(&req, 1, MPI_INT, 0, TAG_REQ, MPI_COMM_WORLD);
  MPI_Recv(&item, 1, MPI_INT, 0, TAG_ITEM, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return item;
}

/* ---- files ---------------------------------------------------------------- */
/* A database's file alone holds all of it (its WAL folded in), or -1. */
static int settle(const char *path) {
  char msg[1400];
  if (access(path, F_OK)) return 0;
  if (tsr__tune_db_settle(path, msg, sizeof msg)) {
    tsr_cli_error("tune", "rank %d: %s", tsr_cli_mpi_rank(), msg);
    return -1;
  }
  return 0;
}

/* Sends path's bytes to rank 0 (length -1: no such file, -2: unreadable). */
static int send_file(const char *path) {
  char *buf;
  int64_t len;
  int bad = settle(path) || tsr_cli_mpi_read_file(path, &buf, &len);
  if (bad) {
    tsr_cli_error("tune", "rank %d: cannot read %s: %s", tsr_cli_mpi_rank(), path, strerror(errno));
    tsr_cli_mpi_send_bytes(NULL, -2, 0, TAG_FILE);
    return -1;
  }
  tsr_cli_mpi_send_bytes(buf, len, 0, TAG_FILE);
  free(buf);
  return 0;
}

/* Rank 0: every rank's files received into a folder beside --db, merged
 * with --db into --db. 0, or 2 after a message. */
static int gather_and_merge(const char *db, const char *own) {
  int rc = 0;
  char dir[PATH_MAX + 32];
  snprintf(dir, sizeof dir, "%s.gather.XXXXXX", db);
  if (!mkdtemp(dir)) {
    tsr_cli_error("tune", "cannot create a folder beside %s: %s", db, strerror(errno));
    dir[0] = '\0';
  }
  int cap = 2 * tsr_cli_mpi_size() + 2, n = 0;
  char **in = calloc((size_t)cap, sizeof *in);
  if (settle(db) || settle(own)) rc = TSR_EXIT_USAGE;
  if (!access(db, F_OK)) in[n++] = strdup(db);
  if (!access(own, F_OK)) in[n++] = strdup(own);
  for (int r = 1; r < tsr_cli_mpi_size(); r++) {
    /* every rank sends its rank file; a host's first rank its --db too */
    int leader;
    MPI_Recv(&leader, 1, MPI_INT, r, TAG_FILE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int f = 0; f < 1 + leader; f++) {
      int64_t len;
      char *buf = tsr_cli_mpi_recv_bytes(r, TAG_FILE, &len);
      if (len == -2) {
        tsr_cli_error("tune", "rank %d's %s could not be received", r, f ? "database" : "rank file");
        rc = TSR_EXIT_USAGE;
      }
      if (buf && dir[0]) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/rank%d.%s.db", dir, r, f ? "db" : "own");
        if (tsr_cli_mpi_write_atomic(path, buf, len)) {
          tsr_cli_error("tune", "cannot write %s: %s", path, strerror(errno));
          rc = TSR_EXIT_USAGE;
        } else {
          in[n++] = strdup(path);
        }
      }
      free(buf);
    }
  }
  if (!dir[0]) rc = TSR_EXIT_USAGE;
  if (!rc && n) {
    char msg[2400];
    if (tsr__tune_db_merge(db, (const char *const *)in, n, msg, sizeof msg)) {
      tsr_cli_error("tune", "%s", msg);
      rc = TSR_EXIT_USAGE;
    } else {
      printf("merged    %d database(s) of %d rank(s) into %s\n", n, tsr_cli_mpi_size(), db);
    }
  }
  for (int i = 0; i < n; i++) {
    if (dir[0] && !strncmp(in[i], dir, strlen(dir))) {
      unlink(in[i]);
      char side[PATH_MAX + 80];
      snprintf(side, sizeof side, "%s-shm", in[i]);
      unlink(side);
      snprintf(side, sizeof side, "%s-wal", in[i]);
      unlink(side);
    }
    free(in[i]);
  }
  free(in);
  if (dir[0]) rmdir(dir);
  return rc;
}

int tsr_cli_tune_mpi(const tsr_cli_tune_queue *q, int rc) {
  if ((rc = tsr_cli_mpi_agree_max(rc))) return rc;
  double t0 = MPI_Wtime();
  /* One device model per job: keys of different models never mix. */
  char mine[TARGET_CAP] = "", *all = tsr_cli_mpi_rank() == 0 ? calloc((size_t)tsr_cli_mpi_size(), TARGET_CAP) : NULL;
  int bad = q->target(q->arg, mine, sizeof mine) != 0;
  MPI_Gather(mine, TARGET_CAP, MPI_CHAR, all, TARGET_CAP, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (tsr_cli_mpi_rank() == 0) {
    for (int r = 1; r < tsr_cli_mpi_size() && !bad; r++)
      if (strcmp(all + (size_t)r * TARGET_CAP, all)) {
        tsr_cli_usage_error("tune",
                            "ranks run on different devices (rank 0: %s; rank %d: %s): one job "
                            "per device model, then --merge their databases",
                            all, r, all + (size_t)r * TARGET_CAP);
        bad = 1;
      }
    free(all);
  }
  if ((rc = tsr_cli_mpi_agree_max(bad ? TSR_EXIT_USAGE : 0))) return rc;

  /* Resume: items with a finished run in any rank file or in rank 0's --db. */
  char own[PATH_MAX];
  rank_path(q->db_path, tsr_cli_mpi_rank(), own, sizeof own);
  int *done = calloc((size_t)q->nitems, sizeof *done), *any = calloc((size_t)q->nitems, sizeof *any);
  int err = 0;
  for (int i = 0; i < q->nitems && !err; i++) {
    int d = q->done(q->arg, i, own);
    if (!d && tsr_cli_mpi_rank() == 0) d = q->done(q->arg, i, q->db_path);
    if (d < 0) err = 1;
    done[i] = d > 0;
  }
  MPI_Allreduce(done, any, q->nitems, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if ((rc = tsr_cli_mpi_agree_max(err ? TSR_EXIT_USAGE : 0))) {
    free(done);
    free(any);
    return rc;
  }
  queue qu = {.pending = calloc((size_t)q->nitems + 1, sizeof(int))};
  pthread_mutex_init(&qu.mu, NULL);
  for (int i = 0; i < q->nitems; i++)
    if (!any[i]) qu.pending[qu.n++] = i;
  if (tsr_cli_mpi_rank() == 0) {
    printf("mpi       %d rank(s); %d work item(s), %d already finished (skipped); rank files "
           "beside %s\n\n",
           tsr_cli_mpi_size(), q->nitems, q->nitems - qu.n, q->db_path);
    fflush(stdout);
  }
  free(done);
  free(any);

  pthread_t th;
  int threaded = tsr_cli_mpi_rank() == 0 && tsr_cli_mpi_size() > 1;
  if (threaded && pthread_create(&th, NULL, dispatch, &qu)) {
    tsr_cli_error("tune", "rank 0: cannot start the dispatcher thread");
    MPI_Abort(MPI_COMM_WORLD, TSR_EXIT_USAGE);
  }
  int fail = 0;
  for (int i; (i = next_item(&qu)) >= 0;) {
    int r = q->run(q->arg, i, own, tsr_cli_mpi_rank(), tsr_cli_mpi_size());
    fail = r > fail ? r : fail;
  }
  if (threaded) pthread_join(th, NULL);
  free(qu.pending);
  pthread_mutex_destroy(&qu.mu);

  /* Gather, merge on rank 0, broadcast. */
  int merge_rc = 0;
  if (tsr_cli_mpi_rank() == 0) {
    merge_rc = gather_and_merge(q->db_path, own);
  } else {
    int leader = tsr_cli_mpi_local() == 0 && !tsr_cli_mpi_node_has_root() && !access(q->db_path, F_OK);
    MPI_Send(&leader, 1, MPI_INT, 0, TAG_FILE, MPI_COMM_WORLD);
    if (send_file(own)) merge_rc = TSR_EXIT_USAGE;
    if (leader && send_file(q->db_path)) merge_rc = TSR_EXIT_USAGE;
  }
  int mrc = tsr_cli_mpi_agree_max(merge_rc);
  if (!mrc) {
    char *buf = NULL;
    int64_t len = -1;
    if (tsr_cli_mpi_rank() == 0 && tsr_cli_mpi_read_file(q->db_path, &buf, &len)) len = -1;
    MPI_Bcast(&len, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (len >= 0) {
      if (tsr_cli_mpi_rank() != 0) buf = tsr_cli_mpi_xmalloc((size_t)len);
      for (int64_t off = 0; off < len; off += CHUNK) {
        int n = (int)(len - off < CHUNK ? len - off : CHUNK);
        MPI_Bcast(buf + off, n, MPI_BYTE, 0, MPI_COMM_WORLD);
      }
      /* one writer per host that rank 0 is not on */
      if (tsr_cli_mpi_rank() != 0 && tsr_cli_mpi_local() == 0 && !tsr_cli_mpi_node_has_root()) {
        char side[PATH_MAX + 16];
        struct stat sb;
        snprintf(side, sizeof side, "%s-wal", q->db_path);
        if (stat(side, &sb) == 0 && sb.st_size > 0) {
          tsr_cli_error("tune", "rank %d: %s is in use (%s); merged database not written there",
                        tsr_cli_mpi_rank(), q->db_path, side);
          merge_rc = TSR_EXIT_USAGE;
        } else if (tsr_cli_mpi_write_atomic(q->db_path, buf, len)) {
          tsr_cli_error("tune", "rank %d: cannot write %s: %s", tsr_cli_mpi_rank(), q->db_path,
                        strerror(errno));
          merge_rc = TSR_EXIT_USAGE;
        }
      }
    } else if (tsr_cli_mpi_rank() == 0) {
      tsr_cli_error("tune", "cannot read the merged %s", q->db_path);
      merge_rc = TSR_EXIT_USAGE;
    }
    free(buf);
  }
  rc = tsr_cli_mpi_agree_max(fail > merge_rc ? fail : merge_rc);
  if (tsr_cli_mpi_rank() == 0) {
    printf("mpi       done in %.1f s on %d rank(s); exit %d\n", MPI_Wtime() - t0, tsr_cli_mpi_size(), rc);
    fflush(stdout);
  }
  return rc;
}
#endif
