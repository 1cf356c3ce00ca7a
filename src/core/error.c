/* error.c -- the one error rule: negative SPS_E* codes and their names. */
#include "core/core.h"

/* Returns a static message for code; see SPS_ERRNO_MAP in spanscope.h. */
const char *sps_strerror(int code) {
    switch (code) {
    case SPS_OK: return "success";
#define SPS__ERRNO_MSG(name, val, msg) case SPS_##name: return msg;
        SPS_ERRNO_MAP(SPS__ERRNO_MSG)
#undef SPS__ERRNO_MSG
    default: return "unknown error";
    }
}

/* Returns "SPS_<NAME>" for code, "SPS_OK" for 0, "SPS_UNKNOWN" otherwise. */
const char *sps_err_name(int code) {
    switch (code) {
    case SPS_OK: return "SPS_OK";
#define SPS__ERRNO_NAME(name, val, msg) case SPS_##name: return "SPS_" #name;
        SPS_ERRNO_MAP(SPS__ERRNO_NAME)
#undef SPS__ERRNO_NAME
    default: return "SPS_UNKNOWN";
    }
}
