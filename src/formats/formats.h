/*
 * formats.h -- the formats layer's internal interface (src/formats/):
 * the HDF5 writer, the summary tables; the readers and timelines have
 * their own headers beside it (h5_read.h, timeline.h, html.h, merge.h).
 * Uses model, core and util only.
 */
#ifndef SPS_FORMATS_H
#define SPS_FORMATS_H

#include "model/model.h"

/* ======================================================================== */
/* formats: one row of the HDF5 index, the period's shape                    */
/* ======================================================================== */

/* Statistics in ns as written to rank_region_index/summary_statistics. */
typedef struct sps__summary {
    int64_t total, minimum, maximum, first, last, start_minimum, end_maximum;
    uint64_t gpu_count;
    int64_t gpu_total;
    double mean, m2;
} sps__summary_t;

/* The summary of accumulator a (ns), as a row of the index stores it. */
SPS__HIDDEN void sps__summary_of(const sps__acc_t *a, sps__summary_t *o);

typedef struct sps__row {
    uint32_t file_region; /* index into names[] of the file */
    uint32_t rank;
    uint64_t offset, count; /* slice of /events */
    int64_t exclusive_total; /* self ns, -1 if unknown */
    sps__summary_t s;
} sps__row_t;

/* Everything a writer needs besides the per-call columns. */
typedef struct sps__layout {
    int aggregate;                /* storage_layout "aggregate" */
    size_t nnames;
    const char *const *names;     /* file region id -> name */
    size_t nrows;
    const sps__row_t *rows;       /* in file region id order */
    uint64_t nevents;             /* total rows of /events */
    int with_tree;                /* write call_ids/parent_ids/thread_ids */
    long compress_threshold;      /* see sps_config_t */
    size_t nthreads;
    const sps__thread_info_t *threads;
    /* /metadata attributes */
    int64_t start_time_ns, finalize_time_ns;
    int64_t wall_anchor_ns;   /* CLOCK_REALTIME ns taken with mono_anchor_ns */
    int64_t mono_anchor_ns;
    const char *label;
    int rank, size;
    uint64_t dropped, misuse, open_calls;
    /* why the spill failed (events were dropped): when spill_error is not
     * NULL, /metadata gets the str spill_error and the int64 spill_errno */
    const char *spill_error;
    int spill_errno;
    const char *clock_source; /* "tsc" or "monotonic" */
    /* MPI clock alignment (src/ext/mpi.c): when has_clock_offset, /metadata
     * gets int64 clock_offset_ns (ns to ADD to this file's times to put them
     * on rank 0's clock) and clock_offset_error_ns (its error bound). */
    int has_clock_offset;
    int64_t clock_offset_ns, clock_offset_error_ns;
    /* per name (nnames of them), or NULL for none: each region's source,
     * tags and per-call metadata (core's sps__rinfo_t), for the index's
     * source_files, source_lines, source_texts, tags, event_metadata */
    const sps__rinfo_t *info;
    /* /task_table rows (none when ntasks is 0) */
    size_t ntasks;
    const sps_task_t *tasks;
    /* more /metadata strings (a binding's: sps_metadata_set); a key that
     * names one of the writer's own attributes is not written */
    size_t nextra;
    char *const *extra_keys;
    char *const *extra_values;
    /* the call id of the first call of /events (call ids run on across a
     * session's periods; 0: a file of its own) */
    int64_t first_call_id;
} sps__layout_t;

/* Initialises the HDF5 library now (H5open), so that its exit handler,
 * which shuts the library down, is registered now: an atexit handler
 * registered after this call runs before HDF5's.  Returns 0, or SPS_EIO
 * when the library cannot be initialised.  Any thread (src/formats/h5.c). */
SPS__HIDDEN int sps__h5_open(void);

/* HDF5 writer (src/formats/h5.c).  Usage: open (creates every dataset at
 * its final size), write_rows any number of times, write_durations for late
 * durations, close.  Rows are addressed by their position in /events. */
