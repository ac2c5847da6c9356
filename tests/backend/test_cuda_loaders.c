/* The three loaders fail cleanly with named messages, resolve their full
 * symbol tables against the real libraries where installed (cuBLAS, NVRTC,
 * the driver's link stub), and the GPU backends report TSR_ERR_NO_CUDA when
 * the driver cannot be loaded. TSR_LIBCUDA is pointed at a bogus path for the
 * whole process, so this test behaves the same with or without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/cuda/loader_cublas.h"
#include "backend/cuda/loader_cuda.h"
#include "backend/cuda/loader_nvrtc.h"
#include "core/backend.h"
#include "core/context.h"
#include "sys/dl.h"
#include "tessera.h"

#define BOGUS_CUDA "/nonexistent/tessera-test/libcuda.so.1"

static void test_bogus_paths_named(void **state) {
  char msg[1024];
  void *h = (void *)1;
  tsr__cu_api cu;
  assert_int_equal(tsr__cu_load_path("/nonexistent/libbogus_cuda.so.1", &cu, &h, msg, sizeof msg),
                   TSR_ERR_NO_CUDA);
  assert_null(h);
  assert_non_null(strstr(msg, "no CUDA driver found (/nonexistent/libbogus_cuda.so.1: "));
  tsr__nvrtc_api nv;
  assert_int_equal(tsr__nvrtc_load_path("/nonexistent/libbogus_nvrtc.so", &nv, &h, msg, sizeof msg),
                   TSR_ERR_NVRTC);
  assert_non_null(strstr(msg, "libbogus_nvrtc.so"));
  tsr__cublas_api bl;
  assert_int_equal(tsr__cublas_load_path("/nonexistent/libbogus_cublas.so", &bl, &h, msg, sizeof msg),
                   TSR_ERR_CUBLAS);
  assert_non_null(strstr(msg, "libbogus_cublas.so"));
}

/* A real library without the symbols: the first missing one is named. */
static void test_missing_symbol_named(void **state) {
  char msg[1024];
  void *h;
  tsr__cu_api cu;
  h = (void *)1;
  assert_int_equal(tsr__cu_load_path("libc.so.6", &cu, &h, msg, sizeof msg), TSR_ERR_NO_CUDA);
  assert_string_equal(msg, "no CUDA driver found (libc.so.6: missing symbol cuInit)");
  assert_null(h);
  assert_null(cu.Init); /* nothing half-resolved is left behind */
  tsr__nvrtc_api nv;
  assert_int_equal(tsr__nvrtc_load_path("libc.so.6", &nv, &h, msg, sizeof msg), TSR_ERR_NVRTC);
  assert_string_equal(msg, "NVRTC not usable (libc.so.6: missing symbol nvrtcVersion)");
  tsr__cublas_api bl;
  assert_int_equal(tsr__cublas_load_path("libc.so.6", &bl, &h, msg, sizeof msg), TSR_ERR_CUBLAS);
  assert_string_equal(msg, "cuBLAS not usable (libc.so.6: missing symbol cublasCreate_v2)");
}

/* The process-wide load (one body for the three libraries): an override
 * that cannot open, or that lacks a symbol, is named with its variable; a
 * failure is retried on the next call; a success is kept, whatever the
 * override says afterwards. Runs before anything else loads NVRTC/cuBLAS. */
