/*
 * cmd_view.c -- `spanscope view FILE...`: the local viewer.  Opens the
 * recordings through the view object (src/api/view.c: each file's
 * level-of-detail index built on first open and kept), then serves the
 * embedded page (tools/view_page/, build/generated/view_page.h) and its API
 * over HTTP on 127.0.0.1 (view_http.c) until the page says quit, Ctrl-C or
 * SIGTERM.  What stays here: the options, the token, the URL line, --open,
 * the signals and the process that watches the server.
 *
 * The files are untrusted, so view is an isolated subcommand (isolate=1
 * in CLI_COMMANDS): it runs in a child process, under the input's time
 * limit while the files are opened (cli_input_watchdog; alarm(0) once
 * they are), and a crash there comes out as one error line.  The
 * dispatcher passes SIGINT, SIGTERM and SIGHUP on to it (run_isolated):
 * the server then stops cleanly, closes its files and exits 0 -- the
 * tool's status.
 */
#include "spanscope.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/view.h"
#include "cli.h"
#include "view_http.h"
#include "view_page.h" /* generated: sps_view_page, sps_view_page_len */

static const char view_help[] =
    "usage: spanscope view FILE... [--port N] [--open] [--index-dir DIR]\n"
    "                      [--rebuild] [--no-progress]\n"
    "\n"
    "Opens recordings (.h5, .json, .json.gz or .pftrace; several FILEs are\n"
    "shown side by side, e.g. one per rank) in a local viewer: a web page\n"
    "served on 127.0.0.1 only, at the URL this prints as\n"
    "    spanscope view: http://127.0.0.1:PORT/?token=TOKEN\n"
    "The page zooms and pans through the timeline of every process and\n"
    "thread (any number of spans: it asks for what is visible, in as much\n"
    "detail as the screen shows), and shows the call tree, flame graph and\n"
    "region table of the visible window, search and span details.\n"
    "\n"
    "On first open each FILE gets an index (FILE.spsview beside it, or in\n"
    "~/.cache/spanscope when that directory is not writable), reused while\n"
    "FILE is unchanged.  Only this machine's browser with the URL's random\n"
    "token is answered.  The server stops on Ctrl-C, SIGTERM or the page's\n"
    "quit button.\n"
    "\n"
    "options:\n"
    "  --port N          the port to listen on (default 0: a free one)\n"
    "  --open            open the URL in a browser ($BROWSER, else xdg-open)\n"
    "  --index-dir DIR   keep the indexes in DIR instead\n"
    "  --rebuild         build the indexes again even if valid ones exist\n"
    "  --no-progress     no progress of an index build on stderr\n"
    "  -h, --help        show this help and exit\n";

/* The arguments of view. */
typedef struct view_args {
    const char **in; /* the FILEs, nin of them */
    size_t nin;
    unsigned short port;
    int open, rebuild, no_progress;
    const char *index_dir;
} view_args_t;

/* Parses view's arguments into a.  Returns 0, 1 for --help, or
 * EXIT_USAGE after printing the error. */
static int view_parse(int argc, char **argv, view_args_t *a) {
    int done = 0;
    unsigned long long n;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *v;
        if (!done && !strcmp(s, "--")) {
            done = 1;
        } else if (done || s[0] != '-' || !s[1]) {
            a->in[a->nin++] = s;
        } else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            return 1;
        } else if (!strcmp(s, "--open")) {
            a->open = 1;
        } else if (!strcmp(s, "--rebuild")) {
            a->rebuild = 1;
        } else if (!strcmp(s, "--no-progress")) {
            a->no_progress = 1;
        } else if (cli_is_opt(s, "--port")) {
            if (!(v = cli_opt_value(argc, argv, &i, "--port")) || cli_parse_count(v, 65535, &n))
                return die(EXIT_USAGE, "view: --port needs a port number 0..65535, got '%s'",
                           v ? v : "");
            a->port = (unsigned short)n;
        } else if (cli_is_opt(s, "--index-dir")) {
            if (!(v = cli_opt_value(argc, argv, &i, "--index-dir")) || !*v)
                return die(EXIT_USAGE, "view: --index-dir needs a directory");
            a->index_dir = v;
        } else {
            return die(EXIT_USAGE, "view: unknown option '%s' (see spanscope view --help)", s);
        }
    }
    if (!a->nin) return die(EXIT_USAGE, "view: missing FILE (see spanscope view --help)");
    return 0;
}

/* The write end of the server's self-pipe: SIGINT, SIGTERM and SIGHUP
 * make its poll loop stop. */
static int stop_pipe[2] = {-1, -1};

/* The server's handler of SIGINT, SIGTERM and SIGHUP. */
static void on_stop(int sig) {
    int e = errno;
    (void)sig;
    if (write(stop_pipe[1], "x", 1) < 0) { /* full: a stop is pending anyway */
    }
    errno = e;
}

/* The /api/ callback of the server: the view object's answer. */
static int view_api(void *ctx, const char *method, const char *path, const char *query,
                    char **body, size_t *len, const char **ctype) {
    return sps__view_handle(ctx, method, path, query, body, len, ctype);
}

