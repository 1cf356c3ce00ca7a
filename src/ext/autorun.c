/* autorun.c -- libspanscope_run: the library `spanscope run [options] -- CMD`
 * preloads into any program (docs/native-run.md).
 *
 * The command-line tool (tools/cmd_run.c) sets the environment --
 * SPANSCOPE_RUN=1, SPANSCOPE_RUN_PID (its own pid, which the program keeps
 * across exec), SPANSCOPE_OUTPUT and the other SPANSCOPE_* settings --,
 * puts this library first in LD_PRELOAD and execs the program.  Then:
 *
 *   - Before main, a constructor sets the session up from the environment
 *     (sps_setup_from_env), and an atexit handler, registered before main
 *     so that it runs after the program's own, finalizes it and prints at
 *     most one line on stderr ("spanscope: wrote PATH (N regions)"; none
 *     with SPANSCOPE_RUN_QUIET=1, errors always).  Only in the process the
 *     tool started: a descendant that inherits the environment (a shell of
 *     system(), a helper it execs in a child) sets nothing up, so it
 *     cannot overwrite the profile.
 *   - The program's own sps_setup is interposed (this library comes first
 *     in the lookup order): the first one made while the session is still
 *     the one this library started *takes it over* -- it returns 0, and
 *     where nothing was registered in the session yet, the session is set
 *     up again with the program's configuration, each setting the run was
 *     given (output path, label, memory limit, aggregation, sampling rate:
 *     options, variables or the --config file) replacing the program's.  So a program
 *     that links libspanscope and calls sps_setup / sps_finalize itself
 *     runs unchanged, and the environment's output path still wins.
 *     Calls of the finalize family are interposed too, only to note that
 *     the program finalizes on its own: then the exit handler writes
 *     nothing more (a second finalize would replace the program's file
 *     with an empty period) and only closes the session.  A path the
 *     program names (sps_finalize_to: the Python face's finalize) is kept.
 *   - MPI: MPI_Init and MPI_Init_thread are interposed.  A session must be
 *     set up after MPI is initialised to be collective (one file for every
 *     rank; docs/mpi.md), so with SPANSCOPE_RUN_MPI=1 (`--mpi`) the
 *     constructor sets nothing up and the session starts right after the
 *     real MPI_Init returns; a session this library started before (no
 *     --mpi) is started again there.  MPI_Finalize is interposed so that
 *     the collective finalize runs before the real one.  The wrappers call
 *     the next definition (dlsym RTLD_NEXT, else PMPI_* of a loaded
 *     object): this library links no MPI, and a program that never calls
 *     MPI_Init never reaches them.
 *
 * An integration of the fifth layer over the public API only (linked with
 * --no-undefined); it exports the interposed functions and nothing else. */
#include <spanscope.h>

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

static int g_armed;            /* SPANSCOPE_RUN=1 in the run's own process */
static int g_mpi_mode;         /* SPANSCOPE_RUN_MPI=1: set up at MPI_Init */
static int g_mpi_seen;         /* the program called MPI_Init (collective) */
static int g_quiet;            /* SPANSCOPE_RUN_QUIET=1: no success line */
static pid_t g_pid;            /* the run's process (a forked child differs) */
static int g_own;              /* the live session is this library's, or the
                                  program's that took it over */
static int g_adoptable;        /* the program's next sps_setup takes it over */
static int g_prog_finalized;   /* the program called a finalize itself */
static int g_prog_wrote_run;   /* one of them wrote to the run's path */
static int g_reported;         /* the exit line was printed */
static __thread int t_inside;  /* this library's own calls: pass through */

/* ------------------------------------------------------------------------ */
/* The next definitions of the interposed functions                          */
/* ------------------------------------------------------------------------ */

struct find_ctx {
    const char *name;
    void *self;
    void *found;
};

/* dl_iterate_phdr's callback: name in the object, when it is not this
 * library (RTLD_NOLOAD: only objects already there). */
