/* spill.c -- the spill writer: full chunks leave memory for the spill file,
 * packed (pack.c), by a thread of their own.
 *
 * Why a thread: packing and writing a 64 KiB chunk costs ~10-30 us, i.e.
 * a few ns per recorded call, on top of a ~17 ns call; done in the
 * recording thread's slow path (as before) it held the session lock and
 * made long recordings cost 1.2-2.4x the floor.  Here the recording thread
 * only links the chunk into a queue; the writer packs it without the lock,
 * writes it, and (under the lock again) turns the descriptor into a spilled
 * one and gives the memory back to the pool.
 *
 * When to spill: once fewer than a quarter of the pool's chunks are free
 * or on their way (queued or being written), every chunk a thread retires
 * is queued, so the writer keeps that reserve free ahead of the recorders.
 * The writer is woken once per SPILL_BATCH queued chunks (a futex wake per
 * chunk would cost the recorder ~0.5 ns per call).
 *
 * When the writer falls behind (the reserve is gone): the recording thread
 * waits for it (nothing is lost; the wait shows in the region that was
 * being recorded, as the old in-line write did).  If a write fails or
 * cfg.spill_limit is reached, chunks stay in memory and new events are
 * dropped and counted, as before, until a finalize frees room.  If no
 * thread can be started, in a forked child, or with
 * SPANSCOPE_SPILL_THREAD=0, the recording thread packs and writes the
 * chunk itself, under the lock.
 *
 * Ownership: a retired chunk's records never change, so the writer may
 * read them without the lock while it is BUSY; nothing else may reuse that
 * memory meanwhile (a release is deferred to the writer), and a chunk a
 * snapshot took (c->thr == NULL) is not converted (the snapshot's segments
 * point at its memory).  The spill file only grows while anything in it is
 * live or a write is in flight.
 *
 * Runs: the writer appends a thread's next spilled chunk to that thread's
 * last spilled descriptor (spill_run), so 10^9 calls need a handful of
 * descriptors, not 250 000 (their memory would break the 64 MiB bound).
 * The packed chunks of a run are chained in the file: a header's next is
 * 0 when the next chunk follows it, else patched to point at it. */
