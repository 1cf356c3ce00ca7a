/* recover.c -- sps_recover / `spanscope recover PATH`: the profile a dead
 * process left in its live directories (core/crash.c, docs/crash-recovery.md).
 *
 * A directory is read whole and checked before anything is believed: the
 * log entry by entry (length, checksum, a known type, sizes and offsets
 * inside the files), every slot and spilled chunk against the chunk size,
 * every record's region against the names the log gave.  What is read:
 *   - per thread, the records no finalize wrote: the spilled chunks and the
 *     slots (each slot's latest owner -- from the "slots" table where its
 *     entry's check word holds, else from the log -- read up to its first
 *     zero word),
 *     ordered by sequence number; a stretch covered twice (a chunk spilled
 *     while its slot was not yet cleared) is taken once; records before
 *     the thread's last CONSUMED mark are skipped;
 *   - value groups are kept with their records (the log's header names the
 *     values; the first record kept after a skip carries the last group
 *     skipped, as a finalize's reader does), and spaced so that none is cut
 *     by the adopting session's chunks (pad_groups);
 *   - the samples file (core/crash_samples.h), if any: samples and the text
 *     of their stacks, from the last finalize's mark on; handed to the
 *     finalize through a sps__sample_ops of its own, so /samples is written
 *     as a finalize writes it; a damaged file ends the samples, never the
 *     recovery (said in /metadata);
 *   - ends of calls begun before the recovered part (a call open across a
 *     checkpoint) get a begin at the part's first time; calls still open at
 *     the end are ended at the last time any thread recorded or was
 *     sampled (the kill is after it): both counted in /metadata.
 * Then it runs a session of its own that adopts those threads and the dead
 * process's clock anchors and finalizes it to PATH: the same writer as a
 * normal run. */
#include "api/api.h"
#include "core/core.h"
#include "core/crash_samples.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_THREADS 65536u
#define MAX_REGIONS (1u << 24)
#define LOG_MAX ((size_t)1 << 31)
#define NS_MAX ((int64_t)1 << 62) /* times beyond (year 2116) are damage */

typedef struct seg { /* a stretch of one thread's records */
    uint64_t seq0;
    uint32_t n;
    const uint64_t *rec; /* in the chunks mapping, or decoded (owned) */
    uint64_t *owned;
} seg_t;

typedef struct rthread {
    int seen;
    int32_t tid;
    char name[33];
    uint64_t consumed;
    seg_t *segs;
    size_t nsegs, cap;
} rthread_t;

typedef struct rstack { /* a described stack: frames fidx[first, first + n) */
    uint32_t id;         /* the dead sampler's id */
    uint32_t first, n;
} rstack_t;

typedef struct rsmp { /* the samples file, read */
    rstack_t *stacks;    /* [nstacks]: the recovered stack id is index + 1 */
    size_t nstacks, capstacks;
    sps__htab_t by_id;   /* dead id -> stacks index */
    uint32_t *fidx;      /* frames of the stacks, innermost first */
    size_t nfidx, capfidx;
    char **fn, **file, **mod; /* [nframes], unique (kind, fn, file, line, mod, addr) */
    int64_t *line, *kind, *addr;
    size_t nframes, capframes;
    sps__htab_t frames;
    sps__sample_t *v;    /* not yet taken by the finalize */
    size_t n, cap;
    int hz;
    uint64_t lost, skipped, taken;
    uint64_t max_ticks;
    char note[160];      /* why reading stopped early ("" it did not) */
} rsmp_t;

typedef struct live {
    const char *dir;
    sps__crash_hdr_t hdr;
    char *file_path, *label, *spill_path;
    char **names;          /* by region id */
    uint32_t nnames;
    rthread_t *th;         /* by thread index */
    uint32_t nth;
    sps__anchor_t *anchors;
    size_t nanchors, capanchors;
    sps__crash_install_t *slots; /* by slot number: latest owner (thread+1 in pad) */
    size_t nslots;
    uint8_t *chunks;       /* mapping of the chunks file */
    size_t chunks_len;
    int spill_fd;
    uint64_t kill_ticks;   /* the last time recorded */
    uint64_t open_closed, carried, records, gaps, groups;
    char *value_names;     /* the header's: the run's value names, a line each */
    uint32_t nvals;        /* values per group the recovered session reads
                              (0: groups dropped) */
    int excess_at;         /* the index of peak_bytes' excess, -1 none */
    uint64_t *gbuf;        /* thread_stream's pending and carried groups */
    rsmp_t smp;            /* the stack samples (the directory's samples file) */
    FILE *marks;           /* the JSON list of the calls closed at the end */
    char *marks_text;
    size_t marks_len, nmarks;
} live_t;

static int bad(const live_t *L, const char *what, long long at) {
    return sps__err_fail(SPS_EFORMAT, "%s: %s (log byte %lld): not a spanscope live "
                         "directory, or torn beyond repair", L->dir, what, at);
}

/* ------------------------------------------------------------------------ */
/* Reading the log                                                           */
/* ------------------------------------------------------------------------ */

static int read_file(const char *dir, const char *name, uint8_t **out, size_t *len) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return sps__err_fail(SPS_EPATH, "%s: %s", p, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > LOG_MAX) {
        close(fd);
        return sps__err_fail(SPS_EFORMAT, "%s: not a regular file of at most 2 GiB", p);
    }
    *len = (size_t)st.st_size;
    *out = malloc(*len ? *len : 1);
    if (!*out) {
        close(fd);
        return SPS_ENOMEM;
    }
    size_t got = 0;
    while (got < *len) {
        ssize_t r = pread(fd, *out + got, *len - got, (off_t)got);
        if (r <= 0) {
            if (r < 0 && errno == EINTR) continue;
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    *len = got;
    return 0;
}

/* A string field at p (avail bytes): a malloc'd copy, *used its bytes. */
static char *get_str(const uint8_t *p, size_t avail, size_t *used) {
    uint32_t n;
    if (avail < 4) return NULL;
    memcpy(&n, p, 4);
    if (n > 4000 || n > avail - 4) return NULL;
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, p + 4, n);
    s[n] = 0;
    *used = 4 + n;
    return s;
}

static rthread_t *thread_at(live_t *L, uint32_t i) {
    if (i >= MAX_THREADS) return NULL;
    if (i >= L->nth) {
        uint32_t n = i + 1 > L->nth * 2 ? i + 1 : L->nth * 2;
        rthread_t *v = realloc(L->th, n * sizeof *v);
        if (!v) return NULL;
        memset(v + L->nth, 0, (n - L->nth) * sizeof *v);
        L->th = v;
        L->nth = n;
    }
    return &L->th[i];
}

static int entry_region(live_t *L, const uint8_t *p, size_t len, long long at) {
    uint32_t id;
    size_t used;
    if (len < 4) return bad(L, "short region entry", at);
    memcpy(&id, p, 4);
    if (id == 0 || id >= MAX_REGIONS) return bad(L, "region id out of range", at);
    char *name = get_str(p + 4, len - 4, &used);
    if (!name) return bad(L, "bad region name", at);
    if (id >= L->nnames) {
        uint32_t n = id + 1 > L->nnames * 2 ? id + 1 : L->nnames * 2;
        char **v = realloc(L->names, n * sizeof *v);
        if (!v) {
            free(name);
            return SPS_ENOMEM;
        }
        memset(v + L->nnames, 0, (n - L->nnames) * sizeof *v);
        L->names = v;
        L->nnames = n;
    }
    free(L->names[id]);
    L->names[id] = name;
    return 0;
}

