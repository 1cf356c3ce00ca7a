/* env.c -- configuration without code: the one table of every setting a
 * program takes from its environment (SPANSCOPE_* variables, with
 * scope-profiler's SCOPE_PROFILER_* names as aliases) or from the TOML
 * file SPANSCOPE_CONFIG names (its [profiling] table, in scope-profiler's
 * key names, as the Python face's options.py reads it), a strict reader of
 * that file, and the resolution of both:
 *
 *     defaults < the file < the variables < explicit arguments
 *
 * The file's values are never written into the environment: the
 * resolution is a table lookup (sps__settings_resolve) that the C
 * auto-setup (sps_setup_from_env, sps_env_resolve in setup.c) and the
 * tool's `config` subcommand read.  Settings that only modules read
 * through getenv (the signals, fork, crash-safety, tuning knobs) have no
 * key in the file, so what those modules see is what this table reports.
 *
 * An unknown key in the file is an error naming it (and the closest known
 * key); an unknown SPANSCOPE_* variable is only a warning (setup.c): a
 * stray variable left in a shell must not stop a program from running.
 * docs/configuration.md is printed from this table (`spanscope config
 * --markdown`); tests/python/test_config_same.py checks that the Python
 * face resolves the same files and environments to the same values. */
#include "api/env.h"

#include "spanscope.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

/* ======================================================================== */
/* The table                                                                 */
/* ======================================================================== */

#define C_ SPS__SF_C
#define PY_ SPS__SF_PY
#define BOTH_ (SPS__SF_C | SPS__SF_PY)
#define TUNE_ SPS__SF_TUNING
#define TOOL_ SPS__SF_TOOL
#define COMMA_ SPS__SF_LIST_COMMA