static void test_process_load_override(void **state) {
  char msg[1024];
  assert_null(tsr__cu_load(msg, sizeof msg));
  assert_non_null(strstr(msg, "no CUDA driver found (" BOGUS_CUDA ": "));
  assert_non_null(strstr(msg, " (from TSR_LIBCUDA))"));

  setenv("TSR_LIBCUBLAS", "/nonexistent/libbogus_cublas.so", 1);
  assert_null(tsr__cublas_load(msg, sizeof msg));
  assert_non_null(strstr(msg, "cuBLAS not found (/nonexistent/libbogus_cublas.so: "));
  assert_non_null(strstr(msg, " (from TSR_LIBCUBLAS))"));
  setenv("TSR_LIBCUBLAS", "libc.so.6", 1);
  assert_null(tsr__cublas_load(msg, sizeof msg));
  assert_string_equal(msg, "cuBLAS not usable (libc.so.6: missing symbol cublasCreate_v2)");
  unsetenv("TSR_LIBCUBLAS");

  setenv("TSR_LIBNVRTC", "/nonexistent/libbogus_nvrtc.so", 1);
  assert_null(tsr__nvrtc_load(msg, sizeof msg));
  assert_non_null(strstr(msg, "NVRTC not found (/nonexistent/libbogus_nvrtc.so: "));
  assert_non_null(strstr(msg, " (from TSR_LIBNVRTC))"));
  setenv("TSR_LIBNVRTC", "libc.so.6", 1);
  assert_null(tsr__nvrtc_load(msg, sizeof msg));
  assert_string_equal(msg, "NVRTC not usable (libc.so.6: missing symbol nvrtcVersion)");
  unsetenv("TSR_LIBNVRTC");

  const tsr__nvrtc_api *nv = tsr__nvrtc_load(msg, sizeof msg); /* retried */
  if (!nv) {
    printf("# NVRTC absent: %s\n", msg);
    skip();
  }
  assert_non_null(nv->Version);
  setenv("TSR_LIBNVRTC", "/nonexistent/libbogus_nvrtc.so", 1);
  assert_ptr_equal(tsr__nvrtc_load(msg, sizeof msg), nv);
  unsetenv("TSR_LIBNVRTC");
}

/* The driver's link stub exports every driver symbol: the whole table
 * resolves (so every versioned name is right) and cuInit refuses. */
static void test_driver_stub_resolves(void **state) {
  static const char *const stubs[] = {"/usr/local/cuda/lib64/stubs/libcuda.so",
                                      "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"};
  const char *path = NULL;
  for (size_t i = 0; i < 2; i++)
    if (access(stubs[i], R_OK) == 0) path = stubs[i];
  if (!path) skip();
  char msg[1024];
  void *h;
  tsr__cu_api cu;
  tsr_status st = tsr__cu_load_path(path, &cu, &h, msg, sizeof msg);
  if (st) printf("%s\n", msg);
  assert_int_equal(st, TSR_OK);
  assert_non_null(cu.EventElapsedTime);
  assert_int_not_equal(cu.Init(0), TSR__CU_SUCCESS); /* a stub never initializes */
  tsr__dl_close(h);
}

static void test_cublas_resolves_when_installed(void **state) {
  char msg[1024];
  const tsr__cublas_api *bl = tsr__cublas_load(msg, sizeof msg);
  if (!bl) {
    printf("# cuBLAS absent: %s\n", msg);
    skip();
  }
  int v = 0;
  assert_int_equal(bl->GetVersion(NULL, &v), TSR__CUBLAS_SUCCESS);
  printf("# cuBLAS version %d\n", v);
  assert_true(v >= 10000);
  assert_non_null(bl->GetStatusString(TSR__CUBLAS_ALLOC_FAILED));
}

static void test_nvrtc_resolves_when_installed(void **state) {
  char msg[1024];
  const tsr__nvrtc_api *nv = tsr__nvrtc_load(msg, sizeof msg);
  if (!nv) {
    printf("# NVRTC absent: %s\n", msg);
    skip();
  }
  int a = 0, b = 0;
  assert_int_equal(nv->Version(&a, &b), TSR__NVRTC_SUCCESS);
  assert_true(a >= 11);
}

