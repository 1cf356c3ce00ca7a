/*
 * merge.c -- sps_merge: per-rank recordings into one timeline, one process
 * per rank, clocks aligned.  The library side of `spanscope merge -o OUT
 * IN...` (tools/cmd_merge.c is its command line), of Python's
 * merge_distributed_traces and of a collective finalize under MPI.
 *
 * Every input becomes one process of the output, labelled with its rank:
 * /metadata rank for .h5, distributedInfo.rank or a "rank N" process label
 * for traces, else the input's position in the list.  Two inputs with the
 * same rank are an error (SPS_EINVAL).
 *
 * Output by extension:
 *   .json / .json.gz / .pftrace  a k-way merge over the inputs' timeline
 *       readers (sps__tlr_*): spans leave in global start order and memory
 *       stays at O(inputs + threads + names) beyond what each reader holds.
 *       Names are interned by string, pids are ranks, threads are per
 *       (rank, tid).  JSON gets a top-level "spanscope" key saying, per
 *       rank, how its clock was aligned.  Counter samples and flow points
 *       of every input go along (held in memory: they are few), shifted
 *       like its spans, counters on its process, flow ids remapped so
 *       that inputs never share one (remap_flow_id).
 *   .h5  every input must be .h5 (streamed in blocks from
 *       sps__h5r_open_index when it has call_ids and parent_ids, else read
 *       whole with sps__h5r_open to invent them from its nesting): one
 *       schema-3 file, rows per (region, rank) over a merged region table,
 *       start deltas recomputed after the shift, call/parent/thread ids
 *       kept (ids are per rank), /metadata from the lowest rank with
 *       mpi_size = number of inputs.  No /thread_table: the writer's table
 *       has one rank for all of its threads.
 *
 * Errors: every failure writes one line (no "merge:" prefix; the file it
 * is about named first) to the caller's FILE*, and nothing else is
 * printed: HDF5's own error printing is off while a merge runs.
 *
 * CLOCK ALIGNMENT
 *
 * Times in a recording are CLOCK_MONOTONIC ns of the recording host.  At
 * sps_setup a session reads CLOCK_REALTIME and then CLOCK_MONOTONIC, back to
 * back, and stores them as /metadata wall_anchor_ns and mono_anchor_ns.  So
 * for input i, wall(t) = t + (wall_i - mono_i).  The output's timeline is
 * the monotonic clock of the reference input (the first input that has
 * anchors; with MPI offsets, see below), and input i's times
 * are shifted by
 *
 *     offset_i = (wall_i - mono_i) - (wall_ref - mono_ref).
 *
 * Error of offset_i: (a) the anchor read skew, the time between the two
 * clock reads (tens of ns; up to the scheduler's time slice if the thread
 * is preempted in between), once per input; (b) anything that moved
 * CLOCK_REALTIME against CLOCK_MONOTONIC between the two setups: NTP slew
 * (at most 500 ppm, typically a few ppm) or a step; (c) across hosts, the
 * difference of the hosts' NTP errors (well under a ms on a LAN with
 * chrony/ntpd, microseconds with PTP).
 *
 * On one host within one boot all processes share CLOCK_MONOTONIC, so no
 * shift is right and (a)/(b) only add error.  An input whose /metadata
 * hostname equals the reference's and whose computed offset is under 1 s
 * (a reboot in between takes longer; NTP slew over a run stays below) is
 * therefore taken as on the same clock: offset exactly 0.
 *
 * MPI offsets.  Under MPI the ranks can measure their clocks against rank
 * 0's directly (ping-pong at a collective), which beats the anchors across
 * hosts.  The MPI integration stores the result in an .h5 file's /metadata
 * as int64 attributes clock_offset_ns (ns to ADD to this file's times to
 * put them on rank 0's clock; 0 on rank 0) and clock_offset_error_ns (a
 * bound of its error).  When any input has clock_offset_ns, the output is
 * on rank 0's clock: the reference is the lowest-ranked input that has
 * clock_offset_ns or anchors (rank 0 in a full merge), and every input
 * that has clock_offset_ns is shifted by
 *
 *     offset_i = clock_offset_i - clock_offset_ref
 *
 * where clock_offset_ref is the reference's own clock_offset_ns, 0 when it
 * has none (it is then taken to be on rank 0's clock, as rank 0 is).  The
 * offset is used exactly as measured, in preference to the anchors and to
 * the same-host rule (the integration writes 0 for ranks it knows share
 * rank 0's clock).  Its error bound is clock_offset_error_i +
 * clock_offset_error_ref.  Inputs without clock_offset_ns are aligned on
 * that reference by the anchors, as above.  The JSON output records such a
 * rank as "clock": "mpi", with "offset_error_ns" when its file gives a
 * bound (and the reference "offset_error_ns": 0 when it has
 * clock_offset_ns).
 *
 * Trace inputs carry anchors when their header has them (a JSON trace's
 * top-level "spanscopeClock" {wall_anchor_ns, mono_anchor_ns, hostname},
 * written by spanscope since the anchors were added to sps__tl_header_t):
 * they are then used exactly as an .h5 input's /metadata anchors and
 * hostname, same-host rule included.  A trace output carries the
 * reference's anchors in its header, so a merged JSON can be merged again.
 *
 * Inputs without anchors (torch's baseTimeNanoseconds is a perf_counter
 * value; older spanscope JSON and all Perfetto traces are CLOCK_MONOTONIC
 * without a wall anchor) are merged unshifted, which is exact when they
 * come from the reference's host and boot, and meaningless otherwise.
 * This is recorded as "clock_aligned": false for the rank in the JSON
 * output's "spanscope" key; nothing is printed.
 */
#include "sps_int.h"
#include "formats/h5_read.h"
#include "formats/merge.h"
#include "formats/timeline.h"

#include <hdf5.h>
#include <zlib.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Offsets smaller than this between inputs of one host mean one boot. */
#define SAME_BOOT_NS 1000000000LL

/* Events per sps__h5w_rows call (and per block read when streaming). */
#define H5_BATCH 65536

/* ------------------------------------------------------------------------ */
/* Inputs                                                                    */
/* ------------------------------------------------------------------------ */

/* One input file and its state during the merge. */
typedef struct input {
    const char *path;
    sps__tl_format_t fmt;
    int pos;               /* index in the list of inputs */
    sps__h5r_meta_t m;     /* /metadata of an .h5 (sps__h5r_metadata), owned;
                              a trace's anchor and host (trace_anchor) */
    int64_t rank;
    int64_t offset;        /* ns added to each of its times */
    int64_t offset_error;  /* bound of offset's error in ns, -1 unknown */
    const char *clock;     /* "reference", "same-host", "wall-clock", "mpi",
                              "none" */
    /* trace output */
    sps__tlr_t *r;
    uint32_t *name_map;    /* input name id -> output name id */
    uint32_t *thread_map;  /* input thread index -> output thread index */
    sps__tl_span_t cur;    /* its next span, shifted and mapped */
    uint32_t proc_out;     /* its process in the output header */
    /* .h5 output */
    sps__h5r_t *h5;        /* index only (streamed), or whole (fallback) */
    uint32_t *region_map;  /* input region id -> output region id */
} input_t;

/* One merge: its arguments, its inputs, and where its error line goes. */
typedef struct merge {
    const char *out;
    sps__tl_format_t fo;   /* the output's format */
    input_t *in;
    size_t n;
    int ref;               /* the reference input (whose clock the output
                              uses), -1 when none */
    FILE *err;             /* the caller's, may be NULL */
    int failed;            /* the error line is written */
    const sps__merge_hooks_t *hooks;
} merge_t;