static const sps__setting_t g_table[] = {
    /* -- the session: variables and [profiling] keys ------------------- */
    {"SPANSCOPE_CONFIG", "SCOPE_PROFILER_CONFIG", NULL, NULL, SPS__ST_STR, "none", BOTH_,
     "a TOML file whose [profiling] table sets the keys of this table"},
    {"SPANSCOPE_OUTPUT", "SCOPE_PROFILER_OUTPUT", "file_path", NULL, SPS__ST_STR,
     "Python: profiling_data.h5; C: no file", BOTH_,
     "the profile finalize writes (.h5; Python also .json, .html); \"\" or none: no file"},
    {NULL, NULL, "deactivate_file_output", NULL, SPS__ST_BOOL, "false", BOTH_,
     "true: write no file (a set SPANSCOPE_OUTPUT wins)"},
    {"SPANSCOPE_LABEL", "SCOPE_PROFILER_LABEL", "label", NULL, SPS__ST_STR, "none", BOTH_,
     "a label stored in the file's /metadata (a run name)"},
    {"SPANSCOPE_DEACTIVATE_PROFILING", "SCOPE_PROFILER_DEACTIVATE_PROFILING",
     "deactivate_profiling", NULL, SPS__ST_BOOL, "false", BOTH_,
     "true: no session (regions cost one branch, nothing is written)"},
    {"SPANSCOPE_AUTO_FINALIZE", "SCOPE_PROFILER_AUTO_FINALIZE", NULL, NULL, SPS__ST_BOOL,
     "false", BOTH_, "true: finalize once at exit"},
    {"SPANSCOPE_AGGREGATION_MODE", "SCOPE_PROFILER_AGGREGATION_MODE", "aggregation_mode",
     NULL, SPS__ST_BOOL, "false", BOTH_,
     "per-region statistics only, no per-call events"},
    {"SPANSCOPE_MEMORY_LIMIT", "SCOPE_PROFILER_MEMORY_LIMIT", "memory_limit", NULL,
     SPS__ST_UINT, "0 (32 MiB)", BOTH_,
     "bytes of event buffers in memory before the overflow policy applies; "
     "at 0, 128 MiB for a Python session with recursive_profile outside MPI "
     "(docs/python.md)"},
    {NULL, NULL, "chunk_size", NULL, SPS__ST_UINT, "0 (64 KiB)", BOTH_,
     "bytes per buffer chunk, a power of two from 4 KiB to 16 MiB"},
    {NULL, NULL, "overflow", NULL, SPS__ST_STR, "spill", BOTH_,
     "at the memory limit: spill (to a file), drop (count), grow"},
    {NULL, NULL, "spill_dir", NULL, SPS__ST_STR, "$TMPDIR, else /tmp", BOTH_,
     "the directory of the spill file"},
    {NULL, NULL, "hdf5_compression", "hdf5.compression", SPS__ST_STR, "auto", BOTH_,
     "auto (gzip from 16384 events), gzip (always), none"},
    {NULL, NULL, "perf_events", NULL, SPS__ST_LIST, "none", BOTH_,
     "perf_event counters read at every begin and end (perf stat's names)"},
    {"SPANSCOPE_SAMPLE_HZ", "SCOPE_PROFILER_SAMPLE_HZ", NULL, NULL, SPS__ST_UINT, "0 (off)",
     C_, "stack samples per second of each thread's CPU time, 0 to 10000"},
    {"SPANSCOPE_RECURSIVE", "SCOPE_PROFILER_RECURSIVE", "recursive_profile", NULL,
     SPS__ST_BOOL, "false", PY_,
     "Python: every function called becomes a region (profile_script)"},
    {"SPANSCOPE_ENABLE_TAGS", "SCOPE_PROFILER_ENABLE_TAGS", "enable_tags", NULL,
     SPS__ST_LIST, "none", PY_ | COMMA_,
     "Python: the opt-in region tags that record (comma-separated)"},
    /* -- the Python face's own [profiling] keys (scope-profiler's) ------ */
    {NULL, NULL, "use_likwid", NULL, SPS__ST_BOOL, "false", PY_,
     "Python: LIKWID markers around each region call"},
    {NULL, NULL, "use_line_profiler", NULL, SPS__ST_BOOL, "false", PY_,
     "Python: line_profiler's per-line timings of each region's functions"},
    {NULL, NULL, "use_memray", "memray.enabled", SPS__ST_BOOL, "false", PY_,
     "Python: memray's allocation capture, one per rank"},
    {NULL, NULL, "memory_profile_path", "memray.path", SPS__ST_STR, "beside the profile",
     PY_, "Python: memray's capture file"},
    {NULL, NULL, "memray_native_traces", "memray.native_traces", SPS__ST_BOOL, "false", PY_,
     "Python: memray records native stacks"},
    {NULL, NULL, "memray_trace_python_allocators", "memray.trace_python_allocators",
     SPS__ST_BOOL, "false", PY_, "Python: memray records pymalloc's allocations"},
    {NULL, NULL, "memray_follow_fork", "memray.follow_fork", SPS__ST_BOOL, "false", PY_,
     "Python: memray follows forked children"},
    {NULL, NULL, "use_nvtx", "gpu.nvtx", SPS__ST_BOOL, "false", PY_,
     "Python: NVTX ranges for every region (docs/nvtx-itt.md)"},
    {NULL, NULL, "use_gpu_timing", "gpu.timing", SPS__ST_BOOL, "false", PY_,
     "Python: a CUDA event pair per region call (docs/device.md, gpu_timing)"},
    {NULL, NULL, "gpu_timing_backend", "gpu.backend", SPS__ST_ANY, "auto", PY_,
     "Python: auto, cuda, torch, pytorch or cupy: spanscope's one C backend"},
    {NULL, NULL, "gpu_sync_on_exit", "gpu.sync_on_exit", SPS__ST_BOOL, "false", PY_,
     "Python: each region call's end waits for its end event (needs use_gpu_timing)"},
    {NULL, NULL, "profile_mpi_calls", NULL, SPS__ST_BOOL, "false", PY_,
     "Python: mpi4py's calls become regions"},
    {NULL, NULL, "track_threads", NULL, SPS__ST_BOOL, "false", PY_,
     "Python: scope-profiler's per-thread lanes"},
    {NULL, NULL, "track_async", NULL, SPS__ST_BOOL, "false", PY_,
     "Python: asyncio tasks as lanes (implies track_threads)"},
    {NULL, NULL, "capture_region_source", NULL, SPS__ST_BOOL, "false", PY_,
     "Python: store each region's source file and line"},
    {NULL, NULL, "metadata_detail", NULL, SPS__ST_STR, "minimal", PY_,
     "Python: minimal or full (the environment, modules) in /metadata"},
    {NULL, NULL, "buffer_limit", NULL, SPS__ST_UINT, "1024", PY_,
     "Python: scope-profiler's buffer size (accepted; the C core's buffers are memory_limit)"},
    {NULL, NULL, "output_mode", NULL, SPS__ST_STR, "auto", PY_,
     "Python: auto, direct or parallel (MPI output)"},
    {NULL, NULL, "hdf5_compression_level", "hdf5.compression_level", SPS__ST_INT, "none", PY_,
     "Python: not available yet (a value is refused)"},
    {NULL, NULL, "hdf5_chunk_size", "hdf5.chunk_size", SPS__ST_UINT, "none", PY_,
     "Python: not available yet (a value is refused)"},
    /* -- variables only: what a run does around the session ------------- */
    {"SPANSCOPE_SIGNALS", NULL, NULL, NULL, SPS__ST_STR, "TERM,INT,HUP,USR1", C_,
     "signals that write the profile before the process dies (names, comma-separated; none)"},
    {"SPANSCOPE_CRASH_SAFE", NULL, NULL, NULL, SPS__ST_BOOL, "1", C_,
     "0: a session with a file is not kept recoverable after a crash (spanscope recover); "
     "1: a fork child's inherited session is too"},
    {"SPANSCOPE_FORK", NULL, NULL, NULL, SPS__ST_STR, "own", C_,
     "a forked child's recording: own (DIR/STEM.pid<PID>.EXT) or off"},
    {"SPANSCOPE_FOLLOW", NULL, NULL, NULL, SPS__ST_STR, "none", BOTH_ | TOOL_,
     "the parts directory of a process tree (set by spanscope run --follow)"},
    {"SPANSCOPE_RUN", NULL, NULL, NULL, SPS__ST_BOOL, "0", C_ | TOOL_,
     "1: the preloaded library sets the session up (set by spanscope run -- CMD)"},
    {"SPANSCOPE_FOLLOW_SETTINGS", NULL, NULL, NULL, SPS__ST_STR, "none", PY_ | TOOL_,
     "what a followed tree's Python children record (JSON; set by spanscope run --follow)"},
    {"SPANSCOPE_RUN_PID", NULL, NULL, NULL, SPS__ST_UINT, "none", C_ | TOOL_,
     "the process spanscope run profiles (its descendants do not set up)"},
    {"SPANSCOPE_RUN_QUIET", NULL, NULL, NULL, SPS__ST_BOOL, "0", C_ | TOOL_,
     "1: spanscope run -q (no \"wrote\" line)"},
    {"SPANSCOPE_RUN_MPI", NULL, NULL, NULL, SPS__ST_BOOL, "0", C_ | TOOL_,
     "1: spanscope run under an MPI launcher"},
    {"SPANSCOPE_RUN_FOLLOW", NULL, NULL, NULL, SPS__ST_BOOL, "0", C_ | TOOL_,
     "1: every process of the tree records a part (set by spanscope run --follow -- CMD)"},
    {"SPANSCOPE_RUN_LIBDIR", NULL, NULL, NULL, SPS__ST_STR, "beside the tool", TOOL_,
     "where spanscope run looks first for the preloaded library"},
    {"SPANSCOPE_RUN_FORWARDED", NULL, NULL, NULL, SPS__ST_BOOL, "0", TOOL_ | PY_,
     "1: spanscope run handed a Python script to the Python package"},
    {"SPANSCOPE_SAMPLER", NULL, NULL, NULL, SPS__ST_STR, "perf", C_,
     "the stack sampler's engine: perf (perf_event task-clock) or timer"},
    {"SPANSCOPE_MPI", NULL, NULL, NULL, SPS__ST_STR, "on", BOTH_,
     "0: no MPI integration even under mpirun"},
    {"SPANSCOPE_MALLOC", NULL, NULL, NULL, SPS__ST_BOOL, "1", C_,
     "0: a preloaded libspanscope_malloc.so counts nothing"},
    {"SPANSCOPE_INSTRUMENT_INCLUDE", NULL, NULL, NULL, SPS__ST_STR, "all", C_,
     "-finstrument-functions: functions to record (fnmatch globs, @OBJECT)"},
    {"SPANSCOPE_INSTRUMENT_EXCLUDE", NULL, NULL, NULL, SPS__ST_STR, "none", C_,
     "-finstrument-functions: functions to leave out"},
    {"SPANSCOPE_INSTRUMENT_SETUP", NULL, NULL, NULL, SPS__ST_BOOL, "1", C_,
     "0: the instrumented program sets its session up itself"},
    {"SPANSCOPE_INSTRUMENT_VERBOSE", NULL, NULL, NULL, SPS__ST_BOOL, "0", C_,
     "1: the instrumented program prints the table at exit"},
    {"SPANSCOPE_PROGRESS", NULL, NULL, NULL, SPS__ST_STR, "on a terminal", C_,
     "the progress line of long writes: 0 never, 1 always"},
    {"SPANSCOPE_READ_TIMEOUT", NULL, NULL, NULL, SPS__ST_UINT, "20 s + 1 s per 4 MiB", C_,
     "seconds a reader may spend on one HDF5 file (0: no limit)"},
    {"SPANSCOPE_DEVICE", NULL, NULL, NULL, SPS__ST_STR, "none", C_,
     "device collectors the C auto-setup starts: cupti, events or cupti,events (docs/device.md)"},
    {"SPANSCOPE_CUPTI_LIB", NULL, NULL, NULL, SPS__ST_STR, "the usual names and CUDA paths", C_,
     "the libcupti the CUDA activity collector loads (docs/device.md)"},
    {"SPANSCOPE_CUDART_LIB", NULL, NULL, NULL, SPS__ST_STR, "the usual names and CUDA paths",
     C_, "the libcudart gpu_timing's CUDA event pairs load (docs/device.md)"},
    {"SPANSCOPE_GPU_SYNC_ON_EXIT", NULL, NULL, NULL, SPS__ST_BOOL, "0", C_,
     "1: gpu_timing's pairs wait for the end event at each region's end (scope-profiler's "
     "gpu_sync_on_exit; read when the collector starts)"},
    {"SPANSCOPE_CUDA_LIB", NULL, NULL, NULL, SPS__ST_STR, "libcuda.so.1", C_,
     "the NVIDIA driver library the collector checks for first (docs/device.md)"},
    {"SPANSCOPE_LIBRARY", NULL, NULL, NULL, SPS__ST_STR, "the package's", TOOL_,
     "the libspanscope the scope-profiler C shim and Python's native readers load"},
    {"SPANSCOPE_PYTHON", NULL, NULL, NULL, SPS__ST_STR, "python3", TOOL_,
     "the Python the tool runs for its Python subcommands"},
    {"SPANSCOPE_CLI", NULL, NULL, NULL, SPS__ST_STR, "the package's", TOOL_,
     "the C tool the Python package runs"},
    /* -- tuning: for measurements and tests ----------------------------- */
    {"SPANSCOPE_BG_ANALYSIS", NULL, NULL, NULL, SPS__ST_STR, "trial", C_ | TUNE_,
     "the spill writer analyzes idle: 0 never, 1 always, quiet"},
    {"SPANSCOPE_ANALYSIS_THREADS", NULL, NULL, NULL, SPS__ST_STR, "2", C_ | TUNE_,
     "1: a long analysis runs on one core"},
    {"SPANSCOPE_CLOCK", NULL, NULL, NULL, SPS__ST_STR, "tsc where invariant", C_ | TUNE_,
     "the clock: tsc or monotonic"},
    {"SPANSCOPE_SPILL_THREAD", NULL, NULL, NULL, SPS__ST_BOOL, "1", C_ | TUNE_,
     "0: the recording thread writes the spill file itself"},
    {"SPANSCOPE_WRITE_THREADS", NULL, NULL, NULL, SPS__ST_UINT, "CPUs - 1", C_ | TUNE_,
     "threads compressing the file's columns (0: the writing thread)"},
    {"SPANSCOPE_PERF_NO_RDPMC", NULL, NULL, NULL, SPS__ST_STR, "unset", C_ | TUNE_,
     "set: counters are read with read(), not rdpmc"},
    {"SPANSCOPE_MPI_CLOCK_ROUNDS", NULL, NULL, NULL, SPS__ST_UINT, "the library's", C_ | TUNE_,
     "round trips of the MPI clock alignment"},
    {"SPANSCOPE_MPI_PART", NULL, NULL, NULL, SPS__ST_STR, "plain (events merge: up to 64 ranks)", C_ | TUNE_,
     "ranks' parts at an MPI finalize: plain or compressed"},
    {"SPANSCOPE_MPI_MERGE", NULL, NULL, NULL, SPS__ST_STR, "auto", C_ | TUNE_,
     "an MPI finalize's merge: auto (copy from one chunk of events), copy or events"},
    {"SPANSCOPE_MPI_HANDOVER", NULL, NULL, NULL, SPS__ST_STR, "auto", C_ | TUNE_,
     "how rank 0 takes the parts: auto (in place where it sees them) or send"},
    {"SPANSCOPE_MPI_INDEX", NULL, NULL, NULL, SPS__ST_STR, "message", C_ | TUNE_,
     "how rank 0 reads a laid-out part's index: message (sent by its rank) or file"},
    {"SPANSCOPE_SORT_RUN", NULL, NULL, NULL, SPS__ST_UINT, "1048576", C_ | TUNE_,
     "records per sorted run of the span sorter"},
    {"SPANSCOPE_H5_ISOLATE", NULL, NULL, NULL, SPS__ST_BOOL, "1", C_ | TUNE_,
     "0: HDF5 files are read without the check in a child process"},
    {"SPANSCOPE_H5CHECK", NULL, NULL, NULL, SPS__ST_STR, "the spanscope tool", C_ | TUNE_,
     "the program that checks an HDF5 file in a child (0: none)"},
    {"SPANSCOPE_H5_COPY", NULL, NULL, NULL, SPS__ST_BOOL, "1", C_ | TUNE_,
     "0: the checked HDF5 file is not copied first"},
    {"SPANSCOPE_TRACE_PROCESSOR", NULL, NULL, NULL, SPS__ST_STR, "on PATH", PY_ | TUNE_,
     "the tests' trace_processor_shell (tests/python/test_samples_formats.py)"},
};

