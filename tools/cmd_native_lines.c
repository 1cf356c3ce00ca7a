/*
 * cmd_native_lines.c -- spanscope native-lines FILE.sps...: the line
 * tables of scope-profiler's stack-sample files (.sps, as sp_start_sampling
 * writes them), samples per source line.  Reading and symbolizing them is
 * the Python package's (spanscope.results._native_samples), so this
 * subcommand hands its arguments to it (cli_python).
 */
#include "cli.h"

/* spanscope native-lines ARGS... */
int cmd_native_lines(int argc, char **argv) {
    return cli_python(argc, argv);
}
