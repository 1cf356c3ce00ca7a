/*
 * h5_read.h -- a validating reader of scope-profiler HDF5 files (schema 1,
 * 2 and 3, columnar and aggregate layouts): the ones spanscope writes and
 * the ones scope-profiler writes (schema 1, without the schema attribute,
 * keeps each rank's regions as rank<N>/regions/<name>/{start_times,
 * end_times} groups: the reader turns them into the same index and events;
 * sps__h5r_open_index reads its calls whole and serves them from memory).
 *
 *     sps__h5r_t *r;
 *     if (sps__h5r_open(&r, path) < 0) {
 *         fprintf(stderr, "%s\n", sps__err_msg());
 *         return 1;
 *     }
 *     sps__tree_row_t *nodes; size_t nn;
 *     sps__h5r_tree(r, &nodes, &nn);    // call tree, names point into r
 *     ...
 *     free(nodes);
 *     sps__h5r_free(r);
 *
 * The input is untrusted.  Every dataset the reader uses is checked for
 * existence, rank (1-D), type class and size, and length; the index must
 * slice /events within bounds without overlap, region ids must name a
 * region, call/parent ids must be consistent; and no dataset may claim more
 * elements than the file's size could hold (even compressed).  A file that
 * fails a check gives SPS_EFORMAT and a one-line message.
 *
 * What the reader cannot check is HDF5's own parsing: HDF5 1.10 crashes or
 * loops forever on some corrupt files (its global heap, which holds the
 * variable-length strings, is trusted).  So it opens a file only after a
 * forked child has parsed it without crashing (sps__h5_guard, below;
 * docs/robustness.md); the command-line tool also runs its reading
 * commands in a child (tools/spanscope.c, run_isolated).
 *
 * Nesting comes from /events/call_ids + parent_ids when the file has both,
 * else from interval containment per rank and thread (thread_ids when
 * present).
 */
#ifndef SPS_H5_READ_H
#define SPS_H5_READ_H

#include "formats/formats.h"

/* A dataset may claim at most this many bytes per byte of file: deflate
 * cannot compress better than about 1032:1.  The reader refuses a column
 * that claims more ("claims more elements than the file can hold"), so
 * the guard does not read one either. */
#define SPS__H5_RATIO_MAX 1100

#include <limits.h>

/* A file's /metadata: every attribute as read (the list Python's
 * results.read and sps_metadata_read hand out) and a typed view of the
 * ones the library uses itself.  The view's strings point into attrs; a
 * field that is absent or not of its type reads as has_* = 0, 0 or "". */
typedef struct sps__h5r_meta {
    size_t nattrs;
    sps_meta_attr_t *attrs;   /* owned, in name order (as h5py lists them) */
    int has_times;            /* start_time_ns and finalize_time_ns, both */
    int64_t start_time_ns, finalize_time_ns; /* each 0 when absent */
    int has_anchor;           /* wall_anchor_ns > 0 and mono_anchor_ns */
    int64_t wall_anchor_ns, mono_anchor_ns;  /* 0 without has_anchor */
    int has_rank;             /* rank, within 0..INT32_MAX */
    int64_t rank;
    int64_t mpi_size;         /* 0 when absent */
    int has_clock_offset;     /* clock_offset_ns (MPI alignment, docs/merge.md) */
    int64_t clock_offset_ns;
    int has_clock_offset_error; /* with the offset, clock_offset_error_ns >= 0 */
    int64_t clock_offset_error_ns;
    int64_t dropped_events, misuse_count, open_calls; /* 0 when absent */
    const char *hostname, *label, *clock_source;     /* "" when absent */
} sps__h5r_meta_t;

/* Reads /metadata of the HDF5 file at path into *out (a file without the
 * group gives no attributes).  Attributes of other types than integers,
 * floats and strings, scalar or 1-D, are left out; so are ones HDF5
 * cannot read.  Returns 0, SPS_EIO (cannot open), SPS_EFORMAT (not HDF5)
 * or SPS_ENOMEM, with the message set (sps__err_msg); free with
 * sps__h5r_meta_free.  The one reader of /metadata: the readers below,
 * merge, sps_metadata_read (Python) all go through it. */