#define NSET (sizeof g_table / sizeof g_table[0])

/* The option groups of the file: [profiling.NAME] sub-tables. */
static const char *const g_groups[] = {"memray", "gpu", "hdf5"};

const sps__setting_t *sps__settings_table(size_t *n) {
    if (n) *n = NSET;
    return g_table;
}

int sps__setting_by_env(const char *name) {
    if (!name) return -1;
    for (size_t i = 0; i < NSET; i++)
        if ((g_table[i].env && !strcmp(g_table[i].env, name)) ||
            (g_table[i].alias && !strcmp(g_table[i].alias, name)))
            return (int)i;
    return -1;
}

int sps__setting_by_toml(const char *key) {
    if (!key) return -1;
    for (size_t i = 0; i < NSET; i++)
        if (g_table[i].toml && !strcmp(g_table[i].toml, key)) return (int)i;
    return -1;
}

/* ======================================================================== */
/* The TOML reader                                                           */
/* ======================================================================== */

#define TV_EXPLICIT 1u /* a table a [header] defined */
#define TV_INLINE 2u   /* an inline table: closed once written */
#define TV_DOTTED 4u   /* a table a dotted key made */
#define TV_HEADED 8u   /* a table made on the way to a [header] */
#define MAX_DEPTH 32   /* arrays and inline tables within each other */
#define MAX_PARTS 32   /* parts of one dotted key */
#define MAX_FILE (1u << 20)

struct sps__tv {
    sps__tv_kind_t kind;
    int line;
    unsigned flags;
    char *s;
    int64_t i;
    double f;
    int b;
    size_t n, cap;
    sps__tv_t **items;
    char **keys; /* a table's */
};

void sps__tv_free(sps__tv_t *v) {
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) {
        sps__tv_free(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->s);
    free(v);
}

sps__tv_kind_t sps__tv_kind(const sps__tv_t *v) { return v->kind; }
int sps__tv_line(const sps__tv_t *v) { return v->line; }
const char *sps__tv_str(const sps__tv_t *v) { return v->kind == SPS__TV_STR ? v->s : NULL; }
int64_t sps__tv_int(const sps__tv_t *v) { return v->i; }
double sps__tv_float(const sps__tv_t *v) { return v->f; }
int sps__tv_bool(const sps__tv_t *v) { return v->b; }
size_t sps__tv_len(const sps__tv_t *v) {
    return v->kind == SPS__TV_ARRAY || v->kind == SPS__TV_TABLE ? v->n : 0;
}
const sps__tv_t *sps__tv_at(const sps__tv_t *v, size_t i) {
    return i < sps__tv_len(v) ? v->items[i] : NULL;
}
const char *sps__tv_key(const sps__tv_t *v, size_t i) {
    return v->kind == SPS__TV_TABLE && i < v->n ? v->keys[i] : NULL;
}
const sps__tv_t *sps__tv_get(const sps__tv_t *v, const char *key) {
    if (!v || v->kind != SPS__TV_TABLE) return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp(v->keys[i], key)) return v->items[i];
    return NULL;
}

/* The parser's state: the text, where it is, the line, the file's name. */
typedef struct {
    const char *p, *end;
    int line;
    const char *name;
    int depth;
} tp_t;

/* SPS_EINVAL with "NAME:LINE: message". */
static int tp_fail(const tp_t *t, const char *fmt, ...) SPS__PRINTF(2, 3);
static int tp_fail(const tp_t *t, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sps__err_fail(SPS_EINVAL, "%s:%d: %s", t->name, t->line, msg);
}

static sps__tv_t *tv_new(sps__tv_kind_t kind, int line) {
    sps__tv_t *v = calloc(1, sizeof *v);
    if (v) {
        v->kind = kind;
        v->line = line;
    }
    return v;
}

/* Appends item (and, for a table, a copy of key) to v; SPS_ENOMEM (item
 * freed) when out of memory. */
static int tv_push(sps__tv_t *v, const char *key, sps__tv_t *item) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        sps__tv_t **items = realloc(v->items, cap * sizeof *items);
        if (!items) goto oom;
        v->items = items;
        if (v->kind == SPS__TV_TABLE) {
            char **keys = realloc(v->keys, cap * sizeof *keys);
            if (!keys) goto oom;
            v->keys = keys;
        }
        v->cap = cap;
    }
    if (v->kind == SPS__TV_TABLE) {
        char *k = strdup(key);
        if (!k) goto oom;
        v->keys[v->n] = k;
    }
    v->items[v->n++] = item;
    return 0;
oom:
    sps__tv_free(item);
    return sps__err_fail(SPS_ENOMEM, "out of memory reading a TOML file");
}

static int at_end(const tp_t *t) { return t->p >= t->end; }
static void skip_ws(tp_t *t) {
    while (!at_end(t) && (*t->p == ' ' || *t->p == '\t')) t->p++;
}
/* At a line's end: "\n", "\r\n", or the end of the text. */
static int at_eol(const tp_t *t) {
    return at_end(t) || *t->p == '\n' ||
           (*t->p == '\r' && t->p + 1 < t->end && t->p[1] == '\n');
}
static void skip_comment(tp_t *t) {
    if (!at_end(t) && *t->p == '#')
        while (!at_eol(t)) t->p++;
}
/* Past the line's end (at_eol must hold). */
static void next_line(tp_t *t) {
    if (at_end(t)) return;
    t->p += *t->p == '\r' ? 2 : 1;
    t->line++;
}
/* Whitespace, newlines and comments (inside arrays). */
static void skip_ws_nl(tp_t *t) {
    for (;;) {
        skip_ws(t);
        skip_comment(t);
        if (at_end(t) || !at_eol(t)) return;
        next_line(t);
    }
}

/* A growing string. */
typedef struct {
    char *s;
    size_t n, cap;
} sbuf_t;

