/*
 * chrome_json.c -- the Chrome trace event JSON writer (.json, .json.gz).
 *
 * Output, streamed (memory O(threads + names), never O(spans)):
 *
 *   {"traceEvents":[
 *   {"name":"process_name","ph":"M","ts":0,"pid":1,"tid":0,"args":{"name":"rank 0"}},
 *   ...metadata (process_name, process_sort_index, process_labels,
 *      thread_name, thread_sort_index)...
 *   {"ph":"C","name":"mem","pid":1,"ts":12.000,"args":{"mem":1.5}},
 *   ...one C event per counter sample (finite values only)...
 *   {"ph":"s","id":7,"pid":1,"tid":7,"ts":12.5,"cat":"flow","name":"ac2g"},
 *   ...one s/t/f event per flow point ("bp":"e" when enclosing)...
 *   {"ph":"X","cat":"user_annotation","name":"solve","pid":1,"tid":7,"ts":12345.678,"dur":0.125,
 *    "args":{"External id":1,"Record function id":0,"Ev Idx":0,...the caller's args...}},
 *   ...one X event per span, always: the user_annotation event, torch's
 *      (and tensorplay's) category for a record_function...
 *   {"ph":"i","s":"t","cat":"python_function","name":"leaf","pid":1,"tid":7,"ts":..,
 *    "args":{"stack":["file:line (func)",...],"region":"solve","weight":1}}
 *   ...one instant per stack sample (sps__cjw_samples, export.h), as
 *      tensorplay writes its samples...
 *   ...with /device (sps__cjw_device, export.h): every span's args begin
 *      with "External id"; at close the GPU processes' and streams' "M"
 *      events, then per activity its X event (cat cuda_runtime /
 *      cuda_driver on the launching thread, kernel / gpu_memcpy /
 *      gpu_memset on its GPU's stream, args "External id" of the launching
 *      span, "correlation", ...) and its ac2g flow point (s at the API
 *      call, f with bp "e" at what it launched), as kineto writes them...
 *   {"ph":"i","s":"g","name":"Record Window End",...}
 *   (after the spans' extent, when there is a span)
 *   (kineto's args and the window end only when the header asks for them,
 *   h->kineto >= 1: scope-profiler's export writes each span with its own
 *   args only)
 *
 * The TensorBoard layout (h->kineto == SPS__TL_TORCH_TB: `spanscope
 * convert --torch-tb`, the Python face's tensorboard_trace_handler(...,
 * torch_tb=True)) adds, for TensorBoard's profiler plugin (deprecated):
 *   {"ph":"X","cat":"cpu_op","name":"solve",...the same...,"spanscope_view":1},
 *      after each span but ProfilerStep#N (a copy the plugin needs, every
 *      other viewer draws twice),
 *   {"ph":"X","cat":"Trace","name":"PyTorch Profiler (0)","pid":1,"tid":0,"ts":..,"dur":..,
 *    "args":{"Op count":0}},
 *   {"ph":"i","s":"g","name":"Iteration Start: PyTorch Profiler",...}
 *      before the window end.
 *   ],
 *   "schemaVersion":1,"displayTimeUnit":"ms","baseTimeNanoseconds":N,
 *   "traceName":"...","distributedInfo":{"rank": R, "world_size": W[, "backend": "B"]},
 *   "spanscopeClock":{"wall_anchor_ns":W,"mono_anchor_ns":M,"hostname":"h"}
 *   (only when the header has an anchor),"deviceProperties":[]}
 *
 * The layout follows torch's (kineto's) traces so that the tools torch
 * users have read ours (docs/profiler.md, "TensorBoard and HTA"), one
 * slice per span: a viewer draws each span once.  Only TensorBoard's
 * profiler plugin (torch-tb-profiler, deprecated) needs more: it drops
 * every user_annotation event but ProfilerStep#N, so in its layout each
 * span also comes as a "cpu_op" event -- what its Operator view, its CPU
 * Exec share and its step time without ProfilerStep spans are computed
 * from -- marked "spanscope_view":1 so that our reader keeps one span,
 * not two; the "Trace" span "PyTorch Profiler (0)" gives the plugin the
 * profiled window.  "Record Window End" ends the window as kineto's
 * (and tensorplay's) traces do.  HTA finds a
 * file's rank with the pattern "rank":\s+(\d+), hence the space in
 * distributedInfo (nowhere else: every other "rank" key is written
 * without one, so HTA cannot match an event's args first).
 *
 * ts and dur are microseconds printed as fixed point with exactly three
 * decimals from integer ns, so ns precision survives a round trip exactly.
 * Strings are escaped so that the output is valid JSON whatever the bytes
 * (control characters as \uXXXX, invalid UTF-8 as U+FFFD).  With gzip the
 * same text goes through zlib's gzwrite.  Every write is checked: a full
 * disk gives SPS_EIO, and the operating system's cause (ENOSPC, EIO,
 * EFBIG, ...) is noted where the call failed (sps__err_os_note), so that
 * the caller's message and sps_last_errno say it.  Plain output goes
 * through sps__out_open's stream (write(2), errno noted there); zlib
 * writes with write(2) itself, and its errors are read with gzerror at
 * once (Z_ERRNO: errno is the cause).
 */
#include "formats/export.h"
#include "formats/h5_read.h"
#include "formats/timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define CJW_BUF (1u << 16)   /* output buffer; flushed when nearly full */
#define CJW_EVENT_MAX 320    /* bytes of one span event, name and args excluded */

struct sps__cjw {
    FILE *f;              /* plain output, or NULL */
    gzFile gz;            /* gzip output, or NULL */
    char *path;           /* owned copy, for abort's unlink */
    size_t nnames, nthreads;
    char **ename;         /* owned: names JSON-escaped, with quotes */
    size_t *elen;         /* their lengths */
    int64_t *pid, *tid;   /* per thread */
    int64_t base_ns;
    int64_t last_start;   /* start of the previous span (order check) */
    int64_t first_ns, end_ns; /* the spans' extent: first start, last end */
    int64_t trace_pid;    /* the first process's pid: the Trace span's */
    uint64_t nspans;
    uint64_t nx;          /* X events written: their "External id" - 1 */
    int kineto;           /* the header's: torch's tools' events (top) */
    int err;              /* first write error, sticky */
    int first;            /* no event written yet (no comma before the next) */
    char *tail;           /* owned: the top-level keys written at close */
    sps__tl_device_t **dev; /* owned array of borrowed: device activity (export.h) */
    size_t ndev;
    size_t len;           /* bytes in buf */
    char buf[CJW_BUF];
};