SPS__HIDDEN int sps__h5r_metadata(const char *path, sps__h5r_meta_t *out);
/* What /carried says event e's children spent in earlier files (ns), 0
 * when it says nothing of e (h5_read.c; O(log ncarried)). */
struct sps__h5r;
SPS__HIDDEN int64_t sps__h5r_carried_ns(const struct sps__h5r *r, uint64_t e);
/* Frees what m owns and zeroes it.  NULL is a no-op. */
SPS__HIDDEN void sps__h5r_meta_free(sps__h5r_meta_t *m);
/* Frees n attributes at a (as sps__h5r_metadata made them). */
SPS__HIDDEN void sps__h5r_attrs_free(sps_meta_attr_t *a, size_t n);

/* A file read into memory.  Everything is owned by the struct. */
typedef struct sps__h5r {
    int schema;            /* 1, 2 or 3 */
    int aggregate;         /* storage_layout "aggregate": no per-call data */
    size_t nnames;
    char **names;          /* region names, valid UTF-8 (never NULL) */
    size_t nrows;
    /* The index.  file_region < nnames; offset + count <= nevents.  For the
     * aggregate layout count is aggregate_counts, offset 0, and s.total /
     * minimum / maximum and exclusive_total come from aggregate_*.
     * Otherwise s is zero: the reader recomputes statistics from events. */
    sps__row_t *rows;
    uint64_t nevents;      /* rows of /events (0 for aggregate files) */
    /* Per event (NULL when nevents == 0).  start is absolute (deltas
     * decoded), dur = end - start, self = dur minus the direct children's
     * durations, parent = index of the enclosing event or -1, row = index
     * into rows or UINT32_MAX for an event no row covers. */
    int64_t *start, *dur, *self;
    int32_t *parent;
    uint32_t *row;
    /* The optional columns as stored (NULL when absent). */
    int64_t *call_ids, *parent_ids, *thread_ids;
    /* /carried (optional): calls carried across a checkpoint, their event
     * index and the ns their children spent in earlier periods' files,
     * which self (above) already has subtracted. */
    size_t ncarried;
    int64_t *carried_event, *carried_child;
    int nested_by_ids;     /* nesting from call/parent ids, else intervals */
    uint64_t orphans;      /* parent ids naming no call of the file */
    uint64_t cycles;       /* parent-id cycles cut (their calls made roots) */
    sps__h5r_meta_t meta;  /* /metadata (sps__h5r_metadata) */
    /* scope-profiler's optional per-row columns (nrows each, NULL when
     * absent; see sps_file_t.row_*): call-site line, file, source text,
     * tags and per-call metadata (JSON list text). */
    int64_t *src_lines;
    char **src_files, **src_texts, **tags, **ev_meta;
    /* Optional per-event columns as stored (NULL when absent). */
    int64_t *gpu_dur, *task_ids, *await_ns;
    /* /thread_table and /task_table (ncols 0 when absent); the columns
     * and their arrays are owned (const only in the public type). */
    sps_file_table_t thread_table, task_table;
    int has_summary;       /* /rank_region_index/summary_statistics exists */
    unsigned rank_groups;  /* SPS_FILE_HAS_* of the rank<N> groups */
    sps__summary_t *summary; /* its rows (nrows) when read: only by
                              * sps__h5r_open_index, NULL otherwise */
    /* Streaming (sps__h5r_open_index): the open file and event columns
     * (HDF5 ids; -1 when closed or absent: h_tid, h_call and h_parent are
     * the optional thread_ids, call_ids and parent_ids) and whether /events holds start
     * gaps (schema 3) rather than start times. */
    int64_t h_file, h_start, h_dur, h_tid, h_call, h_parent;
    int deltas;
    /* A schema-1 file opened with sps__h5r_open_index: it has no /events
     * to stream, so its calls were read whole into start (absolute) and
     * dur, and sps__h5r_events serves blocks from them. */
    int in_memory;
    /* The event columns' direct chunk readers (h5_chunkread.c), in the
     * order of h_start .. h_parent; NULL where a column is absent or not
     * one they can decode (then H5Dread reads it). */
    struct sps__h5cr *cr[5];
} sps__h5r_t;

