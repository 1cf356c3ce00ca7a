#include "testutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

const char *tu_path(const char *name) {
    static char buf[8][1024];
    static int slot;
    const char *dir = getenv("SPS_TEST_TMP");
    char *b = buf[slot++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", dir && *dir ? dir : "/tmp", name);
    return b;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tu_spin_ns(int64_t ns) {
    int64_t end = now_ns() + ns;
    while (now_ns() < end) {
    }
}

int tu_system(const char *fmt, ...) {
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    return rc == -1 ? -1 : (rc >> 8) & 0xff;
}
