/*
 * perfetto.c -- timeline writer for Perfetto's native protobuf trace format
 * (.pftrace), with a hand-written protobuf encoder (no protobuf library).
 *
 * The file is a `Trace` message: a sequence of `packet` (field 1)
 * TracePackets, all on ONE trusted_packet_sequence_id.  Layout:
 *
 *   1. A packet with sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED carrying
 *      TracePacketDefaults {timestamp_clock_id = 64, track_event_defaults
 *      {track_uuid = first thread's track}} and a ClockSnapshot mapping the
 *      sequence-scoped clock 64 (is_incremental, unit_multiplier_ns = 1) to
 *      BUILTIN_CLOCK_MONOTONIC (3) at base_ns, with primary_trace_clock =
 *      MONOTONIC.  Its own timestamp is base_ns on clock 3 (explicit id), so
 *      it does not advance clock 64.
 *   2. InternedData packets: every header name as EventName {iid = id + 1}.
 *   3. One TrackDescriptor per process (ProcessDescriptor pid, process_name)
 *      and per thread (parent_uuid = its process, ThreadDescriptor pid, tid,
 *      thread_name).  Track uuids are small (threads 1..n, processes after),
 *      so that an explicit track_uuid costs 2-3 bytes.
 *   4. TrackEvent TYPE_SLICE_BEGIN / TYPE_SLICE_END packets.  Timestamps are
 *      deltas on clock 64 ("each TracePacket's timestamp should be
 *      interpreted as a delta from the last TracePacket's timestamp
 *      (referencing this clock) emitted by the same packet_sequence_id";
 *      the first one is relative to the ClockSnapshot's value).  track_uuid
 *      is written only when it differs from the default.
 *
 *   3b. One counter track per (process, counter name) of the header's
 *      counter samples: TrackDescriptor {uuid (after the processes'),
 *      parent_uuid = its process, name, counter = CounterDescriptor {}}.
 *   5. Counter samples as TrackEvent {type = TYPE_COUNTER (4), track_uuid,
 *      double_counter_value (44)}; flow points as TrackEvent {type =
 *      TYPE_INSTANT (3), name_iid, track_uuid = its thread, flow_ids (47,
 *      fixed64) for 's'/'t', terminating_flow_ids (48) for 'f'}.  They go
 *      on the same sequence, interleaved in time order with the slice
 *      packets (before a begin at t: every pending end <= t and every
 *      counter/flow point < t, earliest first, a counter/flow point first
 *      on a tie), so the incremental clock never goes backwards.  A
 *      non-finite counter value is skipped.  The writer keeps a sorted
 *      copy of the header's counters and flows (O(samples) memory).
 *
 *   6. Stack samples (sps__pfw_samples, export.h) on a second sequence
 *      (PF_SMP_SEQ_ID) of their own, so that they need not be interleaved
 *      with the spans' incremental clock: its first packet clears its
 *      incremental state; each call writes InternedData packets (function
 *      names, source paths, mapping paths, one mapping, frame and name per
 *      frame of the source, its callstacks root first) with iids past the
 *      previous call's, then one PerfSample {pid, tid, callstack_iid} per
 *      sample at its absolute BUILTIN_CLOCK_MONOTONIC time
 *      (timestamp_clock_id = 3 on the packet).  trace processor sorts
 *      every packet by time; it resolves interned data per sequence.
 *
 *   7. Device activity (sps__pfw_device, export.h) on a third sequence
 *      (PF_DEV_SEQ_ID), its first packet clearing its state: a process
 *      TrackDescriptor per GPU ("GPU N", uuids from PF_DEV_UUID0), a named
 *      track per stream under it ("stream S"), then per activity a
 *      TYPE_SLICE_BEGIN (name 23, categories 22: kernel, gpu_memcpy,
 *      gpu_memset, cuda_runtime, cuda_driver; flow_ids 47 on an API call
 *      that launched something, terminating_flow_ids 48 on what it
 *      launched) and a TYPE_SLICE_END at absolute BUILTIN_CLOCK_MONOTONIC
 *      times, device rows on their stream's track, API rows on their
 *      host thread's track (inside the launching span).  Written at close.
 *
 * Event packets do not carry SEQ_NEEDS_INCREMENTAL_STATE: a file written in
 * one go has no packet loss, trace processor applies defaults and interned
 * data regardless of the flag, and leaving it out keeps a regular loop at
 * <= 24 bytes per span (begin 13 + end 11 with 2-byte deltas).
 *
 * Spans arrive in global start order and nest per thread.  Each thread keeps
 * a stack of the ends of its open spans; a binary heap of every pending end
 * (end time, thread) lets us, before a begin at time t, write every pending
 * end <= t across all threads in time order (equal ends by thread), so
 * timestamps never decrease on the sequence.  A thread's stack top is its
 * earliest pending end (spans nest), so the heap's smallest entry is always
 * the top of its thread's stack.  Memory: O(threads + names + open spans),
 * never O(spans).
 */
#include "formats/export.h"
#include "formats/h5_read.h"
#include "formats/timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PF_SEQ_ID 1u          /* the spans' trusted_packet_sequence_id */
#define PF_SMP_SEQ_ID 2u      /* the stack samples' (sps__pfw_samples) */
#define PF_DEV_SEQ_ID 3u      /* the device activity's (sps__pfw_device) */
#define PF_DEV_UUID0 (1ull << 40) /* the GPU processes' and streams' track uuids */
#define PF_SMP_MAX_COPIES 64  /* a sample of weight W is written min(W, this) times */
#define PF_CLOCK_INCR 64u     /* first sequence-scoped clock id */
#define PF_CLOCK_MONO 3u      /* BUILTIN_CLOCK_MONOTONIC */
#define PF_BUF_CAP (256u * 1024u)
#define PF_NAMES_PER_PACKET 1024u

/* A growable byte buffer used to build the prologue messages.  Owns b. */
typedef struct pf_bytes {
    uint8_t *b;
    size_t n, cap;
    int oom;
} pf_bytes_t;

