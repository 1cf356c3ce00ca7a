/*
 * cmd_inspect.c -- spanscope inspect FILE: what a recording holds
 * (metadata, ranks, threads, sizes).  Argument parsing only; the view is
 * sps__inspect_write (src/api/inspect.c).
 */
#include "api/api.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char inspect_help[] =
    "usage: spanscope inspect FILE\n"
    "\n"
    "Prints what FILE (.h5, .json, .json.gz, .pftrace) holds: its format and\n"
    "size; for an .h5 the schema, layout, regions, index rows, events and\n"
    "every /metadata attribute; the processes (ranks), the threads with\n"
    "their span counts, and the time the spans cover.\n";

/* spanscope inspect FILE */
int cmd_inspect(int argc, char **argv) {
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(inspect_help, stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return die(EXIT_USAGE, "inspect: unknown option '%s' (see spanscope inspect --help)", argv[i]);
        if (file) return die(EXIT_USAGE, "inspect: one FILE only (got '%s' and '%s')", file, argv[i]);
        file = argv[i];
    }
    if (!file) return die(EXIT_USAGE, "inspect: missing FILE (see spanscope inspect --help)");
    input_watchdog(file);
    int rc = sps__inspect_write(stdout, file);
    if (rc) return die(rc == SPS_EINVAL ? EXIT_USAGE : EXIT_DATA, "inspect: %s", sps__err_msg());
    return 0;
}
