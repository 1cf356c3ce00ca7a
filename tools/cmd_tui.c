/*
 * cmd_tui.c -- spanscope tui FILE: the terminal browser is Python's
 * (spanscope.integrations.tui, over textual), so this subcommand hands its
 * arguments and the terminal to the Python package (cli_python); without
 * the package or textual it fails with one line saying which is missing.
 */
#include "cli.h"

/* spanscope tui ARGS... */
int cmd_tui(int argc, char **argv) {
    return cli_python(argc, argv);
}
