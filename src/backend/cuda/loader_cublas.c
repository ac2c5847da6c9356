/* libcublas loader: the one list of cuBLAS symbols tessera uses (the _v2
 * names that cublas_v2.h maps the plain names to). */
#include "backend/cuda/loader_cublas.h"


#include "sys/dl.h"

#define SYM(field, exported) {exported, offsetof(tsr__cublas_api, field)}
static const tsr__dl_sym cublas_syms[] = {
    SYM(Create, "cublasCreate_v2"),
    SYM(Destroy, "cublasDestroy_v2"),
    SYM(SetStream, "cublasSetStream_v2"),
    SYM(SetMathMode, "cublasSetMathMode"),
    SYM(GetVersion, "cublasGetVersion_v2"),
    SYM(Sgemm, "cublasSgemm_v2"),
    SYM(SgemmStridedBatched, "cublasSgemmStridedBatched"),
    SYM(GetStatusString, "cublasGetStatusString"),
};
#undef SYM

static const char *const cublas_names[] = {"libcublas.so.13", "libcublas.so", NULL};

static const tsr__dl_lib cublas_lib = {
    .names = cublas_names,
    .env = "TSR_LIBCUBLAS",
    .syms = cublas_syms,
    .nsyms = sizeof cublas_syms / sizeof cublas_syms[0],
    .api_size = sizeof(tsr__cublas_api),
    .status = TSR_ERR_CUBLAS,
    .not_found = "cuBLAS not found",
    .not_usable = "cuBLAS not usable",
};

tsr_status tsr__cublas_load_path(const char *path, tsr__cublas_api *api, void **handle, char *msg,
                                 size_t cap) {
  return (tsr_status)tsr__dl_load_path(&cublas_lib, path, api, handle, msg, cap);
}

static tsr__dl_once cublas_once = TSR__DL_ONCE_INIT;
static tsr__cublas_api cublas_api;

const tsr__cublas_api *tsr__cublas_load(char *msg, size_t cap) {
  return tsr__dl_load(&cublas_lib, &cublas_once, &cublas_api, msg, cap);
}
