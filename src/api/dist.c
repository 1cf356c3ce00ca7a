/* dist.c -- the api layer's side of distributed sessions: the one registered
 * integration (libspanscope_mpi, src/ext/mpi.c), what setup and finalize call
 * instead of naming it, the services the integration gets back, and the
 * automatic loading of libspanscope_mpi (docs/mpi.md, "What is loaded").
 *
 * libspanscope links no MPI library: a serial program loads neither libmpi
 * nor the ~40 libraries behind it.  MPI support lives in libspanscope_mpi,
 * whose constructor registers its operations table here.  A program that
 * links it (or Python, which loads it when MPI is initialised) gets the
 * table at load time.  A program that does not -- a linker running with
 * --as-needed drops -lspanscope_mpi from a program that calls only
 * sps_setup -- but has MPI initialised when it calls sps_setup gets it
 * loaded here, from libspanscope's own directory, so that its session is
 * collective all the same. */
#include "api/api.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The registered table (NULL: none).  Written once by compare-and-swap,
 * read with acquire loads: setup may run on any thread, the registration
 * in a constructor of a library another thread dlopen()ed. */
static const sps__dist_ops_t *g_ops;

/* Copies the live session's distributed state (see sps__dist_core_t). */
static int core_dist_info(sps__dist_t *out) {
    pthread_mutex_lock(&sps__g.lock);
    int live = sps__state_load() != SPS__OFF && sps__g.pid == getpid();
    if (live && sps__g.dist.on) *out = sps__g.dist;
    else memset(out, 0, sizeof *out);
    pthread_mutex_unlock(&sps__g.lock);
    return live;
}

/* The live session's mode, SPS__OFF when none (see sps__dist_core_t). */
static int core_session_mode(void) {
    pthread_mutex_lock(&sps__g.lock);
    int live = sps__state_load() != SPS__OFF && sps__g.pid == getpid();
    int mode = live ? sps__g.mode : SPS__OFF;
    pthread_mutex_unlock(&sps__g.lock);
    return mode;
}

/* The services handed to the integration.  h5_add_table is a formats-layer
 * function: the table is the integration's view of every layer below it. */
static const sps__dist_core_t g_core = {
    SPS__DIST_ABI, sps__finalize_local, sps__finalize_part, core_dist_info, core_session_mode,
    sps__h5_add_table, sps__part_events, sps__merge_ex, sps__part_rows,
    sps__part_index_msg,
};

int sps__dist_register(const sps__dist_ops_t *ops, const sps__dist_core_t **core) {
    if (!ops || ops->abi != SPS__DIST_ABI || !ops->setup || !ops->finalize ||
        !ops->shutdown)
        return SPS_EINVAL;
    /* *core before the table is published: a setup on another thread may
     * call the table as soon as it is, and the table uses *core */
    if (core) *core = &g_core;
    const sps__dist_ops_t *none = NULL;
    if (!__atomic_compare_exchange_n(&g_ops, &none, ops, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE) &&
        none != ops) {
        if (core) *core = NULL;
        return SPS_EACTIVE;
    }
    return 0;
}

#ifdef SPS_MPI_LIBRARY /* the build has libspanscope_mpi (CMake sets its name) */

typedef int (*mpi_flag_fn)(int *flag);

/* 1 when MPI is initialised and not yet finalized in this process, asked of
 * whatever MPI library the process has in its global scope (0 when it has
 * none): the core links no MPI.  The PMPI_ names, as everywhere in
 * spanscope, so that a PMPI tool never sees spanscope's calls; every MPI
 * library defines both PMPI_Initialized and PMPI_Finalized. */
static int mpi_up(void) {
    mpi_flag_fn initialized = (mpi_flag_fn)dlsym(RTLD_DEFAULT, "PMPI_Initialized");
    mpi_flag_fn finalized = (mpi_flag_fn)dlsym(RTLD_DEFAULT, "PMPI_Finalized");
    int ini = 0, fin = 0;
    if (!initialized || !finalized) return 0;
    initialized(&ini);
    finalized(&fin);
    return ini && !fin;
}

/* Loads libspanscope_mpi from the directory libspanscope itself was loaded
 * from (build tree, install prefix and Python wheel all keep the two
 * together); its constructor registers its table.  Only from a shared
 * core: beside a static one (then dladdr names the program) it would bring
 * a second core, and a second session, with it.  RTLD_NODELETE: the table
 * must outlive any dlclose.  A failure leaves the session local, as in a
 * build without MPI. */
static void load_mpi_library(void) {
    Dl_info self;
    if (!dladdr((void *)&sps__dist_setup, &self) || !self.dli_fname) return;
    const char *slash = strrchr(self.dli_fname, '/');
    const char *base = slash ? slash + 1 : self.dli_fname;
    if (strncmp(base, "libspanscope.so", strlen("libspanscope.so"))) return;
    char path[4096];
    int n = snprintf(path, sizeof path, "%.*s%s", (int)(base - self.dli_fname),
                     self.dli_fname, SPS_MPI_LIBRARY);
    if (n < 0 || (size_t)n >= sizeof path) return;
    dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
}

#endif /* SPS_MPI_LIBRARY */

int sps__dist_setup(sps__dist_t *out) {
    memset(out, 0, sizeof *out);
    const sps__dist_ops_t *ops = __atomic_load_n(&g_ops, __ATOMIC_ACQUIRE);
#ifdef SPS_MPI_LIBRARY
    const char *e = getenv("SPANSCOPE_MPI");
    if (!ops && !(e && !strcmp(e, "0")) && mpi_up()) {
        load_mpi_library();
        ops = __atomic_load_n(&g_ops, __ATOMIC_ACQUIRE);
    }
#endif
    return ops ? ops->setup(out) : 0;
}

int sps__dist_finalize(const char *path, FILE *table_fp) {
    const sps__dist_ops_t *ops = __atomic_load_n(&g_ops, __ATOMIC_ACQUIRE);
    return ops ? ops->finalize(path, table_fp) : sps__finalize_local(path, table_fp);
}

void sps__dist_shutdown(void) {
    const sps__dist_ops_t *ops = __atomic_load_n(&g_ops, __ATOMIC_ACQUIRE);
    if (ops) ops->shutdown();
}
