/*
 * spanscope.c -- the command-line tool.
 *
 *     spanscope report FILE [--sort KEY] [--top N] [--tree|--flat]
 *                      [--ranks|--no-ranks]
 *     spanscope convert IN OUT
 *
 * A small dispatcher: each subcommand is one function taking its own
 * argv (argv[0] is the subcommand's name) and returning the exit status.
 * Add a subcommand by writing cmd_<name> and a line in `commands`.
 *
 * Exit status: 0 success, 1 bad input data (missing, unreadable or invalid
 * file), 2 bad usage.  Every error is one line on stderr, "spanscope:
 * <message>"; nothing else goes to stderr.
 *
 * Subcommands that read files run in a child process: the reader checks
 * everything it can, but HDF5 itself (1.10) still crashes on some corrupt
 * files (its global heap reader trusts the file), and a crash there must
 * come out as an error line, not a core dump.  Some corrupt files make it
 * loop forever instead, so the child also runs under a time limit that
 * grows with the input's size (input_watchdog).
 */
#include "sps_int.h"
#include "formats/h5_read.h"
#include "formats/timeline.h"

#include <hdf5.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "cli.h"

/* ------------------------------------------------------------------------ */
/* report                                                                    */
/* ------------------------------------------------------------------------ */

static const char report_help[] =
    "usage: spanscope report FILE [--sort KEY] [--top N] [--tree | --flat]\n"
    "                        [--ranks | --no-ranks]\n"
    "\n"
    "Prints the summary table of an HDF5 profile written by spanscope or by\n"
    "scope-profiler (schema 2 or 3): a call tree (children by total time)\n"
    "and a flat per-region view.  A file of several ranks (e.g. from\n"
    "spanscope merge) also gets a per-rank view: for each region the min,\n"
    "mean and max over the ranks of its total time (a rank with no calls of\n"
    "the region counts as 0), the slowest rank, and the imbalance\n"
    "(max - mean) / max, sorted by imbalance.\n"
    "\n"
    "options:\n"
    "  --sort KEY   order of the flat view: self (default), total, calls,\n"
    "               mean, max, name\n"
    "               (--sort total also orders the per-rank view by total)\n"
    "  --top N      show only the first N regions of the flat and per-rank\n"
    "               views\n"
    "  --tree       print only the call tree\n"
    "  --flat       print only the flat view (and the per-rank view)\n"
    "  --ranks      print the per-rank view, even for one rank or with --tree\n"
    "  --no-ranks   do not print the per-rank view (default: printed when the\n"
    "               file holds 2 or more ranks and the flat view is shown)\n"
    "  -h, --help   show this help and exit\n"
    "\n"
    "Reading gives up after 20 s plus 1 s per 4 MiB of input (a corrupt file\n"
    "can make the HDF5 library loop); SPANSCOPE_READ_TIMEOUT=SECONDS sets\n"
    "another limit, 0 none.\n";

/* Options of report. */
typedef struct report_opts {
    const char *file;
    sps__table_opts_t t;
    int ranks; /* per-rank view: -1 auto (2+ ranks, flat view), 0 no, 1 yes */
} report_opts_t;

/* Parses a sort key into *out.  Returns 0 or -1. */
static int parse_sort(const char *s, sps__sort_t *out) {
    static const char *const keys[] = {"self", "total", "calls", "mean",
                                       "max", "name"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(s, keys[i]) == 0) {
            *out = (sps__sort_t)i;
            return 0;
        }
    return -1;
}

/* Parses a count (decimal, >= 0) into *out.  Returns 0 or -1. */
static int parse_count(const char *s, size_t *out) {
    char *end;
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE || v > SIZE_MAX) return -1;
    *out = (size_t)v;
    return 0;
}



/* Parses one option of report at argv[*i] into o.  Returns 0, 1 for
 * --help, or EXIT_USAGE after printing the error. */