static int entry_thread(live_t *L, const uint8_t *p, size_t len, long long at) {
    uint32_t idx;
    int32_t tid;
    size_t used;
    if (len < 8) return bad(L, "short thread entry", at);
    memcpy(&idx, p, 4);
    memcpy(&tid, p + 4, 4);
    rthread_t *t = thread_at(L, idx);
    char *name = get_str(p + 8, len - 8, &used);
    if (!t || !name) {
        free(name);
        return bad(L, "bad thread entry", at);
    }
    t->seen = 1;
    t->tid = tid;
    snprintf(t->name, sizeof t->name, "%s", name);
    free(name);
    return 0;
}

/* Slot e.off's owner is e (the latest one wins): a log entry's, or the
 * table's.  at: where it was read, for the error. */
static int slot_set(live_t *L, sps__crash_install_t e, long long at) {
    size_t bytes = (size_t)L->hdr.chunk_recs * 8;
    if (e.off < 0 || (uint64_t)e.off % bytes || !thread_at(L, e.thread))
        return bad(L, "slot entry out of range", at);
    size_t slot = (size_t)((uint64_t)e.off / bytes);
    if (slot >= (1u << 26)) return bad(L, "slot entry out of range", at);
    if (slot >= L->nslots) {
        size_t n = slot + 1 > L->nslots * 2 ? slot + 1 : L->nslots * 2;
        sps__crash_install_t *v = realloc(L->slots, n * sizeof *v);
        if (!v) return SPS_ENOMEM;
        memset(v + L->nslots, 0, (n - L->nslots) * sizeof *v);
        L->slots = v;
        L->nslots = n;
    }
    e.pad = 1; /* in use */
    L->slots[slot] = e;
    return 0;
}

static int entry_install(live_t *L, const uint8_t *p, size_t len, long long at) {
    sps__crash_install_t e;
    if (len != sizeof e) return bad(L, "bad slot entry", at);
    memcpy(&e, p, sizeof e);
    return slot_set(L, e, at);
}

/* The "slots" table (crash.c), if the directory has one: each entry whose
 * check word holds names its slot's owner, over what the log said (the
 * table is written after the log's last word on the slot: a slot goes to
 * the log only while the table cannot hold it).  An entry of a slot past
 * the chunks file's end was never used; an entry whose check does not
 * hold was never written, or torn by the death: its slot was cleared
 * before it was handed out, so nothing is lost with it.  at in errors:
 * the entry's byte offset. */
static int read_slot_table(live_t *L) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/slots", L->dir);
    if (access(p, F_OK) != 0) return 0; /* a directory of an older version */
    uint8_t *tab = NULL;
    size_t len = 0;
    int rc = read_file(L->dir, "slots", &tab, &len);
    size_t bytes = (size_t)L->hdr.chunk_recs * 8;
    for (size_t i = 0; !rc && bytes && i < len / sizeof(sps__crash_slot_t); i++) {
        sps__crash_slot_t e;
        memcpy(&e, tab + i * sizeof e, sizeof e);
        if (!e.check || e.check != sps__crash_slot_check(i, e.thread, e.seq0)) continue;
        if ((uint64_t)i * bytes + bytes > L->chunks_len) continue;
        if (i >= (1u << 26) || e.thread >= MAX_THREADS) {
            rc = sps__err_fail(SPS_EFORMAT, "%s: slots entry %zu out of range: not a "
                               "spanscope live directory, or torn beyond repair", L->dir, i);
            break;
        }
        rc = slot_set(L, (sps__crash_install_t){(int64_t)(i * bytes), e.thread, 0, e.seq0},
                      (long long)(i * sizeof e));
    }
    free(tab);
    return rc;
}

static int push_seg(rthread_t *t, seg_t s) {
    if (t->nsegs == t->cap) {
        size_t cap = t->cap * 2 + 8;
        seg_t *v = realloc(t->segs, cap * sizeof *v);
        if (!v) return SPS_ENOMEM;
        t->segs = v;
        t->cap = cap;
    }
    t->segs[t->nsegs++] = s;
    return 0;
}

static int entry_spill(live_t *L, const uint8_t *p, size_t len, long long at) {
    sps__crash_spill_t e;
    if (len != sizeof e) return bad(L, "bad spill entry", at);
    memcpy(&e, p, sizeof e);
    rthread_t *t = thread_at(L, e.thread);
    if (!t || e.off < 0 || !e.n || e.n > L->hdr.chunk_recs || e.len < SPS__PACK_HDR ||
        e.len > sps__pack_bound(e.n) || L->spill_fd < 0)
        return bad(L, "spill entry out of range", at);
    uint8_t *buf = malloc(e.len);
    uint64_t *rec = malloc((size_t)e.n * 8);
    int rc = buf && rec ? 0 : SPS_ENOMEM;
    if (!rc && sps__pread_full(L->spill_fd, buf, e.len, (off_t)e.off) != (ssize_t)e.len)
        rc = bad(L, "spilled chunk beyond the spill file", at);
    if (!rc && sps__unpack(buf, e.len, rec, e.n)) rc = bad(L, "spilled chunk corrupt", at);
    free(buf);
    if (!rc) rc = push_seg(t, (seg_t){e.seq0, e.n, rec, rec});
    if (rc) free(rec);
    return rc;
}

static int add_anchor(live_t *L, sps__anchor_t a) {
    if (L->nanchors == L->capanchors) {
        size_t cap = L->capanchors * 2 + 16;
        sps__anchor_t *v = realloc(L->anchors, cap * sizeof *v);
        if (!v) return SPS_ENOMEM;
        L->anchors = v;
        L->capanchors = cap;
    }
    L->anchors[L->nanchors++] = a;
    return 0;
}

