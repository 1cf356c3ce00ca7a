/* gen_markers.c -- writes the LIKWID marker files under tests/python/data/likwid
 * (make.sh runs it).  Built against the real LIKWID (Debian likwid 5.2.2,
 * -DLIKWID_PERFMON -llikwid) and run under likwid-perfctr -m: the marker file
 * is LIKWID's own likwid_markerClose output, copied here before
 * likwid-perfctr deletes it.  GEN_OUT names the copy, GEN_AFTER a command
 * run after the copy (with LIKWID's environment).
 *
 * No PMU on the machines that made them: make.sh runs LIKWID where
 * /dev/cpu/N/msr are sparse regular files, so every counter reads back what
 * was last written there.  A regular file has one byte per offset, where
 * the msr driver has one 8-byte register per MSR index, so neighbouring
 * registers share bytes: FIXC1 (0x30A) reads FIXC0 (0x309) shifted right by
 * 8 bits, FIXC2 by 16; PMC1..PMC3 (0xC2..0xC4) read PMC0 (0xC1) shifted by
 * 8, 16, 24.  Inside each call of "compute" this program adds 2^24 to FIXC0
 * and to PMC0 of its CPU, so LIKWID's START/STOP deltas per call are exact,
 * known numbers: INSTR_RETIRED_ANY 16777216, CPU_CLK_UNHALTED_CORE 65536,
 * CPU_CLK_UNHALTED_REF 256, PMC0 16777216, PMC1 65536, PMC2 256, PMC3 1.
 * "io" adds nothing.  Thread t (of 2) calls "compute" 3 + t times; "outer"
 * encloses them once per thread; with GEN_GROUPS=2 all of it runs once per
 * event group (LIKWID_MARKER_SWITCH between).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <likwid-marker.h>
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void bump(uint32_t reg, uint64_t add) {
    char path[64];
    snprintf(path, sizeof path, "/dev/cpu/%d/msr", sched_getcpu());
    int fd = open(path, O_RDWR);
    if (fd < 0) return;
    uint64_t v = 0;
    if (pread(fd, &v, sizeof v, reg) != (ssize_t)sizeof v) v = 0;
    v += add;
    if (pwrite(fd, &v, sizeof v, reg) != (ssize_t)sizeof v) perror("pwrite");
    close(fd);
}

static volatile double sink;

int main(void) {
    LIKWID_MARKER_INIT;
#pragma omp parallel num_threads(2)
    {
        LIKWID_MARKER_THREADINIT;
        LIKWID_MARKER_REGISTER("compute");
        LIKWID_MARKER_REGISTER("outer");
    }
    int ngroups = getenv("GEN_GROUPS") ? atoi(getenv("GEN_GROUPS")) : 1;
    for (int g = 0; g < ngroups; g++) {
#pragma omp parallel num_threads(2)
        {
            int t = omp_get_thread_num();
            LIKWID_MARKER_START("outer");
            for (int i = 0; i < 3 + t; i++) {
                LIKWID_MARKER_START("compute");
                for (int k = 0; k < 100000; k++) sink += k * 0.5;
                bump(0x309, 1u << 24); /* FIXC0 (and FIXC1, FIXC2: see above) */
                bump(0xC1, 1u << 24);  /* PMC0 (and PMC1..PMC3) */
                LIKWID_MARKER_STOP("compute");
            }
            LIKWID_MARKER_STOP("outer");
#pragma omp master
            {
                LIKWID_MARKER_START("io");
                usleep(1000);
                LIKWID_MARKER_STOP("io");
            }
        }
        LIKWID_MARKER_SWITCH;
    }
    LIKWID_MARKER_CLOSE;
    const char *fp = getenv("LIKWID_FILEPATH"), *out = getenv("GEN_OUT");
    if (fp && out) { /* keep LIKWID's marker file: likwid-perfctr deletes it */
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", fp, out);
        if (system(cmd) != 0) return 1;
    }
    /* GEN_AFTER: a command run here, where LIKWID's environment is set
     * (make.sh: spanscope's perfmon read-back through pylikwid) */
    if (getenv("GEN_AFTER") && system(getenv("GEN_AFTER")) != 0) return 1;
    return 0;
}
