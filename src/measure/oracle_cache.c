/* On-disk cache of FP64 oracle outputs keyed by everything that determines
 * them: (shape, ops, alpha, beta, batch, inputs, seed) and the generator
 * version. An entry is a header (magic, key text, element count, the strict
 * reference's rel. Frobenius error as an exact hex float, SHA-256 of the
 * payload, producer) followed by the raw doubles of ref and the floats of
 * scale; a load verifies all of it, so a damaged or foreign entry is
 * recomputed, never trusted. The producer is gpu (tsr_oracle_gpu) or cpu
 * (tsr_oracle_cpu). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hash.h"
#include "measure/measure.h"
#include "sys/file.h"

/* /3: ref + scale + strict_rel_fro (the accuracy contract's inputs);
 * gen=2: the normal and wide input families exist. */
#define MAGIC "tessera-oracle/3"

void tsr__oracle_key(const tsr_problem *p, tsr_inputs inputs, uint64_t seed, char *buf,
                     size_t cap) {
  /* %a prints alpha/beta exactly. The seed only matters for non-dyadic
   * inputs but is kept for every key so the key text is uniform. */
  snprintf(buf, cap,
           "gen=2 m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64
           " ops=%c%c alpha=%a beta=%a inputs=%s seed=%" PRIu64,
           p->m, p->n, p->k, p->batch, p->op_a == TSR_OP_T ? 'T' : 'N',
           p->op_b == TSR_OP_T ? 'T' : 'N', (double)p->alpha, (double)p->beta,
           tsr_inputs_name(inputs), seed);
}

const char *tsr__oracle_cache_default(void) {
  static char buf[4096];
  /* the one cache rule (sys/file.h); without HOME, under /tmp as before */
  if (tsr__cache_dir("oracle", buf, sizeof buf)) snprintf(buf, sizeof buf, "/tmp/.cache/tessera/oracle");
  return buf;
}

/* SHA-256 over ref then scale, streamed (a concatenated copy cost a second
 * 805 MB buffer and half of each load's time at 8192^2: the seed bench's
 * rows load two entries each) */
static int payload_sha(const double *ref, const float *scale, size_t count, char out[65]) {
  const void *parts[2] = {ref, scale};
  const size_t lens[2] = {count * sizeof *ref, count * sizeof *scale};
  return tsr__sha256_hex_parts(parts, lens, 2, out);
}

/* The header lines are read into these buffers: an entry is at most this
 * much text before its payload. */
#define HEADER_MAX (64 + 1024 + 32 + 64 + 80 + 32)

static int load(const char *path, const char *key, size_t count, double *ref, float *scale,
                double *strict, const char **source) {
  /* Only a regular file of the entry's exact size bound can be an entry:
   * a FIFO or device at the path is a miss, never a hang. */
  char why[512];
  int fd;
  uint64_t size;
  if (tsr__open_regular(path, (uint64_t)count * (sizeof *ref + sizeof *scale) + HEADER_MAX, &fd,
                        &size, why, sizeof why))
    return -1;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return -1;
  }
  char magic[64], k[1024], sha[80], prod[32], fro[64], got[65];
  unsigned long long cnt = 0;
  int ok = fgets(magic, sizeof magic, f) && fgets(k, sizeof k, f) &&
           fscanf(f, "%llu\n", &cnt) == 1 && fgets(fro, sizeof fro, f) && fgets(sha, sizeof sha, f) &&
           fgets(prod, sizeof prod, f);
  if (ok) {
    magic[strcspn(magic, "\n")] = k[strcspn(k, "\n")] = sha[strcspn(sha, "\n")] = '\0';
    prod[strcspn(prod, "\n")] = fro[strcspn(fro, "\n")] = '\0';
    char *end;
    *strict = strtod(fro, &end);
    *source = !strcmp(prod, "gpu") ? "cache:gpu" : "cache:cpu";
    ok = !strcmp(magic, MAGIC) && !strcmp(k, key) && cnt == count && !*end && end != fro &&
         (!strcmp(prod, "gpu") || !strcmp(prod, "cpu")) &&
         fread(ref, sizeof *ref, count, f) == count &&
         fread(scale, sizeof *scale, count, f) == count && fgetc(f) == EOF &&
         !payload_sha(ref, scale, count, got) && !strcmp(got, sha);
  }
  fclose(f);
  return ok ? 0 : -1;
}