static int entry_header(live_t *L, const uint8_t *p, size_t len, long long at) {
    size_t used1, used2;
    if (len < sizeof L->hdr) return bad(L, "short header", at);
    memcpy(&L->hdr, p, sizeof L->hdr);
    if (L->hdr.magic != SPS__CRASH_MAGIC) return bad(L, "bad magic", at);
    if (L->hdr.version != SPS__CRASH_VERSION)
        return sps__err_fail(SPS_EFORMAT, "%s: live directory version %u (this spanscope "
                             "reads %u)", L->dir, L->hdr.version, SPS__CRASH_VERSION);
    uint32_t r = L->hdr.chunk_recs;
    if (r < 512 || r > (2u << 20) || (r & (r - 1)) || !(L->hdr.ns_per_tick > 0) ||
        L->hdr.ns_per_tick > 1e6 || L->hdr.wall_anchor_ns < 0 ||
        L->hdr.wall_anchor_ns > NS_MAX || L->hdr.mono_anchor_ns < 0 ||
        L->hdr.mono_anchor_ns > NS_MAX)
        return bad(L, "bad header values", at);
    L->file_path = get_str(p + sizeof L->hdr, len - sizeof L->hdr, &used1);
    L->label = L->file_path ? get_str(p + sizeof L->hdr + used1,
                                      len - sizeof L->hdr - used1, &used2) : NULL;
    size_t off3 = L->label ? sizeof L->hdr + used1 + used2 : 0;
    L->spill_path = L->label ? get_str(p + off3, len - off3, &used1) : NULL;
    if (!L->file_path || !L->label || !L->spill_path) return bad(L, "bad header strings", at);
    /* the value names (a later field: absent in older logs, whose value
     * groups are then left out) */
    size_t off4 = off3 + used1;
    if (off4 < len) {
        L->value_names = get_str(p + off4, len - off4, &used2);
        if (!L->value_names) return bad(L, "bad header strings", at);
    }
    /* the spill file the run used (the live directory's, or in its
     * cfg.spill_dir) */
    if (L->spill_fd < 0 && *L->spill_path) { /* a regular file only (never a FIFO's wait) */
        struct stat st;
        L->spill_fd = open(L->spill_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (L->spill_fd >= 0 && (fstat(L->spill_fd, &st) || !S_ISREG(st.st_mode))) {
            close(L->spill_fd);
            L->spill_fd = -1;
        }
    }
    return 0;
}

/* Parses the log; a torn tail (the entry being written at the kill) ends
 * it quietly, anything else malformed is an error. */
static int parse_log(live_t *L, const uint8_t *b, size_t len) {
    size_t at = 0;
    int rc = 0, first = 1;
    while (!rc && at + 12 <= len) {
        uint32_t h[2], sum;
        memcpy(h, b + at, 8);
        if (h[0] > SPS__CRASH_ENTRY_MAX || at + 12 + h[0] > len) break; /* torn */
        memcpy(&sum, b + at + 8 + h[0], 4);
        if ((uint32_t)sps__hash_bytes(b + at, 8 + h[0]) != sum) break; /* torn */
        const uint8_t *p = b + at + 8;
        if (first != (h[1] == SPS__CRASH_HDR)) return bad(L, "header not first", (long long)at);
        first = 0;
        switch (h[1]) {
        case SPS__CRASH_HDR: rc = entry_header(L, p, h[0], (long long)at); break;
        case SPS__CRASH_REGION: rc = entry_region(L, p, h[0], (long long)at); break;
        case SPS__CRASH_THREAD: rc = entry_thread(L, p, h[0], (long long)at); break;
        case SPS__CRASH_ANCHOR: {
            sps__anchor_t a;
            if (h[0] != sizeof a) return bad(L, "bad anchor", (long long)at);
            memcpy(&a, p, sizeof a);
            if (a.ns < 0 || a.ns > NS_MAX) return bad(L, "anchor time out of range", (long long)at);
            rc = add_anchor(L, a);
            break;
        }
        case SPS__CRASH_INSTALL: rc = entry_install(L, p, h[0], (long long)at); break;
        case SPS__CRASH_SPILL: rc = entry_spill(L, p, h[0], (long long)at); break;
        case SPS__CRASH_CONSUMED: {
            sps__crash_consumed_t e;
            if (h[0] != sizeof e) return bad(L, "bad consumed entry", (long long)at);
            memcpy(&e, p, sizeof e);
            rthread_t *t = thread_at(L, e.thread);
            if (!t) return bad(L, "consumed entry out of range", (long long)at);
            if (e.seq > t->consumed) t->consumed = e.seq;
            break;
        }
        default: return bad(L, "unknown entry", (long long)at);
        }
        at += 12 + h[0];
    }
    if (!rc && first) return bad(L, "empty log", 0);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */
/* ------------------------------------------------------------------------ */

/* How many words of slot rec (cap words) hold records: up to the first
 * zero word; a value group whose record is missing is cut off. */
static uint32_t slot_fill(const uint64_t *rec, uint32_t cap) {
    uint32_t i = 0, good = 0;
    while (i < cap && rec[i]) {
        if ((rec[i] >> 32) == SPS__REC_VAL_TAG) {
            uint32_t n = (uint32_t)rec[i];
            if (n > SPS__VAL_MAX || i + 1 + n >= cap || !rec[i + 1 + n]) break;
            i += 1 + n;
        }
        good = ++i;
    }
    return good;
}

static int add_slots(live_t *L) {
    size_t bytes = (size_t)L->hdr.chunk_recs * 8;
    for (size_t s = 0; s < L->nslots; s++) {
        const sps__crash_install_t *e = &L->slots[s];
        if (!e->pad) continue;
        if ((size_t)e->off + bytes > L->chunks_len) continue; /* never written */
        const uint64_t *rec = (const uint64_t *)(L->chunks + e->off);
        uint32_t n = slot_fill(rec, L->hdr.chunk_recs);
        if (!n || (rec[0] >> 32) != SPS__REC_HI_TAG) continue; /* cleared, or torn */
        int rc = push_seg(&L->th[e->thread], (seg_t){e->seq0, n, rec, NULL});
        if (rc) return rc;
    }
    return 0;
}

static int seg_cmp(const void *a, const void *b) {
    const seg_t *x = a, *y = b;
    return x->seq0 < y->seq0 ? -1 : x->seq0 > y->seq0;
}

typedef struct out { /* a growing array of records */
    uint64_t *v;
    size_t n, cap;
} out_t;

static int out_put(out_t *o, uint64_t w) {
    if (o->n == o->cap) {
        size_t cap = o->cap * 2 + 4096;
        uint64_t *v = realloc(o->v, cap * sizeof *v);
        if (!v) return SPS_ENOMEM;
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n++] = w;
    return 0;
}

/* The region id in this process of the dead one's id r (0: none). */
static uint32_t region_map(live_t *L, uint32_t r, uint32_t *map) {
    if (r >= MAX_REGIONS) return 0;
    if (r < L->nnames && map[r]) return map[r];
    char tmp[48];
    const char *name = r < L->nnames && L->names[r] ? L->names[r] : NULL;
    if (!name) {
        snprintf(tmp, sizeof tmp, "(unnamed region %u)", r);
        name = tmp;
    }
    uint32_t id = sps_region(name);
    if (r < L->nnames) map[r] = id;
    return id;
}

/* Thread t's recovered stream in o: HI records, value groups (when the
 * session reads them: L->nvals) and begins/ends, from its consumed mark
 * on, in sequence order, regions mapped.  A group goes out right before
 * its record (a HI record, when one is due, before both); the first
 * record kept after skipped ones gets the last skipped group, with no
 * rise of live bytes, when it has none of its own -- what a finalize's
 * reader carries forward to it (model/stream.c). */
static int thread_stream(live_t *L, rthread_t *t, uint32_t *map, out_t *o) {
    qsort(t->segs, t->nsegs, sizeof *t->segs, seg_cmp);
    uint64_t next = t->consumed; /* the first sequence number still wanted */
    uint32_t nv = L->nvals;
    /* no buffer when the run read no values (nv 0: no group is kept) */
    uint64_t *pend = L->gbuf, *carry = L->gbuf ? L->gbuf + SPS__VAL_MAX : NULL;
    int have_pend = 0, have_carry = 0, kept = 0;
    for (size_t k = 0; k < t->nsegs; k++) {
        const seg_t *g = &t->segs[k];
        if (g->seq0 + g->n <= next) continue; /* covered, or consumed */
        if (g->seq0 > next && next > t->consumed) L->gaps += g->seq0 - next;
        uint32_t hi = 0;
        int have_hi = 0, hi_out = 0;
        have_pend = 0;
        for (uint32_t i = 0; i < g->n; i++) {
            uint64_t w = g->rec[i];
            uint32_t tag = (uint32_t)(w >> 32);
            if (tag == SPS__REC_HI_TAG) {
                hi = (uint32_t)w;
                have_hi = 1;
                hi_out = g->seq0 + i >= next;
                if (hi_out && out_put(o, w)) return SPS_ENOMEM;
                continue;
            }
            if (tag == SPS__REC_VAL_TAG) {
                uint32_t n = (uint32_t)w;
                if (n > SPS__VAL_MAX || i + 1 + n >= g->n) break; /* its record is missing */
                L->groups++;
                if (nv && n != nv)
                    return sps__err_fail(SPS_EFORMAT, "%s: a value group of %u values in "
                                         "thread %u's records, where the run read %u: a "
                                         "damaged chunk", L->dir, n, (unsigned)(t - L->th), nv);
                if (nv) {
                    memcpy(pend, g->rec + i + 1, (size_t)n * sizeof *pend);
                    have_pend = 1;
                }
                i += n;
                continue;
            }
            if (g->seq0 + i < next) {
                if (have_pend) { /* what the first kept record may carry */
                    memcpy(carry, pend, (size_t)nv * sizeof *carry);
                    if (L->excess_at >= 0) carry[L->excess_at] = 0;
                    have_carry = 1;
                }
                have_pend = 0;
                continue;
            }
            if (!have_hi) break; /* a chunk always starts with one */
            uint32_t payload = (uint32_t)(w >> 32);
            if ((payload >> 1) == 0 || (payload >> 1) >= MAX_REGIONS)
                return sps__err_fail(SPS_EFORMAT, "%s: a record of thread %u names region id "
                                     "%u, which no run gives out: a damaged chunk",
                                     L->dir, (unsigned)(t - L->th), payload >> 1);
            uint32_t r = region_map(L, payload >> 1, map);
            if (!r) return sps__err_fail(SPS_ENOMEM, "%s: out of memory naming regions", L->dir);
            uint64_t ticks = ((uint64_t)hi << 32) | (uint32_t)w;
            if (ticks > L->kill_ticks) L->kill_ticks = ticks;
            /* a HI record first whenever the stream does not have the
             * upper half in effect (the first record, after a skip) */
            if (!hi_out || o->n == 0) {
                if (out_put(o, sps__rec_hi(hi))) return SPS_ENOMEM;
                hi_out = 1;
            }
            const uint64_t *grp = have_pend ? pend : !kept && have_carry ? carry : NULL;
            if (grp) {
                if (out_put(o, ((uint64_t)SPS__REC_VAL_TAG << 32) | nv)) return SPS_ENOMEM;
                for (uint32_t v = 0; v < nv; v++)
                    if (out_put(o, grp[v])) return SPS_ENOMEM;
            }
            have_pend = 0;
            kept = 1;
            if (out_put(o, ((uint64_t)((r << 1) | (payload & 1u)) << 32) | (uint32_t)w))
                return SPS_ENOMEM;
            L->records++;
        }
        next = g->seq0 + g->n;
    }
    return 0;
}

/* Gives o's value groups room: the adopting session (core/buffer.c's
 * adopt_records) cuts a thread's words into chunks of chunk_recs words,
 * a chunk not starting with a HI record getting one in front, and a
 * group must lie in one chunk with its record (model/stream.c reads a
 * split one as a damaged stream).  Where a group and its record would
 * not fit in the rest of a chunk, HI records of the upper half in effect
 * (which change nothing) fill it. */
static int pad_groups(out_t *o, uint32_t chunk) {
    size_t ngroups = 0;
    for (size_t i = 0; i < o->n; i++)
        if ((o->v[i] >> 32) == SPS__REC_VAL_TAG) {
            ngroups++;
            i += (uint32_t)o->v[i];
        }
    if (!ngroups) return 0;
    out_t b = {0};
    uint32_t m = 0;
    uint64_t hi = o->v[0];
    for (size_t i = 0; i < o->n;) {
        uint64_t w = o->v[i];
        int is_hi = (w >> 32) == SPS__REC_HI_TAG;
        if (m == 0 && !is_hi) m = 1; /* the HI record the chunk gets in front */
        size_t need = 1;
        if ((w >> 32) == SPS__REC_VAL_TAG) need = (uint32_t)w + 2;
        if (need > 1 && m + need > chunk) {
            for (; m < chunk; m++)
                if (out_put(&b, hi)) goto fail;
            m = 0;
            continue;
        }
        for (size_t k = 0; k < need && i < o->n; k++, i++) {
            if ((o->v[i] >> 32) == SPS__REC_HI_TAG) hi = o->v[i];
            if (out_put(&b, o->v[i])) goto fail;
            if (++m == chunk) m = 0;
        }
    }
    free(o->v);
    *o = b;
    return 0;
fail:
    free(b.v);
    return SPS_ENOMEM;
}

/* Adds the call of region r on thread (a recovered thread's tid) to the
 * JSON list /metadata recovered_open_spans names (the first 1000). */
static void mark_open(live_t *L, int32_t tid, const char *thread, uint32_t r) {
    if (!L->marks || L->nmarks >= 1000) return;
    fprintf(L->marks, "%s{\"tid\": %d, \"thread\": \"", L->nmarks ? ", " : "[", (int)tid);
    sps__json_fputs(L->marks, thread, 0);
    fputs("\", \"region\": \"", L->marks);
    sps__json_fputs(L->marks, sps_region_name(r) ? sps_region_name(r) : "", 0);
    fputs("\"}", L->marks);
    L->nmarks++;
}

/* Balances o: a begin at its first time for each end whose call began
 * before it, an end at end_ticks for each call still open (listed in
 * /metadata recovered_open_spans). */
static int balance(live_t *L, const rthread_t *t, out_t *o, uint64_t end_ticks) {
    uint32_t *stack = NULL, *early = NULL;
    size_t n = 0, cap = 0, ne = 0, cape = 0;
    uint64_t first = 0;
    int have_first = 0, rc = 0;
    uint32_t hi = 0;
    for (size_t i = 0; i < o->n && !rc; i++) {
        uint64_t w = o->v[i];
        if ((w >> 32) == SPS__REC_HI_TAG) {
            hi = (uint32_t)w;
            continue;
        }
        if ((w >> 32) == SPS__REC_VAL_TAG) { /* thread_stream's: its record follows */
            i += (uint32_t)w;
            continue;
        }
        if (!have_first) {
            first = ((uint64_t)hi << 32) | (uint32_t)w;
            have_first = 1;
        }
        uint32_t payload = (uint32_t)(w >> 32);
        uint32_t r = payload >> 1;
        if (!(payload & 1u)) {
            if (sps__grow((void **)&stack, &cap, n, sizeof *stack)) rc = SPS_ENOMEM;
            else stack[n++] = r;
        } else if (n && stack[n - 1] == r) {
            n--;
        } else if (!n) { /* began before the recovered part */
            if (sps__grow((void **)&early, &cape, ne, sizeof *early)) rc = SPS_ENOMEM;
            else early[ne++] = r;
        }
        /* a mismatched end is the recording's own misuse: left to the fold */
    }
    if (!rc && ne) { /* their begins, outermost first, before everything */
        out_t b = {0};
        rc = out_put(&b, sps__rec_hi((uint32_t)(first >> 32)));
        for (size_t k = ne; k-- > 0 && !rc;)
            rc = out_put(&b, ((uint64_t)(early[k] << 1) << 32) | (uint32_t)first);
        for (size_t i = 0; i < o->n && !rc; i++) rc = out_put(&b, o->v[i]);
        if (!rc) {
            free(o->v);
            *o = b;
        } else {
            free(b.v);
        }
        L->carried += ne;
    }
    if (!rc && n) { /* ended at the last time recorded */
        rc = out_put(o, sps__rec_hi((uint32_t)(end_ticks >> 32)));
        for (size_t k = n; k-- > 0 && !rc;) {
            rc = out_put(o, ((uint64_t)((stack[k] << 1) | 1u) << 32) | (uint32_t)end_ticks);
            mark_open(L, t->tid, t->name, stack[k]);
        }
        L->open_closed += n;
    }
    free(stack);
    free(early);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Stack samples (core/crash_samples.h)                                      */
/* ------------------------------------------------------------------------ */

/* The index of frame (kind, line, addr, fn, file, mod) in S, added on
 * first sight (the strings taken over, or freed when known); -1 out of
 * memory. */
static int64_t smp_frame(rsmp_t *S, int64_t kind, int64_t line, int64_t addr, char *fn,
                         char *file, char *mod) {
    uint64_t h = sps__hash_pair(sps__hash_pair((uint64_t)kind, (uint64_t)line), (uint64_t)addr);
    h = sps__hash_pair(h, sps__hash_bytes(fn, strlen(fn)));
    h = sps__hash_pair(h, sps__hash_bytes(file, strlen(file)));
    h = sps__hash_pair(h, sps__hash_bytes(mod, strlen(mod)));
    sps__hprobe_t p = sps__htab_probe(&S->frames, h);
    for (uint32_t i; sps__htab_next(&S->frames, &p, &i);)
        if (S->kind[i] == kind && S->line[i] == line && S->addr[i] == addr &&
            !strcmp(S->fn[i], fn) && !strcmp(S->file[i], file) && !strcmp(S->mod[i], mod)) {
            free(fn), free(file), free(mod);
            return i;
        }
    if (sps__htab_make_room(&S->frames, &p)) goto oom;
    if (S->nframes == S->capframes) {
        size_t cap = S->capframes * 2 + 64;
        char **a = realloc(S->fn, cap * sizeof *a);
        if (a) S->fn = a;
        char **b = a ? realloc(S->file, cap * sizeof *b) : NULL;
        if (b) S->file = b;
        char **c = b ? realloc(S->mod, cap * sizeof *c) : NULL;
        if (c) S->mod = c;
        int64_t *d = c ? realloc(S->line, cap * sizeof *d) : NULL;
        if (d) S->line = d;
        int64_t *e = d ? realloc(S->kind, cap * sizeof *e) : NULL;
        if (e) S->kind = e;
        int64_t *f = e ? realloc(S->addr, cap * sizeof *f) : NULL;
        if (!f) goto oom;
        S->addr = f;
        S->capframes = cap;
    }
    size_t k = S->nframes++;
    S->fn[k] = fn, S->file[k] = file, S->mod[k] = mod;
    S->line[k] = line, S->kind[k] = kind, S->addr[k] = addr;
    sps__htab_put(&S->frames, &p, (uint32_t)k);
    return (int64_t)k;
oom:
    free(fn), free(file), free(mod);
    return -1;
}

/* The recovered index of the dead sampler's stack id, -1 none. */
static int64_t smp_stack_of(const rsmp_t *S, uint32_t id) {
    sps__hprobe_t p = sps__htab_probe((sps__htab_t *)&S->by_id, sps__hash_pair(id, 0x5354));
    for (uint32_t i; sps__htab_next((sps__htab_t *)&S->by_id, &p, &i);)
        if (S->stacks[i].id == id) return i;
    return -1;
}

/* A STACK entry (p, len bytes).  0, 1 (malformed: said in S->note) or
 * SPS_ENOMEM. */
static int smp_entry_stack(rsmp_t *S, const uint8_t *p, size_t len) {
    uint32_t h[2];
    if (len < 8) return 1;
    memcpy(h, p, 8);
    if (!h[0] || h[1] > SPS__CSMP_FRAMES_MAX) return 1;
    if (smp_stack_of(S, h[0]) >= 0) return 1; /* described twice: not the writer's */
    size_t at = 8;
    if (S->nfidx + h[1] > S->capfidx) {
        size_t cap = (S->nfidx + h[1]) * 2 + 256;
        uint32_t *v = realloc(S->fidx, cap * sizeof *v);
        if (!v) return SPS_ENOMEM;
        S->fidx = v;
        S->capfidx = cap;
    }
    size_t first = S->nfidx;
    for (uint32_t k = 0; k < h[1]; k++) {
        int64_t f[3];
        if (len - at < 24) return 1;
        memcpy(f, p + at, 24);
        at += 24;
        char *str[3] = {NULL, NULL, NULL};
        int bad_str = 0;
        for (int j = 0; j < 3 && !bad_str; j++) {
            uint32_t n;
            size_t used = 0;
            if (len - at < 4) bad_str = 1;
            else memcpy(&n, p + at, 4);
            if (!bad_str && (n > SPS__CSMP_STR_MAX || n > len - at - 4)) bad_str = 1;
            if (!bad_str && !(str[j] = get_str(p + at, len - at, &used))) bad_str = 2;
            at += used;
        }
        if (bad_str || (f[0] != SPS__FRAME_NATIVE && f[0] != SPS__FRAME_RUNTIME)) {
            free(str[0]), free(str[1]), free(str[2]);
            S->nfidx = first;
            return bad_str == 2 ? SPS_ENOMEM : 1;
        }
        int64_t fr = smp_frame(S, f[0], f[1], f[2], str[0], str[1], str[2]);
        if (fr < 0) {
            S->nfidx = first;
            return SPS_ENOMEM;
        }
        S->fidx[S->nfidx++] = (uint32_t)fr;
    }
    if (at != len) {
        S->nfidx = first;
        return 1;
    }
    if (S->nstacks == S->capstacks) {
        size_t cap = S->capstacks * 2 + 64;
        rstack_t *v = realloc(S->stacks, cap * sizeof *v);
        if (!v) return SPS_ENOMEM;
        S->stacks = v;
        S->capstacks = cap;
    }
    sps__hprobe_t pr = sps__htab_probe(&S->by_id, sps__hash_pair(h[0], 0x5354));
    uint32_t other;
    while (sps__htab_next(&S->by_id, &pr, &other)) /* to the probe's end (none is h[0]) */
        ;
    if (sps__htab_make_room(&S->by_id, &pr)) return SPS_ENOMEM;
    S->stacks[S->nstacks] = (rstack_t){h[0], (uint32_t)first, h[1]};
    sps__htab_put(&S->by_id, &pr, (uint32_t)S->nstacks);
    S->nstacks++;
    return 0;
}

/* A BATCH entry.  0, 1 (malformed) or SPS_ENOMEM. */
static int smp_entry_batch(rsmp_t *S, const uint8_t *p, size_t len) {
    uint32_t h[2];
    uint64_t lost;
    if (len < 16) return 1;
    memcpy(h, p, 8);
    memcpy(&lost, p + 8, 8);
    if (h[0] > SPS__CSMP_BATCH_MAX || len != 16 + (size_t)h[0] * sizeof(sps__csmp_rec_t) ||
        h[1] > 1000000 || lost > ((uint64_t)1 << 40))
        return 1;
    if (h[1]) S->hz = (int)h[1];
    S->lost += lost;
    if (S->n + h[0] > S->cap) {
        size_t cap = (S->n + h[0]) * 2;
        sps__sample_t *v = realloc(S->v, cap * sizeof *v);
        if (!v) return SPS_ENOMEM;
        S->v = v;
        S->cap = cap;
    }
    for (uint32_t k = 0; k < h[0]; k++) {
        sps__csmp_rec_t r;
        memcpy(&r, p + 16 + (size_t)k * sizeof r, sizeof r);
        int64_t st = smp_stack_of(S, r.stack);
        if (st < 0 || !r.weight || r.weight > 1000000) { /* no such stack: damage */
            S->skipped++;
            continue;
        }
        S->v[S->n++] = (sps__sample_t){.ticks = r.ticks, .call_id = -1,
                                       .stack = (uint32_t)st + 1, .tid = r.tid,
                                       .thread = UINT32_MAX, .weight = r.weight};
    }
    return 0;
}

/* Reads the directory's samples file, if there is one.  A torn tail ends
 * it quietly; anything malformed ends it too (what came before is kept),
 * said in /metadata recovered_samples_note; never an error but memory. */
static int smp_read(live_t *L) {
    rsmp_t *S = &L->smp;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/samples", L->dir);
    struct stat st;
    if (lstat(path, &st) && errno == ENOENT) return 0; /* not sampled, or an older run */
    uint8_t *b = NULL;
    size_t len = 0;
    int rc = read_file(L->dir, "samples", &b, &len);
    if (rc) { /* not a regular file, unreadable: the records go on */
        snprintf(S->note, sizeof S->note, "%s", sps_last_error());
        sps__err_clear();
        return rc == SPS_ENOMEM ? rc : 0;
    }
    size_t at = 0;
    int first = 1;
    while (!rc && at + 12 <= len) {
        uint32_t h[2], sum;
        memcpy(h, b + at, 8);
        if (h[0] > SPS__CSMP_ENTRY_MAX || at + 12 + h[0] > len) break; /* torn */
        memcpy(&sum, b + at + 8 + h[0], 4);
        if ((uint32_t)sps__hash_bytes(b + at, 8 + h[0]) != sum) break; /* torn */
        const uint8_t *p = b + at + 8;
        int bad_entry = 0;
        if (first != (h[1] == SPS__CSMP_HDR)) {
            bad_entry = 1;
        } else if (h[1] == SPS__CSMP_HDR) {
            uint64_t magic;
            uint32_t v = 0;
            if (h[0] >= 12) memcpy(&magic, p, 8), memcpy(&v, p + 8, 4);
            bad_entry = h[0] != 16 || magic != SPS__CSMP_MAGIC || v != SPS__CSMP_VERSION;
        } else if (h[1] == SPS__CSMP_STACK) {
            bad_entry = smp_entry_stack(S, p, h[0]);
        } else if (h[1] == SPS__CSMP_BATCH) {
            bad_entry = smp_entry_batch(S, p, h[0]);
        } else if (h[1] == SPS__CSMP_DONE && h[0] == 8) {
            uint64_t upto; /* a finalize wrote the samples so far up to upto */
            memcpy(&upto, p, 8);
            size_t k = 0;
            for (size_t i = 0; i < S->n; i++)
                if (S->v[i].ticks > upto) S->v[k++] = S->v[i];
            S->n = k;
        } else {
            bad_entry = 1;
        }
        if (bad_entry == SPS_ENOMEM) rc = SPS_ENOMEM;
        else if (bad_entry) {
            snprintf(S->note, sizeof S->note, "samples: a malformed entry (type %u) at byte "
                     "%zu: the samples after it are left out", h[1], at);
            break;
        }
        first = 0;
        at += 12 + h[0];
    }
    free(b);
    return rc;
}

/* The recovered samples, to the finalize through sps__sample_ops (the
 * one live_write is running: recovery runs one session at a time). */
static rsmp_t *g_rs;

static int rs_start(int hz) {
    (void)hz;
    return SPS_ENOTSUP;
}

static int rs_take(uint64_t upto, sps__sample_t **out, size_t *n, int *hz, uint64_t *lost) {
    rsmp_t *S = g_rs;
    *out = NULL;
    *n = 0;
    *hz = S ? S->hz : 0;
    *lost = 0;
    if (!S) return 0;
    *lost = S->lost;
    S->lost = 0;
    size_t k = 0;
    for (size_t i = 0; i < S->n; i++) k += S->v[i].ticks <= upto;
    if (!k) return 0;
    sps__sample_t *v = malloc(k * sizeof *v);
    if (!v) {
        S->lost += *lost;
        return SPS_ENOMEM;
    }
    size_t a = 0, b = 0;
    for (size_t i = 0; i < S->n; i++) {
        if (S->v[i].ticks <= upto) v[a++] = S->v[i];
        else S->v[b++] = S->v[i];
    }
    S->n = b;
    S->taken += k;
    *out = v;
    *n = k;
    return 0;
}

static void rs_put_back(const sps__sample_t *v, size_t n) {
    rsmp_t *S = g_rs;
    if (!S) return;
    if (S->n + n > S->cap) {
        sps__sample_t *w = realloc(S->v, (S->n + n) * sizeof *w);
        if (!w) {
            S->lost += n;
            return;
        }
        S->v = w;
        S->cap = S->n + n;
    }
    for (size_t i = 0; i < n; i++) {
        S->v[S->n] = v[i];
        S->v[S->n].flags = 0;
        S->v[S->n].call_id = -1;
        S->v[S->n].region = 0;
        S->n++;
    }
    S->taken -= n < S->taken ? n : S->taken;
}

static void rs_sframes_free(sps__sframes_t *f) {
    for (size_t i = 0; i < f->nframes; i++) {
        free(f->function[i]);
        free(f->file[i]);
        free(f->module[i]);
    }
    free(f->function), free(f->file), free(f->module);
    free(f->line), free(f->kind), free(f->address);
    free(f->offsets), free(f->frame_of);
    memset(f, 0, sizeof *f);
}

/* The frames of recovered stack ids[0..n): the frames they use, in
 * first-use order. */
static int rs_describe(const uint32_t *ids, size_t n, sps__sframes_t *out) {
    const rsmp_t *S = g_rs;
    memset(out, 0, sizeof *out);
    size_t total = 0;
    for (size_t i = 0; S && i < n; i++)
        if (ids[i] && ids[i] <= S->nstacks) total += S->stacks[ids[i] - 1].n;
    int64_t *map = S && S->nframes ? malloc(S->nframes * sizeof *map) : NULL;
    out->offsets = malloc((n + 1) * sizeof *out->offsets);
    out->frame_of = malloc((total ? total : 1) * sizeof *out->frame_of);
    size_t cap = total ? total : 1;
    out->function = calloc(cap, sizeof(char *));
    out->file = calloc(cap, sizeof(char *));
    out->module = calloc(cap, sizeof(char *));
    out->line = malloc(cap * sizeof(int64_t));
    out->kind = malloc(cap * sizeof(int64_t));
    out->address = malloc(cap * sizeof(int64_t));
    int rc = out->offsets && out->frame_of && out->function && out->file && out->module &&
             out->line && out->kind && out->address && (map || !S || !S->nframes)
                 ? 0 : SPS_ENOMEM;
    for (size_t i = 0; !rc && S && i < S->nframes; i++) map[i] = -1;
    size_t k = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        out->offsets[i] = k;
        if (!S || !ids[i] || ids[i] > S->nstacks) continue;
        const rstack_t *st = &S->stacks[ids[i] - 1];
        for (uint32_t j = 0; !rc && j < st->n; j++) {
            uint32_t f = S->fidx[st->first + j];
            if (map[f] < 0) {
                size_t m = out->nframes;
                out->function[m] = strdup(S->fn[f]);
                out->file[m] = strdup(S->file[f]);
                out->module[m] = strdup(S->mod[f]);
                out->line[m] = S->line[f];
                out->kind[m] = S->kind[f];
                out->address[m] = S->addr[f];
                out->nframes++;
                if (!out->function[m] || !out->file[m] || !out->module[m]) rc = SPS_ENOMEM;
                map[f] = (int64_t)m;
            }
            out->frame_of[k++] = (uint32_t)map[f];
        }
    }
    if (!rc) out->offsets[n] = k;
    out->nstacks = n;
    free(map);
    if (rc) rs_sframes_free(out);
    return rc;
}

static void rs_session_end(void) {}

static const sps__sample_ops_t g_rs_ops = {rs_start, rs_take, rs_put_back, rs_describe,
                                           rs_sframes_free, rs_session_end};

static void smp_free(rsmp_t *S) {
    for (size_t i = 0; i < S->nframes; i++) free(S->fn[i]), free(S->file[i]), free(S->mod[i]);
    free(S->fn), free(S->file), free(S->mod);
    free(S->line), free(S->kind), free(S->addr);
    free(S->stacks), free(S->fidx), free(S->v);
    sps__htab_free(&S->by_id);
    sps__htab_free(&S->frames);
}

/* ------------------------------------------------------------------------ */
/* One directory                                                             */
/* ------------------------------------------------------------------------ */

static void live_free(live_t *L) {
    for (uint32_t i = 0; i < L->nnames; i++) free(L->names[i]);
    free(L->names);
    for (uint32_t i = 0; i < L->nth; i++) {
        for (size_t k = 0; k < L->th[i].nsegs; k++) free(L->th[i].segs[k].owned);
        free(L->th[i].segs);
    }
    free(L->th);
    free(L->anchors);
    free(L->slots);
    free(L->file_path);
    free(L->label);
    free(L->spill_path);
    free(L->value_names);
    free(L->gbuf);
    smp_free(&L->smp);
    if (L->chunks) munmap(L->chunks, L->chunks_len);
    if (L->spill_fd >= 0) close(L->spill_fd);
}

static int map_chunks(live_t *L) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/chunks", L->dir);
    int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return sps__err_fail(SPS_EPATH, "%s: %s", p, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) rc = sps__err_fail(SPS_EFORMAT, "%s: not a file", p);
    else if (st.st_size > 0) {
        L->chunks_len = (size_t)st.st_size;
        void *m = mmap(NULL, L->chunks_len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) rc = sps__err_fail(SPS_EIO, "%s: %s", p, strerror(errno));
        else L->chunks = m;
    }
    close(fd);
    return rc;
}

static int anchor_cmp(const void *a, const void *b) {
    const sps__anchor_t *x = a, *y = b;
    return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

/* Reads directory dir into L (everything but the session). */
static int live_read(live_t *L) {
    uint8_t *log = NULL;
    size_t len = 0;
    int rc = map_chunks(L);
    if (!rc) rc = read_file(L->dir, "log", &log, &len);
    if (!rc) rc = parse_log(L, log, len);
    free(log);
    if (!rc) rc = read_slot_table(L);
    if (!rc) rc = smp_read(L);
    if (!rc) rc = add_slots(L);
    if (!rc && !L->nanchors) rc = bad(L, "no clock anchor", 0);
    if (!rc) qsort(L->anchors, L->nanchors, sizeof *L->anchors, anchor_cmp);
    return rc;
}

/* What the recovered session reads per record, from the header: its
 * cfg.track, and for counters their names chosen (sps_set_counters: the
 * choice stays, as a later sps_set_counters would leave it).  Sets
 * L->nvals to the values per group; 0 (groups left out) for a log
 * without the names (an older spanscope's). */
static int values_plan(live_t *L, int *track) {
    *track = 0;
    L->nvals = 0;
    L->excess_at = -1;
    const char *v = L->value_names;
    if (!v || !*v) return 0;
    uint32_t n = 1;
    for (const char *p = v; *p; p++) n += *p == '\n';
    int t = (int)(L->hdr.track & (SPS_TRACK_MEMORY | SPS_TRACK_COUNTERS));
    uint32_t nmem = t & SPS_TRACK_MEMORY ? SPS__MEM_NVALS : 0;
    if (!t || n > SPS__VAL_MAX || n < nmem || ((t & SPS_TRACK_COUNTERS) == 0 && n != nmem))
        return sps__err_fail(SPS_EFORMAT, "%s: the header names %u values for tracking %d: "
                             "not a spanscope live directory, or damaged", L->dir, n, t);
    if (n > nmem) { /* the counters' names, comma-separated */
        const char *c = v;
        for (uint32_t k = 0; k < nmem; k++) c = strchr(c, '\n') + 1;
        char *names = strdup(c);
        if (!names) return SPS_ENOMEM;
        for (char *p = names; *p; p++)
            if (*p == '\n') *p = ',';
            else if (*p == ',') *p = ' '; /* no name holds one: damage, named below */
        int rc = sps_set_counters(names);
        if (rc) {
            char why[512];
            snprintf(why, sizeof why, "%s", sps_last_error());
            rc = sps__err_fail(rc, "%s: the run read the counters \"%s\", which this "
                               "spanscope does not take (%s)", L->dir, names, why);
        }
        free(names);
        if (rc) return rc;
    } else {
        t &= ~SPS_TRACK_COUNTERS;
    }
    L->gbuf = malloc(2 * SPS__VAL_MAX * sizeof *L->gbuf);
    if (!L->gbuf) return SPS_ENOMEM;
    *track = t;
    L->nvals = n;
    L->excess_at = t & SPS_TRACK_MEMORY ? SPS__MEM_EXCESS : -1;
    return 0;
}

/* The session that writes L's records to out. */
static int live_write(live_t *L, const char *out) {
    uint32_t *map = calloc(L->nnames ? L->nnames : 1, sizeof *map);
    out_t *streams = calloc(L->nth ? L->nth : 1, sizeof *streams);
    int rc = map && streams ? 0 : SPS_ENOMEM;
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = out;
    cfg.label = L->label && *L->label ? L->label : NULL;
    cfg.overflow = SPS_OVERFLOW_GROW;
    cfg.local = 1;
    cfg.rank = L->hdr.rank >= 0 && L->hdr.size > L->hdr.rank ? L->hdr.rank : 0;
    cfg.size = L->hdr.size > cfg.rank ? L->hdr.size : 1;
    if (!rc) rc = values_plan(L, &cfg.track);
    int want = sps__crash_want();
    /* the finalize takes and describes the recovered samples (none taken
     * here: cfg.sample_hz is 0) */
    const sps__sample_ops_t *sampler = sps__sample_ops;
    g_rs = &L->smp;
    sps__sample_ops = &g_rs_ops;
    sps_crash_safe(0); /* this session's own records are not to be kept */
    if (!rc) rc = sps_setup(&cfg);
    sps_crash_safe(want);
    if (rc) goto done;
    if (sps__g.nvals != L->nvals) {
        rc = sps__err_fail(SPS_EFORMAT, "%s: the run read %u values per record, a session "
                           "here reads %u", L->dir, L->nvals, sps__g.nvals);
        sps_shutdown();
        goto done;
    }
    for (uint32_t i = 0; i < L->nth && !rc; i++)
        if (L->th[i].nsegs) rc = thread_stream(L, &L->th[i], map, &streams[i]);
    /* the last anchor, then the last record (or sample): the time map
     * reaches it */
    sps__anchor_t last = L->anchors[L->nanchors - 1];
    uint64_t end_ticks = L->kill_ticks;
    rsmp_t *S = &L->smp;
    size_t kept = 0;
    for (size_t i = 0; i < S->n; i++) { /* samples past any clock: damage */
        double span = S->v[i].ticks > last.ticks
                          ? (double)(S->v[i].ticks - last.ticks) * L->hdr.ns_per_tick : 0;
        if (span > (double)(NS_MAX - last.ns)) {
            S->skipped++;
            continue;
        }
        if (S->v[i].ticks > end_ticks) end_ticks = S->v[i].ticks;
        S->v[kept++] = S->v[i];
    }
    S->n = kept;
    if (!rc && end_ticks > last.ticks) {
        double span = (double)(end_ticks - last.ticks) * L->hdr.ns_per_tick;
        if (span > (double)(NS_MAX - last.ns)) /* records far past the clock's anchors */
            rc = sps__err_fail(SPS_EFORMAT, "%s: records lie %.3g s past the last clock anchor: "
                               "a damaged chunk", L->dir, span / 1e9);
        sps__anchor_t a = {end_ticks, last.ns + (int64_t)span};
        if (!rc) rc = add_anchor(L, a);
    }
    if (!rc) rc = sps__adopt_clock(L->anchors, L->nanchors, L->hdr.wall_anchor_ns,
                                   L->hdr.mono_anchor_ns);
    uint32_t threads = 0;
    L->marks = open_memstream(&L->marks_text, &L->marks_len);
    for (uint32_t i = 0; i < L->nth && !rc; i++) {
        if (!streams[i].n) continue;
        rc = balance(L, &L->th[i], &streams[i], end_ticks);
        if (!rc && L->nvals) rc = pad_groups(&streams[i], sps__g.chunk_recs);
        if (!rc) rc = sps__adopt_thread(L->th[i].tid, L->th[i].name, streams[i].v, streams[i].n);
        threads++;
    }
    char num[32];
    snprintf(num, sizeof num, "%d", (int)L->hdr.pid);
    if (!rc) sps_metadata_set("recovered_from_pid", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)L->open_closed);
    if (!rc) sps_metadata_set("recovered_open_calls", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)L->carried);
    if (!rc) sps_metadata_set("recovered_carried_calls", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)L->gaps);
    if (!rc) sps_metadata_set("recovered_lost_records", num);
    snprintf(num, sizeof num, "%zu", S->n);
    if (!rc) sps_metadata_set("recovered_samples", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)S->skipped);
    if (!rc) sps_metadata_set("recovered_samples_skipped", num);
    if (!rc && S->note[0]) sps_metadata_set("recovered_samples_note", S->note);
    if (!rc) sps_metadata_set("recovered", "1");
    if (L->marks) {
        fputs(L->nmarks ? "]" : "[]", L->marks);
        fclose(L->marks);
        L->marks = NULL;
        if (!rc && L->marks_text) sps_metadata_set("recovered_open_spans", L->marks_text);
        free(L->marks_text);
        L->marks_text = NULL;
    }
    if (!rc) rc = sps_finalize();
    sps_shutdown();
