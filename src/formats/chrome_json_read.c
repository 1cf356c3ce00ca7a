/*
 * chrome_json_read.c -- reads Chrome trace event JSON (.json, .json.gz)
 * written by spanscope, torch (kineto) or tensorplay into a timeline.
 *
 * Accepted: {"traceEvents":[...], ...} or a bare array of events (whose
 * closing ']' may be missing, as the trace viewer allows).  Used events:
 *   ph "X"   a span: ts, dur in microseconds (int or fraction), pid, tid;
 *   ph "B"/"E" begin/end pairs, matched with a stack per (pid, tid);
 *   ph "M"   process_name, process_labels ("rank N"), process_sort_index,
 *            thread_name, thread_sort_index;
 *   ph "C"   counter samples: one series per (pid, name, args key), for
 *            numeric args only, named "name" when its (pid, name) has a
 *            single numeric key or the key is the name, else "name.key";
 *   ph "s"/"t"/"f" flow points: id from "id" (a number, or a string
 *            hashed to 64 bits; numbers that are no uint64 are hashed as
 *            text), else "bind_id"; name from "name", else "cat"; "bp":"e"
 *            marks an enclosing binding.  Their threads join the thread
 *            table even without spans.
 * Skipped X events: those marked "spanscope_view" (the cpu_op view our
 * writer adds after each span, chrome_json.c) and cat "Trace" (kineto's
 * "PyTorch Profiler (0)" window).
 * C/s/t/f events without a usable pid/tid, ts or id are dropped (counted).
 * Counters and flows are kept in memory (a few dozen bytes each, so bounded
 * by the text's size) and sorted by time for the header.
 * Everything else is skipped (but must be valid JSON).  Top-level keys used:
 * baseTimeNanoseconds, traceName, distributedInfo {rank, world_size,
 * backend},
 * spanscopeClock {wall_anchor_ns, mono_anchor_ns, hostname} (the clock
 * anchor; used only when both are integers and wall_anchor_ns > 0).
 * Times convert to ns exactly from the decimal text (no binary floating
 * point): start_ns = baseTimeNanoseconds + round(ts * 1000).
 *
 * The parser is hand written, strict (RFC 8259 plus a leading BOM) and
 * iterative: nesting is tracked in a fixed stack of SKIP_DEPTH levels, so
 * deep input gives an error instead of a stack overflow.  The file is read
 * through zlib's gzread (plain or gzip, by its magic; the expansion of
 * gzip data is capped) into a sliding window: one event (or one top-level
 * member) is parsed at a time, and a parse that runs into the window's end
 * is retried once more text is in (the window grows only for a single
 * value larger than it, so at most to the file's size).
 *
 * Spans (X events, and B/E pairs matched per thread in (ts, file order)
 * after their own sort) go to the external sort (spansort.c), ordered by
 * (start, -end, thread in order of first appearance, name): memory does
 * not grow with the number of events beyond the sort's run.  Spans that
 * overlap a sibling partially on their thread (which timeline.h rules out)
 * are dropped and counted, as are unmatched B/E events and spans with
 * negative durations (see sps__cjr_dropped).  When the sort stayed in
 * memory that filter runs at open, in place; after a spill it runs in a
 * counting pass over the merged runs at open and again as spans are
 * delivered (so the header's nspans is exact either way).
 */
#include "formats/timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define SKIP_DEPTH 512                 /* deepest JSON nesting accepted */
#define GZ_RATIO 100                   /* max decompressed / compressed */
#define GZ_FLOOR ((size_t)1 << 20)     /* ... but always allow 1 MiB */
#define WIN_INIT ((size_t)1 << 20)    /* initial window (bytes) */
#define WIN_AHEAD ((size_t)64 << 10)   /* text kept ahead of a step */
#define NEAR_END 16                    /* a failure this close to the
                                          window's end may need more text */

/* Spans are sps__srec_t {start, end (relative to baseTimeNanoseconds),
 * thread (first-appearance index), name, ord = name}; B/E events are
 * {start = ts, end = 1 for E, thread, name (B), ord = file order}. */

/* A thread's open spans: the one fold's nesting filter (model/fold.c). */
typedef sps__stack_t stk_t;

typedef struct {
    int64_t pid, rank, sort;
    int has_sort;
    char *name;         /* owned, NULL until process_name */
    uint64_t seen;      /* first appearance */
} rproc_t;

typedef struct {
    int64_t pid, tid, sort;
    int has_sort;
    char *name;         /* owned, NULL until thread_name */
    uint64_t seen;
} rthread_t;

/* A counter sample as read: proc is the first-appearance process, name
 * the event's name, key its args key (r->keys), ts relative, ord its
 * index in file order. */
typedef struct {
    uint32_t proc, name, key;
    int64_t ts;
    double v;
    uint64_t ord;
} rcounter_t;

/* The reader.  vt must stay the first member (timeline.c casts). */
typedef struct {
    sps__tlr_vt_t vt;
    sps__tl_header_t h;
    /* interned names */
    char **names;
    size_t nnames, names_cap;
    sps__htab_t name_ht;
    /* processes and threads, in order of first appearance until the end */
    rproc_t *rp;
    size_t nrp, rp_cap;
    sps__htab_t proc_ht;
    rthread_t *rt;
    size_t nrt, rt_cap;
    sps__htab_t thr_ht;
    /* header arrays (built at the end) */
    sps__tl_proc_t *procs;
    sps__tl_thread_t *threads;
    const char **name_ptrs;
    char *trace_name;
    /* spans */
    sps__xsort_t *xs, *xbe;
    int64_t tmin, tmax;    /* over spans, relative */
    uint32_t *tmap;        /* first-appearance thread -> header thread */
    stk_t *stk;            /* per first-appearance thread, when filtering */
    int filter_late;       /* nesting filter at delivery (after a spill) */
    uint64_t nkept;        /* spans that pass the filter */
    uint64_t dropped;      /* unmatched B/E, negative dur, overlap */
    int64_t base_ns;
    int64_t rank, world_size;
    int has_rank;
    int64_t wall_anchor, mono_anchor; /* spanscopeClock, 0 = none */
    char *hostname;
    char *backend;         /* distributedInfo.backend, NULL: none */
    /* counter args keys (interned apart from the names) */
    char **keys;
    size_t nkeys, keys_cap;
    sps__htab_t key_ht;
    rcounter_t *rc;        /* raw counter samples, file order */
    size_t nrc, rc_cap;
    sps__tl_flow_t *fl;    /* flow points (thread: first appearance,
                              ts: relative until build) */
    size_t nfl, fl_cap;
    uint32_t *pmap;        /* first-appearance process -> header process */
    sps__tl_counter_t *counters; /* header arrays */
    size_t ncounters;
} cjr_t;

/* Parser state over the window [begin, end) of the text; begin is the
 * owned buffer (cap bytes) and holds the text from file offset off. */
typedef struct {
    const char *path;
    const unsigned char *begin, *p, *end;
    char *s;             /* scratch: the last decoded string (owned) */
    size_t slen, scap;
    int oom;
    gzFile gz;
    size_t cap;
    uint64_t off;        /* file offset of begin[0] (decompressed) */
    uint64_t total, limit; /* text read so far, its cap (gzip only) */
    int eof, hard;       /* all text read; an I/O or gzip error happened */
    const unsigned char *fail_at; /* where the last jfail happened */
} js_t;

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/* Sets the one-line message "<path>: <what> at byte N" and returns
 * SPS_EFORMAT (SPS_ENOMEM if js ran out of memory). */
static int jfail(js_t *js, const char *what) {
    if (js->oom) {
        sps__err_set("%s: out of memory", js->path);
        return SPS_ENOMEM;
    }
    js->fail_at = js->p;
    sps__err_set("%s: not a valid trace JSON file: %s at byte %llu",
                       js->path, what,
                       (unsigned long long)(js->off + (uint64_t)(js->p - js->begin)));
    return SPS_EFORMAT;
}

/* ------------------------------------------------------------------------ */
/* Interning                                                                 */
/* ------------------------------------------------------------------------ */

/* A string table: owned strings, their count and capacity, their index. */
typedef struct {
    char ***v;
    size_t *n, *cap;
    sps__htab_t *ht;
} stab_t;

/* The id of string s (n bytes, valid UTF-8, no NUL) in table t, added if
 * new.  Returns the id, or -1 out of memory / too many strings. */
static int64_t intern_in(stab_t t, const char *s, size_t n) {
    sps__hprobe_t p = sps__htab_probe(t.ht, sps__hash_bytes(s, n));
    for (uint32_t v; sps__htab_next(t.ht, &p, &v);) {
        const char *o = (*t.v)[v];
        if (strncmp(o, s, n) == 0 && o[n] == 0) return v;
    }
    if (*t.n >= UINT32_MAX - 1 || sps__htab_make_room(t.ht, &p) ||
        sps__grow((void **)t.v, t.cap, *t.n, sizeof **t.v))
        return -1;
    char *c = malloc(n + 1);
    if (!c) return -1;
    memcpy(c, s, n);
    c[n] = 0;
    (*t.v)[*t.n] = c;
    sps__htab_put(t.ht, &p, (uint32_t)*t.n);
    return (int64_t)(*t.n)++;
}

