/* h5_timeline.c -- an HDF5 recording as a timeline (processes per rank,
 * threads, spans in start order), read through the validating reader.
 *
 * Streaming: the reader validates the names and the index only; events are
 * read in blocks, one cursor per (rank, region) row, and merged by start
 * time with a binary heap (each row is in start order, as both spanscope
 * and scope-profiler write it).  Memory: O(rows x block + threads), never
 * O(events). */
#include "formats/timeline.h"
#include "formats/h5_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A thread's open spans: the one fold's nesting filter (model/fold.c). */
typedef sps__stack_t lane_t;

/* One (rank, region) row being read: a block of its events. */
typedef struct cursor {
    uint32_t row;
    uint64_t next, end;   /* events of the row not yet loaded */
    int64_t acc;          /* running start (schema 3 stores gaps) */
    int64_t last;         /* last start seen: rows must be in start order */
    size_t i, n;          /* position and length of the loaded block */
    int64_t *start, *dur; /* block */
    uint32_t *thread;     /* block: thread indexes */
} cursor_t;

typedef struct tkey {
    uint32_t rank;
    int64_t tid;
} tkey_t;

typedef struct h5tl {
    sps__tlr_vt_t vt; /* first: see timeline.h */
    sps__h5r_t *r;
    sps__tl_header_t h;
    const char **names;
    sps__tl_proc_t *procs;
    sps__tl_thread_t *threads;
    char (*labels)[32];    /* process and thread names */
    tkey_t *keys;          /* thread index -> (rank, tid) */
    size_t nkeys, capkeys;
    sps__htab_t key_index; /* (rank, tid) -> thread index (util.h) */
    cursor_t *cur;         /* one per non-empty row */
    size_t ncur;
    sps__heap_t heap;      /* cursors by their next event (cur_tie) */
    size_t block;          /* events per cursor block */
    int64_t *tmp_tid;      /* scratch for a block's thread ids */
    lane_t *lanes;
    uint64_t dropped;      /* spans that overlap a sibling partially */
    int err;
    sps__h5r_counters_t cnt;      /* /counters, names owned here */
    sps__tl_counter_t *counters;
    char (*xlabels)[32];          /* names of processes with counters only */
} h5tl_t;

static const sps__tl_header_t *h5tl_header(void *p) { return &((h5tl_t *)p)->h; }

static void h5tl_free(void *p) {
    h5tl_t *t = p;
    if (!t) return;
    for (size_t k = 0; t->lanes && k < t->h.nthreads; k++) sps__stack_free(&t->lanes[k]);
    for (size_t k = 0; t->cur && k < t->ncur; k++) {
        free(t->cur[k].start);
        free(t->cur[k].dur);
        free(t->cur[k].thread);
    }
    free(t->cur);
    sps__heap_free(&t->heap);
    free(t->tmp_tid);
    free(t->lanes);
    free(t->keys);
    sps__htab_free(&t->key_index);
    free(t->labels);
    free(t->threads);
    free(t->procs);
    free(t->names);
    free(t->counters);
    free(t->xlabels);
    sps__h5r_counters_free(&t->cnt);
    sps__h5r_free(t->r);
    free(t);
}

/* Index of thread (rank, tid), added when add is set; -1 if absent or on
 * ENOMEM (then t->err is set). */
static int32_t thread_of(h5tl_t *t, tkey_t k, int add) {
    sps__hprobe_t p = sps__htab_probe(&t->key_index, sps__hash_pair(k.rank, (uint64_t)k.tid));
    for (uint32_t i; sps__htab_next(&t->key_index, &p, &i);)
        if (t->keys[i].rank == k.rank && t->keys[i].tid == k.tid) return (int32_t)i;
    if (!add) return -1;
    if (t->nkeys >= INT32_MAX || sps__htab_make_room(&t->key_index, &p)) {
        t->err = SPS_ENOMEM;
        return -1;
    }
    if (t->nkeys == t->capkeys) {
        size_t cap = t->capkeys ? t->capkeys * 2 : 64;
        tkey_t *v = realloc(t->keys, cap * sizeof *v);
        if (!v) { t->err = SPS_ENOMEM; return -1; }
        t->keys = v;
        t->capkeys = cap;
    }
    t->keys[t->nkeys] = k;
    sps__htab_put(&t->key_index, &p, (uint32_t)t->nkeys);
    return (int32_t)t->nkeys++;
}

