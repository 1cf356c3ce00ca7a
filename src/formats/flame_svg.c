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
 *
 * From samples (o->from_samples; sel->samples, the one reader's): the
 * same drawing of the folded stacks (folded.h, the one builder) of the
 * selected rank, a frame per distinct path of frame labels, its width the
 * weight of the samples under it (each 1/hz s of CPU), siblings in the
 * labels' order as flamegraph.pl sorts them; with o->call_paths 0 each
 * stack under the region it was sampled in (the innermost open span).
 */
#include "formats/export.h"
#include "formats/folded.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW_PX 16  /* height of one depth */
#define PAD_PX 4   /* space above and below the graph */

/* A frame to draw: its parent (-1: the root's child), its name and its
 * width in the graph's unit (ns, or sample weight). */
typedef struct node {
    int64_t parent;
    const char *name;
    uint64_t v;
} node_t;

/* Where each node goes: x (units from the left edge) and depth (the root
 * frame is depth 0). */
typedef struct place {
    uint64_t x, next; /* next: where the node's next child starts */
    uint32_t depth;
} place_t;

/* Lays out the nodes t[0..len) (parents before children).  Returns the
 * array, or NULL on ENOMEM; *depth_max and *root_v get the deepest depth
 * and the root's width (the top-level frames' total). */
static place_t *lay_out(const node_t *t, size_t len, uint32_t *depth_max, uint64_t *root_v) {
    place_t *p = calloc(len ? len : 1, sizeof *p);
    if (!p) return NULL;
    uint64_t root_next = 0;
    *depth_max = 0;
    for (size_t i = 0; i < len; i++) {
        const node_t *n = &t[i];
        uint64_t *next = n->parent >= 0 ? &p[n->parent].next : &root_next;
        p[i].x = p[i].next = *next;
        *next += n->v;
        p[i].depth = n->parent >= 0 ? p[n->parent].depth + 1 : 1;
        if (p[i].depth > *depth_max) *depth_max = p[i].depth;
    }
    *root_v = root_next;
    return p;
}

/* A warm colour for name (flamegraph.pl's palette: red to yellow). */
static void colour(const char *name, char *buf, size_t cap) {
    uint64_t h = sps__hash_bytes(name, strlen(name));
    snprintf(buf, cap, "rgb(%u,%u,%u)", 205 + (unsigned)(h % 51),
             90 + (unsigned)((h >> 8) % 141), 30 + (unsigned)((h >> 16) % 56));
}

/* The unit of a graph: ns of spans (hz 0), or sample weights at hz
 * (hz < 0: a rate the file does not say). */
typedef struct unit {
    int samples;
    int64_t hz;
} unit_t;

/* One frame: its rect, its title and (when wide enough) its label. */
static void put_frame(FILE *fp, const char *name, double x, double y, double w,
                      uint64_t v, uint64_t root_v, unit_t u) {
    char fill[32];
    colour(name, fill, sizeof fill);
    fputs("<g><title>", fp);
    sps__xml_fputs(fp, name);
    double pct = root_v ? 100.0 * (double)v / (double)root_v : 0.0;
    if (!u.samples) fprintf(fp, " (%.6f s, %.2f%%)", (double)v / 1e9, pct);
    else if (u.hz > 0)
        fprintf(fp, " (%" PRIu64 " samples, %.1f ms, %.2f%%)", v,
                (double)v * 1000.0 / (double)u.hz, pct);
    else fprintf(fp, " (%" PRIu64 " samples, %.2f%%)", v, pct);
    fprintf(fp, "</title><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
            "height=\"%d\" fill=\"%s\" rx=\"2\"/>", x, y, w, ROW_PX - 1, fill);
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

/* Draws the nodes t[0..len) under a root frame named root (units u),
 * leaving out frames under o->threshold of the root and of no width. */
static int draw(FILE *fp, const node_t *t, size_t len, const char *root,
                const sps__export_opts_t *o, unit_t u) {
    uint32_t depth_max;
    uint64_t root_v;
    place_t *p = lay_out(t, len, &depth_max, &root_v);
    if (!p) return SPS_ENOMEM;
    double scale = root_v ? (double)o->width / (double)root_v : 0;
    uint64_t min_v = (uint64_t)(o->threshold * (double)root_v);
    put_head(fp, o, o->width, (depth_max + 1) * ROW_PX + 2 * PAD_PX);
    put_frame(fp, root, 0, PAD_PX, o->width, root_v, root_v, u);
    for (size_t i = 0; i < len; i++) {
        if (t[i].v == 0 || t[i].v < min_v) continue; /* nothing to see */
        put_frame(fp, t[i].name, (double)p[i].x * scale,
                  PAD_PX + (double)p[i].depth * ROW_PX, (double)t[i].v * scale,
                  t[i].v, root_v, u);
    }
    fputs("</svg>\n", fp);
    free(p);
    return fflush(fp) != 0 || ferror(fp) ? SPS_EIO : 0;
}

/* The frames of f's rows: one per distinct path (region first when by
 * region), from the rows' order (by region, then stacks in label order,
 * so that paths sharing a prefix come together).  *out (malloc'd) and
 * *len.  0 or SPS_ENOMEM. */
static int sample_nodes(const sps__folded_t *f, const sps__h5r_samples_t *s, node_t **out,
                        size_t *len) {
    size_t cap = 0, n = 0, maxd = 1;
    for (size_t k = 0; k < f->nstacks; k++)
        if (f->stack_len[k] + 1 > maxd) maxd = f->stack_len[k] + 1;
    node_t *v = NULL;
    int64_t *path = malloc(maxd * sizeof *path);     /* the previous row's nodes */
    int64_t *key = malloc(maxd * sizeof *key);       /* and their keys */
    size_t plen = 0;
    int rc = path && key ? 0 : SPS_ENOMEM;
    for (size_t i = 0; !rc && i < f->n; i++) {
        const sps__folded_row_t *r = &f->rows[i];
        const uint32_t *lab = f->stack_lab + f->stack_off[r->stack];
        size_t d0 = f->by_region ? 1 : 0, dn = d0 + f->stack_len[r->stack];
        for (size_t d = 0; !rc && d < dn; d++) {
            /* region keys below 0, labels at or above (never equal) */
            int64_t k = d < d0 ? -2 - r->region : (int64_t)lab[d - d0];
            if (d < plen && key[d] == k) { /* the previous row's node */
                v[path[d]].v += r->weight;
                continue;
            }
            if ((rc = sps__grow((void **)&v, &cap, n, sizeof *v))) break;
            v[n] = (node_t){d ? path[d - 1] : -1,
                            d < d0 ? sps__smp_region_name(s, r->region)
                                   : f->labels.text[lab[d - d0]],
                            r->weight};
            path[d] = (int64_t)n++;
            key[d] = k;
            plen = d + 1; /* the rest of the old path is no prefix now */
        }
        plen = dn;
    }
    free(path);
    free(key);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *len = n;
    return 0;
}

/* The flame graph of sel->samples (o->from_samples). */
static int svg_samples(FILE *fp, const sps__export_sel_t *sel, const sps__export_opts_t *o) {
    const sps__h5r_samples_t *s = sel->samples;
    if (!s || !s->n)
        return sps__err_fail(SPS_EINVAL, "no stack samples in the file (record with "
                             "sample_hz set, or profile(with_samples=True))");
    static const int64_t rank0 = 0;
    sps__folded_t f;
    node_t *t = NULL;
    size_t len = 0;
    int rc = sps__folded_build(s, o->ranks && o->nranks ? o->ranks : &rank0,
                               o->ranks && o->nranks ? o->nranks : 1, !o->call_paths, &f);
    if (!rc && !f.nsamples)
        rc = sps__err_fail(SPS_EINVAL, "no stack samples on the requested rank");
    if (!rc) rc = sample_nodes(&f, s, &t, &len);
    if (!rc) rc = draw(fp, t, len, o->root_name ? o->root_name : "all", o,
                       (unit_t){1, s->hz > 0 ? s->hz : -1});
    free(t);
    sps__folded_free(&f);
    return rc;
}

int sps__flame_svg_write(FILE *fp, sps__tlr_t *r, sps__export_sel_t *sel,
                         const sps__export_opts_t *o) {
    if (o->width < 10 || o->width > 100000 || !(o->threshold >= 0 && o->threshold < 1))
        return sps__err_fail(SPS_EINVAL, "flame graph: width must be 10..100000 px "
                             "and threshold in [0, 1)");
    if (o->from_samples) return svg_samples(fp, sel, o);
    sps__fold_tl_t fold;
    int rc = sps__export_fold_tree(r, sel, &fold);
    if (rc) return rc;
    const sps__tree_t *tr = &fold.tree;
    node_t *t = malloc((tr->len ? tr->len : 1) * sizeof *t);
    if (!t) rc = SPS_ENOMEM;
    for (size_t i = 0; t && i < tr->len; i++)
        t[i] = (node_t){tr->n[i].parent, sel->h->names[tr->n[i].region], tr->n[i].cum.total};
    if (!rc) rc = draw(fp, t, tr->len, o->root_name ? o->root_name : "all", o, (unit_t){0, 0});
    free(t);
    sps__fold_tl_free(&fold);
    return rc;
}