/* The id of name s (n bytes), added if new; -1 out of memory. */
static int64_t intern_name(cjr_t *r, const char *s, size_t n) {
    stab_t t = {&r->names, &r->nnames, &r->names_cap, &r->name_ht};
    return intern_in(t, s, n);
}

/* The id of counter args key s (n bytes), added if new; -1 out of
 * memory. */
static int64_t intern_key(cjr_t *r, const char *s, size_t n) {
    stab_t t = {&r->keys, &r->nkeys, &r->keys_cap, &r->key_ht};
    return intern_in(t, s, n);
}

/* The index of process pid, added if new.  Returns it or -1 (no memory). */
static int64_t get_proc(cjr_t *r, int64_t pid) {
    sps__hprobe_t hp = sps__htab_probe(&r->proc_ht, sps__hash_u64((uint64_t)pid));
    for (uint32_t v; sps__htab_next(&r->proc_ht, &hp, &v);)
        if (r->rp[v].pid == pid) return v;
    if (r->nrp >= UINT32_MAX - 1 || sps__htab_make_room(&r->proc_ht, &hp) ||
        sps__grow((void **)&r->rp, &r->rp_cap, r->nrp, sizeof *r->rp))
        return -1;
    rproc_t *p = &r->rp[r->nrp];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->rank = -1;
    p->seen = r->nrp;
    sps__htab_put(&r->proc_ht, &hp, (uint32_t)r->nrp);
    return (int64_t)r->nrp++;
}

/* The index of thread (pid, tid), added (with its process) if new.
 * Returns it or -1 (no memory). */
static int64_t get_thread(cjr_t *r, int64_t pid, int64_t tid) {
    if (get_proc(r, pid) < 0) return -1;
    sps__hprobe_t p = sps__htab_probe(&r->thr_ht, sps__hash_pair((uint64_t)pid, (uint64_t)tid));
    for (uint32_t v; sps__htab_next(&r->thr_ht, &p, &v);)
        if (r->rt[v].pid == pid && r->rt[v].tid == tid) return v;
    if (r->nrt >= UINT32_MAX - 1 || sps__htab_make_room(&r->thr_ht, &p) ||
        sps__grow((void **)&r->rt, &r->rt_cap, r->nrt, sizeof *r->rt))
        return -1;
    rthread_t *t = &r->rt[r->nrt];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    t->seen = r->nrt;
    sps__htab_put(&r->thr_ht, &p, (uint32_t)r->nrt);
    return (int64_t)r->nrt++;
}

/* ------------------------------------------------------------------------ */
/* Lexing                                                                    */
/* ------------------------------------------------------------------------ */

/* Skips JSON whitespace. */
static void ws(js_t *js) {
    while (js->p < js->end &&
           (*js->p == ' ' || *js->p == '\n' || *js->p == '\r' || *js->p == '\t'))
        js->p++;
}

/* Appends n bytes to the scratch string; sets js->oom on failure. */
static void sput(js_t *js, const void *b, size_t n) {
    if (js->oom) return;
    if (js->slen + n + 1 > js->scap) {
        size_t c = js->scap ? js->scap : 256;
        while (c < js->slen + n + 1) c *= 2;
        char *p = realloc(js->s, c);
        if (!p) { js->oom = 1; return; }
        js->s = p;
        js->scap = c;
    }
    memcpy(js->s + js->slen, b, n);
    js->slen += n;
    js->s[js->slen] = 0;
}

/* Appends code point cp as UTF-8 to the scratch string. */
static void sput_cp(js_t *js, uint32_t cp) {
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) { b[0] = (unsigned char)cp; n = 1; }
    else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | (cp >> 6));
        b[1] = (unsigned char)(0x80 | (cp & 0x3F)); n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12));
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | (cp >> 18));
        b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F)); n = 4;
    }
    sput(js, b, n);
}


/* Reads 4 hex digits at p (bounds checked by the caller).  Returns the value
 * or -1. */
static int32_t hex4(const unsigned char *p) {
    int32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i];
        int d = c >= '0' && c <= '9' ? (int)c - '0'
              : c >= 'a' && c <= 'f' ? (int)c - 'a' + 10
              : c >= 'A' && c <= 'F' ? (int)c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Parses the string at js->p (which is '"').  With decode, its value goes
 * to js->s / js->slen as valid UTF-8 (invalid bytes, lone surrogates and
 * NUL become U+FFFD, so the result is a C string).  Returns 0 or an error. */
static int jstring(js_t *js, int decode) {
    const unsigned char *p = js->p + 1, *e = js->end;
    js->slen = 0;
    if (decode) sput(js, "", 0);
    for (;;) {
        const unsigned char *q = p;
        while (q < e && *q != '"' && *q != '\\' && *q >= 0x20 && *q < 0x80) q++;
        if (decode && q > p) sput(js, p, (size_t)(q - p));
        p = q;
        if (p >= e) { js->p = p; return jfail(js, "unterminated string"); }
        unsigned c = *p;
        if (c == '"') break;
        if (c < 0x20) { js->p = p; return jfail(js, "control character in string"); }
        if (c >= 0x80) {
            size_t k = sps__utf8_len(p, (size_t)(e - p));
            if (decode) {
                if (k) sput(js, p, k);
                else sput_cp(js, 0xFFFD);
            }
            p += k ? k : 1;
            continue;
        }
        /* backslash */
        if (e - p < 2) { js->p = p; return jfail(js, "unterminated string"); }
        c = p[1];
        const char *simple = NULL;
        switch (c) {
        case '"': simple = "\""; break;
        case '\\': simple = "\\"; break;
        case '/': simple = "/"; break;
        case 'b': simple = "\b"; break;
        case 'f': simple = "\f"; break;
        case 'n': simple = "\n"; break;
        case 'r': simple = "\r"; break;
        case 't': simple = "\t"; break;
        case 'u': break;
        default: js->p = p; return jfail(js, "bad escape in string");
        }
        if (simple) {
            if (decode) sput(js, simple, 1);
            p += 2;
            continue;
        }
        if (e - p < 6) { js->p = p; return jfail(js, "unterminated string"); }
        int32_t u = hex4(p + 2);
        if (u < 0) { js->p = p; return jfail(js, "bad \\u escape"); }
        p += 6;
        uint32_t cp = (uint32_t)u;
        if (cp >= 0xD800 && cp <= 0xDBFF && e - p < 6 && !js->eof) {
            js->p = e; /* the low half may be beyond the window */
            return jfail(js, "unterminated string");
        }
        if (cp >= 0xD800 && cp <= 0xDBFF && e - p >= 6 && p[0] == '\\' &&
            p[1] == 'u') {
            int32_t lo = hex4(p + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
                p += 6;
            }
        }
        if ((cp >= 0xD800 && cp <= 0xDFFF) || cp == 0) cp = 0xFFFD;
        if (decode) sput_cp(js, cp);
    }
    js->p = p + 1;
    if (js->oom) return jfail(js, "");
    return 0;
}

/* Scans a JSON number at js->p; on success *tok and *len give its text.
 * Returns 0 or an error. */
static int jnumber(js_t *js, const char **tok, size_t *len) {
    const unsigned char *p = js->p, *e = js->end, *s = p;
    if (p < e && *p == '-') p++;
    if (p >= e || *p < '0' || *p > '9') return jfail(js, "bad number");
    if (*p == '0') p++;
    else while (p < e && *p >= '0' && *p <= '9') p++;
    if (p < e && *p == '.') {
        p++;
        if (p >= e || *p < '0' || *p > '9') { js->p = p; return jfail(js, "bad number"); }
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || *p < '0' || *p > '9') { js->p = p; return jfail(js, "bad number"); }
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    *tok = (const char *)s;
    *len = (size_t)(p - s);
    js->p = p;
    return 0;
}

/* Converts the JSON number text t (n bytes, already validated) times
 * 10^scale to an int64, rounding half away from zero, exactly (decimal
 * arithmetic, no floating point).  Returns 0, -1 (out of int64 range) or,
 * when exact is set and digits would be lost, -2. */
