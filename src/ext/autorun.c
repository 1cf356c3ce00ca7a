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
 *   - A process tree (`spanscope run --follow -- CMD`, SPANSCOPE_FOLLOW: a
 *     parts directory; docs/process-trees.md): every process of the tree
 *     that loads this library -- the command, what it execs in children
 *     (LD_PRELOAD and the variables are inherited), what they fork --
 *     records its own part, PARTS/part.pid<PID>.h5, under a rank of its
 *     own claimed with the Python runner's protocol (rank<N>.json created
 *     O_EXCL: the root 0, every other the lowest free number).  A forked
 *     child's session is replaced by one with its own rank and part (the
 *     calls open on the forking thread begin again in it, so that its
 *     ends match).  Each writes its part at its exit (or, killed, leaves
 *     its crash-safe directory); the tool, which waits for the tree,
 *     merges them (tools/cmd_run.c).
 *
 * An integration of the fifth layer over the public API only (linked with
 * --no-undefined); it exports the interposed functions and nothing else. */
#include <spanscope.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
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
/* --follow (SPANSCOPE_FOLLOW): this process's part of the tree */
static int g_follow;           /* this process records a part */
static int g_follow_rank;      /* the rank it claimed */
static char g_follow_dir[PATH_MAX];
static char g_follow_part[PATH_MAX + 64];
static const char *g_follow_how; /* "root", "exec" or "fork" */
static long g_run_pid = -1;      /* SPANSCOPE_RUN_PID: the root's */

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

/* ------------------------------------------------------------------------ */
/* --follow: a process tree (docs/process-trees.md)                          */
/* ------------------------------------------------------------------------ */

/* s[0..n) as a JSON string to f (quotes, backslashes and control
 * characters escaped; other bytes as they are). */
static void json_str(FILE *f, const char *s, size_t n) {
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* This process's command line (/proc/self/cmdline, cut at 4 KiB) as a
 * JSON list to f. */
static void argv_json(FILE *f) {
    char buf[4096];
    size_t n = 0;
    FILE *c = fopen("/proc/self/cmdline", "r");
    if (c) {
        n = fread(buf, 1, sizeof buf, c);
        fclose(c);
    }
    fputc('[', f);
    for (size_t i = 0, first = 1; i < n; first = 0) {
        size_t l = strnlen(buf + i, n - i);
        if (!first) fputs(", ", f);
        json_str(f, buf + i, l);
        i += l + 1;
    }
    fputc(']', f);
}

/* The pid a claim file names ("pid": N), or -1. */
static long claim_pid(const char *path) {
    char buf[8192];
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strstr(buf, "\"pid\"");
    if (!p) return -1;
    p += 5;
    while (*p == ' ' || *p == ':') p++;
    char *end;
    long v = strtol(p, &end, 10);
    return end == p ? -1 : v;
}

/* A rank already claimed by this pid (an exec without a fork: the same
 * process again), or -1. */
static int claim_of_pid(long pid) {
    DIR *d = opendir(g_follow_dir);
    if (!d) return -1;
    int rank = -1;
    for (struct dirent *e; rank < 0 && (e = readdir(d));) {
        int r, len = 0;
        if (sscanf(e->d_name, "rank%d.json%n", &r, &len) != 1 || e->d_name[len]) continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", g_follow_dir, e->d_name);
        if (claim_pid(path) == pid) rank = r;
    }
    closedir(d);
    return rank;
}

/* Writes the claim of rank n, {"pid", "ppid", "start": how, "argv",
 * "rank"} (what the Python runner writes: _follow.claim_rank): created
 * exclusively when excl (errno EEXIST: taken), else rewritten (an exec'd
 * image of a process that claimed n: its new command line).  0 or -1. */
static int claim_write(int n, const char *how, int excl) {
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/rank%d.json", g_follow_dir, n);
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC | (excl ? O_EXCL : O_TRUNC), 0644);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return -1;
    }
    fprintf(f, "{\"pid\": %ld, \"ppid\": %ld, \"start\": \"%s\", \"argv\": ", (long)getpid(),
            (long)getppid(), how);
    argv_json(f);
    fprintf(f, ", \"rank\": %d}", n);
    return fclose(f) == 0 ? 0 : -1;
}

/* Claims the lowest free rank >= first in the parts directory by creating
 * rank<N>.json exclusively (two processes never get one rank).  Returns
 * the rank, or -1 when the directory cannot be written. */
static int follow_claim(int first, const char *how) {
    for (int n = first; n < 1 << 20; n++) {
        if (claim_write(n, how, 1) == 0) return n;
        if (errno != EEXIST) return -1;
    }
    return -1;
}

/* This process joins the tree: its rank (the root: 0; an exec'd image of
 * a process that claimed one already: that one) and its part's path.
 * 0, or -1 (told on stderr: the process runs unprofiled). */
