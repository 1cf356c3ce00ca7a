/*
 * cmd_report.c -- spanscope report FILE: the summary table of a recording
 * (an HDF5 profile or a trace).  Argument parsing only; the report itself is sps__report_write
 * (src/api/report.c), the same function behind sps_report and Python's
 * Results.summary(), so the three print the same text.
 */
#include "api/api.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char report_help[] =
    "usage: spanscope report FILE [--sort KEY] [--top N] [--tree | --flat]\n"
    "                        [--ranks | --no-ranks] [--no-counters]\n"
    "                        [--format text|csv]\n"
    "\n"
    "Prints the summary table of an HDF5 profile written by spanscope or by\n"
    "scope-profiler (schema 2 or 3), or of a trace (.json, .json.gz,\n"
    ".pftrace; one rank per process): a call tree (children by total time)\n"
    "and a flat per-region view.  A file of several ranks (e.g. from\n"
    "spanscope merge) also gets a per-rank view: for each region the min,\n"
    "mean and max over the ranks of its total time (a rank with no calls of\n"
    "the region counts as 0), the slowest rank, the imbalance\n"
    "(max - mean) / max and the time it costs (\"lost\": max - mean), sorted\n"
    "by the time lost.  A file with counter samples\n"
    "ends with a counters section (samples, min, mean, max, last).\n"
    "\n"
    "options:\n"
    "  --sort KEY     order of the flat view: self (default), total, calls,\n"
    "                 mean, max, name\n"
    "                 (--sort total also orders the per-rank view by total)\n"
    "  --top N        show only the first N regions of the flat and per-rank\n"
    "                 views\n"
    "  --tree         print only the call tree\n"
    "  --flat         print only the flat view (and the per-rank view)\n"
    "  --ranks        print the per-rank view, even for one rank or with\n"
    "                 --tree\n"
    "  --no-ranks     do not print the per-rank view (default: printed when\n"
    "                 the file holds 2 or more ranks and the flat view is\n"
    "                 shown)\n"
    "  --no-counters  do not print the counters section\n"
    "  --format F     text (default), or csv: the flat view (or with --tree\n"
    "                 the call tree, one row per path) as CSV, times in ns\n"
    "  -h, --help     show this help and exit\n"

    "\n"
    "Reading gives up after 20 s plus 1 s per 4 MiB of input (a corrupt file\n"
    "can make the HDF5 library loop); SPANSCOPE_READ_TIMEOUT=SECONDS sets\n"
    "another limit, 0 none.\n";

/* Parses one option of report at argv[*i] into o.  Returns 0, 1 for
 * --help, or EXIT_USAGE after printing the error. */
static int report_opt(int argc, char **argv, int *i, sps__report_opts_t *o) {
    const char *a = argv[*i], *v;
    unsigned long long n;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
    if (!strcmp(a, "--tree")) { o->tree = 1; o->flat = 0; return 0; }
    if (!strcmp(a, "--flat")) { o->flat = 1; o->tree = 0; return 0; }
    if (!strcmp(a, "--ranks")) { o->ranks = 1; return 0; }
    if (!strcmp(a, "--no-ranks")) { o->ranks = 0; return 0; }
    if (!strcmp(a, "--no-counters")) { o->counters = 0; return 0; }
    if (cli_is_opt(a, "--format")) {
        if (!(v = cli_opt_value(argc, argv, i, "--format")))
            return die(EXIT_USAGE, "report: --format needs text or csv");
        if (!strcmp(v, "csv")) o->csv = 1;
        else if (!strcmp(v, "text")) o->csv = 0;
        else return die(EXIT_USAGE, "report: unknown format '%s' (text, csv)", v);
        return 0;
    }
    if (cli_is_opt(a, "--sort")) {
        if (!(v = cli_opt_value(argc, argv, i, "--sort")))
            return die(EXIT_USAGE, "report: --sort needs a key");
        if (sps__sort_parse(v, &o->sort) != 0)
            return die(EXIT_USAGE, "report: unknown sort key '%s' ("
                       SPS__SORT_KEYS ")", v);
        return 0;
    }
    if (cli_is_opt(a, "--top")) {
        if (!(v = cli_opt_value(argc, argv, i, "--top")))
            return die(EXIT_USAGE, "report: --top needs a number");
        if (cli_parse_count(v, SIZE_MAX, &n) < 0)
            return die(EXIT_USAGE, "report: --top needs a number, got '%s'",
                       v);
        o->top = (size_t)n;
        return 0;
    }
    return die(EXIT_USAGE, "report: unknown option '%s' (see spanscope "
               "report --help)", a);
}

/* Parses report's arguments into *file and o.  Returns 0, 1 for --help,
 * or EXIT_USAGE after printing the error. */
static int report_args(int argc, char **argv, const char **file,
                       sps__report_opts_t *o) {
    int opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc;
        if (!opts_done && !strcmp(a, "--")) { opts_done = 1; continue; }
        if (!opts_done && a[0] == '-' && a[1]) {
            if ((rc = report_opt(argc, argv, &i, o))) return rc;
            continue;
        }
        if (*file)
            return die(EXIT_USAGE, "report: one FILE only (got '%s' and "
                       "'%s')", *file, a);
        *file = a;
    }
    if (!*file) return die(EXIT_USAGE, "report: missing FILE (see "
                           "spanscope report --help)");
    return 0;
}

/* spanscope report: the summary table of a file. */
int cmd_report(int argc, char **argv) {
    sps__report_opts_t o = SPS__REPORT_OPTS_INIT;
    const char *file = NULL;
    int rc = report_args(argc, argv, &file, &o);
    if (rc == 1) {
        fputs(report_help, stdout);
        return 0;
    }
    if (rc) return rc;
    input_watchdog(file); /* the whole report: it reads as it prints */
    if (sps__report_write(stdout, file, &o) != 0)
        return die(EXIT_DATA, "report: %s", sps__err_msg());
    return 0;
}