/* Loads the next block of cursor c.  Returns 0 or an error code. */
static int cursor_fill(h5tl_t *t, cursor_t *c) {
    const sps__h5r_t *r = t->r;
    size_t n = c->end - c->next < t->block ? (size_t)(c->end - c->next) : t->block;
    int rc = sps__h5r_events(r, c->next, n, c->start, c->dur, t->tmp_tid);
    if (rc) return rc;
    uint32_t rank = r->rows[c->row].rank;
    for (size_t i = 0; i < n; i++) {
        if (r->deltas) { /* wrapping, like numpy's cumsum: hostile values cannot trap */
            c->acc = (int64_t)((uint64_t)c->acc + (uint64_t)c->start[i]);
            c->start[i] = c->acc;
        }
        if (c->dur[i] < 0) c->dur[i] = 0;
        if (c->next + i > r->rows[c->row].offset && c->start[i] < c->last) {
            sps__err_set("events of region '%s' (rank %u) are not in start order",
                               r->names[r->rows[c->row].file_region], rank);
            return SPS_EFORMAT;
        }
        c->last = c->start[i];
        if (i && t->tmp_tid[i] == t->tmp_tid[i - 1]) { /* runs of one thread: one lookup */
            c->thread[i] = c->thread[i - 1];
            continue;
        }
        tkey_t k = {rank, t->tmp_tid[i] >= 0 ? t->tmp_tid[i] : 0};
        int32_t th = thread_of(t, k, 0); /* threads_build found them all */
        if (th < 0) return t->err ? t->err : SPS_EFORMAT;
        c->thread[i] = (uint32_t)th;
    }
    c->next += n;
    c->i = 0;
    c->n = n;
    return 0;
}

/* Order of events: start (the heap's key), then longer first (an
 * enclosing call before what it contains), then thread, then row (the
 * cursors' order, the heap's last resort). */
static int cur_tie(void *ctx, uint32_t a, uint32_t b) {
    const h5tl_t *t = ctx;
    const cursor_t *x = &t->cur[a], *y = &t->cur[b];
    int64_t dx = x->dur[x->i], dy = y->dur[y->i];
    if (dx != dy) return dx > dy ? -1 : 1;
    if (x->thread[x->i] != y->thread[y->i]) return x->thread[x->i] < y->thread[y->i] ? -1 : 1;
    return 0;
}

/* The heap key of cursor c's next event. */
static uint64_t cur_key(const cursor_t *c) { return sps__heap_key_i64(c->start[c->i]); }

/* Column `name` of table tab, or NULL. */
static const sps_file_column_t *table_col(const sps_file_table_t *tab, const char *name) {
    for (size_t i = 0; i < tab->ncols; i++)
        if (strcmp(tab->cols[i].name, name) == 0) return &tab->cols[i];
    return NULL;
}

/* The name the file's /thread_table gives thread tid of rank (its "index"
 * column is the events' thread id; "ranks" says whose row it is where the
 * file holds several ranks), or NULL when it gives none. */
static const char *thread_table_name(const sps__h5r_t *r, uint32_t rank, int64_t tid) {
    const sps_file_table_t *tab = &r->thread_table;
    const sps_file_column_t *idx = table_col(tab, "index");
    const sps_file_column_t *names = table_col(tab, "name");
    const sps_file_column_t *ranks = table_col(tab, "ranks");
    if (!idx || idx->is_text || !names || !names->is_text) return NULL;
    if (ranks && ranks->is_text) ranks = NULL;
    for (size_t i = 0; i < tab->nrows; i++)
        if (idx->ints[i] == tid && (!ranks || ranks->ints[i] == (int64_t)rank) &&
            names->texts[i] && names->texts[i][0])
            return names->texts[i];
    return NULL;
}

