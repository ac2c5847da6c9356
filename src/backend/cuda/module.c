/* NVRTC compilation to CUBIN, the on-disk CUBIN cache and the per-slot
 * in-memory module cache. Compilation needs no device, so everything except
 * tsr__gpu_module runs (and is tested) on machines without a GPU. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/cuda/gpu.h"
#include "core/context.h"
#include "core/hash.h"
#include "sys/file.h"

#define MAX_OPTS 8

typedef struct {
  const char *opt[MAX_OPTS];
  int n;
  char arch[48];
} nvrtc_opts;

/* A source that uses architecture-specific instructions (wgmma: sm_90a)
 * says so on a line of its own; it is then compiled for sm_XYa instead of
 * sm_XY. The option is part of the cache key, so the two never share a
 * cached CUBIN. Other sources keep the portable target. */
#define ARCH_SPECIFIC_MARK "\n// tsr:arch-specific\n"
static const char *arch_suffix(const char *source) {
  return strstr(source, ARCH_SPECIFIC_MARK) ? "a" : "";
}

static void build_opts(const tsr__nvrtc_api *nv, const char *source, int cc_major, int cc_minor,
                       nvrtc_opts *o) {
  snprintf(o->arch, sizeof o->arch, "--gpu-architecture=sm_%d%d%s", cc_major, cc_minor,
           arch_suffix(source));
  o->n = 0;
  o->opt[o->n++] = o->arch;
  o->opt[o->n++] = "-default-device";
  o->opt[o->n++] = "--std=c++17";
  /* Resource lines (registers, stack, spills) in the log: CI checks them. */
  o->opt[o->n++] = "--ptxas-options=--verbose";
  /* NVRTC 12.9+ keeps its own compile cache; a hit skips ptxas, so the log
   * has no resource lines (the H200 host's empty logs), and a tuner winner
   * "recompiled from scratch" would not be. tessera owns its module cache. */
  int vmaj = 0, vmin = 0;
  if (nv->Version(&vmaj, &vmin) == TSR__NVRTC_SUCCESS && (vmaj > 12 || (vmaj == 12 && vmin >= 9)))
    o->opt[o->n++] = "--no-cache";
  const char *li = getenv("TSR_NVRTC_LINEINFO");
  if (li && strcmp(li, "1") == 0) o->opt[o->n++] = "-lineinfo"; /* for compute-sanitizer */
}

static char *fetch_log(const tsr__nvrtc_api *nv, tsr__nvrtc_program prog) {
  size_t n = 0;
  if (nv->GetProgramLogSize(prog, &n) != TSR__NVRTC_SUCCESS || n == 0) return NULL;
  char *log = malloc(n + 1);
  if (!log) return NULL;
  if (nv->GetProgramLog(prog, log) != TSR__NVRTC_SUCCESS) {
    free(log);
    return NULL;
  }
  log[n] = '\0';
  return log;
}

tsr_status tsr__nvrtc_compile(tsr_context *ctx, const char *source, int cc_major, int cc_minor,
                              void **cubin, size_t *size, char **log_out) {
  *cubin = NULL;
  *size = 0;
  if (log_out) *log_out = NULL;
  char msg[1024];
  const tsr__nvrtc_api *nv = tsr__nvrtc_load(msg, sizeof msg);
  if (!nv) return tsr__fail(ctx, TSR_ERR_NVRTC, "%s", msg);
  nvrtc_opts o;
  build_opts(nv, source, cc_major, cc_minor, &o);
  tsr__nvrtc_program prog = NULL;
  tsr__nvrtc_result r = nv->CreateProgram(&prog, source, "tessera.cu", 0, NULL, NULL);
  if (r != TSR__NVRTC_SUCCESS)
    return tsr__fail(ctx, TSR_ERR_NVRTC, "nvrtc: nvrtcCreateProgram: %s", nv->GetErrorString(r));
  r = nv->CompileProgram(prog, o.n, o.opt);
  char *log = fetch_log(nv, prog);
  tsr_status st = TSR_OK;
  if (r != TSR__NVRTC_SUCCESS) {
    st = tsr__fail(ctx, TSR_ERR_NVRTC, "nvrtc: compile for sm_%d%d%s failed (%s):\n%s", cc_major,
                   cc_minor, arch_suffix(source), nv->GetErrorString(r), log ? log : "(no log)");
    goto done;
  }
  size_t n = 0;
  r = nv->GetCUBINSize(prog, &n);
  if (r != TSR__NVRTC_SUCCESS || n == 0) {
    st = tsr__fail(ctx, TSR_ERR_NVRTC, "nvrtc: nvrtcGetCUBINSize: %s",
                   r ? nv->GetErrorString(r) : "empty CUBIN");
    goto done;
  }
  void *bin = malloc(n);
  if (!bin) {
    st = tsr__fail(ctx, TSR_ERR_NOMEM, "nvrtc: out of host memory for a %zu-byte CUBIN", n);
    goto done;
  }
  r = nv->GetCUBIN(prog, bin);
  if (r != TSR__NVRTC_SUCCESS) {
    free(bin);
    st = tsr__fail(ctx, TSR_ERR_NVRTC, "nvrtc: nvrtcGetCUBIN: %s", nv->GetErrorString(r));
    goto done;
  }
  *cubin = bin;
  *size = n;
done:
  nv->DestroyProgram(&prog);
  if (log_out && st == TSR_OK) *log_out = log;
  else free(log);
  return st;
}

