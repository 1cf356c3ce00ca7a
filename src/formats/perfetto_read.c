/*
 * perfetto_read.c -- timeline reader for Perfetto protobuf traces
 * (.pftrace): the files perfetto.c writes, and tolerably other TrackEvent
 * traces (unknown fields are skipped by wire type; absolute or incremental
 * timestamps; several sequences; interned or literal names).
 *
 * The file is read one TracePacket at a time (a packet is held whole,
 * so at most the file's size) and parsed with bounds-checked
 * varint/length decoding (no recursion beyond the fixed message nesting of
 * the schema).  Slices are matched per track with a stack; timestamps must
 * not go backwards on a track (that keeps spans properly nested).  Spans
 * go to the external sort (spansort.c), ordered by (start, -end, track,
 * file order), and are delivered from it: memory is bounded by the sort's
 * run, the open-slice stacks and the names/tracks, not the span count.
 *
 * Counter tracks (TrackDescriptor.counter) and their TYPE_COUNTER events
 * (double_counter_value or counter_value) become counter samples: the
 * series is named by the track's name, its process is the parent track's.
 * Flow ids on slice and instant events become flow points on the event's
 * track (flow_ids / flow_ids_old: 's' the first time an id is seen, 't'
 * after; terminating_flow_ids / _old: 'f', taken as enclosing, as torch
 * writes them).  Both are held in memory (bounded by the file's size)
 * and sorted by time for the header.
 *
 * Any malformed input gives SPS_EFORMAT and a one-line message through
 * sps__err_set("<path>: ...").
 */
#include "formats/timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PFR_MAX_FILE ((uint64_t)8 << 30)

/* A bounds-checked view of bytes [p, e). */
typedef struct pfr_buf {
    const uint8_t *p, *e;
} pfr_buf_t;

/* One decoded field: number, wire type, varint value or byte view. */
typedef struct pfr_field {
    uint32_t num;
    int wt;
    uint64_t v;
    pfr_buf_t b;
} pfr_field_t;

/* One entry of a pfr_map_t. */
typedef struct pfr_kv {
    uint64_t a, b;
    uint32_t val;
} pfr_kv_t;

/* A map from a (u64, u64) key to a u32 value: entries in insertion order,
 * found through util.h's index. */
typedef struct pfr_map {
    pfr_kv_t *kv;
    size_t n, cap;
    sps__htab_t index;
} pfr_map_t;

/* An open slice on a track's stack. */
typedef struct pfr_open {
    uint32_t name;
    int64_t start;
    uint64_t ord;
} pfr_open_t;

/* A track (TrackDescriptor, or a uuid seen only on events). */
typedef struct pfr_track {
    uint64_t uuid, parent;
    int has_thread, has_process, used;
    int64_t pid, tid;
    const char *name;       /* thread_name, process_name or track name */
    pfr_open_t *stack;      /* owned */
    size_t n, cap;
    int64_t last_ts;        /* timestamps must not go backwards */
    uint32_t thread;        /* header thread index, assigned at the end */
    int is_counter;         /* has a CounterDescriptor */
    int64_t cname;          /* its counter name id, -1 until needed */
} pfr_track_t;

/* A counter sample as read: its track, absolute time, value. */
typedef struct pfr_sample {
    uint32_t track;
    int64_t ts_ns;
    double v;
} pfr_sample_t;

/* Per-sequence incremental state. */
typedef struct pfr_seq {
    uint32_t def_clock;     /* 0 = none (BOOTTIME by default) */
    int has_def_track;
    uint64_t def_track;
    /* sequence-scoped clocks 64..127 */
    uint8_t clk_valid[64], clk_incr[64];
    uint64_t clk_unit[64];
    int64_t clk_last[64];   /* current value, ns */
    int64_t clk_ref[64];    /* value at the snapshot, ns */
    int64_t clk_mono[64];   /* MONOTONIC at the snapshot */
    uint8_t clk_has_mono[64];
} pfr_seq_t;


/* The reader object.  First member: the dispatch table (timeline.h). */
typedef struct pfr {
    sps__tlr_vt_t vt;
    const char *path;
    sps__tl_header_t h;
    /* owned storage */
    uint8_t *pkt; size_t cappkt;             /* the current packet */
    char **strs; size_t nstrs, capstrs;      /* every copied string */
    const char **names; size_t nnames, capnames;
    sps__tl_proc_t *procs; size_t nprocs, capprocs;
    sps__tl_thread_t *threads;
    pfr_track_t *tracks; size_t ntracks, captracks;
    pfr_seq_t *seqs; size_t nseqs, capseqs;
    sps__xsort_t *xs;       /* spans: thread = track index until delivery */
    uint64_t nspans;
    int64_t min_start;
    pfr_map_t track_map, seq_map, iid_map, str_map, pid_map;
    int64_t builtin_off[64];  /* MONOTONIC - clock c, from snapshots */
    uint8_t builtin_has[64];
    int have_base;
    int64_t base;
    uint64_t ord;
    char err[160];
    pfr_sample_t *smp; size_t nsmp, capsmp; /* counter samples */
    sps__tl_counter_t *counters; size_t ncounters;
    sps__tl_flow_t *flows; size_t nflows, capflows; /* thread: track */
    pfr_map_t flow_seen;    /* flow ids seen so far */
} pfr_t;

/* ------------------------------------------------------------------------ */
/* small helpers                                                              */
/* ------------------------------------------------------------------------ */

/* Records a format error (first one wins); returns SPS_EFORMAT. */
static int pfr_bad(pfr_t *r, const char *what) {
    if (!r->err[0]) snprintf(r->err, sizeof r->err, "%s", what);
    return SPS_EFORMAT;
}