#include "core/core.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPILL_BATCH 8           /* queued chunks per wake of the writer */
#define RUN_MAX 0x7FFFFFFFu     /* records per run descriptor */
#define READ_WIN (24u << 10)    /* reader's window: > a frame + a header
                                   (one per thread in a merged pass: 64
                                   threads' windows are 1.5 MiB) */
_Static_assert(READ_WIN > SPS__PACK_HDR + 4 + 8 * SPS__PACK_FRAME + SPS__PACK_SLACK,
               "the spill reader's window holds a whole frame");
#define WRITER_STACK (256u << 10)

/* ------------------------------------------------------------------------ */
/* The queue                                                                 */
/* ------------------------------------------------------------------------ */

static void q_push(sps__chunk_t *c) {
    sps__spiller_t *sp = &sps__g.sp;
    c->qnext = NULL;
    c->qprev = sp->qtail;
    if (sp->qtail) sp->qtail->qnext = c; else sp->qhead = c;
    sp->qtail = c;
    sp->queued++;
    c->spill = SPS__CH_QUEUED;
}

static void q_remove(sps__chunk_t *c) {
    sps__spiller_t *sp = &sps__g.sp;
    if (c->qprev) c->qprev->qnext = c->qnext; else sp->qhead = c->qnext;
    if (c->qnext) c->qnext->qprev = c->qprev; else sp->qtail = c->qprev;
    c->qprev = c->qnext = NULL;
    sp->queued--;
    c->spill = SPS__CH_IDLE;
}

/* Chunks a thread can take now, and those on their way back. */
static size_t pool_ready(void) {
    size_t unalloc = sps__g.budget_chunks > sps__g.mem_chunks
        ? sps__g.budget_chunks - sps__g.mem_chunks : 0;
    return sps__g.free_count + unalloc;
}
static size_t pool_coming(void) { return sps__g.sp.queued + (sps__g.sp.busy != NULL); }

/* How many chunks the writer keeps free ahead of the recorders. */
static size_t reserve(void) {
    size_t r = sps__g.budget_chunks / 4;
    return r < 2 ? 2 : r;
}

/* ------------------------------------------------------------------------ */
/* Packing and writing one chunk                                             */
/* ------------------------------------------------------------------------ */

/* What the writer decided about a chunk under the lock, before packing. */
typedef struct job {
    sps__chunk_t *c;
    int fd;
    int64_t off;       /* where it goes: the file's end */
    int64_t patch_off; /* a header's next field to point at off, or -1 */
    int merge;         /* it extends its thread's spill_run */
    int cause;         /* a failure's errno or SPS__SPILL_LIMIT (job_write
                          runs in the writer thread, whose error state no
                          one reads: the cause travels in the job) */
    uint32_t thread;   /* c's thread's index (crash.c's log) */
} job_t;

/* Under the lock: c's thread's last spilled run, if c may extend it. */
static sps__chunk_t *run_of(const sps__chunk_t *c) {
    sps__thr_t *t = c->thr;
    sps__chunk_t *r = t ? t->spill_run : NULL;
    if (!r || r->next != c || r->thr != t || r->rec || c->consumed ||
        r->seq0 + r->n != c->seq0 || (uint64_t)r->n + c->n > RUN_MAX)
        return NULL;
    return r;
}

/* Under the lock: takes the queue's oldest chunk, marks it BUSY, and plans
 * its write.  0, or -1 when the spill file cannot be opened. */
static int job_start(job_t *j) {
    sps__spiller_t *sp = &sps__g.sp;
    sps__chunk_t *c = sp->qhead;
    q_remove(c);
    c->spill = SPS__CH_BUSY;
    sp->busy = c;
    *j = (job_t){c, -1, sps__g.spill_end, -1, 0, 0, c->thr ? c->thr->index : 0};
    if (sps__g.spill_fd < 0 && sps__crash_on()) {
        sps__g.spill_fd = sps__crash_spill_open(); /* named: crash.c */
        if (sps__g.spill_fd < 0) j->cause = errno;
    } else if (sps__g.spill_fd < 0) {
        const char *dir = sps__g.spill_dir;
        sps__g.spill_fd = sps__tmpfile_open(dir && *dir ? dir : NULL, "spanscope-spill-");
        if (sps__g.spill_fd < 0) j->cause = errno; /* a missing or read-only dir */
    }
    if ((j->fd = sps__g.spill_fd) < 0) return -1;
    sps__chunk_t *r = run_of(c);
    if (r) {
        j->merge = 1;
        if (r->file_end != j->off) j->patch_off = r->last_off + SPS__PACK_HDR_NEXT;
    }
    return 0;
}

/* Without the lock (the writer) or with it (sync): packs j->c into
 * sps__g.sp.buf and writes it.  Returns the bytes written, or 0 with
 * j->cause set (the failing call's errno, read at once). */
static size_t job_write(job_t *j) {
    sps__spiller_t *sp = &sps__g.sp;
    const sps__chunk_t *c = j->c;
    size_t need = sps__pack_bound(c->n);
    if (need > sp->buf_cap) {
        uint8_t *b = realloc(sp->buf, need);
        if (!b) return (size_t)(j->cause = ENOMEM, 0);
        sp->buf = b;
        sp->buf_cap = need;
    }
    size_t len = sps__pack(c->rec, c->n, sp->buf);
    uint64_t lim = sps__g.cfg.spill_limit;
    if (lim && (uint64_t)j->off + len > lim) return (size_t)(j->cause = SPS__SPILL_LIMIT, 0);
    if (sps__pwrite_all(j->fd, sp->buf, len, j->off) ||
        (j->patch_off >= 0 &&
         sps__pwrite_all(j->fd, &j->off, sizeof j->off, j->patch_off))) {
        j->cause = errno;
        return 0;
    }
    /* before the slot can be cleared and reused (job_end, convert) */
    sps__crash_spilled(j->thread, c->seq0, c->n, j->off, len);
    return len;
}

/* Under the lock: c's records are at [off, off + len); c gives its memory
 * to the pool and becomes spilled, or joins its thread's run. */
static void convert(sps__chunk_t *c, int64_t off, size_t len, int merge) {
    sps__thr_t *t = c->thr;
    sps__chunk_t *r = merge ? run_of(c) : NULL;
    sps__chunk_t *d = r ? c : calloc(1, sizeof *d);
    if (!d) return; /* stays in memory; nothing is lost */
    sps__g.spill_end = off + (int64_t)len;
    sps__g.sp.bytes += len;
    sps__g.sp.records += c->n;
    if (r) { /* c's descriptor leaves the list and carries the memory */
        if (t->an_chunk == c) {
            t->an_chunk = r;
            t->an_pos += r->n;
            t->an_off = off; /* c's records start there */
            t->an_off_pos = r->n;
        } else if (t->an_chunk == r && t->an_pos == r->n) {
            t->an_off = off; /* all of r was analyzed: resume at c */
            t->an_off_pos = r->n;
        }
        r->n += c->n;
        r->next = c->next;
        if (t->tail == c) t->tail = r;
        r->last_off = off;
        r->file_end = sps__g.spill_end;
        sps__pool_put(c);
        return;
    }
    d->rec = c->rec; /* the memory moves to d, and with it what it is */
    d->cap = c->cap;
    d->mapped = c->mapped;
    d->live_off = c->live_off;
    d->live_gen = c->live_gen;
    if (t->an_chunk == c) t->an_off = -1; /* from c->file_off */
    c->rec = NULL;
    c->mapped = 0;
    c->live_off = -1;
    c->file_off = c->last_off = off;
    c->file_end = sps__g.spill_end;
    t->spill_run = c;
    sps__g.spilled_live++;
    sps__pool_put(d);
}

/* Under the lock: the job is over (len bytes written, 0 if it failed). */
static void job_end(const job_t *j, size_t len) {
    sps__spiller_t *sp = &sps__g.sp;
    sps__chunk_t *c = j->c;
    sp->busy = NULL;
    c->spill = SPS__CH_IDLE;
    if (c->release_pending) { /* released meanwhile: the write is void */
        c->release_pending = 0;
        sps__chunk_release(c);
    } else if (!len) {
        sp->err = 1; /* stays in memory */
        sp->cause = j->cause ? j->cause : EIO;
    } else if (c->thr) { /* not taken by a snapshot meanwhile */
        convert(c, j->off, len, j->merge);
    }
    pthread_cond_broadcast(&sp->done);
    sps__spill_trim(0);
}

/* Under the lock, all of it: packs and writes the queue's oldest chunk in
 * the calling thread (no writer thread). */
static void spill_sync_one(void) {
    job_t j;
    job_end(&j, job_start(&j) ? 0 : job_write(&j));
}

/* Under the lock, with no write in flight: lets the spill file go, so that
 * the next session opens one in its own cfg.spill_dir. */
static void spill_file_close(void) {
    if (sps__g.spill_fd >= 0) close(sps__g.spill_fd);
    sps__g.spill_fd = -1;
    sps__g.spill_end = 0;
}

/* ------------------------------------------------------------------------ */
/* The writer thread                                                         */
/* ------------------------------------------------------------------------ */

const sps__bg_ops_t *sps__bg_ops; /* set at setup by the api layer */

void sps__bg_wait(void) {
    while (sps__g.bg_busy) { /* bg_waiters: the writer's next step waits */
        sps__g.bg_waiters++;
        pthread_cond_wait(&sps__g.sp.done, &sps__g.lock);
        sps__g.bg_waiters--;
    }
}

/* Under the lock: waits on work for SPS__BG_RETRY_MS at most (records
 * wait for an anchor: a recording that pauses is analyzed meanwhile). */
static void bg_retry_wait(sps__spiller_t *sp) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += SPS__BG_RETRY_MS * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&sp->work, &sps__g.lock, &ts);
}

