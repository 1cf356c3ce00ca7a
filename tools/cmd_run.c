/*
 * cmd_run.c -- spanscope run: a program profiled.
 *
 *   spanscope run [OPTIONS] -- CMD [ARGS...]     any executable (here)
 *   spanscope run [OPTIONS] SCRIPT.py [ARGS...]  a Python script (Python's)
 *
 * With "--" before a command that is not a Python script (no .py/.pyw
 * suffix), the run is native (docs/native-run.md): the options become
 * SPANSCOPE_* variables, libspanscope_run (src/ext/autorun.c) goes first in
 * LD_PRELOAD -- with libspanscope_instrument (--functions) and
 * libspanscope_pmpi (--mpi) after it --, and this process execs CMD.  CMD
 * keeps this process's pid, stdin, stdout, stderr, signals and exit status;
 * the preloaded library sets the session up before CMD's main and writes
 * the profile at its exit.  With --follow the tool starts CMD as its child
 * instead and stays to merge the tree's parts (cmd_run_follow.c).
 * Everything else (a Python script, --help) goes
 * to the Python package's run as before (cli_python), which says what is
 * wrong when the package is not there.
 */
#include "cli.h"

#include <spanscope.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifndef SPS_BIN_TO_LIB
#define SPS_BIN_TO_LIB "../lib"
#endif

static const char usage[] =
    "usage: spanscope run [OPTIONS] -- CMD [ARGS...]\n"
    "Runs any program with a profiling session set up before its main and written at\n"
    "its exit (docs/native-run.md); its output, signals and exit status are its own.\n"
    "Regions come from the program's own sps_ calls, from --functions and from --mpi.\n"
    "  -o, --output FILE     the profile (default: $SPANSCOPE_OUTPUT, else\n"
    "                        profiling_data.h5); %p becomes the process id\n"
    "  --no-output           write no file\n"
    "  --label TEXT          the run's label in the profile\n"
    "  --memory-limit BYTES  event buffers kept in memory (K, M, G suffixes)\n"
    "  --sample-hz N         stack samples per second of CPU time (0-10000); a Python\n"
    "                        program's samples carry its Python frames too\n"
    "  --aggregate           statistics per region only, no per-call events\n"
    "  --config FILE         settings from a TOML file (SPANSCOPE_CONFIG)\n"
    "  --functions           every function of code built with -finstrument-functions\n"
    "  --mpi                 MPI calls as regions, one file for all ranks\n"
    "                        (mpirun -n 4 spanscope run --mpi -o out.h5 -- ./prog)\n"
    "  --follow              the whole process tree: every process the command starts\n"
    "                        (exec'd or forked) records its own part, merged into the\n"
    "                        output at the command's exit, one process each\n"
    "  -q, --quiet           no line on stderr when the profile is written\n"
    "spanscope run [OPTIONS] SCRIPT.py [ARGS...] runs a Python script (Python package):\n";

/* 1 when cmd names a Python script (its suffix): Python's run takes it. */
static int python_script(const char *cmd) {
    size_t n = strlen(cmd);
    return (n > 3 && !strcmp(cmd + n - 3, ".py")) || (n > 4 && !strcmp(cmd + n - 4, ".pyw"));
}

/* The options of either run that take a value as the next argument (so
 * that the scan for "--" skips it; the same list as _cli._native_run). */
static int takes_value(const char *a) {
    static const char *const opts[] = {
        "-o", "--output", "--outfile", "--label", "--memory-limit", "--sample-hz", "--config",
        "--include", "--exclude", "--entrypoint", "--buffer-limit", "--tag", "--enable-tag"};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        if (!strcmp(a, opts[i])) return 1;
    return 0;
}

/* The index of the "--" that starts a native command, or 0 when the run
 * is Python's (a positional argument first, no "--", or a .py after it). */
static int native_split(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) return i + 1 < argc && !python_script(argv[i + 1]) ? i : 0;
        if (a[0] != '-' || !a[1]) return 0; /* the script */
        if (takes_value(a)) i++;
    }
    return 0;
}

/* A byte count with an optional K, M or G suffix (binary) into *out. */
static int parse_bytes(const char *s, unsigned long long *out) {
    size_t n = strlen(s);
    unsigned long long mul = 1;
    char digits[32];
    if (n && strchr("kKmMgG", s[n - 1])) {
        char c = s[n - 1];
        mul = c == 'k' || c == 'K' ? 1ull << 10 : c == 'm' || c == 'M' ? 1ull << 20 : 1ull << 30;
        n--;
    }
    if (!n || n >= sizeof digits) return -1;
    memcpy(digits, s, n);
    digits[n] = 0;
    unsigned long long v;
    if (cli_parse_count(digits, ULLONG_MAX / mul, &v)) return -1;
    *out = v * mul;
    return 0;
}

