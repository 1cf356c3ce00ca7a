/* xml.c -- the XML/HTML text escaper (util.h): the flame graph's SVG
 * writes its names through it.  (formats/html.c still has a copy of its
 * own, put_html, with the same rule; it can call this one.) */
#include "util/util.h"

#include <stdio.h>

int sps__xml_fputs(FILE *fp, const char *s) {
    for (; *s; s++) {
        const char *e = NULL;
        switch (*s) {
        case '&': e = "&amp;"; break;
        case '<': e = "&lt;"; break;
        case '>': e = "&gt;"; break;
        case '"': e = "&quot;"; break;
        case '\'': e = "&#39;"; break;
        default:
            /* XML 1.0 forbids control characters but tab and newlines */
            if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r')
                e = "\xef\xbf\xbd";
        }
        if (e ? fputs(e, fp) < 0 : fputc(*s, fp) == EOF) return -1;
    }
    return 0;
}
