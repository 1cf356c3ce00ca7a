/* mpi.c -- libspanscope_mpi, the MPI integration: collective sessions,
 * clock alignment, the collective finalize and the /communication counters
 * (docs/mpi.md).
 *
 * A library of its own, so that libspanscope needs no MPI: its constructor
 * registers an operations table with the core (sps__dist_register,
 * api/dist.c), which calls it from sps_setup, the finalizes and
 * sps_shutdown.  It lives in another shared object than the core, so it
 * uses the public API and the services table registration hands back
 * (g_core), never a hidden core symbol or the session struct itself (the
 * library is linked with --no-undefined: such a use fails the build).
 *
 * Every MPI call here goes through the PMPI entry points, so that a
 * profiling library (libspanscope_pmpi) does not record spanscope's own
 * messages as the program's. */
#include "api/api.h"

#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "spanscope_mpi.h"

#include "model/align.h" /* sps__clock_sample_t, sps__clock_fit (inline) */

/* api/merge.c (declared in spanscope.h as well). */
SPS_API int sps_merge(const char *out_path, const char *const *in_paths,
                      size_t n, void *err_file);

#define TAG_CLOCK 0x5350 /* on spanscope's own duplicate communicator */
#define CLOCK_ROUNDS 16
/* Rounds of the measurement at each collective finalize: few, since every
 * rank waits for its turn with rank 0 (the best of 4 is within a few
 * round trips of the best of 16 on an idle link). */
#define CLOCK_ROUNDS_FINALIZE 4
/* Measurements kept per session (one per finalize): past this, every
 * other one is dropped, the first and the newest kept. */
#define CLOCK_SAMPLES_MAX 4096

/* The core's services (NULL until registration succeeded) and the
 * registration's result, which sps_mpi_setup reports when it failed. */
static const sps__dist_core_t *g_core;
static int g_register_rc = SPS_EINVAL;

static MPI_Comm g_comm = MPI_COMM_NULL; /* the session's duplicate */
static MPI_Comm g_explicit = MPI_COMM_NULL; /* from sps_mpi_setup, once */
static int g_explicit_set;

/* This session's clock measurements against rank 0 (setup's, then one
 * per collective finalize), in time order: each rank's part of a
 * finalize carries them as /clock_sync, the merge fits its drift to them
 * (docs/mpi.md, "Clock alignment").  Only touched by setup and the
 * finalizes, which are collective, never two at once in a process. */
static sps__clock_sample_t *g_sync;
static size_t g_nsync, g_sync_cap;

/* /communication counters by region id (sps_mpi_count). */
static pthread_mutex_t g_cnt_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *g_calls, *g_bytes;
static uint32_t g_cnt_cap;

static int mpi_live(void) {
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    return init && !fin;
}

static void comm_release(void) {
    if (g_comm != MPI_COMM_NULL && mpi_live()) PMPI_Comm_free(&g_comm);
    g_comm = MPI_COMM_NULL;
}

static void counters_clear(void) {
    pthread_mutex_lock(&g_cnt_lock);
    if (g_cnt_cap) {
        memset(g_calls, 0, g_cnt_cap * sizeof *g_calls);
        memset(g_bytes, 0, g_cnt_cap * sizeof *g_bytes);
    }
    pthread_mutex_unlock(&g_cnt_lock);
}

/* Ping-pong with rank 0, one rank after the other: in each round rank r
 * sends {its clock, last?}, rank 0 answers with its clock t0, and r keeps
 * the round with the lowest round trip (rtt): offset = t0 - (send + recv)
 * / 2, error bound rtt / 2 (both clocks tick forward, so rank 0's reading
 * lies between r's send and receive times).  One unmeasured round first.
 * Setup plays CLOCK_ROUNDS rounds (SPANSCOPE_MPI_CLOCK_ROUNDS).  A finalize
 * (at_finalize) plays CLOCK_ROUNDS_FINALIZE, and more -- up to setup's
 * count -- while its best round trip is still over twice setup's plus
 * 1 us: on a loaded machine a descheduled rank stretches every one of a
 * few rounds, and a measurement off by a millisecond bends the drift fit
 * as much (CI saw a 2-point line off by 1.7 ms).  Rank r says which round
 * is its last, so rank 0 needs no count.  *out gets the best round's
 * midpoint on this rank's clock, the offset and the bound (rank 0: its
 * clock now, 0, 0). */
static int clock_sync(MPI_Comm c, int rank, int size, int at_finalize,
                      sps__clock_sample_t *out) {
    int64_t *off = &out->offset_ns, *err = &out->error_ns;
    *off = 0;
    *err = 0;
    out->t_ns = sps_now_ns();
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            for (int64_t msg[2] = {0, 0}; !msg[1];) {
                int64_t x;
                if (PMPI_Recv(msg, 2, MPI_INT64_T, r, TAG_CLOCK, c, MPI_STATUS_IGNORE) ||
                    (x = sps_now_ns(),
                     PMPI_Send(&x, 1, MPI_INT64_T, r, TAG_CLOCK, c)))
                    return SPS_EIO;
            }
        return 0;
    }
    const char *e = getenv("SPANSCOPE_MPI_CLOCK_ROUNDS");
    int most = e && atoi(e) > 0 ? atoi(e) : CLOCK_ROUNDS, least = most;
    int64_t target = INT64_MAX; /* a round trip good enough to stop at */
    if (at_finalize) {
        if (least > CLOCK_ROUNDS_FINALIZE) least = CLOCK_ROUNDS_FINALIZE;
        if (g_nsync && g_sync[0].error_ns > 0) target = 4 * g_sync[0].error_ns + 1000;
    }
    int64_t best = INT64_MAX;
    for (int k = 0;; k++) {
        int last = k >= most || (k >= least && best <= target);
        int64_t msg[2] = {sps_now_ns(), last}, ts;
        if (PMPI_Send(msg, 2, MPI_INT64_T, 0, TAG_CLOCK, c) ||
            PMPI_Recv(&ts, 1, MPI_INT64_T, 0, TAG_CLOCK, c, MPI_STATUS_IGNORE))
            return SPS_EIO;
        int64_t t1 = sps_now_ns(), t0 = msg[0];
        if (k > 0 && t1 - t0 < best) {
            best = t1 - t0;
            out->t_ns = t0 + (t1 - t0) / 2;
            *off = ts - out->t_ns;
            *err = (best + 1) / 2;
        }
        if (last) return 0;
    }
}

/* Appends a measurement to the session's (when full, every other one is
 * dropped, keeping the first and the newest: the fit still spans the
 * whole session). */