static int num_scaled(const char *t, size_t n, int scale, int exact,
                      int64_t *out) {
    const char *e = t + n;
    int neg = 0, inexact = 0;
    uint64_t mant = 0;
    int ndig = 0;          /* significant digits in mant */
    int64_t dexp = 0;      /* value = mant * 10^dexp (before dropped digits) */
    int dropped_first = -1; /* first digit that did not fit in mant */
    if (t < e && *t == '-') { neg = 1; t++; }
    for (; t < e && *t >= '0' && *t <= '9'; t++) {
        int d = *t - '0';
        if (ndig < 19) {
            if (ndig || d) { mant = mant * 10 + (uint64_t)d; ndig++; }
        } else {
            if (dropped_first < 0) dropped_first = d;
            else if (d) inexact = 1;
            dexp++;
        }
    }
    if (t < e && *t == '.') {
        for (t++; t < e && *t >= '0' && *t <= '9'; t++) {
            int d = *t - '0';
            if (ndig < 19) {
                if (ndig || d) { mant = mant * 10 + (uint64_t)d; ndig++; }
                dexp--;
            } else {
                if (dropped_first < 0) dropped_first = d;
                else if (d) inexact = 1;
            }
        }
    }
    if (t < e && (*t == 'e' || *t == 'E')) {
        int eneg = 0;
        int64_t x = 0;
        t++;
        if (*t == '+' || *t == '-') eneg = *t++ == '-';
        for (; t < e && *t >= '0' && *t <= '9'; t++)
            if (x < 1000000) x = x * 10 + (*t - '0');
        dexp += eneg ? -x : x;
    }
    if (dropped_first > 0) inexact = 1;
    int64_t k = dexp + scale;
    /* Digits beyond the 19th decide rounding only when nothing more
     * significant is cut below (k >= 0); mant < 10^19, so +1 fits. */
    if (k >= 0 && dropped_first >= 5) mant++;
    if (mant == 0) { *out = 0; return inexact && exact ? -2 : 0; }
    if (k >= 0) {
        for (int64_t i = 0; i < k; i++) {
            if (mant > UINT64_MAX / 10) return -1;
            mant *= 10;
        }
    } else if (k < -40) {
        mant = 0;
        inexact = 1;
    } else {
        int last = 0;
        for (int64_t i = 0; i < -k; i++) {
            if (last) inexact = 1;
            last = (int)(mant % 10);
            mant /= 10;
        }
        if (last) inexact = 1;
        if (last >= 5) mant++;
    }
    if (exact && inexact) return -2;
    if (mant > (uint64_t)INT64_MAX) return -1;
    *out = neg ? -(int64_t)mant : (int64_t)mant;
    return 0;
}

/* Matches literal word w at js->p.  Returns 0 or an error. */
static int jword(js_t *js, const char *w) {
    size_t n = strlen(w);
    if ((size_t)(js->end - js->p) < n || memcmp(js->p, w, n) != 0)
        return jfail(js, "unexpected character");
    js->p += n;
    return 0;
}

/* Skips one scalar (string, number, true, false, null) at js->p.  Returns
 * 0 or an error. */
static int skip_scalar(js_t *js) {
    const char *t;
    size_t n;
    if (js->p >= js->end) return jfail(js, "unexpected end of file");
    switch (*js->p) {
    case '"': return jstring(js, 0);
    case 't': return jword(js, "true");
    case 'f': return jword(js, "false");
    case 'n': return jword(js, "null");
    default: return jnumber(js, &t, &n);
    }
}

/* Reads an object member's key (js->p at its '"'; keep: as jstring) and
 * the ':' after it.  Returns 0 or an error. */
static int member_key(js_t *js, int keep) {
    int rc;
    if (js->p >= js->end || *js->p != '"') return jfail(js, "expected a key");
    if ((rc = jstring(js, keep))) return rc;
    ws(js);
    if (js->p >= js->end || *js->p != ':') return jfail(js, "expected ':'");
    js->p++;
    return 0;
}

/* Skips one complete JSON value of any shape, iteratively, nesting at most
 * SKIP_DEPTH deep.  Returns 0 or an error. */
static int skip_value(js_t *js) {
    unsigned char st[SKIP_DEPTH];
    int d = 0, rc;
    for (;;) {
        ws(js);
        if (js->p >= js->end) return jfail(js, "unexpected end of file");
        unsigned c = *js->p;
        if (c == '{' || c == '[') {
            js->p++;
            ws(js);
            if (js->p < js->end && *js->p == (c == '{' ? '}' : ']')) {
                js->p++;
            } else {
                if (d >= SKIP_DEPTH) return jfail(js, "nesting too deep");
                st[d++] = (unsigned char)c;
                if (c == '{' && (rc = member_key(js, 0))) return rc;
                continue;
            }
        } else if ((rc = skip_scalar(js))) {
            return rc;
        }
        /* after a value: close containers or move to the next member */
        for (;;) {
            if (d == 0) return 0;
            ws(js);
            if (js->p >= js->end) return jfail(js, "unexpected end of file");
            c = *js->p;
            unsigned close = st[d - 1] == '{' ? '}' : ']';
            if (c == close) { js->p++; d--; continue; }
            if (c != ',') return jfail(js, "expected ',' or a closing bracket");
            js->p++;
            if (st[d - 1] == '{') {
                ws(js);
                if ((rc = member_key(js, 0))) return rc;
            }
            break;
        }
    }
}

/* Object iteration: call with js->p at '{' and *first = 1; each call
 * leaves the next key in js->s and js->p after its ':' and returns 1, or
 * returns 0 after the closing '}', or an error. */
