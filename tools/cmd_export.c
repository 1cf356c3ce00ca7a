/*
 * cmd_export.c -- spanscope export FORMAT FILE -o OUT: a recording for
 * another tool (speedscope, snakeviz/pstats, a flame graph SVG, Chrome
 * trace, folded stacks of the stack samples).  Argument parsing only; the export is sps_export
 * (src/api/export.c), the same function behind Python's
 * spanscope.export_*.  FORMAT json (scope-profiler's JSON) is Python's
 * spanscope.write_json: run through the Python package (cli_python).
 */
#include "spanscope.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char export_help[] =
    "usage: spanscope export FORMAT FILE -o OUT [--ranks LIST]\n"
    "                        [--include PATTERN]... [--exclude PATTERN]...\n"
    "                        [--by-region] [--root NAME] [--width PX]\n"
    "                        [--threshold FRACTION] [--fixed-size]\n"
    "                        [--from spans|samples]\n"
    "\n"
    "Writes FILE (.h5 of spanscope or scope-profiler, .json, .json.gz,\n"
    ".pftrace) for another tool.  FORMAT:\n"
    "  speedscope  speedscope's JSON: one evented profile per thread of each\n"
    "              rank (open it at https://www.speedscope.app), and one\n"
    "              sampled profile per sampled thread when the .h5 has\n"
    "              stack samples\n"
    "  prof        cProfile's .prof of one rank (pstats, snakeviz OUT)\n"
    "  svg         a flame graph of one rank as SVG (no script); of its\n"
    "              stack samples with --from samples\n"
    "  folded      the stack samples of an .h5 as folded stacks\n"
    "              (\"outer;...;leaf weight\" lines: flamegraph.pl, inferno,\n"
    "              speedscope; torch's export_stacks)\n"
    "  chrome      Chrome trace JSON (Perfetto, chrome://tracing; .gz: gzip);\n"
    "              an .h5's stack samples as instant events on their thread's\n"
    "              row (args.stack, region, weight: as torch's traces)\n"
    "  json        scope-profiler's JSON (through the Python package:\n"
    "              spanscope.write_json, run by $SPANSCOPE_PYTHON, default\n"
    "              python3; the pip-installed command runs it in-process)\n"
    "\n"
    "options:\n"
    "  -o, --output OUT      the file to write (written to a temporary name\n"
    "                        and renamed into place)\n"
    "  --ranks LIST          ranks to export: 0,2-3 (ranks and ranges;\n"
    "                        default 0); prof and svg write one file per\n"
    "                        rank, OUT with _rank<N> before its extension\n"
    "                        when there are several\n"
    "  --include PATTERN     export only regions whose names match (a POSIX\n"
    "                        extended regex at the name's start); repeatable\n"
    "  --exclude PATTERN     leave out regions whose names match; repeatable\n"
    "                        (a left-out region's children count as its\n"
    "                        parent's)\n"
    "  --by-region           prof, svg: one entry per region name instead of\n"
    "                        one per call path (\"a > b\"); folded, svg --from\n"
    "                        samples: each stack under the region it was\n"
    "                        sampled in (the innermost open span)\n"
    "  --root NAME           prof, svg: the root frame's name (default\n"
    "                        \"<FILE rank R>\")\n"
    "  --width PX            svg: width (default 1200)\n"
    "  --threshold FRACTION  svg: smallest share of the root's time drawn\n"
    "                        (default 0.001)\n"
    "  --fixed-size          svg: width/height in px and an XML prolog\n"
    "                        (default: a viewBox, to scale or inline)\n"
    "  --from WHAT           svg: spans (default: frame width by time) or\n"
    "                        samples (the .h5's stack samples: frame width\n"
    "                        by CPU samples, each frame a function)\n"
    "  -h, --help            show this help and exit\n";

#define MAX_PATTERNS 64
#define MAX_RANKS 4096

/* What export was asked. */
typedef struct export_args {
    const char *format, *in, *out, *root;
    const char *include[MAX_PATTERNS], *exclude[MAX_PATTERNS];
    int64_t ranks[MAX_RANKS];
    sps_export_opts_t o;
} export_args_t;