/* Writes the one-line reason (printf format) to c->err, the first time
 * only, and returns code. */
__attribute__((format(printf, 3, 4)))
static int fail(merge_t *c, int code, const char *fmt, ...) {
    if (c->err && !c->failed) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(c->err, fmt, ap);
        va_end(ap);
        fputc('\n', c->err);
        fflush(c->err);
    }
    c->failed = 1;
    return code;
}

/* Calls the reading hook (if any) before input path is opened. */
static void hook_reading(const merge_t *c, const char *path) {
    if (c->hooks && c->hooks->reading) c->hooks->reading(path);
}

/* Calls the read_done hook (if any): every input's header is read. */
static void hook_read_done(const merge_t *c) {
    if (c->hooks && c->hooks->read_done) c->hooks->read_done();
}

/* The rank a trace header names: distributedInfo.rank, else the one rank
 * its labelled processes share; -1 when none.  Returns -2 (after the
 * error line) when its processes name different ranks. */
static int64_t header_rank(merge_t *c, const input_t *in,
                           const sps__tl_header_t *h) {
    int64_t rank = h->rank >= 0 ? h->rank : -1;
    for (size_t p = 0; p < h->nprocs; p++) {
        int64_t q = h->procs[p].rank;
        if (q < 0) continue;
        if (rank >= 0 && q != rank && h->rank < 0) {
            fail(c, SPS_EFORMAT, "%s holds several ranks (%lld and %lld): "
                 "merge takes one recording per rank", in->path,
                 (long long)rank, (long long)q);
            return -2;
        }
        if (rank < 0) rank = q;
    }
    return rank;
}

/* Sets in->rank from its metadata (h: its trace header, or NULL for an
 * .h5 read whole), else its position.  Returns 0 or SPS_EFORMAT (it holds
 * several ranks) after the error line. */
static int resolve_rank(merge_t *c, input_t *in, const sps__tl_header_t *h) {
    int64_t rank = -1;
    if (in->fmt == SPS__TL_H5 && in->m.has_rank) rank = in->m.rank;
    if (h && in->fmt == SPS__TL_H5 && h->nprocs > 1)
        return fail(c, SPS_EFORMAT, "%s holds several ranks: merge takes "
                    "one recording per rank", in->path);
    if (h && rank < 0) {
        rank = header_rank(c, in, h);
        if (rank == -2) return SPS_EFORMAT;
    }
    if (in->h5) {
        for (size_t i = 1; i < in->h5->nrows; i++)
            if (in->h5->rows[i].rank != in->h5->rows[0].rank)
                return fail(c, SPS_EFORMAT, "%s holds several ranks (%u and "
                            "%u): merge takes one recording per rank",
                            in->path, in->h5->rows[0].rank,
                            in->h5->rows[i].rank);
        if (rank < 0 && in->h5->nrows) rank = in->h5->rows[0].rank;
    }
    in->rank = rank >= 0 && rank <= INT32_MAX ? rank : in->pos;
    return 0;
}

/* Checks that no two inputs share a rank.  Returns 0 or SPS_EINVAL after
 * the error line. */