/* The entry of (a, b), or NULL; *p is left where a new one would go. */
static pfr_kv_t *pfr_map_find(const pfr_map_t *m, uint64_t a, uint64_t b,
                              sps__hprobe_t *p) {
    *p = sps__htab_probe(&m->index, sps__hash_pair(a, b));
    for (uint32_t i; sps__htab_next(&m->index, p, &i);)
        if (m->kv[i].a == a && m->kv[i].b == b) return &m->kv[i];
    return NULL;
}

/* Looks (a, b) up: its value or UINT32_MAX. */
static uint32_t pfr_map_get(const pfr_map_t *m, uint64_t a, uint64_t b) {
    sps__hprobe_t p;
    const pfr_kv_t *e = pfr_map_find(m, a, b, &p);
    return e ? e->val : UINT32_MAX;
}

/* Sets (a, b) -> v (inserting or replacing); 0 or -1 (no memory). */
static int pfr_map_put(pfr_map_t *m, uint64_t a, uint64_t b, uint32_t v) {
    sps__hprobe_t p;
    pfr_kv_t *e = pfr_map_find(m, a, b, &p);
    if (e) {
        e->val = v;
        return 0;
    }
    if (m->n >= UINT32_MAX - 1 || sps__htab_make_room(&m->index, &p) ||
        sps__grow((void **)&m->kv, &m->cap, m->n, sizeof *m->kv))
        return -1;
    m->kv[m->n] = (pfr_kv_t){a, b, v};
    sps__htab_put(&m->index, &p, (uint32_t)m->n++);
    return 0;
}

/* Frees m's arrays. */
static void pfr_map_free(pfr_map_t *m) {
    free(m->kv);
    sps__htab_free(&m->index);
}


/* A NUL-terminated copy of b, owned by r (NULL on bad UTF-8 / no memory,
 * with the error recorded). */
static const char *pfr_str(pfr_t *r, pfr_buf_t b) {
    size_t n = (size_t)(b.e - b.p);
    if (!sps__utf8_valid(b.p, n)) {
        pfr_bad(r, "a string is not valid UTF-8");
        return NULL;
    }
    if (sps__grow((void **)&r->strs, &r->capstrs, r->nstrs, sizeof *r->strs))
        return NULL;
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, b.p, n);
    s[n] = 0;
    r->strs[r->nstrs++] = s;
    return s;
}

/* ------------------------------------------------------------------------ */
/* wire format                                                                */
/* ------------------------------------------------------------------------ */

