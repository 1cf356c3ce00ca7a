/*
 * pstats.c -- cProfile's .prof file of a recording (export.h): the dict
 * that cProfile.Profile.dump_stats marshals and pstats.Stats, snakeviz
 * and flameprof load,
 *
 *     {(file, line, func): (cc, nc, tt, ct, {caller: (cc, nc, tt, ct)})}
 *
 * cc primitive (non-recursive) calls, nc calls, tt self time and ct
 * cumulative time in s.  Every number comes from the call tree of the one
 * fold (sps__export_fold_tree): a node is a distinct path of regions with
 * its count, total and self time.  With call_paths each node is an entry
 * named "a > b > c" (what scope-profiler 0.7.5 writes by default, so that
 * snakeviz shows each use of a region apart); without, an entry per
 * region, cumulative time and primitive calls counted for the outermost
 * call of a recursive chain only (a node with an ancestor of its own
 * region is recursive), callers per (region, calling region).  A root
 * entry (o->root_name) calls every top-level call.
 *
 * The marshal encoding (Python's marshal.c, format versions >= 2): dict
 * '{' key value ... '0'; tuple '(' n:int32; str 'u' n:int32 UTF-8; int 'i'
 * int32 or 'l' n:int32 then |n| 15-bit digits; float 'g' IEEE 754 double,
 * all little-endian.  Keys: (file, line) of the region's captured source
 * (scope-profiler's source_files / source_lines of an .h5), else ("~", 0),
 * as scope-profiler 0.7.5 writes them.
 */
#include "formats/export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes the 32-bit v little-endian. */
static void m_i32(FILE *fp, int32_t v) {
    uint32_t u = (uint32_t)v;
    unsigned char b[4] = {(unsigned char)u, (unsigned char)(u >> 8),
                          (unsigned char)(u >> 16), (unsigned char)(u >> 24)};
    fwrite(b, 1, 4, fp);
}

/* A marshal int: 'i' when it fits 32 bits, else a long of 15-bit digits. */
static void m_int(FILE *fp, uint64_t v) {
    if (v <= INT32_MAX) {
        fputc('i', fp);
        m_i32(fp, (int32_t)v);
        return;
    }
    int32_t nd = 0;
    for (uint64_t x = v; x; x >>= 15) nd++;
    fputc('l', fp);
    m_i32(fp, nd);
    for (uint64_t x = v; x; x >>= 15) {
        unsigned d = (unsigned)(x & 0x7FFF);
        fputc((int)(d & 0xFF), fp);
        fputc((int)(d >> 8), fp);
    }
}

/* A marshal float (binary, 'g'). */
static void m_float(FILE *fp, double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    fputc('g', fp);
    for (int i = 0; i < 8; i++) fputc((int)((u >> (8 * i)) & 0xFF), fp);
}

/* A marshal str of the n bytes at s (valid UTF-8: the readers check). */
static void m_str(FILE *fp, const char *s, size_t n) {
    fputc('u', fp);
    m_i32(fp, (int32_t)n);
    fwrite(s, 1, n, fp);
}

/* A tuple header of n items. */
static void m_tuple(FILE *fp, int32_t n) {
    fputc('(', fp);
    m_i32(fp, n);
}

/* A pstats key (file, line, name): region's source location when sel
 * knows it (region < 0: the synthetic root, none), else ("~", 0). */
static void m_key(FILE *fp, const sps__export_sel_t *sel, int64_t region, const char *name,
                  size_t n) {
    const char *file = region >= 0 && (size_t)region < sel->nsrc && sel->src_file
                           ? sel->src_file[region] : NULL;
    m_tuple(fp, 3);
    if (file) {
        m_str(fp, file, strlen(file));
        m_int(fp, (uint64_t)sel->src_line[region]);
    } else {
        m_str(fp, "~", 1);
        m_int(fp, 0);
    }
    m_str(fp, name, n);
}

/* The four numbers (cc, nc, tt, ct) of a pstats entry, ns summed. */
typedef struct pnums {
    uint64_t cc, nc, tt_ns, ct_ns;
} pnums_t;

static void m_nums(FILE *fp, const pnums_t *p) {
    m_int(fp, p->cc);
    m_int(fp, p->nc);
    m_float(fp, (double)p->tt_ns / 1e9);
    m_float(fp, (double)p->ct_ns / 1e9);
}

/* The path name of every node ("a > b"), built parents first (a parent's
 * index is below its children's: the fold makes a parent's node first).
 * Returns the array of malloc'd strings, or NULL on ENOMEM. */
static char **path_names(const sps__tree_t *t, const sps__tl_header_t *h) {
    char **p = calloc(t->len ? t->len : 1, sizeof *p);
    if (!p) return NULL;
    for (size_t i = 0; i < t->len; i++) {
        const sps__tree_node_t *n = &t->n[i];
        const char *name = h->names[n->region];
        const char *up = n->parent >= 0 ? p[n->parent] : NULL;
        size_t len = strlen(name) + (up ? strlen(up) + 3 : 0) + 1;
        if (!(p[i] = malloc(len))) {
            for (size_t k = 0; k < i; k++) free(p[k]);
            free(p);
            return NULL;
        }
        if (up) snprintf(p[i], len, "%s > %s", up, name);
        else snprintf(p[i], len, "%s", name);
    }
    return p;
}

/* The numbers of a node: every call at one path is primitive there. */
static pnums_t node_nums(const sps__tree_node_t *n) {
    return (pnums_t){n->cum.count, n->cum.count, n->cum.self, n->cum.total};
}

