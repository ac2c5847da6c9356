/* On-disk cache of FP64 oracle outputs keyed by everything that determines
 * them: (shape, ops, alpha, beta, batch, inputs, seed) and the generator
 * version. An entry is a header (magic, key text, element count, the strict
 * reference's rel. Frobenius error as an exact hex float, the payload
 * digest, producer) followed by the payload: the raw doubles of ref, then
 * the floats of scale. The digest is SHA-256 over the 32-byte SHA-256s of
 * the payload's consecutive CHUNK-byte pieces (the last one shorter), so a
 * load reads and verifies the pieces on every core at once (one SHA-256
 * stream over 805 MB took most of a row's time at 8192^2). A load verifies
 * all of it, so a damaged or foreign entry is recomputed, never trusted.
 * The producer is gpu (tsr_oracle_gpu) or cpu (tsr_oracle_cpu). */
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
#include "core/par.h"
#include "measure/measure.h"
#include "sys/file.h"

/* /4: the chunked payload digest; /3: ref + scale + strict_rel_fro (the
 * accuracy contract's inputs); gen=2: the normal and wide input families
 * exist. */
#define MAGIC "tessera-oracle/4"
#define CHUNK ((size_t)4 << 20)

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

/* The payload's chunks: read from fd at offset base into ref and scale
 * (fd >= 0, a load), or only hashed (a store); chunk i's SHA-256 in md[i],
 * bad[i] set when it could not be read or hashed. */
typedef struct {
  double *ref;
  float *scale;
  size_t count;
  int fd;
  uint64_t base;
  unsigned char (*md)[32];
  char *bad;
} chunk_job;

static void chunk_rows(void *arg, int thread, int64_t c0, int64_t c1) {
  const chunk_job *j = arg;
  const size_t nref = j->count * sizeof *j->ref, total = nref + j->count * sizeof *j->scale;
  for (int64_t c = c0; c < c1; c++) {
    size_t off = (size_t)c * CHUNK, end = off + CHUNK < total ? off + CHUNK : total;
    /* at most two pieces: the end of ref and the start of scale */
    const void *part[2];
    size_t len[2];
    int n = 0;
    if (off < nref) {
      part[n] = (char *)j->ref + off;
      len[n++] = (end < nref ? end : nref) - off;
    }
    if (end > nref) {
      size_t s0 = off > nref ? off - nref : 0;
      part[n] = (char *)j->scale + s0;
      len[n++] = end - nref - s0;
    }
    int ok = 1;
    for (int i = 0, pos = 0; ok && j->fd >= 0 && i < n; pos += (int)len[i], i++)
      ok = !tsr__pread_full(j->fd, (void *)part[i], len[i], j->base + off + (uint64_t)pos);
    j->bad[c] = !ok || tsr__sha256_parts(part, len, n, j->md[c]);
  }
}

/* The payload digest (hex) over ref then scale, reading them first from fd
 * at base when fd >= 0. Returns 0, or -1 (a read or hash failed, no
 * memory). */
static int payload_digest(double *ref, float *scale, size_t count, int fd, uint64_t base,
                          char out[65]) {
  size_t total = count * (sizeof *ref + sizeof *scale), chunks = (total + CHUNK - 1) / CHUNK;
  if (!chunks) chunks = 1; /* an empty payload: the digest of one empty chunk */
  chunk_job j = {ref, scale, count, fd, base, malloc(chunks * 32), calloc(chunks, 1)};
  int ok = j.md && j.bad;
  if (ok) tsr__parallel_rows((int64_t)chunks, (double)total, chunk_rows, &j);
  for (size_t c = 0; ok && c < chunks; c++) ok = !j.bad[c];
  const void *part[1] = {j.md};
  size_t len[1] = {chunks * 32};
  ok = ok && !tsr__sha256_hex_parts(part, len, 1, out);
  free(j.md);
  free(j.bad);
  return ok ? 0 : -1;
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
  long header = ok ? ftell(f) : -1;
  if (ok) {
    magic[strcspn(magic, "\n")] = k[strcspn(k, "\n")] = sha[strcspn(sha, "\n")] = '\0';
    prod[strcspn(prod, "\n")] = fro[strcspn(fro, "\n")] = '\0';
    char *end;
    *strict = strtod(fro, &end);
    *source = !strcmp(prod, "gpu") ? "cache:gpu" : "cache:cpu";
    /* the payload fills the file exactly: read in parallel (pread) by the
     * digest's chunks, then checked */
    ok = !strcmp(magic, MAGIC) && !strcmp(k, key) && cnt == count && !*end && end != fro &&
         (!strcmp(prod, "gpu") || !strcmp(prod, "cpu")) && header > 0 &&
         size == (uint64_t)header + (uint64_t)count * (sizeof *ref + sizeof *scale) &&
         !payload_digest(ref, scale, count, fileno(f), (uint64_t)header, got) && !strcmp(got, sha);
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
  if (tsr__mkdirs(dir) != 0 || payload_digest((double *)ref, (float *)scale, count, -1, 0, sha))
    return; /* (fd -1: hashed only, never written to) */
  int n = snprintf(head, sizeof head, "%s\n%s\n%zu\n%a\n%s\n%s\n", MAGIC, key, count, strict, sha,
                   producer);
  if (n < 0 || (size_t)n >= sizeof head) return;
  tsr__span parts[3] = {{head, (size_t)n}, {ref, count * sizeof *ref}, {scale, count * sizeof *scale}};
  tsr__write_atomic(path, parts, 3, msg, sizeof msg); /* a failure: a cache miss later, nothing worse */
}

int tsr__oracle_cache_load(const tsr_problem *p, tsr_inputs inputs, uint64_t seed,
                           const char *cache_dir, double *ref, float *scale,
                           double *strict_rel_fro, const char **source, char key_sha[65]) {
  char key[512], path[4200];
  tsr__oracle_key(p, inputs, seed, key, sizeof key);
  tsr__sha256_hex(key, strlen(key), key_sha);
  if (!cache_dir) return -1;
  snprintf(path, sizeof path, "%s/%s.f64", cache_dir, key_sha);
  return load(path, key, (size_t)(p->batch * p->m * p->n), ref, scale, strict_rel_fro, source);
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