/* An event column read chunk by chunk with H5Dread_chunk and decoded by
 * us (h5_chunkread.c, which says why and which columns qualify).
 * sps__h5cr_new: a reader of the open dataset (not owned: close it after
 * sps__h5cr_free), or NULL when the column does not qualify or on ENOMEM.
 * sps__h5cr_read: elements [first, first + n) into out (the caller checks
 * the range); 0, 1 when some chunk cannot be read this way (read the range
 * with H5Dread instead: it gives HDF5's own error for damaged data), or
 * SPS_ENOMEM.  Call under sps__h5_quiet_begin, like every HDF5 read. */
typedef struct sps__h5cr sps__h5cr_t;
SPS__HIDDEN sps__h5cr_t *sps__h5cr_new(int64_t dataset);
SPS__HIDDEN int sps__h5cr_read(sps__h5cr_t *c, uint64_t first, size_t n, int64_t *out);
SPS__HIDDEN void sps__h5cr_free(sps__h5cr_t *c);

/* Reads and validates the file at path.  On success *out owns the result
 * (free it with sps__h5r_free).  Returns 0, SPS_EIO (the file cannot be
 * opened or read: missing, unreadable, not a regular file), SPS_EFORMAT
 * (not HDF5, or not a valid schema 2/3 file) or SPS_ENOMEM; on failure *out
 * is NULL and sps__err_msg() (util.h) says why: one line naming the file
 * and what is wrong with it.  HDF5's error printing is off
 * while it runs (and restored afterwards). */
SPS__HIDDEN int sps__h5r_open(sps__h5r_t **out, const char *path);

/* Like sps__h5r_open, but reads and validates only the region names, the
 * index (rows within /events, no overlaps; summary_statistics into
 * r->summary when the file has it), the lane tables and /metadata; the
 * per-event arrays stay NULL and the file stays open so that
 * sps__h5r_events can read the events in blocks.  Memory does not grow
 * with the events -- except for a schema-1 file, which has no /events:
 * its calls are read whole (start, dur; r->in_memory) and served from
 * memory. */
SPS__HIDDEN int sps__h5r_open_index(sps__h5r_t **out, const char *path);
/* Closes the HDF5 file and event columns that a reader from
 * sps__h5r_open_index keeps open, keeping everything it read (rows,
 * names, metadata): libhdf5 holds over half a MiB for every open file (its
 * metadata cache's index), so a merge of many inputs releases each one
 * once its facts are read (merge_h5.c).  Event reads fail until
 * sps__h5r_reacquire. */
SPS__HIDDEN void sps__h5r_release(sps__h5r_t *r);
/* Opens a released reader's file (path, as opened) and, unless file_only,
 * its event columns again (file_only: h_file alone, for a caller that
 * reads the file itself); nothing for a reader that holds them or read
 * everything.  0, or a code with r still released (message set). */
SPS__HIDDEN int sps__h5r_reacquire(sps__h5r_t *r, const char *path, int file_only);

/* A reader's index as a message, for another process of the same build
 * (h5_index_msg.c; a collective finalize's ranks send their parts' indexes
 * to rank 0, docs/mpi.md): sps__h5r_index_put appends what r read -- its
 * names, rows, summaries, per-row extras, /carried and /metadata -- to b
 * (0, or SPS_ENOMEM: b->oom); sps__h5r_index_get makes *out a released
 * reader from such a message (no file open: sps__h5r_reacquire opens it
 * by path), the same as sps__h5r_open_index then sps__h5r_release would
 * have made: 0, SPS_EFORMAT (not a whole message of this build, or one
 * whose rows do not fit its names and events; nothing set) or SPS_ENOMEM.
 * Free *out with sps__h5r_free. */
SPS__HIDDEN int sps__h5r_index_put(const sps__h5r_t *r, sps__bytes_t *b);
SPS__HIDDEN int sps__h5r_index_get(sps__h5r_t **out, const void *msg, size_t len);
/* Fills m's typed fields (times, rank, offsets, hostname...) from its
 * attributes, as the reader does after reading /metadata. */
SPS__HIDDEN void sps__h5r_meta_view(sps__h5r_meta_t *m);