static int obj_next(js_t *js, int *first) {
    int rc;
    ws(js);
    if (*first) {
        *first = 0;
        if (js->p >= js->end || *js->p != '{') return jfail(js, "expected an object");
        js->p++;
        ws(js);
        if (js->p < js->end && *js->p == '}') { js->p++; return 0; }
    } else {
        if (js->p >= js->end) return jfail(js, "unexpected end of file");
        if (*js->p == '}') { js->p++; return 0; }
        if (*js->p != ',') return jfail(js, "expected ',' or '}'");
        js->p++;
        ws(js);
    }
    if ((rc = member_key(js, 1))) return rc;
    ws(js);
    if (js->p >= js->end) return jfail(js, "unexpected end of file");
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Events                                                                    */
/* ------------------------------------------------------------------------ */

/* A growable owned string. */
typedef struct {
    char *p;
    size_t n, cap;
    int set;
} str_t;

/* Copies the scratch string into d.  Returns 0 or -1 (no memory). */
static int str_take(str_t *d, const js_t *js) {
    if (js->slen + 1 > d->cap) {
        size_t c = d->cap ? d->cap : 64;
        while (c < js->slen + 1) c *= 2;
        char *p = realloc(d->p, c);
        if (!p) return -1;
        d->p = p;
        d->cap = c;
    }
    memcpy(d->p, js->s, js->slen + 1);
    d->n = js->slen;
    d->set = 1;
    return 0;
}

/* A field of an event that is converted once ph is known: kind 'n' (number,
 * text in tok/len), 's' (string, decoded in str), 'o' (other), 0 absent. */
typedef struct {
    char kind;
    const char *tok;
    size_t len;
} field_t;

/* The numeric args of one event (kept while ph is unknown or "C"): keys
 * NUL-terminated one after the other in kbuf, number texts in the
 * window. */
typedef struct {
    char *kbuf;
    size_t klen, kcap;
    size_t *koff;
    const char **tok;
    size_t *tlen;
    size_t n, cap;
} nargs_t;

/* One event's interesting fields (buffers reused from event to event). */
typedef struct {
    str_t ph, name, aname, alabels, pid_s, tid_s, cat, bp, id_s, bind_s;
    field_t ts, dur, pid, tid, asort, id, bind;
    int view;   /* "spanscope_view" present: a second view of a span */
    nargs_t na;
} event_t;

/* Reads a value into f: numbers keep their text, strings are decoded into
 * sbuf (when given), anything else is skipped.  Returns 0 or an error. */
static int read_field(js_t *js, field_t *f, str_t *sbuf) {
    int rc;
    if (*js->p == '"') {
        if ((rc = jstring(js, 1))) return rc;
        if (sbuf && str_take(sbuf, js)) { js->oom = 1; return jfail(js, ""); }
        f->kind = sbuf ? 's' : 'o';
        return 0;
    }
    if (*js->p == '-' || (*js->p >= '0' && *js->p <= '9')) {
        f->kind = 'n';
        return jnumber(js, &f->tok, &f->len);
    }
    f->kind = 'o';
    return skip_value(js);
}

/* Reads a string value into d (any other type is skipped, d unset). */
static int read_str(js_t *js, str_t *d) {
    int rc;
    if (*js->p != '"') return skip_value(js);
    if ((rc = jstring(js, 1))) return rc;
    if (str_take(d, js)) { js->oom = 1; return jfail(js, ""); }
    return 0;
}

/* Adds the key in js->s and the number text (tok, len) to na.  Returns 0
 * or -1 (no memory). */
static int nargs_add(nargs_t *na, const js_t *js, const char *tok,
                     size_t len) {
    size_t need = na->klen + js->slen + 1;
    if (need > na->kcap) {
        size_t c = na->kcap ? na->kcap : 128;
        while (c < need) c *= 2;
        char *p = realloc(na->kbuf, c);
        if (!p) return -1;
        na->kbuf = p;
        na->kcap = c;
    }
    if (na->n == na->cap) {
        size_t c = na->cap ? na->cap * 2 : 8;
        size_t *ko = realloc(na->koff, c * sizeof *ko);
        if (ko) na->koff = ko;
        const char **tk = ko ? realloc(na->tok, c * sizeof *tk) : NULL;
        if (tk) na->tok = tk;
        size_t *tl = tk ? realloc(na->tlen, c * sizeof *tl) : NULL;
        if (!tl) return -1;
        na->tlen = tl;
        na->cap = c;
    }
    memcpy(na->kbuf + na->klen, js->s, js->slen + 1);
    na->koff[na->n] = na->klen;
    na->klen = need;
    na->tok[na->n] = tok;
    na->tlen[na->n++] = len;
    return 0;
}

/* 1 while ev's numeric args are worth keeping (ph unknown yet, or "C"). */
static int want_nargs(const event_t *ev) {
    return !ev->ph.set || (ev->ph.n == 1 && ev->ph.p[0] == 'C');
}

/* Parses the args object at js->p into ev.  Returns 0 or an error. */
static int parse_args(js_t *js, event_t *ev) {
    int af = 1, rc;
    while ((rc = obj_next(js, &af)) == 1) {
        const char *ak = js->s;
        if (*js->p == '-' || (*js->p >= '0' && *js->p <= '9')) {
            field_t f = {0};
            if ((rc = read_field(js, &f, NULL))) return rc;
            if (!strcmp(ak, "sort_index")) ev->asort = f;
            /* js->s still holds the key: a number decodes no string */
            if (want_nargs(ev) && nargs_add(&ev->na, js, f.tok, f.len)) {
                js->oom = 1;
                return jfail(js, "");
            }
        } else if (!strcmp(ak, "name")) rc = read_str(js, &ev->aname);
        else if (!strcmp(ak, "labels")) rc = read_str(js, &ev->alabels);
        else rc = skip_value(js);
        if (rc) return rc;
    }
    return rc;
}

/* Parses one member (key in js->s) of an event object into ev.  Returns
 * 0 or an error. */
static int parse_member(js_t *js, event_t *ev) {
    const char *k = js->s;
    if (!strcmp(k, "ph")) return read_str(js, &ev->ph);
    if (!strcmp(k, "name")) return read_str(js, &ev->name);
    if (!strcmp(k, "cat")) return read_str(js, &ev->cat);
    if (!strcmp(k, "bp")) return read_str(js, &ev->bp);
    if (!strcmp(k, "ts")) return read_field(js, &ev->ts, NULL);
    if (!strcmp(k, "dur")) return read_field(js, &ev->dur, NULL);
    if (!strcmp(k, "pid")) return read_field(js, &ev->pid, &ev->pid_s);
    if (!strcmp(k, "tid")) return read_field(js, &ev->tid, &ev->tid_s);
    if (!strcmp(k, "id")) return read_field(js, &ev->id, &ev->id_s);
    if (!strcmp(k, "bind_id")) return read_field(js, &ev->bind, &ev->bind_s);
    if (!strcmp(k, "args") && *js->p == '{') return parse_args(js, ev);
    if (!strcmp(k, "spanscope_view")) ev->view = 1;
    return skip_value(js);
}

/* Parses one event object into ev.  Returns 0 or an error. */
static int parse_event(js_t *js, event_t *ev) {
    int first = 1, rc;
    ev->ph.set = ev->name.set = ev->aname.set = ev->alabels.set = 0;
    ev->cat.set = ev->bp.set = 0;
    ev->view = 0;
    ev->ts.kind = ev->dur.kind = ev->pid.kind = ev->tid.kind = 0;
    ev->asort.kind = ev->id.kind = ev->bind.kind = 0;
    ev->na.n = ev->na.klen = 0;
    while ((rc = obj_next(js, &first)) == 1)
        if ((rc = parse_member(js, ev)) < 0) return rc;
    return rc;
}

/* Converts an event's pid or tid field to an integer: a JSON integer or a
 * string holding one; absent is 0.  Returns 0 or -1 (unusable). */
static int id_of(const field_t *f, const str_t *s, int64_t *out) {
    if (f->kind == 0) { *out = 0; return 0; }
    if (f->kind == 'n') return num_scaled(f->tok, f->len, 0, 1, out) ? -1 : 0;
    if (f->kind == 's') {
        const char *p = s->p;
        size_t i = (p[0] == '-'), n = s->n;
        if (i >= n || n - i > 18) return -1;
        for (size_t j = i; j < n; j++)
            if (p[j] < '0' || p[j] > '9') return -1;
        return num_scaled(p, n, 0, 1, out) ? -1 : 0;
    }
    return -1;
}

/* Formats the "event N: what" message and returns SPS_EFORMAT. */
static int ev_fail(js_t *js, uint64_t idx, const char *what) {
    sps__err_set("%s: not a valid trace JSON file: event %llu: %s",
                       js->path, (unsigned long long)idx, what);
    return SPS_EFORMAT;
}

/* Parses "rank N" into *rank.  Returns 1 if it matched. */
static int parse_rank_label(const char *s, int64_t *rank) {
    if (strncmp(s, "rank ", 5) != 0) return 0;
    s += 5;
    int64_t v = 0;
    if (*s < '0' || *s > '9') return 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > 100000000) return 0;
        v = v * 10 + (*s - '0');
    }
    if (*s) return 0;
    *rank = v;
    return 1;
}

/* Replaces *dst (owned, may be NULL) with a copy of s.  Returns 0 or -1. */
static int set_owned(char **dst, const char *s) {
    char *c = strdup(s);
    if (!c) return -1;
    free(*dst);
    *dst = c;
    return 0;
}

/* Hands span [start, end) (relative times) of first-appearance thread th
 * to the sort.  Returns 0, SPS_ENOMEM or SPS_EIO (message set). */
static int add_span(cjr_t *r, int64_t start, int64_t end, uint32_t th,
                    uint32_t name) {
    sps__srec_t x = {start, end, th, name, name};
    int rc = sps__xsort_add(r->xs, &x);
    if (rc) return rc;
    if (sps__xsort_count(r->xs) == 1 || start < r->tmin) r->tmin = start;
    if (sps__xsort_count(r->xs) == 1 || end > r->tmax) r->tmax = end;
    return 0;
}

/* Reads the JSON number text t (n bytes, validated) as a double, whatever
 * the locale.  Returns 0, or -1 when it is not finite or no memory. */
static int num_double(const char *t, size_t n, double *out) {
    char tmp[64], *b = n < sizeof tmp ? tmp : malloc(n + 1);
    if (!b) return -1;
    memcpy(b, t, n);
    b[n] = 0;
    const char *dp = localeconv()->decimal_point;
    if (dp && dp[0] && dp[0] != '.' && !dp[1]) {
        char *d = strchr(b, '.');
        if (d) *d = dp[0];
    }
    *out = strtod(b, NULL);
    if (b != tmp) free(b);
    return isfinite(*out) ? 0 : -1;
}

/* The flow id in f (a number: its value when it is an integer in uint64
 * or int64, else its text hashed) or s (a string, hashed).  Returns 0, or
 * -1 when there is none. */
static int flow_id_of(const field_t *f, const str_t *s, uint64_t *out) {
    if (f->kind == 's') { *out = sps__hash_bytes(s->p, s->n); return 0; }
    if (f->kind != 'n') return -1;
    int64_t v;
    uint64_t u = 0;
    size_t i = 0;
    if (!num_scaled(f->tok, f->len, 0, 1, &v)) { *out = (uint64_t)v; return 0; }
    for (; i < f->len && f->tok[i] >= '0' && f->tok[i] <= '9'; i++) {
        unsigned d = (unsigned)(f->tok[i] - '0');
        if (u > (UINT64_MAX - d) / 10) break;
        u = u * 10 + d;
    }
    *out = i == f->len ? u : sps__hash_bytes(f->tok, f->len);
    return 0;
}

/* The pid, tid and ts (relative ns) of a counter or flow event.  Returns
 * 0, or -1 when one is missing or unusable. */
static int extra_where(const event_t *ev, int64_t *pid, int64_t *tid,
                       int64_t *ts) {
    if (id_of(&ev->pid, &ev->pid_s, pid) || id_of(&ev->tid, &ev->tid_s, tid))
        return -1;
    if (ev->ts.kind != 'n' || num_scaled(ev->ts.tok, ev->ts.len, 3, 0, ts))
        return -1;
    return 0;
}

/* Records the samples of a C event: one per numeric arg with a finite
 * value, ord their order in the file.  Returns 0 or SPS_ENOMEM (via
 * jfail). */