typedef struct sps__h5w sps__h5w_t;
SPS__HIDDEN int sps__h5w_open(sps__h5w_t **out, const char *path,
                              const sps__layout_t *lay);
/* Writes n consecutive rows starting at first.  parent_ids/call_ids/
 * thread_ids may be NULL when !lay->with_tree. */
SPS__HIDDEN int sps__h5w_rows(sps__h5w_t *w, uint64_t first, size_t n,
                              const int64_t *start_deltas,
                              const int64_t *durations,
                              const int64_t *call_ids,
                              const int64_t *parent_ids,
                              const int64_t *thread_ids);
/* Writes durations at scattered positions (calls that completed after their
 * row was written with a placeholder). */
SPS__HIDDEN int sps__h5w_durations(sps__h5w_t *w, size_t n,
                                   const uint64_t *pos, const int64_t *dur);
/* The event columns' chunk, the unit that a file's columns are compressed
 * in: SPS__H5_CHUNK rows (fewer only when the whole /events is shorter). */
#define SPS__H5_CHUNK 32768
/* The rows of each chunk of w's event columns, 0 when they are stored
 * contiguously (small, or compression off). */
SPS__HIDDEN uint64_t sps__h5w_event_chunk(const sps__h5w_t *w);
/* Stores chunk k of event column col (0 start_deltas, 1 durations,
 * 2 call_ids, 3 parent_ids, 4 thread_ids) as the len bytes at buf, already
 * through the columns' filters (HDF5's shuffle + deflate) as filter_mask
 * says (H5Dread_chunk's): a chunk copied from another file whose columns
 * have the same chunk and filters (the chunk-copy merge, merge_h5.c).  The
 * chunk must not also be written with sps__h5w_rows.  Call with HDF5's
 * error printing off (sps__h5_quiet_begin, as a merge runs).  Returns 0,
 * SPS_EINVAL (no such column or chunk, columns not chunked), SPS_EIO or
 * SPS_EHDF5. */
SPS__HIDDEN int sps__h5w_chunk_raw(sps__h5w_t *w, int col, uint64_t k, uint32_t filter_mask,
                                   const void *buf, size_t len);
/* Writes the index, names, metadata and thread table and closes the file.
 * Frees w even on error. */
SPS__HIDDEN int sps__h5w_close(sps__h5w_t *w);
/* The calls of a file carried across a checkpoint: each one's row in
 * /events and the time its children spent in earlier periods' files.  The
 * file keeps them as the optional group /carried (columns event,
 * child_ns); readers subtract child_ns from the call's self time, so that
 * every view of the file gives the live session's self time. */
typedef struct sps__carried {
    struct sps__carried_call { int64_t event, child_ns; } *v;
    size_t n, cap;
} sps__carried_t;
/* Appends (event, child_ns); 0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__carried_add(sps__carried_t *c, int64_t event, int64_t child_ns);
SPS__HIDDEN void sps__carried_free(sps__carried_t *c);
/* Adds c as /carried to the closed file at path (nothing when c->n is 0).
 * 0, SPS_EHDF5 or SPS_EIO. */
SPS__HIDDEN int sps__carried_write(const char *path, const sps__carried_t *c);
/* Writes every call of a snapshot as rows (h5_period.c); the calls carried
 * across a checkpoint are added to *carried (the caller writes them with
 * sps__carried_write once the file is closed, and frees them). */
/* Progress of a long write: called now and then (every 2^16 calls
 * written) with the calls done and their total. */
typedef struct sps__progress {
    void (*fn)(void *ctx, uint64_t done, uint64_t total);
    void *ctx;
} sps__progress_t;
/* The progress line of a long write (progress.c): "spanscope: <verb>
 * <path>: 42% (k of n <unit>)" on stderr, rewritten in place at most twice
 * a second once the work has taken a second, when verbose or stderr is a
 * terminal (SPANSCOPE_PROGRESS=0 never, =1 always and at once), on rank 0
 * only.  sps__pline_fn is an sps__progress_t's fn (ctx: the line); _end
 * closes the line with the total and the time, or the failure. */