static void sync_add(const sps__clock_sample_t *x) {
    if (g_nsync == CLOCK_SAMPLES_MAX) {
        size_t k = 1;
        for (size_t i = 2; i < g_nsync; i += 2) g_sync[k++] = g_sync[i];
        g_nsync = k;
    }
    if (g_nsync == g_sync_cap) {
        size_t cap = g_sync_cap ? 2 * g_sync_cap : 16;
        sps__clock_sample_t *p = realloc(g_sync, cap * sizeof *p);
        if (!p) return; /* this one is lost; the fit uses the others */
        g_sync = p, g_sync_cap = cap;
    }
    g_sync[g_nsync++] = *x;
}

/* Adds the session's measurements to the rank's file at path as the table
 * /clock_sync (t_ns, offset_ns, error_ns; one row per measurement), which
 * sps_merge fits its drift to.  Best effort: without the table the merge
 * uses the constant offset of /metadata, as for files written before. */
static void sync_table(const char *path) {
    size_t n = g_nsync;
    int64_t *v = n ? malloc(3 * n * sizeof *v) : NULL;
    if (!v) return;
    for (size_t i = 0; i < n; i++) {
        v[i] = g_sync[i].t_ns;
        v[n + i] = g_sync[i].offset_ns;
        v[2 * n + i] = g_sync[i].error_ns;
    }
    static const char *const cn[] = {"t_ns", "offset_ns", "error_ns"};
    const int64_t *cv[] = {v, v + n, v + 2 * n};
    g_core->h5_add_table(path, "clock_sync",
                         "this rank's clock against rank 0's, measured at setup and at "
                         "each collective finalize: at t_ns (this rank's clock) rank 0's "
                         "clock read offset_ns more, within error_ns (docs/mpi.md)",
                         n, NULL, NULL, 3, cn, cv);
    free(v);
}

/* The table's setup (see sps__dist_ops_t): collective over the
 * communicator sps_mpi_setup named, else over MPI_COMM_WORLD when MPI is
 * live and SPANSCOPE_MPI is not "0". */
static int mpi_setup(sps__dist_t *out) {
    static pid_t mpi_pid; /* the process that used MPI first (not a fork) */
    memset(out, 0, sizeof *out);
    if (mpi_pid && mpi_pid != getpid()) return 0; /* forked child: no MPI */
    MPI_Comm base;
    if (g_explicit_set) {
        base = g_explicit;
        g_explicit_set = 0;
        if (!mpi_live()) return SPS_EINVAL;
    } else {
        const char *e = getenv("SPANSCOPE_MPI");
        if (e && !strcmp(e, "0")) return 0;
        if (!mpi_live()) return 0;
        base = MPI_COMM_WORLD;
    }
    comm_release();
    if (PMPI_Comm_dup(base, &g_comm) != MPI_SUCCESS) {
        g_comm = MPI_COMM_NULL;
        return SPS_EIO;
    }
    mpi_pid = getpid();
    PMPI_Comm_set_errhandler(g_comm, MPI_ERRORS_RETURN);
    int rank = 0, size = 1;
    PMPI_Comm_rank(g_comm, &rank);
    PMPI_Comm_size(g_comm, &size);
    sps__clock_sample_t m;
    int rc = clock_sync(g_comm, rank, size, 0, &m);
    int64_t off = m.offset_ns, err = m.error_ns;
    /* agree: every rank fails or none does */
    int agreed = rc;
    if (PMPI_Allreduce(&rc, &agreed, 1, MPI_INT, MPI_MIN, g_comm)) agreed = SPS_EIO;
    if (agreed) {
        comm_release();
        return agreed;
    }
    counters_clear();
    g_nsync = 0; /* a new session: its own measurements */
    sync_add(&m);
    *out = (sps__dist_t){1, rank, size, 1, off, err};
    return 0;
}

/* The table's shutdown: frees the duplicate (collective). */
static void mpi_shutdown(void) {
    comm_release();
    counters_clear();
    free(g_sync);
    g_sync = NULL, g_nsync = g_sync_cap = 0;
}

int sps_mpi_setup(const sps_config_t *cfg, MPI_Comm comm) {
    if (!g_core) return g_register_rc; /* the core would not call us */
    if (comm == MPI_COMM_NULL || !mpi_live()) return SPS_EINVAL;
    if (sps_is_active()) return SPS_EACTIVE;
    g_explicit = comm;
    g_explicit_set = 1;
    int rc = sps_setup(cfg);
    g_explicit_set = 0;
    return rc;
}

int sps_mpi_clock_offset(int64_t *offset_ns, int64_t *error_ns) {
    sps__dist_t d = {0};
    int on = g_core && g_core->dist_info(&d) && d.on;
    if (offset_ns) *offset_ns = on ? d.clock_offset_ns : 0;
    if (error_ns) *error_ns = on ? d.clock_offset_error_ns : 0;
    return on ? 0 : SPS_ENOSESSION;
}

void sps_mpi_count(sps_region_t r, uint64_t bytes) {
    /* an id never handed out has no name for /communication: ignored */
    if (r == SPS_REGION_INVALID || r >= sps_region_count() || !sps_is_active())
        return;
    pthread_mutex_lock(&g_cnt_lock);
    if (r >= g_cnt_cap) {
        uint32_t cap = r + 64;
        uint64_t *c = realloc(g_calls, cap * sizeof *c);
        if (c) g_calls = c;
        uint64_t *b = c ? realloc(g_bytes, cap * sizeof *b) : NULL;
        if (b) g_bytes = b;
        if (!c || !b) {
            pthread_mutex_unlock(&g_cnt_lock);
            return;
        }
        memset(g_calls + g_cnt_cap, 0, (cap - g_cnt_cap) * sizeof *g_calls);
        memset(g_bytes + g_cnt_cap, 0, (cap - g_cnt_cap) * sizeof *g_bytes);
        g_cnt_cap = cap;
    }
    g_calls[r]++;
    g_bytes[r] += bytes;
    pthread_mutex_unlock(&g_cnt_lock);
}

/* ------------------------------------------------------------------------ */
/* The collective finalize                                                   */
/* ------------------------------------------------------------------------ */

/* This rank's counters since the last finalize, serialised: names as
 * NUL-terminated strings one after the other, and (calls, bytes) pairs.
 * The counters start again from zero. */
typedef struct comm_rows {
    char *names;
    size_t nbytes;
    int64_t *vals; /* 2 per row */
    int n;
} comm_rows_t;

