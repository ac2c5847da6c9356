/* On-disk cache of FP64 oracle outputs keyed by everything that determines
 * them: (shape, ops, alpha, beta, batch, inputs, seed) and the generator
 * version. An entry is a header (magic, key text, element count, SHA-256 of
 * the payload) followed by the raw doubles; a load verifies all four, so a
 * damaged or foreign entry is recomputed, never trusted. The header also
 * names the producer (gpu: tsr_oracle_gpu, cpu: tsr_oracle_cpu). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "core/hash.h"
#include "sys/file.h"

#define MAGIC "tessera-oracle/2"

void tsr__oracle_key(const tsr_problem *p, tsr_inputs inputs, uint64_t seed, char *buf,
                     size_t cap) {
  /* %a prints alpha/beta exactly. The seed only matters for random inputs
   * but is kept for every key so the key text is uniform. */
  snprintf(buf, cap,
           "gen=1 m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64
           " ops=%c%c alpha=%a beta=%a inputs=%s seed=%" PRIu64,
           p->m, p->n, p->k, p->batch, p->op_a == TSR_OP_T ? 'T' : 'N',
           p->op_b == TSR_OP_T ? 'T' : 'N', (double)p->alpha, (double)p->beta,
           inputs == TSR_INPUTS_RANDOM ? "random" : "dyadic", seed);
}

const char *tsr__oracle_cache_default(void) {
  static char buf[4096];
  const char *x = getenv("XDG_CACHE_HOME");
  if (x && *x) snprintf(buf, sizeof buf, "%s/tessera/oracle", x);
  else snprintf(buf, sizeof buf, "%s/.cache/tessera/oracle", getenv("HOME") ? getenv("HOME") : "/tmp");
  return buf;
}

static int mkdir_p(const char *dir) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", dir);
  for (char *s = tmp + 1; *s; s++)
    if (*s == '/') {
      *s = '\0';
      if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
      *s = '/';
    }
  return (mkdir(tmp, 0755) != 0 && errno != EEXIST) ? -1 : 0;
}

/* The header lines are read into these buffers: an entry is at most this
 * much text before its count doubles. */
#define HEADER_MAX (64 + 1024 + 32 + 80 + 32)

static int load(const char *path, const char *key, size_t count, double *ref,
                const char **source) {
  /* Only a regular file of the entry's exact size bound can be an entry:
   * a FIFO or device at the path is a miss, never a hang. */
  char why[512];
  int fd;
  uint64_t size;
  if (tsr__open_regular(path, (uint64_t)count * sizeof *ref + HEADER_MAX, &fd, &size, why, sizeof why))
    return -1;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return -1;
  }
  char magic[64], k[1024], sha[80], prod[32], got[65];
  unsigned long long cnt = 0;
  int ok = fgets(magic, sizeof magic, f) && fgets(k, sizeof k, f) &&
           fscanf(f, "%llu\n", &cnt) == 1 && fgets(sha, sizeof sha, f) && fgets(prod, sizeof prod, f);
  if (ok) {
    magic[strcspn(magic, "\n")] = k[strcspn(k, "\n")] = sha[strcspn(sha, "\n")] = '\0';
    prod[strcspn(prod, "\n")] = '\0';
    *source = !strcmp(prod, "gpu") ? "cache:gpu" : "cache:cpu";
    ok = !strcmp(magic, MAGIC) && !strcmp(k, key) && cnt == count &&
         (!strcmp(prod, "gpu") || !strcmp(prod, "cpu")) &&
         fread(ref, sizeof *ref, count, f) == count && fgetc(f) == EOF &&
         !tsr__sha256_hex(ref, count * sizeof *ref, got) && !strcmp(got, sha);
  }
  fclose(f);
  return ok ? 0 : -1;
}

static void store(const char *dir, const char *path, const char *key, size_t count,
                  const double *ref, const char *producer) {
  if (mkdir_p(dir) != 0) return;
  char tmp[4400], sha[65];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  if (tsr__sha256_hex(ref, count * sizeof *ref, sha)) return;
  FILE *f = fopen(tmp, "wb");
  if (!f) return;
  int ok = fprintf(f, "%s\n%s\n%zu\n%s\n%s\n", MAGIC, key, count, sha, producer) > 0 &&
           fwrite(ref, sizeof *ref, count, f) == count;
  ok = (fflush(f) == 0) && ok && fsync(fileno(f)) == 0;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) unlink(tmp); /* a cache miss later, nothing worse */
}

tsr_status tsr__oracle_cached(const tsr_problem *p, tsr_inputs inputs, uint64_t seed,
                              const char *cache_dir, double **ref, const char **source,
                              char key_sha[65], char *msg, size_t cap) {
  char key[512], path[4200];
  tsr__oracle_key(p, inputs, seed, key, sizeof key);
  tsr__sha256_hex(key, strlen(key), key_sha);
  size_t count = (size_t)(p->batch * p->m * p->n);
  *ref = malloc(count * sizeof **ref);
  if (!*ref) {
    snprintf(msg, cap, "oracle: cannot allocate %zu doubles", count);
    return TSR_ERR_NOMEM;
  }
  if (cache_dir) {
    snprintf(path, sizeof path, "%s/%s.f64", cache_dir, key_sha);
    if (load(path, key, count, *ref, source) == 0) return TSR_OK;
  }
  int64_t na = tsr_problem_elems_a(p), nb = tsr_problem_elems_b(p), nc = tsr_problem_elems_c(p);
  float *a = malloc((size_t)na * sizeof *a), *b = malloc((size_t)nb * sizeof *b);
  float *c0 = p->beta != 0.0f ? malloc((size_t)nc * sizeof *c0) : NULL;
  tsr_status st = TSR_OK;
  if (!a || !b || (p->beta != 0.0f && !c0)) {
    snprintf(msg, cap, "oracle: cannot allocate inputs");
    st = TSR_ERR_NOMEM;
  } else {
    tsr_fill(p, TSR_TENSOR_A, inputs, seed, a);
    tsr_fill(p, TSR_TENSOR_B, inputs, seed, b);
    if (c0) tsr_fill(p, TSR_TENSOR_C, inputs, seed, c0);
    *source = "cpu";
    /* Large problems: the plain FP64 GPU kernel when a GPU is usable (it
     * shares no code with any route); otherwise, or on any failure, the CPU
     * reference. */
    double work = (double)p->m * (double)p->n * (double)p->k * (double)p->batch;
    tsr_context *ctx = NULL;
    if (work >= 1e8 && tsr_context_create(&ctx) == TSR_OK) {
      if (tsr_oracle_gpu(ctx, p, a, b, c0, *ref) == TSR_OK) *source = "gpu";
      tsr_context_destroy(ctx);
    }
    if (!strcmp(*source, "cpu")) {
      st = tsr_oracle_cpu(p, a, b, c0, *ref);
      if (st) snprintf(msg, cap, "oracle: %s", tsr_status_str(st));
    }
  }
  free(a);
  free(b);
  free(c0);
  if (st) {
    free(*ref);
    *ref = NULL;
    return st;
  }
  if (cache_dir) store(cache_dir, path, key, count, *ref, *source);
  return TSR_OK;
}
