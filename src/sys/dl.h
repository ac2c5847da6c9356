/* The one dynamic-loader body (sys layer), shared by the three loaders
 * (libcuda, libnvrtc, libcublas, src/backend/cuda/loader_*.c):
 * search order and symbol-table resolution. Nothing CUDA-specific here. */
#ifndef TSR_SYS_DL_H
#define TSR_SYS_DL_H

#include <stddef.h>

/* One entry of a loader's symbol table: exported name → offset of the
 * function-pointer field in the loader's API struct. */
typedef struct {
  const char *name;
  size_t offset;
} tsr__dl_sym;

/* Opens a library. When the environment variable `env` is set, only that
 * path is tried (test hook). Otherwise each soname in `names` is tried as
 * given (ld.so search), then under each of the usual CUDA library folders.
 * On failure returns NULL and writes "<first name>: <dlerror>" into err.
 * On success writes the path that opened into `opened` (may be NULL). */
void *tsr__dl_open(const char *env, const char *const *names, char *opened, size_t opened_cap,
                   char *err, size_t cap);

/* Resolves every symbol of the table into api (all at once). Returns NULL
 * on success, else the name of the first missing symbol. */
const char *tsr__dl_resolve(void *handle, const tsr__dl_sym *tab, size_t n, void *api);

#endif
