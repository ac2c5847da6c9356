/* Internal view of tsr_context: the per-handle message buffer and the
 * per-backend state slots. */
#ifndef TSR_CORE_CONTEXT_H
#define TSR_CORE_CONTEXT_H

#include "tessera.h"

#define TSR__MSG_CAP 4096

struct tsr_context {
  char msg[TSR__MSG_CAP];
  void *backend_state[TSR_BACKEND_COUNT]; /* owned by each backend, freed by its vtable */
  /* A GPU backend found no driver or no device here: its planner uses the
   * built-in target from then on without retrying the load (the tuner's
   * space checks ~10^5 plans; each retry searched the library folders). */
  unsigned char device_absent[TSR_BACKEND_COUNT];
};

/* printf into ctx->msg (when ctx is non-NULL) and return s. */
tsr_status tsr__fail(tsr_context *ctx, tsr_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* printf into a caller buffer (msg may be NULL) and return s. */
tsr_status tsr__failbuf(char *msg, size_t cap, tsr_status s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void tsr__clear(tsr_context *ctx);

#endif
