/*
 * spansort.c -- a bounded-memory external sort of fixed-size span records,
 * used by the trace readers (chrome_json_read.c, perfetto_read.c) so that
 * reading a 10^7-span trace does not hold every span in memory.
 *
 * Records are appended to an in-memory run (grown by doubling up to the
 * run size: small inputs never touch disk).  A full run is sorted and
 * appended to one unlinked temporary file in $TMPDIR (default /tmp).  At
 * the end the last run is sorted in memory and the runs are k-way merged
 * with a binary heap, each spilled run read through a small buffer.
 *
 * Memory: the run (run size x 32 bytes, default 1 Mi records = 32 MiB),
 * qsort's temporary copy while a run is sorted, and the merge buffers
 * (at most 16 MiB in all).  The run size comes from sps__xsort_set_run,
 * else the environment variable SPANSCOPE_SORT_RUN (records, >= 2), else
 * the default.  Errors set the readers' one-line message
 * (sps__err_set) naming the trace being read.
 */
#include "formats/timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XS_DEFAULT_RUN ((size_t)1 << 20)  /* records per run */
#define XS_MERGE_BYTES ((size_t)16 << 20) /* all merge buffers together */
#define XS_MIN_BUF 64                     /* records per run buffer, at least */

/* A spilled run being merged: its place in the file and a read buffer. */
typedef struct {
    off_t off;          /* next record's file offset */
    uint64_t left;      /* records not yet read into buf */
    sps__srec_t *buf;   /* NULL for the in-memory run */
    size_t pos, n;      /* buf[pos..n) not yet delivered */
} xs_cursor_t;

struct sps__xsort {
    sps__srec_cmp_t cmp;
    char *what;             /* names the trace in messages */
    size_t run_max;         /* records per run */
    sps__srec_t *run;
    size_t nrun, caprun;
    int fd;                 /* temporary file, -1 until the first spill */
    off_t fsize;
    uint64_t *run_len;      /* records in each spilled run */
    size_t nruns, capruns;
    uint64_t total;
    /* merging */
    int finished;
    xs_cursor_t *cur;
    size_t ncur;
    sps__heap_t heap;       /* cursors by their heads (xs_tie; keys all 0) */
    size_t mem_pos;         /* when nothing was spilled: next in run */
};

static size_t g_run_override;

/* Sets the run size in records for sorters created afterwards (tests);
 * 0 restores the default (or SPANSCOPE_SORT_RUN). */
void sps__xsort_set_run(size_t records) { g_run_override = records; }

/* The run size for a new sorter: override, environment or default. */
static size_t run_size(void) {
    if (g_run_override >= 2) return g_run_override;
    const char *e = getenv("SPANSCOPE_SORT_RUN");
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (!*end && v >= 2 && v <= ((size_t)1 << 28)) return (size_t)v;
    }
    return XS_DEFAULT_RUN;
}

/* Creates a sorter ordering records by cmp; what names the input in error
 * messages.  Returns 0 or SPS_ENOMEM. */
int sps__xsort_new(sps__xsort_t **out, sps__srec_cmp_t cmp, const char *what) {
    *out = NULL;
    sps__xsort_t *x = calloc(1, sizeof *x);
    if (!x || !(x->what = strdup(what ? what : "trace"))) {
        free(x);
        return SPS_ENOMEM;
    }
    x->cmp = cmp;
    x->run_max = run_size();
    x->fd = -1;
    *out = x;
    return 0;
}

/* Writes all n bytes of b at the end of the temporary file.  Returns 0 or
 * SPS_EIO with the message set (ENOSPC says the disk is full). */
static int xs_write(sps__xsort_t *x, const void *b, size_t n) {
    if (sps__pwrite_all(x->fd, b, n, x->fsize)) {
        sps__err_set("%s: cannot write the temporary sort file in %s: %s",
                     x->what, sps__tmpdir(), strerror(errno));
        return SPS_EIO;
    }
    x->fsize += (off_t)n;
    return 0;
}

