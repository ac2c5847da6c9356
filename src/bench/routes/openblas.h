/* The openblas benchmark route: cblas_sgemm from the system OpenBLAS,
 * loaded with dlopen at run time (libopenblas.so.0, then the Debian
 * openblas-pthread path). It has the shape of a backend vtable so that the
 * bench times it with the same code as tessera's CPU backend, but it is not
 * a tessera backend: nothing outside src/bench uses it. */
#ifndef TSR_ROUTES_OPENBLAS_H
#define TSR_ROUTES_OPENBLAS_H

#include "core/backend.h"

/* available(): dlopen + resolve every symbol, naming the missing one.
 * prepare(): plan->threads (> 0) is passed to openblas_set_num_threads. */
extern const tsr__backend tsr__route_openblas;

/* After a successful available(): the path dlopen resolved, the
 * openblas_get_config() text and the thread count OpenBLAS reports. */
const char *tsr__openblas_path(void);
const char *tsr__openblas_config(void);
int tsr__openblas_threads(void);

#endif