static int find_in_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct find_ctx *c = data;
    if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    void *p = dlsym(h, c->name);
    dlclose(h);
    if (p && p != c->self) {
        c->found = p;
        return 1;
    }
    return 0;
}

/* The definition of name after this library's (RTLD_NEXT); else, for an
 * object loaded outside the global scope (a dlopen'ed module's MPI), the
 * first loaded object that defines alt.  NULL when there is none. */
static void *next_fn(const char *name, const char *alt, void *self) {
    void *p = dlsym(RTLD_NEXT, name);
    if (p && p != self) return p;
    if (!alt) return NULL;
    p = dlsym(RTLD_DEFAULT, alt);
    if (p && p != self) return p;
    struct find_ctx c = {alt, self, NULL};
    dl_iterate_phdr(find_in_object, &c);
    return c.found;
}

/* ------------------------------------------------------------------------ */
/* The session                                                               */
/* ------------------------------------------------------------------------ */

/* The output path the run was given (SPANSCOPE_OUTPUT, else its
 * SCOPE_PROFILER_ alias), or NULL for none ("" or "none") or unset. */
static const char *run_output(void) {
    const char *o = getenv("SPANSCOPE_OUTPUT");
    if (!o) o = getenv("SCOPE_PROFILER_OUTPUT");
    if (!o || !*o || !strcasecmp(o, "none")) return NULL;
    return o;
}

/* 0 on rank 0 (or without MPI), else this process's rank as the launcher
 * tells it (once MPI_Init was called): only rank 0 prints the line of a
 * collective session. */
static int launcher_rank(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                       "MV2_COMM_WORLD_RANK", "SLURM_PROCID"};
    if (!g_mpi_mode && !g_mpi_seen) return 0;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return atoi(v);
    }
    return 0;
}

/* The command line of the process (/proc/self/cmdline, arguments joined
 * by spaces, cut at 4 KiB) as the session's /metadata "command". */
static void set_command_metadata(void) {
    char buf[4096];
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f) return;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    if (!n) return;
    if (buf[n - 1] == 0) n--;
    for (size_t i = 0; i < n; i++)
        if (buf[i] == 0) buf[i] = ' ';
    buf[n] = 0;
    sps_metadata_set("command", buf);
}

/* Sets the session up from the environment; told on stderr in one line
 * when it cannot be (the program then runs unprofiled). */
static void start_session(void) {
    char err[512] = "";
    t_inside++;
    int rc = sps_setup_from_env(err, sizeof err);
    t_inside--;
    if (rc) {
        if (rc != SPS_EACTIVE) /* another library's session runs: leave it */
            fprintf(stderr, "spanscope: %s; not profiling\n", err[0] ? err : sps_strerror(rc));
        return;
    }
    if (!sps_is_active()) return; /* SPANSCOPE_DEACTIVATE_PROFILING */
    g_own = 1;
    set_command_metadata();
}

/* Finalizes the session this library owns (unless the program finalized
 * it itself) and closes it; prints the run's one line (see the top). */
static void finish_session(void) {
    if (!g_own || !sps_is_active()) {
        g_own = 0;
        return;
    }
    g_own = 0;
    int mine = getpid() == g_pid; /* not a forked child's exit */
    t_inside++;
    size_t nreg = sps_regions_recorded(NULL, 0);
    int own_file = g_prog_finalized; /* the program wrote its file(s) itself */
    int rc = own_file ? 0 : sps_finalize();
    sps_shutdown(); /* later exit handlers record nothing */
    t_inside--;
    if (!mine || g_reported) return;
    g_reported = 1;
    const char *out = run_output();
    struct stat st;
    if (own_file && (!g_prog_wrote_run || !out || stat(out, &st) != 0)) {
        /* its finalizes named paths of its own (sps_finalize_to: the
         * Python face's ProfileManager does): they are its choice */
        if (out && !g_quiet && launcher_rank() == 0)
            fprintf(stderr, "spanscope: the program wrote its profile to a path of its own; "
                    "%s not written\n", out);
        return;
    }
    if (rc)
        fprintf(stderr, "spanscope: writing %s failed: %s (%s)\n", out ? out : "(no file)",
                sps_strerror(rc), sps_last_error());
    else if (out && !g_quiet && launcher_rank() == 0)
        fprintf(stderr, "spanscope: wrote %s (%zu region%s)\n", out, nreg, nreg == 1 ? "" : "s");
}