static int check_ranks(merge_t *c) {
    const input_t *in = c->in;
    for (size_t i = 0; i < c->n; i++)
        for (size_t j = i + 1; j < c->n; j++)
            if (in[i].rank == in[j].rank)
                return fail(c, SPS_EINVAL, "%s and %s are both rank %lld",
                            in[i].path, in[j].path, (long long)in[i].rank);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Clock alignment (see CLOCK ALIGNMENT above)                               */
/* ------------------------------------------------------------------------ */

/* a - b, wrapping: hostile anchors and offsets must not trap. */
static int64_t wrap_sub(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* The reference input.  When some input has an MPI clock offset: the
 * lowest-ranked input that can be aligned at all (has an MPI offset or
 * anchors), rank 0 in a full merge.  Otherwise the first input with
 * anchors.  -1 when no input has either. */
static int pick_ref(const input_t *in, size_t n) {
    int ref = -1, mpi = 0;
    for (size_t i = 0; i < n; i++) mpi |= in[i].m.has_clock_offset;
    for (size_t i = 0; i < n; i++) {
        if (!in[i].m.has_clock_offset && !in[i].m.has_anchor) continue;
        if (ref < 0) ref = (int)i;
        else if (mpi && in[i].rank < in[ref].rank) ref = (int)i;
    }
    return ref;
}

/* Aligns x on the reference r through their wall-clock anchors:
 * "same-host" (offset 0), "wall-clock", or left "none" when either has no
 * anchors. */
static void align_anchor(input_t *x, const input_t *r) {
    const sps__h5r_meta_t *a = &x->m, *b = &r->m;
    if (!a->has_anchor || !b->has_anchor) return;
    int64_t d = wrap_sub(wrap_sub(a->wall_anchor_ns, a->mono_anchor_ns),
                         wrap_sub(b->wall_anchor_ns, b->mono_anchor_ns));
    if (a->hostname[0] && !strcmp(a->hostname, b->hostname) && d > -SAME_BOOT_NS &&
        d < SAME_BOOT_NS) {
        x->clock = "same-host";
    } else {
        x->offset = d;
        x->clock = "wall-clock";
    }
}

/* Aligns x (which has an MPI offset) on the reference r: "mpi", by the
 * difference of their offsets (r's is 0 when it has none: it is then taken
 * to be on rank 0's clock), with the sum of the error bounds when x has
 * one. */
static void align_mpi(input_t *x, const input_t *r) {
    const sps__h5r_meta_t *a = &x->m, *b = &r->m;
    x->offset = wrap_sub(a->clock_offset_ns, b->has_clock_offset ? b->clock_offset_ns : 0);
    x->clock = "mpi";
    if (!a->has_clock_offset_error) return;
    int64_t e = b->has_clock_offset_error ? b->clock_offset_error_ns : 0;
    if (__builtin_add_overflow(a->clock_offset_error_ns, e, &x->offset_error))
        x->offset_error = INT64_MAX;
}

/* Picks the reference (c->ref) and sets each input's offset, error bound
 * and clock method. */
static void align_clocks(merge_t *c) {
    input_t *in = c->in;
    c->ref = pick_ref(in, c->n);
    for (size_t i = 0; i < c->n; i++) {
        in[i].offset = 0;
        in[i].offset_error = -1;
        in[i].clock = "none";
        if (c->ref < 0) continue;
        const input_t *r = &in[c->ref];
        if ((int)i == c->ref) {
            in[i].clock = "reference";
            in[i].offset_error = r->m.has_clock_offset ? 0 : -1;
        } else if (in[i].m.has_clock_offset) {
            align_mpi(&in[i], r);
        } else {
            align_anchor(&in[i], r);
        }
    }
}

/* Shifts *t by off.  Returns 0, or -1 when the result leaves int64. */
static int shift(int64_t *t, int64_t off) {
    return __builtin_add_overflow(*t, off, t) ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Name interning                                                            */
/* ------------------------------------------------------------------------ */

/* A set of strings (borrowed) with ids in order of first insertion. */
typedef struct strtab {
    const char **v;      /* id -> string */
    size_t n, cap;
    sps__htab_t index;   /* string -> id (util.h) */
} strtab_t;

/* The id of s in t, added if new.  Returns the id or -1 (no memory). */
static int64_t strtab_id(strtab_t *t, const char *s) {
    sps__hprobe_t p = sps__htab_probe(&t->index, sps__hash_bytes(s, strlen(s)));
    for (uint32_t id; sps__htab_next(&t->index, &p, &id);)
        if (!strcmp(t->v[id], s)) return id;
    if (t->n >= UINT32_MAX - 1 || sps__htab_make_room(&t->index, &p)) return -1;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        const char **v = realloc(t->v, cap * sizeof *v);
        if (!v) return -1;
        t->v = v;
        t->cap = cap;
    }
    sps__htab_put(&t->index, &p, (uint32_t)t->n);
    t->v[t->n] = s;
    return (int64_t)t->n++;
}

/* Frees t's arrays (not the strings). */
static void strtab_free(strtab_t *t) {
    free(t->v);
    sps__htab_free(&t->index);
}

/* ------------------------------------------------------------------------ */
/* Trace output: k-way merge over timeline readers                           */
/* ------------------------------------------------------------------------ */

/* Everything the trace merge builds besides the inputs. */
typedef struct tmerge {
    strtab_t names;
    sps__tl_proc_t *procs;
    sps__tl_thread_t *threads;
    size_t nthreads;
    char **labels;         /* owned strings: proc and thread names */
    size_t nlabels;
    sps__heap_t heap;      /* inputs by their next span (span_tie) */
    sps__tl_counter_t *counters; /* every input's, shifted and mapped */
    size_t ncounters;
    sps__tl_flow_t *flows;
    size_t nflows;
} tmerge_t;

/* Frees what m owns. */
static void tmerge_free(tmerge_t *m) {
    strtab_free(&m->names);
    free(m->procs);
    free(m->threads);
    for (size_t i = 0; i < m->nlabels; i++) free(m->labels[i]);
    free(m->labels);
    sps__heap_free(&m->heap);
    free(m->counters);
    free(m->flows);
}

/* A copy of the formatted string, kept in m->labels.  NULL: no memory. */
static const char *label(tmerge_t *m, const char *fmt, const char *a,
                         const char *b) {
    char *s = NULL;
    if (asprintf(&s, fmt, a, b) < 0) return NULL;
    m->labels[m->nlabels++] = s;
    return s;
}

/* qsort order of input pointers: by rank. */
static int by_rank(const void *a, const void *b) {
    const input_t *x = *(input_t *const *)a, *y = *(input_t *const *)b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Adds input x's threads to m->threads and fills x->thread_map.  Threads
 * of the input's first process keep their tids (unique within it); those
 * of any other process get fresh tids above the input's largest, and
 * their process's name in theirs.  Returns 0 or SPS_ENOMEM. */
static int tmerge_threads(tmerge_t *m, input_t *x, const sps__tl_header_t *h) {
    int64_t fresh = INT64_MIN;
    for (size_t j = 0; j < h->nthreads; j++)
        if (h->threads[j].tid > fresh) fresh = h->threads[j].tid;
    fresh = fresh < 0 ? 0 : fresh == INT64_MAX ? fresh : fresh + 1;
    int64_t first = h->nprocs ? h->procs[0].pid : 0;
    for (size_t j = 0; j < h->nthreads; j++) {
        const sps__tl_thread_t *t = &h->threads[j];
        sps__tl_thread_t *o = &m->threads[m->nthreads];
        o->pid = x->rank;
        o->tid = t->tid;
        o->name = t->name ? t->name : "";
        if (t->pid != first) {
            const char *pn = "";
            for (size_t p = 0; p < h->nprocs; p++)
                if (h->procs[p].pid == t->pid && h->procs[p].name)
                    pn = h->procs[p].name;
            o->tid = fresh < INT64_MAX ? fresh++ : fresh;
            if (!(o->name = label(m, "%s: %s", pn, o->name))) return SPS_ENOMEM;
        }
        x->thread_map[j] = (uint32_t)m->nthreads++;
    }
    return 0;
}

/* Adds input x (the k-th in rank order) to the merged header: its process
 * "rank N", its names and its threads.  Returns 0 or SPS_ENOMEM. */
static int tmerge_input(tmerge_t *m, input_t *x, size_t k) {
    const sps__tl_header_t *h = sps__tlr_header(x->r);
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)x->rank);
    const char *pname = label(m, "rank %s%s", num, "");
    x->name_map = malloc((h->nnames + 1) * sizeof *x->name_map);
    x->thread_map = malloc((h->nthreads + 1) * sizeof *x->thread_map);
    if (!pname || !x->name_map || !x->thread_map) return SPS_ENOMEM;
    m->procs[k] = (sps__tl_proc_t){x->rank, x->rank, pname};
    x->proc_out = (uint32_t)k;
    for (size_t j = 0; j < h->nnames; j++) {
        int64_t id = strtab_id(&m->names, h->names[j]);
        if (id < 0) return SPS_ENOMEM;
        x->name_map[j] = (uint32_t)id;
    }
    return tmerge_threads(m, x, h);
}

/* The order of the inputs' next spans beyond their start (the heap's key):
 * the longer (enclosing) first, then input order (the heap's last
 * resort: index i is input i).  ctx: the inputs. */
static int span_tie(void *ctx, uint32_t a, uint32_t b) {
    const input_t *in = ctx;
    int64_t ea = in[a].cur.end_ns, eb = in[b].cur.end_ns;
    return ea != eb ? (ea > eb ? -1 : 1) : 0;
}

/* Builds the merged header's names, processes (in rank order) and threads
 * from the inputs' headers.  Returns 0 or SPS_ENOMEM. */
static int tmerge_header(tmerge_t *m, input_t *in, size_t n) {
    size_t nthr = 0;
    for (size_t i = 0; i < n; i++) nthr += sps__tlr_header(in[i].r)->nthreads;
    input_t **order = malloc(n * sizeof *order);
    m->procs = calloc(n, sizeof *m->procs);
    m->threads = calloc(nthr + 1, sizeof *m->threads);
    m->labels = calloc(n + nthr + 1, sizeof *m->labels);
    sps__heap_init(&m->heap, span_tie, in);
    if (!order || !m->procs || !m->threads || !m->labels ||
        sps__heap_reserve(&m->heap, n)) {
        free(order);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) order[i] = &in[i];
    qsort(order, n, sizeof *order, by_rank);
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < n; k++) rc = tmerge_input(m, order[k], k);
    free(order);
    return rc;
}

/* Reads input x's next span into x->cur, shifted and mapped.  Returns 1,
 * 0 at its end, or a negative code after the error line. */
static int advance(merge_t *c, input_t *x) {
    sps__tl_span_t s;
    int rc = sps__tlr_next(x->r, &s);
    if (rc < 0)
        return fail(c, rc, "%s", rc == SPS_EFORMAT ? sps__err_msg()
                                                   : sps_strerror(rc));
    if (rc == 0) return 0;
    if (shift(&s.start_ns, x->offset) || shift(&s.end_ns, x->offset))
        return fail(c, SPS_EFORMAT, "%s: a time leaves the 64-bit range "
                    "after clock alignment", x->path);
    x->cur = (sps__tl_span_t){x->name_map[s.name], x->thread_map[s.thread],
                              s.start_ns, s.end_ns};
    return 1;
}

/* Writes the "spanscope" key describing the merge (without a leading
 * comma) to fp: the reference and, per input, its rank, source and clock
 * alignment. */