typedef struct sps__pline {
    const char *verb, *path, *unit;
    int64_t start_ns, last_ns;
    int on, always, shown;
} sps__pline_t;
SPS__HIDDEN void sps__pline_init(sps__pline_t *p, const char *verb, const char *path,
                                 const char *unit, int verbose, int rank);
SPS__HIDDEN void sps__pline_fn(void *ctx, uint64_t done, uint64_t total);
SPS__HIDDEN void sps__pline_end(const sps__pline_t *p, uint64_t total, int rc);
/* The values per span of a period (cfg.track) summed per row of the
 * layout: calls with values, own and self sums ([row * nvals + i]; a
 * peak's own and self are maxima), filled by sps__write_events when
 * nvals > 0, written by sps__values_write as the file's /values. */
typedef struct sps__vtot {
    uint32_t nvals;
    size_t nrows;
    uint64_t *calls, *own, *self;
    /* counter tracks: at the end of each outermost call of a thread, the
     * thread's live bytes and each counter's cumulative count, as counter
     * samples ("live bytes (thread N)", "<counter> (thread N)"): /counters,
     * so every timeline written from the file draws them */
    uint32_t nthreads, ntracks;
    int64_t *track_series;   /* [nthreads * ntracks]: index into names, -1 */
    char **names;
    size_t nnames;
    int64_t *sm_series, *sm_t;
    double *sm_v;
    size_t n, cap;
    uint64_t dropped;        /* past SPS__VTOT_SAMPLES_MAX */
} sps__vtot_t;
#define SPS__VTOT_SAMPLES_MAX (1u << 22)
/* Allocates vt for nrows rows and nthreads threads of the running
 * session's values (nothing when it has none).  0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__vtot_init(sps__vtot_t *vt, size_t nrows, uint32_t nthreads);
SPS__HIDDEN void sps__vtot_free(sps__vtot_t *vt);
/* Adds /values to the closed file at path: one row per layout row with
 * calls with values (string column "region"), columns "calls", "rank",
 * then per value "<name>" (own) and "self_<name>".  0, SPS_EHDF5 or
 * SPS_EIO. */
SPS__HIDDEN int sps__values_write(const char *path, const sps__vtot_t *vt,
                                  const sps__layout_t *lay);
SPS__HIDDEN int sps__write_events(const sps__snap_t *snap, sps__h5w_t *w,
                                  const sps__layout_t *lay,
                                  const uint32_t *file_region,
                                  sps__carried_t *carried, sps__vtot_t *vt,
                                  const sps__progress_t *progress);
/* Writes the timeline at in (format fmt: .json, .json.gz, .pftrace or .h5)
 * as a scope-profiler schema-3 HDF5 file at tmp (h5_from_trace.c): rows
 * per (rank, region), a rank per process (its own number, else its
 * index), call and parent ids from the one fold, thread ids, statistics
 * and self times from the fold; /metadata start and finalize times from
 * the spans, mpi_size the number of ranks, the clock anchor of the
 * source.  Reads in twice (counts, then calls); memory bounded by rows
 * and threads, not calls.  Two processes with the same rank number would
 * share rows: callers give one rank per process (merge resolves them).
 * Returns 0 or a negative SPS_E* code (message set for a bad source). */
SPS__HIDDEN int sps__h5_from_timeline(const char *in, int fmt, const char *tmp);
/* What a caller knows of the run beyond its spans (results held in
 * Python): setup and finalize times (when has_times), the label (NULL:
 * none), per region name the regions' attributes (names[i] has info[i];
 * names the timeline lacks are ignored) and more /metadata strings.  All
 * borrowed. */
typedef struct sps__h5_run {
    int has_times;
    int64_t start_time_ns, finalize_time_ns;
    const char *label;
    size_t nnames;
    const char *const *names;
    const sps__rinfo_t *info;
    /* more /metadata strings (the layout's extra_*) */
    size_t nextra;
    char *const *extra_keys, *const *extra_values;
} sps__h5_run_t;
/* sps__h5_from_timeline with run's facts in /metadata and the index
 * (run NULL: as sps__h5_from_timeline).  Also SPS_ENOMEM. */
