#include <stdio.h>
#include "tessera.h"
int main(void) { printf("tessera %s\n", TSR_VERSION); return 0; }
