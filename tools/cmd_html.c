/*
 * cmd_html.c -- `spanscope html FILE... -o PAGE.html`: the command line of
 * the HTML report.  Argument parsing only: the page, the opening of the
 * inputs and the temporary file renamed into place are the library's
 * sps_html_write_files (src/api/html_file.c, the one glue that Python's
 * create_html_report uses too); what stays here is what only a command
 * line needs: the options' syntax, the runs' labels, the inputs' time
 * limit, progress on a terminal and the exit status.
 */
#include "spanscope.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char html_help[] =
    "usage: spanscope html FILE -o PAGE.html [--max-spans N] [OPTIONS]\n"
    "       spanscope html FILE FILE... -o PAGE.html [OPTIONS]\n"
    "\n"
    "Writes one self-contained HTML page (no network access of any kind)\n"
    "for a recording (.h5, .json, .json.gz or .pftrace): a zoomable timeline\n"
    "(one lane per thread, grouped by process/rank, a label per call depth;\n"
    "mouse wheel zooms, drag pans), a legend of the regions' colours,\n"
    "per-region bars of total and self time, and the summary table (calls,\n"
    "total, self, mean, min, max unless --columns says otherwise).\n"
    "\n"
    "With several FILEs, a page that compares them: the runs, per region a\n"
    "bar of total and self time per run, and a table of calls, total, self\n"
    "and mean per region and run with each run's total as a ratio of the\n"
    "first FILE's (the baseline).  Regions are matched by name.  When the\n"
    "runs differ in ranks (or threads), the scaling section: per region its\n"
    "speedup and efficiency over the runs' sizes.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE    the page to write (written to a temporary name\n"
    "                       and renamed into place)\n"
    "  --max-spans N        embed at most N spans in the timeline (default\n"
    "                       200000): the longest ones; statistics always\n"
    "                       cover every span (one FILE only: a comparison\n"
    "                       has no timeline)\n"
    "  --include PATTERN    show only regions whose names match PATTERN (a\n"
    "                       POSIX extended regex at the name's start, as\n"
    "                       Python's re.match); repeatable.  Self times stay\n"
    "                       those of the whole recording\n"
    "  --exclude PATTERN    leave out regions whose names match; repeatable\n"
    "  --ranks LIST         show only these ranks: 0,2-3 (default: all); a\n"
    "                       rank a FILE lacks is named on the page\n"
    "  --sort KEY           order of the summary table: start, total\n"
    "                       (default), self, calls, avg, min, max, first,\n"
    "                       last, std, p50, p95, p99, imbalance, name\n"
    "  --columns LIST       the summary table's columns, e.g.\n"
    "                       region,calls,total,p95: region, ranks, calls,\n"
    "                       total, self, percent, avg, min, max, first,\n"
    "                       last, std, p50, p95, p99, imbalance\n"
    "  --no-charts          tables only: no timeline, legend, bars or\n"
    "                       scaling section\n"
    "  --scaling MODE       the comparison's scaling charts: strong\n"
    "                       (speedup), weak (weak-scaling efficiency) or\n"
    "                       both (default)\n"
    "  --speedup-x AXIS     their x axis: ranks, nodes, threads, cores, or\n"
    "                       auto (default: ranks when they differ, else\n"
    "                       threads when they differ, else no section)\n"
    "  -h, --help           show this help and exit\n";

#define MAX_LIST 4096 /* patterns, ranks, columns: at most this many each */

/* The page writer's progress hook: cli_progress on a terminal. */
static void progress(uint64_t done, uint64_t total, int final) {
    cli_progress("html", done, total, final);
}

/* The arguments of html. */
typedef struct html_args {
    const char **in; /* the FILEs, nin of them (room for argc) */
    size_t nin;
    const char *out;
    int max_spans_given;
    const char *include[MAX_LIST], *exclude[MAX_LIST], *columns[MAX_LIST];
    int64_t ranks[MAX_LIST];
    char *columns_buf; /* the --columns text, split in place (owned) */
    sps_html_options_t o;
} html_args_t;

