/* The sm_90 target (CUDA C Programming Guide, "Technical Specifications per
 * Compute Capability", 9.0). */
#include "emit/target.h"

const tsr__gpu_target tsr__target_sm90 = {
    .smem_block_optin = 232448, /* 227 KiB */
    .smem_sm = 233472,          /* 228 KiB */
    .smem_block_reserved = 1024,
    .threads_block = 1024,
    .threads_sm = 2048,
    .regs_thread = 255,
    .regs_sm = 65536,
    .blocks_sm = 32,
    .grid = {2147483647u, 65535, 65535},
    .cc = 90,
};