done:
    sps__sample_ops = sampler;
    g_rs = NULL;
    for (uint32_t i = 0; i < L->nth && streams; i++) free(streams[i].v);
    free(streams);
    free(map);
    return rc;
}

static void remove_live(const char *dir, const char *spill_path) {
    static const char *const names[] = {"log", "chunks", "spill", "samples", "slots"};
    char p[PATH_MAX];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    if (spill_path && *spill_path) unlink(spill_path);
    rmdir(dir);
}

/* ------------------------------------------------------------------------ */
/* The directories of a path                                                 */
/* ------------------------------------------------------------------------ */

static int str_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The "<path>.live-<pid>" directories, sorted; *n of them. */
static int find_dirs(const char *path, char ***out, size_t *n) {
    char dir[PATH_MAX], prefix[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash) {
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
        if (!dir[0]) strcpy(dir, "/");
    } else {
        strcpy(dir, ".");
    }
    snprintf(prefix, sizeof prefix, "%s.live-", slash ? slash + 1 : path);
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return sps__err_fail(SPS_EPATH, "%s: %s", dir, strerror(errno));
    size_t cap = 0, plen = strlen(prefix);
    int rc = 0;
    for (struct dirent *e; (e = readdir(d)) && !rc;) {
        if (strncmp(e->d_name, prefix, plen)) continue;
        const char *pid = e->d_name + plen;
        if (!*pid || strspn(pid, "0123456789") != strlen(pid)) continue;
        char full[PATH_MAX];
        if (snprintf(full, sizeof full, "%s/%s", dir, e->d_name) >= (int)sizeof full) continue;
        if (sps__grow((void **)out, &cap, *n, sizeof **out)) rc = SPS_ENOMEM;
        else if (!((*out)[*n] = strdup(full))) rc = SPS_ENOMEM;
        else (*n)++;
    }
    closedir(d);
    if (!rc && *n) qsort(*out, *n, sizeof **out, str_cmp);
    return rc;
}