static void *writer_main(void *arg) {
    uint64_t gen = (uint64_t)(uintptr_t)arg;
    sps__spiller_t *sp = &sps__g.sp;
    pthread_mutex_lock(&sps__g.lock);
    for (;;) {
        while (sp->gen == gen && !sp->qhead) {
            /* idle: analyze what the recorders retired meanwhile, a
             * short step at a time (the queue is looked at in between) */
            int bg = sps__bg_ops && !sp->err ? sps__bg_ops->step() : 0;
            if (bg > 0) continue;
            sp->idle = 1;
            if (bg < 0) bg_retry_wait(sp);
            else pthread_cond_wait(&sp->work, &sps__g.lock);
            sp->idle = 0;
        }
        if (sp->gen != gen) break;
        if (sp->err) {
            /* the spill file failed: what is queued stays in memory.  A
             * later write could only land in the space a failed one left
             * and free a chunk, and the recorders, dropping since the
             * failure, would keep a few calls between dropped ones again:
             * each such edge cuts a call, whose kept records then count
             * neither as kept calls nor as dropped. */
            while (sp->qhead) q_remove(sp->qhead);
            pthread_cond_broadcast(&sp->done);
            continue;
        }
        job_t j;
        if (job_start(&j)) {
            job_end(&j, 0);
            continue;
        }
        pthread_mutex_unlock(&sps__g.lock);
        size_t len = job_write(&j);
        pthread_mutex_lock(&sps__g.lock);
        job_end(&j, len);
    }
    spill_file_close(); /* the session that used it is over */
    sp->alive = 0;
    pthread_cond_broadcast(&sp->done);
    pthread_mutex_unlock(&sps__g.lock);
    return NULL;
}

