/*
 * cmd_html.c -- `spanscope html FILE... -o PAGE.html`: the command line of
 * the HTML page writers (src/formats/html.c: sps__html_write for one FILE,
 * sps__html_write_cmp comparing several): arguments, the inputs' time
 * limit, the temporary file renamed into place, progress on a terminal.
 */
#include "sps_int.h"
#include "formats/html.h"
#include "formats/timeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char html_help[] =
    "usage: spanscope html FILE -o PAGE.html [--max-spans N]\n"
    "       spanscope html FILE FILE... -o PAGE.html\n"
    "\n"
    "Writes one self-contained HTML page (no network access of any kind)\n"
    "for a recording (.h5, .json, .json.gz or .pftrace): a zoomable timeline\n"
    "(one lane per thread, grouped by process/rank, a label per call depth;\n"
    "mouse wheel zooms, drag pans), a legend of the regions' colours,\n"
    "per-region bars of total and self time, and the summary table (calls,\n"
    "total, self, mean, min, max).\n"
    "\n"
    "With several FILEs, a page that compares them: the runs, per region a\n"
    "bar of total and self time per run, and a table of calls, total, self\n"
    "and mean per region and run with each run's total as a ratio of the\n"
    "first FILE's (the baseline).  Regions are matched by name.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE  the page to write (written to a temporary name and\n"
    "                     renamed into place)\n"
    "  --max-spans N      embed at most N spans in the timeline (default\n"
    "                     200000): the longest ones; statistics always cover\n"
    "                     every span (one FILE only: a comparison has no\n"
    "                     timeline)\n"
    "  -h, --help         show this help and exit\n";

/* The page writer's progress hook: cli_progress on a terminal. */
static void progress(uint64_t done, uint64_t total, int final) {
    cli_progress("html", done, total, final);
}

/* The arguments of html. */
typedef struct html_args {
    const char **in; /* the FILEs, nin of them (room for argc) */
    size_t nin;
    const char *out;
    size_t max_spans;
    int max_spans_given;
} html_args_t;

/* Parses html's arguments into a.  Returns 0, 1 for --help, or EXIT_USAGE
 * after printing the error. */
static int html_parse(int argc, char **argv, html_args_t *a) {
    int done = 0;
    unsigned long long n;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *v;
        if (!done && !strcmp(s, "--")) { done = 1; continue; }
        if (done || s[0] != '-' || !s[1]) {
            a->in[a->nin++] = s;
            continue;
        }
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) return 1;
        int o = cli_output_opt(argc, argv, &i, &a->out);
        if (o < 0) return die(EXIT_USAGE, "html: %s needs a value", s);
        if (o) continue;
        if (!cli_is_opt(s, "--max-spans"))
            return die(EXIT_USAGE, "html: unknown option '%s' (see spanscope html --help)", s);
        if (!(v = cli_opt_value(argc, argv, &i, "--max-spans")))
            return die(EXIT_USAGE, "html: %s needs a value", s);
        if (cli_parse_count(v, SPS__HTML_MAX_SPANS_LIMIT, &n) < 0)
            return die(EXIT_USAGE, "html: --max-spans needs a number up to %zu, got '%s'",
                       (size_t)SPS__HTML_MAX_SPANS_LIMIT, v);
        a->max_spans = (size_t)n;
        a->max_spans_given = 1;
    }
    if (!a->nin) return die(EXIT_USAGE, "html: missing FILE (see spanscope html --help)");
    if (!a->out || !*a->out)
        return die(EXIT_USAGE, "html: missing -o PAGE.html (see spanscope html --help)");
    if (a->nin > 1 && a->max_spans_given)
        return die(EXIT_USAGE, "html: --max-spans is for one FILE's timeline; a comparison "
                   "of %zu FILEs embeds no timeline", a->nin);
    return 0;
}

/* The page of one run (r: rs[0]) or the comparison of n runs. */
typedef struct html_job {
    sps__tlr_t **rs;
    const char **labels;
    size_t n;
} html_job_t;

/* Writes the page of job j to out through a temporary name.  Returns 0 or
 * an exit status after printing the error. */
static int html_emit(const html_job_t *j, const char *out,
                     const sps__html_opts_t *opt) {
    char *tmp = sps__tmp_name(out, NULL);
    FILE *fp = tmp ? fopen(tmp, "w") : NULL;
    if (!fp) {
        int e = tmp ? errno : ENOMEM;
        free(tmp);
        return die(EXIT_DATA, "html: %s: %s", out, strerror(e));
    }
    int rc = j->n == 1 ? sps__html_write(fp, j->rs[0], opt)
                       : sps__html_write_cmp(fp, j->rs, j->labels, j->n, opt);
    int werr = ferror(fp); /* set by a failed write or flush of the page */
    if (fclose(fp) != 0) werr = 1;
    int done = rc == 0 && !werr && rename(tmp, out) == 0, e = errno;
    if (!done) unlink(tmp);
    free(tmp);
    if (done) return 0;
    if (werr || rc == 0) /* the output failed, not the input */
        return die(EXIT_DATA, "html: %s: %s", out, strerror(e ? e : EIO));
    return die(EXIT_DATA, "html: %s",
               rc == SPS_EFORMAT ? sps__err_msg() : sps_strerror(rc));
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

/* Opens the n FILEs of in[] into rs[] (each under the input watchdog
 * until its header is read).  Returns 0, or an exit status after printing
 * the error, with every reader opened so far freed. */
static int html_open(const char **in, size_t n, sps__tlr_t **rs) {
    for (size_t i = 0; i < n; i++) {
        sps__tl_format_t fi = sps__tl_format_of(in[i]);
        int rc = 0;
        if (fi == SPS__TL_UNKNOWN)
            rc = die(EXIT_USAGE, "html: %s: unknown input format (.h5, .json, "
                     ".json.gz, .pftrace)", in[i]);
        else {
            input_watchdog(in[i]);
            if (sps__tlr_open(&rs[i], in[i], fi) != 0)
                rc = die(EXIT_DATA, "html: %s", sps__err_msg());
            alarm(0); /* the header is read: the rest is bounded work */
        }
        if (rc) {
            while (i > 0) sps__tlr_free(rs[--i]);
            return rc;
        }
    }
    return 0;
}

/* spanscope html FILE... -o PAGE.html */
int cmd_html(int argc, char **argv) {
    const char **in = calloc((size_t)argc + 1, sizeof *in);
    const char **labels = calloc((size_t)argc + 1, sizeof *labels);
    sps__tlr_t **rs = calloc((size_t)argc + 1, sizeof *rs);
    if (!in || !labels || !rs) {
        free(in);
        free(labels);
        free(rs);
        return die(EXIT_DATA, "html: %s", sps_strerror(SPS_ENOMEM));
    }
    html_args_t a = {in, 0, NULL, SPS__HTML_DEFAULT_MAX_SPANS, 0};
    int rc = html_parse(argc, argv, &a), help = rc == 1;
    if (help) {
        fputs(html_help, stdout);
        rc = 0;
    } else if (rc == 0)
        rc = html_open(a.in, a.nin, rs);
    if (rc == 0 && !help) {
        html_labels(a.in, a.nin, labels);
        html_job_t j = {rs, labels, a.nin};
        sps__html_opts_t opt = {a.max_spans, labels[0], progress};
        rc = html_emit(&j, a.out, &opt);
        for (size_t i = 0; i < a.nin; i++) sps__tlr_free(rs[i]);
    }
    free(in);
    free(labels);
    free(rs);
    return rc;
}