/* One thread's stack of pending span ends (ns, absolute). Owns ends. */
typedef struct pf_thr {
    int64_t *ends;
    size_t n, cap;
    uint64_t uuid;      /* track uuid */
    int64_t pid, tid;   /* its ThreadDescriptor's (a sample's PerfSample) */
} pf_thr_t;

/* A counter sample or a flow point, ready to write.  kind: 'C' (counter:
 * bits holds the double's bits) or the flow phase (bits: the flow id). */
typedef struct pf_extra {
    int64_t ts_ns;
    uint64_t bits;
    uint64_t uuid;     /* its track */
    uint32_t name;
    char kind;
} pf_extra_t;

/* A counter track: (process index, name). */
typedef struct pf_ctrack {
    uint32_t proc, name;
} pf_ctrack_t;

struct sps__pfw {
    int fd;
    char *path;          /* owned copy, for messages and abort */
    int err;             /* sticky first error */
    uint8_t *buf;        /* output buffer, PF_BUF_CAP bytes, owned */
    size_t nbuf;
    size_t nthreads, nnames;
    pf_thr_t *thr;       /* nthreads entries, owned */
    sps__heap_t pend;    /* every pending end: (end, thread) (util.h) */
    uint64_t def_uuid;   /* TrackEventDefaults.track_uuid */
    int64_t clock;       /* current value of clock 64 (absolute ns) */
    int64_t last_start;  /* start of the previous span */
    int any_span;
    pf_extra_t *ex;      /* counters and flows in time order, owned */
    size_t nex, iex;     /* how many, how many written */
    pf_ctrack_t *ct;     /* counter tracks, sorted, owned */
    size_t nct;
    uint64_t ct_uuid0;   /* uuid of counter track 0 */
    uint64_t smp_iid;    /* iids below this are taken on the samples' sequence */
    int smp_started;     /* the samples' sequence has begun (state cleared) */
    sps__tl_device_t **dev; /* owned array of borrowed: device activity (export.h) */
    size_t ndev;
    uint64_t dev_uuid;   /* the next GPU/stream track uuid */
    int dev_started;     /* the device sequence has begun (state cleared) */
};

/* ------------------------------------------------------------------------ */
/* encoding primitives                                                        */
/* ------------------------------------------------------------------------ */

