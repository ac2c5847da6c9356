/* PTX helper source shared by the generators of the wgmma families
 * (src/emit/emit.c) and the Ozaki family (src/emit/ozaki.c): format strings,
 * printed with the generators' put(). */
#ifndef TSR_EMIT_PTX_SRC_H
#define TSR_EMIT_PTX_SRC_H

/* The proxy fence: this thread's generic-proxy shared-memory accesses ordered
 * before its later async-proxy ones (wgmma operands, TMA and bulk copies; PTX
 * ISA "Proxies"): the wgmma families after writing their split planes, the
 * FFMA TMA rings after reading a slot and before freeing it to its refill */
#define PROXY_FENCE_SRC \
    "// generic-proxy shared accesses -> ordered before the async proxy's (wgmma, TMA)\n" \
    "__device__ __forceinline__ void tsr_proxy_fence() {\n" \
    "  asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");\n" \
    "}\n"
/* PTX helpers shared by the wgmma families and mma=wgmma-s8 (format strings:
 * put() prints them) */
#define WG_SYNC_SRC \
    "__device__ __forceinline__ void tsr_wg_fence() { // before a wgmma that touches registers used since\n" \
    "  asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n" \
    "}\n" \
    "__device__ __forceinline__ void tsr_wg_commit() {\n" \
    "  asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");\n" \
    "}\n" \
    "template <int PENDING> __device__ __forceinline__ void tsr_wg_wait() {\n" \
    "  asm volatile(\"wgmma.wait_group.sync.aligned %%0;\\n\" :: \"n\"(PENDING) : \"memory\");\n" \
    "}\n" \
    PROXY_FENCE_SRC \
    "// pins an accumulator register: no read of it moves above the wait_group before\n" \
    "__device__ __forceinline__ void tsr_wg_pin(float &x) { asm volatile(\"\" : \"+f\"(x) :: \"memory\"); }\n"
#define MBAR_SRC \
    "// mbarriers (PTX ISA \"Parallel Synchronization and Communication Instructions:\n" \
    "// mbarrier\"): arrive has release, try_wait acquire semantics at CTA scope\n" \
    "__device__ __forceinline__ void tsr_mbar_init(unsigned bar, unsigned count) {\n" \
    "  asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], %%1;\\n\" :: \"r\"(bar), \"r\"(count) : \"memory\");\n" \
    "}\n" \
    "__device__ __forceinline__ void tsr_mbar_arrive(unsigned bar) {\n" \
    "  asm volatile(\"{\\n.reg .b64 st;\\nmbarrier.arrive.shared::cta.b64 st, [%%0];\\n}\\n\" :: \"r\"(bar) : \"memory\");\n" \
    "}\n" \
    "// returns once the phase of parity `parity` has completed\n" \
    "__device__ __forceinline__ void tsr_mbar_wait(unsigned bar, unsigned parity) {\n" \
    "  asm volatile(\"{\\n.reg .pred done;\\nTSR_MBAR_WAIT:\\n\"\n" \
    "               \"mbarrier.try_wait.parity.shared::cta.b64 done, [%%0], %%1;\\n\"\n" \
    "               \"@!done bra TSR_MBAR_WAIT;\\n}\\n\" :: \"r\"(bar), \"r\"(parity) : \"memory\");\n" \
    "}\n" \
    "// the producer warpgroup's own barrier (named barrier 1; __syncthreads is 0)\n" \
    "__device__ __forceinline__ void tsr_producer_sync() { asm volatile(\"bar.sync 1, 128;\\n\" ::: \"memory\"); }\n"
// the FFMA ring's early look at the next block (emit.c, the consumers' loop)
#define MBAR_TEST_SRC \
    "// true once the phase of parity `parity` has completed; never blocks (test_wait,\n" \
    "// acquire at CTA scope like try_wait)\n" \
    "__device__ __forceinline__ bool tsr_mbar_test(unsigned bar, unsigned parity) {\n" \
    "  unsigned r;\n" \
    "  asm volatile(\"{\\n.reg .pred p;\\nmbarrier.test_wait.parity.shared::cta.b64 p, [%%1], %%2;\\n\"\n" \
    "               \"selp.u32 %%0, 1, 0, p;\\n}\\n\" : \"=r\"(r) : \"r\"(bar), \"r\"(parity) : \"memory\");\n" \
    "  return r != 0;\n" \
    "}\n"
/* mbarrier.init is a generic-proxy write; the complete_tx of a bulk or tensor
 * copy (async proxy) updates the same barrier, so the initializing thread
 * fences before the CTA barrier that publishes it (PTX ISA, mbarrier.init and
 * "Proxies"; CUTLASS's pipelines do the same) */
#define MBAR_INIT_FENCE_SRC \
    "// the mbarriers' initialization (generic proxy) visible to the copies' complete_tx\n" \
    "// (async proxy): the initializing thread, before the barrier that publishes them\n" \
    "__device__ __forceinline__ void tsr_mbar_init_fence() {\n" \
    "  asm volatile(\"fence.mbarrier_init.release.cluster;\\n\" ::: \"memory\");\n" \
    "}\n"
#define BULK_SRC \
    "// arrive once and expect `bytes` more of bulk copies in this phase (the phase\n" \
    "// completes when the arrivals and the bytes are all in)\n" \
    "__device__ __forceinline__ void tsr_mbar_arrive_tx(unsigned bar, unsigned bytes) {\n" \
    "  asm volatile(\"{\\n.reg .b64 st;\\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%%0], %%1;\\n}\\n\"\n" \
    "               :: \"r\"(bar), \"r\"(bytes) : \"memory\");\n" \
    "}\n" \
    "// bulk copy (TMA, no tensor map): `bytes` contiguous bytes global -> shared,\n" \
    "// completing on mbarrier bar (both addresses 16-byte aligned, bytes %% 16 == 0)\n" \
    "__device__ __forceinline__ void tsr_bulk(float *dst, const float *src, unsigned bytes, unsigned bar) {\n" \
    "  asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%%0], [%%1], %%2, [%%3];\\n\"\n" \
    "               :: \"r\"(tsr_smem_addr(dst)), \"l\"(src), \"r\"(bytes), \"r\"(bar) : \"memory\");\n" \
    "}\n" \
    MBAR_INIT_FENCE_SRC
/* the producer warpgroup's and the consumers' register counts (printf
 * arguments: producer, consumer), every setmaxnreg kernel's pair */
#define SETMAXNREG_PAIR_FMT \
    "__device__ __forceinline__ void tsr_producer_regs() { asm volatile(\"setmaxnreg.dec.sync.aligned.u32 %d;\\n\"); }\n" \
    "__device__ __forceinline__ void tsr_consumer_regs() { asm volatile(\"setmaxnreg.inc.sync.aligned.u32 %d;\\n\"); }\n"
#define SETMAXNREG_BULK_FMT \
    "// 384 threads start at 168 registers (64512 per CTA): the producer (one thread\n" \
    "// issuing bulk copies) gives 128 to each consumer thread (40 x 128 + 232 x 256)\n" \
    SETMAXNREG_PAIR_FMT

#endif
