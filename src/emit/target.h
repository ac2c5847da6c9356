/* The GPU target's limits, in one struct shared by the emitter (the
 * legality and occupancy checks of src/emit/geometry.c read only this) and
 * the CUDA backend (which fills one from the device it runs on). */
#ifndef TSR_EMIT_TARGET_H
#define TSR_EMIT_TARGET_H

#include <stdint.h>

typedef struct {
  uint32_t smem_block_optin;   /* dynamic shared memory per block, opted in (bytes) */
  uint32_t smem_sm;            /* shared memory per SM (bytes) */
  uint32_t smem_block_reserved; /* of smem_sm, reserved by the system per resident block */
  uint32_t threads_block;      /* threads per block */
  uint32_t threads_sm;         /* resident threads per SM */
  uint32_t regs_thread;        /* registers per thread */
  uint32_t regs_sm;            /* registers per SM */
  uint32_t blocks_sm;          /* resident blocks per SM */
  uint32_t grid[3];            /* gridDim.x, .y, .z limits */
  /* compute capability major * 10 + minor: the wgmma families need exactly
   * 90 (sm_90a features do not carry over to later architectures) */
  uint32_t cc;
} tsr__gpu_target;

/* sm_90 (H100/H200): what planning uses without a device, and the values
 * the backend keeps for what it does not query. */
extern const tsr__gpu_target tsr__target_sm90;

#endif