static int sb_put(sbuf_t *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 32;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) return sps__err_fail(SPS_ENOMEM, "out of memory reading a TOML file");
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
    return 0;
}

/* Code point c as UTF-8 into out (4 bytes); its length. */
static size_t utf8_put(uint32_t c, char *out) {
    if (c < 0x80) return out[0] = (char)c, 1;
    if (c < 0x800) {
        out[0] = (char)(0xC0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* A basic ("...") or literal ('...') string at t->p into *out (malloc'd). */
static int parse_string(tp_t *t, char **out) {
    char q = *t->p;
    *out = NULL;
    if (t->end - t->p >= 3 && t->p[1] == q && t->p[2] == q)
        return tp_fail(t, "multi-line strings (%c%c%c) are not supported in a spanscope "
                       "configuration: write the value on one line", q, q, q);
    t->p++;
    sbuf_t b = {0};
    int rc = sb_put(&b, "", 0);
    while (!rc) {
        if (at_eol(t)) {
            rc = tp_fail(t, "a string is not closed (%c missing) at the end of the line", q);
            break;
        }
        const char *s = t->p;
        if (*s == q) {
            t->p++;
            *out = b.s;
            return 0;
        }
        if ((unsigned char)*s < 0x20 && *s != '\t') {
            rc = tp_fail(t, "control character 0x%02x in a string (escape it)",
                         (unsigned)(unsigned char)*s);
            break;
        }
        if (q == '\'' || *s != '\\') {
            size_t k = 1;
            while (s + k < t->end && s[k] != q && s[k] != '\\' && s[k] != '\n' &&
                   s[k] != '\r' && ((unsigned char)s[k] >= 0x20 || s[k] == '\t'))
                k++;
            if (q == '\'' && *s == '\\') k = 1;
            rc = sb_put(&b, s, k);
            t->p += k;
            continue;
        }
        /* an escape */
        if (s + 1 >= t->end || at_eol(&(tp_t){s + 1, t->end, 0, NULL, 0})) {
            rc = tp_fail(t, "a string ends in a lone backslash");
            break;
        }
        char c = s[1], one = 0;
        switch (c) {
        case 'b': one = '\b'; break;
        case 't': one = '\t'; break;
        case 'n': one = '\n'; break;
        case 'f': one = '\f'; break;
        case 'r': one = '\r'; break;
        case '"': one = '"'; break;
        case '\\': one = '\\'; break;
        case 'u':
        case 'U': {
            int digits = c == 'u' ? 4 : 8;
            if (t->end - (s + 2) < digits) {
                rc = tp_fail(t, "\\%c needs %d hexadecimal digits", c, digits);
                break;
            }
            uint32_t cp = 0;
            for (int k = 0; k < digits && !rc; k++) {
                char h = s[2 + k];
                int d = h >= '0' && h <= '9' ? h - '0'
                      : h >= 'a' && h <= 'f' ? h - 'a' + 10
                      : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                if (d < 0) rc = tp_fail(t, "\\%c needs %d hexadecimal digits", c, digits);
                cp = cp * 16 + (uint32_t)d;
            }
            if (rc) break;
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                rc = tp_fail(t, "\\%c%.*s is not a Unicode scalar value", c, digits, s + 2);
            else if (cp == 0)
                rc = tp_fail(t, "a string may not hold a NUL character (\\%c%.*s)", c, digits,
                             s + 2);
            if (rc) break;
            char u[4];
            rc = sb_put(&b, u, utf8_put(cp, u));
            t->p = s + 2 + digits;
            continue;
        }
        default:
            if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
                rc = tp_fail(t, "unknown escape \\%c in a string", c);
            else
                rc = tp_fail(t, "unknown escape (a backslash before byte 0x%02x) in a string",
                             (unsigned)(unsigned char)c);
            break;
        }
        if (rc) break;
        rc = sb_put(&b, &one, 1);
        t->p = s + 2;
    }
    free(b.s);
    return rc;
}

/* One part of a key: bare, "basic" or 'literal'. */
static int parse_simple_key(tp_t *t, char **out) {
    *out = NULL;
    if (at_end(t)) return tp_fail(t, "a key is missing at the end of the file");
    if (*t->p == '"' || *t->p == '\'') {
        int rc = parse_string(t, out);
        return rc;
    }
    const char *s = t->p;
    while (!at_end(t) && ((*t->p >= 'A' && *t->p <= 'Z') || (*t->p >= 'a' && *t->p <= 'z') ||
                          (*t->p >= '0' && *t->p <= '9') || *t->p == '_' || *t->p == '-'))
        t->p++;
    if (t->p == s) {
        if (at_eol(t)) return tp_fail(t, "a key is missing");
        unsigned char c = (unsigned char)*t->p;
        if (c >= 0x21 && c < 0x7f) return tp_fail(t, "a key is expected, not '%c'", c);
        return tp_fail(t, "a key is expected, not byte 0x%02x", c);
    }
    *out = strndup(s, (size_t)(t->p - s));
    return *out ? 0 : sps__err_fail(SPS_ENOMEM, "out of memory reading a TOML file");
}

typedef struct {
    char *part[MAX_PARTS];
    int n;
} key_t_;

static void key_free(key_t_ *k) {
    for (int i = 0; i < k->n; i++) free(k->part[i]);
    k->n = 0;
}

/* A dotted key: simple keys separated by '.' (whitespace around dots). */
static int parse_key(tp_t *t, key_t_ *k) {
    k->n = 0;
    for (;;) {
        skip_ws(t);
        if (k->n == MAX_PARTS) return tp_fail(t, "a key of more than %d parts", MAX_PARTS);
        int rc = parse_simple_key(t, &k->part[k->n]);
        if (rc) return rc;
        k->n++;
        skip_ws(t);
        if (at_end(t) || *t->p != '.') return 0;
        t->p++;
    }
}

/* The key's parts joined by dots, for messages (cut to cap). */
static const char *key_text(const key_t_ *k, int upto, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < upto && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? "." : "", k->part[i]);
    return buf;
}

static int parse_value(tp_t *t, sps__tv_t **out);

/* Is c a character that ends a number or a bare word? */
static int ends_token(char c) {
    return c == ' ' || c == '\t' || c == ',' || c == ']' || c == '}' || c == '#' ||
           c == '\n' || c == '\r';
}

/* Digits with single '_' between digits: s[0..n). */
static int digits_ok(const char *s, size_t n) {
    if (!n || s[0] == '_' || s[n - 1] == '_') return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '_') {
            if (s[i + 1] == '_') return 0;
        } else if (s[i] < '0' || s[i] > '9') {
            return 0;
        }
    }
    return 1;
}

static int isdig(char c) { return c >= '0' && c <= '9'; }

/* At most 60 bytes of the token s[0..n), never cut inside a UTF-8
 * sequence (for messages). */
static int cut(const char *s, size_t n) {
    size_t k = n < 60 ? n : 60;
    if (k < n)
        while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    return (int)k;
}

/* A number (or inf/nan) token s[0..n) into v. */
static int parse_number(tp_t *t, const char *s, size_t n, sps__tv_t *v) {
    const char *d = s;
    size_t m = n;
    int neg = 0;
    if (m && (*d == '+' || *d == '-')) {
        neg = *d == '-';
        d++;
        m--;
    }
    if (m == 3 && (!memcmp(d, "inf", 3) || !memcmp(d, "nan", 3))) {
        v->kind = SPS__TV_FLOAT;
        v->f = d[0] == 'i' ? (neg ? -INFINITY : INFINITY) : NAN;
        return 0;
    }
    if (m > 1 && d[0] == '0' && (d[1] == 'x' || d[1] == 'o' || d[1] == 'b'))
        return tp_fail(t, "'%.*s': hexadecimal, octal and binary integers are not supported "
                       "in a spanscope configuration (write it in decimal)", cut(s, n), s);
    if ((m >= 3 && isdig(d[0]) && isdig(d[1]) && d[2] == ':') ||
        (m >= 5 && s == d && isdig(d[0]) && isdig(d[1]) && isdig(d[2]) && isdig(d[3]) &&
         d[4] == '-'))
        return tp_fail(t, "'%.*s': dates and times are not supported in a spanscope "
                       "configuration", cut(s, n), s);
    /* integer part, fraction, exponent */
    size_t ip = 0;
    while (ip < m && ((d[ip] >= '0' && d[ip] <= '9') || d[ip] == '_')) ip++;
    size_t fr0 = ip, fr1 = ip, ex0 = m, ex1 = m;
    if (ip < m && d[ip] == '.') {
        fr0 = ip + 1;
        fr1 = fr0;
        while (fr1 < m && ((d[fr1] >= '0' && d[fr1] <= '9') || d[fr1] == '_')) fr1++;
    }
    size_t rest = fr1;
    if (rest < m && (d[rest] == 'e' || d[rest] == 'E')) {
        ex0 = rest + 1;
        if (ex0 < m && (d[ex0] == '+' || d[ex0] == '-')) ex0++;
        ex1 = ex0;
        while (ex1 < m && ((d[ex1] >= '0' && d[ex1] <= '9') || d[ex1] == '_')) ex1++;
        rest = ex1;
    }
    int is_float = fr1 != ip || ex0 != m;
    int ok = rest == m && digits_ok(d, ip) && !(ip > 1 && d[0] == '0') &&
             (fr1 == ip || digits_ok(d + fr0, fr1 - fr0)) &&
             (ex0 == m || digits_ok(d + ex0, ex1 - ex0));
    if (!ok) return tp_fail(t, "'%.*s' is not a value (a string needs quotes)", cut(s, n), s);
    char buf[128];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '_') continue;
        if (k + 1 >= sizeof buf)
            return tp_fail(t, "'%.*s...': a number of more than %d digits", cut(s, 40), s,
                           (int)sizeof buf - 2);
        buf[k++] = s[i];
    }
    buf[k] = 0;
    errno = 0;
    if (is_float) {
        char *e;
        double f = strtod(buf, &e);
        if (*e) return tp_fail(t, "'%.*s' is not a number", cut(s, n), s);
        if (errno == ERANGE && isinf(f))
            return tp_fail(t, "'%.*s' is out of range for a float", cut(s, n), s);
        v->kind = SPS__TV_FLOAT;
        v->f = f;
        return 0;
    }
    char *e;
    long long i = strtoll(buf, &e, 10);
    if (*e) return tp_fail(t, "'%.*s' is not a number", cut(s, n), s);
    if (errno == ERANGE)
        return tp_fail(t, "'%.*s' is out of range (a 64-bit signed integer)", cut(s, n), s);
    v->kind = SPS__TV_INT;
    v->i = i;
    return 0;
}

