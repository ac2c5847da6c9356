/* libnvrtc loader: the one list of NVRTC symbols tessera uses. */
#include "backend/cuda/loader_nvrtc.h"


#include "sys/dl.h"

#define SYM(field, exported) {exported, offsetof(tsr__nvrtc_api, field)}
static const tsr__dl_sym nvrtc_syms[] = {
    SYM(Version, "nvrtcVersion"),
    SYM(CreateProgram, "nvrtcCreateProgram"),
    SYM(DestroyProgram, "nvrtcDestroyProgram"),
    SYM(CompileProgram, "nvrtcCompileProgram"),
    SYM(GetProgramLogSize, "nvrtcGetProgramLogSize"),
    SYM(GetProgramLog, "nvrtcGetProgramLog"),
    SYM(GetCUBINSize, "nvrtcGetCUBINSize"),
    SYM(GetCUBIN, "nvrtcGetCUBIN"),
    SYM(GetErrorString, "nvrtcGetErrorString"),
};
#undef SYM

static const char *const nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so", NULL};

static const tsr__dl_lib nvrtc_lib = {
    .names = nvrtc_names,
    .env = "TSR_LIBNVRTC",
    .syms = nvrtc_syms,
    .nsyms = sizeof nvrtc_syms / sizeof nvrtc_syms[0],
    .api_size = sizeof(tsr__nvrtc_api),
    .status = TSR_ERR_NVRTC,
    .not_found = "NVRTC not found",
    .not_usable = "NVRTC not usable",
};

tsr_status tsr__nvrtc_load_path(const char *path, tsr__nvrtc_api *api, void **handle, char *msg,
                                size_t cap) {
  return (tsr_status)tsr__dl_load_path(&nvrtc_lib, path, api, handle, msg, cap);
}

static tsr__dl_once nvrtc_once = TSR__DL_ONCE_INIT;
static tsr__nvrtc_api nvrtc_api;

const tsr__nvrtc_api *tsr__nvrtc_load(char *msg, size_t cap) {
  return tsr__dl_load(&nvrtc_lib, &nvrtc_once, &nvrtc_api, msg, cap);
}