int tsr__oracle_cache_has(const tsr_problem *p, tsr_inputs inputs, uint64_t seed,
                          const char *cache_dir) {
  if (!cache_dir) return 0;
  char key[512], key_sha[65], path[4200];
  tsr__oracle_key(p, inputs, seed, key, sizeof key);
  tsr__sha256_hex(key, strlen(key), key_sha);
  snprintf(path, sizeof path, "%s/%s.f64", cache_dir, key_sha);
  size_t count = (size_t)(p->batch * p->m * p->n);
  char why[512];
  int fd;
  uint64_t size;
  if (tsr__open_regular(path, (uint64_t)count * (sizeof(double) + sizeof(float)) + HEADER_MAX, &fd,
                        &size, why, sizeof why))
    return 0;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return 0;
  }
  char magic[64], k[1024], line[128];
  unsigned long long cnt = 0;
  int ok = fgets(magic, sizeof magic, f) && fgets(k, sizeof k, f) && fscanf(f, "%llu\n", &cnt) == 1;
  for (int i = 0; ok && i < 3; i++) ok = fgets(line, sizeof line, f) != NULL; /* fro, sha, producer */
  if (ok) {
    magic[strcspn(magic, "\n")] = k[strcspn(k, "\n")] = '\0';
    long header = ftell(f);
    ok = !strcmp(magic, MAGIC) && !strcmp(k, key) && cnt == count && header > 0 &&
         (double)size == (double)header + (double)count * (sizeof(double) + sizeof(float));
  }
  fclose(f);
  return ok;
}

static void store(const char *dir, const char *path, const char *key, size_t count,
                  const double *ref, const float *scale, double strict, const char *producer) {
  char head[1200], sha[65], msg[256];
  if (tsr__mkdirs(dir) != 0 || payload_sha(ref, scale, count, sha)) return;
  int n = snprintf(head, sizeof head, "%s\n%s\n%zu\n%a\n%s\n%s\n", MAGIC, key, count, strict, sha,
                   producer);
  if (n < 0 || (size_t)n >= sizeof head) return;
  tsr__span parts[3] = {{head, (size_t)n}, {ref, count * sizeof *ref}, {scale, count * sizeof *scale}};
  tsr__write_atomic(path, parts, 3, msg, sizeof msg); /* a failure: a cache miss later, nothing worse */
}

tsr_status tsr__oracle_cached(const tsr_problem *p, tsr_inputs inputs, uint64_t seed,
                              const float *a, const float *b, const float *c0,
                              const char *cache_dir, double *ref, float *scale,
                              double *strict_rel_fro, const char **source, char key_sha[65],
                              char *msg, size_t cap) {
  char key[512], path[4200];
  tsr__oracle_key(p, inputs, seed, key, sizeof key);
  tsr__sha256_hex(key, strlen(key), key_sha);
  size_t count = (size_t)(p->batch * p->m * p->n);
  if (cache_dir) {
    snprintf(path, sizeof path, "%s/%s.f64", cache_dir, key_sha);
    if (load(path, key, count, ref, scale, strict_rel_fro, source) == 0) return TSR_OK;
  }
  /* Large problems: the plain FP64 GPU kernel when a GPU is usable (it
   * shares no code with any route); otherwise, or on any failure, the CPU
   * reference. */
  *source = "cpu";
  double work = (double)p->m * (double)p->n * (double)p->k * (double)p->batch;
  tsr_context *ctx = NULL;
  if (work >= 1e8 && tsr_context_create(&ctx) == TSR_OK) {
    if (tsr_oracle_gpu(ctx, p, a, b, c0, ref, scale, strict_rel_fro) == TSR_OK) *source = "gpu";
    tsr_context_destroy(ctx);
  }
  if (!strcmp(*source, "cpu")) {
    tsr_status st = tsr_oracle_cpu(p, a, b, c0, ref, scale, strict_rel_fro);
    if (st) {
      snprintf(msg, cap, "oracle: %s", tsr_status_str(st));
      return st;
    }
  }
  if (cache_dir) store(cache_dir, path, key, count, ref, scale, *strict_rel_fro, *source);
  return TSR_OK;
}