/* Under the lock: a writer thread runs (started now if need be); 0 if none
 * can (then the caller spills in its own thread). */
static int writer_up(void) {
    sps__spiller_t *sp = &sps__g.sp;
    if (sp->alive) return 1;
    if (sp->sync) return 0;
    pthread_attr_t at;
    sigset_t all, old;
    if (pthread_attr_init(&at)) return 0;
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, WRITER_STACK);
    /* no signal of the program's is ever delivered to the writer */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t th;
    int rc = pthread_create(&th, &at, writer_main, (void *)(uintptr_t)sp->gen);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
    if (rc) {
        sp->sync = 1; /* e.g. a thread limit: spill in the recorders */
        return 0;
    }
    sp->alive = 1;
    return 1;
}

static void writer_wake(void) {
    if (sps__g.sp.idle) pthread_cond_signal(&sps__g.sp.work);
}

/* ------------------------------------------------------------------------ */
/* What the recording threads call                                           */
/* ------------------------------------------------------------------------ */

/* The background analysis needs the writer even when nothing spills (a
 * pool large enough for the whole run): on a machine with more than one
 * CPU, once BG_START_RECORDS were retired the writer is started, and woken
 * whenever BG_WAKE_RECORDS more were, to analyze them beside the
 * recorders, so that finalize finds them done (whether it may, right now,
 * is the analyzer's decision: model/analyze.c, bg_trial.c).  A short
 * recording (under 2^18 records, ~3 ms of analysis at finalize) starts no
 * thread.  A wake per chunk would be a futex call every chunk (8192
 * records by default) while the analyzer is refused. */
#define BG_START_RECORDS (1u << 18)
#define BG_WAKE_RECORDS (1u << 17)

static int bg_cpus(void) {
    static long ncpu;
    if (!ncpu) ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    return ncpu > 1;
}

/* Under the lock: starts or wakes the writer for the background analysis
 * when the rule above says so. */
static void bg_nudge(void) {
    sps__spiller_t *sp = &sps__g.sp;
    if (!sps__bg_ops || sp->err || sp->sync || !bg_cpus()) return;
    uint64_t fresh = sps__g.retired - sp->bg_woken; /* since the session began, or the last wake */
    if (fresh < (sp->alive ? BG_WAKE_RECORDS : BG_START_RECORDS) || (sp->alive && !sp->idle))
        return;
    sp->bg_woken = sps__g.retired;
    if (writer_up()) writer_wake();
}

void sps__spill_retired(sps__chunk_t *c) {
    sps__spiller_t *sp = &sps__g.sp;
    size_t ready = pool_ready(), res = reserve();
    if (!sp->err && ready + pool_coming() < res) q_push(c);
    if (sp->queued && (sp->queued >= SPILL_BATCH || ready <= res / 2) && writer_up())
        writer_wake();
    else
        bg_nudge();
}

/* Under the lock: queues one idle in-memory retired chunk, t's own first
 * (oldest first), else another thread's.  0 if there is none. */
static int queue_some(sps__thr_t *t) {
    for (int pass = 0; pass < 2; pass++)
        for (sps__thr_t *u = pass ? sps__g.threads : t; u; u = pass ? u->next_all : NULL) {
            if (pass && u == t) continue;
            for (sps__chunk_t *c = u->head; c; c = c->next)
                if (c->rec && c->spill == SPS__CH_IDLE && c->thr == u) {
                    q_push(c);
                    return 1;
                }
        }
    return 0;
}

