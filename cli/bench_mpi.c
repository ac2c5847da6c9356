/* tessera-mpi bench: the bench's shapes measured by the ranks of an MPI
 * job (docs/protocol.md, "Under MPI"). Compiled only into the MPI build
 * (TSR_WITH_MPI); the plain tessera never links MPI.
 *
 * Design: the unit that stays together is a shape (its rounds and route
 * orders are balanced per shape). Each rank's directory must be one
 * ordinary run of the one-process protocol, whose shape list is fixed
 * before its first row (the shape order rotates between rounds), so the
 * shapes are dealt statically, not from a dynamic queue: in decreasing
 * m·n·k (ties: command order), round-robin to ranks 0..R-1, which spreads
 * the largest shapes over different ranks. Each rank then runs the
 * unchanged protocol on its shapes into DIR/rank<R>/, with the command line
 * of exactly that run recorded (its --shapes and --out), so `tessera audit
 * DIR/rank<R>` passes on its own. Rank 0 gathers the directories of ranks
 * on other hosts (those on its own host or a shared file system are already
 * there) and writes DIR/report.md and DIR/combined.json. */
#ifdef TSR_WITH_MPI
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "cli.h"
#include "measure/zoo.h"
#include "core/hash.h"
#include "sys/file.h"

enum { TAG_DIR = 11 };
#define INFO_CAP 4096
#define V "bench"

static const char division_text[] =
    "static, before any row: shapes in decreasing m*n*k*batch (a shape's own batch, else 1; ties: "
    "command order) dealt round-robin "
    "to ranks 0, 1, ..., R-1; each rank runs its shapes in the command's order";

/* owner[i]: the rank that measures shape i (division_text). */
static void deal(const tsr__bench_config *c, int ranks, int *owner) {
  int S = c->nshapes, *ix = malloc((size_t)S * sizeof *ix);
  double *w = malloc((size_t)S * sizeof *w);
  for (int i = 0; i < S; i++) {
    tsr__shape_token t;
    if (tsr__shape_token_parse(c->shapes[i], &t, NULL, 0)) t.m = t.n = t.k = 0;
    /* a token's own batch counts; the --batch of the others is common to all */
    w[i] = (double)t.m * (double)t.n * (double)t.k * (double)t.batch;
    ix[i] = i;
  }
  for (int i = 1; i < S; i++) /* stable insertion sort, heaviest first */
    for (int j = i; j > 0 && w[ix[j]] > w[ix[j - 1]]; j--) {
      int t = ix[j];
      ix[j] = ix[j - 1];
      ix[j - 1] = t;
    }
  for (int i = 0; i < S; i++) owner[ix[i]] = i % ranks;
  free(ix);
  free(w);
}

/* The command line of this rank's own run: the job's, without --preset,
 * --shapes and --out, then --shapes (its shapes), --out (its directory)
 * and, for a preset, the protocol values the preset implied. Values never
 * start with "--" (the parser refuses that), so every "--" token is an
 * option. */
static char **rank_argv(const tsr__bench_config *c, const char *shapes, const char *out, int *argc) {
  char **v = calloc((size_t)c->argc + 12, sizeof *v);
  int n = 0;
  for (int i = 0; i < c->argc; i++) {
    const char *t = c->argv[i];
    int drop = 0;
    static const char *const opts[] = {"--preset", "--shapes", "--out"};
    for (int j = 0; j < 3 && !drop; j++) {
      size_t l = strlen(opts[j]);
      if (!strcmp(t, opts[j])) drop = 2;
      else if (!strncmp(t, opts[j], l) && t[l] == '=') drop = 1;
    }
    if (drop == 2) i++;
    if (!drop) v[n++] = strdup(t);
  }
  v[n++] = strdup("--shapes");
  v[n++] = strdup(shapes);
  v[n++] = strdup("--out");
  v[n++] = strdup(out);
  if (c->preset) {
    char buf[32];
    v[n++] = strdup("--samples");
    snprintf(buf, sizeof buf, "%d", c->samples);
    v[n++] = strdup(buf);
    v[n++] = strdup("--sample-ms");
    snprintf(buf, sizeof buf, "%d", c->sample_ms);
    v[n++] = strdup(buf);
    v[n++] = strdup("--warmup-ms");
    snprintf(buf, sizeof buf, "%d", c->warmup_ms);
    v[n++] = strdup(buf);
  }
  *argc = n;
  return v;
}