static int use_counter(cjr_t *r, js_t *js, const event_t *ev) {
    int64_t pid, tid, ts;
    if (extra_where(ev, &pid, &tid, &ts)) { r->dropped++; return 0; }
    int64_t pi = get_proc(r, pid);
    int64_t ni = intern_name(r, ev->name.set ? ev->name.p : "",
                             ev->name.set ? ev->name.n : 0);
    if (pi < 0 || ni < 0) goto oom;
    for (size_t i = 0; i < ev->na.n; i++) {
        double v;
        if (num_double(ev->na.tok[i], ev->na.tlen[i], &v)) continue;
        const char *k = ev->na.kbuf + ev->na.koff[i];
        int64_t ki = intern_key(r, k, strlen(k));
        if (ki < 0 || sps__grow((void **)&r->rc, &r->rc_cap, r->nrc, sizeof *r->rc))
            goto oom;
        r->rc[r->nrc] = (rcounter_t){(uint32_t)pi, (uint32_t)ni,
                                     (uint32_t)ki, ts, v, r->nrc};
        r->nrc++;
    }
    return 0;
oom:
    js->oom = 1;
    return jfail(js, "");
}

/* Records an s/t/f event as a flow point.  Returns 0 or SPS_ENOMEM (via
 * jfail). */
static int use_flow(cjr_t *r, js_t *js, const event_t *ev, char ph) {
    int64_t pid, tid, ts;
    uint64_t id;
    if (extra_where(ev, &pid, &tid, &ts) ||
        (flow_id_of(&ev->id, &ev->id_s, &id) &&
         flow_id_of(&ev->bind, &ev->bind_s, &id))) {
        r->dropped++;
        return 0;
    }
    const str_t *nm = ev->name.set ? &ev->name : ev->cat.set ? &ev->cat : NULL;
    int64_t ti = get_thread(r, pid, tid);
    int64_t ni = intern_name(r, nm ? nm->p : "", nm ? nm->n : 0);
    if (ti < 0 || ni < 0 ||
        sps__grow((void **)&r->fl, &r->fl_cap, r->nfl, sizeof *r->fl)) {
        js->oom = 1;
        return jfail(js, "");
    }
    int enc = ev->bp.set && ev->bp.n == 1 && ev->bp.p[0] == 'e';
    r->fl[r->nfl++] = (sps__tl_flow_t){id, (uint32_t)ti, (uint32_t)ni, ts,
                                       ph, (uint8_t)enc};
    return 0;
}

/* Acts on one parsed event (index idx in the file): records a span, a B/E
 * event, metadata, a counter sample or a flow point.  Returns 0,
 * SPS_EFORMAT or SPS_ENOMEM. */
static int use_event(cjr_t *r, js_t *js, event_t *ev, uint64_t idx) {
    if (!ev->ph.set || ev->ph.n != 1) return 0;
    char ph = ev->ph.p[0];
    if (ph == 'C') return use_counter(r, js, ev);
    if (ph == 's' || ph == 't' || ph == 'f') return use_flow(r, js, ev, ph);
    if (ph != 'X' && ph != 'B' && ph != 'E' && ph != 'M') return 0;
    /* not spans of the program: our writer's cpu_op view of a span it
     * wrote as user_annotation just before, and kineto's "Trace" span over
     * the profiled window (its pid may be a string: "Spans") */
    if (ph == 'X' && (ev->view || (ev->cat.set && !strcmp(ev->cat.p, "Trace"))))
        return 0;
    int64_t pid, tid, ts = 0, dur = 0;
    if (id_of(&ev->pid, &ev->pid_s, &pid) || id_of(&ev->tid, &ev->tid_s, &tid)) {
        if (ph == 'M') return 0;
        return ev_fail(js, idx, "pid/tid is not an integer");
    }
    if (ph == 'M') {
        if (!ev->name.set) return 0;
        const char *what = ev->name.p;
        int64_t sort;
        int has_sort = ev->asort.kind == 'n' &&
                       !num_scaled(ev->asort.tok, ev->asort.len, 0, 1, &sort);
        if (!strncmp(what, "process_", 8)) {
            int64_t pi = get_proc(r, pid);
            if (pi < 0) goto oom;
            rproc_t *p = &r->rp[pi];
            if (!strcmp(what, "process_name") && ev->aname.set) {
                if (set_owned(&p->name, ev->aname.p)) goto oom;
            } else if (!strcmp(what, "process_labels") && ev->alabels.set) {
                parse_rank_label(ev->alabels.p, &p->rank);
            } else if (!strcmp(what, "process_sort_index") && has_sort) {
                p->sort = sort;
                p->has_sort = 1;
            }
        } else if (!strncmp(what, "thread_", 7)) {
            int64_t ti = get_thread(r, pid, tid);
            if (ti < 0) goto oom;
            rthread_t *t = &r->rt[ti];
            if (!strcmp(what, "thread_name") && ev->aname.set) {
                if (set_owned(&t->name, ev->aname.p)) goto oom;
            } else if (!strcmp(what, "thread_sort_index") && has_sort) {
                t->sort = sort;
                t->has_sort = 1;
            }
        }
        return 0;
    }
    if (ev->ts.kind != 'n') return ev_fail(js, idx, "\"ts\" missing or not a number");
    if (num_scaled(ev->ts.tok, ev->ts.len, 3, 0, &ts))
        return ev_fail(js, idx, "\"ts\" out of range");
    if (ph == 'X') {
        if (ev->dur.kind && ev->dur.kind != 'n')
            return ev_fail(js, idx, "\"dur\" is not a number");
        if (ev->dur.kind && num_scaled(ev->dur.tok, ev->dur.len, 3, 0, &dur))
            return ev_fail(js, idx, "\"dur\" out of range");
        if (dur < 0) { r->dropped++; return 0; }
        if (ts > 0 && dur > INT64_MAX - ts)
            return ev_fail(js, idx, "\"ts\" + \"dur\" out of range");
    }
    int64_t ti = get_thread(r, pid, tid);
    int64_t ni = ph == 'E' ? 0
               : intern_name(r, ev->name.set ? ev->name.p : "",
                             ev->name.set ? ev->name.n : 0);
    if (ti < 0 || ni < 0) goto oom;
    int rc;
    if (ph == 'X') {
        rc = add_span(r, ts, ts + dur, (uint32_t)ti, (uint32_t)ni);
    } else {
        sps__srec_t b = {ts, ph == 'E', (uint32_t)ti, (uint32_t)ni, idx};
        rc = sps__xsort_add(r->xbe, &b);
    }
    if (rc == SPS_EIO) return rc;
    if (rc) goto oom;
    return 0;
oom:
    js->oom = 1;
    return jfail(js, "");
}

/* ------------------------------------------------------------------------ */
/* The text window                                                           */
/* ------------------------------------------------------------------------ */

/* Sets the message for a gzread failure and returns SPS_EFORMAT. */
static int gz_fail(js_t *js) {
    int zerr = Z_OK;
    const char *m = gzerror(js->gz, &zerr);
    js->hard = 1;
    if (zerr == Z_MEM_ERROR) {
        sps__err_set("%s: out of memory", js->path);
        return SPS_ENOMEM;
    }
    if (zerr == Z_ERRNO) {
        sps__err_set("%s: %s", js->path, strerror(errno));
        return SPS_EIO;
    }
    if (m && strstr(m, "unexpected end"))
        sps__err_set("%s: truncated gzip data", js->path);
    else
        sps__err_set("%s: corrupt gzip data (%s)", js->path,
                           m && *m ? m : "inflate failed");
    return SPS_EFORMAT;
}

/* Moves the text from keep on to the front of the window (growing it to
 * twice its size when keep is its start and it is full) and reads more.
 * Pointers into the window stay valid relative to keep.  Returns 0 (js->eof
 * set once all text is in), SPS_EFORMAT (corrupt or over-expanding gzip),
 * SPS_EIO or SPS_ENOMEM. */
static int refill(js_t *js, const unsigned char *keep) {
    unsigned char *b = (unsigned char *)js->begin;
    size_t k = (size_t)(keep - b), have = (size_t)(js->end - keep);
    size_t pofs = (size_t)(js->p - keep);
    if (k) memmove(b, keep, have);
    js->off += k;
    if (!k && have == js->cap) {
        if (js->cap > SIZE_MAX / 4) { js->oom = 1; return jfail(js, ""); }
        unsigned char *nb = realloc(b, js->cap * 2 + 1);
        if (!nb) { js->oom = 1; return jfail(js, ""); }
        b = nb;
        js->cap *= 2;
    }
    js->begin = b;
    js->p = b + pofs;
    js->end = b + have;
    while (!js->eof && (size_t)(js->end - b) < js->cap) {
        size_t room = js->cap - (size_t)(js->end - b);
        unsigned ask = room > (1u << 30) ? (1u << 30) : (unsigned)room;
        int got = gzread(js->gz, b + (js->end - b), ask);
        if (got < 0) return gz_fail(js);
        if (got == 0) { js->eof = 1; break; }
        js->end += got;
        js->total += (uint64_t)got;
        if (!gzdirect(js->gz) && js->total > js->limit) {
            js->hard = 1;
            sps__err_set("%s: gzip data expands to more than %llu bytes",
                               js->path, (unsigned long long)js->limit);
            return SPS_EFORMAT;
        }
        if ((size_t)got < ask) continue;
    }
    return 0;
}