static int report_opt(int argc, char **argv, int *i, report_opts_t *o) {
    const char *a = argv[*i], *v;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
    if (!strcmp(a, "--tree")) { o->t.tree = 1; o->t.flat = 0; return 0; }
    if (!strcmp(a, "--flat")) { o->t.flat = 1; o->t.tree = 0; return 0; }
    if (!strcmp(a, "--ranks")) { o->ranks = 1; return 0; }
    if (!strcmp(a, "--no-ranks")) { o->ranks = 0; return 0; }
    if (cli_is_opt(a, "--sort")) {
        if (!(v = cli_opt_value(argc, argv, i, "--sort")))
            return die(EXIT_USAGE, "report: --sort needs a key");
        if (parse_sort(v, &o->t.sort) < 0)
            return die(EXIT_USAGE, "report: unknown sort key '%s' (self, "
                       "total, calls, mean, max, name)", v);
        return 0;
    }
    if (cli_is_opt(a, "--top")) {
        if (!(v = cli_opt_value(argc, argv, i, "--top")))
            return die(EXIT_USAGE, "report: --top needs a number");
        if (parse_count(v, &o->t.top) < 0)
            return die(EXIT_USAGE, "report: --top needs a number, got '%s'",
                       v);
        return 0;
    }
    return die(EXIT_USAGE, "report: unknown option '%s' (see spanscope "
               "report --help)", a);
}

/* Parses report's arguments into o.  Returns 0, 1 for --help, or
 * EXIT_USAGE after printing the error. */
static int report_args(int argc, char **argv, report_opts_t *o) {
    int opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc;
        if (!opts_done && !strcmp(a, "--")) { opts_done = 1; continue; }
        if (!opts_done && a[0] == '-' && a[1]) {
            if ((rc = report_opt(argc, argv, &i, o))) return rc;
            continue;
        }
        if (o->file)
            return die(EXIT_USAGE, "report: one FILE only (got '%s' and "
                       "'%s')", o->file, a);
        o->file = a;
    }
    if (!o->file) return die(EXIT_USAGE, "report: missing FILE (see "
                             "spanscope report --help)");
    return 0;
}

/* qsort order of rank numbers. */
static int u32_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* /metadata mpi_size of the file at path, or 0 when absent or odd. */
static int64_t meta_mpi_size(const char *path) {
    H5E_auto2_t func;
    void *data;
    int saved = H5Eget_auto2(H5E_DEFAULT, &func, &data) >= 0;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int64_t v = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t a = f >= 0 ? H5Aopen_by_name(f, "metadata", "mpi_size", H5P_DEFAULT, H5P_DEFAULT)
                     : H5I_INVALID_HID;
    hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    if (sp < 0 || H5Sget_simple_extent_npoints(sp) != 1 ||
        H5Aread(a, H5T_NATIVE_INT64, &v) < 0 || v < 0 || v > (1 << 24))
        v = 0;
    if (sp >= 0) H5Sclose(sp);
    if (a >= 0) H5Aclose(a);
    if (f >= 0) H5Fclose(f);
    if (saved) H5Eset_auto2(H5E_DEFAULT, func, data);
    return v;
}

/* The distinct ranks of r's index, sorted, into *ranks (malloc'd) and
 * *nranks.  When /metadata mpi_size is larger than every rank of the index
 * (an MPI file where some ranks recorded nothing), the ranks are 0 ..
 * mpi_size - 1: a rank without calls counts as 0 in the per-rank view.
 * Returns 0 or SPS_ENOMEM. */
static int index_ranks(const sps__h5r_t *r, const char *path, uint32_t **ranks,
                       size_t *nranks) {
    int64_t world = meta_mpi_size(path);
    size_t cap = r->nrows > (size_t)world ? r->nrows : (size_t)world;
    uint32_t *v = malloc((cap ? cap : 1) * sizeof *v);
    size_t n = 0;
    *ranks = v;
    *nranks = 0;
    if (!v) return SPS_ENOMEM;
    for (size_t i = 0; i < r->nrows; i++) v[i] = r->rows[i].rank;
    qsort(v, r->nrows, sizeof *v, u32_cmp);
    for (size_t i = 0; i < r->nrows; i++)
        if (n == 0 || v[n - 1] != v[i]) v[n++] = v[i];
    if (n && world > 1 && (int64_t)v[n - 1] < world && (size_t)world > n) {
        for (uint32_t k = 0; k < (uint32_t)world; k++) v[k] = k;
        n = (size_t)world;
    }
    *nranks = n;
    return 0;
}

