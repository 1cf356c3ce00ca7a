/* bench_startup.c -- what linking spanscope costs a program that starts and
 * exits (bench/bench_startup.py compiles it in each variant and times it).
 *
 *     bench_startup [now|session] [--count]
 *
 * Built with -DSPS_BENCH_NONE it does not use spanscope at all (the
 * uninstrumented reference); otherwise it links libspanscope and either
 * calls one function (now: sps_now_ns, the cost of loading the library) or
 * runs an empty session (session: sps_setup, sps_finalize_to(NULL),
 * sps_shutdown).  --count prints, at exit, the number of shared objects the
 * process has loaded (dl_iterate_phdr; the executable and the vDSO
 * included) and its peak resident set in KiB (VmHWM of /proc/self/status:
 * the parent's wait4 would count the memory the spawning process had before
 * exec as well); the timed runs print nothing. */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SPS_BENCH_NONE
#include "spanscope.h"
#endif

/* dl_iterate_phdr callback: counts every loaded object into *data. */
static int count_one(struct dl_phdr_info *info, size_t size, void *data) {
    (void)info;
    (void)size;
    (*(int *)data)++;
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "now";
    int count = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--count")) count = 1;
    int rc = 0;
#ifndef SPS_BENCH_NONE
    if (!strcmp(mode, "session")) {
        rc = sps_setup(NULL);
        if (!rc) rc = sps_finalize_to(NULL);
        sps_shutdown();
    } else {
        /* one call, so the library is really used (and kept by --as-needed) */
        rc = sps_now_ns() > 0 ? 0 : 1;
    }
#else
    (void)mode;
#endif
    if (count) {
        int n = 0;
        long hwm = -1;
        dl_iterate_phdr(count_one, &n);
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "VmHWM:", 6)) hwm = atol(line + 6);
        if (f) fclose(f);
        printf("%d %ld\n", n, hwm);
    }
    return rc != 0;
}