static int comm_take(comm_rows_t *o) {
    memset(o, 0, sizeof *o);
    pthread_mutex_lock(&g_cnt_lock);
    size_t nb = 0;
    int n = 0;
    /* rows without a name (ids never handed out; sps_mpi_count refuses
     * them, this is the second guard) are skipped in both loops */
    for (uint32_t r = 1; r < g_cnt_cap; r++)
        if (g_calls[r] && sps_region_name(r)) {
            nb += strlen(sps_region_name(r)) + 1;
            n++;
        }
    o->names = malloc(nb + 1);
    o->vals = malloc(2 * (size_t)(n + 1) * sizeof *o->vals);
    if (!o->names || !o->vals) {
        pthread_mutex_unlock(&g_cnt_lock);
        return SPS_ENOMEM;
    }
    for (uint32_t r = 1; r < g_cnt_cap; r++)
        if (g_calls[r]) {
            const char *s = sps_region_name(r);
            size_t l = s ? strlen(s) + 1 : 0;
            /* the sizes above bound what is written here, whatever the
             * registry did in between */
            if (!s || o->n == n || o->nbytes + l > nb) {
                g_calls[r] = g_bytes[r] = 0;
                continue;
            }
            memcpy(o->names + o->nbytes, s, l);
            o->nbytes += l;
            o->vals[2 * o->n] = (int64_t)g_calls[r];
            o->vals[2 * o->n + 1] = (int64_t)g_bytes[r];
            o->n++;
            g_calls[r] = g_bytes[r] = 0;
        }
    pthread_mutex_unlock(&g_cnt_lock);
    return 0;
}

/* Gathers every rank's counters to rank 0 and, there, adds them to the file
 * at path as /communication (nothing when no rank counted anything).
 * Collective.  Rank 0 broadcasts whether its receive buffers exist before
 * each gather into them: one rank cannot leave out a collective, so every
 * rank skips the gather together and returns the same code.  Returns 0 or
 * a negative code (the write's own outcome on rank 0 only). */
static int comm_gather(MPI_Comm c, int rank, int size, const comm_rows_t *mine,
                       const char *path, int write) {
    int cnt[2] = {mine->n, (int)mine->nbytes};
    int *all = rank == 0 ? calloc(2 * (size_t)size, sizeof *all) : NULL;
    int *rc_n = rank == 0 ? calloc((size_t)size, sizeof *rc_n) : NULL;
    int *rc_b = rank == 0 ? calloc((size_t)size, sizeof *rc_b) : NULL;
    int *dn = rank == 0 ? calloc((size_t)size, sizeof *dn) : NULL;
    int *db = rank == 0 ? calloc((size_t)size, sizeof *db) : NULL;
    char *names = NULL;
    int64_t *vals = NULL;
    int rc = 0;
    if (rank == 0 && (!all || !rc_n || !rc_b || !dn || !db)) rc = SPS_ENOMEM;
    if (PMPI_Bcast(&rc, 1, MPI_INT, 0, c)) rc = SPS_EIO;
    if (!rc && PMPI_Gather(cnt, 2, MPI_INT, all, 2, MPI_INT, 0, c)) rc = SPS_EIO;
    size_t tn = 0, tb = 0;
    if (rank == 0 && !rc) {
        for (int r = 0; r < size; r++) {
            dn[r] = (int)(2 * tn);
            db[r] = (int)tb;
            rc_n[r] = 2 * all[2 * r];
            rc_b[r] = all[2 * r + 1];
            tn += (size_t)all[2 * r];
            tb += (size_t)all[2 * r + 1];
        }
        names = malloc(tb + 1);
        vals = malloc((2 * tn + 1) * sizeof *vals);
        if (!names || !vals) rc = SPS_ENOMEM;
    }
    if (PMPI_Bcast(&rc, 1, MPI_INT, 0, c)) rc = SPS_EIO;
    if (!rc && (PMPI_Gatherv(mine->vals, 2 * mine->n, MPI_INT64_T, vals, rc_n, dn,
                             MPI_INT64_T, 0, c) ||
                PMPI_Gatherv(mine->names, (int)mine->nbytes, MPI_CHAR, names, rc_b,
                             db, MPI_CHAR, 0, c)))
        rc = SPS_EIO;
    if (rank == 0 && !rc && write && tn) {
        const char **reg = malloc(tn * sizeof *reg);
        int64_t *rk = malloc(tn * sizeof *rk), *calls = malloc(tn * sizeof *calls),
                *bytes = malloc(tn * sizeof *bytes);
        if (!reg || !rk || !calls || !bytes) rc = SPS_ENOMEM;
        size_t i = 0, nb = 0;
        for (int r = 0; !rc && r < size; r++)
            for (int k = 0; k < all[2 * r]; k++, i++) {
                reg[i] = names + nb;
                nb += strlen(names + nb) + 1;
                rk[i] = r;
                calls[i] = vals[2 * i];
                bytes[i] = vals[2 * i + 1];
            }
        static const char *const cn[] = {"rank", "calls", "bytes"};
        const int64_t *cv[] = {rk, calls, bytes};
        if (!rc)
            rc = g_core->h5_add_table(path, "communication",
                                   "per rank and MPI call: calls, and bytes sent or "
                                   "received by this rank (docs/mpi.md)",
                                   tn, "region", reg, 3, cn, cv);
        free(reg), free(rk), free(calls), free(bytes);
    }
    free(all), free(rc_n), free(rc_b), free(dn), free(db);
    free(names), free(vals);
    return rc;
}

/* Values per rank in /mpi_clock after the rank: setup's offset and bound,
 * then the drift fitted to the session's measurements (their count, the
 * line's two ends, its error bound). */
#define CLOCK_COLS 8

/* Gathers every rank's clock offset and error bound to rank 0 and, there
 * (when write), adds them to the file as /mpi_clock, one row per rank:
 * rank, clock_offset_ns, clock_offset_error_ns (measured at setup: what
 * readers of older files know), and the drift the merge applied
 * (docs/mpi.md): clock_samples (measurements fitted; 0: none, constant
 * offset), clock_fit_t0_ns / clock_fit_offset0_ns and clock_fit_t1_ns /
 * clock_fit_offset1_ns (the fitted line's ends, times on the rank's own
 * clock) and clock_alignment_error_ns (the fit's bound).  Collective;
 * rank 0's allocation is agreed first, as in comm_gather. */
