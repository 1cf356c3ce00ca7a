/* fuzz_recover.c -- libFuzzer target: sps_recover over a hostile live
 * directory (core/crash.c's files, api/recover.c).  The input is
 *   u32 n, then n bytes of "log", then the rest as "chunks"; n's top bit
 *   set: a u32 m follows, and m bytes of "samples" (core/crash_samples.h)
 *   follow the log; n's next bit (1 << 30) set: a u32 k follows (after m),
 *   and k bytes of "slots" (the slot table) follow the log and the samples
 * written to a fresh "<tmp>/f.h5.live-1/"; recover must write a profile or
 * refuse with an error, never crash, hang or read out of bounds.  The
 * seeds (fuzz/corpus/recover) are real directories of killed runs
 * ("samples": one sampled at 1000 Hz with memory values, its samples file
 * with the stacks' frames; "slots": one whose slots are in the table). */
#include <spanscope.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[256], g_live[300];

static void put(const char *name, const uint8_t *p, size_t n) {
    char path[400];
    snprintf(path, sizeof path, "%s/%s", g_live, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) abort();
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) abort();
        p += w;
        n -= (size_t)w;
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof g_dir, "%s/spanscope-fuzz-recover-%d",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
        mkdir(g_dir, 0700);
        snprintf(g_live, sizeof g_live, "%s/f.h5.live-1", g_dir);
    }
    uint32_t n = 0, m = 0, k = 0;
    size_t head = 4;
    if (size >= 4) memcpy(&n, data, 4);
    int with_samples = (n >> 31) & 1, with_slots = (n >> 30) & 1;
    n &= 0x3FFFFFFFu;
    if (with_samples && size >= head + 4) {
        memcpy(&m, data + head, 4);
        head += 4;
    }
    if (with_slots && size >= head + 4) {
        memcpy(&k, data + head, 4);
        head += 4;
    }
    size_t body = size >= head ? size - head : 0;
    if (n > body) n = (uint32_t)body;
    if (m > body - n) m = (uint32_t)(body - n);
    if (k > body - n - m) k = (uint32_t)(body - n - m);
    mkdir(g_live, 0700);
    put("log", data + head, size >= head ? n : 0);
    if (with_samples) put("samples", data + head + n, m);
    if (with_slots) put("slots", data + head + n + m, k);
    put("chunks", data + head + n + m + k, size >= head ? body - n - m - k : 0);
    char out[300], err[512];
    snprintf(out, sizeof out, "%s/f.h5", g_dir);
    int rc = sps_recover(out, NULL, err, sizeof err);
    if (rc && strlen(err) == 0) abort(); /* an error always says why */
    /* a refused directory stays: clear it for the next input */
    char path[400];
    snprintf(path, sizeof path, "%s/log", g_live);
    unlink(path);
    snprintf(path, sizeof path, "%s/chunks", g_live);
    unlink(path);
    snprintf(path, sizeof path, "%s/spill", g_live);
    unlink(path);
    snprintf(path, sizeof path, "%s/samples", g_live);
    unlink(path);
    snprintf(path, sizeof path, "%s/slots", g_live);
    unlink(path);
    rmdir(g_live);
    unlink(out);
    return 0;
}
