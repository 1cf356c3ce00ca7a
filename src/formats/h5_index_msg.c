/*
 * h5_index_msg.c -- a reader's index as bytes (h5_read.h): what
 * sps__h5r_open_index read of a file, written out by the process that
 * opened it and read back by another as a released reader, without
 * libhdf5.
 *
 * Why: in a collective finalize rank 0 opened every rank's part with
 * libhdf5 to read its index (names, rows, statistics, per-row extras,
 * /metadata): about 0.8 ms of CPU a part, two thirds of what rank 0 did
 * beyond a middle rank (docs/mpi.md, "How it scales").  Each rank now
 * opens its own part once and sends this message with its offer, so the
 * work is spread over the ranks and rank 0 only decodes bytes.
 *
 * The bytes are this build's: native byte order and struct layouts, with
 * a header that says so (a magic, a version, the byte order and the sizes
 * of the structs copied raw).  A message from another build, a truncated
 * one or one whose counts do not add up is refused (the caller then opens
 * the file).  The ranks of one job run one build on one architecture;
 * the check is what makes that assumption safe to rely on.
 *
 * Layout (u64 = uint64_t, native):
 *   header: "SPIX" u32 version, u32 0x01020304, u32 sizeof(sps__row_t),
 *           u32 sizeof(sps__summary_t)
 *   u64 schema, deltas, nevents, has_summary, rank_groups
 *   u64 nnames, then each name (u64 length, bytes)
 *   u64 nrows, rows (raw), u64 summary present, summaries (raw)
 *   u64 source_lines present, lines (raw int64)
 *   4 x (u64 present, nrows strings): source files, texts, tags, metadata
 *   u64 ncarried, events (raw int64), children (raw int64)
 *   u64 nattrs, each: name, u64 kind, is_array, n, values (ints or
 *       floats raw, texts as strings)
 */
#include "formats/h5_read.h"

#include <stdlib.h>
#include <string.h>

#define MSG_MAGIC "SPIX"
#define MSG_VERSION 1u
#define MSG_ORDER 0x01020304u
/* Bounds no real index reaches: a count above them is a broken message
 * (and keeps the size arithmetic below far from overflowing). */
#define MSG_MAX_ITEMS ((uint64_t)1 << 32)

/* ---- writing ------------------------------------------------------------ */

static void put_u64(sps__bytes_t *b, uint64_t v) { sps__bytes_put(b, &v, sizeof v); }

static void put_str(sps__bytes_t *b, const char *s) {
    size_t n = s ? strlen(s) : 0;
    put_u64(b, n);
    sps__bytes_put(b, s, n);
}

/* A present flag, then n raw items of size sz at p (none when p is NULL). */
static void put_raw(sps__bytes_t *b, const void *p, size_t n, size_t sz) {
    put_u64(b, p != NULL);
    if (p) sps__bytes_put(b, p, n * sz);
}

/* A present flag, then n strings (none when v is NULL). */
static void put_strs(sps__bytes_t *b, char *const *v, size_t n) {
    put_u64(b, v != NULL);
    for (size_t i = 0; v && i < n; i++) put_str(b, v[i]);
}

static void put_attr(sps__bytes_t *b, const sps_meta_attr_t *a) {
    put_str(b, a->name);
    put_u64(b, (uint64_t)a->kind);
    put_u64(b, (uint64_t)a->is_array);
    put_u64(b, a->n);
    if (a->kind == SPS_META_INT) sps__bytes_put(b, a->ints, a->n * sizeof *a->ints);
    else if (a->kind == SPS_META_FLOAT) sps__bytes_put(b, a->floats, a->n * sizeof *a->floats);
    else
        for (size_t k = 0; k < a->n; k++) put_str(b, a->texts[k]);
}