static void autorun_exit(void) {
    if (g_mpi_mode && !g_mpi_seen && getpid() == g_pid && !g_reported) {
        g_reported = 1; /* --mpi waits for MPI_Init, which never came */
        fprintf(stderr, "spanscope: --mpi: the program never called MPI_Init (C bindings); "
                "no profile written\n");
    }
    finish_session();
}

__attribute__((constructor)) static void autorun_init(void) {
    const char *run = getenv("SPANSCOPE_RUN");
    if (!run || strcmp(run, "1") != 0) return;
    const char *pid = getenv("SPANSCOPE_RUN_PID");
    if (pid && *pid && atol(pid) != (long)getpid()) return; /* a descendant */
    g_armed = 1;
    g_pid = getpid();
    const char *q = getenv("SPANSCOPE_RUN_QUIET");
    g_quiet = q && !strcmp(q, "1");
    const char *m = getenv("SPANSCOPE_RUN_MPI");
    g_mpi_mode = m && !strcmp(m, "1");
    g_adoptable = 1;
    if (atexit(autorun_exit)) {
        fprintf(stderr, "spanscope: atexit failed; not profiling\n");
        g_armed = 0;
        return;
    }
    if (!g_mpi_mode) start_session();
}

/* ------------------------------------------------------------------------ */
/* The program's own session                                                 */
/* ------------------------------------------------------------------------ */

typedef int (*setup_fn)(const sps_config_t *);

static int setup_next(const sps_config_t *cfg);

/* The program's sps_setup (and every sps_setup of the process: the
 * library's own sps_setup_from_env calls it too, through its PLT).  See
 * the top of the file for the take-over. */
API int sps_setup(const sps_config_t *cfg) {
    if (t_inside || !__atomic_exchange_n(&g_adoptable, 0, __ATOMIC_ACQ_REL))
        return setup_next(cfg);
    if (g_own && sps_is_active()) {
        sps_region_t one;
        if (sps_regions_registered(&one, 1) > 0) return 0; /* recording: keep it */
        t_inside++;
        sps_shutdown();
        t_inside--;
        g_own = 0;
    }
    static const sps_config_t defaults = SPS_CONFIG_INIT;
    sps_config_t c = cfg ? *cfg : defaults;
    sps_env_t e;
    t_inside++;
    int rc = sps_env_resolve(&e, NULL, 0); /* the variables over the --config file */
    t_inside--;
    if (rc == 0) {
        if (e.has_output) c.file_path = e.cfg.file_path;
        if (e.cfg.label) c.label = e.cfg.label;
        if (e.cfg.memory_limit) c.memory_limit = e.cfg.memory_limit;
        if (e.aggregate == 1 || e.cfg.aggregate) c.aggregate = 1;
        if (e.cfg.sample_hz) c.sample_hz = e.cfg.sample_hz;
    }
    rc = setup_next(&c);
    if (rc == 0) {
        g_own = 1;
        g_prog_finalized = 0;
        g_prog_wrote_run = 0;
        set_command_metadata();
    }
    return rc;
}

static int setup_next(const sps_config_t *cfg) {
    static setup_fn f;
    if (!f) f = (setup_fn)next_fn("sps_setup", "sps_setup", (void *)sps_setup);
    return f ? f(cfg) : SPS_ENOTSUP;
}