/* Parses --ranks "0,2-3" into a->ranks (cli_parse_ranks).  0, or
 * EXIT_USAGE after the error. */
static int parse_ranks(const char *v, html_args_t *a) {
    if (cli_parse_ranks(v, a->ranks, MAX_LIST, &a->o.nranks) < 0)
        return die(EXIT_USAGE, "html: --ranks needs ranks like 0,2-3 (at most %d), got '%s'",
                   MAX_LIST, v);
    a->o.ranks = a->ranks;
    return 0;
}

/* Splits --columns "a,b,c" into a->columns.  0, or EXIT_USAGE. */
static int parse_columns(const char *v, html_args_t *a) {
    free(a->columns_buf);
    if (!(a->columns_buf = strdup(v))) return die(EXIT_DATA, "html: %s", sps_strerror(SPS_ENOMEM));
    a->o.ncolumns = 0;
    for (char *p = a->columns_buf;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        if (!*p || a->o.ncolumns == MAX_LIST)
            return die(EXIT_USAGE, "html: --columns needs names like region,calls,total, got "
                       "'%s'", v);
        a->columns[a->o.ncolumns++] = p;
        if (!comma) break;
        p = comma + 1;
    }
    a->o.columns = a->columns;
    return 0;
}

/* Adds pattern v of option opt to list (n of them).  0, or EXIT_USAGE. */
static int add_pattern(const char **list, size_t *n, const char *v, const char *opt) {
    if (!v) return die(EXIT_USAGE, "html: %s needs a pattern", opt);
    if (*n == MAX_LIST) return die(EXIT_USAGE, "html: at most %d %s patterns", MAX_LIST, opt);
    list[(*n)++] = v;
    return 0;
}

/* The value of a word option (--sort, --scaling, --speedup-x) into *dst.
 * 0, or EXIT_USAGE.  The library checks the word itself. */
static int word_opt(int argc, char **argv, int *i, const char *name, const char **dst) {
    if (!(*dst = cli_opt_value(argc, argv, i, name)) || !**dst)
        return die(EXIT_USAGE, "html: %s needs a value (see spanscope html --help)", name);
    return 0;
}

/* Parses the option at argv[*i].  0, 1 for --help, or EXIT_USAGE. */
static int html_opt(int argc, char **argv, int *i, html_args_t *a) {
    const char *s = argv[*i], *v;
    unsigned long long n;
    if (!strcmp(s, "-h") || !strcmp(s, "--help")) return 1;
    int o = cli_output_opt(argc, argv, i, &a->out);
    if (o < 0) return die(EXIT_USAGE, "html: %s needs a value", s);
    if (o) return 0;
    if (!strcmp(s, "--no-charts")) {
        a->o.charts = 0;
        return 0;
    }
    if (cli_is_opt(s, "--include"))
        return add_pattern(a->include, &a->o.ninclude, cli_opt_value(argc, argv, i, "--include"),
                           "--include");
    if (cli_is_opt(s, "--exclude"))
        return add_pattern(a->exclude, &a->o.nexclude, cli_opt_value(argc, argv, i, "--exclude"),
                           "--exclude");
    if (cli_is_opt(s, "--ranks")) {
        if (!(v = cli_opt_value(argc, argv, i, "--ranks")))
            return die(EXIT_USAGE, "html: --ranks needs ranks like 0,2-3");
        return parse_ranks(v, a);
    }
    if (cli_is_opt(s, "--columns")) {
        if (!(v = cli_opt_value(argc, argv, i, "--columns")))
            return die(EXIT_USAGE, "html: --columns needs names like region,calls,total");
        return parse_columns(v, a);
    }
    if (cli_is_opt(s, "--sort")) return word_opt(argc, argv, i, "--sort", &a->o.sort);
    if (cli_is_opt(s, "--scaling")) return word_opt(argc, argv, i, "--scaling", &a->o.scaling);
    if (cli_is_opt(s, "--speedup-x"))
        return word_opt(argc, argv, i, "--speedup-x", &a->o.speedup_x);
    if (!cli_is_opt(s, "--max-spans"))
        return die(EXIT_USAGE, "html: unknown option '%s' (see spanscope html --help)", s);
    if (!(v = cli_opt_value(argc, argv, i, "--max-spans")))
        return die(EXIT_USAGE, "html: %s needs a value", s);
    if (cli_parse_count(v, SPS_HTML_MAX_SPANS_LIMIT, &n) < 0)
        return die(EXIT_USAGE, "html: --max-spans needs a number up to %zu, got '%s'",
                   (size_t)SPS_HTML_MAX_SPANS_LIMIT, v);
    a->o.max_spans = (size_t)n;
    a->max_spans_given = 1;
    return 0;
}

