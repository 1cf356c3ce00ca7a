/*
 * flame_svg.c -- a flame graph of a recording as one SVG document
 * (export.h): an icicle, the root on top, one <rect> per frame drawn (a
 * node of the call tree: a distinct path of regions), its width the
 * node's inclusive time, its children left to right in the order the
 * fold met them, each with a <title> (name, seconds, share) and a label
 * where it fits.  Frames under o->threshold of the root's time, and frames
 * of no time, are not drawn (nor, being no longer, their children).  Every number comes from
 * the call tree of the one fold (sps__export_fold_tree), the same tree
 * the .prof export writes.  No script: a static page or a mail can show
 * it.  Colours: a warm hue per region name (the one string hash), so a
 * region has one colour wherever it appears.
 */
#include "formats/export.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW_PX 16  /* height of one depth */
#define PAD_PX 4   /* space above and below the graph */

/* Where each node goes: x (ns from the left edge) and depth (the root
 * frame is depth 0). */
typedef struct place {
    uint64_t x, next; /* next: where the node's next child starts */
    uint32_t depth;
} place_t;

/* Lays out t's nodes (parents before children, as the fold numbers
 * them).  Returns the array, or NULL on ENOMEM; *depth_max and *root_ns
 * get the deepest depth and the root's width (the top-level calls'
 * total). */
static place_t *lay_out(const sps__tree_t *t, uint32_t *depth_max, uint64_t *root_ns) {
    place_t *p = calloc(t->len ? t->len : 1, sizeof *p);
    if (!p) return NULL;
    uint64_t root_next = 0;
    *depth_max = 0;
    for (size_t i = 0; i < t->len; i++) {
        const sps__tree_node_t *n = &t->n[i];
        uint64_t *next = n->parent >= 0 ? &p[n->parent].next : &root_next;
        p[i].x = p[i].next = *next;
        *next += n->cum.total;
        p[i].depth = n->parent >= 0 ? p[n->parent].depth + 1 : 1;
        if (p[i].depth > *depth_max) *depth_max = p[i].depth;
    }
    *root_ns = root_next;
    return p;
}

/* A warm colour for name (flamegraph.pl's palette: red to yellow). */
static void colour(const char *name, char *buf, size_t cap) {
    uint64_t h = sps__hash_bytes(name, strlen(name));
    snprintf(buf, cap, "rgb(%u,%u,%u)", 205 + (unsigned)(h % 51),
             90 + (unsigned)((h >> 8) % 141), 30 + (unsigned)((h >> 16) % 56));
}

/* One frame: its rect, its title and (when wide enough) its label. */
static void put_frame(FILE *fp, const char *name, double x, double y, double w,
                      uint64_t ns, uint64_t root_ns) {
    char fill[32];
    colour(name, fill, sizeof fill);
    fputs("<g><title>", fp);
    sps__xml_fputs(fp, name);
    fprintf(fp, " (%.6f s, %.2f%%)</title><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
            "height=\"%d\" fill=\"%s\" rx=\"2\"/>", (double)ns / 1e9,
            root_ns ? 100.0 * (double)ns / (double)root_ns : 0.0, x, y, w, ROW_PX - 1, fill);
    size_t fit = w > 12 ? (size_t)((w - 6) / 7) : 0; /* ~7 px a character */
    if (fit >= 3) {
        size_t len = strlen(name);
        char *lab = malloc(fit + 3);
        if (lab) {
            if (len > fit) { /* cut on a character boundary, then ".." */
                size_t k = fit - 2;
                while (k > 0 && ((unsigned char)name[k] & 0xC0) == 0x80) k--;
                memcpy(lab, name, k);
                memcpy(lab + k, "..", 3);
            } else {
                memcpy(lab, name, len + 1);
            }
            fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\">", x + 3, y + ROW_PX - 4);
            sps__xml_fputs(fp, lab);
            fputs("</text>", fp);
            free(lab);
        }
    }
    fputs("</g>\n", fp);
}

/* The document around the frames: prolog (unless scalable), size. */
static void put_head(FILE *fp, const sps__export_opts_t *o, unsigned width, unsigned height) {
    if (!o->scalable)
        fputs("<?xml version=\"1.0\" standalone=\"no\"?>\n", fp);
    fprintf(fp, "<svg version=\"1.1\" ");
    if (o->scalable) fprintf(fp, "viewBox=\"0 0 %u %u\" ", width, height);
    else fprintf(fp, "width=\"%u\" height=\"%u\" ", width, height);
    fputs("xmlns=\"http://www.w3.org/2000/svg\" font-family=\"monospace\" "
          "font-size=\"11\">\n", fp);
}

int sps__flame_svg_write(FILE *fp, sps__tlr_t *r, sps__export_sel_t *sel,
                         const sps__export_opts_t *o) {
    if (o->width < 10 || o->width > 100000 || !(o->threshold >= 0 && o->threshold < 1))
        return sps__err_fail(SPS_EINVAL, "flame graph: width must be 10..100000 px "
                             "and threshold in [0, 1)");
    sps__fold_tl_t fold;
    int rc = sps__export_fold_tree(r, sel, &fold);
    if (rc) return rc;
    const sps__tree_t *t = &fold.tree;
    uint32_t depth_max;
    uint64_t root_ns;
    place_t *p = lay_out(t, &depth_max, &root_ns);
    if (!p) {
        sps__fold_tl_free(&fold);
        return SPS_ENOMEM;
    }
    double scale = root_ns ? (double)o->width / (double)root_ns : 0;
    uint64_t min_ns = (uint64_t)(o->threshold * (double)root_ns);
    put_head(fp, o, o->width, (depth_max + 1) * ROW_PX + 2 * PAD_PX);
    put_frame(fp, o->root_name ? o->root_name : "all", 0, PAD_PX, o->width, root_ns, root_ns);
    for (size_t i = 0; i < t->len; i++) {
        const sps__tree_node_t *n = &t->n[i];
        if (n->cum.total == 0 || n->cum.total < min_ns) continue; /* nothing to see */
        put_frame(fp, sel->h->names[n->region], (double)p[i].x * scale,
                  PAD_PX + (double)p[i].depth * ROW_PX, (double)n->cum.total * scale,
                  n->cum.total, root_ns);
    }
    fputs("</svg>\n", fp);
    free(p);
    sps__fold_tl_free(&fold);
    return fflush(fp) != 0 || ferror(fp) ? SPS_EIO : 0;
}
