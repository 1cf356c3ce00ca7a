/* cli.h -- what the files of the spanscope command-line tool share.
 *
 * The tool is a dispatcher (tools/spanscope.c) over subcommands, one file
 * each: tools/cmd_NAME.c defines int cmd_NAME(int argc, char **argv)
 * (argv[0] is the subcommand's name), parses its arguments and calls the
 * library; analysis and file formats live in src/, never here.  Adding a
 * subcommand is writing its file and one line of CLI_COMMANDS below.
 *
 * Exit status: 0 success, EXIT_DATA (1) bad input data, EXIT_USAGE (2) bad
 * usage (or a feature this installation lacks); `check` adds 3 for "a
 * region got slower" (cmd_check.c).  Every error is one line on stderr, "spanscope: <message>"
 * (cli_die); nothing else goes to stderr but progress on a terminal. */
#ifndef SPS_CLI_H
#define SPS_CLI_H

#include <stddef.h>
#include <stdint.h>

#define EXIT_DATA 1
#define EXIT_USAGE 2

/* The subcommands, in the order of the tool's help: X(name, isolate,
 * summary).  isolate: the subcommand reads untrusted files, so the
 * dispatcher runs it in a child process (HDF5 may crash or hang on a
 * corrupt file; see run_isolated in spanscope.c). */
#define CLI_COMMANDS(X)                                                        \
    X(report, 1, "print the summary table of a profile (.h5)")                 \
    X(convert, 1, "convert between .h5, .json, .json.gz and .pftrace")         \
    X(merge, 1, "merge per-rank recordings into one, clocks aligned")          \
    X(diff, 1, "compare two recordings: what got slower or faster")            \
    X(html, 1, "write a self-contained HTML report (timeline, bars, table)")   \
    X(view, 1, "a local viewer: zoom through any number of spans in a browser") \
    X(inspect, 1, "what a file holds: metadata, ranks, threads, sizes")       \
    X(export, 1, "export for speedscope, snakeviz (.prof), SVG, Chrome, JSON") \
    X(plot, 0, "draw plots of a profile (Python package with matplotlib)")     \
    X(run, 0, "run a program profiled: run -- CMD, or a Python script")      \
    X(tui, 0, "browse a profile in the terminal (Python package with textual)") \
    X(import_native, 0, "the C/Fortran API's per-rank files as one .h5 (Python package)") \
    X(line_profile, 0, "line profiles a use_line_profiler run stored (Python package)") \
    X(native_lines, 0, "hottest source lines per region from stack samples (Python package)") \
    X(recover, 1, "write the profile of a run that died (SIGKILL, segfault, OOM)") \
    X(check, 1, "CI gate: fail when a region got slower than a baseline")   \
    X(config, 0, "the settings taken without code, resolved: variables, TOML")

/* One entry point per subcommand: int cmd_report(int, char **), ... */
#define CLI_DECLARE(name, isolate, summary) int cmd_##name(int argc, char **argv);
CLI_COMMANDS(CLI_DECLARE)
#undef CLI_DECLARE

/* Prints "spanscope: <message>" on stderr and returns code. */
int cli_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Limits the time this (child) process may spend reading path: 20 s plus
 * 1 s per 4 MiB, or $SPANSCOPE_READ_TIMEOUT seconds (0: no limit).  Past
 * it, SIGALRM ends the process and the dispatcher reports it.  Call it in
 * subcommands that read untrusted files, before opening them; alarm(0)
 * once the input is read. */
void cli_input_watchdog(const char *path);

/* Option parsing: the value of option name at argv[*i] ("--name=value" or
 * "--name value", advancing *i; NULL when missing), and whether arg is that
 * option. */
const char *cli_opt_value(int argc, char **argv, int *i, const char *name);
int cli_is_opt(const char *arg, const char *name);

/* The output option at argv[*i]: "-o FILE", "-oFILE", "--output FILE"
 * or "--output=FILE".  Returns 1 with *out set (and *i advanced past a
 * separate FILE), -1 when FILE is missing (argv[*i] is the last argument),
 * 0 when argv[*i] is not the output option.  The one parser of the
 * subcommands that write a file (html, merge). */
int cli_output_opt(int argc, char **argv, int *i, const char **out);

/* Parses a count (decimal digits only, no sign) into *out.  Returns 0, or
 * -1 when s is not one or exceeds max. */
int cli_parse_count(const char *s, unsigned long long max,
                    unsigned long long *out);

/* Parses a rank list v, ranks and ranges A-B (A <= B) separated by
 * commas, each 0..INT32_MAX ("0,2-3" is 0, 2, 3), into ranks (the
 * caller's, room for cap), the count into *n.  Returns 0, or -1 when v is
 * not such a list or holds more than cap ranks (the caller names the
 * option in its error).  The one parser of --ranks (html, export). */
int cli_parse_ranks(const char *v, int64_t *ranks, size_t cap, size_t *n);

/* Shows "\r<what>: N% (DONE of TOTAL spans)" on stderr when it is a
 * terminal and total is known, at most twice a second and once more at
 * the end (final set, which ends the line): the progress of the
 * subcommands that read many spans (convert, html).  total may be an
 * estimate; the percentage stops at 100. */
void cli_progress(const char *what, uint64_t done, uint64_t total, int final);

/* Runs the subcommand argv (argv[0] its name) in the Python package
 * instead (plot, run, export json: they are Python's): replaces this process
 * with $SPANSCOPE_PYTHON (default python3) running spanscope._cli's
 * python_command.  Returns only on failure: EXIT_USAGE after one line
 * saying that the Python package is needed. */
int cli_python(int argc, char **argv);

/* spanscope run --follow -- CMD, once cmd_run has set the environment up
 * (cmd_run_follow.c): the exit status to end with. */
int cmd_run_follow(char **cmd, int quiet);

#define die cli_die
#define input_watchdog cli_input_watchdog

#endif