/* Parses --ranks "0,2-3" into a->ranks (cli_parse_ranks).  0, or
 * EXIT_USAGE after the error. */
static int parse_ranks(const char *v, export_args_t *a) {
    if (cli_parse_ranks(v, a->ranks, MAX_RANKS, &a->o.nranks) < 0)
        return die(EXIT_USAGE, "export: --ranks needs ranks like 0,2-3 (at most %d), got '%s'",
                   MAX_RANKS, v);
    a->o.ranks = a->ranks;
    return 0;
}

/* Adds pattern v to list (n of them).  0, or EXIT_USAGE. */
static int add_pattern(const char **list, size_t *n, const char *v, const char *opt) {
    if (!v) return die(EXIT_USAGE, "export: %s needs a pattern", opt);
    if (*n == MAX_PATTERNS) return die(EXIT_USAGE, "export: at most %d %s patterns", MAX_PATTERNS, opt);
    list[(*n)++] = v;
    return 0;
}

/* Parses one option at argv[*i].  0, 1 for --help, or EXIT_USAGE. */
static int export_opt(int argc, char **argv, int *i, export_args_t *a) {
    const char *s = argv[*i], *v;
    unsigned long long n;
    int rc;
    if (!strcmp(s, "-h") || !strcmp(s, "--help")) return 1;
    if ((rc = cli_output_opt(argc, argv, i, &a->out)) != 0)
        return rc < 0 ? die(EXIT_USAGE, "export: -o needs a file name") : 0;
    if (!strcmp(s, "--by-region")) { a->o.call_paths = 0; return 0; }
    if (!strcmp(s, "--fixed-size")) { a->o.scalable = 0; return 0; }
    if (cli_is_opt(s, "--ranks")) {
        if (!(v = cli_opt_value(argc, argv, i, "--ranks")))
            return die(EXIT_USAGE, "export: --ranks needs ranks like 0,2-3");
        return parse_ranks(v, a);
    }
    if (cli_is_opt(s, "--include"))
        return add_pattern(a->include, &a->o.ninclude, cli_opt_value(argc, argv, i, "--include"), "--include");
    if (cli_is_opt(s, "--exclude"))
        return add_pattern(a->exclude, &a->o.nexclude, cli_opt_value(argc, argv, i, "--exclude"), "--exclude");
    if (cli_is_opt(s, "--from")) {
        v = cli_opt_value(argc, argv, i, "--from");
        if (!v || (strcmp(v, "spans") && strcmp(v, "samples")))
            return die(EXIT_USAGE, "export: --from needs spans or samples");
        a->o.from_samples = !strcmp(v, "samples");
        return 0;
    }
    if (cli_is_opt(s, "--root")) {
        if (!(a->root = cli_opt_value(argc, argv, i, "--root")))
            return die(EXIT_USAGE, "export: --root needs a name");
        return 0;
    }
    if (cli_is_opt(s, "--width")) {
        if (!(v = cli_opt_value(argc, argv, i, "--width")) || cli_parse_count(v, 100000, &n) < 0 || n < 10)
            return die(EXIT_USAGE, "export: --width needs pixels, 10 to 100000");
        a->o.width = (unsigned)n;
        return 0;
    }
    if (cli_is_opt(s, "--threshold")) {
        char *end;
        double t = (v = cli_opt_value(argc, argv, i, "--threshold")) ? strtod(v, &end) : -1;
        if (!v || *end || !(t >= 0 && t < 1))
            return die(EXIT_USAGE, "export: --threshold needs a fraction in [0, 1)");
        a->o.threshold = t;
        return 0;
    }
    return die(EXIT_USAGE, "export: unknown option '%s' (see spanscope export --help)", s);
}