/* Creates the unlinked temporary file.  Returns 0 or SPS_EIO. */
static int xs_mktemp(sps__xsort_t *x) {
    x->fd = sps__tmpfile_open(NULL, "spanscope-sort-");
    if (x->fd < 0) {
        int err = errno;
        sps__err_set("%s: cannot create a temporary sort file in %s "
                     "(set TMPDIR): %s", x->what, sps__tmpdir(), strerror(err));
        return err == ENOMEM ? SPS_ENOMEM : SPS_EIO;
    }
    return 0;
}

/* Sorts the in-memory run and appends it to the temporary file as a new
 * run.  Returns 0, SPS_EIO or SPS_ENOMEM. */
static int xs_spill(sps__xsort_t *x) {
    int rc;
    if (x->fd < 0 && (rc = xs_mktemp(x))) return rc;
    if (x->nruns == x->capruns) {
        size_t c = x->capruns ? x->capruns * 2 : 16;
        uint64_t *p = realloc(x->run_len, c * sizeof *p);
        if (!p) return SPS_ENOMEM;
        x->run_len = p;
        x->capruns = c;
    }
    qsort(x->run, x->nrun, sizeof *x->run, x->cmp);
    if ((rc = xs_write(x, x->run, x->nrun * sizeof *x->run))) return rc;
    x->run_len[x->nruns++] = x->nrun;
    x->nrun = 0;
    return 0;
}

/* Appends one record.  Returns 0, SPS_ENOMEM or SPS_EIO (message set for
 * EIO). */
int sps__xsort_add(sps__xsort_t *x, const sps__srec_t *r) {
    if (x->finished) return SPS_EINVAL;
    if (x->nrun == x->caprun) {
        int rc;
        if (x->caprun >= x->run_max) {
            if ((rc = xs_spill(x))) return rc;
        } else {
            size_t c = x->caprun ? x->caprun * 2 : 1024;
            if (c > x->run_max) c = x->run_max;
            sps__srec_t *p = realloc(x->run, c * sizeof *p);
            if (!p) return SPS_ENOMEM;
            x->run = p;
            x->caprun = c;
        }
    }
    x->run[x->nrun++] = *r;
    x->total++;
    return 0;
}

/* Records added so far. */
uint64_t sps__xsort_count(const sps__xsort_t *x) { return x->total; }

/* True when some records went to the temporary file. */
int sps__xsort_spilled(const sps__xsort_t *x) { return x->nruns > 0; }

/* Refills cursor c from the file.  Returns 0 or SPS_EIO. */
static int xs_fill(sps__xsort_t *x, xs_cursor_t *c, size_t bufn) {
    size_t want = c->left < bufn ? (size_t)c->left : bufn;
    size_t bytes = want * sizeof *c->buf;
    ssize_t got = sps__pread_full(x->fd, c->buf, bytes, c->off);
    if (got != (ssize_t)bytes) {
        sps__err_set("%s: cannot read the temporary sort file: %s", x->what,
                     got < 0 ? strerror(errno) : "it is shorter than written");
        return SPS_EIO;
    }
    c->off += (off_t)bytes;
    c->left -= want;
    c->pos = 0;
    c->n = want;
    return 0;
}

/* The head record of cursor i. */
static const sps__srec_t *xs_head(const sps__xsort_t *x, uint32_t i) {
    const xs_cursor_t *c = &x->cur[i];
    return c->buf ? &c->buf[c->pos] : &x->run[c->pos];
}

/* The order of two cursors' heads: the reader's comparator (the heap
 * then puts equal heads in cursor order, so the merge is stable). */
static int xs_tie(void *ctx, uint32_t a, uint32_t b) {
    const sps__xsort_t *x = ctx;
    return x->cmp(xs_head(x, a), xs_head(x, b));
}

/* Sets up the merge of the spilled runs and the in-memory one.  Returns 0,
 * SPS_ENOMEM or SPS_EIO. */