/* Prints the per-rank view of r: the total time of every region with a
 * row in the index (region id order, as in the flat view) on every rank
 * of the index, 0 where a rank has no row for it.  Returns 0 or an
 * SPS_E* code. */
static int report_ranks(const sps__h5r_t *r, const uint32_t *ranks,
                        size_t nranks, const report_opts_t *o) {
    size_t *slot = malloc((r->nnames ? r->nnames : 1) * sizeof *slot);
    const char **names = malloc((r->nnames ? r->nnames : 1) * sizeof *names);
    int64_t *tot = NULL;
    size_t ng = 0;
    int rc = SPS_ENOMEM;
    if (!slot || !names) goto out;
    for (size_t g = 0; g < r->nnames; g++) slot[g] = SIZE_MAX;
    for (size_t i = 0; i < r->nrows; i++) slot[r->rows[i].file_region] = 0;
    for (size_t g = 0; g < r->nnames; g++)
        if (slot[g] == 0) {
            names[ng] = r->names[g];
            slot[g] = ng++;
        }
    if (nranks && ng > SIZE_MAX / sizeof *tot / nranks) goto out;
    tot = calloc(ng && nranks ? ng * nranks : 1, sizeof *tot);
    if (!tot) goto out;
    for (size_t i = 0; i < r->nrows; i++) {
        const sps__row_t *row = &r->rows[i];
        const uint32_t *k = bsearch(&row->rank, ranks, nranks, sizeof *ranks,
                                    u32_cmp);
        uint64_t sum = 0;
        if (!k || row->count == 0) continue;
        if (r->aggregate) sum = (uint64_t)row->s.total;
        else
            for (uint64_t e = row->offset; e < row->offset + row->count; e++)
                sum += (uint64_t)r->dur[e];
        int64_t *cell = &tot[slot[row->file_region] * nranks +
                             (size_t)(k - ranks)];
        *cell = (int64_t)((uint64_t)*cell + sum);
    }
    rc = sps__rank_table_print(stdout, names, ng, ranks, nranks, tot,
                               o->t.sort, o->t.top);
out:
    free(slot);
    free(names);
    free(tot);
    return rc;
}

/* Prints the table of r with the options o.  Returns the exit status. */
static int report_print(const sps__h5r_t *r, report_opts_t *o) {
    sps__tnode_t *nodes = NULL;
    sps__tflat_t *flat = NULL;
    size_t nn = 0, nf = 0;
    int rc = sps__h5r_tree(r, &nodes, &nn);
    if (rc == 0) rc = sps__h5r_flat(r, &flat, &nf);
    if (rc == 0) {
        unsigned long long calls = 0;
        for (size_t i = 0; i < nf; i++) calls += flat[i].calls;
        o->t.session_ns = sps__h5r_session_ns(r);
        printf("%s: schema %d, %s, %zu region%s, %llu call%s\n\n", o->file,
               r->schema, r->aggregate ? "aggregate" : "columnar", nf,
               nf == 1 ? "" : "s", calls, calls == 1 ? "" : "s");
        if (r->aggregate && o->t.tree) {
            printf("(aggregate file: no per-call data, so no call tree)\n");
            if (o->t.flat) printf("\n");
            o->t.tree = 0;
        }
        rc = sps__table_print(stdout, nodes, nn, flat, nf, &o->t);
    }
    uint32_t *ranks = NULL;
    size_t nranks = 0;
    if (rc == 0 && o->ranks != 0) rc = index_ranks(r, o->file, &ranks, &nranks);
    if (rc == 0 && nranks > 0 &&
        (o->ranks == 1 || (nranks >= 2 && o->t.flat))) {
        if (o->t.tree || o->t.flat) printf("\n");
        rc = report_ranks(r, ranks, nranks, o);
    }
    int crc = rc == 0 ? sps__counters_print(stdout, o->file) : 0;
    free(ranks);
    free(nodes);
    free(flat);
    if (rc) return die(EXIT_DATA, "report: %s", sps_strerror(rc));
    if (crc) return die(EXIT_DATA, "report: %s", sps__h5r_error());
    return 0;
}

