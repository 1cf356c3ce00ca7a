/*
 * cmd_check.c -- spanscope check BASELINE CURRENT: a CI gate.  The
 * comparison of `spanscope diff` (sps__diff_write, src/api/diff.c: the
 * median per-call time of each region, tested with Mann-Whitney's rank
 * test against the run-to-run spread), then a verdict line; the exit
 * status fails the job when a region got slower beyond the threshold AND
 * beyond the noise.
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

/* A region got slower than the baseline: the gate fails. */
#define EXIT_SLOWER 3

static const char check_help[] =
    "usage: spanscope check BASELINE CURRENT [--threshold PCT] [--top N]\n"
    "\n"
    "A CI gate: compares CURRENT against BASELINE region by region (as\n"
    "spanscope diff does: the median time per call, tested with\n"
    "Mann-Whitney's rank test against the run-to-run spread), prints the\n"
    "table and a verdict, and fails when a region got slower by at least\n"
    "PCT percent AND beyond the noise (|z| > 3).  Regions that got faster,\n"
    "or exist in one file only, do not fail it.  Files: .h5, .json,\n"
    ".json.gz, .pftrace.\n"
    "\n"
    "options:\n"
    "  --threshold PCT  smallest slowdown of the median that fails (default 10)\n"
    "  --top N          show only the first N regions of the table\n"
    "  -h, --help       show this help and exit\n"
    "\n"
    "Exit status: 0 passed, 3 a region got slower, 1 bad input, 2 bad usage.\n";

/* Parses check's arguments into files and o.  0, 1 for --help, or
 * EXIT_USAGE after the error. */
static int check_args(int argc, char **argv, const char *file[2], sps__diff_opts_t *o) {
    int n = 0, opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!opts_done && !strcmp(a, "--")) { opts_done = 1; continue; }
        if (opts_done || a[0] != '-' || !a[1]) {
            if (n == 2) return die(EXIT_USAGE, "check: two files only (BASELINE CURRENT), got '%s' too", a);
            file[n++] = a;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            return 1;
        } else if (cli_is_opt(a, "--threshold")) {
            char *end;
            errno = 0;
            double p = (v = cli_opt_value(argc, argv, &i, "--threshold")) ? strtod(v, &end) : -1;
            if (!v || !*v || *end || errno == ERANGE || !(p >= 0) || isinf(p))
                return die(EXIT_USAGE, "check: --threshold needs a percentage >= 0");
            o->threshold = p;
        } else if (cli_is_opt(a, "--top")) {
            unsigned long long k;
            if (!(v = cli_opt_value(argc, argv, &i, "--top")) || cli_parse_count(v, SIZE_MAX, &k) < 0)
                return die(EXIT_USAGE, "check: --top needs a number");
            o->top = (size_t)k;
        } else {
            return die(EXIT_USAGE, "check: unknown option '%s' (see spanscope check --help)", a);
        }
    }
    if (n < 2) return die(EXIT_USAGE, "check: needs BASELINE and CURRENT (see spanscope check --help)");
    for (int k = 0; k < 2; k++)
        if (sps__tl_format_of(file[k]) == SPS__TL_UNKNOWN)
            return die(EXIT_USAGE, "check: %s: unknown format (.h5, .json, .json.gz, .pftrace)", file[k]);
    return 0;
}

/* The read_done hook: the header is read; lift the watchdog. */
static void read_done(void) { alarm(0); }

/* spanscope check BASELINE CURRENT */
int cmd_check(int argc, char **argv) {
    const char *file[2] = {NULL, NULL};
    size_t nslower = 0;
    sps__diff_opts_t o = {SPS__DIFF_BY_TOTAL, 0, 10.0, input_watchdog, read_done, &nslower};
    int rc = check_args(argc, argv, file, &o);
    if (rc == 1) {
        fputs(check_help, stdout);
        return 0;
    }
    if (rc) return rc;
    if (sps__diff_write(stdout, file[0], file[1], &o))
        return die(EXIT_DATA, "check: %s", sps__err_msg());
    if (nslower) {
        printf("\ncheck: FAILED: %zu region%s slower than the baseline by >= %g%% "
               "beyond the noise\n", nslower, nslower == 1 ? "" : "s", o.threshold);
        fflush(stdout);
        return EXIT_SLOWER;
    }
    printf("\ncheck: passed: no region slower than the baseline by >= %g%% beyond "
           "the noise\n", o.threshold);
    return 0;
}