int sps__h5r_index_put(const sps__h5r_t *r, sps__bytes_t *b) {
    uint32_t head[4] = {MSG_VERSION, MSG_ORDER, (uint32_t)sizeof(sps__row_t),
                        (uint32_t)sizeof(sps__summary_t)};
    sps__bytes_put(b, MSG_MAGIC, 4);
    sps__bytes_put(b, head, sizeof head);
    put_u64(b, (uint64_t)r->schema);
    put_u64(b, (uint64_t)r->deltas);
    put_u64(b, r->nevents);
    put_u64(b, (uint64_t)r->has_summary);
    put_u64(b, r->rank_groups);
    put_u64(b, r->nnames);
    for (size_t i = 0; i < r->nnames; i++) put_str(b, r->names[i]);
    put_u64(b, r->nrows);
    sps__bytes_put(b, r->rows, r->nrows * sizeof *r->rows);
    put_raw(b, r->summary, r->nrows, sizeof *r->summary);
    put_raw(b, r->src_lines, r->nrows, sizeof *r->src_lines);
    put_strs(b, r->src_files, r->nrows);
    put_strs(b, r->src_texts, r->nrows);
    put_strs(b, r->tags, r->nrows);
    put_strs(b, r->ev_meta, r->nrows);
    put_u64(b, r->ncarried);
    sps__bytes_put(b, r->carried_event, r->ncarried * sizeof *r->carried_event);
    sps__bytes_put(b, r->carried_child, r->ncarried * sizeof *r->carried_child);
    put_u64(b, r->meta.nattrs);
    for (size_t i = 0; i < r->meta.nattrs; i++) put_attr(b, &r->meta.attrs[i]);
    return b->oom ? SPS_ENOMEM : 0;
}

/* ---- reading ------------------------------------------------------------ */

/* A cursor over the message; bad is set by the first read past its end
 * (or a count out of bounds), after which every read gives zeroes. */
typedef struct cur {
    const unsigned char *p;
    size_t n, at;
    int bad;
} cur_t;

static int take(cur_t *c, void *out, size_t n) {
    if (c->bad || n > c->n - c->at) {
        c->bad = 1;
        if (out) memset(out, 0, n);
        return -1;
    }
    if (out) memcpy(out, c->p + c->at, n);
    c->at += n;
    return 0;
}

static uint64_t get_u64(cur_t *c) {
    uint64_t v = 0;
    take(c, &v, sizeof v);
    return v;
}

/* A count of items that take at least sz bytes each in the message and
 * that the rest of it can hold, so that what is allocated for them stays
 * within a small multiple of the message's size; else bad is set and 0. */
static size_t get_count(cur_t *c, size_t sz) {
    uint64_t v = get_u64(c);
    if (v >= MSG_MAX_ITEMS || v > (c->n - c->at) / sz) c->bad = 1;
    return c->bad ? 0 : (size_t)v;
}

/* A NUL-terminated copy of the next string (NULL when bad or no memory,
 * which then sets bad). */
static char *get_str(cur_t *c) {
    size_t n = get_count(c, 1);
    char *s = c->bad ? NULL : malloc(n + 1);
    if (!s || take(c, s, n)) {
        free(s);
        c->bad = 1;
        return NULL;
    }
    s[n] = 0;
    return s;
}

/* n raw items of sz bytes into a new array (n 0: a 1-byte one, so that a
 * present column is never NULL). */
static void *get_array(cur_t *c, size_t n, size_t sz) {
    void *v = c->bad ? NULL : malloc(n ? n * sz : 1);
    if (!v || take(c, v, n * sz)) {
        free(v);
        c->bad = 1;
        return NULL;
    }
    return v;
}

static void *get_raw(cur_t *c, size_t n, size_t sz) {
    return get_u64(c) && !c->bad ? get_array(c, n, sz) : NULL;
}

static char **get_strs(cur_t *c, size_t n) {
    if (!get_u64(c) || c->bad) return NULL;
    char **v = calloc(n ? n : 1, sizeof *v);
    if (!v) c->bad = 1;
    for (size_t i = 0; v && i < n && !c->bad; i++) v[i] = get_str(c);
    return v; /* freed with the reader, whatever was filled */
}

static void get_attr(cur_t *c, sps_meta_attr_t *a) {
    a->name = get_str(c);
    a->kind = (int)get_u64(c);
    a->is_array = (int)get_u64(c);
    a->n = get_count(c, sizeof(uint64_t)); /* a value or a string's length each */
    if (c->bad) return;
    if (a->kind == SPS_META_INT) a->ints = get_array(c, a->n, sizeof *a->ints);
    else if (a->kind == SPS_META_FLOAT) a->floats = get_array(c, a->n, sizeof *a->floats);
    else if (a->kind == SPS_META_TEXT) {
        char **t = calloc(a->n ? a->n : 1, sizeof *t);
        a->texts = (const char *const *)t;
        if (!t) c->bad = 1;
        for (size_t k = 0; t && k < a->n && !c->bad; k++) t[k] = get_str(c);
    } else {
        c->bad = 1;
    }
}