static int clock_gather(MPI_Comm c, int rank, int size, const char *path,
                        int write) {
    sps__dist_t d;
    g_core->dist_info(&d);
    sps__clock_fit_t fit;
    int64_t mine[CLOCK_COLS] = {d.clock_offset_ns, d.clock_offset_error_ns, 0, 0,
                                d.clock_offset_ns, 0, d.clock_offset_ns,
                                d.clock_offset_error_ns};
    if (sps__clock_fit(g_sync, g_nsync, &fit) == 0) {
        mine[2] = fit.n, mine[3] = fit.t0, mine[4] = fit.off0;
        mine[5] = fit.t1, mine[6] = fit.off1, mine[7] = fit.error;
    }
    int64_t *all = rank == 0 ? malloc(CLOCK_COLS * (size_t)size * sizeof *all) : NULL;
    int rc = rank == 0 && !all ? SPS_ENOMEM : 0;
    if (PMPI_Bcast(&rc, 1, MPI_INT, 0, c)) rc = SPS_EIO;
    if (!rc && PMPI_Gather(mine, CLOCK_COLS, MPI_INT64_T, all, CLOCK_COLS, MPI_INT64_T, 0, c))
        rc = SPS_EIO;
    if (rank == 0 && !rc && write) {
        int64_t *v = malloc((CLOCK_COLS + 1) * (size_t)size * sizeof *v);
        if (!v) rc = SPS_ENOMEM;
        for (int r = 0; !rc && r < size; r++) {
            v[r] = r;
            for (int k = 0; k < CLOCK_COLS; k++)
                v[(size_t)(k + 1) * size + r] = all[(size_t)CLOCK_COLS * r + k];
        }
        static const char *const cn[CLOCK_COLS + 1] = {
            "rank", "clock_offset_ns", "clock_offset_error_ns", "clock_samples",
            "clock_fit_t0_ns", "clock_fit_offset0_ns", "clock_fit_t1_ns",
            "clock_fit_offset1_ns", "clock_alignment_error_ns"};
        const int64_t *cv[CLOCK_COLS + 1];
        for (int k = 0; k <= CLOCK_COLS; k++) cv[k] = v ? v + (size_t)k * size : NULL;
        if (!rc)
            rc = g_core->h5_add_table(path, "mpi_clock",
                                   "per rank: ns added to its times to put them on "
                                   "rank 0's clock and the error bound, as measured at "
                                   "setup; the drift fitted to every measurement "
                                   "(the line through (clock_fit_t0_ns, "
                                   "clock_fit_offset0_ns) and (clock_fit_t1_ns, "
                                   "clock_fit_offset1_ns), times on the rank's clock) "
                                   "and its error bound (docs/mpi.md)",
                                   (size_t)size, NULL, NULL, CLOCK_COLS + 1, cn, cv);
        free(v);
    }
    free(all);
    return rc;
}

/* "<base>.<what>.h5" into buf. */
static int name_with(char *buf, size_t cap, const char *base, const char *what) {
    int n = snprintf(buf, cap, "%s.%s.h5", base, what);
    return n < 0 || (size_t)n >= cap ? SPS_EPATH : 0;
}

/* Whether a rank's part goes uncompressed (docs/mpi.md, "The collective
 * finalize").  With the chunk-copy merge (the default) the part is only
 * read again by its own rank, which compresses it laid out for the merged
 * file: plain is the cheaper.  In the event-by-event merge
 * (SPANSCOPE_MPI_MERGE=events) rank 0 reads every part once and writes it
 * again, so compressing it on the rank and inflating it on rank 0 is work
 * done twice (8 ranks x 10^6 calls: 2.7 s that way, 0.75 s plain), but a
 * plain part is ~40 bytes per call in rank 0's temporary files: plain up to
 * 64 ranks there.  SPANSCOPE_MPI_PART=plain|compressed chooses.  Every
 * rank decides alike (size is the communicator's). */
static int part_plain(int size) {
    const char *env = getenv("SPANSCOPE_MPI_PART");
    if (env && !strcmp(env, "plain")) return 1;
    if (env && !strcmp(env, "compressed")) return 0;
    const char *merge = getenv("SPANSCOPE_MPI_MERGE");
    return !(merge && !strcmp(merge, "events")) || size <= 64;
}

/* The core's finalize_part(path, table_fp) (plain) or finalize_local, with
 * the "spanscope: wrote" line (naming the temporary per-rank file) left out
 * of the table output. */
static int local_quiet(const char *path, FILE *table_fp, int plain) {
    char *text = NULL;
    size_t len = 0;
    FILE *ms = table_fp ? open_memstream(&text, &len) : NULL;
    int rc = (plain ? g_core->finalize_part : g_core->finalize_local)(path, ms ? ms : table_fp);
    if (ms && fclose(ms) == 0 && text) {
        static const char skip[] = "spanscope: wrote ";
        for (char *line = text, *nl; *line; line = nl) {
            nl = strchr(line, '\n');
            nl = nl ? nl + 1 : line + strlen(line);
            if (strncmp(line, skip, sizeof skip - 1))
                fwrite(line, 1, (size_t)(nl - line), table_fp);
        }
    }
    free(text);
    return rc;
}

/* ---- the hand-over: each rank's part reaches rank 0 -------------------- */

#define PART_TAG 0x5350        /* "SP" */
#define PART_CHUNK (4 << 20)   /* bytes per message */

/* Where rank r (not 0) writes its part before handing it over: a
 * temporary file ($TMPDIR, else /tmp), so that the ranks need no file
 * system in common with rank 0.  The name carries a random number: where
 * rank 0 finds a file of that name and of the part's size, it is this
 * part (a shared file system, or one node), which rank 0 then reads in
 * place (part_offer). */
static int local_part_name(char *buf, size_t cap, int rank, int pid0) {
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    unsigned long long nonce = 0;
    if (getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != (ssize_t)sizeof nonce) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        nonce = (unsigned long long)ts.tv_nsec * 2654435761u ^ (unsigned long long)getpid();
    }
    int n = snprintf(buf, cap, "%s/spanscope-part-%d-rank%d-%d-%016llx.h5", dir, pid0, rank,
                     (int)getpid(), nonce);
    return n < 0 || (size_t)n >= cap ? SPS_EPATH : 0;
}

/* Whether a part may be read where its rank wrote it
 * (SPANSCOPE_MPI_HANDOVER=send: no).  Asked on both sides: set on rank 0,
 * every part comes through MPI; set on another rank, that rank's part. */
static int in_place_allowed(void) {
    const char *e = getenv("SPANSCOPE_MPI_HANDOVER");
    return !(e && !strcmp(e, "send"));
}

/* Waits for req to complete without keeping a core busy: a collective
 * finalize waits for the slower ranks (their parts, rank 0's merge) for
 * up to seconds, and Open MPI's blocking calls poll the whole time -- a
 * core per waiting rank, taken from the ranks still working where the
 * node is oversubscribed.  Polls with a back-off of up to 1 ms.  0 or
 * SPS_EIO. */
static int wait_idle(MPI_Request *req) {
    unsigned us = 0;
    for (int done = 0;;) {
        if (PMPI_Test(req, &done, MPI_STATUS_IGNORE)) return SPS_EIO;
        if (done) return 0;
        us = us < 1000 ? us + 50 : 1000;
        usleep(us);
    }
}

/* The hand-over's buffer (finalizes are collective, so never two at once
 * in one process; static, so the drain below cannot fail to allocate). */