/* Parses export's arguments.  0, 1 for --help, or EXIT_USAGE. */
static int export_args(int argc, char **argv, export_args_t *a) {
    int rc, opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!opts_done && !strcmp(s, "--")) { opts_done = 1; continue; }
        if (!opts_done && s[0] == '-' && s[1]) {
            if ((rc = export_opt(argc, argv, &i, a))) return rc;
            continue;
        }
        if (!a->format) a->format = s;
        else if (!a->in) a->in = s;
        else return die(EXIT_USAGE, "export: one FILE only (got '%s' and '%s')", a->in, s);
    }
    if (!a->format || !a->in)
        return die(EXIT_USAGE, "export: needs FORMAT and FILE (see spanscope export --help)");
    if (strcmp(a->format, "speedscope") && strcmp(a->format, "prof") &&
        strcmp(a->format, "svg") && strcmp(a->format, "chrome") && strcmp(a->format, "json") &&
        strcmp(a->format, "folded"))
        return die(EXIT_USAGE, "export: unknown format '%s' (speedscope, prof, svg, chrome, "
                   "folded, json)", a->format);
    if (a->o.from_samples && strcmp(a->format, "svg"))
        return die(EXIT_USAGE, "export: --from samples is for svg (speedscope writes the "
                   "samples as they are; folded is made of them)");
    if (!a->out) return die(EXIT_USAGE, "export: needs -o OUT (see spanscope export --help)");
    return 0;
}

/* One sps_export of a to out.  0 or the exit status after the error. */
static int export_one(export_args_t *a, const char *out) {
    char err[512];
    input_watchdog(a->in);
    int rc = sps_export(a->in, out, a->format, &a->o, err, sizeof err);
    alarm(0);
    /* a rank the file lacks, a bad pattern, nothing selected: the request */
    if (rc) return die(rc == SPS_EINVAL ? EXIT_USAGE : EXIT_DATA, "export: %s", err);
    return 0;
}

/* prof / svg of several ranks: OUT with "_rank<N>" before its extension,
 * a file per rank (as scope-profiler names them), each with its own root
 * name unless --root gave one.  0 or the exit status after the error. */
static int export_per_rank(export_args_t *a) {
    const int64_t *ranks = a->o.ranks;
    size_t n = a->o.nranks;
    const char *slash = strrchr(a->out, '/'), *dot = strrchr(a->out, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - a->out) : strlen(a->out);
    const char *base = strrchr(a->in, '/');
    int own_root = a->root == NULL; /* no --root: "<FILE rank N>" each */
    for (size_t i = 0; i < n; i++) {
        char out[4096], root[512];
        if (snprintf(out, sizeof out, "%.*s_rank%lld%s", (int)stem, a->out,
                     (long long)ranks[i], a->out + stem) >= (int)sizeof out)
            return die(EXIT_USAGE, "export: %s: name too long", a->out);
        snprintf(root, sizeof root, "<%s rank %lld>", base ? base + 1 : a->in,
                 (long long)ranks[i]);
        a->o.root_name = own_root ? root : a->root;
        a->o.ranks = &ranks[i];
        a->o.nranks = 1;
        int rc = export_one(a, out);
        if (rc) return rc;
    }
    return 0;
}

/* spanscope export FORMAT FILE -o OUT */
int cmd_export(int argc, char **argv) {
    static export_args_t a; /* large: the pattern and rank lists */
    sps_export_opts_t dflt = SPS_EXPORT_OPTS_INIT;
    memset(&a, 0, sizeof a);
    a.o = dflt;
    int rc = export_args(argc, argv, &a);
    if (rc == 1) {
        fputs(export_help, stdout);
        return 0;
    }
    if (rc) return rc;
    if (!strcmp(a.format, "json")) return cli_python(argc, argv);
    a.o.include = a.include;
    a.o.exclude = a.exclude;
    int per_rank = !strcmp(a.format, "prof") || !strcmp(a.format, "svg");
    if (per_rank && a.o.nranks > 1) return export_per_rank(&a);
    char root[512]; /* prof, svg: the root frame, "<FILE rank N>" unless --root */
    const char *base = strrchr(a.in, '/');
    snprintf(root, sizeof root, "<%s rank %lld>", base ? base + 1 : a.in,
             (long long)(a.o.nranks ? a.o.ranks[0] : 0));
    a.o.root_name = a.root ? a.root : per_rank ? root : NULL;
    return export_one(&a, a.out);
}