static int follow_join(const char *how) {
    int root = (long)getpid() == g_run_pid;
    if (root) how = "root";
    int rank = claim_of_pid((long)getpid());
    if (rank >= 0) claim_write(rank, how, 0); /* exec'd: its new command line */
    else rank = follow_claim(root ? 0 : 1, how);
    if (rank < 0 || (root && rank != 0)) {
        fprintf(stderr, "spanscope: --follow: cannot claim a rank in %s: %s; this process "
                "is not profiled\n", g_follow_dir, rank < 0 ? strerror(errno) : "rank 0 is taken");
        return -1;
    }
    g_follow_rank = rank;

    g_follow_how = how;
    snprintf(g_follow_part, sizeof g_follow_part, "%s/part.pid%ld.h5", g_follow_dir,
             (long)getpid());
    g_follow = 1;
    return 0;
}

/* What a followed process's part says of it (/metadata), as the Python
 * runner's parts do. */
static void follow_metadata(const char *how) {
    char v[64];
    snprintf(v, sizeof v, "%ld", (long)getppid());
    sps_metadata_set("ppid", v);
    sps_metadata_set("follow_start", how);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (f) {
        argv_json(f);
        fclose(f);
        sps_metadata_set("argv", buf);
        free(buf);
    }
}

/* A forked child of a followed process (after core's own child handler,
 * which gave it a session with its parent's rank and a core-named file):
 * a session of its own rank and part instead.  The calls open on the
 * forking thread at the fork (read by follow_prepare) begin again at its
 * start, as the core's fork children do, so that its ends match. */
#define FORK_OPEN_MAX 64
static sps_region_t g_fork_open[FORK_OPEN_MAX];
static size_t g_fork_nopen;

static void follow_prepare(void) {
    g_fork_nopen = 0;
    if (!g_follow || !g_own || !sps_is_active()) return;
    t_inside++;
    size_t n = sps_open_calls(g_fork_open, FORK_OPEN_MAX);
    t_inside--;
    g_fork_nopen = n < FORK_OPEN_MAX ? n : FORK_OPEN_MAX;
}

static void start_session(void);

static void follow_child(void) {
    if (!g_follow) return;
    g_follow = 0;
    /* the core gave this child no session: the library's own fork (a file
     * checked in a child: util/isolate.c) or SPANSCOPE_FORK=off -- no
     * process of the tree, then */
    if (!sps_is_active()) {
        g_own = 0;
        return;
    }
    g_pid = getpid();
    g_reported = 1; /* a child prints nothing: the root reports */
    if (g_own) {
        t_inside++;
        sps_shutdown(); /* the core's child session: not written */
        t_inside--;
        g_own = 0;
    }
    if (follow_join("fork")) return;
    start_session();
    g_adoptable = 0; /* the program's sps_setup in the child: its own (SPS_EACTIVE) */
    t_inside++;
    for (size_t i = 0; g_own && i < g_fork_nopen; i++) sps_begin(g_fork_open[i]);
    t_inside--;
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
    if (g_follow) follow_metadata(g_follow_how);
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
    if (g_follow) { /* the tool merges the parts and reports */
        if (rc)
            fprintf(stderr, "spanscope: --follow: writing the part of process %ld failed: "
                    "%s (%s)\n", (long)getpid(), sps_strerror(rc), sps_last_error());
        return;
    }
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
    const char *dir = getenv("SPANSCOPE_FOLLOW"), *fw = getenv("SPANSCOPE_RUN_FOLLOW");
    int follow = dir && *dir && fw && !strcmp(fw, "1");
    if (pid && *pid) g_run_pid = atol(pid);
    if (!follow && pid && *pid && g_run_pid != (long)getpid()) return; /* a descendant */
    if (follow) {
        if (snprintf(g_follow_dir, sizeof g_follow_dir, "%s", dir) >= (int)sizeof g_follow_dir ||
            follow_join("exec"))
            return;
    }
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
    /* after the session's setup, which registers core's fork handlers:
     * this child handler runs after core's (registration order) */
    if (follow && pthread_atfork(follow_prepare, NULL, follow_child))
        fprintf(stderr, "spanscope: --follow: pthread_atfork failed; forked children are "
                "not followed\n");
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

/* The next sps_setup; in a followed process, with its part and rank in
 * place of the run's output (one rank per process: the merge's rule). */
static int setup_next(const sps_config_t *cfg) {
    static setup_fn f;
    if (!f) f = (setup_fn)next_fn("sps_setup", "sps_setup", (void *)sps_setup);
    if (!f) return SPS_ENOTSUP;
    if (!g_follow) return f(cfg);
    static const sps_config_t defaults = SPS_CONFIG_INIT;
    sps_config_t c = cfg ? *cfg : defaults;
    c.file_path = g_follow_part;
    c.rank = g_follow_rank;
    c.size = g_follow_rank + 1;
    return f(&c);
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
