/*
 * cmd_html.c -- `spanscope html FILE -o PAGE.html`: the command line of the
 * HTML page writer (sps__html_write, src/formats/html.c): arguments, the
 * input's time limit, the temporary file renamed into place, progress on
 * a terminal.
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
    "\n"
    "Writes one self-contained HTML page (no network access of any kind)\n"
    "for a recording (.h5, .json, .json.gz or .pftrace): a zoomable timeline\n"
    "(one lane per thread, grouped by process/rank; mouse wheel zooms, drag\n"
    "pans), per-region bars of total and self time, and the summary table\n"
    "(calls, total, self, mean, min, max).\n"
    "\n"
    "options:\n"
    "  -o, --output FILE  the page to write (written to a temporary name and\n"
    "                     renamed into place)\n"
    "  --max-spans N      embed at most N spans in the timeline (default\n"
    "                     200000): the longest ones; statistics always cover\n"
    "                     every span\n"
    "  -h, --help         show this help and exit\n";

/* The page writer's progress hook: cli_progress on a terminal. */
static void progress(uint64_t done, uint64_t total, int final) {
    cli_progress("html", done, total, final);
}

/* The arguments of html. */
typedef struct html_args {
    const char *in, *out;
    size_t max_spans;
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
            if (a->in) return die(EXIT_USAGE, "html: one FILE only (got '%s' and '%s')", a->in, s);
            a->in = s;
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
    }
    if (!a->in) return die(EXIT_USAGE, "html: missing FILE (see spanscope html --help)");
    if (!a->out || !*a->out)
        return die(EXIT_USAGE, "html: missing -o PAGE.html (see spanscope html --help)");
    return 0;
}

/* Writes the page of r to out through a temporary name.  Returns 0 or an
 * exit status after printing the error. */
static int html_emit(sps__tlr_t *r, const char *out,
                     const sps__html_opts_t *opt) {
    char *tmp = sps__tmp_name(out, NULL);
    FILE *fp = tmp ? fopen(tmp, "w") : NULL;
    if (!fp) {
        int e = tmp ? errno : ENOMEM;
        free(tmp);
        return die(EXIT_DATA, "html: %s: %s", out, strerror(e));
    }
    int rc = sps__html_write(fp, r, opt);
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

/* spanscope html FILE -o PAGE.html */
int cmd_html(int argc, char **argv) {
    html_args_t a = {NULL, NULL, SPS__HTML_DEFAULT_MAX_SPANS};
    int rc = html_parse(argc, argv, &a);
    if (rc == 1) {
        fputs(html_help, stdout);
        return 0;
    }
    if (rc) return rc;
    sps__tl_format_t fi = sps__tl_format_of(a.in);
    if (fi == SPS__TL_UNKNOWN)
        return die(EXIT_USAGE, "html: %s: unknown input format (.h5, .json, "
                   ".json.gz, .pftrace)", a.in);
    input_watchdog(a.in);
    sps__tlr_t *r;
    if (sps__tlr_open(&r, a.in, fi) != 0)
        return die(EXIT_DATA, "html: %s", sps__err_msg());
    alarm(0); /* the header is read: the rest is bounded work */
    const char *title = strrchr(a.in, '/');
    sps__html_opts_t opt = {a.max_spans, title ? title + 1 : a.in, progress};
    rc = html_emit(r, a.out, &opt);
    sps__tlr_free(r);
    return rc;
}