/* out (cap bytes) = the output path with %p the pid and %% a %, made
 * absolute (the program may change its directory).  -1 when too long. */
static int output_path(const char *in, char *out, size_t cap) {
    char exp[PATH_MAX];
    size_t o = 0;
    for (const char *p = in; *p; p++) {
        char tmp[32];
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(tmp, sizeof tmp, "%ld", (long)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            strcpy(tmp, "%");
            p++;
        } else {
            tmp[0] = *p;
            tmp[1] = 0;
        }
        size_t l = strlen(tmp);
        if (o + l >= sizeof exp) return -1;
        memcpy(exp + o, tmp, l);
        o += l;
    }
    exp[o] = 0;
    if (exp[0] == '/') return snprintf(out, cap, "%s", exp) < (int)cap ? 0 : -1;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return -1;
    return snprintf(out, cap, "%s/%s", cwd, exp) < (int)cap ? 0 : -1;
}

/* The folder of this executable into dir. */
static int exe_dir(char *dir, size_t cap) {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return -1;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash) return -1;
    *slash = 0;
    return snprintf(dir, cap, "%s", self) < (int)cap ? 0 : -1;
}

/* The library stem ("libspanscope_run") beside this tool: in its folder
 * (the build tree), in the install's lib folder (bin/SPS_BIN_TO_LIB), or
 * in the folder above (the wheel: spanscope/bin/spanscope beside spanscope/lib*.so)
 * -- the soname first, then the plain name.  The absolute path into out,
 * or -1 when none is there.  $SPANSCOPE_RUN_LIBDIR, when set, is looked
 * in first. */
static int find_lib(const char *stem, char *out, size_t cap) {
    char dir[PATH_MAX];
    const char *env = getenv("SPANSCOPE_RUN_LIBDIR");
    int have_dir = exe_dir(dir, sizeof dir) == 0;
    const char *subs[] = {"", ("/" SPS_BIN_TO_LIB), "/.."};
    const char *suffixes[] = {".so.1", ".so"}; /* .1: SPS_SOVERSION (docs/abi.md) */
    for (int k = -1; k < 3; k++) {
        char base[PATH_MAX];
        if (k < 0) {
            if (!env || !*env) continue;
            if (snprintf(base, sizeof base, "%s", env) >= (int)sizeof base) continue;
        } else {
            if (!have_dir) continue;
            if (snprintf(base, sizeof base, "%s%s", dir, subs[k]) >= (int)sizeof base) continue;
        }
        for (int s = 0; s < 2; s++) {
            char path[PATH_MAX + 64];
            snprintf(path, sizeof path, "%s/%s%s", base, stem, suffixes[s]);
            char real[PATH_MAX];
            if (access(path, R_OK) == 0 && realpath(path, real) &&
                snprintf(out, cap, "%s", real) < (int)cap)
                return 0;
        }
    }
    return -1;
}

/* The file execvp would run for cmd (a name without a slash: the first
 * executable of that name on PATH) into out; -1 when there is none (execvp
 * then says why). */
static int resolve_cmd(const char *cmd, char *out, size_t cap) {
    if (strchr(cmd, '/')) return snprintf(out, cap, "%s", cmd) < (int)cap ? 0 : -1;
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;; p++) {
        const char *e = strchr(p, ':');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (snprintf(out, cap, "%.*s%s%s", (int)l, p, l ? "/" : "", cmd) < (int)cap &&
            access(out, X_OK) == 0)
            return 0;
        if (!e) return -1;
        p = e;
    }
}

/* 1 when path is an ELF executable with no program interpreter (statically
 * linked: the dynamic loader, and so LD_PRELOAD, never runs in it); 0 for
 * anything else (a dynamic one, a script, a file that cannot be read). */