/* ------------------------------------------------------------------------ */
/* Small growable strings (used at open only)                                */
/* ------------------------------------------------------------------------ */

typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} sbuf_t;

/* Appends n bytes to b, growing it; sets b->oom on failure. */
static void sb_put(sbuf_t *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) { b->oom = 1; return; }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

/* Appends a NUL-terminated string. */
static void sb_puts(sbuf_t *b, const char *s) { sb_put(b, s, strlen(s)); }

/* Appends a decimal int64. */
static void sb_i64(sbuf_t *b, int64_t v) {
    char t[24];
    int n = snprintf(t, sizeof t, "%lld", (long long)v);
    sb_put(b, t, (size_t)n);
}


/* sps__json_escape's sink: appends to the sbuf_t at ctx. */
static void sb_sink(void *ctx, const char *p, size_t n) { sb_put(ctx, p, n); }

/* Appends s (NUL-terminated, any bytes; NULL as "") as a quoted JSON
 * string, escaped by the library's one rule (util.h). */
static void sb_json_str(sbuf_t *b, const char *str) {
    const char *s = str ? str : "";
    sb_put(b, "\"", 1);
    sps__json_escape(s, strlen(s), 0, sb_sink, b);
    sb_put(b, "\"", 1);
}

/* ------------------------------------------------------------------------ */
/* Output                                                                    */
/* ------------------------------------------------------------------------ */

/* After a failed zlib call on gz: notes the cause when zlib says it was
 * the system's (Z_ERRNO: errno, read before anything else can change
 * it); a failure without one (memory, a zlib error) is noted as EIO only
 * when errno says nothing.  Returns SPS_EIO. */
static int gz_fail(gzFile gz) {
    int e = errno, zerr = Z_OK;
    if (gz) gzerror(gz, &zerr);
    sps__err_os_note(zerr == Z_ERRNO && e > 0 ? e : zerr == Z_MEM_ERROR ? ENOMEM : e);
    return SPS_EIO;
}

/* Writes n bytes straight to the file (plain or gzip); records SPS_EIO in
 * w->err on failure (the cause noted: sps__out_open's stream notes a
 * failed write(2) itself, gz_fail zlib's).  Returns w->err. */
static int raw_write(sps__cjw_t *w, const char *p, size_t n) {
    if (w->err || n == 0) return w->err;
    if (w->gz) {
        while (n > 0) {
            unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
            int k = gzwrite(w->gz, p, chunk);
            if (k <= 0) return w->err = gz_fail(w->gz);
            p += k;
            n -= (size_t)k;
        }
    } else if (fwrite(p, 1, n, w->f) != n) {
        w->err = SPS_EIO;
    }
    return w->err;
}

/* Empties w's buffer into the file.  Returns 0 or SPS_EIO. */
static int flush_buf(sps__cjw_t *w) {
    int rc = raw_write(w, w->buf, w->len);
    w->len = 0;
    return rc;
}