/* The finalize family: the program's call, noted (not this library's own
 * finalize at exit), then the next definition.  A path the program names
 * is kept: it is the program's choice (and the Python face reads back what
 * it writes there); only the session's configured path is the run's. */
/* A finalize of the program's (to its session's path when configured,
 * else to path): noted, and whether it wrote the run's output path. */
static void note_finalize(int configured, const char *path) {
    if (t_inside || !g_own) return;
    g_prog_finalized = 1;
    const char *out = run_output();
    if (configured || (path && out && !strcmp(path, out))) g_prog_wrote_run = 1;
}

API int sps_finalize(void) {
    static int (*f)(void);
    if (!f) f = (int (*)(void))next_fn("sps_finalize", "sps_finalize", (void *)sps_finalize);
    note_finalize(1, NULL);
    return f ? f() : SPS_ENOTSUP;
}

API int sps_finalize_to(const char *path) {
    static int (*f)(const char *);
    if (!f)
        f = (int (*)(const char *))next_fn("sps_finalize_to", "sps_finalize_to",
                                           (void *)sps_finalize_to);
    note_finalize(0, path);
    return f ? f(path) : SPS_ENOTSUP;
}

API int sps_finalize_print(const char *path, void *table_file) {
    static int (*f)(const char *, void *);
    if (!f)
        f = (int (*)(const char *, void *))next_fn("sps_finalize_print", "sps_finalize_print",
                                                   (void *)sps_finalize_print);
    note_finalize(0, path);
    return f ? f(path, table_file) : SPS_ENOTSUP;
}

API int sps_finalize_paths(const char *path, void *table_file, sps_period_paths_t *out) {
    static int (*f)(const char *, void *, sps_period_paths_t *);
    if (!f)
        f = (int (*)(const char *, void *, sps_period_paths_t *))next_fn(
            "sps_finalize_paths", "sps_finalize_paths", (void *)sps_finalize_paths);
    note_finalize(0, path);
    return f ? f(path, table_file, out) : SPS_ENOTSUP;
}

/* ------------------------------------------------------------------------ */
/* MPI                                                                       */
/* ------------------------------------------------------------------------ */

/* After the real MPI_Init: the session (again), now collective. */
static void mpi_started(void) {
    if (!g_armed) return;
    g_mpi_seen = 1;
    if (g_own && sps_is_active()) {
        t_inside++;
        sps_shutdown(); /* a local one from before MPI_Init */
        t_inside--;
        g_own = 0;
    }
    if (!sps_is_active()) start_session();
}

API int MPI_Init(int *argc, char ***argv) {
    static int (*f)(int *, char ***);
    if (!f) f = (int (*)(int *, char ***))next_fn("MPI_Init", "PMPI_Init", (void *)MPI_Init);
    if (!f) {
        fprintf(stderr, "spanscope: MPI_Init: no MPI library loaded\n");
        abort();
    }
    int rc = f(argc, argv);
    if (rc == 0) mpi_started();
    return rc;
}

API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    static int (*f)(int *, char ***, int, int *);
    if (!f)
        f = (int (*)(int *, char ***, int, int *))next_fn("MPI_Init_thread", "PMPI_Init_thread",
                                                          (void *)MPI_Init_thread);
    if (!f) {
        fprintf(stderr, "spanscope: MPI_Init_thread: no MPI library loaded\n");
        abort();
    }
    int rc = f(argc, argv, required, provided);
    if (rc == 0) mpi_started();
    return rc;
}

API int MPI_Finalize(void) {
    static int (*f)(void);
    if (!f) f = (int (*)(void))next_fn("MPI_Finalize", "PMPI_Finalize", (void *)MPI_Finalize);
    if (!f) {
        fprintf(stderr, "spanscope: MPI_Finalize: no MPI library loaded\n");
        abort();
    }
    if (g_armed) finish_session(); /* collective, while MPI still runs */
    return f();
}