/* Decodes a varint from *b into *v; -1 if truncated or over 10 bytes. */
static int pfr_varint(pfr_buf_t *b, uint64_t *v) {
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        if (b->p >= b->e) return -1;
        uint8_t c = *b->p++;
        x |= (uint64_t)(c & 0x7F) << (7 * i);
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* Reads the next field of message *b into *f: 1 read, 0 at the end, -1 on
 * malformed input (bad tag, truncation, length beyond the buffer, groups). */
static int pfr_next_field(pfr_buf_t *b, pfr_field_t *f) {
    if (b->p >= b->e) return 0;
    uint64_t tag, len;
    if (pfr_varint(b, &tag)) return -1;
    if ((tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF) return -1;
    f->num = (uint32_t)(tag >> 3);
    f->wt = (int)(tag & 7);
    switch (f->wt) {
    case 0:
        return pfr_varint(b, &f->v) ? -1 : 1;
    case 1:
        if (b->e - b->p < 8) return -1;
        memcpy(&f->v, b->p, 8);
        b->p += 8;
        return 1;
    case 5: {
        uint32_t x;
        if (b->e - b->p < 4) return -1;
        memcpy(&x, b->p, 4);
        f->v = x;
        b->p += 4;
        return 1;
    }
    case 2:
        if (pfr_varint(b, &len)) return -1;
        if (len > (uint64_t)(b->e - b->p)) return -1;
        f->b.p = b->p;
        f->b.e = b->p + len;
        b->p += len;
        return 1;
    default:
        return -1; /* groups (3, 4) and invalid types */
    }
}

/* ------------------------------------------------------------------------ */
/* semantic parsing                                                           */
/* ------------------------------------------------------------------------ */

#define PFR_FIELDS(r, buf, f, rc)                                        \
    for (int rc; (rc = pfr_next_field(&(buf), &(f))) != 0;)              \
        if (rc < 0) return pfr_bad((r), "malformed protobuf");           \
        else

/* The sequence state for id, created on first use; NULL if no memory. */
static pfr_seq_t *pfr_seq(pfr_t *r, uint64_t id) {
    uint32_t i = pfr_map_get(&r->seq_map, id, 0);
    if (i != UINT32_MAX) return &r->seqs[i];
    if (r->nseqs >= UINT32_MAX - 1 ||
        sps__grow((void **)&r->seqs, &r->capseqs, r->nseqs, sizeof *r->seqs) ||
        pfr_map_put(&r->seq_map, id, 0, (uint32_t)r->nseqs))
        return NULL;
    pfr_seq_t *s = &r->seqs[r->nseqs++];
    memset(s, 0, sizeof *s);
    return s;
}

/* The track for uuid, created on first use; its index or -1. */
static int64_t pfr_track(pfr_t *r, uint64_t uuid) {
    uint32_t i = pfr_map_get(&r->track_map, uuid, 0);
    if (i != UINT32_MAX) return i;
    if (r->ntracks >= UINT32_MAX - 1 ||
        sps__grow((void **)&r->tracks, &r->captracks, r->ntracks,
                 sizeof *r->tracks) ||
        pfr_map_put(&r->track_map, uuid, 0, (uint32_t)r->ntracks))
        return -1;
    pfr_track_t *t = &r->tracks[r->ntracks];
    memset(t, 0, sizeof *t);
    t->uuid = uuid;
    t->last_ts = INT64_MIN;
    t->cname = -1;
    return (int64_t)r->ntracks++;
}

/* Adds a name string; its index or -1. */
static int64_t pfr_add_name(pfr_t *r, const char *s) {
    if (r->nnames >= UINT32_MAX - 1 ||
        sps__grow((void **)&r->names, &r->capnames, r->nnames, sizeof *r->names))
        return -1;
    r->names[r->nnames] = s;
    return (int64_t)r->nnames++;
}

/* Parses InternedData: event_names (2) {iid 1, name 2} on sequence seq. */
static int pfr_interned(pfr_t *r, uint64_t seq, pfr_buf_t b) {
    pfr_field_t f = {0}, g = {0}; /* f.b is set only for wire type 2 */
    PFR_FIELDS(r, b, f, rc) {
        if (f.num != 2 || f.wt != 2) continue;
        uint64_t iid = 0;
        const char *name = NULL;
        pfr_buf_t e = f.b;
        PFR_FIELDS(r, e, g, rc2) {
            if (g.num == 1 && g.wt == 0) iid = g.v;
            else if (g.num == 2 && g.wt == 2 && !(name = pfr_str(r, g.b)))
                return r->err[0] ? SPS_EFORMAT : SPS_ENOMEM;
        }
        if (!iid) return pfr_bad(r, "interned name without an iid");
        int64_t ni = pfr_add_name(r, name ? name : "");
        if (ni < 0 || pfr_map_put(&r->iid_map, seq, iid, (uint32_t)ni))
            return SPS_ENOMEM;
    }
    return 0;
}

/* Parses a TrackDescriptor. */
static int pfr_descriptor(pfr_t *r, pfr_buf_t b) {
    pfr_field_t f = {0}, g = {0}; /* f.b is set only for wire type 2 */
    uint64_t uuid = 0, parent = 0;
    int has_uuid = 0, has_parent = 0, has_thr = 0, has_proc = 0, ctr = 0;
    int64_t pid = 0, tid = 0;
    const char *name = NULL, *tname = NULL, *pname = NULL;
    PFR_FIELDS(r, b, f, rc) {
        if (f.num == 1 && f.wt == 0) { uuid = f.v; has_uuid = 1; }
        else if (f.num == 5 && f.wt == 0) { parent = f.v; has_parent = 1; }
        else if (f.num == 8 && f.wt == 2) ctr = 1;
        else if (f.num == 2 && f.wt == 2) {
            if (!(name = pfr_str(r, f.b))) return r->err[0] ? SPS_EFORMAT : SPS_ENOMEM;
        } else if ((f.num == 3 || f.num == 4) && f.wt == 2) {
            pfr_buf_t d = f.b;
            if (f.num == 3) has_proc = 1; else has_thr = 1;
            PFR_FIELDS(r, d, g, rc2) {
                if (g.num == 1 && g.wt == 0) pid = (int32_t)(uint32_t)g.v;
                else if (f.num == 4 && g.num == 2 && g.wt == 0)
                    tid = (int32_t)(uint32_t)g.v;
                else if (f.num == 4 && g.num == 5 && g.wt == 2) {
                    if (!(tname = pfr_str(r, g.b))) return r->err[0] ? SPS_EFORMAT : SPS_ENOMEM;
                } else if (f.num == 3 && g.num == 6 && g.wt == 2) {
                    if (!(pname = pfr_str(r, g.b))) return r->err[0] ? SPS_EFORMAT : SPS_ENOMEM;
                }
            }
        }
    }
    if (!has_uuid) return 0; /* nothing refers to it */
    int64_t ti = pfr_track(r, uuid);
    if (ti < 0) return SPS_ENOMEM;
    pfr_track_t *t = &r->tracks[ti];
    if (has_parent) t->parent = parent;
    t->is_counter |= ctr;
    if (has_thr) {
        t->has_thread = 1;
        t->pid = pid;
        t->tid = tid;
        t->name = tname ? tname : (name ? name : "");
    } else if (has_proc) {
        t->has_process = 1;
        t->pid = pid;
        t->name = pname ? pname : (name ? name : "");
    } else if (name && !t->name) {
        t->name = name;
    }
    return 0;
}

/* Parses a ClockSnapshot for sequence s. */
static int pfr_snapshot(pfr_t *r, pfr_seq_t *s, pfr_buf_t b) {
    pfr_field_t f = {0}, g = {0}; /* f.b is set only for wire type 2 */
    uint32_t ids[64 + 64];
    int64_t vals[128];
    uint8_t incr[128];
    uint64_t units[128];
    size_t n = 0;
    int has_mono = 0;
    int64_t mono = 0;
    PFR_FIELDS(r, b, f, rc) {
        if (f.num != 1 || f.wt != 2) continue;
        uint64_t id = 0, ts = 0, unit = 1;
        int inc = 0;
        pfr_buf_t c = f.b;
        PFR_FIELDS(r, c, g, rc2) {
            if (g.wt != 0) continue;
            if (g.num == 1) id = g.v;
            else if (g.num == 2) ts = g.v;
            else if (g.num == 3) inc = g.v != 0;
            else if (g.num == 4) unit = g.v ? g.v : 1;
        }
        if (id == 0 || id >= 128) continue; /* unknown clocks: ignored */
        if (n == 128) return pfr_bad(r, "too many clocks in a snapshot");
        ids[n] = (uint32_t)id;
        vals[n] = (int64_t)(ts * unit);
        incr[n] = (uint8_t)inc;
        units[n] = unit;
        if (id == 3) { has_mono = 1; mono = vals[n]; }
        n++;
    }
    if (has_mono && !r->have_base) {
        r->have_base = 1;
        r->base = mono;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t id = ids[i];
        if (id >= 64) {
            size_t k = id - 64;
            s->clk_valid[k] = 1;
            s->clk_incr[k] = incr[i];
            s->clk_unit[k] = units[i];
            s->clk_last[k] = s->clk_ref[k] = vals[i];
            s->clk_has_mono[k] = (uint8_t)has_mono;
            s->clk_mono[k] = mono;
        } else if (has_mono) {
            r->builtin_has[id] = 1;
            r->builtin_off[id] = (int64_t)((uint64_t)mono - (uint64_t)vals[i]);
        }
    }
    return 0;
}

/* Converts a packet timestamp ts on clock id to MONOTONIC ns (advancing an
 * incremental clock).  0 or SPS_EFORMAT. */
static int pfr_time(pfr_t *r, pfr_seq_t *s, uint32_t clock, uint64_t ts,
                    int64_t *out) {
    if (clock >= 64 && clock < 128) {
        size_t k = clock - 64;
        if (!s->clk_valid[k])
            return pfr_bad(r, "timestamp on an undefined sequence clock");
        uint64_t v = ts * s->clk_unit[k];
        int64_t ns = s->clk_incr[k]
                         ? (int64_t)((uint64_t)s->clk_last[k] + v)
                         : (int64_t)v;
        s->clk_last[k] = ns;
        *out = s->clk_has_mono[k]
                   ? (int64_t)((uint64_t)s->clk_mono[k] + (uint64_t)ns -
                               (uint64_t)s->clk_ref[k])
                   : ns;
        return 0;
    }
    if (clock >= 128) return pfr_bad(r, "unsupported clock id");
    *out = (int64_t)ts;
    if (clock != 3 && r->builtin_has[clock])
        *out = (int64_t)(ts + (uint64_t)r->builtin_off[clock]);
    return 0;
}

/* The name id of a literal (non-interned) name b, deduplicated by content
 * (copied only when new).  Returns 0, SPS_EFORMAT or SPS_ENOMEM. */
static int pfr_literal(pfr_t *r, pfr_buf_t b, uint32_t *ni) {
    size_t n = (size_t)(b.e - b.p);
    uint64_t hsh = sps__hash_bytes(b.p, n);
    uint32_t k = pfr_map_get(&r->str_map, hsh, n);
    if (k != UINT32_MAX && strlen(r->names[k]) == n &&
        (n == 0 || memcmp(r->names[k], b.p, n) == 0)) {
        *ni = k;
        return 0;
    }
    const char *str = n ? pfr_str(r, b) : "";
    if (!str) return r->err[0] ? SPS_EFORMAT : SPS_ENOMEM;
    int64_t id = pfr_add_name(r, str);
    if (id < 0 || pfr_map_put(&r->str_map, hsh, n, (uint32_t)id))
        return SPS_ENOMEM;
    *ni = (uint32_t)id;
    return 0;
}

/* The fields of a TrackEvent that pfr_event uses. */
typedef struct pfr_tev {
    uint64_t type, iid, uuid;
    int has_iid, has_name, has_value, nflow;
    pfr_buf_t name;
    double value;
    pfr_buf_t flows;        /* the event, rescanned for flow ids */
} pfr_tev_t;

/* Decodes the TrackEvent b into e (default track def_track). */
static int pfr_tev(pfr_t *r, pfr_buf_t b, uint64_t def_track, pfr_tev_t *e) {
    pfr_field_t f = {0};
    memset(e, 0, sizeof *e);
    e->uuid = def_track;
    e->flows = b;
    PFR_FIELDS(r, b, f, rc) {
        if (f.num == 9 && f.wt == 0) e->type = f.v;
        else if (f.num == 10 && f.wt == 0) { e->iid = f.v; e->has_iid = 1; }
        else if (f.num == 11 && f.wt == 0) e->uuid = f.v;
        else if (f.num == 23 && f.wt == 2) { e->name = f.b; e->has_name = 1; }
        else if (f.num == 44 && f.wt == 1) {
            memcpy(&e->value, &f.v, sizeof e->value);
            e->has_value = 1;
        } else if (f.num == 30 && f.wt == 0) {
            e->value = (double)(int64_t)f.v;
            e->has_value = 1;
        } else if (f.num == 36 || f.num == 42 || f.num == 47 || f.num == 48)
            e->nflow = 1;
    }
    return 0;
}

/* The name id of event e on sequence seq (interned or literal).  Returns
 * 0, SPS_EFORMAT or SPS_ENOMEM. */
static int pfr_ev_name(pfr_t *r, uint64_t seq, const pfr_tev_t *e,
                       uint32_t *ni) {
    if (!e->has_iid)
        return pfr_literal(r, e->has_name ? e->name : (pfr_buf_t){0}, ni);
    *ni = pfr_map_get(&r->iid_map, seq, e->iid);
    return *ni == UINT32_MAX ? pfr_bad(r, "unknown name iid") : 0;
}

/* Records a TYPE_COUNTER event e at time t on its track (a finite value
 * only).  Returns 0 or SPS_ENOMEM. */
static int pfr_counter(pfr_t *r, const pfr_tev_t *e, int64_t t) {
    if (!e->has_value || !isfinite(e->value)) return 0;
    int64_t ti = pfr_track(r, e->uuid);
    if (ti < 0 || sps__grow((void **)&r->smp, &r->capsmp, r->nsmp, sizeof *r->smp))
        return SPS_ENOMEM;
    r->smp[r->nsmp++] = (pfr_sample_t){(uint32_t)ti, t, e->value};
    return 0;
}

/* Adds one flow point (id, phase) at t on track ti named ni.  Returns 0
 * or SPS_ENOMEM. */
static int pfr_flow(pfr_t *r, uint64_t id, int term, uint32_t ti,
                    uint32_t ni, int64_t t) {
    char ph = 'f';
    if (!term) {
        ph = pfr_map_get(&r->flow_seen, id, 0) == UINT32_MAX ? 's' : 't';
        if (ph == 's' && pfr_map_put(&r->flow_seen, id, 0, 1)) return SPS_ENOMEM;
    }
    if (sps__grow((void **)&r->flows, &r->capflows, r->nflows, sizeof *r->flows))
        return SPS_ENOMEM;
    r->flows[r->nflows++] = (sps__tl_flow_t){id, ti, ni, t, ph, (uint8_t)term};
    return 0;
}

/* Records the flow ids of event e (at t, on track ti, named ni) as flow
 * points: fixed64 (47, 48; packed too) and varint (36, 42) forms.
 * Returns 0, SPS_EFORMAT or SPS_ENOMEM. */
static int pfr_flows(pfr_t *r, const pfr_tev_t *e, uint32_t ti, uint32_t ni,
                     int64_t t) {
    pfr_field_t f = {0}, g = {0}; /* f.b is set only for wire type 2 */
    pfr_buf_t b = e->flows;
    PFR_FIELDS(r, b, f, rc) {
        int term = f.num == 42 || f.num == 48, fixed = f.num >= 47;
        if (f.num != 36 && f.num != 42 && f.num != 47 && f.num != 48) continue;
        if (f.wt != 2) {
            if (f.wt != (fixed ? 1 : 0)) continue;
            int rc2 = pfr_flow(r, f.v, term, ti, ni, t);
            if (rc2) return rc2;
            continue;
        }
        pfr_buf_t p = f.b; /* packed */
        while (p.p < p.e) {
            if (fixed && p.e - p.p < 8) return pfr_bad(r, "malformed protobuf");
            if (fixed) { memcpy(&g.v, p.p, 8); p.p += 8; }
            else if (pfr_varint(&p, &g.v)) return pfr_bad(r, "malformed protobuf");
            int rc2 = pfr_flow(r, g.v, term, ti, ni, t);
            if (rc2) return rc2;
        }
    }
    return 0;
}

/* Handles an instant (type 3) carrying flow ids: its flow points, on its
 * track (which becomes a thread).  Returns 0 or an error. */
static int pfr_instant(pfr_t *r, uint64_t seq, const pfr_tev_t *e, int64_t t) {
    uint32_t ni;
    int64_t ti = pfr_track(r, e->uuid);
    if (ti < 0) return SPS_ENOMEM;
    r->tracks[ti].used = 1;
    int rc = pfr_ev_name(r, seq, e, &ni);
    return rc ? rc : pfr_flows(r, e, (uint32_t)ti, ni, t);
}

/* Handles a TrackEvent at time t on sequence seq. */
static int pfr_event(pfr_t *r, uint64_t seq, pfr_seq_t *s, pfr_buf_t b,
                     int has_ts, int64_t t) {
    pfr_tev_t e;
    int rc0 = pfr_tev(r, b, s->def_track, &e);
    if (rc0) return rc0;
    uint64_t type = e.type;
    if (type == 4) return has_ts ? pfr_counter(r, &e, t) : 0;
    if (type == 3) return has_ts && e.nflow ? pfr_instant(r, seq, &e, t) : 0;
    if (type != 1 && type != 2) return 0; /* other types: ignored */
    if (!has_ts) return pfr_bad(r, "slice event without a timestamp");
    int64_t ti = pfr_track(r, e.uuid);
    if (ti < 0) return SPS_ENOMEM;
    pfr_track_t *tr = &r->tracks[ti];
    if (t < tr->last_ts) return pfr_bad(r, "timestamps go backwards on a track");
    tr->last_ts = t;
    tr->used = 1;
    if (type == 1) {
        uint32_t ni;
        int rc = pfr_ev_name(r, seq, &e, &ni);
        if (!rc && e.nflow) rc = pfr_flows(r, &e, (uint32_t)ti, ni, t);
        if (rc) return rc;
        tr = &r->tracks[ti];
        if (sps__grow((void **)&tr->stack, &tr->cap, tr->n, sizeof *tr->stack))
            return SPS_ENOMEM;
        tr->stack[tr->n++] = (pfr_open_t){ni, t, r->ord++};
    } else {
        if (!tr->n) return pfr_bad(r, "slice end without a begin");
        pfr_open_t o = tr->stack[--tr->n];
        sps__srec_t sp = {o.start, t, (uint32_t)ti, o.name, o.ord};
        int rc = sps__xsort_add(r->xs, &sp);
        if (rc) return rc;
        if (!r->nspans || o.start < r->min_start) r->min_start = o.start;
        r->nspans++;
    }
    return 0;
}

/* Parses one TracePacket. */
static int pfr_packet(pfr_t *r, pfr_buf_t b) {
    pfr_field_t f = {0};
    uint64_t ts = 0, seq = 0, flags = 0;
    uint32_t clock = 0;
    int has_ts = 0, has_clock = 0, cleared = 0;
    pfr_buf_t ev = {0}, desc = {0}, intern = {0}, defs = {0}, snap = {0};
    int has_ev = 0, has_desc = 0, has_intern = 0, has_defs = 0, has_snap = 0;
    PFR_FIELDS(r, b, f, rc) {
        switch (f.num) {
        case 8: if (f.wt == 0) { ts = f.v; has_ts = 1; } break;
        case 58: if (f.wt == 0) { clock = (uint32_t)f.v; has_clock = 1; } break;
        case 10: if (f.wt == 0) seq = f.v; break;
        case 13: if (f.wt == 0) flags = f.v; break;
        case 41: if (f.wt == 0 && f.v) cleared = 1; break;
        case 11: if (f.wt == 2) { ev = f.b; has_ev = 1; } break;
        case 60: if (f.wt == 2) { desc = f.b; has_desc = 1; } break;
        case 12: if (f.wt == 2) { intern = f.b; has_intern = 1; } break;
        case 59: if (f.wt == 2) { defs = f.b; has_defs = 1; } break;
        case 6: if (f.wt == 2) { snap = f.b; has_snap = 1; } break;
        default: break;
        }
    }
    pfr_seq_t *s = pfr_seq(r, seq);
    if (!s) return SPS_ENOMEM;
    int rc = 0;
    if ((flags & 1) || cleared) {
        s->def_clock = 0;
        s->has_def_track = 0;
        s->def_track = 0;
    }
    if (has_defs) {
        pfr_field_t g, h2;
        s->def_clock = 0;
        s->has_def_track = 0;
        s->def_track = 0;
        PFR_FIELDS(r, defs, g, rc2) {
            if (g.num == 58 && g.wt == 0) s->def_clock = (uint32_t)g.v;
            else if (g.num == 11 && g.wt == 2) {
                pfr_buf_t d = g.b;
                PFR_FIELDS(r, d, h2, rc3) {
                    if (h2.num == 11 && h2.wt == 0) {
                        s->def_track = h2.v;
                        s->has_def_track = 1;
                    }
                }
            }
        }
    }
    if (has_snap && (rc = pfr_snapshot(r, s, snap))) return rc;
    if (has_intern && (rc = pfr_interned(r, seq, intern))) return rc;
    if (has_desc && (rc = pfr_descriptor(r, desc))) return rc;
    int64_t t = 0;
    if (has_ts) {
        uint32_t c = has_clock ? clock : (s->def_clock ? s->def_clock : 6);
        if ((rc = pfr_time(r, s, c, ts, &t))) return rc;
    }
    if (has_ev && (rc = pfr_event(r, seq, s, ev, has_ts, t))) return rc;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* header assembly and delivery                                               */
/* ------------------------------------------------------------------------ */

/* Adds a process (pid, name) unless the pid is known; 0 or SPS_ENOMEM. */
static int pfr_add_proc(pfr_t *r, int64_t pid, const char *name) {
    uint32_t i = pfr_map_get(&r->pid_map, (uint64_t)pid, 0);
    if (i != UINT32_MAX) {
        if (name && *name && !*r->procs[i].name) r->procs[i].name = name;
        return 0;
    }
    if (sps__grow((void **)&r->procs, &r->capprocs, r->nprocs, sizeof *r->procs) ||
        pfr_map_put(&r->pid_map, (uint64_t)pid, 0, (uint32_t)r->nprocs))
        return SPS_ENOMEM;
    sps__tl_proc_t *p = &r->procs[r->nprocs++];
    p->pid = pid;
    p->name = name ? name : "";
    p->rank = -1;
    /* "rank N" exactly (N decimal, no sign, < 2^31) gives the rank */
    if (strncmp(p->name, "rank ", 5) == 0 && p->name[5]) {
        int64_t v = 0;
        const char *c = p->name + 5;
        while (*c >= '0' && *c <= '9' && v < INT32_MAX)
            v = v * 10 + (*c++ - '0');
        if (!*c && v <= INT32_MAX) p->rank = v;
    }
    return 0;
}

/* Orders span records by (start, -end, track, file order). */
static int pfr_cmp_span(const void *a, const void *b) {
    const sps__srec_t *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* The header process index of counter track t's process (its parent
 * process track's pid, its own if it is one, else pid 0), added if new;
 * -1 when out of memory. */
static int64_t pfr_counter_proc(pfr_t *r, const pfr_track_t *t) {
    int64_t pid = 0;
    uint32_t pi = t->has_process ? UINT32_MAX : pfr_map_get(&r->track_map, t->parent, 0);
    if (t->has_process) pid = t->pid;
    else if (pi != UINT32_MAX && r->tracks[pi].has_process) pid = r->tracks[pi].pid;
    if (pfr_add_proc(r, pid, NULL)) return -1;
    return pfr_map_get(&r->pid_map, (uint64_t)pid, 0);
}

/* Builds the header's counters (name: the track's, process: see
 * pfr_counter_proc) and maps the flows' tracks to threads; both in time
 * order.  Returns 0 or SPS_ENOMEM. */
static int pfr_finish_extras(pfr_t *r) {
    r->counters = malloc((r->nsmp + 1) * sizeof *r->counters);
    if (!r->counters) return SPS_ENOMEM;
    for (size_t i = 0; i < r->nsmp; i++) {
        pfr_track_t *t = &r->tracks[r->smp[i].track];
        if (t->cname < 0)
            t->cname = pfr_add_name(r, t->name && *t->name ? t->name : "counter");
        int64_t pi = pfr_counter_proc(r, t);
        if (t->cname < 0 || pi < 0) return SPS_ENOMEM;
        r->counters[r->ncounters++] = (sps__tl_counter_t){
            (uint32_t)t->cname, (uint32_t)pi, r->smp[i].ts_ns, r->smp[i].v};
    }
    for (size_t i = 0; i < r->nflows; i++)
        r->flows[i].thread = r->tracks[r->flows[i].thread].thread;
    if (sps__tl_sort_by_time(r->counters, r->ncounters, sizeof *r->counters,
                             offsetof(sps__tl_counter_t, ts_ns)) ||
        sps__tl_sort_by_time(r->flows, r->nflows, sizeof *r->flows,
                             offsetof(sps__tl_flow_t, ts_ns)))
        return SPS_ENOMEM;
    return 0;
}

/* Builds procs and threads from the tracks and ends the span sort
 * (threads are remapped as spans are delivered). */
static int pfr_finish(pfr_t *r) {
    for (size_t i = 0; i < r->ntracks; i++)
        if (r->tracks[i].n) return pfr_bad(r, "slice begin without an end (truncated?)");
    /* processes: from process tracks, in file order */
    for (size_t i = 0; i < r->ntracks; i++)
        if (r->tracks[i].has_process &&
            pfr_add_proc(r, r->tracks[i].pid, r->tracks[i].name))
            return SPS_ENOMEM;
    /* threads: thread tracks first (file order), then other used tracks */
    size_t nthr = 0;
    for (size_t i = 0; i < r->ntracks; i++)
        if (r->tracks[i].has_thread || r->tracks[i].used) nthr++;
    r->threads = calloc(nthr ? nthr : 1, sizeof *r->threads);
    if (!r->threads) return SPS_ENOMEM;
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < r->ntracks; i++) {
            pfr_track_t *t = &r->tracks[i];
            if (pass == 0 ? !t->has_thread : (t->has_thread || !t->used))
                continue;
            sps__tl_thread_t *th = &r->threads[k];
            if (t->has_thread) {
                th->pid = t->pid;
                th->tid = t->tid;
            } else {
                /* a process or custom track: its process, a synthetic tid */
                uint32_t pi = t->has_process ? (uint32_t)i
                                             : pfr_map_get(&r->track_map, t->parent, 0);
                th->pid = pi != UINT32_MAX && r->tracks[pi].has_process
                              ? r->tracks[pi].pid : 0;
                th->tid = -(int64_t)(i + 1);
            }
            th->name = t->name ? t->name : "";
            if (pfr_add_proc(r, th->pid, NULL)) return SPS_ENOMEM;
            t->thread = (uint32_t)k++;
        }
    int rc = pfr_finish_extras(r);
    if (!rc) rc = sps__xsort_finish(r->xs);
    if (rc) return rc;
    r->h.ncounters = r->ncounters;
    r->h.counters = r->counters;
    r->h.nflows = r->nflows;
    r->h.flows = r->flows;
    r->h.nnames = r->nnames;
    r->h.names = r->names;
    r->h.nprocs = r->nprocs;
    r->h.procs = r->procs;
    r->h.nthreads = nthr;
    r->h.threads = r->threads;
    r->h.base_ns = r->have_base ? r->base : (r->nspans ? r->min_start : 0);
    r->h.trace_name = NULL;
    r->h.rank = r->nprocs == 1 ? r->procs[0].rank : -1;
    r->h.world_size = 0;
    r->h.nspans = r->nspans;
    return 0;
}

/* vt: the header. */
static const sps__tl_header_t *pfr_header(void *rv) {
    return &((pfr_t *)rv)->h;
}

/* vt: the next span in order: 1, 0 at the end, or SPS_EIO (the
 * temporary sort file could not be read). */
static int pfr_next(void *rv, sps__tl_span_t *s) {
    pfr_t *r = rv;
    sps__srec_t x;
    int rc = sps__xsort_next(r->xs, &x);
    if (rc <= 0) return rc;
    s->name = x.name;
    s->thread = r->tracks[x.thread].thread;
    s->start_ns = x.start;
    s->end_ns = x.end;
    s->prior_ns = 0; /* traces do not carry /carried */
    return 1;
}

/* vt: frees the reader and everything it owns. */
static void pfr_free(void *rv) {
    pfr_t *r = rv;
    if (!r) return;
    for (size_t i = 0; i < r->nstrs; i++) free(r->strs[i]);
    for (size_t i = 0; i < r->ntracks; i++) free(r->tracks[i].stack);
    free(r->strs);
    free(r->names);
    free(r->procs);
    free(r->threads);
    free(r->tracks);
    free(r->seqs);
    free(r->smp);
    free(r->counters);
    free(r->flows);
    pfr_map_free(&r->flow_seen);
    sps__xsort_free(r->xs);
    free(r->pkt);
    pfr_map_free(&r->track_map);
    pfr_map_free(&r->seq_map);
    pfr_map_free(&r->iid_map);
    pfr_map_free(&r->str_map);
    pfr_map_free(&r->pid_map);
    free((char *)r->path);
    free(r);
}

/* A buffered sequential reader of the trace file. */
typedef struct pfr_in {
    int fd;
    uint64_t left;          /* bytes the file still holds (from fstat) */
    size_t pos, n;
    uint8_t buf[1 << 16];
} pfr_in_t;

/* Copies the next k bytes of the file to dst (NULL: skips them).  Returns
 * 0, or -1 when the file ends first or cannot be read. */
static int pfr_in_get(pfr_in_t *in, uint8_t *dst, uint64_t k) {
    if (k > in->left) return -1;
    while (k) {
        if (in->pos == in->n) {
            ssize_t got = read(in->fd, in->buf, sizeof in->buf);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) return -1;
            in->pos = 0;
            in->n = (size_t)got;
        }
        size_t m = in->n - in->pos;
        if (m > k) m = (size_t)k;
        if (dst) {
            memcpy(dst, in->buf + in->pos, m);
            dst += m;
        }
        in->pos += m;
        in->left -= m;
        k -= m;
    }
    return 0;
}

/* Reads a varint: 1 read, 0 at a clean end of file, -1 malformed. */
static int pfr_in_varint(pfr_in_t *in, uint64_t *v) {
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        uint8_t c;
        if (pfr_in_get(in, &c, 1)) return i == 0 && in->left == 0 ? 0 : -1;
        x |= (uint64_t)(c & 0x7F) << (7 * i);
        if (!(c & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return -1;
}

/* Reads the next top-level field; a TracePacket (field 1, length
 * delimited) lands whole in r->pkt and sets *len.  Returns 1 for a
 * packet, 2 for another field (skipped), 0 at the end, SPS_EFORMAT
 * (malformed or truncated) or SPS_ENOMEM. */
static int pfr_in_field(pfr_t *r, pfr_in_t *in, size_t *len) {
    uint64_t tag, v;
    int k = pfr_in_varint(in, &tag);
    if (k <= 0) return k ? pfr_bad(r, "malformed protobuf (truncated?)") : 0;
    if ((tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF)
        return pfr_bad(r, "malformed protobuf (truncated?)");
    int wt = (int)(tag & 7), bad = 0;
    if (wt == 0) bad = pfr_in_varint(in, &v) != 1;
    else if (wt == 1 || wt == 5) bad = pfr_in_get(in, NULL, wt == 1 ? 8 : 4);
    else if (wt != 2) bad = 1;
    if (bad) return pfr_bad(r, "malformed protobuf (truncated?)");
    if (wt != 2) return 2;
    if (pfr_in_varint(in, &v) != 1 || v > in->left)
        return pfr_bad(r, "malformed protobuf (truncated?)");
    if ((tag >> 3) != 1) return pfr_in_get(in, NULL, v) ? pfr_bad(r, "truncated") : 2;
    if (v > r->cappkt) {
        uint8_t *p = realloc(r->pkt, (size_t)v);
        if (!p) return SPS_ENOMEM;
        r->pkt = p;
        r->cappkt = (size_t)v;
    }
    if (pfr_in_get(in, r->pkt, v)) return pfr_bad(r, "malformed protobuf (truncated?)");
    *len = (size_t)v;
    return 1;
}

/* Opens path for pfr_in_*.  Returns 0, SPS_EIO, SPS_EFORMAT (too big) or
 * SPS_ENOMEM, with a message; *out is owned by the caller (close its fd). */
static int pfr_in_open(const char *path, pfr_in_t **out) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sps__err_set("%s: cannot open: %s", path, strerror(errno));
        return SPS_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        sps__err_set("%s: not a regular file", path);
        close(fd);
        return SPS_EIO;
    }
    if ((uint64_t)st.st_size > PFR_MAX_FILE || (uint64_t)st.st_size > SIZE_MAX) {
        sps__err_set("%s: file larger than 8 GiB", path);
        close(fd);
        return SPS_EFORMAT;
    }
    pfr_in_t *in = malloc(sizeof *in);
    if (!in) {
        sps__err_set("%s: out of memory", path);
        close(fd);
        return SPS_ENOMEM;
    }
    in->fd = fd;
    in->left = (uint64_t)st.st_size;
    in->pos = in->n = 0;
    *out = in;
    return 0;
}

/* Parses every packet of the file.  Returns 0 or an error code. */
static int pfr_parse_file(pfr_t *r, pfr_in_t *in) {
    size_t npackets = 0, len = 0;
    int k;
    while ((k = pfr_in_field(r, in, &len)) > 0) {
        if (k != 1) continue;
        npackets++;
        static const uint8_t none[1];
        const uint8_t *b = r->pkt ? r->pkt : none; /* an empty first packet */
        int rc = pfr_packet(r, (pfr_buf_t){b, b + len});
        if (rc) return rc;
    }
    if (k < 0) return k;
    return npackets ? 0 : pfr_bad(r, "no trace packets");
}

/* Opens and fully parses a Perfetto trace; *out is a pfr_t (first member
 * the vt) owned by the caller, freed through vt.free. */
int sps__pfr_open(void **out, const char *path) {
    if (!out || !path) return SPS_EINVAL;
    *out = NULL;
    pfr_t *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path)) ||
        sps__xsort_new(&r->xs, pfr_cmp_span, path)) {
        if (r) pfr_free(r);
        sps__err_set("%s: out of memory", path);
        return SPS_ENOMEM;
    }
    r->vt.header = pfr_header;
    r->vt.next = pfr_next;
    r->vt.free = pfr_free;
    pfr_in_t *in = NULL;
    int rc = pfr_in_open(path, &in);
    if (rc) {
        pfr_free(r);
        return rc;
    }
    rc = pfr_parse_file(r, in);
    close(in->fd);
    free(in);
    if (!rc) rc = pfr_finish(r);
    if (rc) {
        if (rc == SPS_EFORMAT)
            sps__err_set("%s: not a valid Perfetto trace: %s", path, r->err);
        else if (rc != SPS_EIO)
            sps__err_set("%s: %s", path, sps_strerror(rc));
        pfr_free(r);
        return rc;
    }
    *out = r;
    return 0;
}