/* [ value, value, ... ] (newlines and comments inside). */
static int parse_array(tp_t *t, sps__tv_t *v) {
    v->kind = SPS__TV_ARRAY;
    t->p++; /* [ */
    for (;;) {
        skip_ws_nl(t);
        if (at_end(t)) return tp_fail(t, "an array is not closed (']' missing)");
        if (*t->p == ']') break;
        sps__tv_t *item = NULL;
        int rc = parse_value(t, &item);
        if (!rc) rc = tv_push(v, NULL, item);
        if (rc) return rc;
        skip_ws_nl(t);
        if (at_end(t)) return tp_fail(t, "an array is not closed (']' missing)");
        if (*t->p == ',') {
            t->p++;
            continue;
        }
        if (*t->p != ']') return tp_fail(t, "',' or ']' expected in an array");
        break;
    }
    t->p++;
    return 0;
}

static int assign(tp_t *t, sps__tv_t *table, key_t_ *k, sps__tv_t *val);

/* { key = value, ... } on one line. */
static int parse_inline_table(tp_t *t, sps__tv_t *v) {
    v->kind = SPS__TV_TABLE;
    t->p++; /* { */
    skip_ws(t);
    if (!at_end(t) && *t->p == '}') {
        t->p++;
        v->flags |= TV_INLINE;
        return 0;
    }
    for (;;) {
        key_t_ k;
        int rc = parse_key(t, &k);
        if (!rc && (at_end(t) || *t->p != '='))
            rc = tp_fail(t, "'=' expected after a key in an inline table");
        sps__tv_t *val = NULL;
        if (!rc) {
            t->p++;
            skip_ws(t);
            rc = parse_value(t, &val);
        }
        if (!rc) rc = assign(t, v, &k, val);
        key_free(&k);
        if (rc) return rc;
        skip_ws(t);
        if (at_eol(t)) return tp_fail(t, "an inline table is not closed ('}' missing on its line)");
        if (*t->p == ',') {
            t->p++;
            continue;
        }
        if (*t->p != '}') return tp_fail(t, "',' or '}' expected in an inline table");
        t->p++;
        v->flags |= TV_INLINE;
        return 0;
    }
}

static int parse_value(tp_t *t, sps__tv_t **out) {
    *out = NULL;
    if (at_end(t) || at_eol(t)) return tp_fail(t, "a value is missing");
    if (t->depth >= MAX_DEPTH)
        return tp_fail(t, "arrays or inline tables nested more than %d deep", MAX_DEPTH);
    sps__tv_t *v = tv_new(SPS__TV_STR, t->line);
    if (!v) return sps__err_fail(SPS_ENOMEM, "out of memory reading a TOML file");
    int rc;
    char c = *t->p;
    t->depth++;
    if (c == '"' || c == '\'') {
        rc = parse_string(t, &v->s);
    } else if (c == '[') {
        rc = parse_array(t, v);
    } else if (c == '{') {
        rc = parse_inline_table(t, v);
    } else {
        const char *s = t->p;
        while (!at_end(t) && !ends_token(*t->p)) t->p++;
        size_t n = (size_t)(t->p - s);
        if (n == 4 && !memcmp(s, "true", 4)) {
            v->kind = SPS__TV_BOOL;
            v->b = 1;
            rc = 0;
        } else if (n == 5 && !memcmp(s, "false", 5)) {
            v->kind = SPS__TV_BOOL;
            rc = 0;
        } else if (n && ((s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '-' ||
                         s[0] == 'i' || s[0] == 'n')) {
            rc = parse_number(t, s, n, v);
        } else if (n) {
            rc = tp_fail(t, "'%.*s' is not a value (a string needs quotes)", cut(s, n), s);
        } else {
            rc = tp_fail(t, "a value is expected, not '%c'", c);
        }
    }
    t->depth--;
    if (rc) {
        sps__tv_free(v);
        return rc;
    }
    *out = v;
    return 0;
}

/* The item named key of table, or NULL. */
static sps__tv_t *tv_find(sps__tv_t *table, const char *key) {
    return (sps__tv_t *)sps__tv_get(table, key);
}

/* table.k = val, making the dotted key's tables; val is owned (freed on
 * failure). */
static int assign(tp_t *t, sps__tv_t *table, key_t_ *k, sps__tv_t *val) {
    char name[256];
    sps__tv_t *cur = table;
    for (int i = 0; i + 1 < k->n; i++) {
        sps__tv_t *next = tv_find(cur, k->part[i]);
        if (!next) {
            next = tv_new(SPS__TV_TABLE, t->line);
            if (!next) {
                sps__tv_free(val);
                return sps__err_fail(SPS_ENOMEM, "out of memory reading a TOML file");
            }
            next->flags = TV_DOTTED;
            int rc = tv_push(cur, k->part[i], next);
            if (rc) {
                sps__tv_free(val);
                return rc;
            }
        } else if (next->kind != SPS__TV_TABLE || !(next->flags & TV_DOTTED)) {
            sps__tv_free(val);
            return tp_fail(t, "'%s' is already defined (line %d) and cannot be extended "
                           "by a dotted key", key_text(k, i + 1, name, sizeof name),
                           next->line);
        }
        cur = next;
    }
    const sps__tv_t *old = tv_find(cur, k->part[k->n - 1]);
    if (old) {
        sps__tv_free(val);
        return tp_fail(t, "'%s' is defined twice (first on line %d)",
                       key_text(k, k->n, name, sizeof name), old->line);
    }
    return tv_push(cur, k->part[k->n - 1], val);
}

/* [a.b.c]: the table it names, made (or made explicit) here. */
static int open_table(tp_t *t, sps__tv_t *root, key_t_ *k, sps__tv_t **out) {
    char name[256], part[256];
    sps__tv_t *cur = root;
    for (int i = 0; i < k->n; i++) {
        int last = i + 1 == k->n;
        sps__tv_t *next = tv_find(cur, k->part[i]);
        if (!next) {
            next = tv_new(SPS__TV_TABLE, t->line);
            if (!next) return sps__err_fail(SPS_ENOMEM, "out of memory reading a TOML file");
            next->flags = last ? TV_EXPLICIT : TV_HEADED;
            int rc = tv_push(cur, k->part[i], next);
            if (rc) return rc;
        } else if (next->kind != SPS__TV_TABLE || (next->flags & TV_INLINE)) {
            return tp_fail(t, "[%s]: '%s' is already a value (line %d), not a table",
                           key_text(k, k->n, name, sizeof name),
                           key_text(k, i + 1, part, sizeof part), next->line);
        } else if (last) {
            if (next->flags & (TV_EXPLICIT | TV_DOTTED))
                return tp_fail(t, "table [%s] is defined twice (first on line %d)",
                               key_text(k, k->n, name, sizeof name), next->line);
            next->flags = TV_EXPLICIT;
        } else if (next->flags & TV_DOTTED) {
            return tp_fail(t, "[%s]: '%s' was made by a dotted key (line %d)",
                           key_text(k, k->n, name, sizeof name),
                           key_text(k, i + 1, part, sizeof part), next->line);
        }
        cur = next;
    }
    *out = cur;
    return 0;
}

/* The bytes themselves: no NUL, UTF-8 only, no control characters but
 * tab, newline and a carriage return before a newline. */
static int check_bytes(const char *text, size_t n, const char *name) {
    int line = 1;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n') {
            line++;
            i++;
            continue;
        }
        if (c == 0)
            return sps__err_fail(SPS_EINVAL, "%s:%d: a NUL byte (not a text file)", name, line);
        if (c == '\r' && !(i + 1 < n && text[i + 1] == '\n'))
            return sps__err_fail(SPS_EINVAL, "%s:%d: a carriage return not before a newline",
                                 name, line);
        if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
            return sps__err_fail(SPS_EINVAL, "%s:%d: control character 0x%02x", name, line, c);
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k = sps__utf8_len((const unsigned char *)text + i, n - i);
        if (!k)
            return sps__err_fail(SPS_EINVAL, "%s:%d: byte 0x%02x is not UTF-8 (TOML files are "
                                 "UTF-8)", name, line, c);
        i += k;
    }
    return 0;
}