static int static_elf(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char h[64];
    int st = 0;
    if (fread(h, 1, sizeof h, f) == sizeof h && !memcmp(h, "\177ELF", 4) && h[4] == 2 &&
        h[5] == 1) { /* ELF64, little-endian (the platforms the preload serves) */
        uint64_t phoff;
        uint16_t phentsize, phnum;
        memcpy(&phoff, h + 32, 8);
        memcpy(&phentsize, h + 54, 2);
        memcpy(&phnum, h + 56, 2);
        st = phnum > 0;
        for (uint16_t i = 0; i < phnum && st; i++) {
            uint32_t type;
            if (fseek(f, (long)(phoff + (uint64_t)i * phentsize), SEEK_SET) ||
                fread(&type, 4, 1, f) != 1) {
                st = 0;
                break;
            }
            if (type == 3) st = 0; /* PT_INTERP */
        }
    }
    fclose(f);
    return st;
}

/* Appends lib to the LD_PRELOAD being built (buf, cap). */
static int preload_add(char *buf, size_t cap, const char *lib) {
    if (strpbrk(lib, " :"))
        return cli_die(EXIT_USAGE, "run: %s: a preloaded library's path cannot hold a "
                                   "space or a colon", lib), -1;
    size_t n = strlen(buf);
    if (snprintf(buf + n, cap - n, "%s%s", n ? ":" : "", lib) >= (int)(cap - n))
        return cli_die(EXIT_USAGE, "run: LD_PRELOAD too long"), -1;
    return 0;
}

/* --follow: the parts directory beside the output (OUT.parts-XXXXXX, on
 * its file system) and the variables every process of the tree inherits:
 * SPANSCOPE_FOLLOW (the directory), SPANSCOPE_RUN_FOLLOW=1 (the preloaded
 * library joins every process, not only SPANSCOPE_RUN_PID's) and
 * SPANSCOPE_FOLLOW_SETTINGS (the parts' stem, as the Python runner's).
 * The output must be a format the merge writes.  0, or -1 (said). */
static int follow_start(void) {
    const char *out = getenv("SPANSCOPE_OUTPUT");
    static const char *const sfx[] = {".h5", ".json", ".json.gz", ".pftrace"};
    size_t n = out ? strlen(out) : 0, ok = 0;
    for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++)
        ok |= n > strlen(sfx[i]) && !strcmp(out + n - strlen(sfx[i]), sfx[i]);
    if (!ok)
        return cli_die(EXIT_USAGE, "run: --follow: %s: the merged profile is .h5, or a trace: "
                                   ".json, .json.gz (Chrome trace JSON), .pftrace (Perfetto)",
                       out ? out : "(no output)"), -1;
    char dir[PATH_MAX + 16];
    if (snprintf(dir, sizeof dir, "%s.parts-XXXXXX", out) >= (int)sizeof dir || !mkdtemp(dir))
        return cli_die(EXIT_USAGE, "run: --follow: cannot make the parts directory beside %s: "
                                   "%s", out, strerror(errno)), -1;
    setenv("SPANSCOPE_FOLLOW", dir, 1);
    setenv("SPANSCOPE_RUN_FOLLOW", "1", 1);
    setenv("SPANSCOPE_FOLLOW_SETTINGS", "{\"stem\": \"part\"}", 1);
    return 0;
}

/* A Python program under the run -- the command itself (a console script
 * such as pytest), or with --follow any process of the tree -- starts
 * after the preloaded library set its session up: Python takes the
 * library's signal handlers for foreign ones (signal.signal returns None
 * for them, SIGINT raises no KeyboardInterrupt), and a sampler started
 * before it sees no Python frames.  When the tool is the Python package's
 * (its _follow_boot beside runlib, the preloaded library), that folder goes
 * first on PYTHONPATH: its sitecustomize, in every process the library
 * profiles, hands the signals to Python and the library again, and joins
 * the Python frame walker to a running sampler (spanscope._run_attach).
 * Nothing without the package (a C-only install).  0, or -1 (said). */
static int python_boot(const char *runlib) {
    char boot[PATH_MAX + 64], site[PATH_MAX + 96];
    const char *slash = strrchr(runlib, '/');
    int n = slash ? (int)(slash - runlib) : 0;
    if (snprintf(boot, sizeof boot, "%.*s/_follow_boot", n, runlib) >= (int)sizeof boot ||
        snprintf(site, sizeof site, "%s/sitecustomize.py", boot) >= (int)sizeof site ||
        access(site, R_OK) != 0)
        return 0;
    const char *old = getenv("PYTHONPATH");
    char path[4 * PATH_MAX];
    if (snprintf(path, sizeof path, "%s%s%s", boot, old && *old ? ":" : "", old ? old : "") >=
        (int)sizeof path)
        return cli_die(EXIT_USAGE, "run: PYTHONPATH too long"), -1;
    setenv("PYTHONPATH", path, 1);
    return 0;
}

