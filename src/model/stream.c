/* stream.c -- decoding one thread's records from memory or the spill file
 * (packed there: core/pack.c, read through core/spill.c).
 *
 * Each chunk starts with a HI record, so a segment decodes on its own: the
 * reader walks it from record 0, tracking the timestamp's upper half, and
 * yields only records at or after seg->skip (those before were written out
 * by an earlier finalize).  Timestamps leave the reader as CLOCK_MONOTONIC
 * ns, converted with the anchors known when the records are read: every
 * consumer (statistics, files, queries) then sees the same ns values. */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

void sps__rd_init(sps__rd_t *r, const sps__seg_t *segs, size_t nsegs,
                  const sps__stack_t *inject, const sps__timemap_t *tm) {
    *r = (sps__rd_t){0};
    r->tm = tm;
    r->seg = segs;
    r->seg_end = segs + nsegs;
    r->inject = inject;
}

void sps__rd_free(sps__rd_t *r) {
    free(r->buf);
    r->buf = NULL;
    if (r->sp) sps__spill_rd_free(r->sp);
    free(r->sp);
    r->sp = NULL;
}

/* Loads the block of the current segment that starts at index base: all of
 * it when it is in memory, else its next frame from the spill file (blocks
 * of a spilled segment are loaded in order, base 0 first, where whole
 * packed chunks before seg->skip are stepped over: base moves past them). */
static int load_block(sps__rd_t *r, uint32_t base) {
    const sps__seg_t *s = r->seg;
    r->base = base;
    r->i = 0;
    if (s->rec) {
        r->rec = s->rec + base;
        r->n = s->n - base;
        return 0;
    }
    if (!r->buf && !(r->buf = malloc(SPS__PACK_FRAME * sizeof *r->buf))) return SPS_ENOMEM;
    if (!r->sp && !(r->sp = calloc(1, sizeof *r->sp))) return SPS_ENOMEM;
    int rc = 0;
    if (!base) rc = sps__spill_rd_open(r->sp, s->file_off, s->n, s->skip, &r->base);
    if (!rc) rc = sps__spill_rd_next(r->sp, r->buf, &r->n);
    if (!rc) r->chunk_start = r->base + r->n - r->sp->chunk_done;
    r->rec = r->buf;
    return rc ? rc : r->n ? 0 : SPS_EIO;
}

/* Reads the n words of a value group that follows its marker into
 * r->vals (they may continue in the segment's next block).  A group is
 * never split across segments (the hot path keeps a group and its record
 * in one chunk, and segments end at published positions): one that is
 * is a corrupt stream, SPS_EIO. */
static int read_group(sps__rd_t *r, uint32_t n) {
    if (n > SPS__VAL_MAX) return SPS_EIO;
    for (uint32_t k = 0; k < n; k++) {
        if (r->i == r->n) {
            uint32_t next = r->base + r->n;
            if (next >= r->seg->n) return SPS_EIO;
            int rc = load_block(r, next);
            if (rc) return rc;
        }
        r->vals[k] = r->rec[r->i++];
    }
    r->npend = n;
    /* what records without a group of their own carry (delta groups): the
     * same readings, and no rise of live bytes since */
    memcpy(r->last, r->vals, n * sizeof *r->last);
    for (uint32_t k = 0; k < n; k++)
        if (sps__values_kind(k) == SPS__VAL_EXCESS) r->last[k] = 0;
    r->nlast = n;
    return 0;
}

/* sps__rd_next's slow path (model.h): injected frames first, then HI
 * records, value groups, skipped records, block and segment ends. */
int sps__rd_next_slow(sps__rd_t *r, sps__ev_t *ev) {
    if (r->inject && r->ninjected < r->inject->n) {
        const sps__frame_t *f = &r->inject->f[r->ninjected++];
        *ev = (sps__ev_t){f->start, f->seq, f->region, 0, 0, NULL};
        return 1;
    }
    r->inject = NULL; /* all given: the fast path may run */
    for (;;) {
        if (r->seg == r->seg_end) return 0;
        if (!r->rec) {
            int rc = load_block(r, 0);
            if (rc) return rc;
        }
        while (r->i < r->n) {
            uint32_t idx = r->base + r->i;
            uint64_t w = r->rec[r->i++];
            uint32_t tag = (uint32_t)(w >> 32);
            if (tag == SPS__REC_HI_TAG) {
                r->hi = (uint32_t)w;
                continue;
            }
            if (tag == SPS__REC_VAL_TAG) { /* parsed even before skip: in step */
                int rc = read_group(r, (uint32_t)w);
                if (rc) return rc;
                continue;
            }
            if (idx < r->seg->skip) {
                r->npend = 0;
                continue;
            }
            sps__rd_decode(r, w, idx, ev);
            if (r->npend) {
                ev->nvals = r->npend;
                ev->vals = r->vals;
            } else if (r->nlast) {
                ev->nvals = r->nlast;
                ev->vals = r->last;
            }
            r->npend = 0;
            return 1;
        }
        uint32_t next = r->base + r->n;
        if (next < r->seg->n) {
            int rc = load_block(r, next);
            if (rc) return rc;
            continue;
        }
        r->seg++;
        r->rec = NULL;
    }
}
