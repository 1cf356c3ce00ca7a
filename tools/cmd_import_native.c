/*
 * cmd_import_native.c -- spanscope import-native INPUTS... -o OUT.h5: the
 * per-rank files of scope-profiler's C and Fortran region APIs (.spt
 * traces, *_rank<NNNNN>.h5 profiles) as one profile.  Reading .spt is the
 * Python package's (spanscope.results.convert_traces), so this subcommand
 * hands its arguments to it (cli_python).
 */
#include "cli.h"

/* spanscope import-native ARGS... */
int cmd_import_native(int argc, char **argv) {
    return cli_python(argc, argv);
}
