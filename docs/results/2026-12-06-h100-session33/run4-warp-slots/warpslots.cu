// Where the warps of 5-warp CTAs (3 an SM, as the strict default) land: %warpid
// (the SM's warp slot; its scheduler is slot % 4 on sm_90) per CTA warp.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <map>
__global__ void __launch_bounds__(160, 3) probe(unsigned *out, long long spin) {
  extern __shared__ float sm[];
  unsigned w = threadIdx.x / 32, slot, smid;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(slot));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  long long t0 = clock64();
  while (clock64() - t0 < spin) sm[threadIdx.x] += 1.0f;
  if (threadIdx.x % 32 == 0) {
    unsigned *o = out + 4 * (blockIdx.x * 5 + w);
    o[0] = smid; o[1] = slot; o[2] = blockIdx.x; o[3] = w;
  }
}
int main() {
  int nb = 396, smem = 49184;
  unsigned *d; cudaMalloc(&d, nb * 5 * 16);
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  probe<<<nb, 160, smem>>>(d, 2000000);
  cudaError_t e = cudaDeviceSynchronize();
  if (e) { printf("error %s\n", cudaGetErrorString(e)); return 1; }
  std::vector<unsigned> h(nb * 5 * 4);
  cudaMemcpy(h.data(), d, h.size() * 4, cudaMemcpyDeviceToHost);
  // per warp index: histogram of slot % 4; per SM: the CTAs' base slots
  int hist[5][4] = {{0}};
  std::map<unsigned, std::vector<unsigned>> bases;
  for (int b = 0; b < nb; b++) {
    unsigned base = 1000;
    for (int w = 0; w < 5; w++) {
      unsigned *o = &h[4 * (b * 5 + w)];
      hist[w][o[1] % 4]++;
      if (o[1] < base) base = o[1];
    }
    bases[h[4 * (b * 5)]].push_back(base);
  }
  for (int w = 0; w < 5; w++) printf("warp %d: scheduler (slot %% 4) 0..3 = %d %d %d %d\n", w, hist[w][0], hist[w][1], hist[w][2], hist[w][3]);
  int shown = 0;
  for (auto &kv : bases) {
    if (shown++ >= 6) break;
    printf("SM %u: CTA base slots", kv.first);
    for (unsigned s : kv.second) printf(" %u", s);
    printf("\n");
  }
  // per SM: warps (all CTAs) per scheduler, and producers (warp 4) per scheduler
  std::map<unsigned, std::vector<int>> per;
  for (int b = 0; b < nb; b++) for (int w = 0; w < 5; w++) {
    unsigned *o = &h[4 * (b * 5 + w)];
    auto &v = per[o[0]]; if (v.empty()) v.assign(8, 0);
    v[o[1] % 4]++; if (w == 4) v[4 + o[1] % 4]++;
  }
  std::map<std::vector<int>, int> pat;
  for (auto &kv : per) pat[kv.second]++;
  for (auto &kv : pat) { printf("%d SMs: warps per scheduler", kv.second); for (int i = 0; i < 4; i++) printf(" %d", kv.first[i]); printf(", producers"); for (int i = 4; i < 8; i++) printf(" %d", kv.first[i]); printf("\n"); }
  return 0;
}