SPS__HIDDEN int sps__h5_from_timeline_ex(const char *in, int fmt, const char *tmp,
                                         const sps__h5_run_t *run);
/* Closes an HDF5 handle (an hid_t) of any kind if it is valid and sets it
 * to -1 (h5_read.c; shared by the writer and the readers). */
SPS__HIDDEN void sps__h5_close(int64_t *id);
/* Closes and removes the file without finishing it. */
SPS__HIDDEN void sps__h5w_abort(sps__h5w_t *w);

/* ------------------------------------------------------------------------ */
/* A rank's part for the chunk-copy merge (h5_part.c; docs/mpi.md "The      */
/* collective finalize")                                                     */
/* ------------------------------------------------------------------------ */

/* Where a rank's events go in the merged file, stored as the int64
 * attributes of the part's group /part_plan.  The part's event columns
 * are laid out as the merged file's from event base - pad on, so that
 * their chunks are the merged file's chunks: the merging rank copies
 * them compressed (H5Dread_chunk / sps__h5w_chunk_raw). */
typedef struct sps__part_plan {
    uint64_t base;   /* the merged file's event index of this rank's first event */
    uint64_t total;  /* the events of every rank */
    uint64_t pad;    /* base % SPS__H5_CHUNK: rows before this rank's first event */
    uint64_t events; /* this rank's events, rows pad .. pad + events */
    uint64_t tail;   /* later ranks' first events this part holds after its own */
} sps__part_plan_t;

/* A message: len bytes at p (borrowed). */
typedef struct sps__msg {
    const void *p;
    size_t len;
} sps__msg_t;

/* What a merge does beyond sps_merge (merge_h5.c; sps__merge_ex, api.h). */
typedef struct sps__merge_opts {
    /* in: write a rank's part from its one .h5 input: its times put on rank
     * 0's clock by its own MPI line (its /clock_sync), its rows in their
     * order from event plan.pad on, plan.tail rows after them left for
     * later ranks, compressed whatever its size, plan stored as
     * /part_plan (base, total and tail given; pad and events filled) */
    int part;
    sps__part_plan_t plan;
    /* in: the inputs are this library's own files, written moments ago
     * (a collective finalize's parts): read without the isolated check */
    int trusted;
    /* in (rank 0 of a collective finalize, with trusted): per input (NULL:
     * none), the message its rank made of its laid-out part
     * (sps__part_index_msg), read instead of opening the file with libhdf5;
     * an entry of len 0, or one that is refused, has the file opened as
     * before.  out: how many inputs were read from their message. */
    const sps__msg_t *index_msgs;
    uint64_t index_msgs_used;
    /* out: 1 when the events were copied chunk by chunk from parts (every
     * input has /part_plan, they follow each other), 0 when merged event
     * by event; the chunks copied compressed and those rewritten */
    int copied;
    uint64_t chunks_copied, chunks_rewritten;
} sps__merge_opts_t;

/* The message a rank sends rank 0 with its laid-out part at path (this
 * process's own file, just written; merge_h5.c): what rank 0's merge would
 * read of it with libhdf5 -- its index, /metadata, /part_plan, where its
 * chunks lie, its clock facts -- so that rank 0 reads none of it
 * (opts.index_msgs).  *msg is malloc'd (the caller frees it), *len its
 * size; *len 0 and *msg NULL when the part has what the message does not
 * carry (stack samples, device activity, GPU durations: rank 0 then opens
 * the file).  0 or a code (message set). */
SPS__HIDDEN int sps__part_index_msg(const char *path, void **msg, size_t *len);
/* Adds p as /part_plan to the closed .h5 file at path.  0 or a code. */
SPS__HIDDEN int sps__part_plan_write(const char *path, const sps__part_plan_t *p);
/* Reads /part_plan of the open file (an HDF5 file id).  1 with *p filled,
 * 0 when the file has none, -1 when it is malformed. */