/* Appends n bytes to w's buffer, flushing as needed.  Returns 0 or SPS_EIO. */
static int put(sps__cjw_t *w, const char *p, size_t n) {
    if (w->len + n > CJW_BUF) {
        if (flush_buf(w)) return w->err;
        if (n > CJW_BUF) return raw_write(w, p, n);
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
    return w->err;
}

/* Writes v in decimal at p; returns the number of bytes (at most 20). */
static size_t fmt_i64(char *p, int64_t v) {
    char t[24];
    size_t n = 0, k = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { t[n++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) p[k++] = '-';
    while (n) p[k++] = t[--n];
    return k;
}

/* Writes ns as microseconds with exactly three decimals ("12345.678",
 * "-0.005"), by integer arithmetic.  Returns the bytes written (<= 24). */
static size_t fmt_us(char *p, int64_t ns) {
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t ip = u / 1000, fp = u % 1000;
    size_t k = 0;
    char t[24];
    size_t n = 0;
    if (ns < 0) p[k++] = '-';
    do { t[n++] = (char)('0' + ip % 10); ip /= 10; } while (ip);
    while (n) p[k++] = t[--n];
    p[k++] = '.';
    p[k++] = (char)('0' + fp / 100);
    p[k++] = (char)('0' + fp / 10 % 10);
    p[k++] = (char)('0' + fp % 10);
    return k;
}

/* ------------------------------------------------------------------------ */
/* Open                                                                      */
/* ------------------------------------------------------------------------ */

/* Compares two int64 for qsort. */
static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Compares two (pid, tid) pairs for qsort. */
static int cmp_pair(const void *a, const void *b) {
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Checks that h is consistent: arrays present, names/proc names present,
 * pids unique, every thread's pid a process, (pid, tid) unique, counts
 * within uint32 indices.  Returns 0, SPS_EINVAL or SPS_ENOMEM. */
static int check_header(const sps__tl_header_t *h) {
    if (!h) return SPS_EINVAL;
    if ((h->nnames && !h->names) || (h->nprocs && !h->procs) ||
        (h->nthreads && !h->threads))
        return SPS_EINVAL;
    if (h->nnames > UINT32_MAX || h->nthreads > UINT32_MAX) return SPS_EINVAL;
    for (size_t i = 0; i < h->nnames; i++)
        if (!h->names[i]) return SPS_EINVAL;
    int64_t *pids = malloc((h->nprocs + 1) * sizeof *pids);
    int64_t *pairs = malloc((2 * h->nthreads + 1) * sizeof *pairs);
    int rc = 0;
    if (!pids || !pairs) { rc = SPS_ENOMEM; goto out; }
    for (size_t i = 0; i < h->nprocs; i++) pids[i] = h->procs[i].pid;
    qsort(pids, h->nprocs, sizeof *pids, cmp_i64);
    for (size_t i = 1; i < h->nprocs; i++)
        if (pids[i] == pids[i - 1]) { rc = SPS_EINVAL; goto out; }
    for (size_t i = 0; i < h->nthreads; i++) {
        if (!bsearch(&h->threads[i].pid, pids, h->nprocs, sizeof *pids,
                     cmp_i64)) { rc = SPS_EINVAL; goto out; }
        pairs[2 * i] = h->threads[i].pid;
        pairs[2 * i + 1] = h->threads[i].tid;
    }
    qsort(pairs, h->nthreads, 2 * sizeof *pairs, cmp_pair);
    for (size_t i = 1; i < h->nthreads; i++)
        if (!cmp_pair(pairs + 2 * i, pairs + 2 * (i - 1))) {
            rc = SPS_EINVAL;
            goto out;
        }
out:
    free(pids);
    free(pairs);
    return rc;
}

/* Appends one metadata event {"name":what,"ph":"M","ts":0,"pid":..,"tid":..,
 * "args":{key:value}} where value is already JSON (a number or a quoted
 * string) in val. */
static void sb_meta(sbuf_t *b, int *first, const char *what, int64_t pid,
                    int64_t tid,
                    const char *key, const char *val) {
    if (!*first) sb_puts(b, ",\n");
    *first = 0;
    sb_puts(b, "{\"name\":\"");
    sb_puts(b, what);
    sb_puts(b, "\",\"ph\":\"M\",\"ts\":0,\"pid\":");
    sb_i64(b, pid);
    sb_puts(b, ",\"tid\":");
    sb_i64(b, tid);
    sb_puts(b, ",\"args\":{\"");
    sb_puts(b, key);
    sb_puts(b, "\":");
    sb_puts(b, val);
    sb_puts(b, "}}");
}

/* Builds the prologue (opening brace and all metadata events) into pro and
 * the epilogue (end of the array and the top-level keys) into epi.  Events
 * are separated by ",\n"; *first is left 1 if no event was written. */
static void build_text(const sps__tl_header_t *h, sbuf_t *pro, sbuf_t *epi,
                       int *first) {
    sbuf_t v = {0};
    char num[32];
    sb_puts(pro, "{\"traceEvents\":[\n");
    for (size_t i = 0; i < h->nprocs; i++) {
        const sps__tl_proc_t *p = &h->procs[i];
        v.n = 0;
        sb_json_str(&v, p->name ? p->name : "");
        sb_meta(pro, first, "process_name", p->pid, 0, "name",
                v.oom ? "\"\"" : v.p);
        snprintf(num, sizeof num, "%zu", i);
        sb_meta(pro, first, "process_sort_index", p->pid, 0, "sort_index",
                num);
        if (p->rank >= 0) {
            snprintf(num, sizeof num, "\"rank %lld\"", (long long)p->rank);
            sb_meta(pro, first, "process_labels", p->pid, 0, "labels", num);
        }
    }
    for (size_t i = 0; i < h->nthreads; i++) {
        const sps__tl_thread_t *t = &h->threads[i];
        if (t->name && *t->name) {
            v.n = 0;
            sb_json_str(&v, t->name);
            sb_meta(pro, first, "thread_name", t->pid, t->tid, "name",
                    v.oom ? "\"\"" : v.p);
        }
        snprintf(num, sizeof num, "%zu", i);
        sb_meta(pro, first, "thread_sort_index", t->pid, t->tid,
                "sort_index", num);
    }
    pro->oom |= v.oom;
    free(v.p);

    /* "ms" as kineto and tensorplay write it: a viewer's unit, ts stay µs */
    sb_puts(epi, "\n],\n\"schemaVersion\":1,\"displayTimeUnit\":\"ms\","
                 "\"baseTimeNanoseconds\":");
    sb_i64(epi, h->base_ns);
    if (h->trace_name) {
        sb_puts(epi, ",\"traceName\":");
        sb_json_str(epi, h->trace_name);
    }
    if (h->rank >= 0) {
        /* the space after "rank": is HTA's pattern (see the top) */
        sb_puts(epi, ",\"distributedInfo\":{\"rank\": ");
        sb_i64(epi, h->rank);
        sb_puts(epi, ", \"world_size\": ");
        sb_i64(epi, h->world_size);
        if (h->backend && *h->backend) {
            sb_puts(epi, ", \"backend\": ");
            sb_json_str(epi, h->backend);
        }
        sb_puts(epi, "}");
    }
    if (h->wall_anchor_ns || h->mono_anchor_ns) {
        sb_puts(epi, ",\"spanscopeClock\":{\"wall_anchor_ns\":");
        sb_i64(epi, h->wall_anchor_ns);
        sb_puts(epi, ",\"mono_anchor_ns\":");
        sb_i64(epi, h->mono_anchor_ns);
        if (h->hostname && *h->hostname) {
            sb_puts(epi, ",\"hostname\":");
            sb_json_str(epi, h->hostname);
        }
        sb_puts(epi, "}");
    }
    sb_puts(epi, ",\"deviceProperties\":[]}\n");
}

/* Writes the event text p (n bytes) after a separator.  Returns 0 or
 * SPS_EIO. */
static int put_event(sps__cjw_t *w, const char *p, size_t n) {
    if (!w->first && put(w, ",\n", 2)) return w->err;
    w->first = 0;
    return put(w, p, n);
}

/* Writes one counter sample as a C event; skipped when its value is not
 * finite.  Returns 0 or SPS_EIO. */
static int put_counter(sps__cjw_t *w, const sps__tl_header_t *h,
                       const sps__tl_counter_t *c) {
    char ev[128], num[40];
    size_t n = 0, k = sps__tl_fmt_double(num, sizeof num, c->value);
    if (!k) return 0;
    const char *nm = w->ename[c->name];
    size_t nl = w->elen[c->name];
    static const char head[] = "{\"ph\":\"C\",\"name\":";
    if (put_event(w, head, sizeof head - 1) || put(w, nm, nl))
        return w->err;
    memcpy(ev + n, ",\"pid\":", 7); n += 7;
    n += fmt_i64(ev + n, h->procs[c->proc].pid);
    memcpy(ev + n, ",\"ts\":", 6); n += 6;
    n += fmt_us(ev + n, c->ts_ns - w->base_ns);
    memcpy(ev + n, ",\"args\":{", 9); n += 9;
    if (put(w, ev, n) || put(w, nm, nl)) return w->err;
    n = 0;
    ev[n++] = ':';
    memcpy(ev + n, num, k); n += k;
    memcpy(ev + n, "}}", 2); n += 2;
    return put(w, ev, n);
}

/* Writes ,"pid":P,"tid":T,"ts":µs of header thread th at ns at ev;
 * returns the bytes written (at most 75). */
static size_t fmt_where(char *ev, const sps__cjw_t *w, uint32_t th, int64_t ns) {
    size_t n = 0;
    memcpy(ev + n, ",\"pid\":", 7); n += 7;
    n += fmt_i64(ev + n, w->pid[th]);
    memcpy(ev + n, ",\"tid\":", 7); n += 7;
    n += fmt_i64(ev + n, w->tid[th]);
    memcpy(ev + n, ",\"ts\":", 6); n += 6;
    n += fmt_us(ev + n, ns - w->base_ns);
    return n;
}

/* Writes one flow point as an s/t/f event.  Returns 0 or SPS_EIO. */
static int put_flow(sps__cjw_t *w, const sps__tl_flow_t *f) {
    char ev[CJW_EVENT_MAX];
    size_t n = 0;
    memcpy(ev + n, "{\"ph\":\"", 7); n += 7;
    ev[n++] = f->phase;
    n += (size_t)snprintf(ev + n, 32, "\",\"id\":%llu", (unsigned long long)f->id);
    n += fmt_where(ev + n, w, f->thread, f->ts_ns);
    if (f->enclosing) { memcpy(ev + n, ",\"bp\":\"e\"", 9); n += 9; }
    static const char cat[] = ",\"cat\":\"flow\",\"name\":";
    memcpy(ev + n, cat, sizeof cat - 1); n += sizeof cat - 1;
    if (put_event(w, ev, n) || put(w, w->ename[f->name], w->elen[f->name]))
        return w->err;
    return put(w, "}", 1);
}

/* Writes h's counter samples, then its flow points (right after the
 * metadata events).  Returns 0 or SPS_EIO. */
static int put_extras(sps__cjw_t *w, const sps__tl_header_t *h) {
    for (size_t i = 0; i < h->ncounters; i++)
        if (put_counter(w, h, &h->counters[i])) return w->err;
    for (size_t i = 0; i < h->nflows; i++)
        if (put_flow(w, &h->flows[i])) return w->err;
    return 0;
}

/* Frees w and everything it owns (not the file handles). */
static void cjw_free(sps__cjw_t *w) {
    if (!w) return;
    if (w->ename)
        for (size_t i = 0; i < w->nnames; i++) free(w->ename[i]);
    free(w->ename);
    free(w->elen);
    free(w->pid);
    free(w->tid);
    free(w->tail);
    free(w->dev);
    free(w->path);
    free(w);
}

/* Opens path (gzip-compressed when gzip != 0) and writes the prologue.  On
 * success *out owns the file until sps__cjw_close / sps__cjw_abort.
 * Returns 0, SPS_EINVAL (bad header), SPS_ENOMEM, SPS_EPATH (cannot create
 * the file) or SPS_EIO. */
int sps__cjw_open(sps__cjw_t **out, const char *path, int gzip,
                  const sps__tl_header_t *h) {
    if (!out || !path) return SPS_EINVAL;
    *out = NULL;
    int rc = check_header(h);
    if (!rc) rc = sps__tl_check_extras(h);
    if (rc) return rc;
    sps__cjw_t *w = calloc(1, sizeof *w);
    if (!w) return SPS_ENOMEM;
    w->nnames = h->nnames;
    w->nthreads = h->nthreads;
    w->base_ns = h->base_ns;
    w->last_start = INT64_MIN;
    w->first_ns = INT64_MAX;
    w->end_ns = INT64_MIN;
    w->trace_pid = h->nprocs ? h->procs[0].pid : 0;
    w->kineto = h->kineto;
    w->path = strdup(path);
    w->ename = calloc(h->nnames + 1, sizeof *w->ename);
    w->elen = calloc(h->nnames + 1, sizeof *w->elen);
    w->pid = malloc((h->nthreads + 1) * sizeof *w->pid);
    w->tid = malloc((h->nthreads + 1) * sizeof *w->tid);
    if (!w->path || !w->ename || !w->elen || !w->pid || !w->tid) {
        cjw_free(w);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < h->nnames; i++) {
        sbuf_t b = {0};
        sb_json_str(&b, h->names[i]);
        if (b.oom) { free(b.p); cjw_free(w); return SPS_ENOMEM; }
        w->ename[i] = b.p;
        w->elen[i] = b.n;
    }
    for (size_t i = 0; i < h->nthreads; i++) {
        w->pid[i] = h->threads[i].pid;
        w->tid[i] = h->threads[i].tid;
    }
    sbuf_t pro = {0}, epi = {0};
    w->first = 1;
    build_text(h, &pro, &epi, &w->first);
    if (pro.oom || epi.oom) {
        free(pro.p);
        free(epi.p);
        cjw_free(w);
        return SPS_ENOMEM;
    }
    w->tail = epi.p;
    errno = 0;
    if (gzip) {
        w->gz = gzopen(path, "wb6");
    } else {
        w->f = sps__out_open(path, 1);
    }
    if (!w->gz && !w->f) {
        int e = errno ? errno : ENOMEM;
        sps__err_os_note(e); /* gzopen's open(2) failed, or its malloc */
        free(pro.p);
        cjw_free(w);
        return e == ENOMEM ? SPS_ENOMEM
               : e == ENOSPC || e == EIO || e == EDQUOT ? SPS_EIO : SPS_EPATH;
    }
    if (w->gz) gzbuffer(w->gz, 1u << 17);
    rc = put(w, pro.p, pro.n);
    free(pro.p);
    if (!rc) rc = put_extras(w, h);
    if (rc) {
        sps__cjw_abort(w);
        return rc;
    }
    *out = w;
    return 0;
}

/* Writes one span as an X event.  Returns 0, SPS_EINVAL (index out of
 * range, end before start, start before the previous span's start; nothing
 * is written) or SPS_EIO (sticky: later calls fail too). */
int sps__cjw_span(sps__cjw_t *w, const sps__tl_span_t *s) {
    return sps__cjw_span_args(w, s, NULL);
}

/* 1 when name (a JSON-escaped name with its quotes) is a torch step
 * span, "ProfilerStep#..." (the plugin reads those as steps, whatever
 * their category, so they get no cpu_op view: it would count each step
 * twice). */
static int is_step_name(const char *ename, size_t len) {
    static const char step[] = "\"ProfilerStep#";
    return len >= sizeof step - 1 && !memcmp(ename, step, sizeof step - 1);
}

/* The members of args (a JSON object's text) without its braces: *n bytes
 * from the returned pointer; NULL when it has none (NULL, "{}", "{ }", or
 * text that is no object: nothing is merged then). */
static const char *args_members(const char *args, size_t *n) {
    const char *end = args && *args == '{' ? strrchr(args, '}') : NULL;
    if (!end) return NULL;
    const char *p = args + 1;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (p >= end) return NULL;
    *n = (size_t)(end - p);
    return p;
}

/* Writes one X event of span s in category cat (a JSON string with its
 * quotes).  Kineto mode: args are kineto's "External id" (from 1, one per
 * event), "Record function id" and "Ev Idx", then the members of args (an
 * object's text, or NULL); else args as given (none when NULL).
 * "spanscope_view":1 when view.  Returns 0 or SPS_EIO. */
static int put_x(sps__cjw_t *w, const sps__tl_span_t *s, const char *cat,
                 const char *args, int view) {
    char ev[CJW_EVENT_MAX];
    size_t n = 0;
    if (!w->first && put(w, ",\n", 2)) return w->err;
    w->first = 0;
    n += (size_t)snprintf(ev, sizeof ev, "{\"ph\":\"X\",\"cat\":%s,\"name\":", cat);
    if (put(w, ev, n) || put(w, w->ename[s->name], w->elen[s->name]))
        return w->err;
    n = fmt_where(ev, w, s->thread, s->start_ns);
    memcpy(ev + n, ",\"dur\":", 7); n += 7;
    n += fmt_us(ev + n, s->end_ns - s->start_ns);
    w->nx++;
    if (w->kineto) {
        n += (size_t)snprintf(ev + n, sizeof ev - n,
                              ",\"args\":{\"External id\":%llu,\"Record function id\":0,"
                              "\"Ev Idx\":%llu",
                              (unsigned long long)w->nx, (unsigned long long)(w->nx - 1));
        size_t mn = 0;
        const char *m = args_members(args, &mn);
        if (m) {
            ev[n++] = ',';
            if (put(w, ev, n) || put(w, m, mn)) return w->err;
            n = 0;
        }
        ev[n++] = '}';
    } else if (w->ndev) { /* a file with /device: kineto's External id, every span */
        n += (size_t)snprintf(ev + n, sizeof ev - n, ",\"args\":{\"External id\":%llu",
                              (unsigned long long)w->nx);
        size_t mn = 0;
        const char *m = args_members(args, &mn);
        if (m) {
            ev[n++] = ',';
            if (put(w, ev, n) || put(w, m, mn)) return w->err;
            n = 0;
        }
        ev[n++] = '}';
    } else if (args) {
        memcpy(ev + n, ",\"args\":", 8); n += 8;
        if (put(w, ev, n) || put(w, args, strlen(args))) return w->err;
        n = 0;
    }
    if (view) { memcpy(ev + n, ",\"spanscope_view\":1", 19); n += 19; }
    ev[n++] = '}';
    /* the activities this span launched take its id (the innermost wins) */
    for (size_t i = 0; i < w->ndev; i++) sps__tl_device_claim(w->dev[i], s, w->nx);
    return put(w, ev, n);
}

/* sps__cjw_span with an "args" member: args is the text of a JSON object
 * ("{...}"), written as given (the caller guarantees it is valid JSON), or
 * NULL for none.  Kineto mode: its
 * members follow kineto's (put_x), on both events of the span. */
int sps__cjw_span_args(sps__cjw_t *w, const sps__tl_span_t *s, const char *args) {
    if (!w || !s) return SPS_EINVAL;
    if (w->err) return w->err;
    if (s->name >= w->nnames || s->thread >= w->nthreads ||
        s->end_ns < s->start_ns || s->start_ns < w->last_start)
        return SPS_EINVAL;
    /* ts and dur must not overflow int64 in the subtraction. */
    if ((w->base_ns < 0 && s->start_ns > INT64_MAX + w->base_ns) ||
        (w->base_ns > 0 && s->start_ns < INT64_MIN + w->base_ns) ||
        (s->start_ns < 0 && s->end_ns > INT64_MAX + s->start_ns))
        return SPS_EINVAL;
    w->last_start = s->start_ns;
    if (s->start_ns < w->first_ns) w->first_ns = s->start_ns;
    if (s->end_ns > w->end_ns) w->end_ns = s->end_ns;
    w->nspans++;
    if (put_x(w, s, "\"user_annotation\"", args, 0)) return w->err;
    if (w->kineto != SPS__TL_TORCH_TB || is_step_name(w->ename[s->name], w->elen[s->name]))
        return 0;
    return put_x(w, s, "\"cpu_op\"", args, 1);
}

/* Writes kineto's window events over the spans' extent (none without a
 * span): the instant "Record Window End"; in the TensorBoard layout first
 * the "Trace" span "PyTorch Profiler (0)", which TensorBoard's plugin
 * takes as the profiled range, and the instant "Iteration Start: PyTorch
 * Profiler".  Returns 0 or SPS_EIO. */
static int put_window(sps__cjw_t *w) {
    if (!w->kineto || !w->nspans) return 0;
    char ev[CJW_EVENT_MAX], pid[24], ts[32], dur[32], end[32];
    pid[fmt_i64(pid, w->trace_pid)] = 0;
    ts[fmt_us(ts, w->first_ns - w->base_ns)] = 0;
    dur[fmt_us(dur, w->end_ns - w->first_ns)] = 0;
    end[fmt_us(end, w->end_ns - w->base_ns)] = 0;
    int n;
    if (w->kineto != SPS__TL_TORCH_TB) goto window_end;
    n = snprintf(ev, sizeof ev,
                     "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\","
                     "\"pid\":%s,\"tid\":0,\"ts\":%s,\"dur\":%s,\"args\":{\"Op count\":0}}",
                     pid, ts, dur);
    if (put_event(w, ev, (size_t)n)) return w->err;
    n = snprintf(ev, sizeof ev,
                 "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Iteration Start: PyTorch Profiler\","
                 "\"pid\":%s,\"tid\":0,\"ts\":%s}", pid, ts);
    if (put_event(w, ev, (size_t)n)) return w->err;
window_end:
    n = snprintf(ev, sizeof ev,
                 "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Record Window End\","
                 "\"pid\":%s,\"tid\":0,\"ts\":%s}", pid, end);
    return put_event(w, ev, (size_t)n);
}

/* ------------------------------------------------------------------------ */
/* Stack samples (export.h)                                                  */
/* ------------------------------------------------------------------------ */

/* The "name" and "args.stack" text of each stack, made on first use. */
typedef struct smp_text {
    char **name;   /* [nstacks] the leaf's function, quoted */
    char **stack;  /* [nstacks] the JSON array of frames */
    char **region; /* [nnames] the region's name, quoted */
} smp_text_t;

static void smp_text_free(smp_text_t *t, const sps__h5r_samples_t *x) {
    for (size_t i = 0; t->name && i < x->nstacks; i++) free(t->name[i]), free(t->stack[i]);
    for (size_t i = 0; t->region && i < x->nnames; i++) free(t->region[i]);
    free(t->name), free(t->stack), free(t->region);
}

/* Makes the texts of stack k.  0 or SPS_ENOMEM. */
static int smp_stack_text(smp_text_t *t, const sps__h5r_samples_t *x, int64_t k) {
    sbuf_t b = {0};
    char fr[1024];
    int64_t lo = x->stack_offsets[k], hi = x->stack_offsets[k + 1];
    const char *leaf = "<unknown>";
    if (hi > lo && x->functions[x->stack_frames[lo]] && *x->functions[x->stack_frames[lo]])
        leaf = x->functions[x->stack_frames[lo]];
    sb_json_str(&b, leaf);
    if (b.oom) { free(b.p); return SPS_ENOMEM; }
    t->name[k] = b.p;
    b = (sbuf_t){0};
    sb_put(&b, "[", 1);
    for (int64_t f = lo; f < hi; f++) {
        if (f > lo) sb_put(&b, ",", 1);
        sb_json_str(&b, sps__tl_frame_text(x, x->stack_frames[f], fr, sizeof fr));
    }
    sb_put(&b, "]", 1);
    if (b.oom) { free(b.p); return SPS_ENOMEM; }
    t->stack[k] = b.p;
    return 0;
}

/* Writes sample i of s as an instant event.  0, SPS_ENOMEM or SPS_EIO. */
static int put_sample(sps__cjw_t *w, const sps__tl_samples_t *s, smp_text_t *t, size_t i) {
    const sps__h5r_samples_t *x = s->x;
    int64_t k = x->stacks[i], rg = x->regions[i];
    if (!t->name[k] && smp_stack_text(t, x, k)) return SPS_ENOMEM;
    if (rg >= 0 && !t->region[rg] && !(t->region[rg] = sps__json_quote(x->names[rg], NULL)))
        return SPS_ENOMEM;
    char ev[CJW_EVENT_MAX];
    static const char head[] = "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"python_function\",\"name\":";
    if (put_event(w, head, sizeof head - 1) || put(w, t->name[k], strlen(t->name[k])))
        return w->err;
    size_t n = fmt_where(ev, w, s->thread[i], x->times_ns[i] + s->shift_ns);
    static const char args[] = ",\"args\":{\"stack\":";
    memcpy(ev + n, args, sizeof args - 1); n += sizeof args - 1;
    if (put(w, ev, n) || put(w, t->stack[k], strlen(t->stack[k]))) return w->err;
    if (rg >= 0 && (put(w, ",\"region\":", 10) || put(w, t->region[rg], strlen(t->region[rg]))))
        return w->err;
    n = 0;
    memcpy(ev + n, ",\"weight\":", 10); n += 10;
    n += fmt_i64(ev + n, x->weights[i]);
    memcpy(ev + n, "}}", 2); n += 2;
    return put(w, ev, n);
}

int sps__cjw_samples(sps__cjw_t *w, const sps__tl_samples_t *s) {
    if (!w || !s || !s->x) return SPS_EINVAL;
    if (w->err) return w->err;
    const sps__h5r_samples_t *x = s->x;
    for (size_t i = 0; i < x->n; i++) { /* checked before anything is written */
        if (s->thread[i] == UINT32_MAX) continue;
        int64_t ts, rel;
        if (s->thread[i] >= w->nthreads ||
            __builtin_add_overflow(x->times_ns[i], s->shift_ns, &ts) ||
            __builtin_sub_overflow(ts, w->base_ns, &rel))
            return SPS_EINVAL;
    }
    smp_text_t t = {calloc(x->nstacks + 1, sizeof(char *)),
                    calloc(x->nstacks + 1, sizeof(char *)),
                    calloc(x->nnames + 1, sizeof(char *))};
    int rc = t.name && t.stack && t.region ? 0 : SPS_ENOMEM;
    for (size_t i = 0; !rc && i < x->n; i++)
        if (s->thread[i] != UINT32_MAX) rc = put_sample(w, s, &t, i);
    smp_text_free(&t, x);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Device activity (export.h)                                                */
/* ------------------------------------------------------------------------ */

int sps__cjw_device(sps__cjw_t *w, sps__tl_device_t *d) {
    if (!w || !d || !d->x) return SPS_EINVAL;
    if (w->err) return w->err;
    if (w->nspans) return SPS_EINVAL; /* spans must find their activities */
    const sps__h5r_device_t *x = d->x;
    for (size_t i = 0; i < x->n; i++) { /* checked before anything is written */
        if (d->thread[i] == UINT32_MAX) continue;
        int64_t a, b;
        if ((x->kinds[i] >= SPS__DEV_RUNTIME && d->thread[i] >= w->nthreads) ||
            (x->kinds[i] <= SPS__DEV_MEMSET && d->gpu[i] >= d->ngpus) ||
            __builtin_add_overflow(x->starts_ns[i], d->shift_ns, &a) ||
            __builtin_sub_overflow(a, w->base_ns, &a) ||
            __builtin_add_overflow(x->ends_ns[i], d->shift_ns, &b) ||
            __builtin_sub_overflow(b, w->base_ns, &b))
            return SPS_EINVAL;
    }
    sps__tl_device_t **v = realloc(w->dev, (w->ndev + 1) * sizeof *v);
    if (!v) return SPS_ENOMEM;
    w->dev = v;
    v[w->ndev++] = d;
    return 0;
}

/* Writes ,"pid":P,"tid":T,"ts":µs at ev; returns the bytes (<= 75). */
static size_t fmt_at(char *ev, const sps__cjw_t *w, int64_t pid, int64_t tid, int64_t ns) {
    size_t n = 0;
    memcpy(ev + n, ",\"pid\":", 7); n += 7;
    n += fmt_i64(ev + n, pid);
    memcpy(ev + n, ",\"tid\":", 7); n += 7;
    n += fmt_i64(ev + n, tid);
    memcpy(ev + n, ",\"ts\":", 6); n += 6;
    n += fmt_us(ev + n, ns - w->base_ns);
    return n;
}

static const char *const dev_cat[] = {"", "kernel", "gpu_memcpy", "gpu_memset",
                                      "cuda_runtime", "cuda_driver"};

/* Writes row i of d: its X event, and its flow point (an API row that
 * launched a placed device row: 's'; a device row with a placed API row:
 * 'f').  qname: its name, quoted.  0 or SPS_EIO. */
static int put_dev_row(sps__cjw_t *w, const sps__tl_device_t *d, size_t i, const char *qname,
                       int launches) {
    const sps__h5r_device_t *x = d->x;
    int api = x->kinds[i] >= SPS__DEV_RUNTIME;
    int64_t pid = api ? w->pid[d->thread[i]] : d->gpus[d->gpu[i]].pid;
    int64_t tid = api ? w->tid[d->thread[i]] : x->streams[i];
    int64_t t0 = x->starts_ns[i] + d->shift_ns, dur = x->ends_ns[i] - x->starts_ns[i];
    char ev[CJW_EVENT_MAX + 256];
    size_t n = (size_t)snprintf(ev, sizeof ev, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":",
                                dev_cat[x->kinds[i]]);
    if (put_event(w, ev, n) || put(w, qname, strlen(qname))) return w->err;
    n = fmt_at(ev, w, pid, tid, t0);
    memcpy(ev + n, ",\"dur\":", 7); n += 7;
    n += fmt_us(ev + n, dur);
    memcpy(ev + n, ",\"args\":{", 9); n += 9;
    if (d->ext[i])
        n += (size_t)snprintf(ev + n, 40, "\"External id\":%llu,", (unsigned long long)d->ext[i]);
    n += (size_t)snprintf(ev + n, 40, "\"correlation\":%lld", (long long)x->correlations[i]);
    if (api && x->cbids) /* kineto's "cbid": CUPTI's callback id of the call */
        n += (size_t)snprintf(ev + n, 40, ",\"cbid\":%lld", (long long)x->cbids[i]);
    if (!api) {
        n += (size_t)snprintf(ev + n, 120, ",\"device\":%lld,\"context\":%lld,\"stream\":%lld",
                              (long long)x->devices[i], (long long)x->contexts[i],
                              (long long)x->streams[i]);
        if (x->kinds[i] == SPS__DEV_KERNEL)
            n += (size_t)snprintf(ev + n, 200,
                                  ",\"grid\":[%lld,%lld,%lld],\"block\":[%lld,%lld,%lld]",
                                  (long long)x->grid_x[i], (long long)x->grid_y[i],
                                  (long long)x->grid_z[i], (long long)x->block_x[i],
                                  (long long)x->block_y[i], (long long)x->block_z[i]);
        else {
            n += (size_t)snprintf(ev + n, 40, ",\"bytes\":%lld", (long long)x->bytes[i]);
            char bw[40];
            /* bytes per ns is GB/s, as kineto's "memory bandwidth (GB/s)" */
            if (dur > 0 && sps__tl_fmt_double(bw, sizeof bw, (double)x->bytes[i] / (double)dur))
                n += (size_t)snprintf(ev + n, 80, ",\"memory bandwidth (GB/s)\":%s", bw);
        }
    }
    memcpy(ev + n, "}}", 2); n += 2;
    if (put(w, ev, n)) return w->err;
    int64_t a = api ? -1 : d->api[i];
    int flow = api ? launches : a >= 0 && d->thread[a] != UINT32_MAX;
    if (!flow) return 0;
    uint64_t id = d->flow_base + (uint64_t)x->correlations[i];
    n = (size_t)snprintf(ev, 64, "{\"ph\":\"%c\",\"id\":%llu", api ? 's' : 'f',
                         (unsigned long long)id);
    n += fmt_at(ev + n, w, pid, tid, t0);
    if (!api) { memcpy(ev + n, ",\"bp\":\"e\"", 9); n += 9; }
    static const char tail[] = ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}";
    memcpy(ev + n, tail, sizeof tail - 1); n += sizeof tail - 1;
    return put_event(w, ev, n);
}

typedef struct gstream {
    uint32_t gpu;
    int64_t stream;
} gstream_t;

static int by_gstream(const void *a, const void *b) {
    const gstream_t *x = a, *y = b;
    if (x->gpu != y->gpu) return x->gpu < y->gpu ? -1 : 1;
    return (x->stream > y->stream) - (x->stream < y->stream);
}

/* The "M" events of d's GPUs (process_name "GPU N", a sort index after
 * the hosts') and their streams (thread_name "stream S"). */
static int put_dev_meta(sps__cjw_t *w, const sps__tl_device_t *d) {
    const sps__h5r_device_t *x = d->x;
    gstream_t *gs = malloc((x->n + 1) * sizeof *gs);
    if (!gs) return SPS_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < x->n; i++)
        if (d->thread[i] != UINT32_MAX && d->gpu[i] != UINT32_MAX)
            gs[m++] = (gstream_t){d->gpu[i], x->streams[i]};
    qsort(gs, m, sizeof *gs, by_gstream);
    sbuf_t b = {0};
    int first = 1; /* the separators are put_event's */
    for (size_t g = 0; g < d->ngpus; g++) {
        char num[40];
        sbuf_t q = {0};
        sb_json_str(&q, d->gpus[g].name);
        sb_meta(&b, &first, "process_name", d->gpus[g].pid, 0, "name", q.oom ? "\"\"" : q.p);
        free(q.p);
        snprintf(num, sizeof num, "%lld", (long long)(d->gpus[g].pid));
        sb_meta(&b, &first, "process_sort_index", d->gpus[g].pid, 0, "sort_index", num);
    }
    for (size_t k = 0; k < m; k++) {
        if (k && !by_gstream(&gs[k], &gs[k - 1])) continue;
        char nm[48], num[24];
        snprintf(nm, sizeof nm, "\"stream %lld\"", (long long)gs[k].stream);
        snprintf(num, sizeof num, "%lld", (long long)gs[k].stream);
        sb_meta(&b, &first, "thread_name", d->gpus[gs[k].gpu].pid, gs[k].stream, "name", nm);
        sb_meta(&b, &first, "thread_sort_index", d->gpus[gs[k].gpu].pid, gs[k].stream,
                "sort_index", num);
    }
    free(gs);
    if (b.oom) {
        free(b.p);
        return SPS_ENOMEM;
    }
    int rc = b.n ? put_event(w, b.p, b.n) : 0;
    free(b.p);
    return rc;
}

/* Writes d's activity (export.h: sps__cjw_device).  0, SPS_ENOMEM or
 * SPS_EIO. */
static int put_device(sps__cjw_t *w, const sps__tl_device_t *d) {
    const sps__h5r_device_t *x = d->x;
    if (!d->nplaced) return 0;
    char **q = calloc(x->nnames + 1, sizeof *q);
    unsigned char *launches = calloc(x->n + 1, 1);
    int rc = q && launches ? put_dev_meta(w, d) : SPS_ENOMEM;
    for (size_t i = 0; i < x->n; i++) /* API rows that launched a placed device row */
        if (d->thread[i] != UINT32_MAX && x->kinds[i] <= SPS__DEV_MEMSET && d->api[i] >= 0 &&
            launches)
            launches[d->api[i]] = 1;
    for (size_t i = 0; !rc && i < x->n; i++) {
        if (d->thread[i] == UINT32_MAX) continue;
        int64_t k = x->names_idx[i];
        if (!q[k] && !(q[k] = sps__json_quote(x->names[k], NULL))) rc = SPS_ENOMEM;
        if (!rc) rc = put_dev_row(w, d, i, q[k], launches[i]);
    }
    for (size_t k = 0; q && k < x->nnames; k++) free(q[k]);
    free(q);
    free(launches);
    return rc;
}

/* Adds top-level members (JSON text such as "\"a\":1,\"b\":true", written
 * as given) to the epilogue, before "deviceProperties".  Call before
 * sps__cjw_close.  Returns 0, SPS_EINVAL or SPS_ENOMEM. */
int sps__cjw_extra(sps__cjw_t *w, const char *members) {
    if (!w || !members) return SPS_EINVAL;
    if (!*members) return 0;
    static const char key[] = ",\"deviceProperties\"";
    char *at = strstr(w->tail, key);
    if (!at) return SPS_EINVAL;
    size_t head = (size_t)(at - w->tail), m = strlen(members), rest = strlen(at);
    char *t = malloc(head + 1 + m + rest + 1);
    if (!t) return SPS_ENOMEM;
    memcpy(t, w->tail, head);
    t[head] = ',';
    memcpy(t + head + 1, members, m);
    memcpy(t + head + 1 + m, at, rest + 1);
    free(w->tail);
    w->tail = t;
    return 0;
}

/* Writes the epilogue, flushes and closes the file, frees w (even on
 * error).  Returns 0 or SPS_EIO. */
int sps__cjw_close(sps__cjw_t *w) {
    if (!w) return SPS_EINVAL;
    int rc = w->err;
    for (size_t i = 0; !rc && i < w->ndev; i++) rc = put_device(w, w->dev[i]);
    if (!rc) rc = put_window(w);
    if (!rc) rc = put(w, w->tail, strlen(w->tail));
    if (!rc) rc = flush_buf(w);
    if (w->gz) {
        /* gzclose frees the state: its result is all there is (Z_ERRNO:
         * errno is the cause of its last write or close) */
        errno = 0;
        int z = gzclose(w->gz);
        if (z != Z_OK && !rc) {
            sps__err_os_note(z == Z_ERRNO && errno > 0 ? errno : z == Z_MEM_ERROR ? ENOMEM : EIO);
            rc = SPS_EIO;
        }
    } else if (w->f) {
        /* the stream's flush, fsync and close note their own errno */
        if (fclose(w->f) != 0 && !rc) rc = SPS_EIO;
    }
    cjw_free(w);
    return rc;
}

/* Closes the file without finishing it, removes it, frees w.  The cause
 * of the failure that led here stays the one noted (the close of a
 * failing file fails again, maybe otherwise). */
void sps__cjw_abort(sps__cjw_t *w) {
    if (!w) return;
    int cause = sps__err_os();
    if (w->gz) gzclose(w->gz);
    if (w->f) fclose(w->f);
    sps__err_os_note(cause);
    if (w->path) unlink(w->path);
    cjw_free(w);
}
