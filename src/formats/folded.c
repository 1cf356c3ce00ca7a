/*
 * folded.c -- the views of a file's stack samples (folded.h): frame
 * labels, the one folded-stack builder, the folded-stacks writer
 * (Brendan Gregg's "outer;...;leaf weight" lines, what torch's
 * export_stacks writes and flamegraph.pl, speedscope and inferno read) and
 * the per-region table of leaves behind the report and the HTML page.
 *
 * The builder works on labels, not frame indexes: two stacks whose frames
 * differ only by address (a native function sampled at two places) are
 * one stack of labels, so every view adds them up alike.  Distinct stacks
 * are found by sorting (no hash to collide); the rows by sorting the
 * selected samples' (region, stack) keys.  Memory: O(samples + stack
 * frames + frames).
 */
#include "formats/folded.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Labels                                                                    */
/* ------------------------------------------------------------------------ */

#define UNKNOWN_LABEL "[unknown]"

/* The base name of path (after its last '/'). */
static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Frame i's label, malloc'd (NULL: ENOMEM). */
static char *label_of(const sps__h5r_samples_t *s, size_t i) {
    const char *fn = s->functions[i], *file = s->files[i], *mod = s->modules[i];
    char addr[32];
    if (!fn[0]) { /* a frame without a name: its address */
        snprintf(addr, sizeof addr, "0x%" PRIx64, (uint64_t)s->addresses[i]);
        fn = addr;
    }
    const char *place = file[0] ? file : base_name(mod);
    int64_t line = file[0] ? s->lines[i] : 0;
    size_t n = strlen(fn) + strlen(place) + 32;
    char *t = malloc(n);
    if (!t) return NULL;
    if (!place[0]) snprintf(t, n, "%s", fn);
    else if (line > 0) snprintf(t, n, "%s (%s:%" PRId64 ")", fn, place, line);
    else snprintf(t, n, "%s (%s)", fn, place);
    return t;
}

typedef struct lab_key {
    const char *text;
    size_t frame;
} lab_key_t;

static int lab_cmp(const void *a, const void *b) {
    const lab_key_t *x = a, *y = b;
    int c = strcmp(x->text, y->text);
    if (c) return c;
    return x->frame < y->frame ? -1 : x->frame > y->frame;
}

int sps__smp_labels(const sps__h5r_samples_t *s, sps__smp_labels_t *out) {
    memset(out, 0, sizeof *out);
    size_t nf = s->nframes;
    char **txt = calloc(nf ? nf : 1, sizeof *txt);
    lab_key_t *k = malloc((nf ? nf : 1) * sizeof *k);
    out->text = calloc(nf + 1, sizeof *out->text);
    out->first = malloc((nf + 1) * sizeof *out->first);
    out->of_frame = malloc((nf ? nf : 1) * sizeof *out->of_frame);
    int rc = txt && k && out->text && out->first && out->of_frame ? 0 : SPS_ENOMEM;
    for (size_t i = 0; !rc && i < nf; i++) {
        if (!(txt[i] = label_of(s, i))) rc = SPS_ENOMEM;
        k[i] = (lab_key_t){txt[i], i};
    }
    if (!rc) {
        if (nf) qsort(k, nf, sizeof *k, lab_cmp);
        for (size_t i = 0; i < nf; i++) {
            if (i == 0 || strcmp(k[i - 1].text, k[i].text)) { /* a new label: it takes the text */
                out->first[out->n] = (int64_t)k[i].frame;
                out->text[out->n++] = txt[k[i].frame];
                txt[k[i].frame] = NULL;
            }
            out->of_frame[k[i].frame] = (uint32_t)(out->n - 1);
        }
        if (!(out->text[out->n] = strdup(UNKNOWN_LABEL))) rc = SPS_ENOMEM;
        else out->first[out->n++] = -1;
    }
    for (size_t i = 0; txt && i < nf; i++) free(txt[i]);
    free(txt);
    free(k);
    return rc;
}

void sps__smp_labels_free(sps__smp_labels_t *l) {
    for (size_t i = 0; l->text && i < l->n; i++) free(l->text[i]);
    free(l->text);
    free(l->first);
    free(l->of_frame);
    memset(l, 0, sizeof *l);
}

/* ------------------------------------------------------------------------ */
/* The folded stacks                                                         */
/* ------------------------------------------------------------------------ */

/* A stack of the file as labels, for sorting. */
typedef struct seq_key {
    const uint32_t *lab;
    uint32_t len;
    uint32_t stack; /* the file's stack index */
} seq_key_t;