static int xs_merge_init(sps__xsort_t *x) {
    size_t k = x->nruns + 1;
    size_t bufn = XS_MERGE_BYTES / sizeof(sps__srec_t) / k;
    if (bufn < XS_MIN_BUF) bufn = XS_MIN_BUF;
    x->cur = calloc(k, sizeof *x->cur);
    sps__heap_init(&x->heap, xs_tie, x);
    if (!x->cur || sps__heap_reserve(&x->heap, k)) return SPS_ENOMEM;
    off_t off = 0;
    for (size_t i = 0; i < x->nruns; i++) {
        xs_cursor_t *c = &x->cur[x->ncur++];
        c->off = off;
        c->left = x->run_len[i];
        off += (off_t)(x->run_len[i] * sizeof(sps__srec_t));
        size_t bn = c->left < bufn ? (size_t)c->left : bufn;
        if (!(c->buf = malloc((bn ? bn : 1) * sizeof *c->buf))) return SPS_ENOMEM;
        int rc = xs_fill(x, c, bn);
        if (rc) return rc;
    }
    xs_cursor_t *m = &x->cur[x->ncur++];
    m->pos = 0;
    m->n = x->nrun;
    for (uint32_t i = 0; i < x->ncur; i++)
        if (x->cur[i].n) sps__heap_push(&x->heap, 0, i); /* reserved */
    return 0;
}

/* Ends the input: sorts what is in memory and prepares delivery.  Returns
 * 0, SPS_ENOMEM or SPS_EIO. */
int sps__xsort_finish(sps__xsort_t *x) {
    if (x->finished) return SPS_EINVAL;
    x->finished = 1;
    if (x->nrun) qsort(x->run, x->nrun, sizeof *x->run, x->cmp);
    if (!x->nruns) return 0;
    /* the in-memory run is not needed beyond its records: shrink it */
    if (x->nrun < x->caprun) {
        sps__srec_t *p = realloc(x->run, (x->nrun ? x->nrun : 1) * sizeof *p);
        if (p) { x->run = p; x->caprun = x->nrun ? x->nrun : 1; }
    }
    return xs_merge_init(x);
}

/* When nothing was spilled: the sorted records in memory (*n of them), for
 * in-place filtering; the caller may shrink *n with sps__xsort_truncate.
 * NULL after a spill. */
sps__srec_t *sps__xsort_memory(sps__xsort_t *x, size_t *n) {
    if (!x->finished || x->nruns) return NULL;
    *n = x->nrun;
    return x->run;
}

/* Keeps only the first n in-memory records (n <= their number). */
void sps__xsort_truncate(sps__xsort_t *x, size_t n) {
    if (!x->nruns && n < x->nrun) {
        x->total -= x->nrun - n;
        x->nrun = n;
    }
}

/* Starts the delivery over from the first record (after finish).
 * Returns 0, SPS_ENOMEM or SPS_EIO. */
int sps__xsort_rewind(sps__xsort_t *x) {
    if (!x->finished) return SPS_EINVAL;
    x->mem_pos = 0;
    if (!x->nruns) return 0;
    for (size_t i = 0; i < x->ncur; i++) free(x->cur[i].buf);
    free(x->cur);
    sps__heap_free(&x->heap);
    x->cur = NULL;
    x->ncur = 0;
    return xs_merge_init(x);
}

/* The next record in order: 1 and *r filled, 0 at the end, SPS_EIO. */
int sps__xsort_next(sps__xsort_t *x, sps__srec_t *r) {
    if (!x->finished) return SPS_EINVAL;
    if (!x->nruns) {
        if (x->mem_pos >= x->nrun) return 0;
        *r = x->run[x->mem_pos++];
        return 1;
    }
    if (!x->heap.n) return 0;
    uint32_t i = sps__heap_top(&x->heap).idx;
    xs_cursor_t *c = &x->cur[i];
    *r = *xs_head(x, i);
    if (++c->pos == c->n) {
        if (c->buf && c->left) {
            size_t cap = c->n;
            int rc = xs_fill(x, c, cap);
            if (rc) return rc;
        }
        if (c->pos == c->n) {
            sps__heap_pop(&x->heap);
            return 1;
        }
    }
    sps__heap_update_top(&x->heap, 0);
    return 1;
}

/* Frees x, its buffers and its temporary file (NULL is fine). */
void sps__xsort_free(sps__xsort_t *x) {
    if (!x) return;
    if (x->fd >= 0) close(x->fd);
    for (size_t i = 0; i < x->ncur; i++) free(x->cur[i].buf);
    free(x->cur);
    sps__heap_free(&x->heap);
    free(x->run);
    free(x->run_len);
    free(x->what);
    free(x);
}