static void json_merge_key(FILE *fp, const merge_t *c) {
    const input_t *in = c->in;
    fputs("\"spanscope\":{\"merge\":{\"reference\":", fp);
    if (c->ref >= 0) {
        fputc('"', fp);
        sps__json_fputs(fp, in[c->ref].path, 0);
        fputc('"', fp);
    } else {
        fputs("null", fp);
    }
    fputs(",\"ranks\":[", fp);
    for (size_t i = 0; i < c->n; i++) {
        fprintf(fp, "%s{\"rank\":%lld,\"source\":\"", i ? "," : "",
                (long long)in[i].rank);
        sps__json_fputs(fp, in[i].path, 0);
        fprintf(fp, "\",\"clock_aligned\":%s,\"clock\":\"%s\","
                "\"offset_ns\":%lld",
                strcmp(in[i].clock, "none") ? "true" : "false",
                in[i].clock, (long long)in[i].offset);
        if (in[i].offset_error >= 0)
            fprintf(fp, ",\"offset_error_ns\":%lld",
                    (long long)in[i].offset_error);
        fputc('}', fp);
    }
    fputs("]}}", fp);
}

/* Replaces the closing '}' of the JSON document at path with the
 * "spanscope" key describing the merge.  Returns 0 or SPS_EIO. */
static int json_add_meta(const merge_t *c, const char *path) {
    FILE *fp = fopen(path, "r+b");
    if (!fp) return SPS_EIO;
    char tail[256];
    int rc = SPS_EIO;
    if (fseeko(fp, 0, SEEK_END) == 0) {
        off_t size = ftello(fp), from = size > 256 ? size - 256 : 0;
        size_t got = 0;
        if (size > 0 && fseeko(fp, from, SEEK_SET) == 0)
            got = fread(tail, 1, (size_t)(size - from), fp);
        size_t k = got;
        while (k > 0 && tail[k - 1] != '}') k--;
        if (k > 0 && fseeko(fp, from + (off_t)k - 1, SEEK_SET) == 0) {
            fputc(',', fp);
            json_merge_key(fp, c);
            fputs("}\n", fp);
            fflush(fp);
            off_t end = ftello(fp);
            rc = !ferror(fp) && end > 0 && ftruncate(fileno(fp), end) == 0 ? 0 : SPS_EIO;
        }
    }
    if (fclose(fp) != 0) rc = SPS_EIO;
    return rc;
}

/* Compresses the file src into dst with gzip.  Returns 0 or SPS_EIO. */
static int gzip_file(const char *src, const char *dst) {
    FILE *in = fopen(src, "rb");
    gzFile out = in ? gzopen(dst, "wb6") : NULL;
    char *buf = malloc(1 << 16);
    int rc = in && out && buf ? 0 : SPS_EIO;
    size_t got;
    while (rc == 0 && (got = fread(buf, 1, 1 << 16, in)) > 0)
        if (gzwrite(out, buf, (unsigned)got) != (int)got) rc = SPS_EIO;
    if (in && ferror(in)) rc = SPS_EIO;
    if (out && gzclose(out) != Z_OK) rc = SPS_EIO;
    if (in) fclose(in);
    free(buf);
    return rc;
}

/* Writes the merged spans of every input to w (k-way merge).  Returns 0
 * or a negative code after the error line. */
static int tmerge_spans(merge_t *c, tmerge_t *m, sps__tlw_t *w) {
    input_t *in = c->in;
    while (m->heap.n) {
        input_t *x = &in[sps__heap_top(&m->heap).idx];
        int rc = sps__tlw_span(w, &x->cur);
        if (rc) return fail(c, rc, "%s: %s", c->out, sps_strerror(rc));
        rc = advance(c, x);
        if (rc < 0) return rc;
        if (rc == 0) sps__heap_pop(&m->heap);
        else sps__heap_update_top(&m->heap, sps__heap_key_i64(x->cur.start_ns));
    }
    return 0;
}

/* Takes a trace input's clock anchor (if its header has one) into x->m,
 * where an .h5 input has its /metadata anchors and hostname. */
static void trace_anchor(input_t *x, const sps__tl_header_t *h) {
    if (h->wall_anchor_ns <= 0) return;
    x->m.has_anchor = 1;
    x->m.wall_anchor_ns = h->wall_anchor_ns;
    x->m.mono_anchor_ns = h->mono_anchor_ns;
    x->m.hostname = h->hostname ? h->hostname : ""; /* lives as long as x->r */
}

/* Opens input x's timeline reader (an .h5 has its /metadata read first:
 * the reader then holds the file open) and resolves its rank.  The
 * timeline reader refuses aggregate files.  Returns 0 or a code after
 * the error line. */
static int tmerge_open_one(merge_t *c, input_t *x) {
    hook_reading(c, x->path);
    /* a file the metadata reader cannot open is the timeline reader's to
     * explain: it validates the whole file */
    if (x->fmt == SPS__TL_H5 && sps__h5r_metadata(x->path, &x->m) == SPS_ENOMEM)
        return fail(c, SPS_ENOMEM, "%s", sps__err_msg());
    int rc = sps__tlr_open(&x->r, x->path, x->fmt);
    if (rc) return fail(c, rc, "%s", sps__err_msg());
    if (x->fmt != SPS__TL_H5) trace_anchor(x, sps__tlr_header(x->r));
    return resolve_rank(c, x, sps__tlr_header(x->r));
}

/* Opens every input's timeline reader, resolves ranks and clocks, and
 * builds the merged header.  Returns 0 or a code after the error line. */
static int tmerge_open(merge_t *c, tmerge_t *m) {
    for (size_t i = 0; i < c->n; i++) {
        int rc = tmerge_open_one(c, &c->in[i]);
        if (rc) return rc;
    }
    hook_read_done(c); /* the headers are read: the rest is bounded work */
    int rc = check_ranks(c);
    if (rc) return rc;
    align_clocks(c);
    if (tmerge_header(m, c->in, c->n)) return fail(c, SPS_ENOMEM, "out of memory");
    return 0;
}

/* The output id of flow id of the input of rank rank: (rank << 40) | id
 * when id < 2^40 and 0 <= rank < 2^23, else a 64-bit hash of (rank, id)
 * with the top bit set, so that the two kinds never meet and different
 * inputs never share an id (but for a hash collision, ~n^2 / 2^64). */
static uint64_t remap_flow_id(int64_t rank, uint64_t id) {
    if (id < ((uint64_t)1 << 40) && rank >= 0 && rank < ((int64_t)1 << 23))
        return ((uint64_t)rank << 40) | id;
    uint64_t x = id ^ ((uint64_t)rank * 0x9E3779B97F4A7C15ull);
    for (int i = 0; i < 2; i++) x = sps__hash_u64(x) + (uint64_t)rank;
    return x | ((uint64_t)1 << 63);
}

/* Appends input x's counter samples and flow points to m: names, process
 * and threads mapped, times shifted, flow ids remapped.  Returns 0 or a
 * code after the error line. */
static int tmerge_extras_one(merge_t *c, tmerge_t *m, const input_t *x) {
    const sps__tl_header_t *h = sps__tlr_header(x->r);
    for (size_t i = 0; i < h->ncounters; i++) {
        sps__tl_counter_t o = h->counters[i];
        if (o.name >= h->nnames || o.proc >= h->nprocs) continue;
        if (shift(&o.ts_ns, x->offset)) goto range;
        o.name = x->name_map[o.name];
        o.proc = x->proc_out;
        m->counters[m->ncounters++] = o;
    }
    for (size_t i = 0; i < h->nflows; i++) {
        sps__tl_flow_t o = h->flows[i];
        if (o.name >= h->nnames || o.thread >= h->nthreads) continue;
        if (shift(&o.ts_ns, x->offset)) goto range;
        o.name = x->name_map[o.name];
        o.thread = x->thread_map[o.thread];
        o.id = remap_flow_id(x->rank, o.id);
        m->flows[m->nflows++] = o;
    }
    return 0;
range:
    return fail(c, SPS_EFORMAT, "%s: a time leaves the 64-bit range after "
                "clock alignment", x->path);
}

