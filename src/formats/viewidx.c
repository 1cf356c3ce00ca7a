/* viewidx.c -- the viewer's level-of-detail index (viewidx.h; the design
 * is written up in docs/view.md, "How the index works").
 *
 * File layout (little-endian; offsets are absolute):
 *   header (128 bytes): magic "SPSVIEW\0", version, w_1, source size and
 *     mtime, t_min, t_max, spans, build seconds, the meta section's and the
 *     lane table's offset and size, lanes, levels, the file's size, format.
 *   blocks: per (lane, level) block the entries, varint-encoded: the
 *     start (2 * its gap after the previous entry's end, or 2 * its
 *     distance from the previous entry's start + 1 when it starts before
 *     that end), duration, then path and duration - self (level 0) or
 *     name, count and the longest span's duration (level >= 1).
 *   sums: per lane, level 0's per-path sums of each block, block after
 *     block (varints: paths, then per path: path, calls, total, self, min,
 *     max).
 *   directories: per (lane, level) an array of 48-byte block records
 *     (first start, last start, end, offset, bytes, entries, sum bytes).
 *   lane table: per lane thread, depth, levels, its sums' offset and size,
 *     and per level (directory
 *     offset, blocks, entries), in (thread, depth) order.
 *   meta: names, processes, threads, call paths, counter series (the
 *     samples themselves are a plain (int64, double) array before it),
 *     then the device section: the first stream's thread, the number and
 *     offset of the device records and of the reverse records.
 *   device (an .h5 with /device; viewidx.h, "Device activity"): the GPUs
 *     are processes and their streams threads after the recording's, the
 *     activities level-0 entries of their lanes (path: the name as a
 *     root); per activity a 144-byte record (18 u64: lane, start, end,
 *     kind|name, device, stream, correlation, bytes, grid and block as
 *     u32 pairs, the launching span's lane, start, end, its name|the API
 *     call's name, the API call's start, end, thread) in (lane, start)
 *     order, then per launched activity a 24-byte reverse record
 *     (launching lane, launching span's start, record) in that order.
 *
 * The viewer reads the file with pread (see Reading below).
 *
 * Building keeps, per thread, the fold's stack (model: sps__fold_span, so
 * self times and nesting are the one fold's), per lane and level one block
 * being encoded and one merge accumulator, the block directories (one
 * record per 4096 entries) and the interned call paths: never O(spans). */
#include "formats/viewidx.h"
#include "formats/export.h"
#include "formats/h5_read.h"
#include "model/model.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HDR_BYTES 128u
#define DIR_BYTES 48u
#define LANE_BYTES (32u + 24u * SPS__VIX_MAXLEV)
/* Most bytes of a block's entries: 4096 entries of at most 5 varints. */
#define BLOCK_MAX_BYTES (SPS__VIX_BLOCK * 50u)
#define PEND_MAX 64u /* entries of a level kept until its next level exists */
static const char k_magic[8] = {'S', 'P', 'S', 'V', 'I', 'E', 'W', 0};

/* ------------------------------------------------------------------------ */
/* Little-endian and varint coding                                          */
/* ------------------------------------------------------------------------ */

