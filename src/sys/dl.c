/* The one dynamic-loader body: search, symbol resolution, the once-per-process
 * load. */
#include "sys/dl.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where CUDA installs its libraries when ld.so does not know about them. */
static const char *const lib_dirs[] = {
    "/usr/local/cuda/lib64",
    "/usr/local/cuda/targets/x86_64-linux/lib",
    "/usr/lib/x86_64-linux-gnu",
};

static void *open_path(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }

/* snprintf into the caller's message buffer (msg may be NULL). */
static void say(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *msg, size_t cap, const char *fmt, ...) {
  if (!msg || !cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, cap, fmt, ap);
  va_end(ap);
}

/* Opens the library (search order in dl.h). On failure returns NULL and
 * writes "<first name>: <dlerror>" (or "<path>: <dlerror> (from <env>)")
 * into err; on success writes the path that opened into `opened`. */
static void *search(const tsr__dl_lib *lib, char *opened, size_t opened_cap, char *err,
                    size_t cap) {
  const char *override = lib->env ? getenv(lib->env) : NULL;
  if (override && *override) {
    void *h = open_path(override);
    if (!h) {
      const char *e = dlerror();
      snprintf(err, cap, "%s: %s (from %s)", override, e ? e : "cannot open", lib->env);
    } else {
      snprintf(opened, opened_cap, "%s", override);
    }
    return h;
  }
  const char *const *names = lib->names;
  char first_err[512] = "";
  for (size_t i = 0; names[i]; i++) {
    void *h = open_path(names[i]);
    if (h) {
      snprintf(opened, opened_cap, "%s", names[i]);
      return h;
    }
    const char *e = dlerror();
    if (i == 0) snprintf(first_err, sizeof first_err, "%s", e ? e : "cannot open");
  }
  for (size_t d = 0; d < sizeof lib_dirs / sizeof lib_dirs[0]; d++)
    for (size_t i = 0; names[i]; i++) {
      char path[512];
      snprintf(path, sizeof path, "%s/%s", lib_dirs[d], names[i]);
      void *h = open_path(path);
      if (h) {
        snprintf(opened, opened_cap, "%s", path);
        return h;
      }
      (void)dlerror();
    }
  snprintf(err, cap, "%s: %s", names[0], first_err);
  return NULL;
}

/* Resolves every symbol of the table into api, or closes h and names the
 * first missing one (api is then all zero). */
static int resolve(const tsr__dl_lib *lib, void *h, const char *where, void *api, char *msg,
                   size_t cap) {
  for (size_t i = 0; i < lib->nsyms; i++) {
    (void)dlerror();
    void *f = dlsym(h, lib->syms[i].name);
    if (!f) {
      dlclose(h);
      memset(api, 0, lib->api_size);
      say(msg, cap, "%s (%s: missing symbol %s)", lib->not_usable, where,
               lib->syms[i].name);
      return lib->status;
    }
    /* POSIX guarantees object/function pointer interconversion for dlsym. */
    memcpy((char *)api + lib->syms[i].offset, &f, sizeof f);
  }
  return 0;
}

int tsr__dl_load_path(const tsr__dl_lib *lib, const char *path, void *api, void **handle,
                      char *msg, size_t cap) {
  memset(api, 0, lib->api_size);
  *handle = open_path(path);
  if (!*handle) {
    const char *e = dlerror();
    say(msg, cap, "%s (%s: %s)", lib->not_found, path, e ? e : "cannot open");
    return lib->status;
  }
  int st = resolve(lib, *handle, path, api, msg, cap);
  if (st) *handle = NULL;
  return st;
}

void tsr__dl_close(void *handle) {
  if (handle) dlclose(handle);
}

const void *tsr__dl_load(const tsr__dl_lib *lib, tsr__dl_once *once, void *api, char *msg,
                         size_t cap) {
  pthread_mutex_lock(&once->lock);
  /* api is handed out only once loaded, so it is filled in place. */
  if (!once->loaded) {
    char err[768], where[512];
    void *h = search(lib, where, sizeof where, err, sizeof err);
    if (!h)
      say(msg, cap, "%s (%s)", lib->not_found, err);
    else if (resolve(lib, h, where, api, msg, cap) == 0)
      once->loaded = 1; /* kept (never closed) for the life of the process */
  }
  int loaded = once->loaded;
  pthread_mutex_unlock(&once->lock);
  return loaded ? api : NULL;
}