static char g_part[PART_CHUNK] __attribute__((aligned(16)));
/* ... which also takes one rank's first rows (rows_exchange) */
_Static_assert(5 * SPS__H5_CHUNK * sizeof(int64_t) <= PART_CHUNK, "g_part too small");

/* rank 0's answer to a part's offer */
enum { TAKE_BYTES = 0, TAKE_IN_PLACE = 1 };

/* Sends n bytes at p to rank 0 and waits idle.  0 or SPS_EIO. */
static int send_idle(MPI_Comm c, const void *p, int n, MPI_Datatype t) {
    MPI_Request req;
    return PMPI_Isend(p, n, t, 0, PART_TAG, c, &req) ? SPS_EIO : wait_idle(&req);
}

/* The largest index message a rank sends (a part of 10^9 events makes
 * ~2.5 MB); a larger one is not sent, and rank 0 reads the file. */
#define INDEX_MSG_MAX (64 << 20)

/* Whether this rank sends its part's index as a message
 * (SPANSCOPE_MPI_INDEX=file: no, rank 0 reads it from the file). */
static int index_msg_wanted(void) {
    const char *e = getenv("SPANSCOPE_MPI_INDEX");
    return !(e && !strcmp(e, "file"));
}

/* A rank's side: offers the file at path to rank 0 -- its size (-1 when it
 * cannot be read), its name and the message of its index (msg, len bytes;
 * len 0: none, rank 0 reads the index from the file).  Rank 0 answers
 * whether it reads the file where it is: then *kept is 1 and the caller
 * removes the file once the merge is done.  Otherwise the bytes follow in
 * PART_CHUNK messages and the file is removed here.  0 or SPS_EIO. */
static int part_offer(MPI_Comm c, const char *path, const void *msg, size_t len, int *kept) {
    FILE *f = fopen(path, "rb");
    /* size, name's length (0: no name offered, the bytes wanted), index
     * message's length */
    long long hdr[3] = {-1, in_place_allowed() ? (long long)strlen(path) : 0,
                        msg && len <= INDEX_MSG_MAX ? (long long)len : 0};
    if (f && fseek(f, 0, SEEK_END) == 0) hdr[0] = ftell(f);
    if (f && (hdr[0] < 0 || fseek(f, 0, SEEK_SET) != 0)) hdr[0] = -1;
    int take = TAKE_BYTES;
    MPI_Request req;
    int rc = send_idle(c, hdr, 3, MPI_LONG_LONG);
    if (!rc) rc = send_idle(c, path, (int)hdr[1], MPI_CHAR);
    if (!rc && hdr[2]) rc = send_idle(c, msg, (int)hdr[2], MPI_BYTE);
    if (!rc && (PMPI_Irecv(&take, 1, MPI_INT, 0, PART_TAG, c, &req) || wait_idle(&req)))
        rc = SPS_EIO;
    *kept = !rc && take == TAKE_IN_PLACE;
    long long size = *kept ? 0 : hdr[0];
    for (long long done = 0; !rc && size > 0 && done < size;) {
        int n = (int)(size - done < PART_CHUNK ? size - done : PART_CHUNK);
        /* a short read still sends n bytes, so rank 0 never waits forever;
         * the merge then finds the part corrupt */
        if (fread(g_part, 1, (size_t)n, f) != (size_t)n) memset(g_part, 0, (size_t)n);
        if (send_idle(c, g_part, n, MPI_BYTE)) rc = SPS_EIO;
        done += n;
    }
    if (f) fclose(f);
    if (!*kept) unlink(path);
    return hdr[0] < 0 ? SPS_EIO : rc;
}

/* Whether the file at path is the part offered with size bytes, seen from
 * here: a regular file of that size which this process can read (its
 * name, with the rank's random number, says it is no other file). */
static int part_visible(const char *path, long long size) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (long long)st.st_size == size &&
           access(path, R_OK) == 0;
}

/* Receives rank r's index message of len bytes (part_offer) into *msg
 * (malloc'd; NULL when there is no room for it: then it is received and
 * dropped, and rank 0 reads the index from the file).  0 or SPS_EIO. */
static int msg_take(MPI_Comm c, int r, long long len, sps__msg_t *msg) {
    void *p = len ? malloc((size_t)len) : NULL;
    for (long long done = 0; done < len;) {
        int n = p ? (int)len : (int)(len - done < PART_CHUNK ? len - done : PART_CHUNK);
        if (PMPI_Recv(p ? p : g_part, n, MPI_BYTE, r, PART_TAG, c, MPI_STATUS_IGNORE)) {
            free(p);
            return SPS_EIO;
        }
        done += n;
    }
    *msg = (sps__msg_t){p, p ? (size_t)len : 0};
    return 0;
}

/* Rank 0's side of part_offer for rank r: reads the part where it is when
 * it can see it (*in_place: the rank's name of it, malloc'd), else
 * receives it into the file at path (NULL: receives and drops it, after
 * a failure); its index message into *msg (len 0: none; the caller frees
 * msg->p).  Keeps receiving when it cannot write, so the sender is never
 * left blocked.  0 or a code. */
static int part_take(MPI_Comm c, int r, const char *path, char **in_place, sps__msg_t *msg) {
    long long hdr[3] = {-1, 0, 0};
    *in_place = NULL;
    *msg = (sps__msg_t){NULL, 0};
    MPI_Request req; /* rank r may still be writing its part: wait idle */
    if (PMPI_Irecv(hdr, 3, MPI_LONG_LONG, r, PART_TAG, c, &req) || wait_idle(&req))
        return SPS_EIO;
    if (hdr[1] < 0 || hdr[1] > (1 << 20) || hdr[2] < 0 || hdr[2] > INDEX_MSG_MAX)
        return SPS_EIO; /* not our peer's header */
    char *name = malloc((size_t)hdr[1] + 1); /* without it: received and dropped */
    if (PMPI_Recv(name ? name : g_part, (int)hdr[1], MPI_CHAR, r, PART_TAG, c,
                  MPI_STATUS_IGNORE) ||
        msg_take(c, r, hdr[2], msg)) {
        free(name); /* the communicator is broken: nothing more will come */
        return SPS_EIO;
    }
    if (!name) path = NULL;
    else name[hdr[1]] = 0;
    int take = path && hdr[0] >= 0 && hdr[1] > 0 && in_place_allowed() &&
                       part_visible(name, hdr[0])
                   ? TAKE_IN_PLACE : TAKE_BYTES;
    if (PMPI_Send(&take, 1, MPI_INT, r, PART_TAG, c)) take = -1;
    if (take == TAKE_IN_PLACE) *in_place = name;
    else free(name);
    if (take != TAKE_BYTES) return take < 0 ? SPS_EIO : 0;
    long long size = hdr[0];
    if (size < 0) return SPS_EIO;
    FILE *f = path ? fopen(path, "wb") : NULL;
    int rc = f ? 0 : path ? SPS_EPATH : SPS_ENOMEM;
    for (long long done = 0; done < size;) {
        int n = (int)(size - done < PART_CHUNK ? size - done : PART_CHUNK);
        if (PMPI_Recv(g_part, n, MPI_BYTE, r, PART_TAG, c, MPI_STATUS_IGNORE)) {
            rc = SPS_EIO; /* the communicator is broken: nothing more will come */
            break;
        }
        if (!rc && fwrite(g_part, 1, (size_t)n, f) != (size_t)n) rc = SPS_EIO;
        done += n;
    }
    if (f && fclose(f) != 0 && !rc) rc = SPS_EIO;
    if (rc && f) unlink(path);
    return rc ? rc : name ? 0 : SPS_ENOMEM;
}