int sps__spill_make_room(sps__thr_t *t) {
    sps__spiller_t *sp = &sps__g.sp;
    if (sp->err) return SPS__ROOM_DROP;
    if (!pool_coming() && !queue_some(t)) return SPS__ROOM_GROW;
    if (!writer_up()) {
        if (sp->qhead) spill_sync_one();
        return sp->err ? SPS__ROOM_DROP : SPS__ROOM_RETRY;
    }
    writer_wake();
    uint64_t epoch = sps__g.epoch;
    sp->waits++;
    sp->waiters++;
    pthread_cond_wait(&sp->done, &sps__g.lock);
    sp->waiters--;
    int st = sps__state_load();
    if (sps__g.epoch != epoch || t->epoch != epoch ||
        (st != SPS__EVENTS && st != SPS__EVENTS_EXTRA))
        return SPS__ROOM_GONE;
    return SPS__ROOM_RETRY;
}

/* ------------------------------------------------------------------------ */
/* Snapshots, releases, the file                                             */
/* ------------------------------------------------------------------------ */

void sps__spill_take(sps__chunk_t *c) {
    if (c->spill == SPS__CH_QUEUED) q_remove(c);
    c->thr = NULL;
}

int sps__spill_release(sps__chunk_t *c) {
    c->thr = NULL;
    if (c->spill == SPS__CH_BUSY) {
        c->release_pending = 1;
        return 1;
    }
    if (c->spill == SPS__CH_QUEUED) q_remove(c);
    return 0;
}

void sps__spill_trim(int forgive) {
    if (forgive) sps__g.sp.err = 0; /* room again: spilling may resume */
    if (sps__g.spilled_live || sps__g.sp.busy) return;
    if (sps__g.spill_fd >= 0 && sps__g.spill_end > 0 && ftruncate(sps__g.spill_fd, 0) == 0)
        sps__g.spill_end = 0;
}

int sps__spill_all(void) {
    sps__spiller_t *sp = &sps__g.sp;
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
        for (sps__chunk_t *c = t->head; c; c = c->next)
            if (c->rec && c->spill == SPS__CH_IDLE && c->thr == t) q_push(c);
    while (sp->busy) pthread_cond_wait(&sp->done, &sps__g.lock); /* the writer's */
    while (sp->qhead) {
        if (sp->alive) { /* let the writer do it, in order */
            writer_wake();
            pthread_cond_wait(&sp->done, &sps__g.lock);
        } else {
            spill_sync_one();
        }
        if (sp->err) return SPS_EIO;
    }
    while (sp->busy) pthread_cond_wait(&sp->done, &sps__g.lock);
    return sp->err ? SPS_EIO : 0;
}

void sps__spill_open(void) {
    sps__spiller_t *sp = &sps__g.sp;
    while (sp->alive) pthread_cond_wait(&sp->done, &sps__g.lock);
    const char *env = getenv("SPANSCOPE_SPILL_THREAD");
    sp->sync = sp->forked || (env && strcmp(env, "0") == 0);
    sp->err = sp->cause = 0;
    sp->bytes = sp->records = sp->waits = sp->bg_records = sp->bg_taken = 0;
    sp->bg_woken = sps__g.retired; /* the process's count: this session's starts here */
}

int sps__spill_cause(char *buf, size_t cap) {
    int cause = sps__g.sp.cause;
    const char *dir = sps__g.spill_dir && *sps__g.spill_dir ? sps__g.spill_dir : sps__tmpdir();
    if (cap) buf[0] = 0;
    if (!cause || !cap) return cause == SPS__SPILL_LIMIT ? EFBIG : cause;
    if (cause == SPS__SPILL_LIMIT) {
        snprintf(buf, cap, "the spill file reached spill_limit (%llu bytes) in %s",
                 (unsigned long long)sps__g.cfg.spill_limit, dir);
        return EFBIG;
    }
    char what[4200];
    snprintf(what, sizeof what, "the spill file in %s", dir);
    sps__os_cause(buf, cap, cause, "writing", what);
    return cause;
}

void sps__spill_close(void) {
    sps__spiller_t *sp = &sps__g.sp;
    if (!sp->busy) spill_file_close(); /* else the exiting writer does */
    sp->gen++;
    pthread_cond_broadcast(&sp->work);
    pthread_cond_broadcast(&sp->done); /* recorders waiting: the session is gone */
}

/* A child of a multi-threaded process may not portably start threads (POSIX
 * allows only async-signal-safe calls there; ThreadSanitizer refuses), so
 * a forked child's sessions spill in their recording threads. */