static int seq_cmp(const void *a, const void *b) {
    const seq_key_t *x = a, *y = b;
    uint32_t n = x->len < y->len ? x->len : y->len;
    for (uint32_t i = 0; i < n; i++)
        if (x->lab[i] != y->lab[i]) return x->lab[i] < y->lab[i] ? -1 : 1;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int row_cmp(const void *a, const void *b) {
    const sps__folded_row_t *x = a, *y = b;
    if (x->region != y->region) return x->region < y->region ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Whether rank is among ranks[0..n) (n 0: every rank). */
static int rank_in(int64_t rank, const int64_t *ranks, size_t n) {
    if (!n) return 1;
    for (size_t i = 0; i < n; i++)
        if (ranks[i] == rank) return 1;
    return 0;
}

/* The file's stacks as distinct stacks of labels: f->stack_* and canon[k]
 * the distinct stack of the file's stack k.  0 or SPS_ENOMEM. */
static int distinct_stacks(const sps__h5r_samples_t *s, sps__folded_t *f, uint32_t *canon) {
    size_t ns = s->nstacks, nlab = 0;
    for (size_t k = 0; k < ns; k++) {
        size_t len = (size_t)(s->stack_offsets[k + 1] - s->stack_offsets[k]);
        nlab += len ? len : 1;
    }
    uint32_t *lab = malloc((nlab ? nlab : 1) * sizeof *lab);
    seq_key_t *key = malloc((ns ? ns : 1) * sizeof *key);
    f->stack_off = malloc((ns ? ns : 1) * sizeof *f->stack_off);
    f->stack_len = malloc((ns ? ns : 1) * sizeof *f->stack_len);
    if (!lab || !key || !f->stack_off || !f->stack_len) {
        free(lab);
        free(key);
        return SPS_ENOMEM;
    }
    f->stack_lab = lab;
    size_t at = 0;
    uint32_t unknown = (uint32_t)(f->labels.n - 1);
    for (size_t k = 0; k < ns; k++) {
        int64_t a = s->stack_offsets[k], b = s->stack_offsets[k + 1];
        key[k] = (seq_key_t){lab + at, b > a ? (uint32_t)(b - a) : 1, (uint32_t)k};
        if (b == a) lab[at++] = unknown;
        for (int64_t j = b - 1; j >= a; j--) /* innermost first in the file */
            lab[at++] = f->labels.of_frame[s->stack_frames[j]];
    }
    if (ns) qsort(key, ns, sizeof *key, seq_cmp);
    for (size_t i = 0; i < ns; i++) {
        if (i == 0 || seq_cmp(&(seq_key_t){key[i - 1].lab, key[i - 1].len, 0},
                              &(seq_key_t){key[i].lab, key[i].len, 0})) {
            f->stack_off[f->nstacks] = (size_t)(key[i].lab - lab);
            f->stack_len[f->nstacks++] = key[i].len;
        }
        canon[key[i].stack] = (uint32_t)(f->nstacks - 1);
    }
    free(key);
    return 0;
}

int sps__folded_build(const sps__h5r_samples_t *s, const int64_t *ranks, size_t nranks,
                      int by_region, sps__folded_t *out) {
    memset(out, 0, sizeof *out);
    out->by_region = by_region != 0;
    int rc = sps__smp_labels(s, &out->labels);
    if (rc) return rc;
    uint32_t *canon = malloc((s->nstacks ? s->nstacks : 1) * sizeof *canon);
    out->rows = malloc((s->n ? s->n : 1) * sizeof *out->rows);
    if (!canon || !out->rows) rc = SPS_ENOMEM;
    if (!rc) rc = distinct_stacks(s, out, canon);
    size_t n = 0;
    for (size_t i = 0; !rc && i < s->n; i++) {
        if (!rank_in(s->ranks[i], ranks, nranks)) continue;
        out->rows[n++] = (sps__folded_row_t){by_region ? s->regions[i] : -1,
                                             canon[s->stacks[i]], (uint64_t)s->weights[i]};
        out->total += (uint64_t)s->weights[i];
    }
    out->nsamples = n;
    if (!rc && n) {
        qsort(out->rows, n, sizeof *out->rows, row_cmp);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (k && !row_cmp(&out->rows[k - 1], &out->rows[i]))
                out->rows[k - 1].weight += out->rows[i].weight;
            else
                out->rows[k++] = out->rows[i];
        }
        out->n = k;
    }
    free(canon);
    return rc;
}

void sps__folded_free(sps__folded_t *f) {
    sps__smp_labels_free(&f->labels);
    free(f->stack_off);
    free(f->stack_len);
    free(f->stack_lab);
    free(f->rows);
    memset(f, 0, sizeof *f);
}

uint32_t sps__folded_leaf(const sps__folded_t *f, uint32_t stack) {
    return f->stack_lab[f->stack_off[stack] + f->stack_len[stack] - 1];
}

const char *sps__smp_region_name(const sps__h5r_samples_t *s, int64_t r) {
    return r >= 0 && (size_t)r < s->nnames ? s->names[r] : "[no region]";
}

/* Writes name as one frame of a folded line: ';' as ':', controls as '?'. */
static void put_name(FILE *fp, const char *name) {
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        fputc(*p == ';' ? ':' : *p < 0x20 || *p == 0x7f ? '?' : *p, fp);
}

int sps__folded_write(FILE *fp, const sps__folded_t *f, const sps__h5r_samples_t *s) {
    for (size_t i = 0; i < f->n; i++) {
        const sps__folded_row_t *r = &f->rows[i];
        if (f->by_region) {
            put_name(fp, sps__smp_region_name(s, r->region));
            fputc(';', fp);
        }
        const uint32_t *lab = f->stack_lab + f->stack_off[r->stack];
        for (uint32_t j = 0; j < f->stack_len[r->stack]; j++) {
            if (j) fputc(';', fp);
            put_name(fp, f->labels.text[lab[j]]);
        }
        fprintf(fp, " %" PRIu64 "\n", r->weight);
    }
    return fflush(fp) != 0 || ferror(fp) ? SPS_EIO : 0;
}

int sps__smp_rank_on(const sps__export_opts_t *o, int64_t rank) {
    if (!o->ranks || !o->nranks) return rank == 0;
    return rank_in(rank, o->ranks, o->nranks);
}

int sps__folded_export(FILE *fp, const sps__export_sel_t *sel, const sps__export_opts_t *o) {
    const sps__h5r_samples_t *s = sel->samples;
    if (!s || !s->n)
        return sps__err_fail(SPS_EINVAL, "no stack samples in the file (record with "
                             "sample_hz set, or profile(with_samples=True))");
    static const int64_t rank0 = 0;
    const int64_t *ranks = o->ranks && o->nranks ? o->ranks : &rank0;
    size_t nranks = o->ranks && o->nranks ? o->nranks : 1;
    sps__folded_t f;
    int rc = sps__folded_build(s, ranks, nranks, !o->call_paths, &f);
    if (!rc && !f.nsamples)
        rc = sps__err_fail(SPS_EINVAL, "no stack samples on the requested ranks");
    if (!rc) rc = sps__folded_write(fp, &f, s);
    sps__folded_free(&f);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Per region: its leaves                                                    */
/* ------------------------------------------------------------------------ */

static int leaf_label_cmp(const void *a, const void *b) {
    const sps__smp_leaf_t *x = a, *y = b;
    return x->label < y->label ? -1 : x->label > y->label;
}

static int leaf_weight_cmp(const void *a, const void *b) {
    const sps__smp_leaf_t *x = a, *y = b;
    if (x->weight != y->weight) return x->weight > y->weight ? -1 : 1;
    return leaf_label_cmp(a, b);
}

static int region_weight_cmp(const void *a, const void *b) {
    const sps__smp_region_t *x = a, *y = b;
    if ((x->region < 0) != (y->region < 0)) return x->region < 0 ? 1 : -1;
    if (x->weight != y->weight) return x->weight > y->weight ? -1 : 1;
    return x->region < y->region ? -1 : x->region > y->region;
}

int sps__smp_regions(const sps__folded_t *f, sps__smp_regions_t *out) {
    memset(out, 0, sizeof *out);
    size_t ng = 0;
    for (size_t i = 0; i < f->n; i++) ng += i == 0 || f->rows[i].region != f->rows[i - 1].region;
    out->r = calloc(ng ? ng : 1, sizeof *out->r);
    out->pool = malloc((f->n ? f->n : 1) * sizeof *out->pool);
    if (!out->r || !out->pool) return SPS_ENOMEM;
    for (size_t i = 0; i < f->n;) { /* the rows come by region */
        size_t j = i;
        sps__smp_region_t *g = &out->r[out->n++];
        g->region = f->rows[i].region;
        g->leaves = out->pool + i;
        for (; j < f->n && f->rows[j].region == g->region; j++) {
            out->pool[j] = (sps__smp_leaf_t){sps__folded_leaf(f, f->rows[j].stack),
                                             f->rows[j].weight};
            g->weight += f->rows[j].weight;
        }
        size_t m = j - i, k = 0;
        qsort(g->leaves, m, sizeof *g->leaves, leaf_label_cmp);
        for (size_t q = 0; q < m; q++) {
            if (k && g->leaves[k - 1].label == g->leaves[q].label)
                g->leaves[k - 1].weight += g->leaves[q].weight;
            else
                g->leaves[k++] = g->leaves[q];
        }
        qsort(g->leaves, k, sizeof *g->leaves, leaf_weight_cmp);
        g->nleaves = k;
        i = j;
    }
    if (out->n) qsort(out->r, out->n, sizeof *out->r, region_weight_cmp);
    return 0;
}

void sps__smp_regions_free(sps__smp_regions_t *g) {
    free(g->r);
    free(g->pool);
    memset(g, 0, sizeof *g);
}