/* Writes v as a base-128 varint at p (room for 10 bytes); returns bytes. */
static size_t pf_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Makes room for need more bytes in b (sets b->oom on failure). */
static int pf_bytes_reserve(pf_bytes_t *b, size_t need) {
    if (b->oom) return -1;
    if (b->cap - b->n >= need) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->n < need) {
        if (cap > SIZE_MAX / 2) {
            b->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    uint8_t *nb = realloc(b->b, cap);
    if (!nb) {
        b->oom = 1;
        return -1;
    }
    b->b = nb;
    b->cap = cap;
    return 0;
}

/* Appends a varint to b. */
static void pf_put_varint(pf_bytes_t *b, uint64_t v) {
    if (pf_bytes_reserve(b, 10) == 0) b->n += pf_varint(b->b + b->n, v);
}

/* Appends a varint field (wire type 0) to b. */
static void pf_put_uint(pf_bytes_t *b, uint32_t field, uint64_t v) {
    pf_put_varint(b, (uint64_t)field << 3);
    pf_put_varint(b, v);
}

/* Appends a length-delimited field (wire type 2) holding n bytes at p. */
static void pf_put_bytes(pf_bytes_t *b, uint32_t field, const void *p,
                         size_t n) {
    pf_put_varint(b, ((uint64_t)field << 3) | 2);
    pf_put_varint(b, n);
    if (n && pf_bytes_reserve(b, n) == 0) {
        memcpy(b->b + b->n, p, n);
        b->n += n;
    }
}

/* Appends a string field. */
static void pf_put_str(pf_bytes_t *b, uint32_t field, const char *s) {
    pf_put_bytes(b, field, s, strlen(s));
}

/* Appends the nested message in sub as field, then empties sub (keeps its
 * memory). */
static void pf_put_msg(pf_bytes_t *b, uint32_t field, pf_bytes_t *sub) {
    if (sub->oom) b->oom = 1;
    pf_put_bytes(b, field, sub->b, sub->n);
    sub->n = 0;
}

/* ------------------------------------------------------------------------ */
/* output                                                                     */
/* ------------------------------------------------------------------------ */

/* Records the first error (with a message naming the file); returns it. */
static int pf_fail(sps__pfw_t *w, int code, const char *what) {
    if (!w->err) {
        w->err = code;
        sps__err_set("%s: %s", w->path, what);
    }
    return w->err;
}

/* Writes the buffered bytes to the file; SPS_EIO on failure. */
static int pf_flush(sps__pfw_t *w) {
    int rc = sps__write_all(w->fd, w->buf, w->nbuf);
    w->nbuf = 0;
    return rc ? pf_fail(w, SPS_EIO, strerror(errno)) : 0;
}

/* Appends n raw bytes to the output. */
static int pf_out(sps__pfw_t *w, const void *p, size_t n) {
    const uint8_t *s = p;
    while (n) {
        if (w->nbuf == PF_BUF_CAP && pf_flush(w)) return w->err;
        size_t k = PF_BUF_CAP - w->nbuf;
        if (k > n) k = n;
        memcpy(w->buf + w->nbuf, s, k);
        w->nbuf += k;
        s += k;
        n -= k;
    }
    return 0;
}

/* Writes one Trace.packet (field 1) whose TracePacket body is pkt. */
static int pf_packet(sps__pfw_t *w, pf_bytes_t *pkt) {
    if (pkt->oom) return pf_fail(w, SPS_ENOMEM, "out of memory");
    uint8_t hdr[11];
    size_t h = 0;
    hdr[h++] = 0x0A; /* field 1, wire type 2 */
    h += pf_varint(hdr + h, pkt->n);
    if (pf_out(w, hdr, h) || pf_out(w, pkt->b, pkt->n)) return w->err;
    pkt->n = 0;
    return 0;
}

/* Writes one TrackEvent packet: type 1 (begin, with name_iid) or 2 (end) at
 * absolute time t on the track uuid.  The hot path: encoded straight into
 * the output buffer. */
static int pf_emit(sps__pfw_t *w, const uint8_t *ev, size_t ne, int64_t t);
static int pf_event(sps__pfw_t *w, int type, uint64_t uuid, uint32_t name,
                    int64_t t) {
    uint8_t ev[32];
    size_t ne = 0;
    ev[ne++] = 0x48; /* type = 9 */
    ev[ne++] = (uint8_t)type;
    if (type == 1) {
        ev[ne++] = 0x50; /* name_iid = 10 */
        ne += pf_varint(ev + ne, (uint64_t)name + 1);
    }
    if (uuid != w->def_uuid) {
        ev[ne++] = 0x58; /* track_uuid = 11 */
        ne += pf_varint(ev + ne, uuid);
    }
    return pf_emit(w, ev, ne, t);
}

/* Writes one TracePacket at absolute time t holding the TrackEvent body
 * ev (ne < 40 bytes). */
static int pf_emit(sps__pfw_t *w, const uint8_t *ev, size_t ne, int64_t t) {
    uint8_t pk[64];
    size_t np = 0;
    if (t >= w->clock) {
        pk[np++] = 0x40; /* timestamp = 8, delta on clock 64 */
        np += pf_varint(pk + np, (uint64_t)(t - w->clock));
        w->clock = t;
    } else {
        /* Only before base_ns: an absolute MONOTONIC timestamp, which leaves
         * clock 64 where it is. */
        pk[np++] = 0x40;
        np += pf_varint(pk + np, (uint64_t)t);
        pk[np++] = 0xD0; /* timestamp_clock_id = 58: tag 58<<3 = 464 */
        pk[np++] = 0x03;
        pk[np++] = (uint8_t)PF_CLOCK_MONO;
    }
    pk[np++] = 0x50; /* trusted_packet_sequence_id = 10 */
    pk[np++] = (uint8_t)PF_SEQ_ID;
    pk[np++] = 0x5A; /* track_event = 11 */
    pk[np++] = (uint8_t)ne;
    memcpy(pk + np, ev, ne);
    np += ne;
    if (PF_BUF_CAP - w->nbuf >= np + 2) { /* fast path */
        w->buf[w->nbuf++] = 0x0A;
        w->buf[w->nbuf++] = (uint8_t)np; /* np < 128 */
        memcpy(w->buf + w->nbuf, pk, np);
        w->nbuf += np;
        return 0;
    }
    uint8_t hdr[2] = {0x0A, (uint8_t)np};
    if (pf_out(w, hdr, 2) || pf_out(w, pk, np)) return w->err;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* pending ends                                                               */
/* ------------------------------------------------------------------------ */

/* The earliest pending end (there must be one). */
static int64_t pf_next_end(const sps__pfw_t *w) {
    const pf_thr_t *t = &w->thr[sps__heap_top(&w->pend).idx];
    return t->ends[t->n - 1];
}

/* Writes counter sample or flow point x as a TYPE_COUNTER or TYPE_INSTANT
 * TrackEvent packet. */
static int pf_extra(sps__pfw_t *w, const pf_extra_t *x) {
    uint8_t ev[40];
    size_t ne = 0;
    ev[ne++] = 0x48; /* type = 9 */
    ev[ne++] = x->kind == 'C' ? 4 : 3;
    if (x->kind != 'C') {
        ev[ne++] = 0x50; /* name_iid = 10 */
        ne += pf_varint(ev + ne, (uint64_t)x->name + 1);
    }
    ev[ne++] = 0x58; /* track_uuid = 11 */
    ne += pf_varint(ev + ne, x->uuid);
    /* double_counter_value = 44 (tag 0x161), flow_ids = 47 (0x179),
     * terminating_flow_ids = 48 (0x181): wire type 1 */
    uint32_t tag = x->kind == 'C' ? 0x161 : x->kind == 'f' ? 0x181 : 0x179;
    ne += pf_varint(ev + ne, tag);
    for (int i = 0; i < 8; i++) ev[ne++] = (uint8_t)(x->bits >> (8 * i));
    return pf_emit(w, ev, ne, x->ts_ns);
}

/* Pops the earliest pending end (heap top) and writes it. */
static int pf_pop_end(sps__pfw_t *w) {
    pf_thr_t *th = &w->thr[sps__heap_top(&w->pend).idx];
    sps__heap_pop(&w->pend);
    return pf_event(w, 2, th->uuid, 0, th->ends[--th->n]) ? w->err : 0;
}

/* Writes every pending end <= t and every counter/flow point < t (all of
 * both when all is set), in time order (a counter/flow point first on a
 * tie), popping the threads' stacks. */
static int pf_flush_ends(sps__pfw_t *w, int64_t t, int all) {
    for (;;) {
        int xok = w->iex < w->nex && (all || w->ex[w->iex].ts_ns < t);
        int eok = w->pend.n && (all || pf_next_end(w) <= t);
        if (xok && (!eok || w->ex[w->iex].ts_ns <= pf_next_end(w))) {
            if (pf_extra(w, &w->ex[w->iex++])) return w->err;
        } else if (eok) {
            if (pf_pop_end(w)) return w->err;
        } else {
            return 0;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* header validation and prologue                                             */
/* ------------------------------------------------------------------------ */


/* Orders (pid, tid) pairs, for the uniqueness check. */
static int pf_cmp_pair(const void *a, const void *b) {
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    if (x[1] != y[1]) return x[1] < y[1] ? -1 : 1;
    return 0;
}

/* 1 if v fits an int32 (ProcessDescriptor/ThreadDescriptor pid, tid). */
static int pf_fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* Checks h: strings present and UTF-8, pids unique and in int32, every
 * thread's process present, (pid, tid) unique.  0 or SPS_EINVAL/ENOMEM. */
static int pf_check_header(const sps__tl_header_t *h, const char **why) {
    if ((h->nnames && !h->names) || (h->nprocs && !h->procs) ||
        (h->nthreads && !h->threads)) {
        *why = "header arrays missing";
        return SPS_EINVAL;
    }
    if (h->nnames > (size_t)UINT32_MAX - 1 || h->nthreads > 0x7FFFFFFF) {
        *why = "too many names or threads";
        return SPS_EINVAL;
    }
    for (size_t i = 0; i < h->nnames; i++)
        if (!h->names[i] || !sps__utf8_valid(h->names[i], strlen(h->names[i]))) {
            *why = "a span name is missing or not UTF-8";
            return SPS_EINVAL;
        }
    size_t n = h->nprocs > h->nthreads ? h->nprocs : h->nthreads;
    int64_t *pairs = malloc((n ? n : 1) * 2 * sizeof *pairs);
    if (!pairs) {
        *why = "out of memory";
        return SPS_ENOMEM;
    }
    int rc = 0;
    for (size_t i = 0; i < h->nprocs && !rc; i++) {
        if (!pf_fits32(h->procs[i].pid) ||
            (h->procs[i].name && !sps__utf8_valid(h->procs[i].name, strlen(h->procs[i].name)))) {
            *why = "a process pid is out of range or its name not UTF-8";
            rc = SPS_EINVAL;
        }
        pairs[2 * i] = h->procs[i].pid;
        pairs[2 * i + 1] = 0;
    }
    if (!rc && h->nprocs) {
        qsort(pairs, h->nprocs, 2 * sizeof *pairs, pf_cmp_pair);
        for (size_t i = 1; i < h->nprocs && !rc; i++)
            if (pairs[2 * i] == pairs[2 * i - 2]) {
                *why = "two processes share a pid";
                rc = SPS_EINVAL;
            }
    }
    for (size_t i = 0; i < h->nthreads && !rc; i++) {
        const sps__tl_thread_t *t = &h->threads[i];
        int found = 0;
        /* binary search the sorted pids */
        size_t lo = 0, hi = h->nprocs;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (pairs[2 * mid] < t->pid) lo = mid + 1;
            else hi = mid;
        }
        found = lo < h->nprocs && pairs[2 * lo] == t->pid;
        if (!found || !pf_fits32(t->tid) ||
            (t->name && !sps__utf8_valid(t->name, strlen(t->name)))) {
            *why = "a thread has no process, a tid out of range or a "
                   "non-UTF-8 name";
            rc = SPS_EINVAL;
        }
    }
    if (!rc && h->nthreads) {
        for (size_t i = 0; i < h->nthreads; i++) {
            pairs[2 * i] = h->threads[i].pid;
            pairs[2 * i + 1] = h->threads[i].tid;
        }
        qsort(pairs, h->nthreads, 2 * sizeof *pairs, pf_cmp_pair);
        for (size_t i = 1; i < h->nthreads && !rc; i++)
            if (!pf_cmp_pair(pairs + 2 * i, pairs + 2 * i - 2)) {
                *why = "two threads share (pid, tid)";
                rc = SPS_EINVAL;
            }
    }
    free(pairs);
    return rc;
}

/* Writes the prologue packets (defaults + clock snapshot, interned names,
 * track descriptors). */
static int pf_prologue(sps__pfw_t *w, const sps__tl_header_t *h) {
    pf_bytes_t pkt = {0}, a = {0}, b = {0};
    int rc = 0;

    /* 1: incremental state cleared, defaults, clock snapshot */
    pf_put_uint(&pkt, 8, (uint64_t)h->base_ns);       /* timestamp */
    pf_put_uint(&pkt, 58, PF_CLOCK_MONO);             /* timestamp_clock_id */
    pf_put_uint(&pkt, 10, PF_SEQ_ID);
    pf_put_uint(&pkt, 13, 1); /* SEQ_INCREMENTAL_STATE_CLEARED */
    pf_put_uint(&a, 58, PF_CLOCK_INCR);               /* defaults clock */
    pf_put_uint(&b, 11, w->def_uuid);                 /* track_uuid */
    pf_put_msg(&a, 11, &b);                           /* track_event_defaults */
    pf_put_msg(&pkt, 59, &a);                         /* trace_packet_defaults */
    pf_put_uint(&b, 1, PF_CLOCK_MONO);                /* clock_id */
    pf_put_uint(&b, 2, (uint64_t)h->base_ns);         /* timestamp */
    pf_put_msg(&a, 1, &b);                            /* clocks */
    pf_put_uint(&b, 1, PF_CLOCK_INCR);
    pf_put_uint(&b, 2, (uint64_t)h->base_ns);
    pf_put_uint(&b, 3, 1);                            /* is_incremental */
    pf_put_uint(&b, 4, 1);                            /* unit_multiplier_ns */
    pf_put_msg(&a, 1, &b);
    pf_put_uint(&a, 2, PF_CLOCK_MONO);                /* primary_trace_clock */
    pf_put_msg(&pkt, 6, &a);                          /* clock_snapshot */
    rc = pf_packet(w, &pkt);

    /* 2: interned names, PF_NAMES_PER_PACKET per packet */
    for (size_t i = 0; i < h->nnames && !rc; i++) {
        pf_put_uint(&b, 1, (uint64_t)i + 1);          /* iid */
        pf_put_str(&b, 2, h->names[i]);               /* name */
        pf_put_msg(&a, 2, &b);                        /* event_names */
        if ((i + 1) % PF_NAMES_PER_PACKET == 0 || i + 1 == h->nnames) {
            pf_put_uint(&pkt, 10, PF_SEQ_ID);
            pf_put_msg(&pkt, 12, &a);                 /* interned_data */
            rc = pf_packet(w, &pkt);
        }
    }

    /* 3: track descriptors */
    for (size_t i = 0; i < h->nprocs && !rc; i++) {
        const sps__tl_proc_t *p = &h->procs[i];
        pf_put_uint(&a, 1, w->nthreads + 1 + i);      /* uuid */
        pf_put_uint(&b, 1, (uint64_t)p->pid);         /* pid (int32) */
        pf_put_str(&b, 6, p->name ? p->name : "");    /* process_name */
        pf_put_msg(&a, 3, &b);                        /* process */
        pf_put_uint(&pkt, 10, PF_SEQ_ID);
        pf_put_msg(&pkt, 60, &a);                     /* track_descriptor */
        rc = pf_packet(w, &pkt);
    }
    for (size_t i = 0; i < h->nthreads && !rc; i++) {
        const sps__tl_thread_t *t = &h->threads[i];
        size_t pi = 0;
        while (pi < h->nprocs && h->procs[pi].pid != t->pid) pi++;
        pf_put_uint(&a, 1, w->thr[i].uuid);           /* uuid */
        pf_put_uint(&a, 5, w->nthreads + 1 + pi);     /* parent_uuid */
        pf_put_uint(&b, 1, (uint64_t)t->pid);
        pf_put_uint(&b, 2, (uint64_t)t->tid);
        if (t->name && *t->name) pf_put_str(&b, 5, t->name); /* thread_name */
        pf_put_msg(&a, 4, &b);                        /* thread */
        pf_put_uint(&pkt, 10, PF_SEQ_ID);
        pf_put_msg(&pkt, 60, &a);
        rc = pf_packet(w, &pkt);
    }
    for (size_t i = 0; i < w->nct && !rc; i++) {
        pf_put_uint(&a, 1, w->ct_uuid0 + i);          /* uuid */
        pf_put_str(&a, 2, h->names[w->ct[i].name]);   /* name */
        pf_put_uint(&a, 5, w->nthreads + 1 + w->ct[i].proc); /* parent */
        pf_put_bytes(&a, 8, NULL, 0);                 /* counter {} */
        pf_put_uint(&pkt, 10, PF_SEQ_ID);
        pf_put_msg(&pkt, 60, &a);
        rc = pf_packet(w, &pkt);
    }
    free(pkt.b);
    free(a.b);
    free(b.b);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* counters and flows                                                         */
/* ------------------------------------------------------------------------ */

/* Orders counter tracks by (proc, name). */
static int pf_cmp_ct(const void *a, const void *b) {
    const pf_ctrack_t *x = a, *y = b;
    if (x->proc != y->proc) return x->proc < y->proc ? -1 : 1;
    return (x->name > y->name) - (x->name < y->name);
}

/* Fills w->ct with the distinct (proc, name) of h's counters.  Returns 0
 * or SPS_ENOMEM. */
static int pf_counter_tracks(sps__pfw_t *w, const sps__tl_header_t *h) {
    w->ct = malloc((h->ncounters + 1) * sizeof *w->ct);
    if (!w->ct) return SPS_ENOMEM;
    for (size_t i = 0; i < h->ncounters; i++)
        w->ct[i] = (pf_ctrack_t){h->counters[i].proc, h->counters[i].name};
    qsort(w->ct, h->ncounters, sizeof *w->ct, pf_cmp_ct);
    for (size_t i = 0; i < h->ncounters; i++)
        if (!w->nct || pf_cmp_ct(&w->ct[w->nct - 1], &w->ct[i]))
            w->ct[w->nct++] = w->ct[i];
    w->ct_uuid0 = w->nthreads + h->nprocs + 1;
    return 0;
}

/* Fills w->ex with h's counter samples (finite values, on their tracks)
 * and flow points (on their threads' tracks), in time order.  Returns 0
 * or SPS_ENOMEM. */
static int pf_extras(sps__pfw_t *w, const sps__tl_header_t *h) {
    if (pf_counter_tracks(w, h)) return SPS_ENOMEM;
    w->ex = malloc((h->ncounters + h->nflows + 1) * sizeof *w->ex);
    if (!w->ex) return SPS_ENOMEM;
    for (size_t i = 0; i < h->ncounters; i++) {
        const sps__tl_counter_t *c = &h->counters[i];
        pf_ctrack_t key = {c->proc, c->name};
        pf_ctrack_t *t = bsearch(&key, w->ct, w->nct, sizeof *w->ct, pf_cmp_ct);
        if (!isfinite(c->value) || !t) continue;
        pf_extra_t *x = &w->ex[w->nex++];
        *x = (pf_extra_t){c->ts_ns, 0, w->ct_uuid0 + (uint64_t)(t - w->ct),
                          c->name, 'C'};
        memcpy(&x->bits, &c->value, sizeof x->bits);
    }
    for (size_t i = 0; i < h->nflows; i++) {
        const sps__tl_flow_t *f = &h->flows[i];
        w->ex[w->nex++] = (pf_extra_t){f->ts_ns, f->id, w->thr[f->thread].uuid,
                                       f->name, f->phase};
    }
    return sps__tl_sort_by_time(w->ex, w->nex, sizeof *w->ex,
                                offsetof(pf_extra_t, ts_ns));
}

/* ------------------------------------------------------------------------ */
/* public back end                                                            */
/* ------------------------------------------------------------------------ */

/* Frees w and everything it owns (closes the fd if still open). */
static void pf_free(sps__pfw_t *w) {
    if (!w) return;
    if (w->fd >= 0) close(w->fd);
    for (size_t i = 0; i < w->nthreads; i++) free(w->thr[i].ends);
    free(w->thr);
    sps__heap_free(&w->pend);
    free(w->ex);
    free(w->ct);
    free(w->dev);
    free(w->buf);
    free(w->path);
    free(w);
}

/* Validates h, creates path and writes the prologue.  On success *out owns
 * the writer (free it with close or abort); on failure nothing is left. */
int sps__pfw_open(sps__pfw_t **out, const char *path,
                  const sps__tl_header_t *h) {
    if (!out || !path || !h) return SPS_EINVAL;
    *out = NULL;
    const char *why = NULL;
    int rc = pf_check_header(h, &why);
    if (!rc && sps__tl_check_extras(h)) {
        why = "a counter or flow point with a bad index, phase or time";
        rc = SPS_EINVAL;
    }
    if (rc) {
        sps__err_set("%s: %s", path, why);
        return rc;
    }
    sps__pfw_t *w = calloc(1, sizeof *w);
    if (!w) return SPS_ENOMEM;
    w->fd = -1;
    w->path = strdup(path);
    w->buf = malloc(PF_BUF_CAP);
    w->nthreads = h->nthreads;
    w->nnames = h->nnames;
    w->thr = calloc(h->nthreads ? h->nthreads : 1, sizeof *w->thr);
    sps__heap_init(&w->pend, NULL, NULL); /* equal ends: the lower thread first */
    if (!w->path || !w->buf || !w->thr || sps__heap_reserve(&w->pend, h->nthreads)) {
        pf_free(w);
        sps__err_set("%s: out of memory", path);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < h->nthreads; i++) {
        w->thr[i].uuid = i + 1;
        w->thr[i].pid = h->threads[i].pid;
        w->thr[i].tid = h->threads[i].tid;
    }
    if (pf_extras(w, h)) {
        pf_free(w);
        sps__err_set("%s: out of memory", path);
        return SPS_ENOMEM;
    }
    w->def_uuid = h->nthreads ? 1 : 0;
    w->clock = h->base_ns;
    w->last_start = INT64_MIN;
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (w->fd < 0) {
        sps__err_os_note(errno); /* the cause, for the caller's message */
        sps__err_set("%s: cannot create: %s", path, strerror(errno));
        pf_free(w);
        return SPS_EIO;
    }
    rc = pf_prologue(w, h);
    if (rc) {
        unlink(w->path);
        pf_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

/* Writes one span: its begin now (after every pending end <= its start),
 * its end later.  SPS_EINVAL for a span out of order, not nested on its
 * thread, or with bad indices; the error is sticky. */
int sps__pfw_span(sps__pfw_t *w, const sps__tl_span_t *s) {
    if (!w || !s) return SPS_EINVAL;
    if (w->err) return w->err;
    if (s->thread >= w->nthreads || s->name >= w->nnames ||
        s->end_ns < s->start_ns)
        return pf_fail(w, SPS_EINVAL, "span with a bad thread, name or end");
    if (w->any_span && s->start_ns < w->last_start)
        return pf_fail(w, SPS_EINVAL, "spans out of start order");
    if (pf_flush_ends(w, s->start_ns, 0)) return w->err;
    pf_thr_t *th = &w->thr[s->thread];
    if (th->n && s->end_ns > th->ends[th->n - 1])
        return pf_fail(w, SPS_EINVAL, "span not nested on its thread");
    if (th->n == th->cap) {
        size_t cap = th->cap ? th->cap * 2 : 16;
        int64_t *e = realloc(th->ends, cap * sizeof *e);
        if (!e) return pf_fail(w, SPS_ENOMEM, "out of memory");
        th->ends = e;
        th->cap = cap;
    }
    if (pf_event(w, 1, th->uuid, s->name, s->start_ns)) return w->err;
    /* every end on a stack has its entry in pend, and only those */
    if (sps__heap_push(&w->pend, sps__heap_key_i64(s->end_ns), s->thread))
        return pf_fail(w, SPS_ENOMEM, "out of memory");
    th->ends[th->n++] = s->end_ns;
    w->last_start = s->start_ns;
    w->any_span = 1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* stack samples (export.h)                                                   */
/* ------------------------------------------------------------------------ */

#define PF_SMP_PER_PACKET 512u /* interned entries per InternedData packet */

/* Writes the InternedData in a (a message body) as a packet on the
 * samples' sequence, the sequence's first clearing its state. */
static int pf_smp_interned(sps__pfw_t *w, pf_bytes_t *pkt, pf_bytes_t *a) {
    pf_put_uint(pkt, 10, PF_SMP_SEQ_ID);
    if (!w->smp_started) pf_put_uint(pkt, 13, 1); /* SEQ_INCREMENTAL_STATE_CLEARED */
    w->smp_started = 1;
    pf_put_msg(pkt, 12, a);                       /* interned_data */
    return pf_packet(w, pkt);
}

/* Interns x's frames and stacks with iids from base + 1: per frame f a
 * function name, a source path, a mapping path and a mapping (its file,
 * else its module), and a frame (iid base + f + 1 for each); per stack k
 * a callstack (iid base + k + 1), root first. */
static int pf_smp_intern(sps__pfw_t *w, const sps__h5r_samples_t *x, uint64_t base) {
    pf_bytes_t pkt = {0}, a = {0}, b = {0};
    int rc = 0;
    /* pass 0: strings and mappings; 1: frames; 2: callstacks */
    for (int pass = 0; pass < 3 && !rc; pass++) {
        size_t n = pass < 2 ? x->nframes : x->nstacks, k = 0;
        for (size_t i = 0; i < n && !rc; i++) {
            uint64_t iid = base + i + 1;
            if (pass == 0) {
                const char *file = x->files[i], *mod = x->modules[i];
                const char *path = file && *file ? file : mod && *mod ? mod : "[unknown]";
                pf_put_uint(&b, 1, iid);
                pf_put_str(&b, 2, x->functions[i] ? x->functions[i] : "");
                pf_put_msg(&a, 5, &b);                /* function_names */
                pf_put_uint(&b, 1, iid);
                pf_put_str(&b, 2, path);
                pf_put_msg(&a, 17, &b);               /* mapping_paths */
                if (file && *file) {
                    pf_put_uint(&b, 1, iid);
                    pf_put_str(&b, 2, file);
                    pf_put_msg(&a, 18, &b);           /* source_paths */
                }
                pf_put_uint(&b, 1, iid);
                pf_put_uint(&b, 7, iid);              /* path_string_ids */
                pf_put_msg(&a, 19, &b);               /* mappings */
            } else if (pass == 1) {
                pf_put_uint(&b, 1, iid);
                pf_put_uint(&b, 2, iid);              /* function_name_id */
                pf_put_uint(&b, 3, iid);              /* mapping_id */
                if (x->kinds[i] == 0 && x->addresses[i] > 0)
                    pf_put_uint(&b, 4, (uint64_t)x->addresses[i]); /* rel_pc */
                if (x->files[i] && *x->files[i]) pf_put_uint(&b, 5, iid); /* source_path_iid */
                if (x->lines[i] > 0) pf_put_uint(&b, 6, (uint64_t)x->lines[i]);
                pf_put_uint(&b, 7, x->kinds[i] == 0 ? 1 : 3); /* KIND_NATIVE / INTERPRETED */
                pf_put_msg(&a, 6, &b);                /* frames */
            } else {
                pf_put_uint(&b, 1, iid);
                for (int64_t f = x->stack_offsets[i + 1]; f > x->stack_offsets[i]; f--)
                    pf_put_uint(&b, 2, base + (uint64_t)x->stack_frames[f - 1] + 1);
                pf_put_msg(&a, 7, &b);                /* callstacks */
            }
            if (++k == PF_SMP_PER_PACKET || i + 1 == n) {
                rc = pf_smp_interned(w, &pkt, &a);
                k = 0;
            }
        }
    }
    if (!rc && (pkt.oom || a.oom || b.oom)) rc = pf_fail(w, SPS_ENOMEM, "out of memory");
    free(pkt.b), free(a.b), free(b.b);
    return rc;
}

int sps__pfw_samples(sps__pfw_t *w, const sps__tl_samples_t *s) {
    if (!w || !s || !s->x) return SPS_EINVAL;
    if (w->err) return w->err;
    const sps__h5r_samples_t *x = s->x;
    for (size_t i = 0; i < x->n; i++) { /* checked before anything is written */
        int64_t ts;
        if (s->thread[i] == UINT32_MAX) continue;
        if (s->thread[i] >= w->nthreads ||
            __builtin_add_overflow(x->times_ns[i], s->shift_ns, &ts) || ts < 0)
            return pf_fail(w, SPS_EINVAL, "a stack sample with a bad thread or time");
    }
    if (!s->nplaced) return 0;
    uint64_t base = w->smp_iid;
    size_t most = x->nframes > x->nstacks ? x->nframes : x->nstacks;
    w->smp_iid += most + 1;
    int rc = pf_smp_intern(w, x, base);
    pf_bytes_t pkt = {0}, a = {0};
    for (size_t i = 0; !rc && i < x->n; i++) {
        if (s->thread[i] == UINT32_MAX) continue;
        const pf_thr_t *th = &w->thr[s->thread[i]];
        pf_put_uint(&a, 2, (uint64_t)(uint32_t)th->pid);       /* pid */
        pf_put_uint(&a, 3, (uint64_t)(uint32_t)th->tid);       /* tid */
        pf_put_uint(&a, 4, base + (uint64_t)x->stacks[i] + 1); /* callstack_iid */
        pf_put_uint(&pkt, 8, (uint64_t)(x->times_ns[i] + s->shift_ns)); /* timestamp */
        pf_put_uint(&pkt, 58, PF_CLOCK_MONO);                  /* timestamp_clock_id */
        pf_put_uint(&pkt, 10, PF_SMP_SEQ_ID);
        pf_put_msg(&pkt, 66, &a);                              /* perf_sample */
        if (pkt.oom || a.oom) {
            rc = pf_fail(w, SPS_ENOMEM, "out of memory");
            break;
        }
        int64_t copies = x->weights[i] < PF_SMP_MAX_COPIES ? x->weights[i] : PF_SMP_MAX_COPIES;
        size_t len = pkt.n;
        for (int64_t c = 0; !rc && c < copies; c++) {
            pkt.n = len;
            rc = pf_packet(w, &pkt);
        }
        pkt.n = 0;
    }
    free(pkt.b), free(a.b);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* device activity (export.h)                                                 */
/* ------------------------------------------------------------------------ */

int sps__pfw_device(sps__pfw_t *w, sps__tl_device_t *d) {
    if (!w || !d || !d->x) return SPS_EINVAL;
    if (w->err) return w->err;
    if (w->any_span) return pf_fail(w, SPS_EINVAL, "device activity after the spans");
    const sps__h5r_device_t *x = d->x;
    for (size_t i = 0; i < x->n; i++) { /* checked before anything is written */
        if (d->thread[i] == UINT32_MAX) continue;
        int64_t a, b;
        if ((x->kinds[i] >= SPS__DEV_RUNTIME && d->thread[i] >= w->nthreads) ||
            (x->kinds[i] <= SPS__DEV_MEMSET && d->gpu[i] >= d->ngpus) ||
            __builtin_add_overflow(x->starts_ns[i], d->shift_ns, &a) || a < 0 ||
            __builtin_add_overflow(x->ends_ns[i], d->shift_ns, &b))
            return pf_fail(w, SPS_EINVAL, "a device activity with a bad thread or time");
    }
    sps__tl_device_t **v = realloc(w->dev, (w->ndev + 1) * sizeof *v);
    if (!v) return pf_fail(w, SPS_ENOMEM, "out of memory");
    w->dev = v;
    v[w->ndev++] = d;
    return 0;
}

/* Puts the device sequence's id on pkt, and on its first packet
 * SEQ_INCREMENTAL_STATE_CLEARED. */
static void pf_dev_seq(sps__pfw_t *w, pf_bytes_t *pkt) {
    pf_put_uint(pkt, 10, PF_DEV_SEQ_ID);
    if (!w->dev_started) pf_put_uint(pkt, 13, 1);
    w->dev_started = 1;
}

/* Writes the TrackEvent body ev as a packet at absolute MONOTONIC time t
 * on the device sequence. */
static int pf_dev_packet(sps__pfw_t *w, pf_bytes_t *pkt, pf_bytes_t *ev, int64_t t) {
    pf_put_uint(pkt, 8, (uint64_t)t);                 /* timestamp */
    pf_put_uint(pkt, 58, PF_CLOCK_MONO);              /* timestamp_clock_id */
    pf_dev_seq(w, pkt);
    pf_put_msg(pkt, 11, ev);                          /* track_event */
    return pf_packet(w, pkt);
}

/* Appends a fixed64 field (wire type 1). */
static void pf_put_fixed64(pf_bytes_t *b, uint32_t field, uint64_t v) {
    pf_put_varint(b, ((uint64_t)field << 3) | 1);
    if (pf_bytes_reserve(b, 8) == 0)
        for (int i = 0; i < 8; i++) b->b[b->n++] = (uint8_t)(v >> (8 * i));
}

typedef struct pf_gstream {
    uint32_t gpu;
    int64_t stream;
} pf_gstream_t;

static int pf_by_gstream(const void *a, const void *b) {
    const pf_gstream_t *x = a, *y = b;
    if (x->gpu != y->gpu) return x->gpu < y->gpu ? -1 : 1;
    return (x->stream > y->stream) - (x->stream < y->stream);
}

static const char *const pf_dev_cat[] = {"", "kernel", "gpu_memcpy", "gpu_memset",
                                         "cuda_runtime", "cuda_driver"};

/* Writes d: a process track per GPU, a track per stream under it, then a
 * slice per placed row (device rows on their stream's track, API rows on
 * their thread's), with flows from an API row to the device rows it
 * launched. */
static int pf_dev_write(sps__pfw_t *w, const sps__tl_device_t *d) {
    const sps__h5r_device_t *x = d->x;
    if (!d->nplaced) return 0;
    pf_gstream_t *gs = malloc((x->n + 1) * sizeof *gs);
    unsigned char *launches = calloc(x->n + 1, 1);
    uint64_t *gpu_uuid = malloc((d->ngpus + 1) * sizeof *gpu_uuid);
    pf_bytes_t pkt = {0}, a = {0}, b = {0};
    if (!gs || !launches || !gpu_uuid) {
        free(gs), free(launches), free(gpu_uuid);
        return pf_fail(w, SPS_ENOMEM, "out of memory");
    }
    if (!w->dev_uuid) w->dev_uuid = PF_DEV_UUID0;
    size_t m = 0;
    for (size_t i = 0; i < x->n; i++) {
        if (d->thread[i] == UINT32_MAX || x->kinds[i] >= SPS__DEV_RUNTIME) continue;
        gs[m++] = (pf_gstream_t){d->gpu[i], x->streams[i]};
        if (d->api[i] >= 0 && d->thread[d->api[i]] != UINT32_MAX) launches[d->api[i]] = 1;
    }
    qsort(gs, m, sizeof *gs, pf_by_gstream);
    size_t u = 0;
    for (size_t k = 0; k < m; k++)
        if (!u || pf_by_gstream(&gs[k], &gs[u - 1])) gs[u++] = gs[k];
    int rc = 0;
    for (size_t g = 0; g < d->ngpus && !rc; g++) {
        gpu_uuid[g] = w->dev_uuid++;
        pf_put_uint(&a, 1, gpu_uuid[g]);                   /* uuid */
        pf_put_uint(&b, 1, (uint64_t)d->gpus[g].pid);      /* pid */
        pf_put_str(&b, 6, d->gpus[g].name);                /* process_name */
        pf_put_msg(&a, 3, &b);                             /* process */
        pf_dev_seq(w, &pkt);
        pf_put_msg(&pkt, 60, &a);                          /* track_descriptor */
        rc = pf_packet(w, &pkt);
    }
    uint64_t stream_uuid0 = w->dev_uuid;
    for (size_t k = 0; k < u && !rc; k++) {
        char nm[40];
        snprintf(nm, sizeof nm, "stream %lld", (long long)gs[k].stream);
        pf_put_uint(&a, 1, w->dev_uuid++);                 /* uuid */
        pf_put_str(&a, 2, nm);                             /* name */
        pf_put_uint(&a, 5, gpu_uuid[gs[k].gpu]);           /* parent_uuid */
        pf_dev_seq(w, &pkt);
        pf_put_msg(&pkt, 60, &a);
        rc = pf_packet(w, &pkt);
    }
    for (size_t i = 0; i < x->n && !rc; i++) {
        if (d->thread[i] == UINT32_MAX) continue;
        int api = x->kinds[i] >= SPS__DEV_RUNTIME;
        uint64_t track;
        if (api) {
            track = w->thr[d->thread[i]].uuid;
        } else {
            pf_gstream_t key = {d->gpu[i], x->streams[i]};
            pf_gstream_t *at = bsearch(&key, gs, u, sizeof *gs, pf_by_gstream);
            track = stream_uuid0 + (uint64_t)(at - gs);
        }
        uint64_t flow = d->flow_base + (uint64_t)x->correlations[i] + 1;
        const char *nm = x->names[x->names_idx[i]];
        pf_put_uint(&a, 9, 1);                             /* type = SLICE_BEGIN */
        pf_put_str(&a, 22, pf_dev_cat[x->kinds[i]]);       /* categories */
        pf_put_str(&a, 23, nm ? nm : "");                  /* name */
        pf_put_uint(&a, 11, track);                        /* track_uuid */
        if (api && launches[i]) pf_put_fixed64(&a, 47, flow);          /* flow_ids */
        else if (!api && d->api[i] >= 0 && d->thread[d->api[i]] != UINT32_MAX)
            pf_put_fixed64(&a, 48, flow);                  /* terminating_flow_ids */
        rc = pf_dev_packet(w, &pkt, &a, x->starts_ns[i] + d->shift_ns);
        if (rc) break;
        pf_put_uint(&a, 9, 2);                             /* type = SLICE_END */
        pf_put_uint(&a, 11, track);
        rc = pf_dev_packet(w, &pkt, &a, x->ends_ns[i] + d->shift_ns);
    }
    if (!rc && (pkt.oom || a.oom || b.oom)) rc = pf_fail(w, SPS_ENOMEM, "out of memory");
    free(pkt.b), free(a.b), free(b.b);
    free(gs), free(launches), free(gpu_uuid);
    return rc;
}

/* Writes the remaining ends, flushes and closes the file, frees w (always).
 * Returns the first error seen, if any. */
int sps__pfw_close(sps__pfw_t *w) {
    if (!w) return SPS_EINVAL;
    if (!w->err) pf_flush_ends(w, 0, 1);
    for (size_t i = 0; !w->err && i < w->ndev; i++) pf_dev_write(w, w->dev[i]);
    if (!w->err) pf_flush(w);
    if (w->fd >= 0) {
        if (close(w->fd) != 0 && !w->err) {
            sps__err_os_note(errno);
            pf_fail(w, SPS_EIO, strerror(errno));
        }
        w->fd = -1;
    }
    int rc = w->err;
    pf_free(w);
    return rc;
}

/* Frees w and removes the partial file. */
void sps__pfw_abort(sps__pfw_t *w) {
    if (!w) return;
    if (w->fd >= 0) {
        close(w->fd);
        w->fd = -1;
    }
    unlink(w->path);
    pf_free(w);
}