/* Every rank gets the lowest (most negative) code of all. */
static int agree(MPI_Comm c, int rc) {
    int out = rc;
    if (PMPI_Allreduce(&rc, &out, 1, MPI_INT, MPI_MIN, c)) return SPS_EIO;
    return out;
}

/* ---- the chunk-copy layout: each rank compresses its own events -------- */

#define ROWS_TAG 0x5352 /* "SR" */

/* Whether the parts are laid out for the chunk-copy merge (docs/mpi.md,
 * "The collective finalize"): SPANSCOPE_MPI_MERGE=events never (rank 0
 * merges event by event), =copy whenever there are events (below a chunk
 * rank 0 then writes them again rather than copying: a test of the
 * layout on few events), unset or =auto when the ranks' events fill a
 * chunk; never for a single rank.  Every rank decides alike (total is the
 * same on all). */
static int copy_wanted(uint64_t total, int size) {
    const char *env = getenv("SPANSCOPE_MPI_MERGE");
    if (env && !strcmp(env, "events")) return 0;
    if (size == 1) return 0; /* one part: the layout would be the merge done twice */
    if (env && !strcmp(env, "copy")) return total > 0;
    return total >= SPS__H5_CHUNK;
}

/* Where the ranks' events go in the merged file: base[r] (its first
 * event), and this rank's rows to hand on and to take in. */
typedef struct layout {
    uint64_t *cnt, *base, total;
    int owner;             /* the rank whose part completes this rank's first chunk, -1 none */
    uint64_t head;         /* this rank's first rows that go to owner */
    uint64_t tail;         /* later ranks' rows this rank's part takes after its own */
} layout_t;

/* Fills l from every rank's event count cnt[] (l->cnt). */
static void layout_plan(layout_t *l, int rank, int size) {
    const uint64_t ch = SPS__H5_CHUNK;
    l->total = 0;
    for (int r = 0; r < size; r++) l->base[r] = l->total, l->total += l->cnt[r];
    uint64_t b = l->base[rank], n = l->cnt[rank], end = b + n;
    l->owner = -1, l->head = 0, l->tail = 0;
    if (n == 0) return;
    if (b % ch) { /* the chunk it starts in belongs to the rank holding its first row */
        uint64_t s = b - b % ch;
        for (int r = rank - 1; r >= 0 && l->owner < 0; r--)
            if (l->cnt[r] && l->base[r] <= s) l->owner = r;
        l->head = n < ch - b % ch ? n : ch - b % ch;
    }
    /* it owns the chunks that start within its events; the last one it
     * completes with the later ranks' first rows */
    uint64_t first_start = (b + ch - 1) / ch * ch;
    if (first_start < end) {
        uint64_t last_end = (end + ch - 1) / ch * ch;
        l->tail = (last_end < l->total ? last_end : l->total) - end;
    }
}

/* Hands this rank's first rows (l->head of them, in the part at path) to
 * their chunk's owner, and takes the later ranks' into the part's tail.
 * Sends and receives whatever happens (a failure is agreed afterwards),
 * so that no rank is left blocked.  0 or a code. */
static int rows_exchange(MPI_Comm c, int rank, int size, const layout_t *l,
                         const char *path, uint64_t pad) {
    static int64_t head[5 * SPS__H5_CHUNK]; /* head <= one chunk; collective: one at a time */
    uint64_t n = l->cnt[rank];
    size_t hn = (size_t)l->head, tn = (size_t)l->tail;
    int64_t *tbuf = tn ? calloc(5 * tn, sizeof *tbuf) : NULL;
    int rc = tn && !tbuf ? SPS_ENOMEM : 0;
    MPI_Request req = MPI_REQUEST_NULL;
    if (hn) {
        int64_t *cols[5];
        for (int k = 0; k < 5; k++) cols[k] = head + k * hn;
        int hrc = g_core->part_rows(path, pad, hn, cols, 0);
        if (hrc && !rc) rc = hrc;
        if (PMPI_Isend(head, (int)(5 * hn), MPI_INT64_T, l->owner, ROWS_TAG, c, &req))
            rc = SPS_EIO;
    }
    /* the later ranks whose first rows fall in this rank's last chunk, in
     * order, each into g_part (the hand-over's buffer, free until then) */
    uint64_t end = l->base[rank] + n;
    int64_t *one = (int64_t *)(void *)g_part;
    for (int r = rank + 1; r < size && l->base[r] < end + l->tail; r++) {
        if (!l->cnt[r]) continue;
        uint64_t b = l->base[r], m = l->cnt[r], room = SPS__H5_CHUNK - b % SPS__H5_CHUNK;
        size_t rn = (size_t)(m < room ? m : room);
        if (PMPI_Recv(one, (int)(5 * rn), MPI_INT64_T, r, ROWS_TAG, c, MPI_STATUS_IGNORE))
            rc = SPS_EIO;
        for (int k = 0; tbuf && k < 5; k++) /* its rows at b - end of the tail */
            memcpy(tbuf + k * tn + (b - end), one + k * rn, rn * sizeof *one);
    }
    if (tn && !rc) {
        int64_t *cols[5];
        for (int k = 0; k < 5; k++) cols[k] = tbuf + k * tn;
        rc = g_core->part_rows(path, pad + n, tn, cols, 1);
    }
    if (req != MPI_REQUEST_NULL && PMPI_Wait(&req, MPI_STATUS_IGNORE)) rc = SPS_EIO;
    free(tbuf);
    return rc;
}

/* Rewrites this rank's plain part at mine as a part laid out for the
 * chunk-copy merge (docs/mpi.md, "The collective finalize"):
 *   1. every rank's event count (Allgather) gives its base and the total;
 *   2. the rank merges its part onto rank 0's clock into "<mine>.copy.h5"
 *      (the core's merge with opts.part), compressed in the merged file's
 *      chunks, with room after its events for the later ranks' rows up to
 *      the end of its last chunk;
 *   3. a rank whose events do not start on a chunk hands its rows before
 *      the first chunk boundary to the rank that owns that chunk, which
 *      writes them after its own (rows_exchange);
 * then it replaces mine.  The ranks agree after each step; on a failure
 * every rank keeps its plain part and rank 0 merges event by event.
 * Collective.  Returns 1 when this rank's part is laid out, else 0. */