int sps__toml_parse(const char *text, size_t n, const char *name, sps__tv_t **out) {
    *out = NULL;
    if (!name) name = "<toml>";
    int rc = check_bytes(text, n, name);
    if (rc) return rc;
    tp_t t = {text, text + n, 1, name, 0};
    if (n >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) t.p += 3; /* a BOM */
    sps__tv_t *root = tv_new(SPS__TV_TABLE, 1);
    if (!root) return sps__err_fail(SPS_ENOMEM, "out of memory reading a TOML file");
    root->flags = TV_EXPLICIT;
    sps__tv_t *cur = root;
    while (!rc && !at_end(&t)) {
        skip_ws(&t);
        skip_comment(&t);
        if (at_eol(&t)) {
            next_line(&t);
            continue;
        }
        key_t_ k = {{0}, 0};
        if (*t.p == '[') {
            t.p++;
            if (!at_end(&t) && *t.p == '[') {
                rc = tp_fail(&t, "arrays of tables ([[...]]) are not supported in a spanscope "
                             "configuration");
                break;
            }
            rc = parse_key(&t, &k);
            if (!rc && (at_end(&t) || *t.p != ']'))
                rc = tp_fail(&t, "']' expected to close a table header");
            if (!rc) {
                t.p++;
                rc = open_table(&t, root, &k, &cur);
            }
        } else {
            rc = parse_key(&t, &k);
            if (!rc && (at_end(&t) || *t.p != '='))
                rc = tp_fail(&t, "'=' expected after the key '%s'", k.n ? k.part[k.n - 1] : "");
            sps__tv_t *val = NULL;
            if (!rc) {
                t.p++;
                skip_ws(&t);
                rc = parse_value(&t, &val);
            }
            if (!rc) rc = assign(&t, cur, &k, val);
        }
        key_free(&k);
        if (rc) break;
        skip_ws(&t);
        skip_comment(&t);
        if (!at_eol(&t)) {
            rc = tp_fail(&t, "the line goes on after its end ('%c'): one key = value or "
                         "[table] per line", *t.p);
            break;
        }
        next_line(&t);
    }
    if (rc) {
        sps__tv_free(root);
        return rc;
    }
    *out = root;
    return 0;
}

int sps__toml_read_file(const char *path, sps__tv_t **out) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return sps__err_fail(SPS_EIO, "cannot read the configuration %s: %s", path,
                                 strerror(errno));
    char *buf = malloc(MAX_FILE + 1);
    if (!buf) {
        fclose(f);
        return sps__err_fail(SPS_ENOMEM, "out of memory reading %s", path);
    }
    size_t n = fread(buf, 1, MAX_FILE + 1, f);
    int err = ferror(f);
    int e = errno;
    fclose(f);
    int rc;
    if (err)
        rc = sps__err_fail(SPS_EIO, "cannot read the configuration %s: %s", path, strerror(e));
    else if (n > MAX_FILE)
        rc = sps__err_fail(SPS_EINVAL, "%s: larger than 1 MiB: not a configuration file", path);
    else
        rc = sps__toml_parse(buf, n, path, out);
    free(buf);
    return rc;
}

/* ======================================================================== */
/* Resolution                                                                */
/* ======================================================================== */

/* The edit distance of a and b (short keys), for "did you mean". */
static size_t distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 64;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The known [profiling] key (or group.key under group) closest to key, or
 * NULL when none is close. */
static const char *closest_key(const char *key, const char *group) {
    const char *best = NULL;
    size_t bd = strlen(key) / 3 + 1, glen = group ? strlen(group) : 0;
    if (bd < 2) bd = 2;
    for (size_t i = 0; i < NSET; i++) {
        const char *cand = NULL;
        if (group) {
            const char *g = g_table[i].group;
            if (g && !strncmp(g, group, glen) && g[glen] == '.') cand = g + glen + 1;
        } else {
            cand = g_table[i].toml;
        }
        if (!cand) continue;
        size_t d = distance(key, cand);
        if (d <= bd) {
            bd = d;
            best = cand;
        }
    }
    return best;
}

static const char *kind_name(sps__tv_kind_t k) {
    switch (k) {
    case SPS__TV_STR: return "a string";
    case SPS__TV_INT: return "an integer";
    case SPS__TV_FLOAT: return "a float";
    case SPS__TV_BOOL: return "a boolean";
    case SPS__TV_ARRAY: return "an array";
    default: return "a table";
    }
}