void sps__spill_atfork_child(void) {
    sps__spiller_t *sp = &sps__g.sp;
    sp->forked = sp->sync = 1;
    pthread_cond_init(&sp->work, NULL);
    pthread_cond_init(&sp->done, NULL);
    sp->alive = sp->idle = sp->waiters = 0;
    sps__g.bg_busy = sps__g.bg_waiters = 0; /* no writer, no waiter here */
    while (sp->qhead) q_remove(sp->qhead);
    sps__chunk_t *c = sp->busy; /* its writer does not exist here */
    sp->busy = NULL;
    if (c) {
        c->spill = SPS__CH_IDLE;
        if (c->release_pending) {
            c->release_pending = 0;
            sps__chunk_release(c);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Reading a run back                                                        */
/* ------------------------------------------------------------------------ */

void sps__spill_rd_free(sps__spill_rd_t *r) {
    free(r->buf);
    r->buf = NULL;
}

/* Makes buf hold the file's bytes [off, off + need) (need <= READ_WIN);
 * returns a pointer to them, or NULL (SPS_EIO: the file is short). */
static const uint8_t *rd_window(sps__spill_rd_t *r, int64_t off, size_t need) {
    int64_t have_end = r->buf_off + (int64_t)r->len;
    if (off >= r->buf_off && off + (int64_t)need <= have_end)
        return r->buf + (off - r->buf_off);
    size_t keep = 0;
    if (off >= r->buf_off && off < have_end) { /* keep what is there */
        keep = (size_t)(have_end - off);
        memmove(r->buf, r->buf + (off - r->buf_off), keep);
    }
    ssize_t got = sps__pread_full(sps__g.spill_fd, r->buf + keep, READ_WIN - keep,
                                  off + (int64_t)keep);
    r->buf_off = off;
    r->len = keep + (got > 0 ? (size_t)got : 0);
    return r->len >= need ? r->buf : NULL;
}

/* The next packed chunk's header (at chunk_off, or after the current). */
static int rd_chunk(sps__spill_rd_t *r) {
    if (r->frame_off >= 0) { /* after a chunk: its end must be its frames' */
        if (r->frame_off != r->chunk_off + SPS__PACK_HDR + (int64_t)r->hdr.bytes)
            return SPS_EIO;
        r->chunk_off = r->hdr.next ? r->hdr.next : r->frame_off;
    }
    const uint8_t *h = rd_window(r, r->chunk_off, SPS__PACK_HDR);
    if (!h || sps__pack_hdr_get(h, &r->hdr) || r->hdr.n > r->left) return SPS_EIO;
    r->frame_off = r->chunk_off + SPS__PACK_HDR;
    r->chunk_done = 0;
    return 0;
}

int sps__spill_rd_open(sps__spill_rd_t *r, int64_t off, uint32_t n, uint32_t skip,
                       uint32_t *skipped) {
    *skipped = 0;
    if (!r->buf && !(r->buf = malloc(READ_WIN))) return SPS_ENOMEM;
    r->len = 0;
    r->buf_off = 0;
    r->chunk_off = off;
    r->frame_off = -1; /* no chunk read yet */
    r->left = n;
    for (;;) {
        int rc = rd_chunk(r);
        if (rc || r->hdr.n >= r->left || *skipped + r->hdr.n > skip) return rc;
        /* every record of this chunk is skipped: step over its frames (the
         * next chunk starts with a HI record, so nothing is lost) */
        *skipped += r->hdr.n;
        r->left -= r->hdr.n;
        r->frame_off = r->chunk_off + SPS__PACK_HDR + (int64_t)r->hdr.bytes;
    }
}

int sps__spill_rd_next(sps__spill_rd_t *r, uint64_t *out, uint32_t *m) {
    *m = 0;
    if (!r->left) return 0;
    if (r->chunk_done == r->hdr.n) {
        int rc = rd_chunk(r);
        if (rc) return rc;
    }
    uint32_t k = r->hdr.n - r->chunk_done;
    if (k > SPS__PACK_FRAME) k = SPS__PACK_FRAME;
    const uint8_t *f = rd_window(r, r->frame_off, 4);
    if (!f) return SPS_EIO;
    size_t need = sps__pack_frame_bytes(f);
    if (need > READ_WIN || !(f = rd_window(r, r->frame_off, need))) return SPS_EIO;
    size_t used;
    int rc = sps__unpack_frame(f, need, k, out, &used);
    if (rc) return rc;
    r->frame_off += (int64_t)used;
    r->chunk_done += k;
    r->left -= k;
    *m = k;
    return 0;
}
