/* tsr_version: the version compiled into this library, so a program can
 * check the library it runs with against the header it was built with. */
#include "tessera.h"

const char *tsr_version(void) { return TSR_VERSION; }