/* The root entry: one call, no self time, the top-level calls' total. */
static void write_root(FILE *fp, const sps__export_sel_t *sel, const sps__tree_t *t,
                       const char *root) {
    pnums_t p = {1, 1, 0, 0};
    for (size_t i = 0; i < t->len; i++)
        if (t->n[i].parent < 0) p.ct_ns += t->n[i].cum.total;
    m_key(fp, sel, -1, root, strlen(root));
    m_tuple(fp, 5);
    m_nums(fp, &p);
    fputc('{', fp);
    fputc('0', fp);
}

/* The dict of call_paths mode: one entry per node, its caller the
 * parent's node (or the root). */
static int write_paths(FILE *fp, const sps__export_sel_t *sel, const sps__tree_t *t,
                       const sps__tl_header_t *h, const char *root) {
    char **names = path_names(t, h);
    if (!names) return SPS_ENOMEM;
    fputc('{', fp);
    for (size_t i = 0; i < t->len; i++) {
        const sps__tree_node_t *n = &t->n[i];
        if (!n->cum.count) continue;
        pnums_t p = node_nums(n);
        m_key(fp, sel, n->region, names[i], strlen(names[i]));
        m_tuple(fp, 5);
        m_nums(fp, &p);
        fputc('{', fp);
        const char *caller = n->parent >= 0 ? names[n->parent] : root;
        if (caller) {
            m_key(fp, sel, n->parent >= 0 ? (int64_t)t->n[n->parent].region : -1, caller,
                  strlen(caller));
            m_tuple(fp, 4);
            m_nums(fp, &p);
        }
        fputc('0', fp);
    }
    if (root) write_root(fp, sel, t, root);
    fputc('0', fp);
    for (size_t i = 0; i < t->len; i++) free(names[i]);
    free(names);
    return 0;
}

/* Whether node i has an ancestor of its own region (a recursive call). */
static int node_recursive(const sps__tree_t *t, size_t i) {
    for (int32_t a = t->n[i].parent; a >= 0; a = t->n[a].parent)
        if (t->n[a].region == t->n[i].region) return 1;
    return 0;
}

/* Adds node n's calls to p: cumulative time and primitive calls only
 * when the node is not recursive. */
static void nums_add(pnums_t *p, const sps__tree_node_t *n, int recursive) {
    p->nc += n->cum.count;
    p->tt_ns += n->cum.self;
    if (!recursive) {
        p->cc += n->cum.count;
        p->ct_ns += n->cum.total;
    }
}

/* A node in per-region mode: its region and its caller's column (0 the
 * root, else the calling region + 1), sorted so that a region's callers
 * come together. */
typedef struct pkey {
    uint32_t region;
    uint64_t caller;
    size_t node;
} pkey_t;

static int pkey_cmp(const void *a, const void *b) {
    const pkey_t *x = a, *y = b;
    if (x->region != y->region) return x->region < y->region ? -1 : 1;
    if (x->caller != y->caller) return x->caller < y->caller ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Writes one region's entry: keys k[0..n) (all of region k[0].region,
 * sorted by caller), its sums and its callers' (the root's only with
 * root). */
static void write_region(FILE *fp, const sps__export_sel_t *sel, const sps__tree_t *t,
                         const sps__tl_header_t *h, const char *root, const pkey_t *k,
                         size_t n) {
    pnums_t all = {0};
    for (size_t i = 0; i < n; i++) nums_add(&all, &t->n[k[i].node], node_recursive(t, k[i].node));
    uint32_t r = k[0].region;
    m_key(fp, sel, (int64_t)r, h->names[r], strlen(h->names[r]));
    m_tuple(fp, 5);
    m_nums(fp, &all);
    fputc('{', fp);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        pnums_t p = {0};
        for (; j < n && k[j].caller == k[i].caller; j++)
            nums_add(&p, &t->n[k[j].node], node_recursive(t, k[j].node));
        uint64_t c = k[i].caller;
        i = j;
        if (c == 0 && !root) continue;
        const char *cn = c ? h->names[c - 1] : root;
        m_key(fp, sel, c ? (int64_t)c - 1 : -1, cn, strlen(cn));
        m_tuple(fp, 4);
        m_nums(fp, &p);
    }
    fputc('0', fp);
}

/* The dict of per-region mode: an entry per region, callers per (region,
 * calling region or root), from the tree's nodes sorted by that pair:
 * memory O(nodes), whatever the number of regions. */
static int write_regions(FILE *fp, const sps__export_sel_t *sel, const sps__tree_t *t,
                         const sps__tl_header_t *h, const char *root) {
    pkey_t *k = malloc((t->len ? t->len : 1) * sizeof *k);
    if (!k) return SPS_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < t->len; i++) {
        if (!t->n[i].cum.count) continue;
        int32_t p = t->n[i].parent;
        k[n++] = (pkey_t){t->n[i].region, p >= 0 ? (uint64_t)t->n[p].region + 1 : 0, i};
    }
    qsort(k, n, sizeof *k, pkey_cmp);
    fputc('{', fp);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && k[j].region == k[i].region) j++;
        write_region(fp, sel, t, h, root, k + i, j - i);
        i = j;
    }
    if (root) write_root(fp, sel, t, root);
    fputc('0', fp);
    free(k);
    return 0;
}

int sps__pstats_write(FILE *fp, sps__tlr_t *r, sps__export_sel_t *sel,
                      const sps__export_opts_t *o) {
    sps__fold_tl_t fold;
    int rc = sps__export_fold_tree(r, sel, &fold);
    if (rc) return rc;
    rc = o->call_paths ? write_paths(fp, sel, &fold.tree, sel->h, o->root_name)
                       : write_regions(fp, sel, &fold.tree, sel->h, o->root_name);
    sps__fold_tl_free(&fold);
    if (!rc && (fflush(fp) != 0 || ferror(fp))) rc = SPS_EIO;
    return rc;
}
