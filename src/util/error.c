/* error.c -- the library's one error message (util.h): thread-local, one
 * line, set by whichever internal call failed, read by the faces.  (The
 * codes and their names are src/core/error.c's.) */
#include "util/util.h"

#include <spanscope.h> /* sps_last_errno, sps_last_error: public */

#include <stdarg.h>
#include <string.h>

#define ERR_CAP 512

static _Thread_local char g_msg[ERR_CAP];
/* The operating system's errno behind this thread's last failed write or
 * open (ENOSPC, EROFS, ...), 0 when the failure had none: SPS_EIO and
 * SPS_EPATH name a kind of failure, this names its cause. */
static _Thread_local int g_os_errno;

/* Copies the formatted message tmp into g_msg as one line a terminal only
 * shows: newlines, carriage returns and tabs become spaces; other C0
 * controls, DEL, C1 controls (U+0080..U+009F) and bytes that start no
 * valid UTF-8 sequence become '?'.  Messages quote what files hold (a
 * region name, a path), and every face prints them to a terminal. */
static void err_clean(const char *tmp) {
    const unsigned char *p = (const unsigned char *)tmp;
    char *o = g_msg;
    size_t n = strlen(tmp);
    for (size_t i = 0; i < n;) {
        size_t k = sps__utf8_len(p + i, n - i);
        unsigned c = p[i];
        if (c == '\n' || c == '\r' || c == '\t') *o++ = ' ';
        else if (!k || c < 0x20 || c == 0x7f || (c == 0xC2 && p[i + 1] <= 0x9F)) *o++ = '?';
        else {
            memcpy(o, p + i, k);
            o += k;
        }
        i += k ? k : 1;
    }
    *o = 0;
}

/* Formats into g_msg through a copy, so that arguments pointing into
 * g_msg itself ("%s: %s", path, sps__err_msg()) read the old message. */
static void err_vset(const char *fmt, va_list ap) {
    char tmp[ERR_CAP];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    err_clean(tmp);
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

void sps__err_clear(void) {
    g_msg[0] = 0;
    g_os_errno = 0;
}

void sps__err_os_note(int os_errno) {
    if (os_errno > 0) g_os_errno = os_errno;
}

int sps__err_os(void) { return g_os_errno; }

char *sps__os_cause(char *buf, size_t cap, int os_errno, const char *doing,
                    const char *path) {
    char cause[128];
    const char *m = strerror_r(os_errno, cause, sizeof cause); /* GNU: may not use cause */
    char first = m[0] >= 'A' && m[0] <= 'Z' ? (char)(m[0] - 'A' + 'a') : m[0];
    snprintf(buf, cap, "%c%s (%s %s)", first, m[0] ? m + 1 : "", doing,
             path ? path : "a file");
    return buf;
}

int sps__err_os_fail(int code, const char *doing, const char *path) {
    if (!g_os_errno) return code;
    char text[ERR_CAP];
    return sps__err_fail(code, "%s", sps__os_cause(text, sizeof text, g_os_errno, doing, path));
}

int sps_last_errno(void) { return g_os_errno; }

const char *sps_last_error(void) { return g_msg; }

const char *sps__err_msg(void) { return g_msg; }

int sps__err_copy(int code, char *buf, size_t cap) {
    if (!code || !buf || !cap) return code;
    size_t n = strlen(g_msg);
    if (n >= cap) n = sps__utf8_cut(g_msg, cap - 1); /* keeps it UTF-8 */
    memcpy(buf, g_msg, n);
    buf[n] = 0;
    return code;
}