SPS__HIDDEN int sps__part_plan_read(int64_t file, sps__part_plan_t *p);
/* Reads (write 0) or writes (write 1) rows first .. first + n of the five
 * event columns of the .h5 file at path into / from cols[0..4] (n int64
 * each: start_deltas, durations, call_ids, parent_ids, thread_ids).  0 or
 * a code (message set). */
SPS__HIDDEN int sps__part_rows(const char *path, uint64_t first, size_t n,
                               int64_t *const *cols, int write);
/* The number of events the rows of the .h5 file at path hold (the sum of
 * its event counts).  For this process's own part, just written: read
 * without the isolated check (sps__h5_guard_trust), which would cost a
 * fork, an exec and a copy of the file.  0 or a code (message set). */
SPS__HIDDEN int sps__part_events(const char *path, uint64_t *n);
/* The error code for a failed HDF5 call (h5.c): SPS_EIO when errno says
 * the disk is full or failing, SPS_EHDF5 otherwise. */
SPS__HIDDEN int sps__h5_fail(void);

/* Disk space reserved ahead of an HDF5 file being written (h5.c).  HDF5
 * 1.10 cannot close a file whose flush fails (a full disk, a file size
 * limit): H5Fclose fails, the id stays half-destroyed and the library
 * crashes at exit.  So the writer reserves space (fallocate) before it
 * writes, keeping room for the metadata that closing writes: a write that
 * would not fit fails here, before HDF5 touches the disk, and the file
 * still closes.  Without fallocate support the reservation is off. */
typedef struct sps__h5res {
    int64_t file;        /* the hid_t */
    int fd;              /* its descriptor (sec2 driver), -1: off */
    uint64_t end;        /* reserved up to here */
    uint64_t slack;      /* kept free past the data: the closing metadata */
} sps__h5res_t;
/* Makes room for `bytes` more past the file's end (plus the slack).  0,
 * or SPS_EIO with errno set (nothing was written). */
SPS__HIDDEN int sps__h5_reserve(sps__h5res_t *r, uint64_t bytes);

/* ------------------------------------------------------------------------ */
/* formats: HDF5's shuffle + deflate, done by us (deflate.c)                 */
/* ------------------------------------------------------------------------ */

/* One thread's compressor state.  sps__coder_new(bytes): for columns of at
 * most `bytes` bytes; NULL on ENOMEM.  sps__coder_free(NULL) is a no-op. */
typedef struct sps__coder sps__coder_t;
SPS__HIDDEN sps__coder_t *sps__coder_new(size_t column_bytes);
SPS__HIDDEN void sps__coder_free(sps__coder_t *c);
/* Filters the n 8-byte elements at elems as HDF5's shuffle then deflate
 * filters would (the bytes H5Dwrite_chunk takes with filter mask 0):
 * *out (malloc'd, caller frees) receives *out_bytes bytes.  column (0..7)
 * names the column, whose encoder choice c remembers between chunks.
 * 0, SPS_EINVAL (n too large for c) or SPS_ENOMEM. */
SPS__HIDDEN int sps__coder_column(sps__coder_t *c, int column,
                                  const int64_t *elems, size_t n,
                                  unsigned char **out, size_t *out_bytes);
/* Columns (bit k: column k) that c gives to its fastest encoder whatever
 * their content: noisy columns whose strong encoding is not worth its time
 * (the durations; docs/benchmarks.md).  Without ISA-L it changes nothing. */
SPS__HIDDEN void sps__coder_fast_columns(sps__coder_t *c, unsigned mask);
/* Whether c may write a column's low byte planes with libdeflate and the
 * rest with ISA-L in one stream (on by default; deflate.c, "The split
 * stream").  Returns whether this build can: it needs both encoders.  For
 * the tests and bench/bench_coder.c, which compare the two. */