/* Gathers every input's counter samples and flow points into m, in time
 * order.  Returns 0 or a code after the error line. */
static int tmerge_extras(merge_t *c, tmerge_t *m) {
    size_t nc = 0, nf = 0;
    for (size_t i = 0; i < c->n; i++) {
        nc += sps__tlr_header(c->in[i].r)->ncounters;
        nf += sps__tlr_header(c->in[i].r)->nflows;
    }
    m->counters = malloc((nc + 1) * sizeof *m->counters);
    m->flows = malloc((nf + 1) * sizeof *m->flows);
    if (!m->counters || !m->flows) return fail(c, SPS_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->n; i++) {
        int rc = tmerge_extras_one(c, m, &c->in[i]);
        if (rc) return rc;
    }
    if (sps__tl_sort_by_time(m->counters, m->ncounters, sizeof *m->counters,
                             offsetof(sps__tl_counter_t, ts_ns)) ||
        sps__tl_sort_by_time(m->flows, m->nflows, sizeof *m->flows,
                             offsetof(sps__tl_flow_t, ts_ns)))
        return fail(c, SPS_ENOMEM, "out of memory");
    return 0;
}

/* Primes each input's first span into the heap and fills the output
 * header h.  Returns 0 or a code after the error line. */
static int tmerge_prime(merge_t *c, tmerge_t *m, sps__tl_header_t *h) {
    input_t *in = c->in;
    int64_t base = INT64_MAX;
    uint64_t nspans = 0;
    int known = 1;
    for (size_t i = 0; i < c->n; i++) {
        const sps__tl_header_t *ih = sps__tlr_header(in[i].r);
        int64_t b = ih->base_ns;
        if (!shift(&b, in[i].offset) && b < base) base = b;
        if (ih->nspans == 0) known = 0;
        nspans += ih->nspans;
        int rc = advance(c, &in[i]);
        if (rc < 0) return rc;
        if (rc == 0) continue;
        if (in[i].cur.start_ns < base) base = in[i].cur.start_ns;
        sps__heap_push(&m->heap, sps__heap_key_i64(in[i].cur.start_ns), (uint32_t)i); /* reserved */
    }
    const char *slash = strrchr(c->out, '/');
    memset(h, 0, sizeof *h);
    h->nnames = m->names.n;
    h->names = m->names.v;
    h->nprocs = c->n;
    h->procs = m->procs;
    h->nthreads = m->nthreads;
    h->threads = m->threads;
    h->base_ns = base == INT64_MAX ? 0 : base;
    h->trace_name = slash ? slash + 1 : c->out;
    h->rank = -1;
    h->world_size = (int64_t)c->n;
    h->nspans = known ? nspans : 0;
    h->ncounters = m->ncounters;
    h->counters = m->counters;
    h->nflows = m->nflows;
    h->flows = m->flows;
    if (c->ref >= 0 && in[c->ref].m.has_anchor) {
        h->wall_anchor_ns = in[c->ref].m.wall_anchor_ns;
        h->mono_anchor_ns = in[c->ref].m.mono_anchor_ns;
        h->hostname = in[c->ref].m.hostname;
    }
    return 0;
}

/* Writes the trace output through the temporary names tmp and plain:
 * JSON to plain (.json.gz) or tmp, patched with the merge description and
 * gzipped into tmp for .json.gz; Perfetto to tmp directly; then renames
 * tmp to the output.  Nothing is left behind on failure.  Returns 0 or a
 * code after the error line. */
static int trace_write_to(merge_t *c, tmerge_t *m, const sps__tl_header_t *h,
                          const char *tmp, const char *plain) {
    int gz = c->fo == SPS__TL_JSON_GZ;
    const char *wpath = gz ? plain : tmp;
    sps__tl_format_t wf = gz ? SPS__TL_JSON : c->fo;
    sps__tlw_t *w;
    int rc = sps__tlw_open(&w, wpath, wf, h);
    if (rc) {
        unlink(wpath);
        return fail(c, rc, "%s: %s", c->out, sps_strerror(rc));
    }
    rc = tmerge_spans(c, m, w);
    if (rc) sps__tlw_abort(w);
    else rc = sps__tlw_close(w);
    if (rc == 0 && wf == SPS__TL_JSON) rc = json_add_meta(c, wpath);
    if (rc == 0 && gz) rc = gzip_file(plain, tmp);
    if (gz) unlink(plain);
    if (rc == 0 && rename(tmp, c->out) != 0) rc = SPS_EIO;
    if (rc) {
        unlink(tmp);
        return fail(c, rc, "%s: %s", c->out, sps_strerror(rc));
    }
    return 0;
}

/* Writes the trace output (see trace_write_to) under temporary names
 * made from the output's.  Returns 0 or a code after the error line. */
static int trace_write(merge_t *c, tmerge_t *m, const sps__tl_header_t *h) {
    char *tmp = sps__tmp_name(c->out, ""), *plain = sps__tmp_name(c->out, ".json");
    int rc = tmp && plain ? trace_write_to(c, m, h, tmp, plain)
                          : fail(c, SPS_ENOMEM, "out of memory");
    free(tmp);
    free(plain);
    return rc;
}

/* Merges the inputs into a trace file (.json, .json.gz, .pftrace).
 * Returns 0 or a code after the error line. */
static int merge_trace(merge_t *c) {
    tmerge_t m;
    memset(&m, 0, sizeof m);
    sps__tl_header_t h;
    memset(&h, 0, sizeof h);
    int rc = tmerge_open(c, &m);
    if (rc == 0) rc = tmerge_extras(c, &m);
    if (rc == 0) rc = tmerge_prime(c, &m, &h);
    if (rc == 0) rc = trace_write(c, &m, &h);
    for (size_t i = 0; i < c->n; i++) {
        sps__tlr_free(c->in[i].r);
        free(c->in[i].name_map);
        free(c->in[i].thread_map);
    }
    tmerge_free(&m);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* .h5 output                                                                */
/* ------------------------------------------------------------------------ */

/* One output row: which input row it copies. */
typedef struct orow {
    uint32_t input, row;
} orow_t;

/* What the .h5 merge builds. */
typedef struct hmerge {
    merge_t *c;
    input_t *in;           /* c->in */
    strtab_t names;
    orow_t *src;           /* by output row */
    sps__row_t *rows;      /* by output row */
    size_t nrows;
    uint64_t nevents;
    int64_t *col[5];       /* batch: deltas, durations, call, parent, thread */
    int64_t *st;           /* batch: raw first column (streamed inputs) */
} hmerge_t;

/* qsort_r order of output rows: by output region, then rank. */
static int orow_cmp(const void *a, const void *b, void *ctx) {
    const hmerge_t *h = ctx;
    const orow_t *x = a, *y = b;
    uint32_t rx = h->in[x->input].region_map[h->in[x->input].h5->rows[x->row].file_region];
    uint32_t ry = h->in[y->input].region_map[h->in[y->input].h5->rows[y->row].file_region];
    if (rx != ry) return rx < ry ? -1 : 1;
    return h->in[x->input].rank < h->in[y->input].rank ? -1
         : h->in[x->input].rank > h->in[y->input].rank;
}

/* Non-zero when every row of r stores its exclusive total (spanscope's
 * files do): a streamed merge copies them, since merging does not change
 * any call's children. */
static int has_excl(const sps__h5r_t *r) {
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].exclusive_total < 0) return 0;
    return 1;
}