/* spanscope run ARGS... */
int cmd_run(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--usage-native")) {
        fputs(usage, stdout); /* the console script's run --help, before Python's */
        return 0;
    }
    int split = native_split(argc, argv);
    if (!split) {
        for (int i = 1; i < argc; i++) {
            if (!strcmp(argv[i], "--")) break;
            if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
                fputs(usage, stdout); /* then Python's run prints its own */
                fflush(stdout);
                break;
            }
        }
        setenv("SPANSCOPE_RUN_FORWARDED", "1", 1); /* Python's run: no native loop */
        return cli_python(argc, argv);
    }
    const char *output = NULL, *label = NULL, *config = NULL;
    const char *mem = NULL, *hz = NULL;
    int no_output = 0, aggregate = 0, functions = 0, mpi = 0, quiet = 0, follow = 0;
    for (int i = 1; i < split; i++) {
        const char *a = argv[i];
        int o = cli_output_opt(split, argv, &i, &output);
        if (o < 0) return cli_die(EXIT_USAGE, "run: %s needs a FILE", a);
        if (o > 0) continue;
        if (!strcmp(a, "--outfile") || !strncmp(a, "--outfile=", 10)) {
            if (!(output = cli_opt_value(split, argv, &i, "--outfile")))
                return cli_die(EXIT_USAGE, "run: --outfile needs a FILE");
        } else if (cli_is_opt(a, "--label")) {
            if (!(label = cli_opt_value(split, argv, &i, "--label")))
                return cli_die(EXIT_USAGE, "run: --label needs a value");
        } else if (cli_is_opt(a, "--config")) {
            if (!(config = cli_opt_value(split, argv, &i, "--config")))
                return cli_die(EXIT_USAGE, "run: --config needs a FILE");
        } else if (cli_is_opt(a, "--memory-limit")) {
            if (!(mem = cli_opt_value(split, argv, &i, "--memory-limit")))
                return cli_die(EXIT_USAGE, "run: --memory-limit needs BYTES");
        } else if (cli_is_opt(a, "--sample-hz")) {
            if (!(hz = cli_opt_value(split, argv, &i, "--sample-hz")))
                return cli_die(EXIT_USAGE, "run: --sample-hz needs a rate");
        } else if (!strcmp(a, "--no-output")) {
            no_output = 1;
        } else if (!strcmp(a, "--aggregate") || !strcmp(a, "--aggregation-mode")) {
            aggregate = 1;
        } else if (!strcmp(a, "--functions")) {
            functions = 1;
        } else if (!strcmp(a, "--mpi")) {
            mpi = 1;
        } else if (!strcmp(a, "--follow")) {
            follow = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            printf("  (see spanscope run --help without \"--\" for its options)\n");
            return 0;
        } else {
            return cli_die(EXIT_USAGE, "run: %s: not an option of `run -- CMD` (a program; "
                                       "spanscope run --help lists them)", a);
        }
    }
    if (no_output && output)
        return cli_die(EXIT_USAGE, "run: --no-output and --output exclude each other");
    if (follow && (no_output || aggregate || mpi))
        return cli_die(EXIT_USAGE, "run: --follow merges every process's calls into one file: "
                                   "not with %s", no_output ? "--no-output" : aggregate
                                   ? "--aggregate (statistics only: nothing to merge)"
                                   : "--mpi (mpirun's ranks are one file already)");
    char **cmd = argv + split + 1; /* native_split: at least one */
    char exe[PATH_MAX];
    if (resolve_cmd(cmd[0], exe, sizeof exe) == 0 && static_elf(exe))
        return cli_die(EXIT_USAGE, "run: %s is statically linked: the preloaded library "
                                   "cannot reach it, so it cannot be profiled this way "
                                   "(docs/native-run.md)", cmd[0]);

    /* the settings */
    char buf[PATH_MAX + 64];
    if (config) setenv("SPANSCOPE_CONFIG", config, 1);
    const char *file_output = NULL;
    if (config || getenv("SPANSCOPE_CONFIG") || getenv("SCOPE_PROFILER_CONFIG")) {
        /* the file is read here first: a bad one stops the run before it
         * starts, and its file_path is the output unless -o or
         * SPANSCOPE_OUTPUT says otherwise (the variables win) */
        sps_env_t e;
        char err[512] = "";
        if (sps_env_resolve(&e, err, sizeof err))
            return cli_die(EXIT_USAGE, "run: %s", err[0] ? err : "the configuration file");
        file_output = e.cfg.file_path;
    }
    if (no_output) {
        setenv("SPANSCOPE_OUTPUT", "none", 1);
    } else {
        const char *o = output ? output : getenv("SPANSCOPE_OUTPUT");
        if (!o) o = getenv("SCOPE_PROFILER_OUTPUT");
        if (!o) o = file_output;
        if (!o) o = "profiling_data.h5";
        if (*o && strcasecmp(o, "none") != 0) {
            if (output_path(o, buf, sizeof buf))
                return cli_die(EXIT_USAGE, "run: the output path is too long: %s", o);
            o = buf;
        }
        setenv("SPANSCOPE_OUTPUT", o, 1);
    }
    if (follow && follow_start()) return EXIT_USAGE;
    else if (!follow) unsetenv("SPANSCOPE_RUN_FOLLOW");
    if (label) setenv("SPANSCOPE_LABEL", label, 1);
    if (mem) {
        unsigned long long b;
        if (parse_bytes(mem, &b))
            return cli_die(EXIT_USAGE, "run: --memory-limit %s: expected a number of bytes "
                                       "(K, M or G suffix)", mem);
        char t[32];
        snprintf(t, sizeof t, "%llu", b);
        setenv("SPANSCOPE_MEMORY_LIMIT", t, 1);
    }
    if (hz) {
        unsigned long long r;
        if (cli_parse_count(hz, 10000, &r))
            return cli_die(EXIT_USAGE, "run: --sample-hz %s: expected samples per second, "
                                       "0 to 10000", hz);
        setenv("SPANSCOPE_SAMPLE_HZ", hz, 1);
    }
    if (aggregate) setenv("SPANSCOPE_AGGREGATION_MODE", "1", 1);
    setenv("SPANSCOPE_RUN", "1", 1);
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid()); /* exec keeps it */
    setenv("SPANSCOPE_RUN_PID", pid, 1);
    if (quiet) setenv("SPANSCOPE_RUN_QUIET", "1", 1);
    else unsetenv("SPANSCOPE_RUN_QUIET");
    if (mpi) setenv("SPANSCOPE_RUN_MPI", "1", 1);
    else unsetenv("SPANSCOPE_RUN_MPI");
    /* the run's library sets the session up, not libspanscope_instrument's
     * constructor (linked or preloaded): its hooks record into it */
    setenv("SPANSCOPE_INSTRUMENT_SETUP", "0", 1);
    unsetenv("SPANSCOPE_RUN_FORWARDED");

    /* the libraries */
    char pre[4 * PATH_MAX + 4096] = "", lib[PATH_MAX];
    if (find_lib("libspanscope_run", lib, sizeof lib))
        return cli_die(EXIT_USAGE, "run: libspanscope_run is not beside this spanscope "
                                   "(its folder, its lib folder or the folder above; "
                                   "or set SPANSCOPE_RUN_LIBDIR)");
    if (preload_add(pre, sizeof pre, lib) || python_boot(lib)) return EXIT_USAGE;
    if (functions) {
        if (find_lib("libspanscope_instrument", lib, sizeof lib))
            return cli_die(EXIT_USAGE, "run: --functions: libspanscope_instrument is not "
                                       "beside this spanscope (built with SPS_INSTRUMENT=OFF?)");
        if (preload_add(pre, sizeof pre, lib)) return EXIT_USAGE;
    }
    if (mpi) {
        if (find_lib("libspanscope_pmpi", lib, sizeof lib))
            return cli_die(EXIT_USAGE, "run: --mpi: libspanscope_pmpi is not beside this "
                                       "spanscope (built without MPI?)");
        if (preload_add(pre, sizeof pre, lib)) return EXIT_USAGE;
    }
    const char *old = getenv("LD_PRELOAD");
    if (old && *old) {
        size_t n = strlen(pre);
        if (snprintf(pre + n, sizeof pre - n, ":%s", old) >= (int)(sizeof pre - n))
            return cli_die(EXIT_USAGE, "run: LD_PRELOAD too long");
    }
    setenv("LD_PRELOAD", pre, 1);

    if (follow) return cmd_run_follow(cmd, quiet); /* the tool stays: cmd_run_follow.c */
    fflush(stdout);
    fflush(stderr);
    execvp(cmd[0], cmd);
    int e = errno;
    return cli_die(e == ENOENT ? 127 : 126, "run: cannot run %s: %s", cmd[0], strerror(e));
}
