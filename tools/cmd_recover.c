/*
 * cmd_recover.c -- spanscope recover PATH: the profile of a run that died
 * (SIGKILL, a segfault, an OOM kill) from the live directories it left next
 * to its output, PATH.live-<pid> (sps_recover, src/api/recover.c;
 * docs/crash-recovery.md).
 */
#include <spanscope.h>

#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char recover_help[] =
    "usage: spanscope recover PATH\n"
    "\n"
    "Writes PATH, the profile a run configured to write PATH recorded before it\n"
    "died (SIGKILL, a segfault, an OOM kill, a node failure of the job): from\n"
    "the crash-safe live directories PATH.live-<pid> it left behind, which are\n"
    "removed once written.  Calls still open when it died end at the last\n"
    "recorded time (counted in /metadata recovered_open_calls).  Several\n"
    "directories (ranks, earlier crashes) are written to STEM.pid<PID>.EXT.\n"
    "\n"
    "options:\n"
    "  -q, --quiet  no summary line\n"
    "  -h, --help   show this help and exit\n"
    "\n"
    "Exit status: 0 written, 1 nothing to recover or a damaged directory, 2 bad usage.\n";

/* spanscope recover PATH */
int cmd_recover(int argc, char **argv) {
    const char *path = NULL;
    int quiet = 0, opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!opts_done && !strcmp(a, "--")) {
            opts_done = 1;
        } else if (!opts_done && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
            fputs(recover_help, stdout);
            return 0;
        } else if (!opts_done && (!strcmp(a, "-q") || !strcmp(a, "--quiet"))) {
            quiet = 1;
        } else if (!opts_done && a[0] == '-' && a[1]) {
            return cli_die(EXIT_USAGE, "recover: unknown option '%s' (see spanscope recover --help)", a);
        } else if (path) {
            return cli_die(EXIT_USAGE, "recover: one PATH only, got '%s' too", a);
        } else {
            path = a;
        }
    }
    if (!path) return cli_die(EXIT_USAGE, "recover: missing PATH (the run's output path)");
    sps_recover_info_t info;
    char err[512];
    int rc = sps_recover(path, &info, err, sizeof err);
    if (rc) return cli_die(rc == SPS_EINVAL ? EXIT_USAGE : EXIT_DATA, "recover: %s",
                           err[0] ? err : sps_strerror(rc));
    if (!quiet)
        printf("recovered %llu calls of %u thread%s in %u process%s into %s"
               " (%llu open at the end, closed there; %llu records missing)\n",
               (unsigned long long)((info.records + info.open_closed + info.carried) / 2), info.threads,
               info.threads == 1 ? "" : "s", info.processes, info.processes == 1 ? "" : "es",
               info.processes == 1 ? path : "STEM.pid<PID> files next to it",
               (unsigned long long)info.open_closed, (unsigned long long)info.lost_records);
    return 0;
}