/* Reads events [first, first + n) of a file opened with
 * sps__h5r_open_index: the raw first column (start gaps for schema 3, start
 * times for schema 2, see r->deltas) into start, durations into dur, and
 * thread ids, call ids and parent ids into tid, call_ids and parent_ids
 * (-1 each where the file lacks the column; any of these three may be
 * NULL when the caller does not want it; r->h_call / r->h_parent < 0 say
 * the file lacks them).  start and dur may be NULL together (only ids
 * wanted: a pre-pass over the thread ids reads and decodes only them).
 * The ids are as stored: not validated.  Returns 0
 * or SPS_EFORMAT/SPS_EINVAL with the message set. */
SPS__HIDDEN int sps__h5r_events_ids(const sps__h5r_t *r, uint64_t first,
                                    size_t n, int64_t *start, int64_t *dur,
                                    int64_t *tid, int64_t *call_ids,
                                    int64_t *parent_ids);

/* sps__h5r_events_ids without the call and parent ids (the timeline
 * reader's form). */
SPS__HIDDEN int sps__h5r_events(const sps__h5r_t *r, uint64_t first, size_t n,
                                int64_t *start, int64_t *dur, int64_t *tid);

/* Frees r and everything it owns.  NULL is a no-op. */
SPS__HIDDEN void sps__h5r_free(sps__h5r_t *r);

/* The call tree of r's events: one node per distinct path of regions, over
 * all ranks and threads.  *nodes is malloc'd (caller frees it); its names
 * point into r and live as long as r.  Aggregate files give no nodes.
 * Returns 0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__h5r_tree(const sps__h5r_t *r, sps__tree_row_t **nodes,
                              size_t *n);

/* Per-region statistics over all ranks and threads, one entry per region
 * that has a row in the index, in region id order.  *flat is malloc'd
 * (caller frees it); names point into r.  Returns 0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__h5r_flat(const sps__h5r_t *r, sps__tflat_t **flat,
                              size_t *n);

/* The session's wall time: finalize_time_ns - start_time_ns from /metadata
 * when both are there and in order, else the span of the events (first
 * start to last end), else the largest aggregate total; 0 when unknown. */
SPS__HIDDEN int64_t sps__h5r_session_ns(const sps__h5r_t *r);

/* A file's /counters (spanscope's counter samples; see h5.c). */
typedef struct sps__h5r_counters {
    size_t nnames;
    char **names;          /* valid UTF-8 */
    size_t n;              /* samples */
    int64_t *series;       /* index into names, checked */
    int64_t *ranks;        /* 0..INT32_MAX, checked */
    int64_t *times;        /* CLOCK_MONOTONIC ns */
    double *values;
    uint64_t dropped;      /* samples the recording lost to its cap */
} sps__h5r_counters_t;

/* Reads /counters of the file at path into *out (a file without the group
 * gives 0 samples).  Validated like the rest of the file.  Returns 0,
 * SPS_EIO, SPS_EFORMAT or SPS_ENOMEM (message: sps__err_msg()); free
 * with sps__h5r_counters_free. */
SPS__HIDDEN int sps__h5r_counters(const char *path, sps__h5r_counters_t *out);
SPS__HIDDEN void sps__h5r_counters_free(sps__h5r_counters_t *x);

/* A file's /values (values per span summed per region and rank; see
 * h5_period.c): nnames value names (the memory ones first in the order the
 * recorder writes them, then the others by name), n rows. */
typedef struct sps__h5r_values {
    size_t nnames;
    char **names;          /* valid UTF-8 */
    size_t n;
    char **regions;        /* [n], valid UTF-8 */
    int64_t *ranks, *calls; /* [n], checked >= 0 */
    int64_t *own, *self;   /* [n * nnames] */
} sps__h5r_values_t;
/* Reads /values of the file at path into *out (a file without the group
 * gives 0 rows).  Returns 0, SPS_EIO, SPS_EFORMAT or SPS_ENOMEM (message:
 * sps__err_msg()); free with sps__h5r_values_free. */
SPS__HIDDEN int sps__h5r_values(const char *path, sps__h5r_values_t *out);
SPS__HIDDEN void sps__h5r_values_free(sps__h5r_values_t *x);
/* A file's /samples (stack samples; see sps__h5_samples_t in formats.h for
 * the layout and docs/sampling.md).  Every index is checked: regions
 * index names (or are -1), stacks index the stack table, whose offsets
 * rise within stack_frames, whose entries index the frames; weights >= 1.
 * names are the file's /region_table/names. */