/* Adds the threads of cursor c's row from a pass over its thread ids
 * alone (the other columns are neither read nor decoded: the real pass
 * checks them).  0 or an error code. */
static int threads_of_row(h5tl_t *t, const cursor_t *c) {
    const sps__h5r_t *r = t->r;
    uint32_t rank = r->rows[c->row].rank;
    for (uint64_t at = c->next; at < c->end;) {
        size_t n = c->end - at < t->block ? (size_t)(c->end - at) : t->block;
        int rc = sps__h5r_events_ids(r, at, n, NULL, NULL, t->tmp_tid, NULL, NULL);
        if (rc) return rc;
        for (size_t i = 0; i < n; i++) {
            if (i && t->tmp_tid[i] == t->tmp_tid[i - 1]) continue; /* runs: one lookup */
            tkey_t k = {rank, t->tmp_tid[i] >= 0 ? t->tmp_tid[i] : 0};
            if (thread_of(t, k, 1) < 0) return t->err ? t->err : SPS_EFORMAT;
        }
        at += n;
    }
    return 0;
}

/* Finds every thread with a pre-pass over the rows' thread ids (the header
 * lists threads before any span), then names processes and threads: a
 * thread by its name in /thread_table (MainThread, w0, a pthread name),
 * else "thread N". */
static int threads_build(h5tl_t *t) {
    for (size_t k = 0; k < t->ncur && !t->err; k++) {
        int rc = threads_of_row(t, &t->cur[k]);
        if (rc) return rc;
    }
    size_t n = t->nkeys;
    int multi = 0;
    for (size_t j = 0; j < n; j++) if (t->keys[j].rank != t->keys[0].rank) multi = 1;
    t->threads = calloc(n + 1, sizeof *t->threads);
    t->procs = calloc(n + 1, sizeof *t->procs);
    t->labels = calloc(2 * n + 1, sizeof *t->labels);
    if (!t->threads || !t->procs || !t->labels) return SPS_ENOMEM;
    size_t np = 0;
    for (size_t j = 0; j < n; j++) {
        int64_t pid = t->keys[j].rank;
        size_t p = 0;
        while (p < np && t->procs[p].pid != pid) p++;
        if (p == np) {
            char *lab = t->labels[n + np];
            int ranked = multi || t->keys[j].rank > 0;
            if (ranked) snprintf(lab, 32, "rank %u", t->keys[j].rank);
            else snprintf(lab, 32, "spanscope");
            t->procs[np++] = (sps__tl_proc_t){pid, ranked ? pid : -1, lab};
        }
        const char *name = thread_table_name(t->r, t->keys[j].rank, t->keys[j].tid);
        if (name) {
            size_t len = strnlen(name, 31);
            if (name[len]) len = sps__utf8_cut(name, len); /* 31 bytes, whole characters */
            memcpy(t->labels[j], name, len);
            t->labels[j][len] = 0;
        } else {
            snprintf(t->labels[j], 32, "thread %lld", (long long)t->keys[j].tid);
        }
        t->threads[j] = (sps__tl_thread_t){pid, t->keys[j].tid, t->labels[j]};
    }
    t->h.nthreads = n;
    t->h.threads = t->threads;
    t->h.nprocs = np;
    t->h.procs = t->procs;
    return 0;
}

/* The next span: skips spans that partially overlap an open span of their
 * thread (counted in dropped). */
