/*
 * scope_profiler.c -- scope-profiler's C API for programs built WITHOUT
 * linking libspanscope: compile this file into the program, as
 * scope-profiler 0.7.5's recipe does,
 *
 *     cc -std=c99 -I"$INC" prog.c "$SRC" -lm
 *
 * with INC=`python -c 'import spanscope.results as r; print(r.c_include_dir())'`
 * and SRC=`python -c 'import spanscope.results as r; print(r.c_source_path())'`.
 *
 * There is no profiler here.  Every function of <scope_profiler.h> forwards
 * to the same function of the libspanscope shipped in the spanscope package
 * (src/faces/scope_profiler.c), loaded with dlopen at the first call; so the
 * program records through spanscope exactly as one linked with
 * -lspanscope, and its documentation (scope_profiler.h,
 * docs/scope-profiler-c.md) is this file's.  The library is, first found:
 *   - $SPANSCOPE_LIBRARY (a path to libspanscope);
 *   - ../../libspanscope.so.1 (.dylib on macOS) beside this file, i.e. the
 *     package's own, found through __FILE__ (the path this file was
 *     compiled from: give it as an absolute path, as c_source_path() is);
 *   - libspanscope.so.1 on the loader's search path (a system install).
 * If none loads, one line goes to stderr and every call is a harmless no-op
 * (sp_init returns non-zero, sp_create NULL, sp_region SP_INVALID_REGION).
 *
 * Build configuration, as scope-profiler's: a build without SP_USE_HDF5
 * writes the native ".spt" trace (sp_default_output_format() is
 * SP_OUTPUT_TRACE, sp_hdf5_available() 0, and asking for SP_OUTPUT_HDF5 is
 * refused with SP_ERR_UNSUPPORTED); compile with -DSP_USE_HDF5 for
 * spanscope's default, "<prefix>_rank<NNNNN>.h5".
 *
 * Use it instead of -lspanscope, not with it (both define the sp_*
 * functions).
 *
 * Costs: sp_begin/sp_end (inlined by the header) call into the library
 * through one indirect call more than a linked build.  Needs dlopen and
 * pthread_once from the C library (glibc 2.34 or later, macOS; with an older
 * glibc add -ldl -pthread).  C99, and C++ programs link it as usual.
 */
#define _POSIX_C_SOURCE 200809L
#define SP_NO_INLINE /* this file defines the functions the header inlines */

#include "scope_profiler.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __APPLE__
#  define SPF_LIBNAME "libspanscope.0.dylib"
#else
#  define SPF_LIBNAME "libspanscope.so.1"
#endif

#ifdef SP_USE_HDF5
#  define SPF_DEFAULT_FORMAT SP_OUTPUT_HDF5
#else
#  define SPF_DEFAULT_FORMAT SP_OUTPUT_TRACE
#endif

/* The library's functions: X(return type, name, parameter list). */
#define SPF_FUNCTIONS(X)                                                              \
    X(const char *, sp_error_string, (sp_status))                                     \
    X(int, sp_profiler_set_output_format, (sp_profiler *, sp_output_format))          \
    X(sp_output_format, sp_profiler_output_format, (const sp_profiler *))             \
    X(sp_profiler *, sp_create, (const char *, int))                                  \
    X(void, sp_destroy, (sp_profiler *))                                              \
    X(int, sp_profiler_region, (sp_profiler *, const char *))                         \
    X(int, sp_profiler_region_at, (sp_profiler *, const char *, const char *, int))   \
    X(void, sp_profiler_begin, (sp_profiler *, int))                                  \
    X(void, sp_profiler_end, (sp_profiler *, int))                                    \
    X(int, sp_profiler_end_last, (sp_profiler *))                                     \
    X(sp_scope, sp_profiler_scope_begin, (sp_profiler *, int))                        \
    X(int, sp_scope_end, (sp_scope *))                                                \
    X(int, sp_profiler_reset, (sp_profiler *))                                        \
    X(int, sp_profiler_get_region_stats, (const sp_profiler *, int, sp_region_stats *)) \
    X(int, sp_profiler_num_regions, (const sp_profiler *))                            \
    X(const char *, sp_profiler_region_name, (const sp_profiler *, int))              \
    X(int, sp_profiler_flush, (sp_profiler *))                                        \
    X(int, sp_profiler_finalize, (sp_profiler *))                                     \
    X(int, sp_profiler_finalize_or_keep, (sp_profiler *))                             \
    X(int, sp_set_messages, (int))                                                    \
    X(int, sp_profiler_is_active, (const sp_profiler *))                              \
    X(const char *, sp_profiler_output_path, (const sp_profiler *))                   \
    X(sp_status, sp_profiler_last_error, (const sp_profiler *))                       \
    X(int, sp_init, (const char *, int))                                              \
    X(int, sp_region, (const char *))                                                 \
    X(int, sp_region_at, (const char *, const char *, int))                           \
    X(void, sp_begin, (int))                                                          \
    X(void, sp_end, (int))                                                            \
    X(int64_t, sp_num_calls, (int))                                                   \
    X(int64_t, sp_now_ns, (void))                                                     \
    X(int, sp_is_active, (void))                                                      \
    X(const char *, sp_output_path, (void))                                           \
    X(int, sp_finalize, (void))                                                       \
    X(sp_profiler *, sp_default_profiler, (void))                                     \
    X(int, sp_profiler_start_sampling, (sp_profiler *, int))                          \
    X(int, sp_profiler_stop_sampling, (sp_profiler *))                                \
    X(int, sp_start_sampling, (int))                                                  \
    X(int, sp_stop_sampling, (void))                                                  \
    X(void, sps__begin, (sps_region_t))                                               \
    X(void, sps__end, (sps_region_t))