static void put_u32le(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64le(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32le(const unsigned char *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static uint64_t get_u64le(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* The index's byte buffers are util's (sps__bytes_t). */
typedef sps__bytes_t bbuf_t;
#define bb_room sps__bytes_room
#define bb_put sps__bytes_put

static void bb_u32(bbuf_t *b, uint32_t v) {
    unsigned char x[4];
    put_u32le(x, v);
    bb_put(b, x, 4);
}
static void bb_u64(bbuf_t *b, uint64_t v) {
    unsigned char x[8];
    put_u64le(x, v);
    bb_put(b, x, 8);
}
static void bb_str(bbuf_t *b, const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (n > UINT32_MAX) n = UINT32_MAX;
    bb_u32(b, (uint32_t)n);
    bb_put(b, s, n);
}
SPS__INLINE void bb_var(bbuf_t *b, uint64_t v) { /* four a span: inline */
    if (b->cap - b->n < 11 && bb_room(b, 10)) return; /* the call only to grow */
    while (v >= 0x80) {
        b->p[b->n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    b->p[b->n++] = (unsigned char)v;
}
static void bb_free(bbuf_t *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* A bounded reader over untrusted bytes: any read past the end sets bad. */
typedef struct rd {
    const unsigned char *p;
    size_t n, i;
    int bad;
} rd_t;

static uint64_t rd_var(rd_t *r) {
    if (r->i < r->n && r->p[r->i] < 0x80) return r->p[r->i++]; /* most: one byte */
    uint64_t v = 0;
    for (unsigned sh = 0; sh < 70; sh += 7) {
        if (r->i >= r->n) break;
        unsigned char c = r->p[r->i++];
        if (sh == 63 && c > 1) break;
        v |= (uint64_t)(c & 0x7f) << sh;
        if (!(c & 0x80)) return v;
    }
    r->bad = 1;
    return 0;
}
static uint32_t rd_u32(rd_t *r) {
    if (r->n - r->i < 4 || r->i > r->n) {
        r->bad = 1;
        r->i = r->n;
        return 0;
    }
    uint32_t v = get_u32le(r->p + r->i);
    r->i += 4;
    return v;
}
static uint64_t rd_u64(rd_t *r) {
    if (r->n - r->i < 8 || r->i > r->n) {
        r->bad = 1;
        r->i = r->n;
        return 0;
    }
    uint64_t v = get_u64le(r->p + r->i);
    r->i += 8;
    return v;
}
/* A string as a malloc'd copy (invalid UTF-8 repaired); NULL when bad or
 * out of memory (*oom set). */
static char *rd_str(rd_t *r, int *oom) {
    uint32_t n = rd_u32(r);
    if (r->bad || n > r->n - r->i) {
        r->bad = 1;
        return NULL;
    }
    char *s = sps__utf8_sanitize((const char *)r->p + r->i, n);
    if (!s) *oom = 1;
    r->i += n;
    return s;
}

/* ------------------------------------------------------------------------ */
/* The source's identity                                                    */
/* ------------------------------------------------------------------------ */

int sps__vix_src_stat(const char *path, sps__vix_src_t *s) {
    struct stat st;
    if (stat(path, &st) != 0) {
        sps__err_os_note(errno);
        return sps__err_fail(SPS_EIO, "%s: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        return sps__err_fail(SPS_EINVAL, "%s: not a regular file", path);
    s->size = (uint64_t)st.st_size;
    s->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return 0;
}

uint64_t sps__vix_bucket(uint32_t k) {
    if (k == 0) return 0;
    return (uint64_t)SPS__VIX_W1 << (2 * (k - 1));
}

/* ------------------------------------------------------------------------ */
/* Building                                                                 */
/* ------------------------------------------------------------------------ */

#define ACC_PATHS 8 /* per-path sums kept while a level-0 block fills */

/* An entry on its way into a level. */
typedef struct bent {
    int64_t start, end;
    uint64_t count;
    uint32_t name, path;
    int64_t self, longest;
} bent_t;

typedef struct bdir {
    int64_t first, last_start, end;
    uint64_t off;
    uint32_t len, n, sumlen;
} bdir_t;

typedef struct blevel {
    bbuf_t blk;          /* entries of the block being filled */
    bbuf_t sums;         /* level 0: the per-path sums of every block so far */
    uint32_t n;          /* entries in it */
    int64_t first, prev, prev_end, end; /* block's first start; last entry's start, end */
    bdir_t *dir;
    size_t ndir, capdir;
    uint64_t nent;
    uint64_t dir_off;
    bent_t run;          /* the merge accumulator feeding this level */
    int run_on;
    bent_t *pend;        /* first entries, until the next level exists */
    /* level 0: the block's per-path sums as its entries come, for up to
     * ACC_PATHS paths in first-seen order (a lane's block rarely has more);
     * acc_over: more, then the flush decodes the block to sum it */
    sps__vix_sum_t acc[ACC_PATHS];
    uint32_t acc_path[ACC_PATHS];
    uint32_t nacc, acc_over;
    uint32_t npend;
} blevel_t;

typedef struct blane {
    uint32_t thread, depth, nlevels;
    blevel_t lv[SPS__VIX_MAXLEV];
} blane_t;

/* A span that holds a launch of its (thread, region): its ordinal (the
 * External id given to sps__tl_device_claim) and where it lies. */
typedef struct bstash {
    uint64_t ord;
    uint32_t thread, depth;
    int64_t start, end;
    uint32_t name;
} bstash_t;

/* The device activity while building (viewidx.h, "Device activity"). */
typedef struct bdevb {
    int on;
    sps__h5r_device_t x;   /* the file's /device (the one checked reader's) */
    sps__tl_device_t d;    /* placed on the header by device_tl.c */
    uint8_t *name_on;      /* [header names] a name that launched something */
    bstash_t *st;
    size_t nst, capst;
    uint64_t ord;          /* spans so far */
    /* after the spans: the streams (threads nthreads..) and their GPUs */
    uint32_t *sgpu;        /* [nstreams] GPU (index into d.gpus) */
    int64_t *sstream;      /* [nstreams] the stream */
    uint32_t *sdepths;     /* [nstreams] depths */
    size_t nstreams;
    uint64_t ndev, rec_off, nrev, rev_off;
} bdevb_t;

typedef struct build {
    const sps__tl_header_t *h;
    int fd;
    const char *tmp;
    uint64_t off;        /* next file offset */
    bbuf_t out;          /* write buffer at off - out.n */
    int err;             /* first error (SPS_E*) */
    sps__stack_t *stacks;  /* per thread */
    blane_t ***bydepth;    /* per thread: its lanes by depth (b_lane's cache) */
    uint32_t *nbydepth;    /* per thread: room in bydepth[thread] */
    uint32_t *depths;      /* per thread: max depth + 1 */
    uint32_t cur_thread;
    blane_t **lanes;
    size_t nlanes, caplanes;
    sps__htab_t lane_ix;   /* (thread, depth) -> lane */
    sps__vix_path_t *paths;
    size_t npaths, cappaths;
    sps__htab_t path_ix;   /* (parent, name) -> path */
    uint64_t *last_child;  /* per path: (name + 1) << 32 | path of its last child */
    size_t capcache;
    uint64_t root_last;
    /* block sums scratch, by path */
    sps__vix_sum_t *scr;
    size_t capscr;
    uint32_t *touched;
    size_t captouched;
    uint64_t nspans;
    int64_t t_min, t_max;
    bdevb_t dev;
} build_t;

static void b_fail(build_t *b, int code) {
    if (!b->err) b->err = code;
}

/* Appends n bytes to the file (buffered); returns their offset. */
static uint64_t b_write(build_t *b, const void *p, size_t n) {
    uint64_t at = b->off;
    b->off += n;
    if (b->err) return at;
    if (b->out.n + n > (1u << 20) && b->out.n) {
        if (sps__pwrite_all(b->fd, b->out.p, b->out.n, (off_t)(b->off - n - b->out.n))) {
            sps__err_os_note(errno);
            sps__err_set("writing %s: %s", b->tmp, strerror(errno));
            b_fail(b, SPS_EIO);
            return at;
        }
        b->out.n = 0;
    }
    bb_put(&b->out, p, n);
    if (b->out.oom) b_fail(b, SPS_ENOMEM);
    return at;
}

static int b_flush_out(build_t *b) {
    if (b->err) return b->err;
    if (b->out.n &&
        sps__pwrite_all(b->fd, b->out.p, b->out.n, (off_t)(b->off - b->out.n))) {
        sps__err_os_note(errno);
        sps__err_set("writing %s: %s", b->tmp, strerror(errno));
        b_fail(b, SPS_EIO);
    }
    b->out.n = 0;
    return b->err;
}

static uint32_t b_path_find(build_t *b, uint32_t parent, uint32_t name);

/* Interns (parent, name); returns the path or UINT32_MAX (no memory).
 * A one-entry cache per parent (a loop calls the same child again and
 * again) saves the hash probe for most spans. */
static uint32_t b_path(build_t *b, uint32_t parent, uint32_t name) {
    uint64_t *c = parent == UINT32_MAX ? &b->root_last : parent < b->capcache ? &b->last_child[parent] : NULL;
    if (c && *c && (uint32_t)(*c >> 32) == name + 1) return (uint32_t)*c;
    uint32_t got = b_path_find(b, parent, name);
    if (got != UINT32_MAX && c) *c = (uint64_t)(name + 1) << 32 | got;
    return got;
}

static uint32_t b_path_find(build_t *b, uint32_t parent, uint32_t name) {
    uint64_t hv = sps__hash_pair32(parent, name);
    sps__hprobe_t p = sps__htab_probe(&b->path_ix, hv);
    for (uint32_t i; sps__htab_next(&b->path_ix, &p, &i);)
        if (b->paths[i].parent == parent && b->paths[i].name == name) return i;
    if (b->npaths >= UINT32_MAX - 1 || sps__htab_make_room(&b->path_ix, &p) ||
        sps__grow((void **)&b->paths, &b->cappaths, b->npaths, sizeof *b->paths))
        return UINT32_MAX;
    if (b->npaths >= b->capcache) {
        size_t cap = b->capcache ? b->capcache * 2 : 64;
        uint64_t *lc = realloc(b->last_child, cap * sizeof *lc);
        if (!lc) return UINT32_MAX;
        memset(lc + b->capcache, 0, (cap - b->capcache) * sizeof *lc);
        b->last_child = lc;
        b->capcache = cap;
    }
    sps__htab_put(&b->path_ix, &p, (uint32_t)b->npaths);
    b->paths[b->npaths] = (sps__vix_path_t){parent, name};
    return (uint32_t)b->npaths++;
}

static blane_t *b_lane(build_t *b, uint32_t thread, uint32_t depth) {
    uint64_t hv = sps__hash_pair32(thread, depth);
    sps__hprobe_t p = sps__htab_probe(&b->lane_ix, hv);
    for (uint32_t i; sps__htab_next(&b->lane_ix, &p, &i);)
        if (b->lanes[i]->thread == thread && b->lanes[i]->depth == depth) return b->lanes[i];
    blane_t *l = calloc(1, sizeof *l);
    if (!l || sps__htab_make_room(&b->lane_ix, &p) ||
        sps__grow((void **)&b->lanes, &b->caplanes, b->nlanes, sizeof *b->lanes)) {
        free(l);
        return NULL;
    }
    l->thread = thread;
    l->depth = depth;
    l->nlevels = 1;
    sps__htab_put(&b->lane_ix, &p, (uint32_t)b->nlanes);
    b->lanes[b->nlanes++] = l;
    return l;
}

/* b_lane through a per-thread array by depth: the hash probe once per
 * lane, not once per span.  NULL on ENOMEM. */
static blane_t *b_lane_at(build_t *b, uint32_t thread, uint32_t depth) {
    if (depth < b->nbydepth[thread] && b->bydepth[thread][depth])
        return b->bydepth[thread][depth];
    blane_t *l = b_lane(b, thread, depth);
    if (!l) return NULL;
    if (depth >= b->nbydepth[thread]) {
        uint32_t cap = b->nbydepth[thread] ? b->nbydepth[thread] : 16;
        while (cap <= depth && cap < UINT32_MAX / 2) cap *= 2;
        if (cap <= depth) return l; /* absurd depths: the hash alone */
        blane_t **v = realloc(b->bydepth[thread], cap * sizeof *v);
        if (!v) return l;
        memset(v + b->nbydepth[thread], 0, (cap - b->nbydepth[thread]) * sizeof *v);
        b->bydepth[thread] = v;
        b->nbydepth[thread] = cap;
    }
    b->bydepth[thread][depth] = l;
    return l;
}

/* One path's sums in a level-0 block's sums record. */
static void bb_sum(bbuf_t *b, uint32_t path, const sps__vix_sum_t *s) {
    bb_var(b, path);
    bb_var(b, s->count);
    bb_var(b, (uint64_t)s->total);
    bb_var(b, (uint64_t)s->self);
    bb_var(b, (uint64_t)s->min);
    bb_var(b, (uint64_t)s->max);
}

/* Writes level k's block of lane l (level 0: its per-path sums first). */
static void b_block_flush(build_t *b, blane_t *l, uint32_t k) {
    blevel_t *v = &l->lv[k];
    if (!v->n) return;
    bbuf_t *sums = &v->sums;
    size_t sum0 = sums->n;
    if (k == 0 && !v->acc_over) { /* summed as the entries came */
        bb_var(sums, v->nacc);
        for (uint32_t i = 0; i < v->nacc; i++) bb_sum(sums, v->acc_path[i], &v->acc[i]);
        if (sums->oom) b_fail(b, SPS_ENOMEM);
    } else if (k == 0) { /* decode the block once, summing per path */
        rd_t r = {v->blk.p, v->blk.n, 0, 0};
        size_t nt = 0;
        for (uint32_t i = 0; i < v->n; i++) {
            (void)rd_var(&r); /* its start */
            int64_t dur = (int64_t)rd_var(&r);
            uint32_t path = (uint32_t)rd_var(&r);
            int64_t self = dur - (int64_t)rd_var(&r);
            sps__vix_sum_t *s = &b->scr[path];
            if (!s->count) {
                b->touched[nt++] = path;
                s->min = s->max = dur;
            }
            s->count++;
            s->total += dur;
            s->self += self;
            if (dur < s->min) s->min = dur;
            if (dur > s->max) s->max = dur;
        }
        bb_var(sums, nt);
        for (size_t i = 0; i < nt; i++) {
            sps__vix_sum_t *s = &b->scr[b->touched[i]];
            bb_sum(sums, b->touched[i], s);
            memset(s, 0, sizeof *s);
        }
        if (sums->oom) b_fail(b, SPS_ENOMEM);
    }
    if (sps__grow((void **)&v->dir, &v->capdir, v->ndir, sizeof *v->dir)) {
        b_fail(b, SPS_ENOMEM);
        return;
    }
    uint64_t at = b_write(b, v->blk.p, v->blk.n);
    if (v->blk.n > BLOCK_MAX_BYTES) b_fail(b, SPS_ETOOBIG);
    /* ends along the lane as a running maximum: the searches' order */
    int64_t end = v->ndir && v->dir[v->ndir - 1].end > v->end ? v->dir[v->ndir - 1].end : v->end;
    v->dir[v->ndir++] = (bdir_t){v->first, v->prev, end, at, (uint32_t)v->blk.n, v->n,
                                 (uint32_t)(sums->n - sum0)};
    v->blk.n = 0;
    v->n = 0;
    v->nacc = v->acc_over = 0;
}

/* Adds level-0 entry e to its block's running per-path sums (the same
 * numbers, in the same order, as decoding the block at its flush). */
static void b_acc(blevel_t *v, const bent_t *e) {
    if (v->acc_over) return;
    uint32_t j = 0;
    while (j < v->nacc && v->acc_path[j] != e->path) j++;
    int64_t dur = e->end - e->start;
    sps__vix_sum_t *a = &v->acc[j];
    if (j == v->nacc) {
        if (j == ACC_PATHS) {
            v->acc_over = 1;
            return;
        }
        v->nacc++;
        v->acc_path[j] = e->path;
        *a = (sps__vix_sum_t){0, 0, 0, dur, dur};
    }
    a->count++;
    a->total += dur;
    a->self += e->self;
    if (dur < a->min) a->min = dur;
    if (dur > a->max) a->max = dur;
}

static void b_feed(build_t *b, blane_t *l, uint32_t k, const bent_t *e);

/* Adds entry e to level k of lane l and passes it up. */
static void b_emit(build_t *b, blane_t *l, uint32_t k, const bent_t *e) {
    blevel_t *v = &l->lv[k];
    if (v->n == 0) {
        v->first = v->prev = v->prev_end = e->start;
        v->end = e->end;
    }
    /* the start: from the previous entry's end (disjoint entries: a small
     * gap), else from its start; the low bit says which */
    uint64_t gap = e->start >= v->prev_end ? (uint64_t)e->start - (uint64_t)v->prev_end
                                           : (uint64_t)e->start - (uint64_t)v->prev;
    if (gap > (UINT64_MAX >> 1)) b_fail(b, SPS_ETOOBIG);
    bb_var(&v->blk, gap << 1 | (e->start < v->prev_end));
    bb_var(&v->blk, (uint64_t)(e->end - e->start));
    if (k == 0) {
        b_acc(v, e);
        bb_var(&v->blk, e->path);
        bb_var(&v->blk, (uint64_t)(e->end - e->start - e->self)); /* 0 for a leaf */
    } else {
        bb_var(&v->blk, e->name);
        bb_var(&v->blk, e->count);
        bb_var(&v->blk, (uint64_t)e->longest);
    }
    if (v->blk.oom) b_fail(b, SPS_ENOMEM);
    v->prev = e->start;
    v->prev_end = e->end;
    if (e->end > v->end) v->end = e->end;
    v->n++;
    v->nent++;
    if (v->n >= SPS__VIX_BLOCK) b_block_flush(b, l, k);
    if (k + 1 >= SPS__VIX_MAXLEV) return;
    if (l->nlevels > k + 1) {
        b_feed(b, l, k + 1, e);
        return;
    }
    if (!v->pend && !(v->pend = malloc(PEND_MAX * sizeof *v->pend))) {
        b_fail(b, SPS_ENOMEM);
        return;
    }
    v->pend[v->npend++] = *e;
    if (v->npend == PEND_MAX) { /* enough entries here: the next level */
        l->nlevels = k + 2;
        for (uint32_t i = 0; i < v->npend; i++) b_feed(b, l, k + 1, &v->pend[i]);
        free(v->pend);
        v->pend = NULL;
        v->npend = 0;
    }
}

static void b_run_flush(build_t *b, blane_t *l, uint32_t k) {
    blevel_t *v = &l->lv[k];
    if (!v->run_on) return;
    v->run_on = 0;
    bent_t r = v->run;
    b_emit(b, l, k, &r);
}

/* Level k (>= 1) takes entry e of level k - 1: an entry at least w_k long
 * stays itself; shorter ones merge while their run's extent fits in w_k. */
static void b_feed(build_t *b, blane_t *l, uint32_t k, const bent_t *e) {
    blevel_t *v = &l->lv[k];
    int64_t w = (int64_t)sps__vix_bucket(k);
    if (e->end - e->start >= w) {
        b_run_flush(b, l, k);
        b_emit(b, l, k, e);
    } else if (v->run_on && e->end - v->run.start <= w) {
        bent_t *r = &v->run;
        if (e->end > r->end) r->end = e->end;
        r->count += e->count;
        if (e->longest > r->longest) {
            r->longest = e->longest;
            r->name = e->name;
        }
    } else {
        b_run_flush(b, l, k);
        v->run = *e;
        v->run.path = UINT32_MAX;
        v->run.self = 0;
        v->run_on = 1;
    }
}

/* A frame closed by the fold: a span of level 0 of its lane. */
static void b_close(void *ctx, const sps__frame_t *f, uint64_t end, uint64_t self,
                    size_t depth) {
    build_t *b = ctx;
    if (b->err) return;
    if (depth >= UINT32_MAX) {
        b_fail(b, SPS_ETOOBIG);
        return;
    }
    blane_t *l = b_lane_at(b, b->cur_thread, (uint32_t)depth);
    if (!l) {
        b_fail(b, SPS_ENOMEM);
        return;
    }
    int64_t st = (int64_t)(f->start + (uint64_t)INT64_MIN);
    int64_t en = (int64_t)(end + (uint64_t)INT64_MIN);
    uint32_t path = (uint32_t)f->node;
    bent_t e = {st, en, 1, b->paths[path].name, path, (int64_t)self, en - st};
    b_emit(b, l, 0, &e);
}

static int lane_cmp(const void *pa, const void *pb) {
    const blane_t *a = *(blane_t *const *)pa, *c = *(blane_t *const *)pb;
    if (a->thread != c->thread) return a->thread < c->thread ? -1 : 1;
    return a->depth < c->depth ? -1 : a->depth > c->depth;
}

/* Counter samples grouped by (name, proc): index order for the series. */
typedef struct cref {
    uint32_t series;
    size_t i;
} cref_t;

static int cref_cmp(const void *pa, const void *pb) {
    const cref_t *a = pa, *c = pb;
    if (a->series != c->series) return a->series < c->series ? -1 : 1;
    return a->i < c->i ? -1 : a->i > c->i;
}

/* ------------------------------------------------------------------------ */
/* Counter levels of detail                                                 */
/* ------------------------------------------------------------------------ */

#define CREC_BYTES 40u   /* t, min, max, last, first child */
#define CBUF_RECS 1024u  /* records buffered per level while building */

/* The bucket of t at level k (buckets of 2^(8 + 2k) ns, floor division). */
static int64_t c_bucket(int64_t t, uint32_t k) {
    unsigned sh = 8u + 2u * k;
    return t >= 0 ? t >> sh : -1 - ((-1 - t) >> sh);
}

/* One level being built: its open record and its records' write buffer. */
typedef struct cacc {
    uint32_t k;
    uint64_t n;          /* records closed */
    uint64_t at;         /* file offset of its records */
    int64_t idx, t;      /* the open record's bucket and first time */
    double mn, mx, last;
    int any;             /* the open record has values */
    uint64_t first;      /* its first child (record of the finer level, or sample) */
    unsigned char *buf;
    uint32_t nbuf;
} cacc_t;

static void c_flush(build_t *b, cacc_t *a) {
    if (!a->nbuf || b->err) return;
    uint64_t at = a->at + (a->n - a->nbuf) * CREC_BYTES;
    if (sps__pwrite_all(b->fd, a->buf, (size_t)a->nbuf * CREC_BYTES, (off_t)at)) {
        sps__err_os_note(errno);
        sps__err_set("writing %s: %s", b->tmp, strerror(errno));
        b_fail(b, SPS_EIO);
    }
    a->nbuf = 0;
}

/* Values mn, mx, last of a later stretch of samples into a's open record
 * (strict comparisons: the earliest of equal values stays, as a walk over
 * the samples keeps it). */
static void c_merge(cacc_t *a, double mn, double mx, double last) {
    if (!a->any || mn < a->mn) a->mn = mn;
    if (!a->any || mx > a->mx) a->mx = mx;
    a->last = last;
    a->any = 1;
}

/* Closes level j's open record: written, and merged into level j + 1's. */
static void c_close(build_t *b, cacc_t *acc, uint32_t m, uint32_t j) {
    cacc_t *a = &acc[j];
    unsigned char *p = a->buf + (size_t)a->nbuf * CREC_BYTES;
    uint64_t u;
    put_u64le(p, (uint64_t)a->t);
    memcpy(&u, &a->mn, 8);
    put_u64le(p + 8, u);
    memcpy(&u, &a->mx, 8);
    put_u64le(p + 16, u);
    memcpy(&u, &a->last, 8);
    put_u64le(p + 24, u);
    put_u64le(p + 32, a->first);
    a->n++;
    if (++a->nbuf == CBUF_RECS) c_flush(b, a);
    if (j + 1 < m) c_merge(&acc[j + 1], a->mn, a->mx, a->last);
    a->any = 0;
}

/* Builds the levels of one series (its n samples refs[0..n), in time
 * order, already written): picks the levels worth keeping (one pass
 * counting buckets), reserves their records after the samples and fills
 * them in a second pass through per-level buffers.  Appends its levels to
 * *cl (growing) and returns how many. */
static uint32_t c_levels(build_t *b, const sps__tl_header_t *h, const cref_t *refs, size_t n,
                         sps__vix_clevel_t **cl, size_t *ncl, size_t *capcl,
                         unsigned char *bufs) {
    uint64_t cnt[SPS__VIX_MAXLEV] = {0};
    int64_t prev[SPS__VIX_MAXLEV];
    int64_t tprev = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        int64_t t = h->counters[refs[i].i].ts_ns;
        if (t < tprev) return 0; /* not in time order: no levels (readers give time order) */
        tprev = t;
        for (uint32_t k = 1; k < SPS__VIX_MAXLEV; k++) {
            int64_t ix = c_bucket(t, k);
            if (i && ix == prev[k]) break; /* the same bucket here: the coarser ones too */
            prev[k] = ix;
            cnt[k]++;
        }
    }
    cacc_t acc[SPS__VIX_MAXLEV];
    uint32_t m = 0;
    uint64_t below = n;
    for (uint32_t k = 1; k < SPS__VIX_MAXLEV; k++)
        if (cnt[k] && cnt[k] <= below / 4) {
            memset(&acc[m], 0, sizeof acc[m]);
            acc[m].k = k;
            acc[m].buf = bufs + (size_t)m * CBUF_RECS * CREC_BYTES;
            m++;
            below = cnt[k];
        }
    if (!m || b_flush_out(b)) return 0;
    for (uint32_t j = 0; j < m; j++) {
        if (sps__grow((void **)cl, capcl, *ncl, sizeof **cl)) {
            b_fail(b, SPS_ENOMEM);
            return 0;
        }
        acc[j].at = b->off;
        b->off += cnt[acc[j].k] * CREC_BYTES;
        (*cl)[(*ncl)++] = (sps__vix_clevel_t){acc[j].k, cnt[acc[j].k], acc[j].at};
    }
    for (size_t i = 0; i < n && !b->err; i++) {
        const sps__tl_counter_t *c = &h->counters[refs[i].i];
        uint32_t top = 0; /* levels 0..top-1 start a new record here */
        if (i == 0) top = m;
        else
            while (top < m && c_bucket(c->ts_ns, acc[top].k) != acc[top].idx) top++;
        for (uint32_t j = 0; j < top && i; j++) c_close(b, acc, m, j);
        for (uint32_t j = 0; j < top; j++) {
            acc[j].idx = c_bucket(c->ts_ns, acc[j].k);
            acc[j].t = c->ts_ns;
            acc[j].first = j ? acc[j - 1].n : i;
        }
        c_merge(&acc[0], c->value, c->value, c->value);
    }
    for (uint32_t j = 0; j < m && n; j++) c_close(b, acc, m, j);
    for (uint32_t j = 0; j < m; j++) {
        c_flush(b, &acc[j]);
        if (acc[j].n != cnt[acc[j].k]) b_fail(b, SPS_EINVAL); /* cannot happen: counted alike */
    }
    return m;
}

/* Writes the samples and the meta section; *meta_off/len where it went. */
static void b_meta(build_t *b, uint64_t *meta_off, uint64_t *meta_len) {
    const sps__tl_header_t *h = b->h;
    bbuf_t m = {0};
    /* counter series: (name, proc) in order of first sample */
    uint32_t *sname = NULL, *sproc = NULL;
    uint64_t *scount = NULL, *soff = NULL;
    size_t ns = 0, caps = 0, nc = 0;
    cref_t *refs = h->ncounters ? malloc(h->ncounters * sizeof *refs) : NULL;
    if (h->ncounters && !refs) {
        b_fail(b, SPS_ENOMEM);
        return;
    }
    sps__htab_t six = {0};
    for (size_t i = 0; i < h->ncounters && !b->err; i++) {
        const sps__tl_counter_t *c = &h->counters[i];
        if (!isfinite(c->value) || c->name >= h->nnames || c->proc >= h->nprocs) continue;
        sps__hprobe_t p = sps__htab_probe(&six, sps__hash_pair32(c->name, c->proc));
        uint32_t s = UINT32_MAX;
        for (uint32_t j; sps__htab_next(&six, &p, &j);)
            if (sname[j] == c->name && sproc[j] == c->proc) {
                s = j;
                break;
            }
        if (s == UINT32_MAX) {
            size_t c1 = caps, c2 = caps, c3 = caps;
            if (sps__htab_make_room(&six, &p) ||
                sps__grow((void **)&sname, &c1, ns, sizeof *sname) ||
                sps__grow((void **)&sproc, &c2, ns, sizeof *sproc) ||
                sps__grow((void **)&scount, &c3, ns, sizeof *scount)) {
                b_fail(b, SPS_ENOMEM);
                break;
            }
            caps = c1; /* the three grew alike (same n, same cap) */
            sps__htab_put(&six, &p, (uint32_t)ns);
            sname[ns] = c->name;
            sproc[ns] = c->proc;
            scount[ns] = 0;
            s = (uint32_t)ns++;
        }
        scount[s]++;
        refs[nc++] = (cref_t){s, i};
    }
    sps__htab_free(&six);
    uint32_t *snlev = NULL;
    sps__vix_clevel_t *cl = NULL;
    size_t ncl = 0, capcl = 0;
    unsigned char *cbufs = NULL;
    if (!b->err && ns &&
        (!(soff = calloc(ns, sizeof *soff)) || !(snlev = calloc(ns, sizeof *snlev)) ||
         !(cbufs = malloc((size_t)SPS__VIX_MAXLEV * CBUF_RECS * CREC_BYTES))))
        b_fail(b, SPS_ENOMEM);
    if (!b->err && nc) {
        qsort(refs, nc, sizeof *refs, cref_cmp); /* by series, time order kept */
        for (size_t a = 0, e; a < nc && !b->err; a = e) {
            uint32_t s = refs[a].series;
            soff[s] = b->off;
            for (e = a; e < nc && refs[e].series == s; e++) {
                unsigned char x[16];
                const sps__tl_counter_t *c = &h->counters[refs[e].i];
                double v = c->value;
                uint64_t vb;
                memcpy(&vb, &v, 8);
                put_u64le(x, (uint64_t)c->ts_ns);
                put_u64le(x + 8, vb);
                b_write(b, x, 16);
            }
            snlev[s] = c_levels(b, h, refs + a, e - a, &cl, &ncl, &capcl, cbufs);
        }
    }
    free(cbufs);
    free(refs);
    const bdevb_t *dv = &b->dev;
    size_t ndn = dv->on ? dv->x.nnames : 0, ngp = dv->on ? dv->d.ngpus : 0;
    bb_u32(&m, (uint32_t)(h->nnames + ndn));
    for (size_t i = 0; i < h->nnames; i++) bb_str(&m, h->names[i]);
    for (size_t i = 0; i < ndn; i++) bb_str(&m, dv->x.names[i]);
    bb_u32(&m, (uint32_t)(h->nprocs + ngp));
    for (size_t i = 0; i < h->nprocs; i++) {
        bb_u64(&m, (uint64_t)h->procs[i].pid);
        bb_u64(&m, (uint64_t)h->procs[i].rank);
        bb_str(&m, h->procs[i].name);
    }
    for (size_t g = 0; g < ngp; g++) { /* "GPU N": the host process's rank */
        const sps__tl_gpu_t *gp = &dv->d.gpus[g];
        bb_u64(&m, (uint64_t)gp->pid);
        bb_u64(&m, (uint64_t)(gp->host_proc < h->nprocs ? h->procs[gp->host_proc].rank : -1));
        bb_str(&m, gp->name);
    }
    bb_u32(&m, (uint32_t)(h->nthreads + dv->nstreams));
    for (size_t i = 0; i < h->nthreads; i++) {
        uint32_t proc = 0;
        for (size_t j = 0; j < h->nprocs; j++)
            if (h->procs[j].pid == h->threads[i].pid) {
                proc = (uint32_t)j;
                break;
            }
        bb_u64(&m, (uint64_t)h->threads[i].pid);
        bb_u64(&m, (uint64_t)h->threads[i].tid);
        bb_u32(&m, proc);
        bb_u32(&m, b->depths[i]);
        bb_str(&m, h->threads[i].name);
    }
    for (size_t i = 0; i < dv->nstreams; i++) { /* "stream S" under its GPU */
        char nm[48];
        snprintf(nm, sizeof nm, "stream %lld", (long long)dv->sstream[i]);
        bb_u64(&m, (uint64_t)dv->d.gpus[dv->sgpu[i]].pid);
        bb_u64(&m, (uint64_t)dv->sstream[i]);
        bb_u32(&m, (uint32_t)(h->nprocs + dv->sgpu[i]));
        bb_u32(&m, dv->sdepths[i]);
        bb_str(&m, nm);
    }
    bb_u32(&m, (uint32_t)b->npaths);
    for (size_t i = 0; i < b->npaths; i++) {
        bb_u32(&m, b->paths[i].parent);
        bb_u32(&m, b->paths[i].name);
    }
    bb_u32(&m, (uint32_t)ns);
    for (size_t i = 0, lv = 0; i < ns && !b->err; i++) {
        bb_u32(&m, sname[i]);
        bb_u32(&m, sproc[i]);
        bb_u64(&m, scount[i]);
        bb_u64(&m, soff[i]);
        bb_u32(&m, snlev[i]);
        for (uint32_t j = 0; j < snlev[i]; j++, lv++) {
            bb_u32(&m, cl[lv].k);
            bb_u64(&m, cl[lv].n);
            bb_u64(&m, cl[lv].off);
        }
    }
    /* device: the first stream's thread, the records and reverse records */
    bb_u32(&m, (uint32_t)h->nthreads);
    bb_u64(&m, dv->ndev);
    bb_u64(&m, dv->rec_off);
    bb_u64(&m, dv->nrev);
    bb_u64(&m, dv->rev_off);
    free(snlev);
    free(cl);
    free(sname);
    free(sproc);
    free(scount);
    free(soff);
    if (m.oom) b_fail(b, SPS_ENOMEM);
    *meta_len = m.n;
    *meta_off = b_write(b, m.p, m.n);
    bb_free(&m);
}

static void b_dev_free(bdevb_t *v);

static void b_free(build_t *b) {
    for (size_t i = 0; i < b->nlanes; i++) {
        for (uint32_t k = 0; k < SPS__VIX_MAXLEV; k++) {
            bb_free(&b->lanes[i]->lv[k].blk);
            bb_free(&b->lanes[i]->lv[k].sums);
            free(b->lanes[i]->lv[k].dir);
            free(b->lanes[i]->lv[k].pend);
        }
        free(b->lanes[i]);
    }
    free(b->lanes);
    sps__htab_free(&b->lane_ix);
    sps__htab_free(&b->path_ix);
    free(b->paths);
    free(b->last_child);
    free(b->scr);
    free(b->touched);
    if (b->stacks)
        for (size_t i = 0; i < b->h->nthreads; i++) sps__stack_free(&b->stacks[i]);
    free(b->stacks);
    for (size_t i = 0; b->bydepth && i < b->h->nthreads; i++) free(b->bydepth[i]);
    free(b->bydepth);
    free(b->nbydepth);
    free(b->depths);
    b_dev_free(&b->dev);
    bb_free(&b->out);
}

/* Makes the path scratch hold every path (block sums). */
static int b_scratch(build_t *b) {
    if (b->capscr >= b->npaths) return 0;
    size_t cap = b->capscr ? b->capscr : 64;
    while (cap < b->npaths) cap *= 2;
    sps__vix_sum_t *s = realloc(b->scr, cap * sizeof *s);
    if (!s) return -1;
    memset(s + b->capscr, 0, (cap - b->capscr) * sizeof *s);
    b->scr = s;
    uint32_t *t = realloc(b->touched, cap * sizeof *t);
    if (!t) return -1;
    b->touched = t;
    b->capscr = cap;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Device activity while building (viewidx.h, "Device activity")            */
/* ------------------------------------------------------------------------ */

#define DREC_BYTES 144u /* 18 little-endian u64 words */
#define DREV_BYTES 24u

/* Whether d has a placed row of s's thread and region launched in s (the
 * filter in front of sps__tl_device_claim: only such spans are kept). */
static int dev_holds(const sps__tl_device_t *d, const sps__tl_span_t *s) {
    size_t lo = 0, hi = d->norder;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint32_t i = d->order[mid];
        int less = d->thread[i] != s->thread ? d->thread[i] < s->thread
                   : d->name[i] != s->name ? d->name[i] < s->name
                                           : d->launch[i] < s->start_ns;
        if (less) lo = mid + 1;
        else hi = mid;
    }
    if (lo == d->norder) return 0;
    uint32_t i = d->order[lo];
    return d->thread[i] == s->thread && d->name[i] == s->name && d->launch[i] <= s->end_ns;
}

/* Span s (at depth) went by: device_tl.c claims what it launched; a span
 * that launched something is kept (its ordinal, lane and times). */
static void b_dev_span(build_t *b, const sps__tl_span_t *s, uint32_t depth) {
    bdevb_t *v = &b->dev;
    uint64_t ord = ++v->ord;
    if (!v->name_on[s->name] || !dev_holds(&v->d, s)) return;
    sps__tl_device_claim(&v->d, s, ord);
    if (sps__grow((void **)&v->st, &v->capst, v->nst, sizeof *v->st)) {
        b_fail(b, SPS_ENOMEM);
        return;
    }
    v->st[v->nst++] = (bstash_t){ord, s->thread, depth, s->start_ns, s->end_ns, s->name};
}

/* Reads /device of src and places it on h (device_tl.c).  0, or the
 * reader's error (a hostile /device: SPS_EFORMAT naming the column). */
static int b_dev_open(build_t *b, const char *src) {
    bdevb_t *v = &b->dev;
    int rc = sps__h5r_device(src, &v->x);
    if (rc || !v->x.present || !v->x.n) return rc;
    if (v->x.n >= UINT32_MAX) return sps__err_fail(SPS_ETOOBIG, "%s: too many device rows", src);
    if ((rc = sps__tl_device_place(&v->d, &v->x, b->h))) return rc;
    if (!(v->name_on = calloc(b->h->nnames + 1, 1))) return SPS_ENOMEM;
    for (size_t i = 0; i < v->x.n; i++)
        if (v->d.name[i] < b->h->nnames && v->d.thread[i] < b->h->nthreads)
            v->name_on[v->d.name[i]] = 1;
    v->on = 1;
    return 0;
}

static void b_dev_free(bdevb_t *v) {
    if (v->on) sps__tl_device_free(&v->d);
    sps__h5r_device_free(&v->x);
    free(v->name_on);
    free(v->st);
    free(v->sgpu);
    free(v->sstream);
    free(v->sdepths);
}

/* A device row's sort key: (stream thread, depth, start), the row. */
typedef struct dkey {
    uint64_t lane;  /* thread << 32 | depth; before the streams: gpu << 32 */
    int64_t stream, start, end;
    uint32_t row;
} dkey_t;

static int dkey_cmp(const void *pa, const void *pb) {
    const dkey_t *a = pa, *c = pb;
    if (a->lane != c->lane) return a->lane < c->lane ? -1 : 1;
    if (a->stream != c->stream) return a->stream < c->stream ? -1 : 1;
    if (a->start != c->start) return a->start < c->start ? -1 : 1;
    if (a->end != c->end) return a->end < c->end ? -1 : 1;
    return (a->row > c->row) - (a->row < c->row);
}

typedef struct drev {
    uint64_t lane;
    int64_t start;
    uint64_t rec;
} drev_t;

static int drev_cmp(const void *pa, const void *pb) {
    const drev_t *a = pa, *c = pb;
    if (a->lane != c->lane) return a->lane < c->lane ? -1 : 1;
    if (a->start != c->start) return a->start < c->start ? -1 : 1;
    return (a->rec > c->rec) - (a->rec < c->rec);
}

static uint32_t u32_of(int64_t v) { return v < 0 ? 0 : v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

/* The kept span of ordinal ord (NULL: none). */
static const bstash_t *b_dev_stash(const bdevb_t *v, uint64_t ord) {
    size_t lo = 0, hi = v->nst;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->st[mid].ord < ord) lo = mid + 1;
        else hi = mid;
    }
    return lo < v->nst && v->st[lo].ord == ord ? &v->st[lo] : NULL;
}

/* After the spans: the device rows onto their streams' lanes (threads
 * h->nthreads..), their records and the reverse records written. */
static void b_dev_lanes(build_t *b) {
    bdevb_t *v = &b->dev;
    const sps__h5r_device_t *x = &v->x;
    const sps__tl_device_t *d = &v->d;
    const sps__tl_header_t *h = b->h;
    size_t n = 0;
    dkey_t *k = malloc((x->n + 1) * sizeof *k);
    drev_t *rv = NULL;
    int64_t *ends = NULL;
    size_t capends = 0;
    if (!k) goto oom;
    for (size_t i = 0; i < x->n; i++)
        if (x->kinds[i] <= SPS__DEV_MEMSET && d->gpu[i] != UINT32_MAX &&
            d->thread[i] != UINT32_MAX)
            k[n++] = (dkey_t){(uint64_t)d->gpu[i] << 32, x->streams[i], x->starts_ns[i],
                              x->ends_ns[i], (uint32_t)i};
    qsort(k, n, sizeof *k, dkey_cmp);
    /* streams and depths: an activity on the first depth free at its start */
    size_t ndepth = 0;
    uint64_t pgpu = 0;
    int64_t pstream = 0;
    for (size_t j = 0; j < n && !b->err; j++) {
        if (!j || k[j].lane != pgpu || k[j].stream != pstream) {
            pgpu = k[j].lane;
            pstream = k[j].stream;
            size_t cap = v->nstreams, c2 = cap, c3 = cap;
            if (h->nthreads + v->nstreams >= UINT32_MAX - 1 ||
                sps__grow((void **)&v->sgpu, &cap, v->nstreams, sizeof *v->sgpu) ||
                sps__grow((void **)&v->sstream, &c2, v->nstreams, sizeof *v->sstream) ||
                sps__grow((void **)&v->sdepths, &c3, v->nstreams, sizeof *v->sdepths))
                goto oom;
            v->sgpu[v->nstreams] = (uint32_t)(k[j].lane >> 32);
            v->sstream[v->nstreams] = k[j].stream;
            v->sdepths[v->nstreams++] = 0;
            ndepth = 0;
        }
        size_t dep = 0;
        while (dep < ndepth && ends[dep] > k[j].start) dep++;
        if (dep == ndepth) {
            if (sps__grow((void **)&ends, &capends, ndepth, sizeof *ends)) goto oom;
            ndepth++;
        }
        ends[dep] = k[j].end;
        uint32_t th = (uint32_t)(h->nthreads + v->nstreams - 1);
        if (dep + 1 > v->sdepths[v->nstreams - 1]) v->sdepths[v->nstreams - 1] = (uint32_t)dep + 1;
        k[j].lane = (uint64_t)th << 32 | dep;
        k[j].stream = 0;
        uint32_t row = k[j].row;
        uint32_t name = (uint32_t)(h->nnames + (size_t)x->names_idx[row]);
        uint32_t path = b_path(b, UINT32_MAX, name);
        blane_t *l = path == UINT32_MAX || b_scratch(b) ? NULL : b_lane(b, th, (uint32_t)dep);
        if (!l) goto oom;
        bent_t e = {k[j].start, k[j].end, 1, name, path, k[j].end - k[j].start,
                    k[j].end - k[j].start};
        b_emit(b, l, 0, &e);
        if (k[j].start < b->t_min) b->t_min = k[j].start;
        if (k[j].end > b->t_max) b->t_max = k[j].end;
    }
    /* per lane in start order: the records, then the launching spans' */
    qsort(k, n, sizeof *k, dkey_cmp);
    if (!(rv = malloc((n + 1) * sizeof *rv))) goto oom;
    v->ndev = n;
    v->rec_off = b->off;
    for (size_t j = 0; j < n && !b->err; j++) {
        uint32_t i = k[j].row;
        unsigned char r[DREC_BYTES];
        const bstash_t *ls = d->ext[i] ? b_dev_stash(v, d->ext[i]) : NULL;
        int64_t a = d->api[i];
        uint32_t api_name = a >= 0 ? (uint32_t)(h->nnames + (size_t)x->names_idx[a]) : UINT32_MAX;
        uint32_t api_thread = a >= 0 && d->thread[i] < h->nthreads ? d->thread[i] : UINT32_MAX;
        put_u64le(r, k[j].lane);
        put_u64le(r + 8, (uint64_t)x->starts_ns[i]);
        put_u64le(r + 16, (uint64_t)x->ends_ns[i]);
        put_u64le(r + 24, (uint64_t)x->kinds[i] << 32 | (h->nnames + (uint64_t)x->names_idx[i]));
        put_u64le(r + 32, (uint64_t)x->devices[i]);
        put_u64le(r + 40, (uint64_t)x->streams[i]);
        put_u64le(r + 48, (uint64_t)x->correlations[i]);
        put_u64le(r + 56, (uint64_t)x->bytes[i]);
        put_u64le(r + 64, (uint64_t)u32_of(x->grid_x[i]) << 32 | u32_of(x->grid_y[i]));
        put_u64le(r + 72, (uint64_t)u32_of(x->grid_z[i]) << 32 | u32_of(x->block_x[i]));
        put_u64le(r + 80, (uint64_t)u32_of(x->block_y[i]) << 32 | u32_of(x->block_z[i]));
        put_u64le(r + 88, ls ? (uint64_t)ls->thread << 32 | ls->depth : UINT64_MAX);
        put_u64le(r + 96, ls ? (uint64_t)ls->start : 0);
        put_u64le(r + 104, ls ? (uint64_t)ls->end : 0);
        put_u64le(r + 112, (uint64_t)(ls ? ls->name : UINT32_MAX) << 32 | api_name);
        put_u64le(r + 120, a >= 0 ? (uint64_t)x->starts_ns[a] : 0);
        put_u64le(r + 128, a >= 0 ? (uint64_t)x->ends_ns[a] : 0);
        put_u64le(r + 136, (uint64_t)api_thread << 32);
        b_write(b, r, DREC_BYTES);
        if (ls) rv[v->nrev++] = (drev_t){(uint64_t)ls->thread << 32 | ls->depth, ls->start, j};
    }
    qsort(rv, v->nrev, sizeof *rv, drev_cmp);
    v->rev_off = b->off;
    for (size_t j = 0; j < v->nrev && !b->err; j++) {
        unsigned char r[DREV_BYTES];
        put_u64le(r, rv[j].lane);
        put_u64le(r + 8, (uint64_t)rv[j].start);
        put_u64le(r + 16, rv[j].rec);
        b_write(b, r, DREV_BYTES);
    }
    free(k);
    free(rv);
    free(ends);
    return;
oom:
    b_fail(b, SPS_ENOMEM);
    free(k);
    free(rv);
    free(ends);
}

/* One span into the fold and the lanes; 0 or an SPS_E* code. */
static int b_span(build_t *b, const sps__tl_span_t *sp, const char *src) {
    const sps__tl_header_t *h = b->h;
    sps__tl_span_t s = *sp;
    if (s.thread >= h->nthreads || s.name >= h->nnames)
        return sps__err_fail(SPS_EFORMAT, "%s: a span names no thread or name", src);
    if (s.end_ns < s.start_ns) s.end_ns = s.start_ns;
    b->cur_thread = s.thread;
    sps__stack_t *st = &b->stacks[s.thread];
    sps__frame_t f = {.region = s.name, .node = -1,
                      .start = (uint64_t)s.start_ns - (uint64_t)INT64_MIN,
                      .end = (uint64_t)s.end_ns - (uint64_t)INT64_MIN, .id = -1,
                      .prior = s.prior_ns > 0 ? (uint64_t)s.prior_ns : 0};
    if (sps__fold_span(st, f, b_close, b) < 0) {
        b_fail(b, SPS_ENOMEM);
        return SPS_ENOMEM;
    }
    uint32_t parent = st->n >= 2 ? (uint32_t)st->f[st->n - 2].node : UINT32_MAX;
    uint32_t path = b_path(b, parent, s.name);
    if (path == UINT32_MAX || path > INT32_MAX || b_scratch(b)) {
        b_fail(b, SPS_ENOMEM);
        return SPS_ENOMEM;
    }
    st->f[st->n - 1].node = (int32_t)path;
    if (st->n > b->depths[s.thread]) b->depths[s.thread] = (uint32_t)st->n;
    if (b->dev.on) b_dev_span(b, &s, (uint32_t)(st->n - 1));
    if (s.start_ns < b->t_min) b->t_min = s.start_ns;
    if (s.end_ns > b->t_max) b->t_max = s.end_ns;
    return 0;
}

/* The reader's thread: fills batches of spans a few ahead of the build. */
#define PIPE_BATCH 8192u
#define PIPE_NBUF 4u
typedef struct rpipe {
    sps__tlr_t *r;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sps__tl_span_t *buf[PIPE_NBUF];
    size_t n[PIPE_NBUF];
    uint64_t head, tail; /* batches taken, batches filled */
    int end, stop, rc;   /* reader done; build gave up; reader's error */
    char msg[512];       /* the reader's message (thread-local there) */
} rpipe_t;

/* Reads up to a batch into buf[slot]: their number (0 on an error, then
 * rc and msg set); *end set at the end or on an error. */
static size_t pipe_fill(rpipe_t *p, size_t slot, int *end) {
    size_t n = 0;
    while (n < PIPE_BATCH) {
        int rc = sps__tlr_next(p->r, &p->buf[slot][n]);
        if (rc == 1) {
            n++;
            continue;
        }
        if (rc < 0) {
            p->rc = rc;
            snprintf(p->msg, sizeof p->msg, "%s", sps__err_msg());
        }
        *end = 1;
        break;
    }
    return p->rc ? 0 : n;
}

static void *pipe_main(void *arg) {
    rpipe_t *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->tail - p->head == PIPE_NBUF && !p->stop) pthread_cond_wait(&p->cv, &p->mu);
        int stop = p->stop;
        size_t slot = (size_t)(p->tail % PIPE_NBUF);
        pthread_mutex_unlock(&p->mu);
        if (stop) break;
        int end = 0;
        size_t n = pipe_fill(p, slot, &end);
        pthread_mutex_lock(&p->mu);
        p->n[slot] = n;
        if (n) p->tail++;
        if (end) p->end = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        if (end) break;
    }
    return NULL;
}

/* Starts the reader thread: 1, or 0 when it runs inline (no thread, or
 * no memory for the batches: then one batch, buf[0]). */
static int pipe_start(rpipe_t *p, sps__tlr_t *r) {
    memset(p, 0, sizeof *p);
    p->r = r;
    for (size_t i = 0; i < PIPE_NBUF; i++)
        if (!(p->buf[i] = malloc(PIPE_BATCH * sizeof *p->buf[i]))) {
            if (i == 0) p->rc = SPS_ENOMEM;
            for (size_t j = 1; j < i; j++) {
                free(p->buf[j]);
                p->buf[j] = NULL;
            }
            return 0;
        }
    if (pthread_mutex_init(&p->mu, NULL)) return 0;
    if (pthread_cond_init(&p->cv, NULL)) {
        pthread_mutex_destroy(&p->mu);
        return 0;
    }
    if (pthread_create(&p->th, NULL, pipe_main, p)) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        return 0;
    }
    return 1;
}

/* The next filled batch: 1 with its slot and size, or 0 at the end. */
static int pipe_take(rpipe_t *p, size_t *slot, size_t *n) {
    pthread_mutex_lock(&p->mu);
    while (p->head == p->tail && !p->end) pthread_cond_wait(&p->cv, &p->mu);
    int got = p->head != p->tail;
    if (got) {
        *slot = (size_t)(p->head % PIPE_NBUF);
        *n = p->n[*slot];
    }
    pthread_mutex_unlock(&p->mu);
    return got;
}

/* The batch taken last is used up (stop: the build gives up). */
static void pipe_done(rpipe_t *p, int stop) {
    pthread_mutex_lock(&p->mu);
    p->head++;
    if (stop) p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* Stops and joins the reader; frees the batches.  Returns the reader's
 * error (its message set in this thread), else 0. */
static int pipe_stop(rpipe_t *p, int threaded) {
    if (threaded) {
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->th, NULL);
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
    }
    for (size_t i = 0; i < PIPE_NBUF; i++) free(p->buf[i]);
    if (p->rc && p->msg[0]) sps__err_set("%s", p->msg);
    return p->rc;
}

int sps__vix_build(const char *src, sps__tl_format_t fmt, const char *ixpath,
                   int progress) {
    int64_t t_start = sps_now_ns();
    sps__vix_src_t id;
    int rc = sps__vix_src_stat(src, &id);
    if (rc) return rc;
    sps__tlr_t *r;
    if ((rc = sps__tlr_open(&r, src, fmt))) return rc;
    const sps__tl_header_t *h = sps__tlr_header(r);
    build_t b = {.h = h, .fd = -1, .t_min = INT64_MAX, .t_max = INT64_MIN};
    char *tmp = sps__tmp_name(ixpath, NULL);
    if (!tmp) {
        sps__tlr_free(r);
        return SPS_ENOMEM;
    }
    b.tmp = tmp;
    b.fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (b.fd < 0) {
        sps__err_os_note(errno);
        sps__err_set("%s: cannot create the index: %s", tmp, strerror(errno));
        free(tmp);
        sps__tlr_free(r);
        return SPS_EPATH;
    }
    b.stacks = calloc(h->nthreads ? h->nthreads : 1, sizeof *b.stacks);
    b.depths = calloc(h->nthreads ? h->nthreads : 1, sizeof *b.depths);
    b.bydepth = calloc(h->nthreads ? h->nthreads : 1, sizeof *b.bydepth);
    b.nbydepth = calloc(h->nthreads ? h->nthreads : 1, sizeof *b.nbydepth);
    if (!b.stacks || !b.depths || !b.bydepth || !b.nbydepth) b_fail(&b, SPS_ENOMEM);
    if (!b.err && fmt == SPS__TL_H5 && (rc = b_dev_open(&b, src)) != 0) b_fail(&b, rc);
    unsigned char hdr[HDR_BYTES] = {0};
    b_write(&b, hdr, HDR_BYTES); /* the real one at the end */
    sps__pline_t pl;
    sps__pline_init(&pl, "indexing", src, "spans", progress, 0);
    if (!progress && !pl.always) pl.on = 0; /* asked for, not because of a terminal */
    /* the reader runs on a thread of its own, a batch ahead (the index's
     * work and the file's decoding overlap); inline when no thread starts */
    rpipe_t rp;
    int threaded = pipe_start(&rp, r);
    for (;;) {
        size_t slot = 0, n = 0;
        if (threaded) {
            if (!pipe_take(&rp, &slot, &n)) break;
        } else {
            if (rp.end || rp.rc || !(n = pipe_fill(&rp, 0, &rp.end))) break;
        }
        const sps__tl_span_t *v = rp.buf[slot];
        for (size_t i = 0; i < n && !b.err; i++) {
            if ((rc = b_span(&b, &v[i], src)) != 0) break;
            if ((++b.nspans & 0xffff) == 0) sps__pline_fn(&pl, b.nspans, h->nspans);
        }
        if (threaded) pipe_done(&rp, b.err || rc);
        if (b.err || rc) break;
    }
    int rrc = pipe_stop(&rp, threaded);
    if (!rc && !b.err && rrc) rc = rrc;
    if (rc < 0 && !b.err) b.err = rc;
    /* close what is open, then flush every level's run and block */
    for (size_t t = 0; !b.err && t < h->nthreads; t++) {
        b.cur_thread = (uint32_t)t;
        sps__fold_flush(&b.stacks[t], b_close, &b);
    }
    if (!b.err && b.dev.on) b_dev_lanes(&b);
    for (size_t i = 0; !b.err && i < b.nlanes; i++) {
        blane_t *l = b.lanes[i];
        for (uint32_t k = 1; k < l->nlevels; k++) b_run_flush(&b, l, k);
        for (uint32_t k = 0; k < l->nlevels; k++) b_block_flush(&b, l, k);
    }
    if (b.nlanes) qsort(b.lanes, b.nlanes, sizeof *b.lanes, lane_cmp);
    uint32_t maxlev = 1;
    uint64_t *sums_off = calloc(b.nlanes ? b.nlanes : 1, sizeof *sums_off);
    if (!sums_off) b_fail(&b, SPS_ENOMEM);
    for (size_t i = 0; !b.err && i < b.nlanes; i++)
        sums_off[i] = b_write(&b, b.lanes[i]->lv[0].sums.p, b.lanes[i]->lv[0].sums.n);
    for (size_t i = 0; !b.err && i < b.nlanes; i++) {
        blane_t *l = b.lanes[i];
        if (l->nlevels > maxlev) maxlev = l->nlevels;
        for (uint32_t k = 0; k < l->nlevels; k++) {
            blevel_t *v = &l->lv[k];
            v->dir_off = b.off;
            for (size_t j = 0; j < v->ndir; j++) {
                unsigned char x[DIR_BYTES] = {0};
                put_u64le(x, (uint64_t)v->dir[j].first);
                put_u64le(x + 8, (uint64_t)v->dir[j].last_start);
                put_u64le(x + 16, (uint64_t)v->dir[j].end);
                put_u64le(x + 24, v->dir[j].off);
                put_u32le(x + 32, v->dir[j].len);
                put_u32le(x + 36, v->dir[j].n);
                put_u32le(x + 40, v->dir[j].sumlen);
                put_u32le(x + 44, 0);
                b_write(&b, x, DIR_BYTES);
            }
        }
    }
    uint64_t lanes_off = b.off;
    for (size_t i = 0; !b.err && i < b.nlanes; i++) {
        blane_t *l = b.lanes[i];
        unsigned char x[LANE_BYTES] = {0};
        put_u32le(x, l->thread);
        put_u32le(x + 4, l->depth);
        put_u32le(x + 8, l->nlevels);
        put_u64le(x + 16, sums_off[i]);
        put_u64le(x + 24, l->lv[0].sums.n);
        for (uint32_t k = 0; k < l->nlevels; k++) {
            put_u64le(x + 32 + 24 * k, l->lv[k].dir_off);
            put_u64le(x + 40 + 24 * k, l->lv[k].ndir);
            put_u64le(x + 48 + 24 * k, l->lv[k].nent);
        }
        b_write(&b, x, LANE_BYTES);
    }
    free(sums_off);
    uint64_t meta_off = 0, meta_len = 0;
    if (!b.err) b_meta(&b, &meta_off, &meta_len);
    if (b.nspans == 0) b.t_min = b.t_max = 0;
    double secs = (double)(sps_now_ns() - t_start) / 1e9;
    memcpy(hdr, k_magic, 8);
    put_u32le(hdr + 8, SPS__VIX_VERSION);
    put_u32le(hdr + 12, SPS__VIX_W1);
    put_u64le(hdr + 16, id.size);
    put_u64le(hdr + 24, (uint64_t)id.mtime_ns);
    put_u64le(hdr + 32, (uint64_t)b.t_min);
    put_u64le(hdr + 40, (uint64_t)b.t_max);
    put_u64le(hdr + 48, b.nspans);
    uint64_t sb;
    memcpy(&sb, &secs, 8);
    put_u64le(hdr + 56, sb);
    put_u64le(hdr + 64, meta_off);
    put_u64le(hdr + 72, meta_len);
    put_u64le(hdr + 80, lanes_off);
    put_u32le(hdr + 88, (uint32_t)b.nlanes);
    put_u32le(hdr + 92, maxlev);
    put_u64le(hdr + 96, b.off);
    put_u32le(hdr + 104, (uint32_t)fmt);
    b_flush_out(&b);
    if (!b.err && sps__pwrite_all(b.fd, hdr, HDR_BYTES, 0)) {
        sps__err_os_note(errno);
        sps__err_set("writing %s: %s", tmp, strerror(errno));
        b_fail(&b, SPS_EIO);
    }
    if (close(b.fd) && !b.err) {
        sps__err_os_note(errno);
        sps__err_set("writing %s: %s", tmp, strerror(errno));
        b_fail(&b, SPS_EIO);
    }
    if (!b.err && rename(tmp, ixpath)) {
        sps__err_os_note(errno);
        sps__err_set("%s: cannot rename the index into place: %s", ixpath, strerror(errno));
        b_fail(&b, SPS_EIO);
    }
    rc = b.err;
    if (rc) {
        unlink(tmp);
        if (rc == SPS_ENOMEM) sps__err_set("%s: out of memory building the index", src);
    }
    sps__pline_end(&pl, b.nspans, rc);
    free(tmp);
    b_free(&b);
    sps__tlr_free(r);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */
/* ------------------------------------------------------------------------ */

/* The index is read with pread, not mapped: the viewer's memory is what it
 * allocates (directories, sums, names), whatever the size of the index or
 * how much of it the page has looked at; the page cache does the caching. */

typedef struct vlevel {
    uint64_t nblocks, nent;
    bdir_t *dir;          /* nblocks records, checked at open */
} vlevel_t;

typedef struct vlane {
    uint32_t thread, depth, nlevels;
    vlevel_t lv[SPS__VIX_MAXLEV];
    unsigned char *sums;  /* level 0: every block's per-path sums */
    uint64_t *sum_at;     /* where block j's start in sums (nblocks + 1) */
} vlane_t;

#define SAMPLE_CHUNK 4096u

/* A run of records of one counter level (or samples) read at once. */
typedef struct ccache {
    unsigned char *p;
    size_t series;
    uint64_t i0, n;
    int on;
} ccache_t;

struct sps__vix {
    int fd;
    uint64_t size;
    const char *path;
    char *pathbuf;
    sps__vix_info_t info;
    vlane_t *lanes;
    unsigned char *blk;   /* one block's entries (BLOCK_MAX_BYTES) */
    /* one chunk of one counter series */
    unsigned char *smp;
    size_t smp_series;
    uint64_t smp_chunk, smp_n;
    int smp_on;
    ccache_t cc[SPS__VIX_MAXLEV]; /* counter walks: per level (0: samples) */
    uint64_t dev_off, rev_off;    /* device records, reverse records */
};

const sps__vix_info_t *sps__vix_info(const sps__vix_t *x) { return &x->info; }

void sps__vix_close(sps__vix_t *x) {
    if (!x) return;
    sps__vix_info_t *in = &x->info;
    for (size_t i = 0; in->names && i < in->nnames; i++) free(in->names[i]);
    free(in->names);
    for (size_t i = 0; in->procs && i < in->nprocs; i++) free(in->procs[i].name);
    free(in->procs);
    for (size_t i = 0; in->threads && i < in->nthreads; i++) free(in->threads[i].name);
    free(in->threads);
    free(in->paths);
    free(in->series);
    free(in->clevels);
    for (size_t i = 0; x->lanes && i < in->nlanes; i++) {
        for (uint32_t k = 0; k < SPS__VIX_MAXLEV; k++) free(x->lanes[i].lv[k].dir);
        free(x->lanes[i].sums);
        free(x->lanes[i].sum_at);
    }
    free(x->lanes);
    free(x->blk);
    free(x->smp);
    for (uint32_t k = 0; k < SPS__VIX_MAXLEV; k++) free(x->cc[k].p);
    if (x->fd >= 0) close(x->fd);
    free(x->pathbuf);
    free(x);
}

/* Fails the open: SPS_EFORMAT naming the index. */
static int bad(const sps__vix_t *x, const char *what) {
    return sps__err_fail(SPS_EFORMAT, "%s: corrupt view index (%s)", x->path, what);
}

/* Whether [off, off + n * sz) lies inside the file. */
static int in_file(const sps__vix_t *x, uint64_t off, uint64_t n, uint64_t sz) {
    if (off > x->size) return 0;
    if (sz && n > (x->size - off) / sz) return 0;
    return 1;
}

/* Reads [off, off + n) of the index into buf: 0, or SPS_EFORMAT (outside
 * the file, or the file shrank) / SPS_EIO. */
static int ix_read(const sps__vix_t *x, uint64_t off, size_t n, void *buf) {
    if (!in_file(x, off, n, 1)) return bad(x, "offset out of the file");
    ssize_t got = sps__pread_full(x->fd, buf, n, (off_t)off);
    if (got < 0) return sps__err_fail(SPS_EIO, "%s: %s", x->path, strerror(errno));
    if ((size_t)got != n) return bad(x, "truncated");
    return 0;
}

/* A malloc'd copy of [off, off + n); NULL with *rc set. */
static unsigned char *ix_load(const sps__vix_t *x, uint64_t off, uint64_t n, int *rc) {
    if (!in_file(x, off, n, 1)) {
        *rc = bad(x, "section out of the file");
        return NULL;
    }
    unsigned char *p = malloc(n ? (size_t)n : 1);
    if (!p) {
        *rc = SPS_ENOMEM;
        return NULL;
    }
    if ((*rc = ix_read(x, off, (size_t)n, p))) {
        free(p);
        return NULL;
    }
    return p;
}

static int parse_meta(sps__vix_t *x, const unsigned char *m, uint64_t len) {
    rd_t r = {m, (size_t)len, 0, 0};
    sps__vix_info_t *in = &x->info;
    int oom = 0;
    uint32_t n = rd_u32(&r);
    if (r.bad || n > len / 4) return bad(x, "names");
    in->names = calloc(n ? n : 1, sizeof *in->names);
    if (!in->names) return SPS_ENOMEM;
    in->nnames = n;
    for (uint32_t i = 0; i < n; i++)
        if (!(in->names[i] = rd_str(&r, &oom))) return oom ? SPS_ENOMEM : bad(x, "name");
    n = rd_u32(&r);
    if (r.bad || n > len / 20) return bad(x, "processes");
    in->procs = calloc(n ? n : 1, sizeof *in->procs);
    if (!in->procs) return SPS_ENOMEM;
    in->nprocs = n;
    for (uint32_t i = 0; i < n; i++) {
        in->procs[i].pid = (int64_t)rd_u64(&r);
        in->procs[i].rank = (int64_t)rd_u64(&r);
        if (!(in->procs[i].name = rd_str(&r, &oom)))
            return oom ? SPS_ENOMEM : bad(x, "process");
    }
    n = rd_u32(&r);
    if (r.bad || n > len / 28) return bad(x, "threads");
    in->threads = calloc(n ? n : 1, sizeof *in->threads);
    if (!in->threads) return SPS_ENOMEM;
    in->nthreads = n;
    for (uint32_t i = 0; i < n; i++) {
        sps__vix_thread_t *t = &in->threads[i];
        t->pid = (int64_t)rd_u64(&r);
        t->tid = (int64_t)rd_u64(&r);
        t->proc = rd_u32(&r);
        t->depths = rd_u32(&r);
        if (!(t->name = rd_str(&r, &oom))) return oom ? SPS_ENOMEM : bad(x, "thread");
        if (in->nprocs ? t->proc >= in->nprocs : t->proc != 0) return bad(x, "thread's process");
    }
    n = rd_u32(&r);
    if (r.bad || n > len / 8) return bad(x, "paths");
    in->paths = malloc((n ? n : 1) * sizeof *in->paths);
    if (!in->paths) return SPS_ENOMEM;
    in->npaths = n;
    for (uint32_t i = 0; i < n; i++) {
        in->paths[i].parent = rd_u32(&r);
        in->paths[i].name = rd_u32(&r);
        if (r.bad || (in->paths[i].parent != UINT32_MAX && in->paths[i].parent >= i) ||
            in->paths[i].name >= in->nnames)
            return bad(x, "call path");
    }
    n = rd_u32(&r);
    if (r.bad || n > len / 28) return bad(x, "counter series");
    in->series = malloc((n ? n : 1) * sizeof *in->series);
    if (!in->series) return SPS_ENOMEM;
    in->nseries = n;
    size_t capcl = 0;
    for (uint32_t i = 0; i < n; i++) {
        sps__vix_series_t *s = &in->series[i];
        s->name = rd_u32(&r);
        s->proc = rd_u32(&r);
        s->n = rd_u64(&r);
        s->off = rd_u64(&r);
        s->nlev = rd_u32(&r);
        s->lev = (uint32_t)in->nclevels;
        if (r.bad || s->name >= in->nnames || s->proc >= in->nprocs ||
            !in_file(x, s->off, s->n, 16) || s->nlev >= SPS__VIX_MAXLEV ||
            s->nlev > (r.n - r.i) / 20)
            return bad(x, "counter series");
        /* levels: buckets growing, each at most a quarter of the finer one */
        uint64_t below = s->n;
        uint32_t kprev = 0;
        for (uint32_t j = 0; j < s->nlev; j++) {
            sps__vix_clevel_t c;
            c.k = rd_u32(&r);
            c.n = rd_u64(&r);
            c.off = rd_u64(&r);
            if (r.bad || c.k <= kprev || c.k >= SPS__VIX_MAXLEV || c.n < 1 || c.n > below / 4 ||
                !in_file(x, c.off, c.n, CREC_BYTES))
                return bad(x, "counter level");
            if (sps__grow((void **)&in->clevels, &capcl, in->nclevels, sizeof *in->clevels))
                return SPS_ENOMEM;
            in->clevels[in->nclevels++] = c;
            kprev = c.k;
            below = c.n;
        }
    }
    in->dev_thread0 = rd_u32(&r);
    in->ndev = rd_u64(&r);
    x->dev_off = in->dev_off = rd_u64(&r);
    in->nrev = rd_u64(&r);
    x->rev_off = in->rev_off = rd_u64(&r);
    if (r.bad || in->dev_thread0 > in->nthreads || in->nrev > in->ndev ||
        (in->ndev && !in_file(x, x->dev_off, in->ndev, DREC_BYTES)) ||
        (in->nrev && !in_file(x, x->rev_off, in->nrev, DREV_BYTES)))
        return bad(x, "device section");
    return r.bad ? bad(x, "meta section") : 0;
}

/* Loads and checks level v's directory (at off) of a lane. */
static int load_dir(sps__vix_t *x, vlevel_t *v, uint64_t off, uint32_t k) {
    if (!in_file(x, off, v->nblocks, DIR_BYTES) || v->nent > v->nblocks * SPS__VIX_BLOCK)
        return bad(x, "block directory");
    int rc = 0;
    unsigned char *raw = ix_load(x, off, v->nblocks * DIR_BYTES, &rc);
    if (!raw) return rc;
    v->dir = malloc((v->nblocks ? v->nblocks : 1) * sizeof *v->dir);
    if (!v->dir) {
        free(raw);
        return SPS_ENOMEM;
    }
    uint64_t total = 0;
    for (uint64_t j = 0; j < v->nblocks; j++) {
        const unsigned char *p = raw + j * DIR_BYTES;
        bdir_t d = {(int64_t)get_u64le(p), (int64_t)get_u64le(p + 8), (int64_t)get_u64le(p + 16),
                    get_u64le(p + 24), get_u32le(p + 32), get_u32le(p + 36), get_u32le(p + 40)};
        /* ordered along the lane (binary searches rely on it), in the file */
        if (!in_file(x, d.off, d.len, 1) || d.len > BLOCK_MAX_BYTES || d.n == 0 ||
            d.n > SPS__VIX_BLOCK || d.last_start < d.first || d.end < d.first ||
            (k != 0 && d.sumlen) ||
            (j && (d.first < v->dir[j - 1].last_start || d.end < v->dir[j - 1].end))) {
            free(raw);
            return bad(x, "block record");
        }
        total += d.n;
        v->dir[j] = d;
    }
    free(raw);
    if (total != v->nent) return bad(x, "block entries");
    return 0;
}

int sps__vix_open(sps__vix_t **out, const char *ixpath, const sps__vix_src_t *src) {
    *out = NULL;
    sps__vix_t *x = calloc(1, sizeof *x);
    if (!x) return SPS_ENOMEM;
    x->fd = -1;
    x->pathbuf = strdup(ixpath);
    x->blk = malloc(BLOCK_MAX_BYTES);
    if (!x->pathbuf || !x->blk) {
        sps__vix_close(x);
        return SPS_ENOMEM;
    }
    x->path = x->pathbuf;
    x->fd = open(ixpath, O_RDONLY | O_CLOEXEC);
    if (x->fd < 0) {
        int e = errno;
        sps__vix_close(x);
        return sps__err_fail(e == ENOENT ? SPS_EFORMAT : SPS_EIO, "%s: %s", ixpath, strerror(e));
    }
    struct stat st;
    unsigned char h[HDR_BYTES];
    int rc = 0;
    if (fstat(x->fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)HDR_BYTES)
        rc = bad(x, "too short");
    else {
        x->size = (uint64_t)st.st_size;
        rc = ix_read(x, 0, HDR_BYTES, h);
    }
    sps__vix_info_t *in = &x->info;
    if (rc) {
    } else if (memcmp(h, k_magic, 8)) rc = bad(x, "not a view index");
    else if (get_u32le(h + 8) != SPS__VIX_VERSION || get_u32le(h + 12) != SPS__VIX_W1)
        rc = sps__err_fail(SPS_EFORMAT, "%s: view index of another version", ixpath);
    else if (src && (get_u64le(h + 16) != src->size ||
                     (int64_t)get_u64le(h + 24) != src->mtime_ns))
        rc = sps__err_fail(SPS_EFORMAT, "%s: stale view index (the recording changed)", ixpath);
    else if (get_u64le(h + 96) != x->size) rc = bad(x, "truncated");
    if (rc) {
        sps__vix_close(x);
        return rc;
    }
    in->t_min = (int64_t)get_u64le(h + 32);
    in->t_max = (int64_t)get_u64le(h + 40);
    in->nspans = get_u64le(h + 48);
    uint64_t sb = get_u64le(h + 56);
    memcpy(&in->build_s, &sb, 8);
    if (!isfinite(in->build_s) || in->build_s < 0) in->build_s = 0;
    uint64_t meta_off = get_u64le(h + 64), meta_len = get_u64le(h + 72);
    uint64_t lanes_off = get_u64le(h + 80);
    uint32_t nlanes = get_u32le(h + 88);
    in->nlevels = get_u32le(h + 92);
    in->file_bytes = x->size;
    in->fmt = get_u32le(h + 104);
    unsigned char *meta = NULL, *lanes = NULL;
    if (in->t_max < in->t_min) rc = bad(x, "time range");
    else if (in->nlevels < 1 || in->nlevels > SPS__VIX_MAXLEV) rc = bad(x, "levels");
    else if (!in_file(x, lanes_off, nlanes, LANE_BYTES)) rc = bad(x, "lane table");
    if (!rc && (meta = ix_load(x, meta_off, meta_len, &rc))) rc = parse_meta(x, meta, meta_len);
    free(meta);
    if (!rc) lanes = ix_load(x, lanes_off, (uint64_t)nlanes * LANE_BYTES, &rc);
    if (!rc && !(x->lanes = calloc(nlanes ? nlanes : 1, sizeof *x->lanes))) rc = SPS_ENOMEM;
    if (!rc) in->nlanes = nlanes; /* from here close frees what the lanes hold */
    uint64_t total = 0;
    for (uint32_t i = 0; !rc && i < nlanes; i++) {
        const unsigned char *p = lanes + (uint64_t)i * LANE_BYTES;
        vlane_t *l = &x->lanes[i];
        l->thread = get_u32le(p);
        l->depth = get_u32le(p + 4);
        l->nlevels = get_u32le(p + 8);
        uint64_t sums_off = get_u64le(p + 16), sums_len = get_u64le(p + 24);
        if (l->thread >= in->nthreads || l->depth >= in->threads[l->thread].depths ||
            l->nlevels < 1 || l->nlevels > in->nlevels) {
            rc = bad(x, "lane");
            break;
        }
        if (i && (x->lanes[i - 1].thread > l->thread ||
                  (x->lanes[i - 1].thread == l->thread && x->lanes[i - 1].depth >= l->depth))) {
            rc = bad(x, "lane order");
            break;
        }
        for (uint32_t k = 0; k < l->nlevels && !rc; k++) {
            vlevel_t *v = &l->lv[k];
            v->nblocks = get_u64le(p + 40 + 24 * k);
            v->nent = get_u64le(p + 48 + 24 * k);
            rc = load_dir(x, v, get_u64le(p + 32 + 24 * k), k);
        }
        if (rc) break;
        total += l->lv[0].nent;
        /* level 0's sums: one area, block after block */
        if (!(l->sums = ix_load(x, sums_off, sums_len, &rc))) break;
        if (!(l->sum_at = malloc((l->lv[0].nblocks + 1) * sizeof *l->sum_at))) {
            rc = SPS_ENOMEM;
            break;
        }
        uint64_t at = 0;
        for (uint64_t j = 0; j < l->lv[0].nblocks; j++) {
            l->sum_at[j] = at;
            at += l->lv[0].dir[j].sumlen;
        }
        l->sum_at[l->lv[0].nblocks] = at;
        if (at != sums_len) rc = bad(x, "block sums");
    }
    free(lanes);
    if (!rc && total != in->nspans + in->ndev) rc = bad(x, "span count");
    if (rc) {
        sps__vix_close(x);
        return rc;
    }
    *out = x;
    return 0;
}

int64_t sps__vix_lane_find(const sps__vix_t *x, uint32_t thread, uint32_t depth) {
    size_t lo = 0, hi = x->info.nlanes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const vlane_t *l = &x->lanes[mid];
        if (l->thread < thread || (l->thread == thread && l->depth < depth)) lo = mid + 1;
        else hi = mid;
    }
    if (lo < x->info.nlanes && x->lanes[lo].thread == thread && x->lanes[lo].depth == depth)
        return (int64_t)lo;
    return -1;
}

void sps__vix_lane(const sps__vix_t *x, size_t i, uint32_t *thread, uint32_t *depth,
                   uint32_t *nlevels) {
    *thread = x->lanes[i].thread;
    *depth = x->lanes[i].depth;
    *nlevels = x->lanes[i].nlevels;
}

/* The first block whose end is after t (or whose last entry starts at or
 * after t: zero-length spans); ends and starts grow along a lane. */
static uint64_t first_block_ending_after(const vlevel_t *v, int64_t t) {
    uint64_t lo = 0, hi = v->nblocks;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (v->dir[mid].end > t || v->dir[mid].last_start >= t) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* The first block whose last start is at or after t. */
static uint64_t first_block_starting_from(const vlevel_t *v, int64_t t) {
    uint64_t lo = 0, hi = v->nblocks;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (v->dir[mid].last_start >= t) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* a + b for a span time, or -1 when it would leave int64. */
static int add_time(int64_t a, uint64_t b, int64_t *out) {
    if (b > (uint64_t)INT64_MAX || (a > 0 && (int64_t)b > INT64_MAX - a)) return -1;
    *out = a + (int64_t)b;
    return 0;
}

/* Decodes the entries of block d of level k into fn (those overlapping
 * [t0, t1), with path_on), stopping past t1 (*past set). */
static int decode_block(sps__vix_t *x, const bdir_t *d, uint32_t k, int64_t t0, int64_t t1,
                        const uint8_t *path_on, sps__vix_ent_fn fn, void *ctx, int *past) {
    int rc = ix_read(x, d->off, d->len, x->blk);
    if (rc) return rc;
    rd_t r = {x->blk, d->len, 0, 0};
    int64_t prev = d->first, prev_end = d->first, end;
    const sps__vix_info_t *in = &x->info;
    for (uint32_t i = 0; i < d->n; i++) {
        sps__vix_ent_t e;
        uint64_t code = rd_var(&r), dur = rd_var(&r);
        if (add_time(code & 1 ? prev : prev_end, code >> 1, &e.start) ||
            add_time(e.start, dur, &end))
            return bad(x, "entry time");
        e.dur = (int64_t)dur;
        prev = e.start;
        prev_end = end;
        if (k == 0) {
            uint64_t path = rd_var(&r), notself = rd_var(&r);
            if (path >= in->npaths || notself > dur) return bad(x, "entry");
            e.path = (uint32_t)path;
            e.name = in->paths[path].name;
            e.count = 1;
            e.self = (int64_t)(dur - notself);
            e.longest = e.dur;
        } else {
            uint64_t name = rd_var(&r), count = rd_var(&r), longest = rd_var(&r);
            if (name >= in->nnames || longest > (uint64_t)INT64_MAX) return bad(x, "entry");
            e.name = (uint32_t)name;
            e.path = UINT32_MAX;
            e.count = count;
            e.self = 0;
            e.longest = (int64_t)longest;
        }
        if (r.bad) return bad(x, "entry");
        if (e.start >= t1) {
            *past = 1;
            return 0;
        }
        if (!(end > t0 || e.start >= t0)) continue;
        if (path_on && (k != 0 || !path_on[e.path])) continue;
        if ((rc = fn(ctx, &e))) return rc;
    }
    return 0;
}

/* The sums of block j of lane l as a reader. */
static rd_t block_sums(const vlane_t *l, uint64_t j) {
    return (rd_t){l->sums + l->sum_at[j], (size_t)(l->sum_at[j + 1] - l->sum_at[j]), 0, 0};
}

/* Whether block j's sums name a path that is on. */
static int block_has(const sps__vix_t *x, const vlane_t *l, uint64_t j, const uint8_t *path_on,
                     int *err) {
    rd_t r = block_sums(l, j);
    uint64_t m = rd_var(&r);
    for (uint64_t i = 0; i < m && !r.bad; i++) {
        uint64_t path = rd_var(&r);
        for (int k = 0; k < 5; k++) rd_var(&r);
        if (r.bad || path >= x->info.npaths) break;
        if (path_on[path]) return 1;
    }
    if (r.bad) *err = bad(x, "block sums");
    return 0;
}

int sps__vix_scan(sps__vix_t *x, size_t lane, uint32_t level, int64_t t0, int64_t t1,
                  const uint8_t *path_on, sps__vix_ent_fn fn, void *ctx) {
    if (lane >= x->info.nlanes) return 0;
    const vlane_t *l = &x->lanes[lane];
    if (level >= l->nlevels) level = l->nlevels - 1;
    const vlevel_t *v = &l->lv[level];
    for (uint64_t j = first_block_ending_after(v, t0); j < v->nblocks; j++) {
        const bdir_t *d = &v->dir[j];
        if (d->first >= t1) break;
        if (path_on && level == 0) {
            int err = 0;
            int has = block_has(x, l, j, path_on, &err);
            if (err) return err;
            if (!has) continue;
        }
        int past = 0;
        int rc = decode_block(x, d, level, t0, t1, path_on, fn, ctx, &past);
        if (rc) return rc;
        if (past) break;
    }
    return 0;
}

static void sum_add(sps__vix_sum_t *s, uint64_t count, int64_t total, int64_t self,
                    int64_t mn, int64_t mx) {
    if (!count) return;
    if (!s->count || mn < s->min) s->min = mn;
    if (!s->count || mx > s->max) s->max = mx;
    s->count += count;
    s->total += total;
    s->self += self;
}

typedef struct wctx {
    sps__vix_sum_t *sums;
    int64_t t0;
} wctx_t;

static int window_ent(void *ctx, const sps__vix_ent_t *e) {
    wctx_t *w = ctx;
    if (e->start >= w->t0) sum_add(&w->sums[e->path], 1, e->dur, e->self, e->dur, e->dur);
    return 0;
}

int sps__vix_window(sps__vix_t *x, size_t lane, int64_t t0, int64_t t1, sps__vix_sum_t *sums) {
    if (lane >= x->info.nlanes || t0 >= t1) return 0;
    const vlane_t *l = &x->lanes[lane];
    const vlevel_t *v = &l->lv[0];
    wctx_t w = {sums, t0};
    for (uint64_t j = first_block_starting_from(v, t0); j < v->nblocks; j++) {
        const bdir_t *d = &v->dir[j];
        if (d->first >= t1) break;
        if (d->first >= t0 && d->last_start < t1) { /* whole block: its sums */
            rd_t r = block_sums(l, j);
            uint64_t m = rd_var(&r);
            for (uint64_t i = 0; i < m && !r.bad; i++) {
                uint64_t path = rd_var(&r), c = rd_var(&r), tot = rd_var(&r),
                         self = rd_var(&r), mn = rd_var(&r), mx = rd_var(&r);
                if (r.bad || path >= x->info.npaths || tot > (uint64_t)INT64_MAX ||
                    self > (uint64_t)INT64_MAX || mn > (uint64_t)INT64_MAX ||
                    mx > (uint64_t)INT64_MAX)
                    return bad(x, "block sums");
                sum_add(&sums[path], c, (int64_t)tot, (int64_t)self, (int64_t)mn, (int64_t)mx);
            }
            if (r.bad) return bad(x, "block sums");
            continue;
        }
        int past = 0;
        int rc = decode_block(x, d, 0, t0, t1, NULL, window_ent, &w, &past);
        if (rc) return rc;
        if (past) break;
    }
    return 0;
}

/* Makes sample chunk c of series s current; 0 or an SPS_E* code. */
static int sample_chunk(sps__vix_t *x, size_t s, uint64_t c) {
    if (x->smp_on && x->smp_series == s && x->smp_chunk == c) return 0;
    if (!x->smp && !(x->smp = malloc(SAMPLE_CHUNK * 16))) return SPS_ENOMEM;
    const sps__vix_series_t *se = &x->info.series[s];
    uint64_t n = se->n - c * SAMPLE_CHUNK;
    if (n > SAMPLE_CHUNK) n = SAMPLE_CHUNK;
    x->smp_on = 0;
    int rc = ix_read(x, se->off + c * SAMPLE_CHUNK * 16, (size_t)n * 16, x->smp);
    if (rc) return rc;
    x->smp_on = 1;
    x->smp_series = s;
    x->smp_chunk = c;
    x->smp_n = n;
    return 0;
}

int sps__vix_sample(sps__vix_t *x, size_t s, uint64_t i, int64_t *t, double *v) {
    *t = 0;
    *v = 0;
    if (s >= x->info.nseries || i >= x->info.series[s].n) return SPS_EINVAL;
    int rc = sample_chunk(x, s, i / SAMPLE_CHUNK);
    if (rc) return rc;
    const unsigned char *p = x->smp + (i % SAMPLE_CHUNK) * 16;
    *t = (int64_t)get_u64le(p);
    uint64_t b = get_u64le(p + 8);
    memcpy(v, &b, 8);
    return 0;
}

uint64_t sps__vix_sample_lb(sps__vix_t *x, size_t s, int64_t t) {
    uint64_t lo = 0, hi = s < x->info.nseries ? x->info.series[s].n : 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int64_t tm;
        double v;
        if (sps__vix_sample(x, s, mid, &tm, &v)) return hi; /* unreadable: none */
        if (tm < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* ------------------------------------------------------------------------ */
/* Counter columns                                                          */
/* ------------------------------------------------------------------------ */

#define CREAD 256u /* records read at once by a counter walk */

/* A sample (level 0: min = max = last = its value, first = its index) or
 * a level's record. */
typedef struct crec {
    int64_t t;
    double mn, mx, last;
    uint64_t first;
} crec_t;

typedef struct cwalk {
    sps__vix_t *x;
    size_t s;
    const sps__vix_series_t *se;
    int64_t t0, t1;
    double span, px;
    long npx;
    int open, stop;
    long col;
    sps__vix_cpoint_t pt;   /* the open column */
    sps__vix_cpoint_fn fn;
    void *ctx;
    uint64_t reads;
} cwalk_t;

/* Records of level L (0: samples) of the walk's series. */
static uint64_t c_count(const cwalk_t *w, uint32_t L) {
    return L ? w->x->info.clevels[w->se->lev + L - 1].n : w->se->n;
}

/* Record i of level L into *r, reading up to lim (> i) ahead when it is
 * not at hand.  0 or SPS_EFORMAT / SPS_EIO / SPS_ENOMEM. */
static int c_rec(cwalk_t *w, uint32_t L, uint64_t i, uint64_t lim, crec_t *r) {
    sps__vix_t *x = w->x;
    uint64_t cnt = c_count(w, L);
    size_t sz = L ? CREC_BYTES : 16;
    if (i >= cnt) return bad(x, "counter record");
    if (lim > cnt) lim = cnt;
    if (lim <= i) lim = i + 1;
    ccache_t *c = &x->cc[L];
    if (!(c->on && c->series == w->s && i >= c->i0 && i - c->i0 < c->n)) {
        if (!c->p && !(c->p = malloc(CREAD * CREC_BYTES))) return SPS_ENOMEM;
        uint64_t n = lim - i < CREAD ? lim - i : CREAD;
        uint64_t off = L ? x->info.clevels[w->se->lev + L - 1].off : w->se->off;
        c->on = 0;
        int rc = ix_read(x, off + i * sz, (size_t)(n * sz), c->p);
        if (rc) return rc;
        c->on = 1;
        c->series = w->s;
        c->i0 = i;
        c->n = n;
    }
    const unsigned char *p = c->p + (i - c->i0) * sz;
    uint64_t u;
    r->t = (int64_t)get_u64le(p);
    u = get_u64le(p + 8);
    memcpy(&r->mn, &u, 8);
    if (L) {
        u = get_u64le(p + 16);
        memcpy(&r->mx, &u, 8);
        u = get_u64le(p + 24);
        memcpy(&r->last, &u, 8);
        r->first = get_u64le(p + 32);
    } else {
        r->mx = r->last = r->mn;
        r->first = i;
    }
    w->reads++;
    /* non-finite values never reach the page (the build skips them) */
    if (!isfinite(r->mn) || !isfinite(r->mx) || !(r->mn <= r->last && r->last <= r->mx))
        return bad(x, "counter value");
    return 0;
}

/* The column of t (>= t0). */
static long c_col(const cwalk_t *w, int64_t t) {
    long c = (long)((double)(int64_t)((uint64_t)t - (uint64_t)w->t0) * w->px / w->span);
    return c >= w->npx ? w->npx - 1 : c;
}

/* Adds a stretch of samples (first at t) in column c (columns never go
 * back: at most px points, in time order). */
static int c_add(cwalk_t *w, long c, int64_t t, double mn, double mx, double last) {
    if (w->open && c < w->col) return bad(w->x, "counter samples out of time order");
    if (!w->open || c != w->col) {
        if (w->open) {
            int rc = w->fn(w->ctx, &w->pt);
            if (rc) return rc;
        }
        w->open = 1;
        w->col = c;
        w->pt.t = t;
        w->pt.min = mn;
        w->pt.max = mx;
    } else {
        if (mn < w->pt.min) w->pt.min = mn;
        if (mx > w->pt.max) w->pt.max = mx;
    }
    w->pt.last = last;
    return 0;
}

/* Walks records [i0, i1) of level L: samples into their columns, a
 * record whole when its bucket lies in one column inside [t0, t1), else
 * its children in level L - 1.  Sets w->stop at a record at or after t1. */
static int c_walk(cwalk_t *w, uint32_t L, uint64_t i0, uint64_t i1) {
    for (uint64_t i = i0; i < i1; i++) {
        crec_t r;
        int rc = c_rec(w, L, i, i1, &r);
        if (rc) return rc;
        if (r.t >= w->t1) {
            w->stop = 1;
            return 0;
        }
        if (L == 0) {
            if (r.t < w->t0) continue;
            if ((rc = c_add(w, c_col(w, r.t), r.t, r.mn, r.mx, r.last))) return rc;
            continue;
        }
        /* the bucket's last ns: its samples lie in [r.t, bend] */
        uint64_t wd = sps__vix_bucket(w->x->info.clevels[w->se->lev + L - 1].k);
        int64_t bstart = (int64_t)((uint64_t)r.t - ((uint64_t)r.t & (wd - 1)));
        int64_t bend = (int64_t)((uint64_t)bstart + (wd - 1));
        if (bend < w->t0) continue; /* all before the range */
        if (r.t >= w->t0 && bend < w->t1) {
            long c = c_col(w, r.t);
            if (c == c_col(w, bend)) {
                if ((rc = c_add(w, c, r.t, r.mn, r.mx, r.last))) return rc;
                continue;
            }
        }
        /* straddles a column's edge or the range's: its children */
        uint64_t cend = c_count(w, L - 1);
        if (i + 1 < c_count(w, L)) {
            crec_t nx;
            if ((rc = c_rec(w, L, i + 1, i1 > i + 1 ? i1 : i + 2, &nx))) return rc;
            cend = nx.first;
        }
        if (r.first >= cend || cend > c_count(w, L - 1)) return bad(w->x, "counter level record");
        if ((rc = c_walk(w, L - 1, r.first, cend))) return rc;
        if (w->stop) return 0;
    }
    return 0;
}

/* The first record of level L whose time is at or after t, into *out. */
static int c_lower(cwalk_t *w, uint32_t L, int64_t t, uint64_t *out) {
    uint64_t lo = 0, hi = c_count(w, L);
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        crec_t r = {0}; /* c_rec fills it when it returns 0 (gcc -O3 cannot tell) */
        int rc = c_rec(w, L, mid, mid + 1, &r);
        if (rc) return rc;
        if (r.t < t) lo = mid + 1;
        else hi = mid;
    }
    *out = lo;
    return 0;
}

int sps__vix_counter_cols(sps__vix_t *x, size_t s, int64_t t0, int64_t t1, uint32_t px,
                          int use_levels, sps__vix_cpoint_fn fn, void *ctx, uint64_t *reads) {
    if (reads) *reads = 0;
    if (s >= x->info.nseries || t0 >= t1 || px < 1) return SPS_EINVAL;
    cwalk_t w = {.x = x, .s = s, .se = &x->info.series[s], .t0 = t0, .t1 = t1,
                 .span = (double)t1 - (double)t0, .px = (double)px, .npx = (long)px,
                 .fn = fn, .ctx = ctx};
    /* the coarsest level whose bucket is at most a column */
    uint32_t L = 0;
    double pw = w.span / w.px;
    while (use_levels && L < w.se->nlev &&
           (double)sps__vix_bucket(x->info.clevels[w.se->lev + L].k) <= pw)
        L++;
    /* the window's samples: when there are few for the levels' walk
     * (about 4 records a level at each column's edge), those */
    uint64_t s0 = 0, s1 = 0;
    int rc = 0, have_s0 = 0;
    if (L) {
        rc = c_lower(&w, 0, t0, &s0);
        if (!rc) rc = c_lower(&w, 0, t1, &s1);
        have_s0 = 1;
        if (!rc && s1 >= s0 && s1 - s0 <= 4 * (uint64_t)px * (L + 1)) L = 0;
    }
    /* the first record of the level whose bucket ends after t0 (level 0:
     * the first sample at or after t0) */
    uint64_t lo = s0;
    if (!rc && L) {
        uint64_t wd = sps__vix_bucket(x->info.clevels[w.se->lev + L - 1].k);
        rc = c_lower(&w, L, (int64_t)((uint64_t)t0 - ((uint64_t)t0 & (wd - 1))), &lo);
    } else if (!rc && !have_s0)
        rc = c_lower(&w, 0, t0, &lo);
    if (!rc) rc = c_walk(&w, L, lo, c_count(&w, L));
    if (!rc && w.open) rc = fn(ctx, &w.pt);
    if (reads) *reads = w.reads;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Device activity (reading)                                                */
/* ------------------------------------------------------------------------ */

/* Device record j, decoded and checked. */
static int dev_rec(sps__vix_t *x, uint64_t j, sps__vix_dev_t *o) {
    const sps__vix_info_t *in = &x->info;
    unsigned char r[DREC_BYTES];
    int rc = ix_read(x, x->dev_off + j * DREC_BYTES, DREC_BYTES, r);
    if (rc) return rc;
    uint64_t w;
    w = get_u64le(r);
    o->thread = (uint32_t)(w >> 32), o->depth = (uint32_t)w;
    o->start = (int64_t)get_u64le(r + 8);
    o->end = (int64_t)get_u64le(r + 16);
    w = get_u64le(r + 24);
    o->kind = (uint32_t)(w >> 32), o->name = (uint32_t)w;
    o->device = (int64_t)get_u64le(r + 32);
    o->stream = (int64_t)get_u64le(r + 40);
    o->correlation = (int64_t)get_u64le(r + 48);
    o->bytes = (int64_t)get_u64le(r + 56);
    w = get_u64le(r + 64);
    o->grid[0] = (uint32_t)(w >> 32), o->grid[1] = (uint32_t)w;
    w = get_u64le(r + 72);
    o->grid[2] = (uint32_t)(w >> 32), o->block[0] = (uint32_t)w;
    w = get_u64le(r + 80);
    o->block[1] = (uint32_t)(w >> 32), o->block[2] = (uint32_t)w;
    w = get_u64le(r + 88);
    o->lthread = (uint32_t)(w >> 32), o->ldepth = (uint32_t)w;
    o->lstart = (int64_t)get_u64le(r + 96);
    o->lend = (int64_t)get_u64le(r + 104);
    w = get_u64le(r + 112);
    o->lname = (uint32_t)(w >> 32), o->api_name = (uint32_t)w;
    o->api_start = (int64_t)get_u64le(r + 120);
    o->api_end = (int64_t)get_u64le(r + 128);
    o->api_thread = (uint32_t)(get_u64le(r + 136) >> 32);
    int ok = o->thread >= in->dev_thread0 && o->thread < in->nthreads &&
             o->depth < in->threads[o->thread].depths && o->start <= o->end && o->kind >= 1 &&
             o->kind <= 3 && o->name < in->nnames && o->device >= 0 && o->stream >= 0 &&
             o->correlation >= 0 && o->bytes >= 0;
    if (o->lthread == UINT32_MAX) {
        o->ldepth = o->lname = UINT32_MAX;
        o->lstart = o->lend = 0;
    } else
        ok = ok && o->lthread < in->dev_thread0 && o->ldepth < in->threads[o->lthread].depths &&
             o->lname < in->nnames && o->lstart <= o->lend;
    if (o->api_name == UINT32_MAX) {
        o->api_thread = UINT32_MAX;
        o->api_start = o->api_end = 0;
    } else
        ok = ok && o->api_name < in->nnames && o->api_start <= o->api_end &&
             (o->api_thread == UINT32_MAX || o->api_thread < in->dev_thread0);
    return ok ? 0 : sps__err_fail(SPS_EFORMAT, "%s: corrupt device record %llu", x->path,
                                  (unsigned long long)j);
}

/* -1, 0, 1 as (thread, depth, start) of record j compares with the key;
 * *rc set on a read error. */
static int dev_key_cmp(sps__vix_t *x, uint64_t off, uint64_t key_lane, int64_t key_start,
                       int *rc) {
    unsigned char r[16];
    if ((*rc = ix_read(x, off, 16, r))) return 0;
    uint64_t lane = get_u64le(r);
    int64_t st = (int64_t)get_u64le(r + 8);
    if (lane != key_lane) return lane < key_lane ? -1 : 1;
    return (st > key_start) - (st < key_start);
}

/* The first of n records (stride bytes, from off) not below the key. */
static uint64_t dev_lower(sps__vix_t *x, uint64_t off, uint64_t n, uint32_t stride,
                          uint64_t lane, int64_t start, int *rc) {
    uint64_t lo = 0, hi = n;
    while (lo < hi && !*rc) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (dev_key_cmp(x, off + mid * stride, lane, start, rc) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int sps__vix_dev_at(sps__vix_t *x, uint32_t thread, uint32_t depth, int64_t start,
                    sps__vix_dev_t *out) {
    const sps__vix_info_t *in = &x->info;
    if (!in->ndev || thread < in->dev_thread0) return 1;
    uint64_t lane = (uint64_t)thread << 32 | depth;
    int rc = 0;
    uint64_t j = dev_lower(x, x->dev_off, in->ndev, DREC_BYTES, lane, start, &rc);
    if (rc) return rc;
    if (j == in->ndev || dev_key_cmp(x, x->dev_off + j * DREC_BYTES, lane, start, &rc) != 0)
        return rc ? rc : 1;
    return dev_rec(x, j, out);
}

long sps__vix_dev_launched(sps__vix_t *x, uint32_t thread, uint32_t depth, int64_t start,
                           sps__vix_dev_t *out, size_t max, uint64_t *total) {
    const sps__vix_info_t *in = &x->info;
    *total = 0;
    if (!in->nrev) return 0;
    uint64_t lane = (uint64_t)thread << 32 | depth;
    int rc = 0;
    uint64_t a = dev_lower(x, x->rev_off, in->nrev, DREV_BYTES, lane, start, &rc);
    /* the end: the first above the key (thread < UINT32_MAX: lane + 1 fits) */
    uint64_t e = rc ? a
                 : start == INT64_MAX
                     ? dev_lower(x, x->rev_off, in->nrev, DREV_BYTES, lane + 1, INT64_MIN, &rc)
                     : dev_lower(x, x->rev_off, in->nrev, DREV_BYTES, lane, start + 1, &rc);
    if (rc) return rc;
    *total = e - a;
    long got = 0;
    for (uint64_t j = a; j < e && (size_t)got < max; j++) {
        unsigned char r[DREV_BYTES];
        if ((rc = ix_read(x, x->rev_off + j * DREV_BYTES, DREV_BYTES, r))) return rc;
        uint64_t rec = get_u64le(r + 16);
        if (rec >= in->ndev)
            return sps__err_fail(SPS_EFORMAT, "%s: corrupt device reverse record %llu", x->path,
                                 (unsigned long long)j);
        if ((rc = dev_rec(x, rec, &out[got]))) return rc;
        if (out[got].lthread != thread || out[got].ldepth != depth || out[got].lstart != start)
            return sps__err_fail(SPS_EFORMAT, "%s: corrupt device reverse record %llu",
                                 x->path, (unsigned long long)j);
        got++;
    }
    return got;
}