/* Opens input x: the index only (events are streamed later) when the file
 * has call_ids and parent_ids, else whole with sps__h5r_open -- the
 * fallback for files without ids (scope-profiler's own), whose parent ids
 * must be invented from the reader's nesting by intervals.  Reads its
 * metadata and resolves its rank.  Returns 0 or a code after the error
 * line. */
static int hmerge_open_one(merge_t *c, input_t *x) {
    hook_reading(c, x->path);
    int rc = sps__h5r_open_index(&x->h5, x->path);
    if (rc) return fail(c, rc, "%s", sps__err_msg());
    if (!x->h5->aggregate &&
        (x->h5->h_call < 0 || x->h5->h_parent < 0 || !has_excl(x->h5))) {
        sps__h5r_free(x->h5);
        x->h5 = NULL;
        if ((rc = sps__h5r_open(&x->h5, x->path)))
            return fail(c, rc, "%s", sps__err_msg());
    }
    x->m = x->h5->meta; /* the input takes the reader's /metadata over */
    memset(&x->h5->meta, 0, sizeof x->h5->meta);
    if (x->h5->aggregate)
        return fail(c, SPS_EMODE, "%s: aggregate file (no per-call data): "
                    "cannot merge into a columnar .h5", x->path);
    return resolve_rank(c, x, NULL);
}

/* Opens every input, resolves ranks and clocks.  Returns 0 or a code
 * after the error line. */
static int hmerge_read(merge_t *c) {
    for (size_t i = 0; i < c->n; i++) {
        int rc = hmerge_open_one(c, &c->in[i]);
        if (rc) return rc;
    }
    hook_read_done(c);
    int rc = check_ranks(c);
    if (rc == 0) align_clocks(c);
    return rc;
}

/* Adds an event (start st after the clock shift, duration d) to a, by the
 * one fold's accumulator.  Returns 0 or -1 when the end leaves int64. */
static int stats_add(sps__acc_t *a, int64_t st, int64_t d) {
    int64_t en;
    if (d < 0) d = 0;
    if (__builtin_add_overflow(st, d, &en)) return -1;
    sps__acc_add(a, (uint64_t)st, (uint64_t)en, 0);
    return 0;
}

/* Non-zero when input x is streamed (opened by index, not read whole). */
static int streamed(const input_t *x) { return x->h5->start == NULL; }

/* Fills row o's statistics from the events of streamed input x's row ir,
 * shifted by x's offset, reading them in blocks; the exclusive total is the
 * one the input stores.  Returns 0, -1 (a time leaves int64) or -2 (read
 * error, message set). */
static int row_stats_stream(hmerge_t *h, const input_t *x,
                            const sps__row_t *ir, sps__row_t *o) {
    const sps__h5r_t *r = x->h5;
    uint64_t acc = 0;
    sps__acc_t a = {0};
    for (uint64_t k0 = 0; k0 < ir->count;) {
        size_t b = ir->count - k0 < H5_BATCH ? (size_t)(ir->count - k0) : H5_BATCH;
        if (sps__h5r_events_ids(r, ir->offset + k0, b, h->st, h->col[1], NULL,
                                NULL, NULL) < 0)
            return -2;
        for (size_t j = 0; j < b; j++) {
            acc = r->deltas ? acc + (uint64_t)h->st[j] : (uint64_t)h->st[j];
            int64_t st = (int64_t)acc;
            if (shift(&st, x->offset) || stats_add(&a, st, h->col[1][j]))
                return -1;
        }
        k0 += b;
    }
    sps__summary_of(&a, &o->s);
    return 0;
}

/* Fills row o's statistics from the events of input x's row ir, shifted
 * by x's offset.  Returns 0 or -1 (a time leaves int64). */
static int row_stats(const input_t *x, const sps__row_t *ir, sps__row_t *o) {
    const sps__h5r_t *r = x->h5;
    int64_t self = 0;
    sps__acc_t a = {0};
    for (uint64_t k = 0; k < ir->count; k++) {
        uint64_t e = ir->offset + k;
        int64_t st = r->start[e];
        if (shift(&st, x->offset) || stats_add(&a, st, r->dur[e])) return -1;
        if (__builtin_add_overflow(self, r->self[e], &self)) self = INT64_MAX;
    }
    sps__summary_of(&a, &o->s);
    o->exclusive_total = self;
    return 0;
}

/* Builds the merged region table (every input's region_map) and lists
 * the output rows (h->src) in their order.  Returns 0 or SPS_ENOMEM
 * after the error line. */
static int hmerge_regions(hmerge_t *h) {
    input_t *in = h->in;
    size_t nrows = 0;
    for (size_t i = 0; i < h->c->n; i++) {
        const sps__h5r_t *r = in[i].h5;
        nrows += r->nrows;
        in[i].region_map = malloc((r->nnames + 1) * sizeof *in[i].region_map);
        if (!in[i].region_map) return fail(h->c, SPS_ENOMEM, "out of memory");
        for (size_t j = 0; j < r->nnames; j++) {
            int64_t id = strtab_id(&h->names, r->names[j]);
            if (id < 0) return fail(h->c, SPS_ENOMEM, "out of memory");
            in[i].region_map[j] = (uint32_t)id;
        }
    }
    h->src = malloc((nrows + 1) * sizeof *h->src);
    h->rows = calloc(nrows + 1, sizeof *h->rows);
    if (!h->src || !h->rows) return fail(h->c, SPS_ENOMEM, "out of memory");
    for (size_t i = 0; i < h->c->n; i++)
        for (size_t j = 0; j < in[i].h5->nrows; j++)
            h->src[h->nrows++] = (orow_t){(uint32_t)i, (uint32_t)j};
    qsort_r(h->src, h->nrows, sizeof *h->src, orow_cmp, h);
    return 0;
}

/* Builds the output rows with their offsets and statistics.  Returns 0 or
 * a code after the error line. */
static int hmerge_rows(hmerge_t *h) {
    int rc = hmerge_regions(h);
    for (size_t k = 0; rc == 0 && k < h->nrows; k++) {
        input_t *x = &h->in[h->src[k].input];
        const sps__row_t *ir = &x->h5->rows[h->src[k].row];
        sps__row_t *o = &h->rows[k];
        o->file_region = x->region_map[ir->file_region];
        o->rank = (uint32_t)x->rank;
        o->offset = h->nevents;
        o->count = ir->count;
        if (ir->count > (uint64_t)INT64_MAX - h->nevents)
            return fail(h->c, SPS_EFORMAT, "too many events");
        h->nevents += ir->count;
        rc = streamed(x) ? row_stats_stream(h, x, ir, o) : row_stats(x, ir, o);
        if (streamed(x)) o->exclusive_total = ir->exclusive_total;
        if (rc == -2)
            return fail(h->c, SPS_EFORMAT, "%s: %s", x->path, sps__err_msg());
        if (rc < 0)
            return fail(h->c, SPS_EFORMAT, "%s: a time leaves the 64-bit "
                        "range after clock alignment", x->path);
    }
    return rc;
}

