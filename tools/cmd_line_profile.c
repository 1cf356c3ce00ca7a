/*
 * cmd_line_profile.c -- spanscope line-profile FILE: the line profiles a
 * use_line_profiler=True run stored (rank<N>/line_profile), printed as
 * scope-profiler's line-profile subcommand prints them.  Reading and
 * formatting them is the Python package's (spanscope.results._line_cli),
 * so this subcommand hands its arguments to it (cli_python).
 */
#include "cli.h"

/* spanscope line-profile ARGS... */
int cmd_line_profile(int argc, char **argv) {
    return cli_python(argc, argv);
}
