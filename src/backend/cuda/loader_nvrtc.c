/* libnvrtc loader: the one list of NVRTC symbols tessera uses. */
#include "backend/cuda/loader_nvrtc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "sys/dl.h"
#include "core/context.h"

#define SYM(field, exported) {exported, offsetof(tsr__nvrtc_api, field)}
static const tsr__dl_sym nvrtc_syms[] = {
    SYM(Version, "nvrtcVersion"),
    SYM(CreateProgram, "nvrtcCreateProgram"),
    SYM(DestroyProgram, "nvrtcDestroyProgram"),
    SYM(CompileProgram, "nvrtcCompileProgram"),
    SYM(GetProgramLogSize, "nvrtcGetProgramLogSize"),
    SYM(GetProgramLog, "nvrtcGetProgramLog"),
    SYM(GetCUBINSize, "nvrtcGetCUBINSize"),
    SYM(GetCUBIN, "nvrtcGetCUBIN"),
    SYM(GetErrorString, "nvrtcGetErrorString"),
};
#undef SYM

static const char *const nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so", NULL};

static tsr_status finish_load(void *h, const char *where, tsr__nvrtc_api *api, char *msg,
                              size_t cap) {
  const char *missing =
      tsr__dl_resolve(h, nvrtc_syms, sizeof nvrtc_syms / sizeof nvrtc_syms[0], api);
  if (missing) {
    dlclose(h);
    return tsr__failbuf(msg, cap, TSR_ERR_NVRTC, "NVRTC not usable (%s: missing symbol %s)",
                        where, missing);
  }
  return TSR_OK;
}

tsr_status tsr__nvrtc_load_path(const char *path, tsr__nvrtc_api *api, void **handle, char *msg,
                                size_t cap) {
  memset(api, 0, sizeof *api);
  *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!*handle) {
    const char *e = dlerror();
    return tsr__failbuf(msg, cap, TSR_ERR_NVRTC, "NVRTC not found (%s: %s)", path,
                        e ? e : "cannot open");
  }
  tsr_status st = finish_load(*handle, path, api, msg, cap);
  if (st) *handle = NULL;
  return st;
}

void tsr__nvrtc_unload(void *handle) {
  if (handle) dlclose(handle);
}

static pthread_mutex_t nvrtc_lock = PTHREAD_MUTEX_INITIALIZER;
static tsr__nvrtc_api nvrtc_api;
static int nvrtc_loaded;

const tsr__nvrtc_api *tsr__nvrtc_load(char *msg, size_t cap) {
  pthread_mutex_lock(&nvrtc_lock);
  if (!nvrtc_loaded) {
    char err[768], where[512];
    void *h = tsr__dl_open("TSR_LIBNVRTC", nvrtc_names, where, sizeof where, err, sizeof err);
    if (!h) {
      tsr__failbuf(msg, cap, TSR_ERR_NVRTC, "NVRTC not found (%s)", err);
    } else {
      tsr__nvrtc_api api;
      if (finish_load(h, where, &api, msg, cap) == TSR_OK) {
        nvrtc_api = api;
        nvrtc_loaded = 1;
      }
    }
  }
  pthread_mutex_unlock(&nvrtc_lock);
  return nvrtc_loaded ? &nvrtc_api : NULL;
}