typedef struct sps__h5r_samples {
    size_t n;
    int64_t *times_ns, *threads, *tids, *ranks, *regions, *call_ids, *stacks, *weights;
    size_t nstacks;
    int64_t *stack_offsets, *stack_frames; /* [nstacks + 1], [stack_offsets[nstacks]] */
    size_t nframes;
    char **functions, **files, **modules;  /* valid UTF-8 */
    int64_t *lines, *kinds, *addresses;
    size_t nnames;
    char **names;
    int64_t hz, lost;
} sps__h5r_samples_t;
/* Reads /samples of the file at path into *out (a file without the group
 * gives 0 samples and 0 frames).  Returns 0, SPS_EIO, SPS_EFORMAT or
 * SPS_ENOMEM (message: sps__err_msg()); free with sps__h5r_samples_free. */
SPS__HIDDEN int sps__h5r_samples(const char *path, sps__h5r_samples_t *out);
SPS__HIDDEN void sps__h5r_samples_free(sps__h5r_samples_t *x);

/* A file's /device (CUDA activity: kernels, copies, sets and the runtime
 * and driver API calls that launched them; docs/device.md, "The file").
 * One row per activity, every column [n].  Checked once here, so that no
 * writer checks again: kinds in 1..5 (SPS__DEV_*), names_idx indexes
 * names, a device row's device in 0..SPS__DEV_MAX_DEVICE and its stream in
 * 0..UINT32_MAX, start <= end, ranks 0..INT32_MAX, threads -1..INT32_MAX,
 * regions -1..nregion_names - 1 (the file's /region_table/names), call_ids
 * >= -1, correlations, bytes, grid and block >= 0.  API rows (kinds 4, 5)
 * carry devices/contexts/streams as written (-1) and unchecked; columns
 * the file lacks among bytes, contexts, grid_*, block_*, copy_kinds,
 * src_kinds and dst_kinds read as 0; a file without cbids leaves cbids
 * NULL.  present is 1 when the file has the group (n may still be 0). */
#define SPS__DEV_KERNEL 1
#define SPS__DEV_MEMCPY 2
#define SPS__DEV_MEMSET 3
#define SPS__DEV_RUNTIME 4
#define SPS__DEV_DRIVER 5
#define SPS__DEV_MAX_DEVICE 4095 /* device indexes above are refused */
typedef struct sps__h5r_device {
    int present;
    size_t n;
    int64_t *kinds, *names_idx, *devices, *contexts, *streams, *correlations, *starts_ns,
        *ends_ns, *bytes, *ranks, *threads, *tids, *regions, *call_ids, *grid_x, *grid_y,
        *grid_z, *block_x, *block_y, *block_z, *copy_kinds, *src_kinds, *dst_kinds;
    int64_t *cbids;              /* API rows' CUPTI callback ids (0 for device
                                    rows), 0..UINT32_MAX; NULL: the file has
                                    no cbids column (read as 0) */
    size_t nnames;
    char **names;                /* activity names, valid UTF-8 */
    size_t nregion_names;
    char **region_names;         /* /region_table/names */
    char collector[32], clock[32]; /* the group's attributes, "" absent */
    char description[256];
    int64_t dropped, cupti_version;
} sps__h5r_device_t;
/* Reads /device of the file at path into *out (a file without the group
 * gives present 0, n 0).  Returns 0, SPS_EIO, SPS_EFORMAT (one line naming
 * the column and row) or SPS_ENOMEM; free with sps__h5r_device_free (also
 * after a failure). */
SPS__HIDDEN int sps__h5r_device(const char *path, sps__h5r_device_t *out);
SPS__HIDDEN void sps__h5r_device_free(sps__h5r_device_t *x);

/* Prints the counter summary of the file at path (report.c; nothing when
 * it has no counters).  0 or the reader's code. */
SPS__HIDDEN int sps__counters_print(FILE *fp, const char *path);
/* Prints the values per region of the file at path (report.c: memory and
 * perf_event counters, own and self; nothing when it has none).  0 or the
 * reader's code. */