/* Skips whitespace, reading more text as needed (whitespace is never
 * kept).  After it js->p < js->end, or js->p == js->end at the end of the
 * text.  Returns 0 or an error. */
static int ws_fill(js_t *js) {
    for (;;) {
        ws(js);
        if (js->p < js->end || js->eof) return 0;
        int rc = refill(js, js->p);
        if (rc) return rc;
    }
}

/* A parse step: must be restartable (no effect outside js but through
 * arg, and arg only on success). */
typedef int (*step_fn)(cjr_t *r, js_t *js, void *arg);

/* Runs fn at the next non-blank text with WIN_AHEAD bytes in view; when it
 * fails near the end of the window before all text is in, reruns it from
 * the same place with more text.  Returns fn's result or a read error. */
static int step(cjr_t *r, js_t *js, step_fn fn, void *arg) {
    int rc = ws_fill(js);
    if (rc) return rc;
    if ((size_t)(js->end - js->p) < WIN_AHEAD && !js->eof &&
        (rc = refill(js, js->p)))
        return rc;
    for (;;) {
        const unsigned char *start = js->p;
        js->fail_at = NULL;
        rc = fn(r, js, arg);
        if (rc != SPS_EFORMAT || js->eof || js->hard || !js->fail_at ||
            js->fail_at + NEAR_END < js->end)
            return rc;
        js->p = start;
        if ((rc = refill(js, start))) return rc;
    }
}

/* ------------------------------------------------------------------------ */
/* Document structure                                                        */
/* ------------------------------------------------------------------------ */

/* step_fn: one event object into arg (an event_t). */
static int event_step(cjr_t *r, js_t *js, void *arg) {
    (void)r;
    return parse_event(js, arg);
}

/* Parses the events array at js->p ('[').  With lenient_end (a bare
 * top-level array), the file may end where ',' or ']' is expected.
 * Returns 0 or an error. */
static int parse_events(cjr_t *r, js_t *js, int lenient_end) {
    event_t ev;
    uint64_t idx = 0;
    int rc;
    memset(&ev, 0, sizeof ev);
    js->p++; /* '[' */
    if ((rc = ws_fill(js))) goto out;
    if (js->p < js->end && *js->p == ']') { js->p++; goto out; }
    for (;;) {
        if ((rc = ws_fill(js))) break;
        if (lenient_end && js->p >= js->end) break;
        if (js->p >= js->end || *js->p != '{') {
            rc = jfail(js, "expected an event object");
            break;
        }
        if ((rc = step(r, js, event_step, &ev))) break;
        if ((rc = use_event(r, js, &ev, idx++))) break;
        if ((rc = ws_fill(js))) break;
        if (lenient_end && js->p >= js->end) break;
        if (js->p >= js->end) { rc = jfail(js, "unexpected end of file"); break; }
        if (*js->p == ']') { js->p++; break; }
        if (*js->p != ',') { rc = jfail(js, "expected ',' or ']'"); break; }
        js->p++;
    }
out:
    free(ev.ph.p); free(ev.name.p); free(ev.aname.p); free(ev.alabels.p);
    free(ev.pid_s.p); free(ev.tid_s.p); free(ev.cat.p); free(ev.bp.p);
    free(ev.id_s.p); free(ev.bind_s.p);
    free(ev.na.kbuf); free(ev.na.koff); free(ev.na.tok); free(ev.na.tlen);
    return rc;
}

/* Reads the spanscopeClock object at js->p into r (restartable: r's
 * fields are set only at the end).  Returns 0 or an error. */
static int read_clock(cjr_t *r, js_t *js) {
    int first = 1, rc, nw = 0, nm = 0;
    int64_t w = 0, m = 0;
    char host[256] = "";
    while ((rc = obj_next(js, &first)) == 1) {
        int is_w = !strcmp(js->s, "wall_anchor_ns");
        int is_m = !strcmp(js->s, "mono_anchor_ns");
        if (!strcmp(js->s, "hostname") && *js->p == '"') {
            if ((rc = jstring(js, 1))) return rc;
            snprintf(host, sizeof host, "%s", js->slen < sizeof host ? js->s : "");
            continue;
        }
        field_t f = {0};
        if ((rc = read_field(js, &f, NULL))) return rc;
        if ((is_w || is_m) && f.kind == 'n' &&
            !num_scaled(f.tok, f.len, 0, 1, is_w ? &w : &m)) {
            if (is_w) nw = 1;
            else nm = 1;
        }
    }
    if (rc < 0) return rc;
    if (nw && nm && w > 0) {
        if (set_owned(&r->hostname, host)) {
            js->oom = 1;
            return jfail(js, "");
        }
        r->wall_anchor = w;
        r->mono_anchor = m;
    }
    return 0;
}

/* Top-level members other than traceEvents: reads the value at js->p of
 * key k (a copy) into r.  Returns 0 or an error. */
static int top_value(cjr_t *r, js_t *js, const char *k) {
    int rc = 0;
    if (!strcmp(k, "baseTimeNanoseconds")) {
        const char *t;
        size_t n;
        if ((rc = jnumber(js, &t, &n))) return rc;
        if (num_scaled(t, n, 0, 0, &r->base_ns))
            return jfail(js, "baseTimeNanoseconds out of range");
    } else if (!strcmp(k, "traceName") && *js->p == '"') {
        if ((rc = jstring(js, 1))) return rc;
        if (set_owned(&r->trace_name, js->s)) {
            js->oom = 1;
            return jfail(js, "");
        }
    } else if (!strcmp(k, "distributedInfo") && *js->p == '{') {
        int df = 1;
        while ((rc = obj_next(js, &df)) == 1) {
            const char *dk = js->s;
            if (!strcmp(dk, "backend") && *js->p == '"') {
                if ((rc = jstring(js, 1))) return rc;
                if (set_owned(&r->backend, js->s)) {
                    js->oom = 1;
                    return jfail(js, "");
                }
                continue;
            }
            int is_rank = !strcmp(dk, "rank");
            int is_ws = !strcmp(dk, "world_size");
            field_t f = {0};
            if ((rc = read_field(js, &f, NULL))) return rc;
            int64_t v;
            if ((is_rank || is_ws) && f.kind == 'n' &&
                !num_scaled(f.tok, f.len, 0, 1, &v)) {
                if (is_rank) { r->rank = v; r->has_rank = 1; }
                else r->world_size = v;
            }
        }
    } else if (!strcmp(k, "spanscopeClock") && *js->p == '{') {
        rc = read_clock(r, js);
    } else {
        rc = skip_value(js);
    }
    return rc < 0 ? rc : 0;
}

/* Top-level iteration state for top_step. */
typedef struct {
    int first;    /* obj_next's flag */
    int more;     /* a member was read (0: the closing '}') */
    int events;   /* it is traceEvents, js->p at its '[' */
} top_t;

/* step_fn: the next top-level member: traceEvents stops at its '[',
 * others are read whole. */
static int top_step(cjr_t *r, js_t *js, void *arg) {
    top_t *t = arg;
    int first = t->first;
    int rc = obj_next(js, &first);
    if (rc < 0) return rc;
    if (rc == 0) {
        t->more = 0;
        t->first = first;
        return 0;
    }
    int events = !strcmp(js->s, "traceEvents");
    if (events) {
        if (*js->p != '[') return jfail(js, "traceEvents is not an array");
    } else {
        char key[32];
        snprintf(key, sizeof key, "%s", strlen(js->s) < sizeof key ? js->s : "");
        if ((rc = top_value(r, js, key))) return rc;
        ws(js); /* a cut value (a number) must not pass for a whole one */
        if (js->p >= js->end) return jfail(js, "unexpected end of file");
    }
    t->more = 1;
    t->events = events;
    t->first = first;
    return 0;
}