/* path's output for directory number i of n: path itself for a single
 * one, else "<stem>.pid<PID><ext>". */
static void out_name(const char *path, const live_t *L, size_t n, char *buf, size_t cap) {
    if (n == 1) {
        snprintf(buf, cap, "%s", path);
        return;
    }
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    if (!dot || dot == (slash ? slash + 1 : path)) dot = path + strlen(path);
    snprintf(buf, cap, "%.*s.pid%d%s", (int)(dot - path), path, (int)L->hdr.pid, dot);
}

int sps__recover(const char *path, sps_recover_info_t *info) {
    if (!path || !*path) return sps__err_fail(SPS_EINVAL, "recover: no path");
    if (sps__session_live())
        return sps__err_fail(SPS_EACTIVE, "recover: a session is running in this process");
    char **dirs = NULL;
    size_t n = 0;
    int rc = find_dirs(path, &dirs, &n);
    if (!rc && !n)
        rc = sps__err_fail(SPS_EPATH, "%s: nothing to recover (no %s.live-<pid> directory: "
                           "the run finalized, or crash safety was off)", path, path);
    for (size_t i = 0; i < n && !rc; i++) {
        live_t L = {.dir = dirs[i], .spill_fd = -1};
        sps__err_clear();
        char out[PATH_MAX];
        rc = live_read(&L);
        if (!rc) {
            out_name(path, &L, n, out, sizeof out);
            rc = live_write(&L, out);
        }
        if (!rc && info) {
            info->processes++;
            info->records += L.records;
            info->open_closed += L.open_closed;
            info->carried += L.carried;
            info->lost_records += L.gaps;
            for (uint32_t k = 0; k < L.nth; k++) info->threads += L.th[k].nsegs > 0;
        }
        if (rc == SPS_ENOMEM && !sps__err_msg()[0])
            sps__err_fail(rc, "%s: out of memory (the recovered records are held in memory "
                          "before they are written)", dirs[i]);
        if (!rc) remove_live(dirs[i], L.spill_path);
        live_free(&L);
    }
    for (size_t i = 0; i < n; i++) free(dirs[i]);
    free(dirs);
    return rc;
}

int sps_recover(const char *path, sps_recover_info_t *info, char *err, size_t errlen) {
    sps__err_clear();
    if (info) memset(info, 0, sizeof *info);
    return sps__err_copy(sps__recover(path, info), err, errlen);
}