static int header_ok(cur_t *c) {
    char magic[4];
    uint32_t head[4];
    take(c, magic, sizeof magic);
    take(c, head, sizeof head);
    return !c->bad && !memcmp(magic, MSG_MAGIC, 4) && head[0] == MSG_VERSION &&
           head[1] == MSG_ORDER && head[2] == sizeof(sps__row_t) &&
           head[3] == sizeof(sps__summary_t);
}

/* Every row inside the names and the events, as sps__h5r_open_index
 * checks them. */
static int rows_ok(const sps__h5r_t *r) {
    for (size_t i = 0; i < r->nrows; i++) {
        const sps__row_t *w = &r->rows[i];
        if (w->file_region >= r->nnames || w->offset > r->nevents ||
            w->count > r->nevents - w->offset)
            return 0;
    }
    for (size_t i = 0; i < r->ncarried; i++)
        if (r->carried_event[i] < 0 || (uint64_t)r->carried_event[i] >= r->nevents)
            return 0;
    return 1;
}

static void get_body(cur_t *c, sps__h5r_t *r) {
    r->schema = (int)get_u64(c);
    r->deltas = (int)get_u64(c);
    r->nevents = get_u64(c);
    r->has_summary = (int)get_u64(c);
    r->rank_groups = (unsigned)get_u64(c);
    size_t nnames = get_count(c, sizeof(uint64_t));
    if (!c->bad && !(r->names = calloc(nnames ? nnames : 1, sizeof *r->names))) c->bad = 1;
    for (size_t i = 0; r->names && i < nnames && !c->bad; i++) r->names[i] = get_str(c);
    r->nnames = r->names ? nnames : 0;
    size_t nrows = get_count(c, sizeof *r->rows);
    r->rows = get_array(c, nrows, sizeof *r->rows);
    r->nrows = r->rows ? nrows : 0;
    r->summary = get_raw(c, r->nrows, sizeof *r->summary);
    r->src_lines = get_raw(c, r->nrows, sizeof *r->src_lines);
    r->src_files = get_strs(c, r->nrows);
    r->src_texts = get_strs(c, r->nrows);
    r->tags = get_strs(c, r->nrows);
    r->ev_meta = get_strs(c, r->nrows);
    size_t nc = get_count(c, 2 * sizeof(int64_t));
    r->carried_event = nc ? get_array(c, nc, sizeof(int64_t)) : NULL;
    r->carried_child = nc ? get_array(c, nc, sizeof(int64_t)) : NULL;
    r->ncarried = r->carried_event && r->carried_child ? nc : 0;
    size_t na = get_count(c, 4 * sizeof(uint64_t)); /* name, kind, is_array, n */
    if (!c->bad && na && !(r->meta.attrs = calloc(na, sizeof *r->meta.attrs))) c->bad = 1;
    for (size_t i = 0; r->meta.attrs && i < na && !c->bad; i++, r->meta.nattrs++)
        get_attr(c, &r->meta.attrs[i]);
    if (r->meta.attrs && c->bad) r->meta.nattrs = na; /* all freed, zeroed ones too */
}

int sps__h5r_index_get(sps__h5r_t **out, const void *msg, size_t len) {
    *out = NULL;
    cur_t c = {msg, len, 0, 0};
    if (!msg || !header_ok(&c)) return SPS_EFORMAT;
    sps__h5r_t *r = calloc(1, sizeof *r);
    if (!r) return SPS_ENOMEM;
    /* a released reader: nothing open (sps__h5r_reacquire opens it) */
    r->h_file = r->h_start = r->h_dur = r->h_tid = r->h_call = r->h_parent = -1;
    get_body(&c, r);
    if (c.bad || c.at != c.n || !rows_ok(r)) {
        sps__h5r_free(r);
        return SPS_EFORMAT;
    }
    sps__h5r_meta_view(&r->meta);
    *out = r;
    return 0;
}
