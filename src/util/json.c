/* json.c -- the one JSON string escaper (util.h).  Every JSON text the
 * library writes (Chrome traces, the merge description, the HTML page's
 * data) escapes its strings here, so they all follow one rule, invalid
 * UTF-8 included. */
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

/* "\u00XX" for the control character c (C0, DEL or C1) into buf (7 bytes). */
static const char *u00(unsigned c, char *buf) {
    static const char hex[] = "0123456789abcdef";
    memcpy(buf, "\\u00", 4);
    buf[4] = hex[(c >> 4) & 15];
    buf[5] = hex[c & 15];
    buf[6] = 0;
    return buf;
}

/* The escape for the sequence at s (n bytes left) under flags into buf,
 * with *k set to the bytes it stands for; NULL when the sequence at s is
 * copied as it is (*k bytes of plain ASCII or valid UTF-8). */
static const char *escape_of(const unsigned char *s, size_t n, unsigned flags,
                             char *buf, size_t *k) {
    unsigned c = s[0];
    *k = 1;
    if (c == '"') return "\\\"";
    if (c == '\\') return "\\\\";
    if (c == '<' && (flags & SPS__JSON_IN_SCRIPT)) return "\\u003c";
    if (c < 0x20 || c == 0x7F) return u00(c, buf);
    if (c < 0x80) return NULL;
    *k = sps__utf8_len(s, n);
    if (!*k) {
        *k = 1;
        return "\\ufffd";
    }
    /* C1 controls (U+0080..U+009F) as C0's are: a JSON file printed to a
     * terminal cannot act on them */
    if (*k == 2 && c == 0xC2 && s[1] <= 0x9F) return u00(s[1], buf);
    /* U+2028 and U+2029 are valid in JSON but end a line in JavaScript
     * before ES2019: escaped, so that the text is JavaScript too */
    if (*k == 3 && c == 0xE2 && s[1] == 0x80 && (s[2] == 0xA8 || s[2] == 0xA9))
        return s[2] == 0xA8 ? "\\u2028" : "\\u2029";
    return NULL;
}

void sps__json_escape(const char *str, size_t n, unsigned flags,
                      sps__json_sink_fn put, void *ctx) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, run = 0; /* s[i - run, i) is plain, not yet given */
    while (i < n) {
        char buf[8];
        size_t k;
        const char *esc = escape_of(s + i, n - i, flags, buf, &k);
        if (esc) {
            if (run) put(ctx, (const char *)s + i - run, run);
            put(ctx, esc, strlen(esc));
            run = 0;
        } else {
            run += k;
        }
        i += k;
    }
    if (run) put(ctx, (const char *)s + n - run, run);
}

/* A growing string for sps__json_quote. */
typedef struct qbuf {
    char *p;
    size_t n, cap;
    int oom;
} qbuf_t;

/* Sink of sps__json_quote: appends to the qbuf_t at ctx. */
static void qbuf_put(void *ctx, const char *p, size_t n) {
    qbuf_t *b = ctx;
    if (b->oom) return;
    if (b->n + n + 2 > b->cap) { /* room for the closing quote and NUL */
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 2) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

char *sps__json_quote(const char *s, size_t *len) {
    qbuf_t b = {0};
    qbuf_put(&b, "\"", 1);
    sps__json_escape(s, strlen(s), 0, qbuf_put, &b);
    qbuf_put(&b, "\"", 1);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    b.p[b.n] = 0;
    if (len) *len = b.n;
    return b.p;
}

/* Sink of sps__json_fputs: writes to the FILE at ctx. */
static void file_put(void *ctx, const char *p, size_t n) {
    fwrite(p, 1, n, (FILE *)ctx);
}

int sps__json_fputs(FILE *fp, const char *s, unsigned flags) {
    sps__json_escape(s, strlen(s), flags, file_put, fp);
    return ferror(fp) ? -1 : 0;
}
