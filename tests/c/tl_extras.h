/* tl_extras.h -- helpers shared by test_counters_tl.c and test_flows.c:
 * files from text, timeline conversion through the sps__tlr / sps__tlw
 * interface, and the counters and flows of a file as comparable records
 * (names and pid/tid resolved). */
#ifndef SPS_TL_EXTRAS_H
#define SPS_TL_EXTRAS_H

#include "testutil.h"
#include "formats/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TX_MAX 64

/* A counter sample or flow point with its strings resolved. */
typedef struct tx_item {
    char name[64];
    int64_t pid, tid, ts;
    double value;      /* counters */
    uint64_t id;       /* flows */
    char phase;
    int enclosing;
} tx_item_t;

/* Every counter sample and flow point of a file. */
typedef struct tx_all {
    tx_item_t c[TX_MAX], f[TX_MAX];
    size_t nc, nf;
    uint64_t nspans;
} tx_all_t;

/* Writes the NUL-terminated text to path. */
static inline void tx_put(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

/* Reads the counters and flows of path (and counts its spans); fails the
 * test when the reader refuses it or breaks the header's contract. */
static inline void tx_read(const char *path, tx_all_t *a) {
    sps__tlr_t *r;
    memset(a, 0, sizeof *a);
    if (sps__tlr_open(&r, path, sps__tl_format_of(path)))
        fail_msg("%s", sps__err_msg());
    const sps__tl_header_t *h = sps__tlr_header(r);
    assert_true(h->ncounters <= TX_MAX && h->nflows <= TX_MAX);
    for (size_t i = 0; i < h->ncounters; i++) {
        const sps__tl_counter_t *c = &h->counters[i];
        assert_true(c->name < h->nnames && c->proc < h->nprocs);
        if (i) assert_true(c->ts_ns >= h->counters[i - 1].ts_ns);
        tx_item_t *x = &a->c[a->nc++];
        snprintf(x->name, sizeof x->name, "%s", h->names[c->name]);
        x->pid = h->procs[c->proc].pid;
        x->ts = c->ts_ns;
        x->value = c->value;
    }
    for (size_t i = 0; i < h->nflows; i++) {
        const sps__tl_flow_t *f = &h->flows[i];
        assert_true(f->name < h->nnames && f->thread < h->nthreads);
        if (i) assert_true(f->ts_ns >= h->flows[i - 1].ts_ns);
        tx_item_t *x = &a->f[a->nf++];
        snprintf(x->name, sizeof x->name, "%s", h->names[f->name]);
        x->pid = h->threads[f->thread].pid;
        x->tid = h->threads[f->thread].tid;
        x->ts = f->ts_ns;
        x->id = f->id;
        x->phase = f->phase;
        x->enclosing = f->enclosing;
    }
    sps__tl_span_t s;
    int rc;
    while ((rc = sps__tlr_next(r, &s)) == 1) a->nspans++;
    assert_int_equal(rc, 0);
    sps__tlr_free(r);
}

/* Converts in to out (formats by extension) through the timeline
 * interface, as `spanscope convert` does. */
static inline void tx_convert(const char *in, const char *out) {
    sps__tlr_t *r;
    if (sps__tlr_open(&r, in, sps__tl_format_of(in)))
        fail_msg("%s", sps__err_msg());
    sps__tlw_t *w;
    assert_int_equal(sps__tlw_open(&w, out, sps__tl_format_of(out),
                                   sps__tlr_header(r)), 0);
    sps__tl_span_t s;
    int rc;
    while ((rc = sps__tlr_next(r, &s)) == 1)
        assert_int_equal(sps__tlw_span(w, &s), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(sps__tlw_close(w), 0);
    sps__tlr_free(r);
}

/* qsort order of items: ts, name, pid, tid, phase. */
static inline int tx_cmp(const void *a, const void *b) {
    const tx_item_t *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    int k = strcmp(x->name, y->name);
    if (k) return k;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return x->phase - y->phase;
}

/* Checks that a and b hold the same counter samples (exact values) and
 * flow points (ids, phases, threads, names, times; enclosing too when
 * with_bp), in any order among equal times. */
static inline void tx_same(tx_all_t *a, tx_all_t *b, int with_bp) {
    assert_int_equal(a->nc, b->nc);
    assert_int_equal(a->nf, b->nf);
    qsort(a->c, a->nc, sizeof *a->c, tx_cmp);
    qsort(b->c, b->nc, sizeof *b->c, tx_cmp);
    qsort(a->f, a->nf, sizeof *a->f, tx_cmp);
    qsort(b->f, b->nf, sizeof *b->f, tx_cmp);
    for (size_t i = 0; i < a->nc; i++) {
        assert_string_equal(a->c[i].name, b->c[i].name);
        assert_int_equal(a->c[i].pid, b->c[i].pid);
        assert_int_equal(a->c[i].ts, b->c[i].ts);
        assert_memory_equal(&a->c[i].value, &b->c[i].value, sizeof(double));
    }
    for (size_t i = 0; i < a->nf; i++) {
        assert_string_equal(a->f[i].name, b->f[i].name);
        assert_int_equal(a->f[i].pid, b->f[i].pid);
        assert_int_equal(a->f[i].tid, b->f[i].tid);
        assert_int_equal(a->f[i].ts, b->f[i].ts);
        assert_true(a->f[i].id == b->f[i].id);
        assert_int_equal(a->f[i].phase, b->f[i].phase);
        if (with_bp) assert_int_equal(a->f[i].enclosing, b->f[i].enclosing);
    }
}

/* The item of a named name (and pid, when pid >= 0); NULL if none. */
static inline const tx_item_t *tx_find(const tx_item_t *v, size_t n,
                                       const char *name, int64_t pid) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].name, name) && (pid < 0 || v[i].pid == pid))
            return &v[i];
    return NULL;
}

#endif