/* ---- rank directories to rank 0 ------------------------------------------- */
/* The regular files of dir and dir/logs, as names relative to dir. */
static int list_files(const char *dir, char ***names) {
  int n = 0, cap = 64;
  *names = malloc((size_t)cap * sizeof **names);
  const char *subs[] = {"", "logs/"};
  for (int s = 0; s < 2; s++) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, subs[s]);
    DIR *d = opendir(path);
    if (!d) continue;
    for (struct dirent *e; (e = readdir(d));) {
      char full[PATH_MAX + 400];
      snprintf(full, sizeof full, "%s%s", path, e->d_name);
      struct stat sb;
      if (e->d_name[0] == '.' || lstat(full, &sb) || !S_ISREG(sb.st_mode)) continue;
      if (n == cap) *names = realloc(*names, (size_t)(cap *= 2) * sizeof **names);
      char rel[512];
      snprintf(rel, sizeof rel, "%s%s", subs[s], e->d_name);
      (*names)[n++] = strdup(rel);
    }
    closedir(d);
  }
  return n;
}

static void sha_of(const char *path, char out[65]) {
  if (tsr__sha256_file(path, out)) out[0] = '\0';
}

/* A rank other than 0: its directory's results.json SHA-256 to rank 0, and
 * the files when rank 0 does not see them (another host, no shared file
 * system). */