#define SPF_POINTER(ret, name, params) static ret(*spf_##name) params;
SPF_FUNCTIONS(SPF_POINTER)
#undef SPF_POINTER

static pthread_once_t spf_once = PTHREAD_ONCE_INIT;
static int spf_loaded;

/* dlopen of the first candidate that loads and has every function. */
static void *spf_open(const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    int ok = h != NULL;
#define SPF_RESOLVE(ret, name, params)                                    \
    if (ok) {                                                             \
        *(void **)(&spf_##name) = dlsym(h, #name);                        \
        ok = spf_##name != NULL;                                          \
    }
    SPF_FUNCTIONS(SPF_RESOLVE)
#undef SPF_RESOLVE
    if (h && !ok) {
        fprintf(stderr, "scope_profiler: %s is not a libspanscope with scope-profiler's "
                        "C API\n", path);
        dlclose(h);
        h = NULL;
    }
    return h;
}

static void spf_load(void) {
    const char *env = getenv("SPANSCOPE_LIBRARY");
    const char *here = __FILE__;
    const char *slash = strrchr(here, '/');
    void *h = NULL;
    if (env && *env) h = spf_open(env);
    if (!h && slash) {
        size_t n = (size_t)(slash - here);
        char *path = malloc(n + sizeof "/../../" SPF_LIBNAME);
        if (path) {
            memcpy(path, here, n);
            strcpy(path + n, "/../../" SPF_LIBNAME);
            h = spf_open(path);
            free(path);
        }
    }
    if (!h) h = spf_open(SPF_LIBNAME);
    if (!h) {
        fprintf(stderr, "scope_profiler: cannot load libspanscope (set SPANSCOPE_LIBRARY "
                        "to its path): %s; nothing is profiled\n", dlerror());
        return;
    }
    spf_loaded = 1;
}

/* Non-zero once the library is loaded (loading it at the first call). */
static int spf_ready(void) {
    pthread_once(&spf_once, spf_load);
    return spf_loaded;
}

/* The build's default format for a new profiler (see the top). */
static void spf_configure(sp_profiler *p) {
    if (p && SPF_DEFAULT_FORMAT != SP_OUTPUT_HDF5)
        (void)spf_sp_profiler_set_output_format(p, SPF_DEFAULT_FORMAT);
}

/* The header's inline sp_begin/sp_end read sps__active and call
 * sps__begin/sps__end; here they always call, and the library checks its
 * session itself. */
int sps__active = 1;

void sps__begin(sps_region_t r) {
    if (spf_ready()) spf_sps__begin(r);
}

void sps__end(sps_region_t r) {
    if (spf_ready()) spf_sps__end(r);
}

const char *sp_error_string(sp_status status) {
    return spf_ready() ? spf_sp_error_string(status) : "libspanscope could not be loaded";
}

int sp_hdf5_available(void) {
#ifdef SP_USE_HDF5
    return 1;
#else
    return 0;
#endif
}

sp_output_format sp_default_output_format(void) { return SPF_DEFAULT_FORMAT; }

int sp_profiler_set_output_format(sp_profiler *profiler, sp_output_format format) {
    if (!spf_ready()) return SP_ERR_INACTIVE;
#ifndef SP_USE_HDF5
    /* not in this build: the library refuses it as any format it does not
     * write (SP_ERR_INACTIVE for an inactive profiler, else
     * SP_ERR_UNSUPPORTED in the return value and last error) */
    if (format == SP_OUTPUT_HDF5) format = (sp_output_format)-1;
#endif
    return spf_sp_profiler_set_output_format(profiler, format);
}

sp_output_format sp_profiler_output_format(const sp_profiler *profiler) {
    if (!profiler || !spf_ready()) return SPF_DEFAULT_FORMAT;
    return spf_sp_profiler_output_format(profiler);
}

sp_profiler *sp_create(const char *prefix, int rank) {
    sp_profiler *p;
    if (!spf_ready()) return NULL;
    p = spf_sp_create(prefix, rank);
    if (p && spf_sp_profiler_is_active(p)) spf_configure(p);
    return p;
}

void sp_destroy(sp_profiler *profiler) {
    if (profiler && spf_ready()) spf_sp_destroy(profiler);
}

int sp_profiler_region(sp_profiler *profiler, const char *name) {
    return spf_ready() ? spf_sp_profiler_region(profiler, name) : SP_INVALID_REGION;
}

int sp_profiler_region_at(sp_profiler *profiler, const char *name, const char *source_file,
                          int source_line) {
    return spf_ready() ? spf_sp_profiler_region_at(profiler, name, source_file, source_line)
                       : SP_INVALID_REGION;
}

void sp_profiler_begin(sp_profiler *profiler, int region) {
    if (spf_ready()) spf_sp_profiler_begin(profiler, region);
}

void sp_profiler_end(sp_profiler *profiler, int region) {
    if (spf_ready()) spf_sp_profiler_end(profiler, region);
}

int sp_profiler_end_last(sp_profiler *profiler) {
    return spf_ready() ? spf_sp_profiler_end_last(profiler) : SP_ERR_UNMATCHED_END;
}

sp_scope sp_profiler_scope_begin(sp_profiler *profiler, int region) {
    sp_scope none;
    if (spf_ready()) return spf_sp_profiler_scope_begin(profiler, region);
    none.profiler = profiler;
    none.region = region;
    none.slot = -1;
    return none;
}

int sp_scope_end(sp_scope *scope) {
    return spf_ready() ? spf_sp_scope_end(scope) : SP_ERR_UNMATCHED_END;
}

int sp_profiler_reset(sp_profiler *profiler) {
    return spf_ready() ? spf_sp_profiler_reset(profiler) : SP_ERR_INACTIVE;
}

int sp_profiler_get_region_stats(const sp_profiler *profiler, int region,
                                 sp_region_stats *stats) {
    return spf_ready() ? spf_sp_profiler_get_region_stats(profiler, region, stats)
                       : SP_ERR_INACTIVE;
}

int sp_profiler_num_regions(const sp_profiler *profiler) {
    return spf_ready() ? spf_sp_profiler_num_regions(profiler) : 0;
}

const char *sp_profiler_region_name(const sp_profiler *profiler, int region) {
    return spf_ready() ? spf_sp_profiler_region_name(profiler, region) : NULL;
}

int sp_profiler_flush(sp_profiler *profiler) {
    return spf_ready() ? spf_sp_profiler_flush(profiler) : 0;
}

int sp_profiler_finalize(sp_profiler *profiler) {
    return spf_ready() ? spf_sp_profiler_finalize(profiler) : 0;
}

int sp_profiler_finalize_or_keep(sp_profiler *profiler) {
    return spf_ready() ? spf_sp_profiler_finalize_or_keep(profiler) : 0;
}

int sp_set_messages(int on) { return spf_ready() ? spf_sp_set_messages(on) : 1; }

int sp_profiler_is_active(const sp_profiler *profiler) {
    return spf_ready() ? spf_sp_profiler_is_active(profiler) : 0;
}

const char *sp_profiler_output_path(const sp_profiler *profiler) {
    return spf_ready() ? spf_sp_profiler_output_path(profiler) : NULL;
}

sp_status sp_profiler_last_error(const sp_profiler *profiler) {
    return spf_ready() ? spf_sp_profiler_last_error(profiler) : SP_OK;
}

int sp_init(const char *prefix, int rank) {
    int rc;
    if (!spf_ready()) return 1;
    rc = spf_sp_init(prefix, rank);
    if (rc == 0) spf_configure(spf_sp_default_profiler());
    return rc;
}

int sp_region(const char *name) {
    return spf_ready() ? spf_sp_region(name) : SP_INVALID_REGION;
}

int sp_region_at(const char *name, const char *source_file, int source_line) {
    return spf_ready() ? spf_sp_region_at(name, source_file, source_line) : SP_INVALID_REGION;
}

void sp_begin(int region) {
    if (spf_ready()) spf_sp_begin(region);
}

void sp_end(int region) {
    if (spf_ready()) spf_sp_end(region);
}

int64_t sp_num_calls(int region) { return spf_ready() ? spf_sp_num_calls(region) : 0; }

int64_t sp_now_ns(void) { return spf_ready() ? spf_sp_now_ns() : 0; }

int sp_is_active(void) { return spf_ready() ? spf_sp_is_active() : 0; }

int sp_set_output_format(sp_output_format format) {
    return sp_profiler_set_output_format(sp_default_profiler(), format);
}

sp_output_format sp_current_output_format(void) {
    return sp_profiler_output_format(sp_default_profiler());
}

const char *sp_output_path(void) { return spf_ready() ? spf_sp_output_path() : NULL; }

int sp_finalize(void) { return spf_ready() ? spf_sp_finalize() : 0; }

sp_profiler *sp_default_profiler(void) {
    return spf_ready() ? spf_sp_default_profiler() : NULL;
}

int sp_profiler_start_sampling(sp_profiler *profiler, int hz) {
    return spf_ready() ? spf_sp_profiler_start_sampling(profiler, hz) : SP_ERR_INACTIVE;
}

int sp_profiler_stop_sampling(sp_profiler *profiler) {
    return spf_ready() ? spf_sp_profiler_stop_sampling(profiler) : SP_OK;
}

int sp_start_sampling(int hz) { return spf_ready() ? spf_sp_start_sampling(hz) : SP_ERR_INACTIVE; }

int sp_stop_sampling(void) { return spf_ready() ? spf_sp_stop_sampling() : SP_OK; }