/* ---- disk cache ----------------------------------------------------------- */
int tsr__cubin_cache_dir(char *buf, size_t cap) { return tsr__cache_dir("modules", buf, cap); }

/* A cached CUBIN: a regular file (never a FIFO or device: sys/file.h) of at
 * most 256 MiB that starts as an ELF image. */
static int cache_read(const char *key, void **data, size_t *size) {
  char dir[900], path[1024], msg[256];
  if (tsr__cubin_cache_dir(dir, sizeof dir)) return -1;
  snprintf(path, sizeof path, "%s/%s.cubin", dir, key);
  char *buf;
  size_t len;
  if (tsr__read_file_capped(path, (size_t)1 << 28, &buf, &len, msg, sizeof msg)) return -1;
  if (len < 4 || memcmp(buf, "\x7f" "ELF", 4) != 0) { /* a CUBIN is an ELF image */
    free(buf);
    return -1;
  }
  *data = buf;
  *size = len;
  return 0;
}

static int cache_write(const char *key, const void *data, size_t size) {
  char dir[900], path[1024], msg[256];
  if (tsr__cubin_cache_dir(dir, sizeof dir) || tsr__mkdirs(dir)) return -1;
  snprintf(path, sizeof path, "%s/%s.cubin", dir, key);
  tsr__span part = {data, size};
  return tsr__write_atomic(path, &part, 1, msg, sizeof msg) ? -1 : 0;
}

static tsr_status cubin_key(tsr_context *ctx, const char *source, int cc_major, int cc_minor,
                            char key[65]) {
  char msg[1024];
  const tsr__nvrtc_api *nv = tsr__nvrtc_load(msg, sizeof msg);
  if (!nv) return tsr__fail(ctx, TSR_ERR_NVRTC, "%s", msg);
  int vmaj = 0, vmin = 0;
  nv->Version(&vmaj, &vmin);
  nvrtc_opts o;
  build_opts(nv, source, cc_major, cc_minor, &o);
  char head[1024];
  int n = snprintf(head, sizeof head, "tessera-cubin-1\narch=sm_%d%d%s\nnvrtc=%d.%d\n", cc_major,
                   cc_minor, arch_suffix(source), vmaj, vmin);
  for (int i = 0; i < o.n; i++)
    n += snprintf(head + n, sizeof head - (size_t)n, "opt=%s\n", o.opt[i]);
  size_t slen = strlen(source);
  char *buf = malloc((size_t)n + 1 + slen);
  if (!buf) return tsr__fail(ctx, TSR_ERR_NOMEM, "nvrtc: out of host memory");
  memcpy(buf, head, (size_t)n);
  buf[n] = '\n';
  memcpy(buf + n + 1, source, slen);
  int rc = tsr__sha256_hex(buf, (size_t)n + 1 + slen, key);
  free(buf);
  return rc ? tsr__fail(ctx, TSR_ERR_NVRTC, "nvrtc: SHA-256 of the cache key failed") : TSR_OK;
}

