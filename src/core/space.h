/* Facts a plan space is built from, asked of a backend without reaching
 * into it (the vtable's optional slots; src/tune builds its candidates from
 * these). */
#ifndef TSR_CORE_SPACE_H
#define TSR_CORE_SPACE_H

#include "tessera.h"

/* The micro-tiles (tm, tn) backend b has compiled in for isa (view: those
 * of its direct kernels for a=view,b=view plans): at most cap into tiles;
 * returns how many there are (0: none, or b has no such notion). */
int tsr__plan_micro_tiles(tsr_backend_kind b, tsr_isa isa, int view, int (*tiles)[2], int cap);

#endif