/* With the driver unloadable every GPU entry point reports NO_CUDA cleanly. */
static void test_backends_report_no_cuda(void **state) {
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  const tsr__backend *bes[] = {&tsr__backend_cuda, &tsr__backend_cublas, &tsr__backend_hand};
  for (size_t i = 0; i < 3; i++) {
    assert_int_equal(bes[i]->available(ctx), TSR_ERR_NO_CUDA);
    assert_non_null(strstr(tsr_context_message(ctx), "no CUDA driver found (" BOGUS_CUDA ": "));
  }
  tsr_problem p;
  tsr_problem_init(&p, 8, 8, 8);
  float a[64] = {0}, b[64] = {0}, c[64] = {0};
  assert_int_equal(tsr_gemm(ctx, TSR_BACKEND_CUDA, &p, NULL, a, b, c), TSR_ERR_NO_CUDA);
  assert_int_equal(tsr_gemm(ctx, TSR_BACKEND_HAND, &p, NULL, a, b, c), TSR_ERR_NO_CUDA);
  assert_int_equal(tsr_gemm(ctx, TSR_BACKEND_CUBLAS, &p, NULL, a, b, c), TSR_ERR_NO_CUDA);
  double ref[64];
  assert_int_equal(tsr_oracle_gpu(ctx, &p, a, b, NULL, ref, NULL, NULL), TSR_ERR_NO_CUDA);
  /* AUTO falls back to the CPU */
  assert_int_equal(tsr__backend_resolve(ctx, TSR_BACKEND_AUTO), TSR_BACKEND_CPU);
  tsr_context_destroy(ctx);
}

/* Planning works without a device (sm_90 limits); fixed routes accept only
 * their fixed plan and name the first differing field. */
static void test_realize_without_device(void **state) {
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr_problem p;
  tsr_problem_init(&p, 4096, 4096, 4096);
  tsr_plan plan;
  tsr_plan_info info;
  assert_int_equal(tsr_plan_default(ctx, TSR_BACKEND_CUDA, &p, &plan), TSR_OK);
  tsr_status st = tsr_plan_realize(ctx, TSR_BACKEND_CUDA, &p, &plan, &info);
  if (st) printf("%s\n", tsr_context_message(ctx));
  assert_int_equal(st, TSR_OK);
  assert_string_equal(tsr_context_message(ctx), "");
  assert_true(info.threads > 0);
  assert_int_equal(strlen(info.source_sha256), 64);
  assert_int_equal(info.regs, -1);
  /* shared memory beyond sm_90's opt-in limit is rejected, naming it */
  assert_int_equal(tsr_plan_parse("bm=256,bn=256,bk=64,stages=4", &plan, NULL, 0), TSR_OK);
  st = tsr_plan_realize(ctx, TSR_BACKEND_CUDA, &p, &plan, &info);
  printf("# oversized plan: %s: %s\n", tsr_status_name(st), tsr_context_message(ctx));
  assert_int_not_equal(st, TSR_OK);

  static const tsr_backend_kind fixed[] = {TSR_BACKEND_HAND, TSR_BACKEND_CUBLAS};
  for (size_t i = 0; i < 2; i++) {
    assert_int_equal(tsr_plan_default(ctx, fixed[i], &p, &plan), TSR_OK);
    assert_int_equal(tsr_plan_realize(ctx, fixed[i], &p, &plan, &info), TSR_OK);
    plan.stages += 1;
    assert_int_equal(tsr_plan_realize(ctx, fixed[i], &p, &plan, &info), TSR_ERR_UNSUPPORTED);
    assert_non_null(strstr(tsr_context_message(ctx), "plan: stages differs"));
    plan.stages -= 1;
    plan.walk = (tsr_walk){TSR_WALK_STRIPE, 2, 0};
    assert_int_equal(tsr_plan_realize(ctx, fixed[i], &p, &plan, &info), TSR_ERR_UNSUPPORTED);
    assert_non_null(strstr(tsr_context_message(ctx), "plan: walk differs"));
  }
  tsr_context_destroy(ctx);
}