tsr_status tsr__cubin_get(tsr_context *ctx, const char *source, int cc_major, int cc_minor,
                          int flags, void **cubin, size_t *size, char **log,
                          tsr__cubin_meta *meta) {
  tsr__cubin_meta m;
  memset(&m, 0, sizeof m);
  if (log) *log = NULL;
  tsr_status st = cubin_key(ctx, source, cc_major, cc_minor, m.key);
  if (st) return st;
  if (!(flags & TSR__COMPILE_BYPASS_CACHE) && cache_read(m.key, cubin, size) == 0) {
    m.from_disk = 1;
  } else {
    st = tsr__nvrtc_compile(ctx, source, cc_major, cc_minor, cubin, size, log);
    if (st) return st;
    m.disk_written = cache_write(m.key, *cubin, *size) == 0; /* failure is not fatal */
  }
  if (meta) *meta = m;
  return TSR_OK;
}

tsr_status tsr__gpu_module(tsr_context *ctx, tsr__gpu *g, const char *source, int flags,
                           tsr__cu_module *out) {
  char key[65];
  tsr_status st = cubin_key(ctx, source, g->cc_major, g->cc_minor, key);
  if (st) return st;
  if (!(flags & TSR__COMPILE_BYPASS_CACHE))
    for (tsr__module_entry *e = g->modules; e; e = e->next)
      if (strcmp(e->key, key) == 0) {
        *out = e->mod;
        return TSR_OK;
      }
  tsr__module_entry *e = calloc(1, sizeof *e);
  if (!e) return tsr__fail(ctx, TSR_ERR_NOMEM, "cuda: out of host memory");
  void *bin = NULL;
  size_t n = 0;
  tsr__cubin_meta meta;
  st = tsr__cubin_get(ctx, source, g->cc_major, g->cc_minor, flags, &bin, &n, NULL, &meta);
  if (st) {
    free(e);
    return st;
  }
  if ((st = tsr__gpu_bind(ctx, g))) goto fail;
  tsr__cu_result r = g->cu->ModuleLoadData(&e->mod, bin);
  if (r != TSR__CU_SUCCESS && meta.from_disk) {
    /* A stale or damaged cache entry: compile afresh (and overwrite it). */
    free(bin);
    bin = NULL;
    st = tsr__cubin_get(ctx, source, g->cc_major, g->cc_minor, TSR__COMPILE_BYPASS_CACHE, &bin,
                        &n, NULL, &meta);
    if (st) goto fail;
    r = g->cu->ModuleLoadData(&e->mod, bin);
  }
  if (r != TSR__CU_SUCCESS) {
    st = tsr__cu_fail(ctx, g->cu, r, "cuModuleLoadData");
    goto fail;
  }
  free(bin);
  memcpy(e->key, key, sizeof e->key);
  e->next = g->modules;
  g->modules = e;
  *out = e->mod;
  return TSR_OK;
fail:
  free(bin);
  free(e);
  return st;
}

/* ---- ptxas log ------------------------------------------------------------ */
/* ptxas --verbose prints, per entry function:
 *   ptxas info    : Compiling entry function 'NAME' for 'sm_90'
 *   ptxas info    : Function properties for NAME
 *       S bytes stack frame, X bytes spill stores, Y bytes spill loads
 *   ptxas info    : Used R registers, ... */
int tsr__ptxas_parse(const char *log, const char *func, int *regs, int *stack_bytes,
                     int *spill_stores, int *spill_loads) {
  if (!log || !func) return -1;
  char pat[300];
  snprintf(pat, sizeof pat, "Compiling entry function '%s'", func);
  const char *p = strstr(log, pat);
  if (!p) return -1;
  const char *end = strstr(p + 1, "Compiling entry function '"); /* next function */
  const char *props = strstr(p, "bytes stack frame");
  const char *used = strstr(p, "Used ");
  if (!props || !used || (end && (props > end || used > end))) return -1;
  /* back up over " <digits> " to the stack-frame figure */
  const char *num = props;
  while (num > p && num[-1] == ' ') num--;
  while (num > p && num[-1] >= '0' && num[-1] <= '9') num--;
  int s = 0, ss = 0, sl = 0, r = 0;
  if (sscanf(num, "%d bytes stack frame, %d bytes spill stores, %d bytes spill loads", &s, &ss,
             &sl) != 3)
    return -1;
  if (sscanf(used, "Used %d registers", &r) != 1) return -1;
  if (regs) *regs = r;
  if (stack_bytes) *stack_bytes = s;
  if (spill_stores) *spill_stores = ss;
  if (spill_loads) *spill_loads = sl;
  return 0;
}
