/*
 * spanscope.c -- the command-line tool's dispatcher.
 *
 *     spanscope COMMAND [ARGS...]      (COMMAND: see CLI_COMMANDS in cli.h)
 *     spanscope --help | --version
 *
 * It only dispatches: each subcommand is one function in its own file
 * (tools/cmd_NAME.c), taking its own argv (argv[0] is the subcommand's
 * name) and returning the exit status; the list of them is CLI_COMMANDS in
 * cli.h.
 *
 * Exit status: 0 success, 1 bad input data (missing, unreadable or invalid
 * file), 2 bad usage.  Every error is one line on stderr, "spanscope:
 * <message>"; nothing else goes to stderr.
 *
 * Subcommands that read files run in a child process: the readers check
 * everything they can, but HDF5 itself (1.10) still crashes on some corrupt
 * files (its global heap reader trusts the file), and a crash there must
 * come out as an error line, not a core dump.  Some corrupt files make it
 * loop forever instead, so the child also runs under a time limit that
 * grows with the input's size (cli_input_watchdog).
 */
#include "spanscope.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "cli.h"
#include "formats/h5_read.h"

/* A subcommand: its name, its entry point (argv[0] is the name), whether
 * it reads untrusted files, and its line in the help. */
typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    int isolate; /* reads untrusted files: run it in a child process */
    const char *summary;
} command_t;

#define CLI_ENTRY(name, isolate, summary) {#name, cmd_##name, isolate, summary},
static const command_t commands[] = {CLI_COMMANDS(CLI_ENTRY)};
#undef CLI_ENTRY
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* Whether cmd, as typed, names the command called name: a '_' of the C
 * name is a '-' on the command line (import_native: import-native). */
static int command_is(const char *cmd, const char *name) {
    for (; *cmd && *name; cmd++, name++)
        if (*cmd != (*name == '_' ? '-' : *name)) return 0;
    return *cmd == *name;
}

/* Prints the tool's help to fp. */
static void main_help(FILE *fp) {
    fprintf(fp, "usage: spanscope COMMAND [ARGS...]\n"
                "       spanscope --help | --version\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        char shown[32];
        snprintf(shown, sizeof shown, "%s", commands[i].name);
        for (char *c = shown; *c; c++)
            if (*c == '_') *c = '-';
        fprintf(fp, "  %-13s %s\n", shown, commands[i].summary);
    }
    fprintf(fp, "\nRun 'spanscope COMMAND --help' for a command's options.\n");
}

/* Runs c in a child process and returns its exit status.  A child killed
 * by a crash signal gives one error line and EXIT_DATA; one killed by
 * another signal (SIGPIPE under `| head`, SIGINT) makes this process die
 * the same way.  The child dies with this process (killed by a timeout, for
 * example) where the system allows.  Without fork, c runs here. */
/* The isolated child, for the parent's handler to pass signals on to. */
static volatile pid_t isolated_pid;

/* The parent's handler of SIGINT, SIGTERM and SIGHUP while it waits: the
 * child gets the signal (a child that handles it -- view's server stops
 * cleanly and exits 0 -- decides the outcome; one that does not dies of
 * it, and the parent then re-raises it below). */
static void pass_on(int sig) {
    int e = errno;
    if (isolated_pid > 0) kill(isolated_pid, sig);
    errno = e;
}

/* Installs h for the signals that ask a program to stop. */
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

static int run_isolated(const command_t *c, int argc, char **argv) {
    int st;
    sigset_t stops, old;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    fflush(stdout);
    fflush(stderr);
    sigprocmask(SIG_BLOCK, &stops, &old); /* none lost between fork and handlers */
    pid_t parent = getpid(), pid = fork();
    (void)parent;
    if (pid <= 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (pid < 0) return c->run(argc, argv);
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(EXIT_DATA);
#endif
        int rc = c->run(argc, argv);
        fflush(stdout);
        _exit(rc);
    }
    isolated_pid = pid;
    on_stop_signals(pass_on);
    sigprocmask(SIG_SETMASK, &old, NULL);
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
        return die(EXIT_DATA, "%s: reading the input crashed the %s (%s): the file "
                   "is corrupt", c->name, strcmp(c->name, "view") ? "HDF5 library"
                   : "viewer", strsignal(sig));
    signal(sig, SIG_DFL);
    sigprocmask(SIG_UNBLOCK, &stops, NULL);
    raise(sig);
    return 128 + sig;
}

/* Dispatches to the subcommand named by argv[1]; handles the tool's own
 * --help and --version. */
int main(int argc, char **argv) {
    if (argc < 2)
        return die(EXIT_USAGE, "missing command (see spanscope --help)");
    const char *cmd = argv[1];
    /* the HDF5 check of sps__h5_guard (and its clean copy), in the fresh
     * process it execs */
    if ((argc == 3 || argc == 4) && !strcmp(cmd, "__h5check")) {
        int rc = sps__h5_walk(argv[2]);
        return rc || argc == 3 ? rc : sps__h5_copy(argv[2], argv[3]);
    }
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        main_help(stdout);
        return 0;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("spanscope %s\n", SPS_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (command_is(cmd, commands[i].name))
            return commands[i].isolate
                       ? run_isolated(&commands[i], argc - 1, argv + 1)
                       : commands[i].run(argc - 1, argv + 1);
    if (cmd[0] == '-')
        return die(EXIT_USAGE, "unknown option '%s' (see spanscope --help)",
                   cmd);
    return die(EXIT_USAGE, "unknown command '%s' (see spanscope --help)", cmd);
}
