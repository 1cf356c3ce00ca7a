/* Helpers shared by the cmocka tests. */
#ifndef SPS_TESTUTIL_H
#define SPS_TESTUTIL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "spanscope.h"

/* A path "<SPS_TEST_TMP or /tmp>/<name>" in a static buffer per call slot. */
const char *tu_path(const char *name);
/* Busy-waits ns nanoseconds on CLOCK_MONOTONIC (exact, unlike sleep). */
void tu_spin_ns(int64_t ns);
/* Runs a shell command, returns its exit status. */
int tu_system(const char *fmt, ...);
#endif