/* spanscope report: the summary table of a file. */
static int cmd_report(int argc, char **argv) {
    report_opts_t o = {NULL, {1, 1, SPS__SORT_SELF, 0, 0}, -1};
    int rc = report_args(argc, argv, &o);
    if (rc == 1) {
        fputs(report_help, stdout);
        return 0;
    }
    if (rc) return rc;
    sps__h5r_t *r;
    input_watchdog(o.file);
    if (sps__h5r_open(&r, o.file) < 0)
        return die(EXIT_DATA, "%s", sps__h5r_error());
    rc = report_print(r, &o);
    sps__h5r_free(r);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* convert                                                                   */
/* ------------------------------------------------------------------------ */

static const char convert_help[] =
    "usage: spanscope convert IN OUT\n"
    "\n"
    "Converts a recording between formats, chosen by the file extensions:\n"
    "  .h5        spanscope / scope-profiler HDF5 (input only, for now)\n"
    "  .json      Chrome trace event JSON (Perfetto, chrome://tracing, TensorBoard)\n"
    "  .json.gz   the same, gzip-compressed\n"
    "  .pftrace   Perfetto protobuf trace (compact; ui.perfetto.dev)\n"
    "\n"
    "OUT is written to a temporary name and renamed into place.  On a\n"
    "terminal, progress is shown on stderr for large inputs.\n";

/* Shows "convert: N% (k of n spans)" on a terminal, at most twice a second. */
static void progress(uint64_t done, uint64_t total, int final) {
    static int64_t last;
    if (!total || !isatty(2)) return;
    int64_t now = sps_now_ns();
    if (!final && now - last < 500000000) return;
    last = now;
    fprintf(stderr, "\rconvert: %3d%% (%llu of %llu spans)%s",
            (int)(100.0 * (double)done / (double)total), (unsigned long long)done,
            (unsigned long long)total, final ? "\n" : "");
}

/* Copies every span of r to w. */
static int convert_spans(sps__tlr_t *r, sps__tlw_t *w, uint64_t total) {
    sps__tl_span_t s;
    uint64_t n = 0;
    int rc;
    while ((rc = sps__tlr_next(r, &s)) > 0) {
        if ((rc = sps__tlw_span(w, &s)) != 0) return rc;
        if ((++n & 0xFFFF) == 0) progress(n, total, 0);
    }
    if (total >= 0x10000) progress(n, total, 1);
    return rc;
}

/* spanscope convert IN OUT */
static int cmd_convert(int argc, char **argv) {
    const char *in = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(convert_help, stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return die(EXIT_USAGE, "convert: unknown option '%s' (see spanscope convert --help)", argv[i]);
        if (!in) in = argv[i];
        else if (!out) out = argv[i];
        else return die(EXIT_USAGE, "convert: too many arguments (IN OUT)");
    }
    if (!in || !out) return die(EXIT_USAGE, "convert: needs IN and OUT (see spanscope convert --help)");
    sps__tl_format_t fi = sps__tl_format_of(in), fo = sps__tl_format_of(out);
    if (fi == SPS__TL_UNKNOWN)
        return die(EXIT_USAGE, "convert: %s: unknown input format (.h5, .json, .json.gz, .pftrace)", in);
    if (fo == SPS__TL_UNKNOWN)
        return die(EXIT_USAGE, "convert: %s: unknown output format (.json, .json.gz, .pftrace)", out);
    if (fo == SPS__TL_H5)
        return die(EXIT_USAGE, "convert: writing .h5 from a trace is not implemented yet");
    input_watchdog(in);
    sps__tlr_t *r;
    int rc = sps__tlr_open(&r, in, fi);
    if (rc) return die(EXIT_DATA, "convert: %s", sps__tlr_error());
    alarm(0); /* the header is read: the rest is bounded work */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%d", out, (int)getpid());
    const sps__tl_header_t *h = sps__tlr_header(r);
    sps__tlw_t *w;
    rc = sps__tlw_open(&w, tmp, fo, h);
    if (rc) {
        sps__tlr_free(r);
        unlink(tmp);
        return die(EXIT_DATA, "convert: %s: %s", out, sps_strerror(rc));
    }
    rc = convert_spans(r, w, h->nspans);
    const char *why = rc ? (rc == SPS_EFORMAT ? sps__tlr_error() : sps_strerror(rc)) : NULL;
    if (rc) sps__tlw_abort(w);
    else rc = sps__tlw_close(w);
    sps__tlr_free(r);
    if (!rc && rename(tmp, out) != 0) rc = SPS_EIO;
    if (rc) {
        unlink(tmp);
        return die(EXIT_DATA, "convert: %s", why ? why : sps_strerror(rc));
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                  */
/* ------------------------------------------------------------------------ */

/* A subcommand: its name, its entry point (argv[0] is the name), whether
 * it reads untrusted files, and its line in the help. */
typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    int isolate; /* reads untrusted files: run it in a child process */
    const char *summary;
} command_t;

/* Subcommands in their own files (tools/cmd_NAME.c).  Weak, so that the
 * tool builds while one is being written; a missing one is not listed. */
int cmd_merge(int argc, char **argv) __attribute__((weak));
int cmd_diff(int argc, char **argv) __attribute__((weak));
int cmd_html(int argc, char **argv) __attribute__((weak));

static const command_t commands[] = {
    {"report", cmd_report, 1, "print the summary table of a profile (.h5)"},
    {"convert", cmd_convert, 1, "convert between .h5, .json, .json.gz and .pftrace"},
    {"merge", cmd_merge, 1, "merge per-rank recordings into one, clocks aligned"},
    {"diff", cmd_diff, 1, "compare two recordings: what got slower or faster"},
    {"html", cmd_html, 1, "write a self-contained HTML report (timeline, bars, table)"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* Prints the tool's help to fp. */
static void main_help(FILE *fp) {
    fprintf(fp, "usage: spanscope COMMAND [ARGS...]\n"
                "       spanscope --help | --version\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (commands[i].run)
            fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(fp, "\nRun 'spanscope COMMAND --help' for a command's options.\n");
}

/* Runs c in a child process and returns its exit status.  A child killed
 * by a crash signal gives one error line and EXIT_DATA; one killed by
 * another signal (SIGPIPE under `| head`, SIGINT) makes this process die
 * the same way.  The child dies with this process (killed by a timeout, for
 * example) where the system allows.  Without fork, c runs here. */
static int run_isolated(const command_t *c, int argc, char **argv) {
    int st;
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid(), pid = fork();
    (void)parent;
    if (pid < 0) return c->run(argc, argv);
    if (pid == 0) {
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(EXIT_DATA);
#endif
        int rc = c->run(argc, argv);
        fflush(stdout);
        _exit(rc);
    }
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return die(EXIT_DATA, "%s: waitpid: %s", c->name,
                                       strerror(errno));
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    int sig = WTERMSIG(st);
    if (sig == SIGALRM)
        return die(EXIT_DATA, "%s: reading the input took too long (see "
                   "SPANSCOPE_READ_TIMEOUT): the file is corrupt", c->name);
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
        sig == SIGABRT || sig == SIGSYS)
        return die(EXIT_DATA, "%s: reading the input crashed the HDF5 library "
                   "(%s): the file is corrupt", c->name, strsignal(sig));
    signal(sig, SIG_DFL);
    raise(sig);
    return 128 + sig;
}

/* Dispatches to the subcommand named by argv[1]; handles the tool's own
 * --help and --version. */
int main(int argc, char **argv) {
    if (argc < 2)
        return die(EXIT_USAGE, "missing command (see spanscope --help)");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        main_help(stdout);
        return 0;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("spanscope %s\n", SPS_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (commands[i].run && !strcmp(cmd, commands[i].name))
            return commands[i].isolate
                       ? run_isolated(&commands[i], argc - 1, argv + 1)
                       : commands[i].run(argc - 1, argv + 1);
    if (cmd[0] == '-')
        return die(EXIT_USAGE, "unknown option '%s' (see spanscope --help)",
                   cmd);
    return die(EXIT_USAGE, "unknown command '%s' (see spanscope --help)", cmd);
}
