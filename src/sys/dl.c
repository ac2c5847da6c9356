/* dlopen helpers shared by the loaders. */
#include "sys/dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where CUDA installs its libraries when ld.so does not know about them. */
static const char *const lib_dirs[] = {
    "/usr/local/cuda/lib64",
    "/usr/local/cuda/targets/x86_64-linux/lib",
    "/usr/lib/x86_64-linux-gnu",
};

void *tsr__dl_open(const char *env, const char *const *names, char *opened, size_t opened_cap,
                   char *err, size_t cap) {
  const char *override = env ? getenv(env) : NULL;
  if (override && *override) {
    void *h = dlopen(override, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      snprintf(err, cap, "%s: %s (from %s)", override, e ? e : "cannot open", env);
    } else if (opened) {
      snprintf(opened, opened_cap, "%s", override);
    }
    return h;
  }
  char first_err[512] = "";
  for (size_t i = 0; names[i]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) {
      if (opened) snprintf(opened, opened_cap, "%s", names[i]);
      return h;
    }
    const char *e = dlerror();
    if (i == 0) snprintf(first_err, sizeof first_err, "%s", e ? e : "cannot open");
  }
  for (size_t d = 0; d < sizeof lib_dirs / sizeof lib_dirs[0]; d++)
    for (size_t i = 0; names[i]; i++) {
      char path[512];
      snprintf(path, sizeof path, "%s/%s", lib_dirs[d], names[i]);
      void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h) {
        if (opened) snprintf(opened, opened_cap, "%s", path);
        return h;
      }
      (void)dlerror();
    }
  snprintf(err, cap, "%s: %s", names[0], first_err);
  return NULL;
}

const char *tsr__dl_resolve(void *handle, const tsr__dl_sym *tab, size_t n, void *api) {
  for (size_t i = 0; i < n; i++) {
    (void)dlerror();
    void *f = dlsym(handle, tab[i].name);
    if (!f) return tab[i].name;
    /* POSIX guarantees object/function pointer interconversion for dlsym. */
    memcpy((char *)api + tab[i].offset, &f, sizeof f);
  }
  return NULL;
}