static int h5tl_next(void *p, sps__tl_span_t *s) {
    h5tl_t *t = p;
    while (t->heap.n) {
        cursor_t *c = &t->cur[sps__heap_top(&t->heap).idx];
        sps__tl_span_t out = {t->r->rows[c->row].file_region, c->thread[c->i],
                              c->start[c->i], c->start[c->i] + c->dur[c->i],
                              sps__h5r_carried_ns(t->r, c->next - c->n + c->i)};
        if (out.end_ns < out.start_ns) out.end_ns = INT64_MAX; /* overflow */
        if (++c->i == c->n && c->next < c->end) {
            int rc = cursor_fill(t, c);
            if (rc) return rc; /* the message is set */
        }
        if (c->i < c->n) sps__heap_update_top(&t->heap, cur_key(c));
        else sps__heap_pop(&t->heap);
        int keep = sps__fold_keep(&t->lanes[out.thread], out.start_ns, out.end_ns);
        if (keep < 0) return SPS_ENOMEM;
        if (!keep) {
            t->dropped++;
            continue;
        }
        *s = out;
        return 1;
    }
    return 0;
}

/* Sets up one cursor per non-empty row with its block buffers. */
static int cursors_make(h5tl_t *t) {
    const sps__h5r_t *r = t->r;
    size_t rows = 0;
    for (size_t i = 0; i < r->nrows; i++) rows += r->rows[i].count > 0;
    size_t b = (64u << 20) / 24 / (rows ? rows : 1);
    t->block = b < 16 ? 16 : b > 4096 ? 4096 : b;
    t->cur = calloc(rows + 1, sizeof *t->cur);
    sps__heap_init(&t->heap, cur_tie, t);
    t->tmp_tid = malloc(t->block * sizeof *t->tmp_tid);
    if (!t->cur || sps__heap_reserve(&t->heap, rows) || !t->tmp_tid) return SPS_ENOMEM;
    for (size_t i = 0; i < r->nrows; i++) {
        if (!r->rows[i].count) continue;
        cursor_t *c = &t->cur[t->ncur++];
        c->row = (uint32_t)i;
        c->next = r->rows[i].offset;
        c->end = r->rows[i].offset + r->rows[i].count;
        c->start = malloc(t->block * sizeof *c->start);
        c->dur = malloc(t->block * sizeof *c->dur);
        c->thread = malloc(t->block * sizeof *c->thread);
        if (!c->start || !c->dur || !c->thread) return SPS_ENOMEM;
    }
    return 0;
}