/* Checks the file's value v of setting i (written as key, on v's line). */
static int check_type(const char *path, int i, const char *key, const sps__tv_t *v) {
    const sps__setting_t *st = &g_table[i];
    const char *want = NULL;
    switch (st->type) {
    case SPS__ST_BOOL:
        if (v->kind != SPS__TV_BOOL) want = "a boolean (true or false)";
        break;
    case SPS__ST_UINT:
        if (v->kind != SPS__TV_INT || v->i < 0) want = "a whole number >= 0";
        break;
    case SPS__ST_INT:
        if (v->kind != SPS__TV_INT) want = "an integer";
        break;
    case SPS__ST_STR:
        if (v->kind != SPS__TV_STR) want = "a string";
        break;
    case SPS__ST_ANY:
        if (v->kind == SPS__TV_ARRAY || v->kind == SPS__TV_TABLE) want = "a string";
        break;
    case SPS__ST_LIST:
        if (v->kind == SPS__TV_STR) break;
        if (v->kind != SPS__TV_ARRAY) {
            want = "a string or an array of strings";
            break;
        }
        for (size_t k = 0; k < v->n; k++) {
            const sps__tv_t *it = v->items[k];
            if (it->kind != SPS__TV_STR || !it->s[0])
                return sps__err_fail(SPS_EINVAL, "%s:%d: profiling setting '%s' must hold "
                                     "non-empty strings, not %s", path, it->line, key,
                                     it->kind == SPS__TV_STR ? "\"\"" : kind_name(it->kind));
        }
        break;
    }
    if (want)
        return sps__err_fail(SPS_EINVAL, "%s:%d: profiling setting '%s' must be %s, not %s",
                             path, v->line, key, want, kind_name(v->kind));
    if (!strcmp(st->toml, "perf_events")) {
        /* as the Python face's _perf_events: one name, or a non-empty
         * array of unique names; a name holds no comma */
        size_t n = v->kind == SPS__TV_STR ? 1 : v->n;
        if (!n)
            return sps__err_fail(SPS_EINVAL, "%s:%d: profiling setting 'perf_events' must be "
                                 "a non-empty list of event names", path, v->line);
        for (size_t a = 0; a < n; a++) {
            const char *x = v->kind == SPS__TV_STR ? v->s : v->items[a]->s;
            if (!*x || strchr(x, ','))
                return sps__err_fail(SPS_EINVAL, "%s:%d: perf_events: '%s' is not one event "
                                     "name", path, v->line, x);
            for (size_t b = 0; b < a; b++)
                if (!strcasecmp(x, v->items[b]->s))
                    return sps__err_fail(SPS_EINVAL, "%s:%d: perf_events names '%s' twice",
                                         path, v->line, x);
        }
    }
    return 0;
}

/* The file's table t ([profiling], or the top level) into s->v. */
static int take_table(sps__settings_t *s, const sps__tv_t *t) {
    const char *path = s->path;
    for (size_t k = 0; k < t->n; k++) {
        const char *key = t->keys[k];
        const sps__tv_t *v = t->items[k];
        size_t g = 0;
        while (g < sizeof g_groups / sizeof g_groups[0] && strcmp(g_groups[g], key)) g++;
        if (g < sizeof g_groups / sizeof g_groups[0]) {
            if (v->kind != SPS__TV_TABLE)
                return sps__err_fail(SPS_EINVAL, "%s:%d: profiling setting '%s' must be a "
                                     "TOML table ([profiling.%s]), not %s", path, v->line,
                                     key, key, kind_name(v->kind));
            for (size_t j = 0; j < v->n; j++) {
                char full[128];
                snprintf(full, sizeof full, "%s.%s", key, v->keys[j]);
                int i = -1;
                for (size_t x = 0; x < NSET && i < 0; x++)
                    if (g_table[x].group && !strcmp(g_table[x].group, full)) i = (int)x;
                if (i < 0) {
                    const char *near = closest_key(v->keys[j], key);
                    return sps__err_fail(SPS_EINVAL, "%s:%d: unknown [%s] profiling setting "
                                         "'%s'%s%s%s", path, v->items[j]->line, key,
                                         v->keys[j], near ? " (did you mean '" : "",
                                         near ? near : "", near ? "'?)" : "");
                }
                if (sps__tv_get(t, g_table[i].toml))
                    return sps__err_fail(SPS_EINVAL, "%s:%d: profiling setting '%s' is set "
                                         "both directly and as %s", path, v->items[j]->line,
                                         g_table[i].toml, full);
                int rc = check_type(path, i, full, v->items[j]);
                if (rc) return rc;
                s->v[i].from = SPS__FROM_FILE;
                s->v[i].tv = v->items[j];
                s->v[i].via = g_table[i].group;
            }
            continue;
        }
        int i = sps__setting_by_toml(key);
        if (i < 0) {
            const char *near = closest_key(key, NULL);
            return sps__err_fail(SPS_EINVAL, "%s:%d: unknown profiling setting '%s'%s%s%s "
                                 "(spanscope config lists the keys)", path, v->line, key,
                                 near ? " (did you mean '" : "", near ? near : "",
                                 near ? "'?)" : "");
        }
        int rc = check_type(path, i, key, v);
        if (rc) return rc;
        s->v[i].from = SPS__FROM_FILE;
        s->v[i].tv = v;
        s->v[i].via = g_table[i].toml;
    }
    return 0;
}

void sps__settings_free(sps__settings_t *s) {
    if (!s) return;
    sps__tv_free(s->root);
    free(s->path);
    free(s->v);
    free(s);
}

int sps__settings_resolve(const char *config_path, sps__settings_t **out) {
    *out = NULL;
    sps__settings_t *s = calloc(1, sizeof *s);
    if (s) s->v = calloc(NSET, sizeof *s->v);
    if (!s || !s->v) {
        sps__settings_free(s);
        return sps__err_fail(SPS_ENOMEM, "out of memory resolving the settings");
    }
    s->n = NSET;
    int rc = 0;
    if (config_path && *config_path) {
        s->path = strdup(config_path);
        if (!s->path) rc = sps__err_fail(SPS_ENOMEM, "out of memory resolving the settings");
        if (!rc) rc = sps__toml_read_file(config_path, &s->root);
        if (!rc) {
            const sps__tv_t *t = sps__tv_get(s->root, "profiling");
            if (!t) t = s->root; /* a small file: the top level (as Python reads it) */
            if (t->kind != SPS__TV_TABLE)
                rc = sps__err_fail(SPS_EINVAL, "%s:%d: profiling must be a TOML table "
                                   "([profiling]), not %s", config_path, t->line,
                                   kind_name(t->kind));
            else
                rc = take_table(s, t);
        }
    }
    if (rc) {
        sps__settings_free(s);
        return rc;
    }
    for (size_t i = 0; i < NSET; i++) {
        const sps__setting_t *st = &g_table[i];
        const char *v;
        if (st->env && (v = getenv(st->env))) {
            s->v[i] = (sps__resolved_t){SPS__FROM_ENV, v, NULL, st->env};
        } else if (st->alias && (v = getenv(st->alias))) {
            s->v[i] = (sps__resolved_t){SPS__FROM_ALIAS, v, NULL, st->alias};
        }
    }
    /* a set SPANSCOPE_OUTPUT decides deactivate_file_output too (as the
     * Python face's output=: a file, or none) */
    int o = sps__setting_by_env("SPANSCOPE_OUTPUT"), d = sps__setting_by_toml("deactivate_file_output");
    if (s->v[o].from == SPS__FROM_ENV || s->v[o].from == SPS__FROM_ALIAS) {
        const char *t = s->v[o].text;
        s->v[d] = s->v[o];
        s->v[d].text = !*t || !strcasecmp(t, "none") ? "true" : "false";
    }
    *out = s;
    return 0;
}

/* "N" or "N (words)": a count's default that is a number. */
static int uint_default(const char *d) {
    const char *p = d;
    while (*p >= '0' && *p <= '9') p++;
    return p > d && (!*p || !strncmp(p, " (", 2));
}

/* The default of setting i as a value, or NULL when it is none or only
 * words ("$TMPDIR, else /tmp"): a single word of the table's dflt. */
static const char *default_value(int i) {
    const char *d = g_table[i].dflt;
    if (!strcmp(d, "none") || !strcmp(d, "unset") || !strcmp(d, "all")) return NULL;
    for (const char *p = d; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '.' || *p == ',' || *p == '-'))
            return g_table[i].type == SPS__ST_UINT && uint_default(d) ? d : NULL;
    return d;
}

/* A variable's boolean text. */
static int text_bool(const char *v, int *out) {
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t k = 0; k < 4; k++) {
        if (!strcasecmp(v, yes[k])) return *out = 1, 0;
        if (!strcasecmp(v, no[k])) return *out = 0, 0;
    }
    return -1;
}

int sps__settings_bool(const sps__settings_t *s, int i, int *out) {
    const sps__resolved_t *r = &s->v[i];
    *out = 0;
    if (r->from == SPS__FROM_FILE) return *out = r->tv->b, 0;
    const char *t = r->from == SPS__FROM_DEFAULT ? g_table[i].dflt : r->text;
    if (text_bool(t, out) == 0) return 0;
    if (r->from == SPS__FROM_DEFAULT) return 0;
    return sps__err_fail(SPS_EINVAL, "%s=%s: expected 1/0, true/false, yes/no or on/off",
                         r->via, t);
}

