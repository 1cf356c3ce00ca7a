/*
 * cmd_run.c -- spanscope run [OPTIONS] SCRIPT [ARGS...]: a Python script
 * run and profiled (scope-profiler's `run`; spanscope._cli's run over
 * ProfileManager.profile_script), so this subcommand hands its arguments
 * to the Python package (cli_python); without the package it fails with
 * one line saying so.  Profiling a program that is not Python (zero-touch)
 * is not available yet: the Python side says so and exits 2.
 */
#include "cli.h"

/* spanscope run ARGS... */
int cmd_run(int argc, char **argv) {
    return cli_python(argc, argv);
}