static int counter_cmp(const void *a, const void *b) {
    const sps__tl_counter_t *x = a, *y = b;
    return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* The index of rank's process in t's header, -1 if none. */
static long proc_find(const h5tl_t *t, int64_t rank) {
    for (size_t p = 0; p < t->h.nprocs; p++)
        if (t->procs[p].pid == rank) return (long)p;
    return -1;
}

/* Adds a process for each rank that has counter samples but no spans. */
static int procs_for_counters(h5tl_t *t) {
    size_t np = t->h.nprocs, extra = 0;
    for (size_t i = 0; i < t->cnt.n; i++) {
        if (proc_find(t, t->cnt.ranks[i]) >= 0) continue;
        sps__tl_proc_t *procs = realloc(t->procs, (t->h.nprocs + 2) * sizeof *procs);
        if (!procs) return SPS_ENOMEM;
        t->procs = procs;
        procs[t->h.nprocs++] = (sps__tl_proc_t){t->cnt.ranks[i], t->cnt.ranks[i], NULL};
        t->h.procs = t->procs;
        extra++;
    }
    if (!extra) return 0;
    if (!(t->xlabels = calloc(extra, sizeof *t->xlabels))) return SPS_ENOMEM;
    for (size_t k = 0; k < extra; k++) {
        snprintf(t->xlabels[k], 32, "rank %lld", (long long)t->procs[np + k].pid);
        t->procs[np + k].name = t->xlabels[k];
    }
    return 0;
}

/* Adds the file's /counters to the header: their names after the region
 * names, one process per rank.  Returns 0 or an error code (message set). */
static int counters_load(h5tl_t *t, const char *path) {
    int rc = sps__h5r_counters(path, &t->cnt);
    if (rc) return rc; /* the message is set */
    if (!t->cnt.n) return 0;
    size_t base = t->h.nnames;
    const char **names = realloc(t->names, (base + t->cnt.nnames + 1) * sizeof *names);
    if (!names) return SPS_ENOMEM;
    t->names = names;
    for (size_t k = 0; k < t->cnt.nnames; k++) names[base + k] = t->cnt.names[k];
    t->h.names = names;
    t->h.nnames = base + t->cnt.nnames;
    if (!(t->counters = malloc(t->cnt.n * sizeof *t->counters))) return SPS_ENOMEM;
    if (procs_for_counters(t)) return SPS_ENOMEM;
    for (size_t i = 0; i < t->cnt.n; i++) {
        long p = proc_find(t, t->cnt.ranks[i]);
        t->counters[i] = (sps__tl_counter_t){(uint32_t)(base + (size_t)t->cnt.series[i]),
                                             (uint32_t)p, t->cnt.times[i], t->cnt.values[i]};
    }
    qsort(t->counters, t->cnt.n, sizeof *t->counters, counter_cmp);
    t->h.ncounters = t->cnt.n;
    t->h.counters = t->counters;
    return 0;
}

int sps__h5tl_open(void **out, const char *path) {
    *out = NULL;
    h5tl_t *t = calloc(1, sizeof *t);
    if (!t) return SPS_ENOMEM;
    t->vt = (sps__tlr_vt_t){h5tl_header, h5tl_next, h5tl_free};
    int rc = sps__h5r_open_index(&t->r, path);
    if (rc) {
        free(t);
        return rc; /* the message is set */
    }
    const sps__h5r_t *r = t->r;
    if (r->aggregate) {
        sps__err_set("%s: an aggregate-mode file has no per-call events to draw", path);
        h5tl_free(t);
        return SPS_EFORMAT;
    }
    t->names = malloc((r->nnames + 1) * sizeof *t->names);
    rc = t->names ? cursors_make(t) : SPS_ENOMEM;
    if (!rc) rc = threads_build(t);
    if (!rc && !(t->lanes = calloc(t->h.nthreads + 1, sizeof *t->lanes))) rc = SPS_ENOMEM;
    int64_t minstart = INT64_MAX;
    uint64_t total = 0;
    for (size_t k = 0; !rc && k < t->ncur; k++) { /* load the first blocks */
        rc = cursor_fill(t, &t->cur[k]);
        if (!rc) {
            sps__heap_push(&t->heap, cur_key(&t->cur[k]), (uint32_t)k); /* reserved */
            if (t->cur[k].start[0] < minstart) minstart = t->cur[k].start[0];
            total += r->rows[t->cur[k].row].count;
        }
    }
    if (rc) {
        if (rc == SPS_ENOMEM) sps__err_set("%s: out of memory", path);
        else if (!sps__err_msg()[0]) sps__err_set("%s: %s", path, sps_strerror(rc));
        h5tl_free(t);
        return rc;
    }
    for (size_t k = 0; k < r->nnames; k++) t->names[k] = r->names[k];
    t->h.nnames = r->nnames;
    t->h.names = t->names;
    t->h.base_ns = r->meta.has_times ? r->meta.start_time_ns : (total ? minstart : 0);
    const char *slash = strrchr(path, '/');
    t->h.trace_name = slash ? slash + 1 : path;
    t->h.rank = t->h.nprocs > 1 ? 0 : -1;
    t->h.world_size = (int64_t)t->h.nprocs;
    /* a collective (MPI) session wrote it: spanscope's MPI integration */
    t->h.backend = r->meta.mpi_size > 1 ? "mpi" : NULL;
    t->h.nspans = total;
    t->h.wall_anchor_ns = r->meta.wall_anchor_ns;
    t->h.mono_anchor_ns = r->meta.mono_anchor_ns;
    t->h.hostname = r->meta.hostname;
    rc = counters_load(t, path);
    if (rc) {
        if (rc == SPS_ENOMEM) sps__err_set("%s: out of memory", path);
        h5tl_free(t);
        return rc;
    }
    *out = t;
    return 0;
}
