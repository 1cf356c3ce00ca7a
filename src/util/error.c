/* error.c -- the library's one error message (util.h): thread-local, one
 * line, set by whichever internal call failed, read by the faces.  (The
 * codes and their names are src/core/error.c's.) */
#include "util/util.h"

#include <stdarg.h>
#include <string.h>

#define ERR_CAP 512

static _Thread_local char g_msg[ERR_CAP];

/* Formats into g_msg through a copy, so that arguments pointing into
 * g_msg itself ("%s: %s", path, sps__err_msg()) read the old message. */
static void err_vset(const char *fmt, va_list ap) {
    char tmp[ERR_CAP];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    for (char *p = tmp; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    memcpy(g_msg, tmp, strlen(tmp) + 1);
}

void sps__err_set(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    err_vset(fmt, ap);
    va_end(ap);
}

int sps__err_fail(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    err_vset(fmt, ap);
    va_end(ap);
    return code;
}

void sps__err_clear(void) { g_msg[0] = 0; }

const char *sps__err_msg(void) { return g_msg; }

int sps__err_copy(int code, char *buf, size_t cap) {
    if (!code || !buf || !cap) return code;
    size_t n = strlen(g_msg);
    if (n >= cap) n = sps__utf8_cut(g_msg, cap - 1); /* keeps it UTF-8 */
    memcpy(buf, g_msg, n);
    buf[n] = 0;
    return code;
}