/* The loader's own declarations against the toolkit's cuda.h, where the
 * toolkit is installed (CI's machine has it): the tensor-map enums, the
 * opaque map's size and the encoder's signature (split=producer-tma), and the
 * attributes the backend reads. src/ includes no CUDA header; this test may. */
#if defined(__has_include)
#if __has_include("/usr/local/cuda/include/cuda.h")
#include "/usr/local/cuda/include/cuda.h"
#define TSR_TEST_HAVE_CUDA_H 1
#endif
#endif
static void test_loader_abi_matches_cuda_h(void **state) {
  (void)state;
#ifdef TSR_TEST_HAVE_CUDA_H
  assert_int_equal(TSR__CU_TENSOR_MAP_DATA_TYPE_FLOAT32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  assert_int_equal(TSR__CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_INTERLEAVE_NONE);
  assert_int_equal(TSR__CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE);
  assert_int_equal(TSR__CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  assert_int_equal(TSR__CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  assert_int_equal(sizeof(tsr__cu_tensor_map), sizeof(CUtensorMap));
  assert_int_equal(_Alignof(tsr__cu_tensor_map), _Alignof(CUtensorMap));
  assert_int_equal(TSR__CU_DEV_MULTIPROCESSOR_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  assert_int_equal(TSR__CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                   CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  assert_int_equal(TSR__CU_FUNC_NUM_REGS, CU_FUNC_ATTRIBUTE_NUM_REGS);
  assert_int_equal(TSR__CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  /* the encoder: same parameter sizes and order (enums as int) */
  CUresult (*enc)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                  const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                  CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) =
      cuTensorMapEncodeTiled;
  (void)enc;
  /* cuLaunchKernelEx's configuration (lazyk's programmatic dependent launch) */
  assert_int_equal(TSR__CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                   CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
  assert_int_equal(sizeof(tsr__cu_launch_attribute), sizeof(CUlaunchAttribute));
  assert_int_equal(offsetof(tsr__cu_launch_attribute, value), offsetof(CUlaunchAttribute, value));
  assert_int_equal(offsetof(tsr__cu_launch_attribute, value.programmatic_stream_serialization_allowed),
                   offsetof(CUlaunchAttribute, value.programmaticStreamSerializationAllowed));
  assert_int_equal(sizeof(tsr__cu_launch_config), sizeof(CUlaunchConfig));
  assert_int_equal(offsetof(tsr__cu_launch_config, smem), offsetof(CUlaunchConfig, sharedMemBytes));
  assert_int_equal(offsetof(tsr__cu_launch_config, stream), offsetof(CUlaunchConfig, hStream));
  assert_int_equal(offsetof(tsr__cu_launch_config, attrs), offsetof(CUlaunchConfig, attrs));
  assert_int_equal(offsetof(tsr__cu_launch_config, nattrs), offsetof(CUlaunchConfig, numAttrs));
  CUresult (*lex)(const CUlaunchConfig *, CUfunction, void **, void **) = cuLaunchKernelEx;
  (void)lex;
  assert_int_equal(sizeof(CUtensorMapDataType), sizeof(int));
  assert_int_equal(sizeof(cuuint64_t), sizeof(uint64_t));
  assert_int_equal(sizeof(cuuint32_t), sizeof(uint32_t));
#else
  skip();
#endif
}

int main(void) {
  /* Before anything loads the driver: a path that cannot exist. */
  setenv("TSR_LIBCUDA", BOGUS_CUDA, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bogus_paths_named),
      cmocka_unit_test(test_loader_abi_matches_cuda_h),
      cmocka_unit_test(test_missing_symbol_named),
      cmocka_unit_test(test_process_load_override),
      cmocka_unit_test(test_driver_stub_resolves),
      cmocka_unit_test(test_cublas_resolves_when_installed),
      cmocka_unit_test(test_nvrtc_resolves_when_installed),
      cmocka_unit_test(test_backends_report_no_cuda),
      cmocka_unit_test(test_realize_without_device),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
