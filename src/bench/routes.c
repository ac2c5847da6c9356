/* The route table and metric names. */
#include <string.h>

#include "bench/bench.h"

/* Default base order: GPU routes, then CPU routes. */
const tsr__route tsr__routes[] = {
    {"tessera-gpu", TSR_ROUTE_BACKEND, TSR_BACKEND_CUDA, 1, 0, TSR_PREC_AUTO, 0},
    {"hand", TSR_ROUTE_BACKEND, TSR_BACKEND_HAND, 1, 0, TSR_PREC_STRICT, 0},
    {"cublas", TSR_ROUTE_BACKEND, TSR_BACKEND_CUBLAS, 1, 0, TSR_PREC_STRICT, 0},
    {"torch", TSR_ROUTE_TORCH, TSR_BACKEND_AUTO, 1, 0, TSR_PREC_STRICT, 0},
    {"tessera-cpu", TSR_ROUTE_BACKEND, TSR_BACKEND_CPU, 0, 0, TSR_PREC_AUTO, 0},
    {"openblas", TSR_ROUTE_OPENBLAS, TSR_BACKEND_AUTO, 0, 0, TSR_PREC_STRICT, 0},
    /* named-only: built-in default plans beside the tuned tessera routes */
    {"tessera-gpu-default", TSR_ROUTE_BACKEND, TSR_BACKEND_CUDA, 1, 1, TSR_PREC_AUTO, 1},
    {"tessera-cpu-default", TSR_ROUTE_BACKEND, TSR_BACKEND_CPU, 0, 1, TSR_PREC_AUTO, 1},
    /* named-only: the TF32 class's peers (tensor-core modes are compared
     * with cuBLAS pedantic and with their own class, docs/accuracy.md) */
    {"cublas-tf32", TSR_ROUTE_BACKEND, TSR_BACKEND_CUBLAS, 1, 0, TSR_PREC_TF32, 1},
    {"torch-tf32", TSR_ROUTE_TORCH, TSR_BACKEND_AUTO, 1, 0, TSR_PREC_TF32, 1},
};
const int tsr__route_count = (int)(sizeof tsr__routes / sizeof tsr__routes[0]);

const tsr__route *tsr__route_find(const char *name) {
  for (int i = 0; i < tsr__route_count; i++)
    if (!strcmp(tsr__routes[i].name, name)) return &tsr__routes[i];
  return NULL;
}

static const char *const metric_names[TSR_METRIC_COUNT] = {
    "gpu_batch", "gpu_single", "e2e_batch", "e2e_single", "wall_batch", "wall_single"};

const char *tsr__metric_name(tsr__metric m) {
  return (unsigned)m < TSR_METRIC_COUNT ? metric_names[m] : "unknown";
}

int tsr__metric_is_gpu(tsr__metric m) { return m <= TSR_METRIC_E2E_SINGLE; }