static int parts_copy(MPI_Comm c, int rank, int size, const char *mine) {
    uint64_t n = 0;
    layout_t l = {0};
    int rc = g_core->part_events(mine, &n);
    l.cnt = malloc((size_t)size * sizeof *l.cnt);
    l.base = malloc((size_t)size * sizeof *l.base);
    size_t len = strlen(mine);
    char *copy = malloc(len + 16);
    if (!rc && (!l.cnt || !l.base || !copy)) rc = SPS_ENOMEM;
    int ok = agree(c, rc) == 0 &&
             PMPI_Allgather(&n, 1, MPI_UINT64_T, l.cnt, 1, MPI_UINT64_T, c) == MPI_SUCCESS;
    if (ok) layout_plan(&l, rank, size);
    ok = ok && copy_wanted(l.total, size);
    if (ok) {
        /* mine ends in ".h5" (name_with, local_part_name) */
        snprintf(copy, len + 16, "%.*s.copy.h5", (int)(len > 3 ? len - 3 : len), mine);
        sps__merge_opts_t o = {.part = 1, .trusted = 1}; /* its own part */
        o.plan.base = l.base[rank], o.plan.total = l.total, o.plan.tail = l.tail;
        rc = g_core->merge(copy, &mine, 1, NULL, &o);
        ok = agree(c, rc) == 0;
        if (ok) ok = agree(c, rows_exchange(c, rank, size, &l, copy, o.plan.pad)) == 0;
        /* a rank whose rename fails keeps its plain part: rank 0's merge
         * then finds a part without a plan and merges event by event */
        if (!ok || rename(copy, mine) != 0) ok = 0, unlink(copy);
    }
    free(copy), free(l.cnt), free(l.base);
    return ok;
}

/* Rank 0's line for an agreed failure that came from another rank (its
 * own failures are reported where they happen). */
static void say_other(FILE *fp, int rank, int own, int agreed, const char *into) {
    if (rank == 0 && fp && !own && agreed)
        fprintf(fp, "spanscope: could not merge the ranks into %s: %s\n",
                into ? into : "(no file)", sps_strerror(agreed));
}

/* The table's finalize (see sps__dist_ops_t): the collective finalize
 * described in docs/mpi.md, steps numbered as there. */
