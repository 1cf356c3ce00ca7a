/* utf8.c -- checking, repairing, measuring and printing UTF-8 (util.h).
 * Names come from programs and files nobody vetted; everything the
 * library writes must still be valid UTF-8, so every byte that starts no
 * valid sequence becomes U+FFFD, by the one rule of sps__utf8_len, and
 * nothing it prints to a terminal may act on it. */
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

size_t sps__utf8_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t len;
    uint32_t cp, min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

int sps__utf8_valid(const void *s, size_t n) {
    const unsigned char *p = s;
    for (size_t i = 0; i < n;) {
        size_t k = p[i] ? sps__utf8_len(p + i, n - i) : 0;
        if (!k) return 0;
        i += k;
    }
    return 1;
}

char *sps__utf8_sanitize(const char *s, size_t len) {
    char *out = malloc(len * 3 + 1), *o = out;
    if (!out) return NULL;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t k = sps__utf8_len(p + i, len - i);
        if (k) {
            memcpy(o, p + i, k);
            o += k;
            i += k;
        } else {
            memcpy(o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    *o = 0;
    return out;
}

size_t sps__utf8_width(const char *s) {
    size_t w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

size_t sps__utf8_prefix(const char *s, size_t cols) {
    size_t i = 0, seen = 0;
    for (; s[i]; i++) {
        int lead = ((unsigned char)s[i] & 0xC0) != 0x80;
        if (lead && seen == cols) break;
        seen += lead;
    }
    return i;
}

size_t sps__utf8_cut(const char *s, size_t n) {
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    return n;
}

/* Non-zero for the sequence at p when a terminal could act on it: a C0
 * control, DEL, or a C1 control (U+0080..U+009F, encoded C2 80..C2 9F).
 * *len gets the sequence's length in bytes (1 for any other byte). */
static int is_control(const unsigned char *p, size_t *len) {
    *len = 1;
    if (*p < 0x20 || *p == 0x7f) return 1;
    if (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
        *len = 2;
        return 1;
    }
    return 0;
}

/* put_cell on text known to be valid UTF-8 (its widths and cuts count
 * code points, so an invalid byte would be miscounted). */
static void put_valid_cell(FILE *fp, size_t indent, const char *s, size_t width) {
    if (indent > width) indent = width;
    size_t room = width - indent, w = sps__utf8_width(s);
    size_t keep = w <= room ? w : (room > 3 ? room - 3 : 0), len;
    /* a C1 control's two bytes are one code point: the cut keeps both */
    const unsigned char *p = (const unsigned char *)s, *end = p + sps__utf8_prefix(s, keep);
    fprintf(fp, "%*s", (int)indent, "");
    for (; p < end; p += len) fputc(is_control(p, &len) ? '?' : *p, fp);
    size_t col = indent + keep;
    if (w > room) col += (size_t)fprintf(fp, "%.*s", (int)(room - keep), "...");
    fprintf(fp, "%*s", (int)(width - col), "");
}

/* s when it is valid UTF-8, else a repaired copy in *fixed (caller
 * frees; "?" when out of memory): what the printers print. */
static const char *valid_text(const char *s, char **fixed) {
    size_t n = strlen(s);
    *fixed = NULL;
    if (sps__utf8_valid(s, n)) return s;
    *fixed = sps__utf8_sanitize(s, n);
    return *fixed ? *fixed : "?";
}

void sps__utf8_put_cell(FILE *fp, size_t indent, const char *s, size_t width) {
    char *fixed;
    put_valid_cell(fp, indent, valid_text(s, &fixed), width);
    free(fixed);
}

void sps__utf8_put_text(FILE *fp, const char *s, size_t max_cols) {
    char *fixed;
    const char *v = valid_text(s, &fixed);
    size_t w = sps__utf8_width(v);
    put_valid_cell(fp, 0, v, max_cols && w > max_cols ? max_cols : w);
    free(fixed);
}
