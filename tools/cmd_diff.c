/*
 * cmd_diff.c -- spanscope diff A B: what got slower or faster between two
 * recordings.  Argument parsing only; the comparison (statistics, the
 * median and Mann-Whitney's rank test, the table) is sps__diff_write
 * (src/api/diff.c).
 *
 * Differences are not errors: the exit status is 0 whatever the verdicts,
 * 1 for unreadable or invalid input, 2 for bad usage.
 */
#include "api/api.h"
#include "formats/timeline.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char diff_help[] =
    "usage: spanscope diff A B [--sort KEY] [--top N] [--threshold PCT]\n"
    "\n"
    "Compares two recordings region by region (matched by name): calls,\n"
    "total time and median time per call in A and in B, and a verdict per\n"
    "region.\n"
    "A and B may be in any format: .h5, .json, .json.gz, .pftrace.\n"
    "\n"
    "The verdict compares the median per-call times, tested with\n"
    "Mann-Whitney's rank test (a burst of outliers, such as preemption, does\n"
    "not sway it, where it moves a mean far beyond its standard error):\n"
    "  slower / faster  |z| > 3 and the median per-call time changed by at\n"
    "                   least PCT percent (B against A)\n"
    "  ~                no significant change: within run-to-run spread,\n"
    "                   below the threshold, or too few calls to tell\n"
    "  only in A / B    the region has calls in one file only\n"
    "\n"
    "options:\n"
    "  --sort KEY       total (default): largest change of total time first;\n"
    "                   per-call: largest change of the median per call first;\n"
    "                   name: by region name\n"
    "  --top N          show only the first N regions\n"
    "  --threshold PCT  smallest change of the median called slower/faster\n"
    "                   (default 10: the medians of two identical runs on\n"
    "                   one machine differ by up to ~6%, the whole run\n"
    "                   shifted, which no statistic within a run can see)\n"
    "  -h, --help       show this help and exit\n"
    "\n"
    "Exit status: 0 (differences are not errors), 1 bad input, 2 bad usage.\n";

/* The arguments of diff. */
typedef struct diff_args {
    const char *file[2];
    sps__diff_opts_t d;
} diff_args_t;

/* Parses one option at argv[*i] into o.  Returns 0, 1 for --help, or
 * EXIT_USAGE after printing the error. */
static int diff_opt(int argc, char **argv, int *i, diff_args_t *o) {
    const char *a = argv[*i], *v;
    char *end;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
    if (cli_is_opt(a, "--sort")) {
        if (!(v = cli_opt_value(argc, argv, i, "--sort")))
            return die(EXIT_USAGE, "diff: --sort needs a key ("
                       SPS__DIFF_SORT_KEYS ")");
        if (sps__diff_sort_parse(v, &o->d.sort) != 0)
            return die(EXIT_USAGE, "diff: unknown sort key '%s' ("
                       SPS__DIFF_SORT_KEYS ")", v);
        return 0;
    }
    if (cli_is_opt(a, "--top")) {
        if (!(v = cli_opt_value(argc, argv, i, "--top")))
            return die(EXIT_USAGE, "diff: --top needs a number");
        unsigned long long n;
        if (cli_parse_count(v, SIZE_MAX, &n) < 0)
            return die(EXIT_USAGE, "diff: --top needs a number, got '%s'", v);
        o->d.top = (size_t)n;
        return 0;
    }
    if (cli_is_opt(a, "--threshold")) {
        if (!(v = cli_opt_value(argc, argv, i, "--threshold")))
            return die(EXIT_USAGE, "diff: --threshold needs a percentage");
        errno = 0;
        double p = strtod(v, &end);
        if (!*v || *end || errno == ERANGE || !(p >= 0) || isinf(p))
            return die(EXIT_USAGE, "diff: --threshold needs a percentage >= 0, "
                       "got '%s'", v);
        o->d.threshold = p;
        return 0;
    }
    return die(EXIT_USAGE, "diff: unknown option '%s' (see spanscope diff "
               "--help)", a);
}

/* Parses diff's arguments into o.  Returns 0, 1 for --help, or EXIT_USAGE
 * after printing the error. */
static int diff_args(int argc, char **argv, diff_args_t *o) {
    int opts_done = 0, nfiles = 0, rc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!opts_done && !strcmp(a, "--")) { opts_done = 1; continue; }
        if (!opts_done && a[0] == '-' && a[1]) {
            if ((rc = diff_opt(argc, argv, &i, o))) return rc;
            continue;
        }
        if (nfiles == 2)
            return die(EXIT_USAGE, "diff: two files only (A B), got '%s' too", a);
        o->file[nfiles++] = a;
    }
    if (nfiles < 2)
        return die(EXIT_USAGE, "diff: needs two files A and B (see spanscope "
                   "diff --help)");
    return 0;
}

/* The read_done hook: a file's header is read, the rest is bounded work,
 * so the watchdog is lifted (the next file arms it again). */
static void read_done(void) { alarm(0); }

/* spanscope diff A B: per-region comparison of two recordings. */
int cmd_diff(int argc, char **argv) {
    diff_args_t o = {{NULL, NULL},
                     {SPS__DIFF_BY_TOTAL, 0, 10.0, input_watchdog, read_done, NULL}};
    int rc = diff_args(argc, argv, &o);
    if (rc == 1) {
        fputs(diff_help, stdout);
        return 0;
    }
    if (rc) return rc;
    for (int k = 0; k < 2; k++)
        if (sps__tl_format_of(o.file[k]) == SPS__TL_UNKNOWN)
            return die(EXIT_USAGE, "diff: %s: unknown format (.h5, .json, "
                       ".json.gz, .pftrace)", o.file[k]);
    if (sps__diff_write(stdout, o.file[0], o.file[1], &o.d))
        return die(EXIT_DATA, "diff: %s", sps__err_msg());
    return 0;
}