static void send_dir(const char *rank_dir) {
  char sha[65], path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/results.json", rank_dir);
  sha_of(path, sha);
  MPI_Send(sha, 65, MPI_CHAR, 0, TAG_DIR, MPI_COMM_WORLD);
  int need = 0;
  MPI_Recv(&need, 1, MPI_INT, 0, TAG_DIR, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (!need) return;
  char **names;
  int n = list_files(rank_dir, &names);
  MPI_Send(&n, 1, MPI_INT, 0, TAG_DIR, MPI_COMM_WORLD);
  for (int i = 0; i < n; i++) {
    char full[PATH_MAX + 600], *buf = NULL;
    int64_t len = -1;
    snprintf(full, sizeof full, "%s/%s", rank_dir, names[i]);
    if (tsr_cli_mpi_read_file(full, &buf, &len)) len = -2;
    tsr_cli_mpi_send_bytes(names[i], (int64_t)strlen(names[i]) + 1, 0, TAG_DIR);
    tsr_cli_mpi_send_bytes(buf, len, 0, TAG_DIR);
    free(buf);
    free(names[i]);
  }
  free(names);
}

/* Rank 0: rank r's directory under rank_dir, received when it is not here.
 * 0, or 2 after one line. */
static int recv_dir(int r, const char *rank_dir) {
  char sha[65] = "", here[65], path[PATH_MAX + 64];
  MPI_Recv(sha, 65, MPI_CHAR, r, TAG_DIR, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  sha[64] = '\0';
  snprintf(path, sizeof path, "%s/results.json", rank_dir);
  struct stat sb;
  int present = stat(rank_dir, &sb) == 0;
  int need = !present && sha[0];
  MPI_Send(&need, 1, MPI_INT, r, TAG_DIR, MPI_COMM_WORLD);
  if (!sha[0]) {
    tsr_cli_error(V, "rank %d wrote no results.json in %s", r, rank_dir);
    return TSR_EXIT_USAGE;
  }
  if (!need) {
    sha_of(path, here);
    if (strcmp(here, sha)) {
      tsr_cli_error(V, "%s is not rank %d's results (SHA-256 %s here, %s there)", path, r, here, sha);
      return TSR_EXIT_USAGE;
    }
    return 0;
  }
  int n = 0, rc = 0;
  MPI_Recv(&n, 1, MPI_INT, r, TAG_DIR, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  char logs[PATH_MAX + 64];
  snprintf(logs, sizeof logs, "%s/logs", rank_dir);
  if (tsr__mkdirs(logs)) {
    tsr_cli_error(V, "cannot create %s: %s", logs, strerror(errno));
    rc = TSR_EXIT_USAGE;
  }
  for (int i = 0; i < n; i++) {
    int64_t nl, len;
    char *name = tsr_cli_mpi_recv_bytes(r, TAG_DIR, &nl);
    char *buf = tsr_cli_mpi_recv_bytes(r, TAG_DIR, &len);
    /* names come from list_files: plain names, or logs/ and a plain name */
    int ok = name && nl > 1 && !name[nl - 1] && !strstr(name, "..") && name[0] != '/';
    char full[PATH_MAX + 600];
    if (ok) snprintf(full, sizeof full, "%s/%s", rank_dir, name);
    if (!ok || len < 0 || tsr_cli_mpi_write_atomic(full, buf, len)) {
      tsr_cli_error(V, "rank %d's %s could not be received or written", r, name && ok ? name : "file");
      rc = TSR_EXIT_USAGE;
    }
    free(name);
    free(buf);
  }
  /* a log directory the run did not have is not invented */
  rmdir(logs);
  return rc;
}

/* ---- the job ------------------------------------------------------------- */
/* This rank's facts for combined.json as one JSON text in buf. */
static void rank_info(const tsr__bench_config *c, char *buf, size_t cap) {
  json_t *o = json_object(), *host = tsr__host_json();
  json_object_set(o, "host", json_object_get(host, "hostname") ? json_object_get(host, "hostname") : json_null());
  json_object_set_new(o, "local_rank", json_integer(tsr_cli_mpi_local()));
  const char *vis = getenv("CUDA_VISIBLE_DEVICES");
  json_object_set_new(o, "cuda_visible_devices", vis ? json_string(vis) : json_null());
  json_object_set_new(o, "device_key", tsr__bench_device_key(c));
  char *t = json_dumps(o, TSR_BENCH_CANONICAL_FLAGS);
  snprintf(buf, cap, "%s", t && strlen(t) < cap ? t : "{}");
  free(t);
  json_decref(o);
  json_decref(host);
}

static int job(tsr__bench_config *c) {
  int rank = tsr_cli_mpi_rank(), size = tsr_cli_mpi_size();
  char started[64];
  tsr__utc_now(started, sizeof started);
  /* --out: rank 0's default (a timestamp) for every rank */
  char dir[PATH_MAX] = "";
  if (rank == 0) {
    if (c->out_dir) snprintf(dir, sizeof dir, "%s", c->out_dir);
    else {
      time_t t = time(NULL);
      struct tm tm;
      gmtime_r(&t, &tm);
      strftime(dir, sizeof dir, "results/%Y%m%dT%H%M%SZ", &tm);
    }
  }
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  dir[sizeof dir - 1] = '\0';

  /* Refusals, before anything is written: exit 2 on every rank. */
  int bad = 0;
  if (size > c->nshapes) {
    if (rank == 0)
      tsr_cli_usage_error(V, "%d ranks for %d shapes: a shape is the unit one rank measures, so "
                             "every rank needs one (start at most %d ranks)", size, c->nshapes, c->nshapes);
    bad = 1;
  }
  /* rank 0 says it once; a rank on another host that finds it says so */
  struct stat sb;
  int exists = stat(dir, &sb) == 0 || errno != ENOENT, e0 = exists;
  MPI_Bcast(&e0, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (exists && !bad && (rank == 0 || !e0))
    tsr_cli_usage_error(V, "--out: '%s' already exists%s; refusing to touch it", dir,
                        rank ? " on a rank's host" : "");
  bad |= exists;
  int *owner = calloc((size_t)c->nshapes, sizeof *owner);
  deal(c, size, owner);
  char **mine = calloc((size_t)c->nshapes, sizeof *mine);
  int nmine = 0;
  size_t joined_len = 1;
  for (int i = 0; i < c->nshapes; i++)
    if (owner[i] == rank) {
      mine[nmine++] = c->shapes[i];
      joined_len += strlen(c->shapes[i]) + 1;
    }
  tsr__bench_config rc_cfg = *c;
  rc_cfg.shapes = mine;
  rc_cfg.nshapes = nmine;
  rc_cfg.preset = NULL;
  rc_cfg.quiet_tables = 1;
  rc_cfg.progress = 0; /* one terminal, many ranks */
  if (!bad && nmine && tsr__bench_preflight(&rc_cfg)) bad = 1;

  /* One device model per job. */
  char info[INFO_CAP], *all = rank == 0 ? calloc((size_t)size, INFO_CAP) : NULL;
  if (tsr_cli_mpi_agree_max(bad)) {
    free(all);
    free(owner);
    free(mine);
    return TSR_EXIT_USAGE;
  }
  rank_info(c, info, sizeof info);
  MPI_Gather(info, INFO_CAP, MPI_CHAR, all, INFO_CAP, MPI_CHAR, 0, MPI_COMM_WORLD);
  json_t *infos = json_array();
  if (rank == 0) {
    for (int r = 0; r < size; r++) {
      json_error_t err;
      json_t *o = json_loads(all + (size_t)r * INFO_CAP, 0, &err);
      json_array_append_new(infos, o ? o : json_object());
    }
    char *k0 = json_dumps(json_object_get(json_array_get(infos, 0), "device_key"), TSR_BENCH_CANONICAL_FLAGS);
    for (int r = 1; r < size && !bad; r++) {
      char *kr = json_dumps(json_object_get(json_array_get(infos, (size_t)r), "device_key"), TSR_BENCH_CANONICAL_FLAGS);
      if (!k0 || !kr || strcmp(k0, kr)) {
        tsr_cli_usage_error(V, "ranks run on different devices (rank 0: %.300s; rank %d: %.300s): one "
                               "job per device model", k0 ? k0 : "?", r, kr ? kr : "?");
        bad = 1;
      }
      free(kr);
    }
    free(k0);
  }
  free(all);
  /* DIR by rank 0 first (its parents too), then on every other host */
  if (!bad && rank == 0 && tsr__mkdirs(dir)) {
    tsr_cli_usage_error(V, "--out: cannot create '%s': %s", dir, strerror(errno));
    bad = 1;
  }
  if (tsr_cli_mpi_agree_max(bad)) {
    json_decref(infos);
    free(owner);
    free(mine);
    return TSR_EXIT_USAGE;
  }
  if (rank != 0 && tsr__mkdirs(dir)) bad = 1;
  if (tsr_cli_mpi_agree_max(bad)) {
    tsr_cli_error(V, "rank %d: cannot create '%s'", rank, dir);
    json_decref(infos);
    free(owner);
    free(mine);
    return TSR_EXIT_USAGE;
  }
  if (rank == 0) {
    printf("mpi       %d rank(s); %d shape(s) dealt (%s); results in %s/rank<R>\n\n", size,
           c->nshapes, "largest first, round-robin", dir);
    fflush(stdout);
  }

  /* This rank's run: the one-process protocol on its shapes. */
  char rdir[PATH_MAX + 32], *joined = calloc(joined_len, 1);
  snprintf(rdir, sizeof rdir, "%s/rank%d", dir, rank);
  for (int i = 0; i < nmine; i++) {
    if (i) strcat(joined, ",");
    strcat(joined, mine[i]);
  }
  int rargc;
  char **rargv = rank_argv(c, joined, rdir, &rargc);
  rc_cfg.out_dir = rdir;
  rc_cfg.argc = rargc;
  rc_cfg.argv = rargv;
  double t0 = MPI_Wtime();
  int rrc = tsr__bench_run(&rc_cfg);
  printf("rank %d: %s: %d shape(s) (%s) in %.1f s, exit %d\n", rank, rdir, nmine, joined,
         MPI_Wtime() - t0, rrc);
  fflush(stdout);
  for (int i = 0; i < rargc; i++) free(rargv[i]);
  free(rargv);

  /* Rank 0: every rank's directory here, then combined.json and report.md. */
  int *codes = rank == 0 ? calloc((size_t)size, sizeof *codes) : NULL;
  MPI_Gather(&rrc, 1, MPI_INT, codes, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int crc = 0;
  if (rank == 0) {
    for (int r = 1; r < size; r++) {
      char d[PATH_MAX + 32];
      snprintf(d, sizeof d, "%s/rank%d", dir, r);
      int x = recv_dir(r, d);
      crc = x > crc ? x : crc;
    }
  } else {
    send_dir(rdir);
  }
  if (rank == 0 && !crc) {
    json_t *cb = json_object(), *cl = json_array(), *hosts = json_array(), *shapes = json_array(),
           *per = json_array();
    json_object_set_new(cb, "schema", json_string(TSR_BENCH_MPI_SCHEMA));
    json_object_set_new(cb, "tessera_version", json_string(TSR_VERSION));
    json_object_set_new(cb, "started_utc", json_string(started));
    for (int i = 0; i < c->argc; i++) json_array_append_new(cl, json_string(c->argv[i]));
    json_object_set_new(cb, "command_line", cl);
    json_object_set_new(cb, "out_dir", json_string(dir));
    json_object_set_new(cb, "ranks", json_integer(size));
    json_object_set_new(cb, "division", json_string(division_text));
    for (int i = 0; i < c->nshapes; i++) json_array_append_new(shapes, json_string(c->shapes[i]));
    json_object_set_new(cb, "shapes", shapes);
    json_object_set(cb, "device_key", json_object_get(json_array_get(infos, 0), "device_key"));
    for (int r = 0; r < size; r++) {
      const json_t *in = json_array_get(infos, (size_t)r);
      const char *h = json_string_value(json_object_get(in, "host"));
      int seen = 0;
      for (size_t j = 0; j < json_array_size(hosts) && h; j++)
        seen |= !strcmp(json_string_value(json_array_get(hosts, j)), h);
      if (h && !seen) json_array_append_new(hosts, json_string(h));
      json_t *pr = json_object(), *sh = json_array();
      char rd[32];
      snprintf(rd, sizeof rd, "rank%d", r);
      json_object_set_new(pr, "rank", json_integer(r));
      json_object_set(pr, "host", h ? json_object_get(in, "host") : json_null());
      json_object_set(pr, "local_rank", json_object_get(in, "local_rank"));
      json_object_set(pr, "cuda_visible_devices", json_object_get(in, "cuda_visible_devices"));
      json_object_set(pr, "device_key", json_object_get(in, "device_key"));
      json_object_set_new(pr, "dir", json_string(rd));
      for (int i = 0; i < c->nshapes; i++)
        if (owner[i] == r) json_array_append_new(sh, json_string(c->shapes[i]));
      json_object_set_new(pr, "shapes", sh);
      json_object_set_new(pr, "exit_code", json_integer(codes[r]));
      json_array_append_new(per, pr);
    }
    json_object_set_new(cb, "hosts", hosts);
    json_object_set_new(cb, "per_rank", per);
    char digest[65], msg[1200], *md = NULL;
    if (tsr__bench_combine(dir, cb, digest, &md, msg, sizeof msg)) {
      tsr_cli_error(V, "combined report: %s", msg);
      crc = TSR_EXIT_FAIL;
    } else {
      fputs(md, stdout);
      printf("\ncombined: %s/combined.json\nreport: %s/report.md\ndigest: sha256:%s\n", dir, dir, digest);
    }
    free(md);
    json_decref(cb);
  }
  json_decref(infos);
  free(codes);
  free(joined);
  free(owner);
  free(mine);
  int out = tsr_cli_mpi_agree_max(rrc > crc ? rrc : crc);
  if (rank == 0) fflush(stdout);
  return out;
}

int tsr_cli_bench_mpi(tsr__bench_config *c) {
  int rc = tsr_cli_mpi_begin(V);
  if (rc) return rc;
  return tsr_cli_mpi_end(job(c));
}
#endif