/* Whether the program name is an executable file in a directory of $PATH. */
static int in_path(const char *name) {
    const char *p = getenv("PATH");
    char buf[4096];
    while (p && *p) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        if (n && n + strlen(name) + 2 < sizeof buf) {
            snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, name);
            if (access(buf, X_OK) == 0) return 1;
        }
        p = colon ? colon + 1 : NULL;
    }
    return 0;
}

/* Opens url in a browser without waiting for it: $BROWSER's first entry
 * (a command, words split by the shell) or else xdg-open, in a grandchild
 * with no stdin or stdout (this process's stdout carries the URL line
 * only).  With neither, one line on stderr; never an error. */
static void open_browser(const char *url) {
    char browser[1024] = "";
    const char *env = getenv("BROWSER");
    if (env && *env) snprintf(browser, sizeof browser, "%.*s", (int)strcspn(env, ":"), env);
    if (!browser[0] && !in_path("xdg-open")) {
        fprintf(stderr, "spanscope: view: --open: no $BROWSER and no xdg-open: open the "
                        "URL yourself\n");
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t p = fork();
    if (p == 0) {
        if (fork() != 0) _exit(0); /* the grandchild is nobody's to wait for */
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
        setsid(); /* Ctrl-C at the terminal stops the viewer, not the browser */
        signal(SIGPIPE, SIG_DFL);
        if (browser[0])
            execl("/bin/sh", "sh", "-c", "exec $1 \"$2\"", "sh", browser, url, (char *)NULL);
        else
            execlp("xdg-open", "xdg-open", url, (char *)NULL);
        _exit(127);
    }
    if (p > 0)
        while (waitpid(p, NULL, 0) < 0 && errno == EINTR) {
        }
}

/* Sets the inputs' time limit: the sum of cli_input_watchdog's limit per
 * FILE, at most a day (none when SPANSCOPE_READ_TIMEOUT=0). */
static void view_watchdog(const char **in, size_t n) {
    unsigned long long secs = 0;
    for (size_t i = 0; i < n; i++) {
        input_watchdog(in[i]);
        secs += alarm(0);
    }
    alarm((unsigned)(secs > 86400 ? 86400 : secs));
}

/* Installs handler h for SIGINT, SIGTERM and SIGHUP. */
static void on_stop_signals(void (*h)(int)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* The viewer itself: opens the FILEs, serves until told to stop.
 * Returns the exit status. */
static int view_run(const view_args_t *a) {
    sps__view_opts_t o = {a->index_dir, a->rebuild, !a->no_progress};
    sps__view_t *v = NULL;
    char token[VIEW_HTTP_TOKEN_HEX + 1];
    view_http_t *srv = NULL;
    signal(SIGPIPE, SIG_IGN); /* a closed stdout or socket: an error, not death */
    if (view_http_token(token) < 0)
        return die(EXIT_DATA, "view: no random bytes for the token: %s", strerror(errno));
    view_watchdog(a->in, a->nin);
    int rc = sps__view_open(&v, a->in, a->nin, &o);
    alarm(0);
    if (rc) return die(rc == SPS_EINVAL ? EXIT_USAGE : EXIT_DATA, "view: %s", sps__err_msg());
    view_http_conf_t conf = {token, sps_view_page, sps_view_page_len, view_api, v};
    if (view_http_open(&srv, a->port, &conf) < 0) {
        int e = errno;
        sps__view_close(v);
        if (e == EADDRINUSE) return die(EXIT_USAGE, "view: port %u is in use", a->port);
        if (e == EACCES)
            return die(EXIT_USAGE, "view: port %u needs privileges: choose one above 1023",
                       a->port);
        return die(EXIT_DATA, "view: cannot listen on 127.0.0.1:%u: %s", a->port, strerror(e));
    }
    if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        int e = errno;
        view_http_close(srv);
        sps__view_close(v);
        return die(EXIT_DATA, "view: pipe: %s", strerror(e));
    }
    on_stop_signals(on_stop);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/?token=%s", view_http_port(srv), token);
    printf("spanscope view: %s\n", url);
    fflush(stdout);
    if (a->open) open_browser(url);
    rc = view_http_serve(srv, stop_pipe[0]);
    int e = errno;
    on_stop_signals(SIG_IGN); /* stopping already; the pipe is about to close */
    view_http_close(srv);
    sps__view_close(v);
    close(stop_pipe[0]);
    close(stop_pipe[1]);
    if (rc < 0) return die(EXIT_DATA, "view: poll: %s", strerror(e));
    printf("spanscope view: stopped%s\n", rc == 1 ? " (the page said quit)" : "");
    fflush(stdout);
    return 0;
}

/* spanscope view FILE... */
int cmd_view(int argc, char **argv) {
    view_args_t a;
    memset(&a, 0, sizeof a);
    if (!(a.in = calloc((size_t)argc + 1, sizeof *a.in)))
        return die(EXIT_DATA, "view: %s", sps_strerror(SPS_ENOMEM));
    int rc = view_parse(argc, argv, &a);
    if (rc == 1) {
        fputs(view_help, stdout);
        rc = 0;
    } else if (rc == 0) {
        rc = view_run(&a);
    }
    free(a.in);
    return rc;
}