/* Parses the whole document.  Returns 0 or an error. */
static int parse_doc(cjr_t *r, js_t *js) {
    int rc, have_events = 0;
    if ((rc = refill(js, js->p))) return rc;
    if (js->end - js->p >= 3 && !memcmp(js->p, "\xEF\xBB\xBF", 3)) js->p += 3;
    if ((rc = ws_fill(js))) return rc;
    if (js->p >= js->end) return jfail(js, "empty file");
    if (*js->p == '[') {
        if ((rc = parse_events(r, js, 1))) return rc;
    } else if (*js->p == '{') {
        top_t t = {1, 0, 0};
        for (;;) {
            if ((rc = step(r, js, top_step, &t))) return rc;
            if (!t.more) break;
            if (!t.events) continue;
            if (have_events) return jfail(js, "two traceEvents arrays");
            have_events = 1;
            if ((rc = parse_events(r, js, 0))) return rc;
        }
        if (!have_events) return jfail(js, "no traceEvents array");
    } else {
        return jfail(js, "expected '{' or '['");
    }
    if ((rc = ws_fill(js))) return rc;
    if (js->p != js->end) return jfail(js, "trailing data after the trace");
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Building the timeline                                                     */
/* ------------------------------------------------------------------------ */

/* Orders B/E records by (thread, ts, file order). */
static int cmp_be(const void *a, const void *b) {
    const sps__srec_t *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* Orders span records by (start, -end, thread, name). */
static int cmp_span(const void *a, const void *b) {
    const sps__srec_t *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* A sort key for processes and threads: (sort_index or after all, seen). */
typedef struct {
    int64_t sort;
    uint64_t seen;
    uint32_t idx;
} okey_t;

/* Orders okey_t by (sort, seen). */
static int cmp_okey(const void *a, const void *b) {
    const okey_t *x = a, *y = b;
    if (x->sort != y->sort) return x->sort < y->sort ? -1 : 1;
    return (x->seen > y->seen) - (x->seen < y->seen);
}

/* Turns matched B/E pairs into spans, reading them sorted by (thread, ts,
 * file order) with one stack of open B events (unmatched ones are counted
 * in r->dropped).  Frees the B/E sort.  Returns 0, SPS_ENOMEM or SPS_EIO. */
static int match_be(cjr_t *r) {
    int rc = sps__xsort_finish(r->xbe);
    sps__srec_t *stack = NULL, e;
    size_t top = 0, cap = 0;
    uint32_t th = 0;
    while (!rc && (rc = sps__xsort_next(r->xbe, &e)) == 1) {
        rc = 0;
        if (e.thread != th) {
            r->dropped += top;
            top = 0;
            th = e.thread;
        }
        if (!e.end) {
            if (sps__grow((void **)&stack, &cap, top, sizeof *stack)) rc = SPS_ENOMEM;
            else stack[top++] = e;
        } else if (!top) {
            r->dropped++;
        } else {
            const sps__srec_t *b = &stack[--top];
            rc = add_span(r, b->start, e.start, b->thread, b->name);
        }
    }
    r->dropped += top;
    free(stack);
    sps__xsort_free(r->xbe);
    r->xbe = NULL;
    return rc;
}

/* The nesting filter: 1 when a span [start, end) of thread th (delivered
 * in order) nests on its thread and is kept, 0 when it overlaps a sibling
 * partially (dropped), -1 out of memory. */
static int nest_keep(cjr_t *r, uint32_t th, int64_t start, int64_t end) {
    return sps__fold_keep(&r->stk[th], start, end);
}

/* Frees the nesting filter's stacks. */
static void free_stacks(cjr_t *r) {
    if (!r->stk) return;
    for (size_t i = 0; i < r->nrt; i++) sps__stack_free(&r->stk[i]);
    free(r->stk);
    r->stk = NULL;
}

/* After a spill: counts the spans the nesting filter keeps (into
 * r->nkept, drops into r->dropped) in one pass, then rewinds the sort and
 * the filter for delivery.  Returns 0, SPS_ENOMEM or SPS_EIO. */
static int count_pass(cjr_t *r) {
    sps__srec_t x;
    int rc;
    while ((rc = sps__xsort_next(r->xs, &x)) == 1) {
        int k = nest_keep(r, x.thread, x.start, x.end);
        if (k < 0) return SPS_ENOMEM;
        if (k) r->nkept++;
        else r->dropped++;
    }
    if (rc) return rc;
    for (size_t i = 0; i < r->nrt; i++) r->stk[i].n = 0;
    r->filter_late = 1;
    return sps__xsort_rewind(r->xs);
}

/* Ends the span sort and runs the nesting filter: in place when the spans
 * stayed in memory, else as a counting pass (and again at delivery).
 * Either way r->nkept is exact.  Returns 0, SPS_ENOMEM or SPS_EIO. */
static int finish_spans(cjr_t *r) {
    int rc = sps__xsort_finish(r->xs);
    if (rc) return rc;
    r->stk = calloc(r->nrt + 1, sizeof *r->stk);
    if (!r->stk) return SPS_ENOMEM;
    size_t n;
    sps__srec_t *a = sps__xsort_memory(r->xs, &n);
    if (!a) return count_pass(r);
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        int k = nest_keep(r, a[i].thread, a[i].start, a[i].end);
        if (k < 0) return SPS_ENOMEM;
        if (k) a[out++] = a[i];
        else r->dropped++;
    }
    sps__xsort_truncate(r->xs, out);
    r->nkept = out;
    free_stacks(r);
    return 0;
}

/* Orders processes and threads (r->procs, r->threads, r->tmap) and fills
 * names.  Returns 0 or SPS_ENOMEM. */
static int build_tables(cjr_t *r) {
    size_t np = r->nrp, nt = r->nrt;
    okey_t *k = malloc((np > nt ? np : nt) * sizeof *k + 1);
    r->tmap = malloc(nt * sizeof *r->tmap + 1);
    r->pmap = malloc(np * sizeof *r->pmap + 1);
    r->procs = calloc(np + 1, sizeof *r->procs);
    r->threads = calloc(nt + 1, sizeof *r->threads);
    r->name_ptrs = malloc((r->nnames + 1) * sizeof *r->name_ptrs);
    if (!k || !r->tmap || !r->pmap || !r->procs || !r->threads ||
        !r->name_ptrs)
        goto oom;
    for (size_t i = 0; i < np; i++) {
        rproc_t *p = &r->rp[i];
        k[i] = (okey_t){p->has_sort ? p->sort : INT64_MAX, p->seen, (uint32_t)i};
        if (p->rank < 0 && r->has_rank) p->rank = r->rank;
        if (!p->name) {
            char buf[48];
            if (p->rank >= 0) snprintf(buf, sizeof buf, "rank %lld", (long long)p->rank);
            else snprintf(buf, sizeof buf, "process %lld", (long long)p->pid);
            if (set_owned(&p->name, buf)) goto oom;
        }
    }
    qsort(k, np, sizeof *k, cmp_okey);
    for (size_t i = 0; i < np; i++) {
        const rproc_t *p = &r->rp[k[i].idx];
        r->procs[i] = (sps__tl_proc_t){p->pid, p->rank, p->name};
        r->pmap[k[i].idx] = (uint32_t)i;
    }
    for (size_t i = 0; i < nt; i++) {
        rthread_t *t = &r->rt[i];
        k[i] = (okey_t){t->has_sort ? t->sort : INT64_MAX, t->seen, (uint32_t)i};
        if (!t->name && set_owned(&t->name, "")) goto oom;
    }
    qsort(k, nt, sizeof *k, cmp_okey);
    for (size_t i = 0; i < nt; i++) {
        const rthread_t *t = &r->rt[k[i].idx];
        r->threads[i] = (sps__tl_thread_t){t->pid, t->tid, t->name};
        r->tmap[k[i].idx] = (uint32_t)i;
    }
    free(k);
    for (size_t i = 0; i < r->nnames; i++) r->name_ptrs[i] = r->names[i];
    return 0;
oom:
    free(k);
    return SPS_ENOMEM;
}

/* Orders raw counter samples by (proc, name, key, file order). */
static int cmp_series(const void *a, const void *b) {
    const rcounter_t *x = a, *y = b;
    if (x->proc != y->proc) return x->proc < y->proc ? -1 : 1;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* Orders raw counter samples by (ts, file order). */
static int cmp_sample(const void *a, const void *b) {
    const rcounter_t *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* Names the series of the samples [a, e) of one (proc, name) (sorted by
 * key): the name itself when the group has one key or the key is the
 * name, else "name.key".  Returns 0 or -1 (no memory). */
static int name_group(cjr_t *r, rcounter_t *a, rcounter_t *e) {
    int one = a->key == e[-1].key;
    const char *nm = r->names[a->name];
    uint32_t key = UINT32_MAX, id = a->name;
    for (rcounter_t *c = a; c < e; c++) {
        if (c->key != key) {
            const char *k = r->keys[c->key];
            key = c->key;
            id = a->name;
            if (!one && strcmp(k, nm)) {
                char *s = NULL;
                int n = asprintf(&s, "%s.%s", nm, k);
                int64_t ni = n < 0 ? -1 : intern_name(r, s, (size_t)n);
                free(s);
                if (ni < 0) return -1;
                id = (uint32_t)ni;
            }
        }
        c->name = id;
    }
    return 0;
}

/* Gives every raw counter sample its series name (name_group per (proc,
 * name)) and puts them back in time order.  Returns 0 or SPS_ENOMEM. */
static int name_counters(cjr_t *r) {
    if (!r->nrc) return 0;
    qsort(r->rc, r->nrc, sizeof *r->rc, cmp_series);
    for (size_t i = 0, j; i < r->nrc; i = j) {
        for (j = i + 1; j < r->nrc && r->rc[j].proc == r->rc[i].proc &&
                        r->rc[j].name == r->rc[i].name; j++) {
        }
        if (name_group(r, r->rc + i, r->rc + j)) return SPS_ENOMEM;
    }
    qsort(r->rc, r->nrc, sizeof *r->rc, cmp_sample);
    return 0;
}

/* Builds the header's counters and flows (absolute times, header process
 * and thread indices, time order); a sample whose time leaves int64 once
 * absolute is dropped.  Returns 0 or SPS_ENOMEM. */
static int finish_extras(cjr_t *r) {
    r->counters = malloc((r->nrc + 1) * sizeof *r->counters);
    if (!r->counters) return SPS_ENOMEM;
    for (size_t i = 0; i < r->nrc; i++) {
        const rcounter_t *c = &r->rc[i];
        int64_t t;
        if (__builtin_add_overflow(c->ts, r->base_ns, &t)) { r->dropped++; continue; }
        r->counters[r->ncounters++] =
            (sps__tl_counter_t){c->name, r->pmap[c->proc], t, c->v};
    }
    size_t out = 0;
    for (size_t i = 0; i < r->nfl; i++) {
        sps__tl_flow_t f = r->fl[i];
        if (__builtin_add_overflow(f.ts_ns, r->base_ns, &f.ts_ns)) {
            r->dropped++;
            continue;
        }
        f.thread = r->tmap[f.thread];
        r->fl[out++] = f;
    }
    r->nfl = out;
    return sps__tl_sort_by_time(r->fl, r->nfl, sizeof *r->fl,
                                offsetof(sps__tl_flow_t, ts_ns));
}

/* Builds the header: matches B/E pairs, orders processes and threads,
 * checks that times stay in range once absolute, and ends the span sort.
 * Returns 0, SPS_EFORMAT, SPS_EIO or SPS_ENOMEM (message set). */
static int build(cjr_t *r, const char *path) {
    int rc = match_be(r);
    if (!rc) rc = name_counters(r);
    if (!rc) rc = build_tables(r);
    if (!rc) rc = finish_extras(r);
    if (rc) goto fail;
    if (sps__xsort_count(r->xs) &&
        ((r->base_ns > 0 && r->tmax > INT64_MAX - r->base_ns) ||
         (r->base_ns < 0 && r->tmin < INT64_MIN - r->base_ns))) {
        sps__err_set("%s: not a valid trace JSON file: a time is "
                           "out of range", path);
        return SPS_EFORMAT;
    }
    if ((rc = finish_spans(r))) goto fail;
    r->h.nnames = r->nnames;
    r->h.names = r->name_ptrs;
    r->h.nprocs = r->nrp;
    r->h.procs = r->procs;
    r->h.nthreads = r->nrt;
    r->h.threads = r->threads;
    r->h.base_ns = r->base_ns;
    r->h.trace_name = r->trace_name;
    r->h.rank = r->has_rank ? r->rank : -1;
    r->h.world_size = r->has_rank ? r->world_size : 0;
    r->h.nspans = r->nkept;
    r->h.wall_anchor_ns = r->wall_anchor;
    r->h.mono_anchor_ns = r->mono_anchor;
    r->h.hostname = r->hostname;
    r->h.backend = r->backend;
    r->h.ncounters = r->ncounters;
    r->h.counters = r->counters;
    r->h.nflows = r->nfl;
    r->h.flows = r->fl;
    return 0;
fail:
    if (rc == SPS_ENOMEM) sps__err_set("%s: out of memory", path);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The reader object                                                         */
/* ------------------------------------------------------------------------ */

/* vt.header: the header (valid until free). */
static const sps__tl_header_t *cjr_header(void *rv) {
    return &((cjr_t *)rv)->h;
}

/* vt.next: the next span (1), 0 at the end, SPS_EIO (the temporary sort
 * file) or SPS_ENOMEM. */
static int cjr_next(void *rv, sps__tl_span_t *s) {
    cjr_t *r = rv;
    if (!s) return SPS_EINVAL;
    for (;;) {
        sps__srec_t x;
        int rc = sps__xsort_next(r->xs, &x);
        if (rc <= 0) return rc;
        if (r->filter_late) {
            int k = nest_keep(r, x.thread, x.start, x.end);
            if (k < 0) return SPS_ENOMEM;
            if (!k) continue; /* counted by count_pass */
        }
        s->name = x.name;
        s->thread = r->tmap[x.thread];
        s->start_ns = x.start + r->base_ns;
        s->end_ns = x.end + r->base_ns;
        s->prior_ns = 0; /* traces do not carry /carried */
        return 1;
    }
}

/* vt.free: frees the reader and everything it owns. */
static void cjr_free(void *rv) {
    cjr_t *r = rv;
    if (!r) return;
    free_stacks(r);
    for (size_t i = 0; i < r->nnames; i++) free(r->names[i]);
    free(r->names);
    for (size_t i = 0; i < r->nrp; i++) free(r->rp[i].name);
    free(r->rp);
    for (size_t i = 0; i < r->nrt; i++) free(r->rt[i].name);
    free(r->rt);
    sps__htab_free(&r->name_ht);
    sps__htab_free(&r->proc_ht);
    sps__htab_free(&r->thr_ht);
    free(r->procs);
    free(r->threads);
    free(r->name_ptrs);
    free(r->trace_name);
    free(r->hostname);
    free(r->backend);
    free(r->tmap);
    free(r->pmap);
    for (size_t i = 0; i < r->nkeys; i++) free(r->keys[i]);
    free(r->keys);
    sps__htab_free(&r->key_ht);
    free(r->rc);
    free(r->fl);
    free(r->counters);
    sps__xsort_free(r->xs);
    sps__xsort_free(r->xbe);
    free(r);
}

/* Spans and B/E events dropped by reader r (unmatched B/E, negative
 * durations, partial overlaps on a thread). */
SPS__HIDDEN uint64_t sps__cjr_dropped(const void *r);
uint64_t sps__cjr_dropped(const void *r) {
    return r ? ((const cjr_t *)r)->dropped : 0;
}

/* Opens path for js: gzread (plain or gzip by its magic), the expansion
 * cap from the file's size, and the window.  Returns 0, SPS_EIO or
 * SPS_ENOMEM with the message set. */
static int js_open(js_t *js, const char *path) {
    memset(js, 0, sizeof *js);
    js->path = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        sps__err_set("%s: %s", path, fd < 0 ? strerror(errno)
                                                  : "not a regular file");
        if (fd >= 0) close(fd);
        return SPS_EIO;
    }
    uint64_t size = (uint64_t)st.st_size;
    uint64_t cap = size > UINT64_MAX / GZ_RATIO ? UINT64_MAX : size * GZ_RATIO;
    js->limit = cap < GZ_FLOOR ? GZ_FLOOR : cap;
    unsigned char *b = malloc(WIN_INIT + 1);
    js->gz = b ? gzdopen(fd, "rb") : NULL;
    if (!js->gz) {
        free(b);
        close(fd);
        sps__err_set("%s: out of memory", path);
        return SPS_ENOMEM;
    }
    gzbuffer(js->gz, 128 << 10);
    js->cap = WIN_INIT;
    js->begin = js->p = js->end = b;
    return 0;
}

/* Releases what js_open acquired. */
static void js_close(js_t *js) {
    if (js->gz) gzclose(js->gz);
    free((void *)js->begin);
    free(js->s);
}

/* Opens a Chrome trace JSON file (gzip detected by its magic bytes, gzip
 * is only a hint).  *out receives a reader owned by the caller (free it
 * through its vt).  Returns 0, SPS_EIO (cannot read, or the temporary sort
 * file failed), SPS_EFORMAT (not a valid trace) or SPS_ENOMEM, with a
 * one-line message set. */
int sps__cjr_open(void **out, const char *path, int gzip) {
    (void)gzip;
    if (!out || !path) return SPS_EINVAL;
    *out = NULL;
    cjr_t *r = calloc(1, sizeof *r);
    if (!r || sps__xsort_new(&r->xs, cmp_span, path) ||
        sps__xsort_new(&r->xbe, cmp_be, path)) {
        cjr_free(r);
        sps__err_set("%s: out of memory", path);
        return SPS_ENOMEM;
    }
    r->vt.header = cjr_header;
    r->vt.next = cjr_next;
    r->vt.free = cjr_free;
    r->rank = -1;
    js_t js;
    int rc = js_open(&js, path);
    if (rc) {
        cjr_free(r);
        return rc;
    }
    rc = parse_doc(r, &js);
    js_close(&js);
    if (!rc) rc = build(r, path);
    if (rc) {
        cjr_free(r);
        return rc;
    }
    *out = r;
    return 0;
}