/* Allocates the block buffers.  Returns 0 or SPS_ENOMEM after the error
 * line. */
static int hmerge_alloc(hmerge_t *h) {
    for (int k = 0; k < 5; k++)
        if (!(h->col[k] = malloc(H5_BATCH * sizeof(int64_t))))
            return fail(h->c, SPS_ENOMEM, "out of memory");
    if (!(h->st = malloc(H5_BATCH * sizeof(int64_t))))
        return fail(h->c, SPS_ENOMEM, "out of memory");
    return 0;
}

/* Fills the output layout: region table, rows, and /metadata from the
 * lowest rank (anchors from the reference input, whose clock the output
 * uses; times spanning all inputs; counters summed). */
static void hmerge_layout(hmerge_t *h, sps__layout_t *lay) {
    const merge_t *c = h->c;
    const input_t *in = h->in, *lo = &in[0];
    for (size_t i = 0; i < c->n; i++)
        if (in[i].rank < lo->rank) lo = &in[i];
    memset(lay, 0, sizeof *lay);
    lay->nnames = h->names.n;
    lay->names = h->names.v;
    lay->nrows = h->nrows;
    lay->rows = h->rows;
    lay->nevents = h->nevents;
    lay->with_tree = 1;
    lay->start_time_ns = INT64_MAX;
    lay->finalize_time_ns = INT64_MIN;
    for (size_t i = 0; i < c->n; i++) {
        const input_t *x = &in[i];
        int64_t s = x->m.start_time_ns, f = x->m.finalize_time_ns;
        if (!shift(&s, x->offset) && s < lay->start_time_ns) lay->start_time_ns = s;
        if (!shift(&f, x->offset) && f > lay->finalize_time_ns) lay->finalize_time_ns = f;
        lay->dropped += (uint64_t)x->m.dropped_events;
        lay->misuse += (uint64_t)x->m.misuse_count;
        lay->open_calls += (uint64_t)x->m.open_calls;
    }
    if (lay->start_time_ns == INT64_MAX) lay->start_time_ns = 0;
    if (lay->finalize_time_ns == INT64_MIN) lay->finalize_time_ns = 0;
    if (c->ref >= 0 && in[c->ref].m.has_anchor) {
        lay->wall_anchor_ns = in[c->ref].m.wall_anchor_ns;
        lay->mono_anchor_ns = in[c->ref].m.mono_anchor_ns;
    }
    lay->label = lo->m.label;
    lay->rank = (int)lo->rank;
    lay->size = (int)c->n;
    lay->clock_source = lo->m.clock_source[0] ? lo->m.clock_source : NULL;
}

/* Writes the events of output row k in batches: start deltas recomputed
 * after the shift, ids kept (missing ids derived: call id = event index,
 * parent id from the reader's nesting, thread 0).  Returns 0 or a code. */
static int hmerge_events(hmerge_t *h, sps__h5w_t *w, size_t k) {
    const input_t *x = &h->in[h->src[k].input];
    const sps__h5r_t *r = x->h5;
    const sps__row_t *ir = &r->rows[h->src[k].row];
    uint64_t prev = 0;
    for (uint64_t done = 0; done < ir->count;) {
        size_t b = ir->count - done < H5_BATCH ? (size_t)(ir->count - done) : H5_BATCH;
        for (size_t j = 0; j < b; j++) {
            uint64_t e = ir->offset + done + j;
            uint64_t st = (uint64_t)r->start[e] + (uint64_t)x->offset;
            int32_t p = r->parent[e];
            h->col[0][j] = (int64_t)(st - prev);
            prev = st;
            h->col[1][j] = r->dur[e];
            h->col[2][j] = r->call_ids ? r->call_ids[e] : (int64_t)e;
            h->col[3][j] = r->parent_ids && r->call_ids ? r->parent_ids[e]
                         : p < 0 ? -1
                         : r->call_ids ? r->call_ids[p] : (int64_t)p;
            h->col[4][j] = r->thread_ids ? r->thread_ids[e] : 0;
        }
        int rc = sps__h5w_rows(w, h->rows[k].offset + done, b, h->col[0],
                               h->col[1], h->col[2], h->col[3], h->col[4]);
        if (rc) return rc;
        done += b;
    }
    return 0;
}

/* Writes the events of output row k of a streamed input, read in blocks:
 * start deltas recomputed after the shift, durations and call/parent ids
 * as stored, thread ids as stored or 0 when the file has none (as the
 * whole-file path does).  Returns 0 or a code (a read error after the
 * error line naming the input). */
