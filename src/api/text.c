/*
 * text.c -- sps_terminal_text (spanscope.h): the library's rule for
 * printing a name or value from a file to a terminal (util.h,
 * sps__utf8_put_text), for the faces that format their own tables (the
 * Python package's summary box, key_averages tables), so that they clean
 * and cut names exactly as the C tables do.
 */
#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t sps_terminal_text(const char *s, size_t max_cols, char *buf, size_t cap) {
    if (!s) s = "";
    char *out = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&out, &len);
    if (!fp) {
        if (cap) buf[0] = 0;
        return 0;
    }
    sps__utf8_put_text(fp, s, max_cols);
    if (fclose(fp) != 0) len = 0;
    if (cap) {
        size_t n = !out ? 0 : len < cap ? len : sps__utf8_cut(out, cap - 1);
        if (n) memcpy(buf, out, n);
        buf[n] = 0;
    }
    free(out);
    return len;
}
