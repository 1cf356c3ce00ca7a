/* cli.h -- shared helpers of the spanscope command-line tool.
 *
 * Each subcommand is a function int cmd_NAME(int argc, char **argv) (argv[0]
 * is the subcommand's name) in tools/cmd_NAME.c or tools/spanscope.c, listed
 * in the `commands` table of tools/spanscope.c.  Exit status: 0 success,
 * EXIT_DATA (1) bad input data, EXIT_USAGE (2) bad usage.  Every error is
 * one line on stderr, "spanscope: <message>" (cli_die). */
#ifndef SPS_CLI_H
#define SPS_CLI_H

#define EXIT_DATA 1
#define EXIT_USAGE 2

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

#define die cli_die
#define input_watchdog cli_input_watchdog

#endif