SPS__HIDDEN int sps__coder_split(sps__coder_t *c, int on);
/* A column of n elements kept aside compactly (shuffled, the fastest
 * deflate) while it waits for a few values: *out (malloc'd) of *out_bytes.
 * sps__coder_unpark gives the n elements back.  0, SPS_EINVAL (n too
 * large), SPS_ENOMEM or (unpark, a damaged blob) SPS_EFORMAT. */
SPS__HIDDEN int sps__coder_park(sps__coder_t *c, const int64_t *elems, size_t n,
                                unsigned char **out, size_t *out_bytes);
SPS__HIDDEN int sps__coder_unpark(sps__coder_t *c, const unsigned char *in,
                                  size_t in_bytes, int64_t *elems, size_t n);
/* The reverse of sps__coder_column for a reader: inflates the zlib stream
 * in[0..in_bytes) and, when shuffled, unshuffles it, into the n elements
 * at elems (8-byte, as stored: little-endian).  plane: scratch of n*8
 * bytes (used only when shuffled).  *dec: the decompressor, made on first
 * use (start with NULL; sps__unfilter8_free frees it).  0, SPS_EFORMAT (a
 * damaged stream, or one that is not exactly n*8 bytes) or SPS_ENOMEM. */
SPS__HIDDEN int sps__unfilter8(void **dec, const unsigned char *in, size_t in_bytes,
                               int shuffled, unsigned char *plane, int64_t *elems, size_t n);
SPS__HIDDEN void sps__unfilter8_free(void *dec);
/* The encoders this build uses, in words (for benchmarks and --version). */
SPS__HIDDEN const char *sps__coder_name(void);

/* ------------------------------------------------------------------------ */
/* formats: /events assembled chunk by chunk (h5_events.c)                   */
/* ------------------------------------------------------------------------ */

#define SPS__EV_MAX 5 /* event columns at most */

/* The int64 columns ds[0..ncols) (hid_t's, kept open by the caller) of n
 * rows each, chunked by ch rows with shuffle + deflate when compressed,
 * else contiguous (ch is then only the unit of writing).  dur_col is the
 * column whose negative values mean "comes later".  Staging, when needed,
 * goes to an unlinked file in dir.  streams: how many ranges of rows are
 * written at once (the layout's rows, 0 unknown), which sizes the chunk
 * buffers kept (memory: ch * ncols * 8 bytes each).  Starts the worker
 * threads. */
typedef struct sps__evcols sps__evcols_t;
SPS__HIDDEN int sps__evcols_open(sps__evcols_t **out, const int64_t *ds,
                                 int ncols, int dur_col, uint64_t n,
                                 uint64_t ch, int compressed, const char *dir,
                                 size_t streams);
/* Space is reserved through res (borrowed, may be NULL) before each write. */
SPS__HIDDEN void sps__evcols_reserve(sps__evcols_t *e, sps__h5res_t *res);
/* Lets one complete chunk per worker wait for it (0, the default, lets none:
 * the writing thread compresses a chunk itself whenever every worker is
 * busy).  Waiting keeps the writing thread on its rows when a worker is a
 * little late, at the cost of one more chunk buffer per worker. */
SPS__HIDDEN void sps__evcols_queue(sps__evcols_t *e, int wait);
/* Writes rows [first, first + n) from cols[0..ncols) (borrowed).  Each row
 * is written once; a negative duration is stored as 0 until its
 * sps__evcols_duration comes, once.  A chunk is compressed and written as
 * soon as all its rows and durations are in.  0, SPS_EINVAL (out of range,
 * a row written twice), SPS_ENOMEM, SPS_EIO or SPS_EHDF5; after an error
 * every call returns it. */
SPS__HIDDEN int sps__evcols_rows(sps__evcols_t *e, uint64_t first, size_t n,
                                 const int64_t *const *cols);
/* The duration of row pos, announced by a negative one.  As above. */
SPS__HIDDEN int sps__evcols_duration(sps__evcols_t *e, uint64_t pos, int64_t dur);
/* Writes every chunk not yet written (rows never written are zeros) and
 * waits for the workers.  0 or the first error. */