SPS__HIDDEN int sps__values_print(FILE *fp, const char *path);

/* ------------------------------------------------------------------------ */
/* HDF5 plumbing (h5_read.c), shared with the writer (h5.c), merge and       */
/* report                                                                    */
/* ------------------------------------------------------------------------ */

/* HDF5's automatic error printing, saved while a call of ours runs: HDF5
 * would print a stack of its own for every failure that we report in one
 * line.  func holds HDF5's H5E_auto2_t (as void (*)(void), which every
 * function pointer converts to and back, so hdf5.h stays out of here). */
typedef struct sps__h5_quiet {
    void (*func)(void);
    void *data;
    int saved;
} sps__h5_quiet_t;

/* Switches HDF5's error printing off for this thread, keeping the
 * handler in *q for sps__h5_quiet_end. */
SPS__HIDDEN void sps__h5_quiet_begin(sps__h5_quiet_t *q);
/* Restores the handler sps__h5_quiet_begin kept in *q and returns rc (for
 * "return sps__h5_quiet_end(&q, rc)"). */
SPS__HIDDEN int sps__h5_quiet_end(sps__h5_quiet_t *q, int rc);

/* The HDF5 compound type of rank_region_index/summary_statistics (h5.c):
 * file != 0 the packed little-endian file type, else a memory type with
 * the fields at base + their offsets in sps__summary_t within elements of
 * size bytes.  An hid_t (int64_t here, so hdf5.h stays out); the caller
 * closes it (sps__h5_close); -1 on failure. */
SPS__HIDDEN int64_t sps__h5_summary_type(int file, size_t base, size_t size);


/* ------------------------------------------------------------------------ */
/* the isolated check (h5_guard.c)                                          */
/* ------------------------------------------------------------------------ */

/* Checks, in a forked child under a time limit and a memory cap, that
 * libhdf5 parses the file at path without crashing: it visits every
 * object, reads every attribute and every variable-length or small
 * dataset, walks every chunk index.  Every reader calls it before it
 * opens a file with libhdf5 in the caller's process (libhdf5 1.10 crashes
 * or loops on some corrupt files).  The verdict is kept per file
 * (device, inode, size, times), so a file is checked once until it
 * changes.  $SPANSCOPE_H5_ISOLATE=0 turns the check off (the command-line
 * tool's commands already run in a child); $SPANSCOPE_READ_TIMEOUT sets
 * the limit (default 20 s + 1 s per 4 MiB).
 *
 * Returns 0 (the file may be read; also for a missing or non-regular
 * path, which the reader reports), SPS_EFORMAT (the check crashed, hung,
 * ran out of memory or found a chunk outside the file; message set) or
 * SPS_EIO (fork failed).  Thread-safe. */
SPS__HIDDEN int sps__h5_guard(const char *path);

/* What a reader opens after the check: path, a name this caller alone
 * holds for the clean copy that the check's child wrote (libhdf5 then
 * parses only metadata libhdf5 wrote: h5_copy.c; linked 1, removed by
 * sps__h5_guard_close) -- or the file itself (linked 0) where the check is
 * off or made no copy. */
typedef struct sps__h5_open {
    char path[PATH_MAX];
    int linked;
} sps__h5_open_t;

/* sps__h5_guard, and on success the path to open in o; the caller calls
 * sps__h5_guard_close(o) once H5Fopen has the file (or failed), also after
 * an error.  Thread-safe. */
SPS__HIDDEN int sps__h5_guard_open(const char *path, sps__h5_open_t *o);
SPS__HIDDEN void sps__h5_guard_close(sps__h5_open_t *o);

/* The child's clean copy of src into dst (a new file): every object of
 * the root group and its attributes, rewritten by libhdf5 (H5Ocopy).
 * Returns 0, 9 when libhdf5 cannot copy it, or SPS__H5_COPY_NONE when it
 * cannot open it at all (a truncated file: the reader's H5Fopen fails as
 * cleanly, with its own message). */
