/* xml.c -- the XML/HTML text escaper (util.h): the flame graph's SVG and
 * the HTML page (its title, legend, bars and table) write the names of a
 * file through it, so that a name is text in both, whatever it holds. */
#include "util/util.h"

#include <stdio.h>
#include <string.h>

/* The entity or replacement for the sequence at p (n bytes left), with
 * *k set to the bytes it stands for; NULL when those *k bytes are copied
 * as they are. */
static const char *xml_escape_of(const unsigned char *p, size_t n, size_t *k) {
    static const char fffd[] = "\xef\xbf\xbd";
    *k = 1;
    switch (*p) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&#39;";
    case '\t': case '\n': case '\r': return NULL;
    default: break;
    }
    /* XML 1.0 forbids the other C0 controls; DEL and the C1 controls are
     * allowed but "discouraged" there and a parse error in HTML: all shown
     * as U+FFFD, as are bytes that start no valid UTF-8 sequence */
    if (*p < 0x20 || *p == 0x7f) return fffd;
    if (*p < 0x80) return NULL;
    *k = sps__utf8_len(p, n);
    if (!*k) {
        *k = 1;
        return fffd;
    }
    return *k == 2 && p[0] == 0xC2 && p[1] <= 0x9F ? fffd : NULL;
}

int sps__xml_fputs(FILE *fp, const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t k;
        const char *e = xml_escape_of(p + i, n - i, &k);
        if (e ? fputs(e, fp) < 0 : fwrite(p + i, 1, k, fp) != k) return -1;
        i += k;
    }
    return 0;
}