SPS__HIDDEN int sps__evcols_finish(sps__evcols_t *e);
/* Stops the workers and frees e, written or not.  NULL is a no-op. */
SPS__HIDDEN void sps__evcols_free(sps__evcols_t *e);
/* Chunks staged (or evicted to the staging file), parked (waiting for
 * durations, their other columns written) and written so far, and worker
 * threads (tests). */
SPS__HIDDEN void sps__evcols_counts(const sps__evcols_t *e, uint64_t *staged,
                                    uint64_t *parked, uint64_t *written,
                                    int *workers);

/* ======================================================================== */
/* formats: summary table (src/formats/table.c)                              */
/* ======================================================================== */

/* One row of the tree view: a distinct path of nested regions, as the
 * table prints it (from the live tree, api/finalize.c, or a file, h5_read.c). */
typedef struct sps__tree_row {
    int32_t parent;   /* index of the parent row, -1 for a root */
    const char *name;
    uint64_t calls;
    int64_t total_ns, self_ns, min_ns, max_ns;
} sps__tree_row_t;

/* A region's flat statistics. */
typedef struct sps__tflat {
    const char *name;
    uint64_t calls;
    int64_t total_ns, self_ns, min_ns, max_ns;
    double mean_ns;
} sps__tflat_t;

typedef enum {
    SPS__SORT_SELF = 0, SPS__SORT_TOTAL, SPS__SORT_CALLS, SPS__SORT_MEAN,
    SPS__SORT_MAX, SPS__SORT_NAME
} sps__sort_t;

/* The one parser of sort keys ("self", "total", "calls", "mean", "max",
 * "name"; NULL reads as "self"): 0 and *out set, or SPS_EINVAL for an
 * unknown key (*out left alone; table.c).  The tool's --sort, sps_report
 * and Python's summary(sort=...) all use it.  sps__sort_name gives a key's name back ("self" for a value
 * out of range). */
SPS__HIDDEN int sps__sort_parse(const char *s, sps__sort_t *out);
SPS__HIDDEN const char *sps__sort_name(sps__sort_t by);

typedef struct sps__table_opts {
    int tree;          /* print the tree view */
    int flat;          /* print the flat view */
    sps__sort_t sort;  /* flat view order (tree: children by total) */
    size_t top;        /* flat view rows, 0 = all */
    int64_t session_ns; /* 100 % (wall time of the session period) */
} sps__table_opts_t;

/* Prints the tree view (nodes, any order; children sorted by total) and/or
 * the flat view.  Never fails on odd input (cycles in parent links are
 * printed as roots). */
SPS__HIDDEN int sps__table_print(FILE *fp, const sps__tree_row_t *nodes,
                                 size_t nnodes, const sps__tflat_t *flat,
                                 size_t nflat, const sps__table_opts_t *opt);
/* How many threads (of all ranks) ran each row: "% session" is then a
 * row's total over its threads' session time (session_ns x lanes), so a
 * loop run by 8 threads reads as their share, never 700 % (issue 12).
 * flat[i] / nodes[i]: of flat[i] / nodes[i] (NULL: 1 each); total: of the
 * TOTAL row (0: 1). */
typedef struct sps__table_lanes {
    const uint32_t *flat, *nodes;
    uint32_t total;
} sps__table_lanes_t;
/* sps__table_print with the rows' lanes (NULL: one each). */
SPS__HIDDEN int sps__table_print_lanes(FILE *fp, const sps__tree_row_t *nodes,
                                       size_t nnodes, const sps__tflat_t *flat,
                                       size_t nflat, const sps__table_opts_t *opt,
                                       const sps__table_lanes_t *lanes);
/* Prints the per-rank view: for each of nregions regions (names[g]), the
 * min / mean / max over the nranks ranks (ranks[k]) of its total time
 * totals[g * nranks + k], the slowest rank and the imbalance (max - mean) /
 * max and the time lost to it (max - mean), sorted by the time lost (by
 * the sum over ranks for SPS__SORT_TOTAL),
 * the first top rows (all when 0).  Returns 0, SPS_EINVAL, SPS_ENOMEM or
 * SPS_EIO. */