int sps__settings_uint(const sps__settings_t *s, int i, uint64_t *out) {
    const sps__resolved_t *r = &s->v[i];
    *out = 0;
    if (r->from == SPS__FROM_FILE) return *out = (uint64_t)r->tv->i, 0;
    if (r->from == SPS__FROM_DEFAULT) {
        const char *d = default_value(i);
        *out = d ? strtoull(d, NULL, 10) : 0;
        return 0;
    }
    const char *v = r->text;
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *end || errno || v[0] == '-' || v[0] == '+' || v[0] == ' ')
        return sps__err_fail(SPS_EINVAL, "%s=%s: expected a whole number", r->via, v);
    *out = n;
    return 0;
}

int sps__settings_str(const sps__settings_t *s, int i, const char **out) {
    const sps__resolved_t *r = &s->v[i];
    *out = r->from == SPS__FROM_FILE ? r->tv->s
         : r->from == SPS__FROM_DEFAULT ? default_value(i) : r->text;
    if (r->from != SPS__FROM_FILE && r->from != SPS__FROM_DEFAULT && g_table[i].env &&
        !strcmp(g_table[i].env, "SPANSCOPE_OUTPUT") && (!**out || !strcasecmp(*out, "none")))
        *out = NULL; /* "" or none: no file */
    return 0;
}

/* The items of setting i's list, one per call of put (n-th item). */
typedef int (*item_fn)(const char *s, size_t n, void *ctx);

static int list_each(const sps__settings_t *s, int i, item_fn put, void *ctx) {
    const sps__resolved_t *r = &s->v[i];
    const char *text = NULL;
    if (r->from == SPS__FROM_FILE && r->tv->kind == SPS__TV_ARRAY) {
        for (size_t k = 0; k < r->tv->n; k++) {
            int rc = put(r->tv->items[k]->s, strlen(r->tv->items[k]->s), ctx);
            if (rc) return rc;
        }
        return 0;
    }
    text = r->from == SPS__FROM_FILE ? r->tv->s
         : r->from == SPS__FROM_DEFAULT ? default_value(i) : r->text;
    if (!text) return 0;
    if (!(g_table[i].flags & SPS__SF_LIST_COMMA)) return put(text, strlen(text), ctx);
    /* comma-separated, each item stripped of whitespace, empty ones dropped */
    for (const char *p = text;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *a = p, *b = p + n;
        while (a < b && (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r' || *a == '\f' ||
                         *a == '\v'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n' || b[-1] == '\r' ||
                         b[-1] == '\f' || b[-1] == '\v'))
            b--;
        if (b > a) {
            int rc = put(a, (size_t)(b - a), ctx);
            if (rc) return rc;
        }
        if (!e) return 0;
        p = e + 1;
    }
}

typedef struct {
    char *buf;
    size_t cap, n;
} join_t;

static int join_put(const char *s, size_t n, void *ctx) {
    join_t *j = ctx;
    size_t need = j->n + (j->n ? 1 : 0) + n;
    if (need + 1 > j->cap) return SPS_ETOOBIG;
    if (j->n) j->buf[j->n++] = ',';
    memcpy(j->buf + j->n, s, n);
    j->n += n;
    j->buf[j->n] = 0;
    return 0;
}

int sps__settings_list(const sps__settings_t *s, int i, char *buf, size_t cap) {
    if (!cap) return sps__err_fail(SPS_ETOOBIG, "no room for the list %s",
                                   g_table[i].toml ? g_table[i].toml : g_table[i].env);
    buf[0] = 0;
    join_t j = {buf, cap, 0};
    int rc = list_each(s, i, join_put, &j);
    if (rc) return sps__err_fail(rc, "the list %s is too long",
                                 g_table[i].toml ? g_table[i].toml : g_table[i].env);
    return 0;
}

typedef struct {
    FILE *fp;
    int json, first;
} put_t;

static void put_str(FILE *fp, const char *s, int json);

static int item_put(const char *s, size_t n, void *ctx) {
    put_t *p = ctx;
    char *copy = strndup(s, n);
    if (!copy) return sps__err_fail(SPS_ENOMEM, "out of memory");
    if (!p->first) fputs(p->json ? ", " : ",", p->fp);
    p->first = 0;
    put_str(p->fp, copy, p->json);
    free(copy);
    return 0;
}

static void put_str(FILE *fp, const char *s, int json) {
    if (!s) {
        fputs(json ? "null" : "-", fp);
    } else if (json) {
        fputc('"', fp);
        sps__json_fputs(fp, s, 0);
        fputc('"', fp);
    } else {
        sps__utf8_put_text(fp, s, 0);
    }
}

int sps__settings_put(FILE *fp, const sps__settings_t *s, int i, int json) {
    const sps__resolved_t *r = &s->v[i];
    int rc = 0;
    switch (g_table[i].type) {
    case SPS__ST_BOOL: {
        int b;
        rc = sps__settings_bool(s, i, &b);
        fputs(rc ? (json ? "null" : "?") : b ? "true" : "false", fp);
        break;
    }
    case SPS__ST_UINT:
    case SPS__ST_INT:
        if (r->from == SPS__FROM_FILE) {
            fprintf(fp, "%lld", (long long)r->tv->i);
        } else if (r->from == SPS__FROM_DEFAULT) {
            const char *d = default_value(i);
            if (d) fprintf(fp, "%llu", strtoull(d, NULL, 10));
            else fputs(json ? "null" : "-", fp);
        } else if (g_table[i].type == SPS__ST_UINT) {
            uint64_t u;
            rc = sps__settings_uint(s, i, &u);
            if (rc) fputs(json ? "null" : "?", fp);
            else fprintf(fp, "%llu", (unsigned long long)u);
        } else {
            put_str(fp, r->text, json);
        }
        break;
    case SPS__ST_STR: {
        const char *v;
        sps__settings_str(s, i, &v);
        put_str(fp, v, json);
        break;
    }
    case SPS__ST_ANY:
        if (r->from == SPS__FROM_FILE && r->tv->kind == SPS__TV_BOOL)
            fputs(r->tv->b ? "true" : "false", fp);
        else if (r->from == SPS__FROM_FILE && r->tv->kind == SPS__TV_INT)
            fprintf(fp, "%lld", (long long)r->tv->i);
        else if (r->from == SPS__FROM_FILE && r->tv->kind == SPS__TV_FLOAT)
            fprintf(fp, isfinite(r->tv->f) ? "%.17g" : (json ? "null" : "%g"), r->tv->f);
        else {
            const char *v;
            sps__settings_str(s, i, &v);
            put_str(fp, v, json);
        }
        break;
    case SPS__ST_LIST: {
        put_t p = {fp, json, 1};
        if (json) fputc('[', fp);
        rc = list_each(s, i, item_put, &p);
        if (json) fputc(']', fp);
        if (p.first && !json) fputc('-', fp);
        break;
    }
    }
    return rc;
}

const char *sps__env_unknown_next(size_t *idx, char *buf, size_t cap) {
    if (!environ || !cap) return NULL;
    for (; environ[*idx]; (*idx)++) {
        const char *e = environ[*idx];
        if (strncmp(e, "SPANSCOPE_", 10)) continue;
        const char *eq = strchr(e, '=');
        size_t n = eq ? (size_t)(eq - e) : strlen(e);
        if (n + 1 > cap) n = cap - 1;
        memcpy(buf, e, n);
        buf[n] = 0;
        if (sps__setting_by_env(buf) < 0) {
            (*idx)++;
            return buf;
        }
    }
    return NULL;
}

const char *sps__env_closest(const char *name) {
    const char *best = NULL;
    size_t bd = 3;
    for (size_t i = 0; i < NSET; i++) {
        if (!g_table[i].env) continue;
        size_t d = distance(name, g_table[i].env);
        if (d < bd) {
            bd = d;
            best = g_table[i].env;
        }
    }
    return best;
}

const char *sps_env_variable(size_t i) {
    for (size_t k = 0; k < NSET; k++)
        if (g_table[k].env && i-- == 0) return g_table[k].env;
    return NULL;
}