#define SPS__H5_COPY_NONE 10
SPS__HIDDEN int sps__h5_copy(const char *src, const char *dst);
/* Copies the groups "rank<N>" of the file at src (scope-profiler's
 * per-rank integration groups: likwid, perf_events, line_profile) into
 * the existing file at dst, each as "rank<rank>" when rank >= 0 (a
 * single-rank input's groups under the rank a merge gave it), else under
 * its own name; a group dst already has is left.  Returns 0, SPS_EIO or
 * SPS_EHDF5. */
SPS__HIDDEN int sps__h5_copy_rank_groups(const char *src, const char *dst, int64_t rank);
/* What an .h5 -> .h5 convert carries beside the spans it rewrote
 * (h5_copy.c; docs/device-timeline.md): the bits of what the input at in
 * has, in *what (NULL: not asked). */
#define SPS__CARRY_DEVICE 1u  /* /device */
#define SPS__CARRY_SAMPLES 2u /* /samples */
#define SPS__CARRY_GPU 4u     /* /events/gpu_durations (and the summary's gpu_*) */
/* Adds to the closed file out -- the rewrite of the spans of the .h5 at in
 * (sps__h5_from_timeline) -- in's /device, /samples and
 * /events/gpu_durations, matched to out's spans: every span of in is
 * paired with the span of out of the same rank, thread, region name,
 * start and duration (ties in call-id order), and the rows that name a
 * span (call id, region) are moved to the pair's; each event's gpu
 * duration goes to its pair, and out's gpu_count / gpu_total per row are
 * made from them.  Returns 0 (carried, or nothing to carry), SPS_EMODE
 * when in's spans and out's cannot be paired one for one (the message
 * says why; out is left as it was), or SPS_EFORMAT / SPS_EIO / SPS_EHDF5 /
 * SPS_ENOMEM (message set). */
SPS__HIDDEN int sps__h5_carry_device(const char *in, const char *out, unsigned *what);
/* The check's walk of the file at path, run here (the command-line tool's
 * hidden `spanscope __h5check PATH`, which sps__h5_guard execs in its child
 * so that the walk starts from a fresh heap).  Returns the child's status:
 * 0 (got through), 3..8 (refused: see h5_guard.c); may crash or hang. */
SPS__HIDDEN int sps__h5_walk(const char *path);
/* Non-zero when the check runs in a fresh process (a tool to exec was
 * found), 0 when it walks in the fork (no tool, SPANSCOPE_H5CHECK=0, a
 * ThreadSanitizer build). */
SPS__HIDDEN int sps__h5_guard_fresh(void);
/* on != 0: the calling thread's reads skip the check (and its copy) until
 * it calls this again with 0: for the files a collective finalize wrote
 * and handed over moments ago, which are its own output, not a stranger's
 * (the merge of the ranks' parts: merge.c with opts->trusted).  The check
 * costs a fork, an exec and a copy of the file per file: 6 ms a part, a
 * third of rank 0's merge at 64 ranks (docs/mpi.md). */
SPS__HIDDEN void sps__h5_guard_trust(int on);
/* Non-zero while the calling thread's reads are trusted (above). */
SPS__HIDDEN int sps__h5_guard_trusted(void);
/* H5Fopen(path, flags) with the close degree every reader here uses
 * (H5F_CLOSE_STRONG): libhdf5 refuses a second open of a file that is
 * already open with another degree, which happens when a merge's reader
 * holds an input open (a trusted read opens the file itself, not the
 * check's copy) and another reader of the same input opens it by name.
 * Returns the file id or a negative value. */
SPS__HIDDEN int64_t sps__h5_fopen(const char *path, unsigned flags);
/* The transfer list for an H5Dread that converts about bytes bytes of
 * data (elements x the larger of the file's and the memory's type size):
 * one with a small type conversion buffer for a small read.  With
 * H5P_DEFAULT libhdf5 1.10 allocates and zeroes its 1 MiB buffer for
 * every read that converts (an int32 column read as int64, any string):
 * 17.8 against 2.8 us for a 10-element column, a fifth of rank 0's
 * index reads in a 64-rank merge.  Process-wide, never closed; the
 * result is a hid_t. */
SPS__HIDDEN int64_t sps__h5_dxpl(size_t bytes);
/* The number of files checked in a child so far and of those refused. */
SPS__HIDDEN void sps__h5_guard_stats(uint64_t *checks, uint64_t *refused);

#endif /* SPS_H5_READ_H */