/* The tree (opt->tree: one row per node in print order, its path of names
 * joined by ';') or else the flat view (sorted and cut by opt->sort and
 * opt->top) as CSV (RFC 4180), times in exact ns.  0, SPS_EINVAL, SPS_ENOMEM
 * or SPS_EIO. */
SPS__HIDDEN int sps__table_csv(FILE *fp, const sps__tree_row_t *nodes,
                               size_t nnodes, const sps__tflat_t *flat,
                               size_t nflat, const sps__table_opts_t *opt);
SPS__HIDDEN int sps__rank_table_print(FILE *fp, const char *const *names,
                                      size_t nregions, const uint32_t *ranks,
                                      size_t nranks, const int64_t *totals,
                                      sps__sort_t sort, size_t top);

/* h5.c: adds group `group` to an existing, closed HDF5 file: n rows of an
 * optional vlen UTF-8 column strname (none when strcol is NULL) and ncols
 * int64 columns, and a "description" attribute.  0, SPS_EHDF5 or SPS_EIO. */
SPS__HIDDEN int sps__h5_add_table(const char *path, const char *group,
                                  const char *desc, size_t n,
                                  const char *strname,
                                  const char *const *strcol, size_t ncols,
                                  const char *const *colname,
                                  const int64_t *const *cols);

/* h5.c: adds /counters to the closed file at path (see docs/design.md). */
/* Adds scope-profiler's per-call /events/task_ids and /events/await_ns to
 * the closed events file at path, from the task steps[0..nsteps) (sorted
 * here, in place): each call's task is the one whose step on the call's
 * thread holds its start (-1: none), its await the part of the call that
 * task did not run.  Reads the file's starts, durations and threads back
 * (40 bytes per call while it runs).  0, SPS_ENOMEM, SPS_EHDF5 or SPS_EIO. */
SPS__HIDDEN int sps__h5_add_task_columns(const char *path, sps_task_step_t *steps,
                                         size_t nsteps);
/* A period's stack samples as /samples stores them (docs/sampling.md):
 * per sample n: times_ns, threads (the /events thread index, -1: a thread
 * without spans), tids, ranks, regions (index into /region_table/names,
 * -1: outside every span), call_ids (-1 likewise), weights (the timer
 * periods the sample stands for) and stacks (0-based into
 * the stack table); the stack table: stack_offsets [nstacks + 1] into
 * stack_frames (frame indexes, innermost first); the frames: functions,
 * files, modules, lines, kinds (0 native, 1 a runtime's such as Python),
 * addresses (native: the offset in module). */
typedef struct sps__h5_samples {
    size_t n;
    const int64_t *times_ns, *threads, *tids, *ranks, *regions, *call_ids, *stacks, *weights;
    size_t nstacks;
    const int64_t *stack_offsets, *stack_frames;
    size_t nframes;
    const char *const *functions, *const *files, *const *modules;
    const int64_t *lines, *kinds, *addresses;
    int64_t hz, lost;
} sps__h5_samples_t;
/* Adds /samples to the closed file at path.  0, SPS_EHDF5 or SPS_EIO. */
SPS__HIDDEN int sps__h5_add_samples(const char *path, const sps__h5_samples_t *x);
SPS__HIDDEN int sps__h5_add_counters(const char *path, size_t nnames,
                                     const char *const *names, size_t n,
                                     const int64_t *series, const int64_t *ranks,
                                     const int64_t *t_ns, const double *values,
                                     uint64_t dropped);
/* Sets /metadata's attribute key to the string value in the closed file
 * at path (h5_meta.c).  0, SPS_EIO or SPS_EHDF5 (message set). */
SPS__HIDDEN int sps__h5_meta_put(const char *path, const char *key, const char *value);

#endif /* SPS_FORMATS_H */