/* Parses html's arguments into a.  Returns 0, 1 for --help, or EXIT_USAGE
 * after printing the error. */
static int html_parse(int argc, char **argv, html_args_t *a) {
    int done = 0, rc;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!done && !strcmp(s, "--")) { done = 1; continue; }
        if (done || s[0] != '-' || !s[1]) {
            a->in[a->nin++] = s;
            continue;
        }
        if ((rc = html_opt(argc, argv, &i, a)) != 0) return rc;
    }
    if (!a->nin) return die(EXIT_USAGE, "html: missing FILE (see spanscope html --help)");
    if (!a->out || !*a->out)
        return die(EXIT_USAGE, "html: missing -o PAGE.html (see spanscope html --help)");
    if (a->nin > 1 && a->max_spans_given)
        return die(EXIT_USAGE, "html: --max-spans is for one FILE's timeline; a comparison "
                   "of %zu FILEs embeds no timeline", a->nin);
    return 0;
}

/* The file name of path (after its last '/'). */
static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Fills labels[]: each FILE's file name, or the path as given where two
 * FILEs share a file name (a/run.h5 and b/run.h5). */
static void html_labels(const char **in, size_t n, const char **labels) {
    for (size_t i = 0; i < n; i++) {
        labels[i] = base_name(in[i]);
        for (size_t k = 0; k < n; k++)
            if (k != i && !strcmp(base_name(in[k]), labels[i])) {
                labels[i] = in[i];
                break;
            }
    }
}

/* Sets the inputs' time limit: the sum of cli_input_watchdog's limit for
 * each FILE (the page reads every span of each), at most a day; none
 * when SPANSCOPE_READ_TIMEOUT=0 made each limit 0. */
static void html_watchdog(const char **in, size_t n) {
    unsigned long long secs = 0;
    for (size_t i = 0; i < n; i++) {
        input_watchdog(in[i]);
        secs += alarm(0);
    }
    alarm((unsigned)(secs > 86400 ? 86400 : secs));
}

/* spanscope html FILE... -o PAGE.html */
int cmd_html(int argc, char **argv) {
    static html_args_t a; /* large: the lists */
    sps_html_options_t dflt = SPS_HTML_OPTIONS_INIT;
    memset(&a, 0, sizeof a);
    a.o = dflt;
    a.o.progress = progress;
    a.o.include = a.include;
    a.o.exclude = a.exclude;
    a.in = calloc((size_t)argc + 1, sizeof *a.in);
    const char **labels = calloc((size_t)argc + 1, sizeof *labels);
    int rc = !a.in || !labels ? die(EXIT_DATA, "html: %s", sps_strerror(SPS_ENOMEM))
                              : html_parse(argc, argv, &a);
    if (rc == 1) {
        fputs(html_help, stdout);
        rc = 0;
    } else if (rc == 0) {
        char err[1024] = "";
        html_labels(a.in, a.nin, labels);
        a.o.title = labels[0];
        html_watchdog(a.in, a.nin);
        int e = sps_html_write_files(a.in, labels, a.nin, a.out, &a.o, err, sizeof err);
        alarm(0);
        /* an option the library rejects, an unknown input format: the request */
        if (e) rc = die(e == SPS_EINVAL ? EXIT_USAGE : EXIT_DATA, "html: %s", err);
    }
    free(a.in);
    free(labels);
    free(a.columns_buf);
    return rc;
}
