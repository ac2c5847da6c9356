/* The one dynamic-loader body (sys layer), shared by the three loaders
 * (libcuda, libnvrtc, libcublas, src/backend/cuda/loader_*.c): each of them
 * describes its library (a tsr__dl_lib) and this body opens it, resolves the
 * whole symbol table or names the missing symbol, closes it on failure and
 * keeps a success for the life of the process. Nothing CUDA-specific here
 * beyond the folders CUDA installs its libraries in. */
#ifndef TSR_SYS_DL_H
#define TSR_SYS_DL_H

#include <pthread.h>
#include <stddef.h>

/* One entry of a loader's symbol table: exported name → offset of the
 * function-pointer field in the loader's API struct. */
typedef struct {
  const char *name;
  size_t offset;
} tsr__dl_sym;

/* What the body needs to know about one library. */
typedef struct {
  const char *const *names; /* sonames tried in order, NULL-terminated */
  const char *env;          /* variable whose value, when set, is the only path tried */
  const tsr__dl_sym *syms;  /* every symbol the API struct holds */
  size_t nsyms;
  size_t api_size;          /* sizeof the API struct */
  int status;               /* returned on failure (a tsr_status) */
  const char *not_found;    /* message words when nothing opens: "NVRTC not found" */
  const char *not_usable;   /* when a symbol is missing: "NVRTC not usable" */
} tsr__dl_lib;

/* The process-wide state of one library (one static per loader). */
typedef struct {
  pthread_mutex_t lock;
  int loaded;
} tsr__dl_once;
#define TSR__DL_ONCE_INIT {PTHREAD_MUTEX_INITIALIZER, 0}

/* The process-wide table, loaded on first use (thread-safe; a failure is
 * retried on the next call, a success is kept and never written again).
 * Search: when lib->env is set and non-empty, only that path; otherwise
 * each name as given (ld.so search), then under each of the usual CUDA
 * library folders. Returns api (filled) or NULL with one line in msg:
 * "<not_found> (<first name>: <dlerror>)", "<not_found> (<path>: <dlerror>
 * (from <env>))" or "<not_usable> (<path>: missing symbol <name>)". */
const void *tsr__dl_load(const tsr__dl_lib *lib, tsr__dl_once *once, void *api, char *msg,
                         size_t cap);

/* Loads one explicit path into a caller table (tests). Returns 0 with
 * *handle set (close with tsr__dl_close), or lib->status with *handle NULL,
 * the library closed and one line in msg: "<not_found> (<path>: <dlerror>)"
 * or "<not_usable> (<path>: missing symbol <name>)". */
int tsr__dl_load_path(const tsr__dl_lib *lib, const char *path, void *api, void **handle,
                      char *msg, size_t cap);

/* dlclose; NULL is a no-op. */
void tsr__dl_close(void *handle);

#endif