static int mpi_finalize(const char *path, FILE *table_fp) {
    char buf[64];
    if (!mpi_live() || g_comm == MPI_COMM_NULL) {
        /* MPI already finalized: no collective possible.  Each rank writes
         * its own "<path>.rank<N>.h5" (spanscope merge joins them). */
        if (!path) return g_core->finalize_local(NULL, table_fp);
        char *p = malloc(strlen(path) + 64);
        if (!p) return SPS_ENOMEM;
        sps__dist_t d;
        g_core->dist_info(&d);
        snprintf(buf, sizeof buf, "rank%d", d.rank);
        int rc = name_with(p, strlen(path) + 64, path, buf);
        if (!rc) rc = g_core->finalize_local(p, table_fp);
        if (!rc) sync_table(p); /* no new measurement: MPI is gone */
        free(p);
        return rc;
    }
    MPI_Comm c = g_comm;
    int rank = 0, size = 1;
    PMPI_Comm_rank(c, &rank);
    PMPI_Comm_size(c, &size);
    if (g_core->session_mode() == SPS__AGGREGATE) {
        /* aggregate files hold no spans, which sps_merge needs: each rank
         * keeps its own "<path>.rank<N>.h5"; the code is still agreed */
        int rc = 0;
        char *p = path ? malloc(strlen(path) + 64) : NULL;
        if (path && !p) rc = SPS_ENOMEM;
        snprintf(buf, sizeof buf, "rank%d", rank);
        if (!rc && p) rc = name_with(p, strlen(path) + 64, path, buf);
        if (!rc) rc = g_core->finalize_local(p, rank == 0 ? table_fp : NULL);
        free(p);
        /* aggregate files carry no /communication (nor /mpi_clock): the
         * counters still start again from zero at each finalize */
        counters_clear();
        int arc = agree(c, rc);
        say_other(table_fp, rank, rc, arc, path);
        return arc;
    }
    /* The clock measured again (docs/mpi.md, "Clock alignment"): every
     * rank is here, and the measurements of the session let the merge
     * follow the clocks' drift.  A failure only loses this measurement
     * (a broken communicator fails the steps below as well). */
    sps__clock_sample_t now;
    if (clock_sync(c, rank, size, 1, &now) == 0) sync_add(&now);
    /* Rank 0's path and pid name every file. */
    long long hdr[2] = {path ? (long long)strlen(path) : -1, (long long)getpid()};
    if (PMPI_Bcast(hdr, 2, MPI_LONG_LONG, 0, c)) return SPS_EIO;
    FILE *mytable = rank == 0 ? table_fp : NULL;
    if (hdr[0] < 0) return agree(c, g_core->finalize_local(NULL, mytable));
    size_t plen = (size_t)hdr[0], cap = plen + 96;
    char *final = malloc(plen + 1), *mine = malloc(cap), *tmpout = malloc(cap);
    int rc = final && mine && tmpout ? 0 : SPS_ENOMEM;
    int own = rc;
    rc = agree(c, rc);
    say_other(table_fp, rank, own, rc, path);
    if (rc) {
        free(final), free(mine), free(tmpout);
        return rc;
    }
    if (rank == 0) memcpy(final, path, plen);
    final[plen] = 0;
    if (PMPI_Bcast(final, (int)plen, MPI_CHAR, 0, c)) rc = SPS_EIO;
    int pid0 = (int)hdr[1];
    snprintf(buf, sizeof buf, "rank%d.tmp-%d", rank, pid0);
    if (!rc && rank == 0) rc = name_with(mine, cap, final, buf);
    if (!rc && rank != 0) { /* written locally, then handed over */
        char *p = realloc(mine, 4200);
        if (!p) rc = SPS_ENOMEM;
        else mine = p, rc = local_part_name(mine, 4200, rank, pid0);
    }
    snprintf(buf, sizeof buf, "tmp-mpi-%d", pid0);
    if (!rc) rc = name_with(tmpout, cap, final, buf);
    /* 0. rank 0 checks that it can create files next to the output before
     * any rank gives up its period: a bad path then loses nothing (every
     * rank keeps its data for the next finalize) */
    if (!rc && rank == 0) {
        FILE *probe = fopen(tmpout, "wb");
        if (!probe) rc = SPS_EPATH;
        else fclose(probe), unlink(tmpout);
    }
    own = rc;
    rc = agree(c, rc);
    say_other(table_fp, rank, own, rc, final);
    if (rc) {
        free(final), free(mine), free(tmpout);
        return rc;
    }
    /* 1. every rank writes its period (rank 0's table without the line
     * naming the per-rank file: the merged file is named below) */
    if (!rc) rc = local_quiet(mine, mytable, part_plain(size));
    if (!rc) sync_table(mine); /* the measurements, for the merge's fit */
    int wrote = rc == 0;
    comm_rows_t rows;
    int crc = comm_take(&rows);
    if (crc) rows.n = 0, rows.nbytes = 0;
    own = rc;
    rc = agree(c, rc);
    say_other(table_fp, rank, own, rc, final);
    /* 1b. each rank compresses its own events, laid out as in the merged
     * file, so that rank 0 copies them chunk by chunk */
    int laid = !rc && parts_copy(c, rank, size, mine);
    /* 1c. a laid-out part's index as a message for rank 0 (sent with the
     * offer), so that rank 0 does not open every part with libhdf5; a
     * part without one is read from its file */
    void *imsg = NULL;
    size_t ilen = 0;
    if (laid && rank != 0 && index_msg_wanted() &&
        g_core->part_index_msg(mine, &imsg, &ilen) != 0)
        imsg = NULL, ilen = 0;
    /* 2. the ordered hand-over: rank 0 takes rank 1's part, then rank
     * 2's, ...: where it sees the file the rank wrote (one node, a shared
     * file system) it reads it there, else it receives it next to the
     * output; then it merges (the others wait in the broadcast below) */
    int mrc = rc, kept = 0, in_place = 0; /* in_place: parts rank 0 read where they were */
    sps__merge_opts_t mo = {.trusted = 1}; /* the ranks' parts, just written */
    if (!rc && rank != 0) part_offer(c, mine, imsg, ilen, &kept); /* failures reach rank 0 */
    free(imsg);
    if (!rc && rank == 0) {
        const char **in = calloc((size_t)size, sizeof *in);
        sps__msg_t *msgs = calloc((size_t)size, sizeof *msgs);
        char **own = calloc((size_t)size, sizeof *own), **seen = calloc((size_t)size, sizeof *seen);
        if (!in || !own || !seen || !msgs) mrc = SPS_ENOMEM;
        for (int r = 0; r < size; r++) {
            if (own) own[r] = malloc(cap);
            snprintf(buf, sizeof buf, "rank%d.tmp-%d", r, pid0);
            if (!own || !own[r] || name_with(own[r], cap, final, buf)) mrc = SPS_ENOMEM;
            /* take it even after a failure: the sender must not block */
            char *at = NULL;
            sps__msg_t m = {NULL, 0};
            int prc = r == 0 ? 0 : part_take(c, r, mrc ? NULL : own[r], &at, &m);
            if (msgs) msgs[r] = m;
            else free((void *)m.p);
            if (!mrc && prc) mrc = prc;
            in_place += at != NULL;
            if (seen) seen[r] = at;
            else free(at);
            if (in && own && own[r]) in[r] = at ? at : own[r];
        }
        mo.index_msgs = msgs;
        if (!mrc) mrc = g_core->merge(tmpout, in, (size_t)size, table_fp, &mo);
        for (int r = 0; msgs && r < size; r++) free((void *)msgs[r].p);
        free(msgs);
        mo.index_msgs = NULL;
        if (mrc > 0) mrc = SPS_EIO; /* a merge failure reported as a count */
        for (int r = 0; own && r < size; r++) /* the files read in place are their ranks' */
            if (own[r] && !(seen && seen[r])) unlink(own[r]);
        for (int r = 0; own && r < size; r++) free(own[r]);
        for (int r = 0; seen && r < size; r++) free(seen[r]);
        free(own), free(seen);
        free(in);
    }
    /* 3. the counters go into the merged file (collective either way) */
    int grc = comm_gather(c, rank, size, &rows, tmpout, rank == 0 && !mrc);
    if (rank == 0 && !mrc && grc) mrc = grc;
    grc = clock_gather(c, rank, size, tmpout, rank == 0 && !mrc);
    if (rank == 0 && !mrc && grc) mrc = grc;
    if (rank == 0 && !rc) {
        if (!mrc && rename(tmpout, final) != 0) mrc = SPS_EPATH;
        if (mrc) unlink(tmpout);
        if (table_fp && !mrc && mo.copied)
            fprintf(table_fp, "spanscope: merged %d ranks into %s (events copied as the ranks "
                    "compressed them: %llu chunks, %llu rewritten; %d of %d parts read where "
                    "their ranks wrote them; %llu of %d indexes sent as messages)\n", size, final,
                    (unsigned long long)mo.chunks_copied,
                    (unsigned long long)mo.chunks_rewritten, in_place, size - 1,
                    (unsigned long long)mo.index_msgs_used, size - 1);
        else if (table_fp && !mrc)
            fprintf(table_fp, "spanscope: merged %d ranks into %s (event by event; %d of %d "
                    "parts read where their ranks wrote them)\n", size, final, in_place,
                    size - 1);
        if (table_fp && mrc)
            fprintf(table_fp, "spanscope: could not merge the ranks into %s: %s\n",
                    final, sps_strerror(mrc));
    }
    if (rc && wrote) unlink(mine); /* another rank failed: nothing merged */
    MPI_Request breq; /* the others wait for rank 0's merge: idle */
    if (!rc && (PMPI_Ibcast(&mrc, 1, MPI_INT, 0, c, &breq) || wait_idle(&breq))) mrc = SPS_EIO;
    if (kept) unlink(mine); /* rank 0 read it in place, and is done with it */
    free(rows.names), free(rows.vals);
    free(final), free(mine), free(tmpout);
    return rc ? rc : mrc;
}

/* ------------------------------------------------------------------------ */
/* Registration                                                              */
/* ------------------------------------------------------------------------ */

static const sps__dist_ops_t g_ops = {SPS__DIST_ABI, "mpi", mpi_setup, mpi_finalize,
                                      mpi_shutdown};

/* Runs when libspanscope_mpi is loaded (linked by the program, dlopen()ed by
 * Python or by the core itself, or pulled from the static archive), after
 * libspanscope's own initialisation (it is a dependency).  From here on
 * every sps_setup of the process asks mpi_setup first.  A refused
 * registration (another integration, or a core of another ABI) leaves
 * sessions local and makes sps_mpi_setup return its code. */
__attribute__((constructor)) static void mpi_register(void) {
    g_register_rc = sps__dist_register(&g_ops, &g_core);
    if (g_register_rc) g_core = NULL;
}
