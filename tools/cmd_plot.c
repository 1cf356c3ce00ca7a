/*
 * cmd_plot.c -- spanscope plot ...: the plots are Python's
 * (spanscope.plots.main, over matplotlib), so this subcommand hands its
 * arguments to the Python package (cli_python); without the package or
 * matplotlib it fails with one line saying which is missing.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* spanscope plot ARGS... */
int cmd_plot(int argc, char **argv) {
    return cli_python(argc, argv);
}
