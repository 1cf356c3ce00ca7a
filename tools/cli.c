/* cli.c -- what every subcommand of the spanscope tool shares. */
#include "cli.h"

#include "spanscope.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Prints "spanscope: <message>" on stderr and returns code. */
int cli_die(int code, const char *fmt, ...) {
    va_list ap;
    fputs("spanscope: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

/* Limits the time this (child) process may spend reading path: 20 s plus
 * 1 s per 4 MiB, or $SPANSCOPE_READ_TIMEOUT seconds (0: no limit; a value
 * that is not a count leaves the default), at most a day.  Past it,
 * SIGALRM ends the process and run_isolated reports it. */
void cli_input_watchdog(const char *path) {
    const char *env = getenv("SPANSCOPE_READ_TIMEOUT");
    struct stat st;
    unsigned long long secs = 20, v;
    if (stat(path, &st) == 0 && st.st_size > 0)
        secs += (unsigned long long)(st.st_size >> 22);
    if (env && cli_parse_count(env, ULLONG_MAX, &v) == 0) secs = v;
    if (secs > 86400) secs = 86400;
    alarm((unsigned)secs);
}

/* The value of option name at argv[*i]: the text after '=' in
 * "--name=value", else the next argument (advancing *i).  NULL when
 * missing. */
const char *cli_opt_value(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
}

/* Non-zero when arg is option name, alone or as "name=value". */
int cli_is_opt(const char *arg, const char *name) {
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == 0 || arg[n] == '=');
}

/* The output option at argv[*i] (see cli.h). */
int cli_output_opt(int argc, char **argv, int *i, const char **out) {
    const char *a = argv[*i], *v;
    if (!strcmp(a, "-o") || cli_is_opt(a, "--output")) {
        if (!(v = cli_opt_value(argc, argv, i, a[1] == 'o' ? "-o" : "--output")))
            return -1;
        *out = v;
        return 1;
    }
    if (!strncmp(a, "-o", 2) && a[2]) { /* -oFILE */
        *out = a + 2;
        return 1;
    }
    return 0;
}

/* Parses a count (decimal digits only, no sign) into *out.  Returns 0, or
 * -1 when s is not one or exceeds max. */
int cli_parse_count(const char *s, unsigned long long max,
                    unsigned long long *out) {
    char *end;
    if (*s < '0' || *s > '9') return -1; /* strtoull would take "-3", " 3" */
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE || v > max) return -1;
    *out = v;
    return 0;
}

/* Parses one item of a rank list, "A" or "A-B" (len bytes at p), onto
 * ranks[*n..] (room for cap in all).  0, or -1 when it is not one or the
 * list would pass cap. */
static int parse_rank_item(const char *p, size_t len, int64_t *ranks, size_t cap, size_t *n) {
    char buf[48], *dash;
    unsigned long long lo, hi;
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, p, len);
    buf[len] = 0;
    if ((dash = strchr(buf, '-')) != NULL) *dash = 0;
    if (cli_parse_count(buf, INT32_MAX, &lo) < 0) return -1;
    hi = lo;
    if (dash && cli_parse_count(dash + 1, INT32_MAX, &hi) < 0) return -1;
    if (hi < lo || hi - lo >= cap - *n) return -1;
    for (unsigned long long r = lo; r <= hi; r++) ranks[(*n)++] = (int64_t)r;
    return 0;
}

/* Parses a --ranks list (see cli.h). */
int cli_parse_ranks(const char *v, int64_t *ranks, size_t cap, size_t *n) {
    *n = 0;
    for (const char *p = v;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (parse_rank_item(p, len, ranks, cap, n) < 0) return -1;
        if (!comma) return 0;
        p = comma + 1;
    }
}

/* Shows the progress of a subcommand on a terminal (see cli.h). */
void cli_progress(const char *what, uint64_t done, uint64_t total, int final) {
    static int64_t last;
    if (!total || !isatty(2)) return;
    int64_t now = sps_now_ns();
    if (!final && now - last < 500000000) return;
    last = now;
    fprintf(stderr, "\r%s: %3d%% (%llu of %llu spans)%s", what,
            (int)(100.0 * (double)(done > total ? total : done) / (double)total),
            (unsigned long long)done, (unsigned long long)total, final ? "\n" : "");
}

/* The Python side of a subcommand (see cli.h).  The snippet turns a
 * missing package into the tool's one line instead of a traceback. */
int cli_python(int argc, char **argv) {
    static const char code[] =
        "import sys\n"
        "try:\n"
        "    from spanscope import _cli\n"
        "except ImportError as e:\n"
        "    sys.stderr.write('spanscope: %s: needs the Python package spanscope "
        "(pip install spanscope): %s\\n' % (sys.argv[1], e))\n"
        "    sys.exit(2)\n"
        "sys.exit(_cli.python_command(sys.argv[1:]))\n";
    const char *py = getenv("SPANSCOPE_PYTHON");
    if (!py || !*py) py = "python3";
    /* the Python side calls this binary back (export json of a trace
     * converts it to .h5 first): it need not be the wheel's */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0 && !getenv("SPANSCOPE_CLI")) {
        self[n] = '\0';
        setenv("SPANSCOPE_CLI", self, 1);
    }
    char **args = calloc((size_t)argc + 4, sizeof *args);
    if (!args) return cli_die(EXIT_USAGE, "%s: out of memory", argv[0]);
    args[0] = (char *)py;
    args[1] = (char *)"-c";
    args[2] = (char *)code;
    for (int i = 0; i < argc; i++) args[3 + i] = argv[i];
    fflush(stdout);
    execvp(py, args);
    int e = errno;
    free(args);
    return cli_die(EXIT_USAGE, "%s: needs Python with the spanscope package "
                   "(pip install spanscope); cannot run %s: %s", argv[0], py,
                   strerror(e));
}