static int hmerge_events_stream(hmerge_t *h, sps__h5w_t *w, size_t k) {
    const input_t *x = &h->in[h->src[k].input];
    const sps__h5r_t *r = x->h5;
    const sps__row_t *ir = &r->rows[h->src[k].row];
    uint64_t prev = 0, acc = 0;
    for (uint64_t done = 0; done < ir->count;) {
        size_t b = ir->count - done < H5_BATCH ? (size_t)(ir->count - done) : H5_BATCH;
        int rc = sps__h5r_events_ids(r, ir->offset + done, b, h->st, h->col[1],
                                     h->col[4], h->col[2], h->col[3]);
        if (rc) return fail(h->c, rc, "%s: %s", x->path, sps__err_msg());
        for (size_t j = 0; j < b; j++) {
            if (r->deltas) acc += (uint64_t)h->st[j];
            else acc = (uint64_t)h->st[j];
            uint64_t st = acc + (uint64_t)x->offset;
            h->col[0][j] = (int64_t)(st - prev);
            prev = st;
        }
        if (r->h_tid < 0) memset(h->col[4], 0, b * sizeof *h->col[4]);
        rc = sps__h5w_rows(w, h->rows[k].offset + done, b, h->col[0],
                           h->col[1], h->col[2], h->col[3], h->col[4]);
        if (rc) return rc;
        done += b;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* .h5 output: counter samples                                               */
/* ------------------------------------------------------------------------ */

/* The merged /counters: every input's samples with its rank and its clock
 * shift, names merged by string (the strings stay in src). */
typedef struct mcounters {
    sps__h5r_counters_t *src; /* one per input */
    strtab_t names;
    int64_t *series, *ranks, *times;
    double *values;
    size_t n;
    uint64_t dropped;
} mcounters_t;

/* Appends input x's samples (in) to k, which has room.  Returns 0,
 * SPS_ENOMEM or SPS_EFORMAT (a time overflows once shifted). */
static int mcounters_add(mcounters_t *k, const input_t *x, const sps__h5r_counters_t *in) {
    for (size_t i = 0; i < in->n; i++) {
        int64_t id = strtab_id(&k->names, in->names[in->series[i]]);
        int64_t t = in->times[i];
        if (id < 0) return SPS_ENOMEM;
        if (shift(&t, x->offset)) return SPS_EFORMAT;
        k->series[k->n] = id;
        k->ranks[k->n] = x->rank;
        k->times[k->n] = t;
        k->values[k->n++] = in->values[i];
    }
    k->dropped += in->dropped;
    return 0;
}

/* Reads every input's /counters into k.  Returns 0 or a code after the
 * error line. */
static int mcounters_read(merge_t *c, mcounters_t *k) {
    size_t total = 0;
    if (!(k->src = calloc(c->n + 1, sizeof *k->src))) return fail(c, SPS_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->n; i++) {
        int rc = sps__h5r_counters(c->in[i].path, &k->src[i]);
        if (rc) return fail(c, rc, "%s", sps__err_msg());
        total += k->src[i].n;
    }
    k->series = malloc((total + 1) * sizeof *k->series);
    k->ranks = malloc((total + 1) * sizeof *k->ranks);
    k->times = malloc((total + 1) * sizeof *k->times);
    k->values = malloc((total + 1) * sizeof *k->values);
    if (!k->series || !k->ranks || !k->times || !k->values)
        return fail(c, SPS_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->n; i++) {
        int rc = mcounters_add(k, &c->in[i], &k->src[i]);
        if (rc == SPS_ENOMEM) return fail(c, rc, "out of memory");
        if (rc) return fail(c, rc, "%s: a counter time leaves the 64-bit range once shifted",
                            c->in[i].path);
    }
    return 0;
}

/* Adds the inputs' counter samples (if any) to the closed output tmp.
 * Returns 0 or a code after the error line. */
static int hmerge_counters(merge_t *c, const char *tmp) {
    mcounters_t k;
    memset(&k, 0, sizeof k);
    int rc = mcounters_read(c, &k);
    if (rc == 0 && (k.n || k.dropped)) {
        rc = sps__h5_add_counters(tmp, k.names.n, k.names.v, k.n, k.series, k.ranks,
                                  k.times, k.values, k.dropped);
        if (rc) rc = fail(c, rc, "%s: cannot add /counters: %s", c->out, sps_strerror(rc));
    }
    for (size_t i = 0; k.src && i < c->n; i++) sps__h5r_counters_free(&k.src[i]);
    free(k.src);
    strtab_free(&k.names);
    free(k.series), free(k.ranks), free(k.times), free(k.values);
    return rc;
}

/* Writes the merged .h5 to the temporary name tmp and renames it to the
 * output; nothing is left behind on failure.  Returns 0 or a code after
 * the error line. */
static int hmerge_write_to(hmerge_t *h, const char *tmp) {
    const char *out = h->c->out;
    sps__layout_t lay;
    hmerge_layout(h, &lay);
    sps__h5w_t *w;
    int rc = sps__h5w_open(&w, tmp, &lay);
    if (rc) {
        unlink(tmp);
        return fail(h->c, rc, "%s: %s", out, sps_strerror(rc));
    }
    for (size_t k = 0; rc == 0 && k < h->nrows; k++)
        rc = streamed(&h->in[h->src[k].input]) ? hmerge_events_stream(h, w, k)
                                               : hmerge_events(h, w, k);
    if (rc) sps__h5w_abort(w);
    else rc = sps__h5w_close(w);
    if (rc == 0 && (rc = hmerge_counters(h->c, tmp))) {
        unlink(tmp);
        return rc; /* the error line is written */
    }
    if (rc == 0 && rename(tmp, out) != 0) rc = SPS_EIO;
    if (rc) {
        unlink(tmp);
        return fail(h->c, rc, "%s: %s", out, sps_strerror(rc));
    }
    return 0;
}

/* Writes the merged .h5 through a temporary name made from the
 * output's.  Returns 0 or a code after the error line. */
static int hmerge_write(hmerge_t *h) {
    char *tmp = sps__tmp_name(h->c->out, "");
    int rc = tmp ? hmerge_write_to(h, tmp) : fail(h->c, SPS_ENOMEM, "out of memory");
    free(tmp);
    return rc;
}

/* Merges .h5 inputs into an .h5 file.  Returns 0 or a code after the
 * error line. */
static int merge_h5(merge_t *c) {
    hmerge_t h;
    memset(&h, 0, sizeof h);
    h.c = c;
    h.in = c->in;
    int rc = hmerge_read(c);
    if (rc == 0) rc = hmerge_alloc(&h);
    if (rc == 0) rc = hmerge_rows(&h);
    if (rc == 0) rc = hmerge_write(&h);
    for (size_t i = 0; i < c->n; i++) {
        sps__h5r_free(c->in[i].h5);
        free(c->in[i].region_map);
    }
    strtab_free(&h.names);
    free(h.src);
    free(h.rows);
    for (int k = 0; k < 5; k++) free(h.col[k]);
    free(h.st);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

/* Checks c's output path and formats and the input paths ins (see
 * sps__merge_check).  Returns 0 or SPS_EINVAL after the error line. */
static int check_args(merge_t *c, const char *const *ins) {
    if (!c->out || !*c->out) return fail(c, SPS_EINVAL, "no output path");
    if (!ins || c->n == 0) return fail(c, SPS_EINVAL, "no input files");
    if (c->n > INT32_MAX) return fail(c, SPS_EINVAL, "too many input files");
    c->fo = sps__tl_format_of(c->out);
    if (c->fo == SPS__TL_UNKNOWN)
        return fail(c, SPS_EINVAL, "%s: unknown output format (.h5, .json, "
                    ".json.gz, .pftrace)", c->out);
    for (size_t i = 0; i < c->n; i++) {
        if (!ins[i] || !*ins[i])
            return fail(c, SPS_EINVAL, "input %zu has no path", i);
        sps__tl_format_t f = sps__tl_format_of(ins[i]);
        if (f == SPS__TL_UNKNOWN)
            return fail(c, SPS_EINVAL, "%s: unknown input format (.h5, .json, "
                        ".json.gz, .pftrace)", ins[i]);
        if (c->fo == SPS__TL_H5 && f != SPS__TL_H5)
            return fail(c, SPS_EINVAL, "%s: writing .h5 from trace inputs is "
                        "not supported (merge to .json, .json.gz or "
                        ".pftrace)", ins[i]);
    }
    return 0;
}

/* Checks sps_merge's arguments without reading a file (merge.h). */
int sps__merge_check(const char *out_path, const char *const *in_paths,
                     size_t n, void *err_file) {
    merge_t c = {out_path, SPS__TL_UNKNOWN, NULL, n, -1, err_file, 0, NULL};
    return check_args(&c, in_paths);
}

/* Merges the inputs of c (checked) with HDF5's error printing off for
 * this thread.  Returns 0 or a code after the error line. */
static int merge_run(merge_t *c) {
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    int rc = c->fo == SPS__TL_H5 ? merge_h5(c) : merge_trace(c);
    return sps__h5_quiet_end(&q, rc);
}

/* sps_merge with hooks around the reading of the inputs (merge.h). */
int sps__merge(const char *out_path, const char *const *in_paths, size_t n,
               void *err_file, const sps__merge_hooks_t *hooks) {
    merge_t c = {out_path, SPS__TL_UNKNOWN, NULL, n, -1, err_file, 0, hooks};
    int rc = check_args(&c, in_paths);
    if (rc) return rc;
    if (!(c.in = calloc(n, sizeof *c.in)))
        return fail(&c, SPS_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        c.in[i].path = in_paths[i];
        c.in[i].pos = (int)i;
        c.in[i].fmt = sps__tl_format_of(in_paths[i]);
        c.in[i].m.hostname = c.in[i].m.label = c.in[i].m.clock_source = "";
    }
    rc = merge_run(&c);
    if (rc && !c.failed) fail(&c, rc, "%s: %s", out_path, sps_strerror(rc));
    for (size_t i = 0; i < n; i++)
        if (c.in[i].fmt == SPS__TL_H5) sps__h5r_meta_free(&c.in[i].m);
    free(c.in);
    return rc;
}

/* Merges per-rank recordings into one file (spanscope.h). */
int sps_merge(const char *out_path, const char *const *in_paths, size_t n,
              void *err_file) {
    return sps__merge(out_path, in_paths, n, err_file, NULL);
}
