/* _sampler.c -- the Python frames of the stack sampler (spanscope._ext).
 *
 * The C sampler (src/ext/sampler.c, include/spanscope.h "Stack sampling")
 * interrupts each thread with SIGPROF and copies its native return
 * addresses; with a frame walker installed it also asks the walker for the
 * language runtime's frames.  This file is CPython's walker, for CPython
 * 3.10, 3.11, 3.12 and 3.13 (each build of the extension is compiled against
 * one of them: the frame layout below is chosen at compile time), and the
 * module functions that drive sampling from Python:
 *
 *   sampling_start(hz=1000), sampling_stop(), sampling_hz(),
 *   sampling_stats() -> dict
 *
 * plus three functions for the tests (_sampler_walk, _sampler_describe,
 * _sampler_probe_thread).  docs/sampling.md, "Python frames without the
 * GIL", explains the reasoning; in short:
 *
 *  - walk() runs inside the SIGPROF handler of the sampled thread, which may
 *    or may not hold the GIL.  It takes no lock, allocates nothing and calls
 *    into CPython only for two functions that are pure reads:
 *    PyGILState_GetThisThreadState() (a pthread_getspecific of the
 *    interpreter's TSS key: the thread's state whether or not it holds the
 *    GIL) and PyCode_Addr2Line() (a walk over the code object's line
 *    table).  Both are called once from sampler_init so that the lazy PLT
 *    bindings inside libpython are resolved before any handler runs.
 *  - Every pointer is checked before it is followed (alignment, the type
 *    pointer, a plausible reference count, ranges); a chain is followed
 *    for at most 2 * max + 16 links, so a corrupt chain cannot loop.  What
 *    the checks cannot rule out (a frame popped and its memory unmapped at
 *    the instant of the signal) faults, and the sampler's fault guard
 *    (sigsetjmp around walk) drops that walk.
 *  - A frame becomes one 64-bit word: bit 63 set, bits 32..62 the index + 1
 *    of its code object in a process-wide, preallocated, lock-free table
 *    (0: not recorded, described as "?"), bits 0..31 its line (0:
 *    unknown).  The first time a code object is seen, the handler claims a
 *    slot with a compare-and-swap and copies the qualified name and file
 *    name (their raw code units, capped) into a preallocated arena with an
 *    atomic bump pointer.  describe() then needs only the table: the code
 *    object may be long freed by finalize.  A slot is keyed by the code
 *    object's address together with its first line, the addresses of its
 *    name, qualified name and file name, and the lengths and a hash of the
 *    content of the last two, so a new code object at a freed one's
 *    address is a new slot even when its names reuse the old names'
 *    addresses.
 *
 * Py_BUILD_CORE is defined in this file only: the frame structures are in
 * CPython's internal headers (installed in include/python3.X/internal).
 */
#define PY_SSIZE_T_CLEAN
/* No assert() on the handler's path: CPython's inline helpers assert in
 * builds without NDEBUG, and a failed assert aborts the process. */
#ifndef NDEBUG
#  define NDEBUG 1
#endif
#ifndef Py_BUILD_CORE
#  define Py_BUILD_CORE 1
#endif
#include <Python.h>

/* The walker knows the frame layout of CPython 3.10 to 3.13 with a GIL.
 * Elsewhere (3.14's tagged stack references, a free-threaded 3.13t) it is
 * compiled out and samples keep their native frames only. */
#if PY_VERSION_HEX >= 0x030A0000 && PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED)
#  define PYS_WALKER 1
#else
#  define PYS_WALKER 0
#endif

#if PYS_WALKER
#  if PY_VERSION_HEX >= 0x030B0000
#    include "internal/pycore_frame.h"
#  else
#    include <frameobject.h>
#  endif
#  include "internal/pycore_runtime.h"
#endif

#include "_convert.h"
#include "spanscope.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

int sps__py_sampler_init(PyObject *m);

/* The walker's counts (sampling_stats) */
static _Atomic uint64_t g_codes;     /* slots claimed */
static _Atomic uint64_t g_unnamed;   /* frames written as "?": table full */
static _Atomic uint64_t g_nocopy;    /* names not copied: arena full */

#if !PYS_WALKER
/* A free-threaded CPython (3.13t) or one after 3.13: no Python frames in
 * the samples (their native frames only).  Without a GIL the frame chain
 * and the objects' reference counts are laid out and synchronised
 * differently, and 3.14 changes the frames again; the reads below are not
 * known to be safe there (docs/sampling.md). */
static int py_walk(uint64_t *words, int max) {
    (void)words;
    (void)max;
    return 0;
}

static int py_describe(uint64_t w, char *func, size_t fcap, char *file, size_t filecap,
                       int64_t *line) {
    (void)w;
    if (func && fcap) func[0] = '\0';
    if (file && filecap) file[0] = '\0';
    if (line) *line = 0;
    return -1;
}

static int sampler_init(void) { return 0; }

#else /* PYS_WALKER */

/* ======================================================================== */
/* The table of code objects seen                                            */
/* ======================================================================== */

#define PYS_SLOTS_LOG2 17                    /* 131072 code objects */
#define PYS_SLOTS (1u << PYS_SLOTS_LOG2)
#define PYS_PROBES 64                        /* linear probes per lookup */
#define PYS_ARENA_BYTES ((size_t)32 << 20)   /* names' code units */
#define PYS_NAME_CAP 256                     /* code units kept of a name */
#define PYS_FILE_CAP 1024                    /* ... and of a file name */
#define PYS_WORD_TAG ((uint64_t)1 << 63)

enum { SLOT_FREE = 0, SLOT_FILLING = 1, SLOT_READY = 2 };

/* One code object.  state goes FREE -> FILLING (the claiming handler's
 * compare-and-swap) -> READY (a release store after every other field is
 * written); readers look at the other fields only after an acquire load
 * of READY.  A READY slot never changes again. */
typedef struct {
    _Atomic uint32_t state;
    int32_t firstlineno;
    uintptr_t code, name, qualname, filename; /* the key: addresses ... */
    uint32_t qualname_len, filename_len;      /* ... lengths ... */
    uint64_t content;                         /* ... and str_key hashes */
    _Atomic uint64_t line_memo;               /* (byte offset + 1) << 32 | line
                                                 of the last lookup: 0 none */
    uint32_t fn_off, file_off;                /* copies in the arena */
    uint16_t fn_units, file_units;            /* code units copied */
    uint8_t fn_kind, file_kind;               /* 1, 2 or 4; 0: no copy */
} pys_slot_t;

static pys_slot_t *g_slots;          /* PYS_SLOTS of them (mmap) */
static unsigned char *g_arena;       /* PYS_ARENA_BYTES (mmap) */
static _Atomic size_t g_arena_used;
static _Atomic int g_ready;          /* the table exists (release/acquire) */

/* A pointer that could be an object: not tiny, 8-aligned. */
static inline int ptr_ok(const void *p) {
    uintptr_t u = (uintptr_t)p;
    return u >= 4096 && (u & 7) == 0;
}

/* A live object's reference count is >= 1 and, even for an immortal
 * object (3.12+: 2^32 - 1; 3.11's deep-frozen code: 999999999), below
 * 2^32.  A freed pymalloc block holds the free list's next pointer (or
 * NULL) where ob_refcnt was: an address above 2^32 on 64-bit Linux, or 0. */
static inline int refcnt_ok(const void *o) {
    Py_ssize_t r = ((const PyObject *)o)->ob_refcnt;
    return r >= 1 && (uint64_t)r <= UINT64_C(0xFFFFFFFF);
}

static inline int is_code(const void *p) {
    return ptr_ok(p) && Py_TYPE((PyObject *)p) == &PyCode_Type && refcnt_ok(p);
}

/* A str's length, kind (1, 2, 4) and data, for a compact, ready, exact
 * str only; 0 when s is not one. */
static int str_view(const PyObject *s, Py_ssize_t *len, int *kind, const void **data) {
    if (!ptr_ok(s) || Py_TYPE((PyObject *)s) != &PyUnicode_Type || !refcnt_ok(s)) return 0;
    const PyASCIIObject *a = (const PyASCIIObject *)s;
#if PY_VERSION_HEX < 0x030C0000
    if (!a->state.ready) return 0;
#endif
    if (!a->state.compact) return 0;
    Py_ssize_t n = a->length;
    int k = (int)a->state.kind;
    if (n < 0 || n > (1 << 24) || (k != 1 && k != 2 && k != 4)) return 0;
    *len = n;
    *kind = k;
    *data = a->state.ascii ? (const void *)(a + 1)
                           : (const void *)((const PyCompactUnicodeObject *)s + 1);
    return 1;
}

/* Copies up to cap code units of s into the arena; *off, *units, *kind
 * (0 when nothing was copied: not a str we read, or the arena is full).
 * A plain byte loop: no call. */
static void arena_copy(const PyObject *s, uint32_t cap, uint32_t *off, uint16_t *units,
                       uint8_t *kind) {
    Py_ssize_t n;
    int k;
    const void *data;
    *off = 0;
    *units = 0;
    *kind = 0;
    if (!str_view(s, &n, &k, &data)) return;
    size_t u = (size_t)n < cap ? (size_t)n : cap;
    size_t bytes = u * (size_t)k;
    size_t at = atomic_fetch_add_explicit(&g_arena_used, bytes, memory_order_relaxed);
    if (at > PYS_ARENA_BYTES || bytes > PYS_ARENA_BYTES - at) {
        atomic_fetch_add_explicit(&g_nocopy, 1, memory_order_relaxed);
        return;
    }
    volatile unsigned char *dst = g_arena + at;
    const unsigned char *src = (const unsigned char *)data;
    for (size_t i = 0; i < bytes; i++) dst[i] = src[i];
    *off = (uint32_t)at;
    *units = (uint16_t)u;
    *kind = (uint8_t)k;
}

static inline uint64_t mix64(uint64_t x) { /* splitmix64's finaliser */
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* 8 bytes at p as a number (byte loads: no call, no alignment need). */
static inline uint64_t load8(const unsigned char *p) {
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
           (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
           (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static inline uint64_t hash_bytes(uint64_t h, const unsigned char *p, size_t len) {
    for (; len >= 8; len -= 8, p += 8) {
        h = (h ^ load8(p)) * UINT64_C(0x9E3779B97F4A7C15);
        h ^= h >> 29;
    }
    for (; len; len--, p++) h = (h ^ *p) * UINT64_C(0x100000001b3);
    return h;
}

/* A hash of s's length and of up to 32 bytes of its data at each end (the
 * ends tell file names and generated names apart), 0 for a str we do not
 * read: part of a slot's key, so that a new code object at a freed one's
 * address, whose names are new strings at the freed names' addresses, is
 * not taken for the old one.  Our own hash, not the str's cached one: that
 * may be computed (by another thread) between two lookups. */
static uint64_t str_key(const PyObject *s, uint32_t *len) {
    Py_ssize_t n;
    int k;
    const void *d;
    *len = 0;
    if (!str_view(s, &n, &k, &d)) return 0;
    *len = (uint32_t)n;
    const unsigned char *b = (const unsigned char *)d;
    size_t bytes = (size_t)n * (size_t)k;
    uint64_t h = UINT64_C(0xcbf29ce484222325) ^ (uint64_t)n;
    if (bytes <= 64) return hash_bytes(h, b, bytes);
    h = hash_bytes(h, b, 32);
    return hash_bytes(h, b + bytes - 32, 32);
}

/* The code object's name (its qualified name from 3.11 on: 3.10 has none). */
static inline PyObject *code_qualname(PyCodeObject *co) {
#if PY_VERSION_HEX >= 0x030B0000
    return co->co_qualname;
#else
    return co->co_name;
#endif
}

/* The slot index + 1 of code object co (checked by is_code), claiming and
 * filling a slot on first sight; 0 when the table has no room near its
 * hash.  Async-signal-safe: atomics and plain reads only. */
static uint32_t code_slot(PyCodeObject *co) {
    uintptr_t code = (uintptr_t)co;
    int32_t first = co->co_firstlineno;
    uintptr_t name = (uintptr_t)co->co_name;
    PyObject *qn = code_qualname(co);
    uintptr_t qualname = (uintptr_t)qn, filename = (uintptr_t)co->co_filename;
    uint32_t qlen, flen;
    uint64_t content = str_key(qn, &qlen) ^ mix64(str_key(co->co_filename, &flen));
    uint64_t h = mix64(code ^ ((uint64_t)(uint32_t)first << 40) ^ (name << 7) ^
                       (qualname << 3) ^ filename ^ content);
    for (uint32_t p = 0; p < PYS_PROBES; p++) {
        uint32_t i = (uint32_t)(h + p) & (PYS_SLOTS - 1);
        pys_slot_t *s = &g_slots[i];
        uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (st == SLOT_READY) {
            if (s->code == code && s->firstlineno == first && s->name == name &&
                s->qualname == qualname && s->filename == filename &&
                s->qualname_len == qlen && s->filename_len == flen && s->content == content)
                return i + 1;
            continue;
        }
        if (st == SLOT_FILLING) continue; /* another thread's: maybe the
                                             same code (a duplicate is
                                             harmless), maybe not */
        uint32_t expect = SLOT_FREE;
        if (!atomic_compare_exchange_strong_explicit(&s->state, &expect, SLOT_FILLING,
                                                     memory_order_acq_rel,
                                                     memory_order_acquire))
            continue; /* lost the race for this slot: probe on */
        s->code = code;
        s->firstlineno = first;
        s->name = name;
        s->qualname = qualname;
        s->filename = filename;
        s->qualname_len = qlen;
        s->filename_len = flen;
        s->content = content;
        arena_copy(qn, PYS_NAME_CAP, &s->fn_off, &s->fn_units, &s->fn_kind);
        arena_copy(co->co_filename, PYS_FILE_CAP, &s->file_off, &s->file_units,
                   &s->file_kind);
        atomic_fetch_add_explicit(&g_codes, 1, memory_order_relaxed);
        atomic_store_explicit(&s->state, SLOT_READY, memory_order_release);
        return i + 1;
    }
    atomic_fetch_add_explicit(&g_unnamed, 1, memory_order_relaxed);
    return 0;
}

static int code_line(PyCodeObject *co, Py_ssize_t addr);

/* The word of a frame running code object co at byte offset addr (its
 * line from the slot's memo when the offset is the memo's: a frame that
 * calls keeps its offset from sample to sample, and the line table's walk
 * is the costly part of a walk). */
static inline uint64_t frame_word(PyCodeObject *co, Py_ssize_t addr) {
    uint32_t slot = code_slot(co);
    int line;
    if (slot && addr >= 0 && addr < INT32_MAX) {
        _Atomic uint64_t *memo = &g_slots[slot - 1].line_memo;
        uint64_t m = atomic_load_explicit(memo, memory_order_relaxed);
        if (m >> 32 == (uint64_t)addr + 1) {
            line = (int)(uint32_t)m;
        } else {
            line = code_line(co, addr);
            atomic_store_explicit(memo, ((uint64_t)addr + 1) << 32 | (uint32_t)line,
                                  memory_order_relaxed);
        }
    } else {
        line = code_line(co, addr);
    }
    return PYS_WORD_TAG | ((uint64_t)slot << 32) | (uint32_t)(line > 0 ? line : 0);
}

/* ======================================================================== */
/* walk: in the SIGPROF handler                                              */
/* ======================================================================== */

/* The size of co's bytecode in bytes (co checked by is_code), 0 when it
 * cannot be read. */
static inline Py_ssize_t code_nbytes(PyCodeObject *co) {
#if PY_VERSION_HEX >= 0x030B0000
    /* the code units are inside the object: Py_SIZE of them (read
     * directly: 3.12's Py_SIZE asserts) */
    return ((PyVarObject *)co)->ob_size * (Py_ssize_t)sizeof(_Py_CODEUNIT);
#else
    PyObject *bytes = co->co_code;
    if (!ptr_ok(bytes) || Py_TYPE(bytes) != &PyBytes_Type) return 0;
    return PyBytes_GET_SIZE(bytes);
#endif
}

/* The line of byte offset addr in co (checked by is_code), 0 when addr is
 * past its code.  PyCode_Addr2Line only reads the line table (3.11: or the
 * line array a tracer made); it allocates nothing and takes no lock. */
static int code_line(PyCodeObject *co, Py_ssize_t addr) {
    /* before the first instruction (3.10's f_lasti -1: a frame just
     * entered): its first line, as PyCode_Addr2Line and tracebacks say */
    if (addr < 0) return co->co_firstlineno > 0 ? co->co_firstlineno : 0;
    if (addr >= code_nbytes(co)) return 0;
    PyObject *lt = co->co_linetable;
    if (!ptr_ok(lt) || Py_TYPE(lt) != &PyBytes_Type) return 0;
    int line = PyCode_Addr2Line(co, (int)addr);
    return line > 0 ? line : 0;
}

/* The frame walker's walk (sps_frame_walker_t.walk): this thread's Python
 * frames, innermost first, as at most max words. */
static int py_walk(uint64_t *words, int max) {
    if (max <= 0 || !atomic_load_explicit(&g_ready, memory_order_acquire)) return 0;
    /* the interpreter is going away: thread states may be freed under
     * threads that still run C code (daemon threads) */
    if (_PyRuntimeState_GetFinalizing(&_PyRuntime)) return 0;
    PyThreadState *ts = PyGILState_GetThisThreadState();
    if (!ptr_ok(ts)) return 0;
    int n = 0;
    int links = 2 * max + 16; /* shim and incomplete frames are skipped */
#if PY_VERSION_HEX < 0x030B0000
    PyFrameObject *f = ts->frame;
    while (f && n < max && links-- > 0) {
        if (!ptr_ok(f) || Py_TYPE((PyObject *)f) != &PyFrame_Type || !refcnt_ok(f)) break;
        PyCodeObject *co = f->f_code;
        if (!is_code(co)) break;
        if (f->f_lineno > 0) { /* set while a tracer runs */
            words[n++] = PYS_WORD_TAG | ((uint64_t)code_slot(co) << 32) | (uint32_t)f->f_lineno;
        } else {
            words[n++] = frame_word(co, (Py_ssize_t)f->f_lasti * (Py_ssize_t)sizeof(_Py_CODEUNIT));
        }
        f = f->f_back;
    }
#else
#  if PY_VERSION_HEX >= 0x030D0000
    _PyInterpreterFrame *fr = ts->current_frame;
#  else
    _PyCFrame *cf = ts->cframe;
    if (!ptr_ok(cf)) return 0;
    _PyInterpreterFrame *fr = cf->current_frame;
#  endif
    while (fr && n < max && links-- > 0) {
        if (!ptr_ok(fr)) break;
        int owner = (unsigned char)fr->owner;
#  if PY_VERSION_HEX >= 0x030C0000
        if (owner > FRAME_OWNED_BY_CSTACK) break;
        if (owner == FRAME_OWNED_BY_CSTACK) { /* an entry shim: no code of its own */
            fr = fr->previous;
            continue;
        }
#  else
        if (owner > FRAME_OWNED_BY_FRAME_OBJECT) break;
#  endif
#  if PY_VERSION_HEX >= 0x030D0000
        PyObject *exe = fr->f_executable;
        if (!is_code(exe)) { /* None, or not a frame of Python code */
            fr = fr->previous;
            continue;
        }
        PyCodeObject *co = (PyCodeObject *)exe;
        const _Py_CODEUNIT *ip = fr->instr_ptr; /* the current instruction */
#  else
        PyCodeObject *co = fr->f_code;
        if (!is_code(co)) break;
        const _Py_CODEUNIT *ip = fr->prev_instr; /* before the next one */
#  endif
        const _Py_CODEUNIT *code = _PyCode_CODE(co);
        /* _PyFrame_IsIncomplete: a frame still being set up (before its
         * RESUME): not yet a frame of the program's */
        if (owner != FRAME_OWNED_BY_GENERATOR && ip < code + co->_co_firsttraceable) {
            fr = fr->previous;
            continue;
        }
        Py_ssize_t lasti = ip - code;
        words[n++] = frame_word(co, lasti * (Py_ssize_t)sizeof(_Py_CODEUNIT));
        fr = fr->previous;
    }
#endif
    return n;
}

/* ======================================================================== */
/* describe: at finalize, from the table only                                */
/* ======================================================================== */

/* Writes units code units of kind k at src as UTF-8 into out (cap bytes
 * with the NUL), whole characters only; lone surrogates become '?'. */
static void units_to_utf8(const unsigned char *src, unsigned units, int k, char *out,
                          size_t cap) {
    size_t o = 0;
    if (!cap) return;
    for (unsigned i = 0; i < units; i++) {
        uint32_t c;
        if (k == 1) c = src[i];
        else if (k == 2) {
            uint16_t v;
            memcpy(&v, src + 2 * (size_t)i, 2);
            c = v;
        } else {
            uint32_t v;
            memcpy(&v, src + 4 * (size_t)i, 4);
            c = v;
        }
        if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) c = '?';
        unsigned char b[4];
        size_t nb;
        if (c < 0x80) {
            b[0] = (unsigned char)c;
            nb = 1;
        } else if (c < 0x800) {
            b[0] = (unsigned char)(0xC0 | (c >> 6));
            b[1] = (unsigned char)(0x80 | (c & 0x3F));
            nb = 2;
        } else if (c < 0x10000) {
            b[0] = (unsigned char)(0xE0 | (c >> 12));
            b[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            b[2] = (unsigned char)(0x80 | (c & 0x3F));
            nb = 3;
        } else {
            b[0] = (unsigned char)(0xF0 | (c >> 18));
            b[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
            b[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            b[3] = (unsigned char)(0x80 | (c & 0x3F));
            nb = 4;
        }
        if (o + nb >= cap) break;
        memcpy(out + o, b, nb);
        o += nb;
    }
    out[o] = '\0';
}

/* The frame walker's describe (sps_frame_walker_t.describe): word w's
 * function (qualified name; 3.10: name), file and line.  0, or -1 for a
 * word that is not ours or names no recorded code object ("?").  Reads
 * the table only: no GIL, no Python, no lock. */
static int py_describe(uint64_t w, char *func, size_t fcap, char *file, size_t filecap,
                       int64_t *line) {
    if (func && fcap) func[0] = '\0';
    if (file && filecap) file[0] = '\0';
    if (line) *line = 0;
    if (!(w & PYS_WORD_TAG) || !atomic_load_explicit(&g_ready, memory_order_acquire))
        return -1;
    uint32_t slot = (uint32_t)(w >> 32) & 0x7FFFFFFFu;
    if (line) *line = (int64_t)(uint32_t)w;
    if (slot == 0 || slot > PYS_SLOTS) return -1;
    const pys_slot_t *s = &g_slots[slot - 1];
    if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_READY) return -1;
    if (!s->fn_kind) return -1;
    if (func) units_to_utf8(g_arena + s->fn_off, s->fn_units, s->fn_kind, func, fcap);
    if (file) {
        if (s->file_kind)
            units_to_utf8(g_arena + s->file_off, s->file_units, s->file_kind, file, filecap);
        else if (filecap > 1) {
            file[0] = '?';
            file[1] = '\0';
        }
    }
    return 0;
}

/* ======================================================================== */
/* Set-up (before any handler runs)                                          */
/* ======================================================================== */

/* Makes the table and the arena (once; never freed: describe may run at
 * any later finalize) and resolves the lazy bindings walk goes through.
 * Under the GIL.  0, or -1 with MemoryError. */
static int sampler_init(void) {
    if (atomic_load_explicit(&g_ready, memory_order_acquire)) return 0;
    /* untouched pages cost nothing: the handler touches them as it fills */
    void *t = mmap(NULL, sizeof(pys_slot_t) * PYS_SLOTS, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (t == MAP_FAILED) {
        PyErr_NoMemory();
        return -1;
    }
    void *a = mmap(NULL, PYS_ARENA_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a == MAP_FAILED) {
        munmap(t, sizeof(pys_slot_t) * PYS_SLOTS);
        PyErr_NoMemory();
        return -1;
    }
    g_slots = (pys_slot_t *)t;
    g_arena = (unsigned char *)a;
    /* libpython is loaded with lazy binding: the first call through its
     * PLT (PyThread_tss_get, pthread_getspecific, _PyCode_CheckLineNumber)
     * runs the dynamic linker's resolver.  Make those first calls here,
     * not in a signal handler.  (This module itself is loaded RTLD_NOW.) */
    (void)PyGILState_GetThisThreadState();
    /* a code object of our own: without a tracer's line array (3.11), so
     * that PyCode_Addr2Line takes its _PyCode_CheckLineNumber call */
    PyCodeObject *co = PyCode_NewEmpty("<sampler warm-up>", "<sampler warm-up>", 1);
    if (co) {
        (void)PyCode_Addr2Line(co, 0);
        Py_DECREF(co);
    } else {
        PyErr_Clear(); /* the bindings then resolve in a handler: still no lock
                          of ours, only the dynamic linker's resolver */
    }
    atomic_store_explicit(&g_ready, 1, memory_order_release);
    return 0;
}

#endif /* PYS_WALKER */

/* The walker sampling_start installs. */
static sps_frame_walker_t walker(void) {
    sps_frame_walker_t w;
    memset(&w, 0, sizeof w);
    w.abi = SPS_FRAME_WALKER_ABI;
    w.walk = py_walk;
    w.describe = py_describe;
    /* a function of the interpreter's own object file (libpython, or the
     * python executable when it is linked statically): native frames there
     * run the Python frames and are shown as those */
    w.runtime_fn = (const void *)(uintptr_t)&PyEval_EvalCode;
    return w;
}

/* ======================================================================== */
/* Module functions                                                          */
/* ======================================================================== */

/* Raises the Python error for the sampler's code rc from call what:
 * MemoryError for SPS_ENOMEM, ValueError for an invalid argument of the
 * caller's (bad_arg), else RuntimeError with the library's message (its
 * line naming the cause, e.g. the program's own SIGPROF handler, when it
 * noted one) and the code's name. */
static PyObject *raise_sampling(int rc, const char *what) {
    if (rc == SPS_ENOMEM) return PyErr_NoMemory();
    const char *why = sps_last_error();
    if (!why || !*why) why = sps_strerror(rc);
    const char *hint = "";
    switch (rc) {
    case SPS_ENOSESSION: hint = " (start a session first: spanscope's setup/profile)"; break;
    case SPS_EMODE: hint = " (an aggregate session keeps no samples)"; break;
    case SPS_EACTIVE: hint = " (sampling already runs: sampling_stop() first)"; break;
    case SPS_ENOTSUP: hint = " (no per-thread CPU-time timers on this platform)"; break;
    default: break;
    }
    return PyErr_Format(PyExc_RuntimeError, "%s: %s%s [%s]", what, why, hint,
                        sps_err_name(rc));
}

PyDoc_STRVAR(sampling_start_doc,
"sampling_start(hz=1000)\n--\n\n"
"Starts the stack sampler of the current session: every thread of the\n"
"process (and those started later) is interrupted hz times per second of\n"
"its own CPU time; each sample keeps the native stack and, for a thread\n"
"running Python, its Python frames (function, file, line), read without\n"
"the GIL (docs/sampling.md).  The samples are written and symbolised by\n"
"the session's finalize.  hz: 1 to 10000.\n"
"Raises ValueError for a bad hz, RuntimeError when there is no session,\n"
"the session is an aggregate one, sampling already runs, the program has\n"
"a SIGPROF handler of its own, or the platform has no per-thread CPU\n"
"timers (the message says which), MemoryError when out of memory.");

static PyObject *py_sampling_start(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    static char *kwlist[] = {"hz", NULL};
    int hz = 1000;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|i:sampling_start", kwlist, &hz)) return NULL;
    if (hz < 1 || hz > 10000)
        return PyErr_Format(PyExc_ValueError,
                            "sampling_start: hz must be 1 to 10000 samples per second "
                            "of CPU time, not %d", hz);
    if (sampler_init()) return NULL;
    sps_frame_walker_t w = walker();
    int rc = sps_sampling_set_walker(&w);
    if (rc) return raise_sampling(rc, "sampling_start (installing the Python frame walker)");
    Py_BEGIN_ALLOW_THREADS
    rc = sps_sampling_start(hz);
    Py_END_ALLOW_THREADS
    if (rc) return raise_sampling(rc, "sampling_start");
    Py_RETURN_NONE;
}

PyDoc_STRVAR(sampling_stop_doc,
"sampling_stop()\n--\n\n"
"Stops the stack sampler (timers deleted, SIGPROF's previous disposition\n"
"restored).  The samples taken stay for the session's finalize, which\n"
"still names their Python frames.  Does nothing when not sampling.");

static PyObject *py_sampling_stop(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_sampling_stop();
    Py_END_ALLOW_THREADS
    if (rc) return raise_sampling(rc, "sampling_stop");
    Py_RETURN_NONE;
}

PyDoc_STRVAR(sampling_hz_doc,
"sampling_hz() -> int\n--\n\n"
"The rate the stack sampler runs at (samples per second of each thread's\n"
"CPU time), 0 when it does not run.");

static PyObject *py_sampling_hz(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    return PyLong_FromLong(sps_sampling_hz());
}

PyDoc_STRVAR(sampling_stats_doc,
"sampling_stats() -> dict\n--\n\n"
"The sampler's counts since it started: taken (samples written), lost\n"
"(a full ring), walk_faults (Python frame walks abandoned on a memory\n"
"fault: the sample kept its native frames), threads (threads sampled);\n"
"and the Python walker's, over the process's life: python_code_objects\n"
"(code objects recorded), python_frames_unnamed (frames written as \"?\":\n"
"no room left in the code table), python_names_not_copied (code objects\n"
"whose names found the name arena full: also \"?\").");

static PyObject *py_sampling_stats(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    uint64_t taken = 0, lost = 0, faults = 0, threads = 0;
    sps_sampling_stats(&taken, &lost, &faults, &threads);
    return Py_BuildValue(
        "{sKsKsKsKsKsKsK}", "taken", (unsigned long long)taken, "lost",
        (unsigned long long)lost, "walk_faults", (unsigned long long)faults, "threads",
        (unsigned long long)threads, "python_code_objects",
        (unsigned long long)atomic_load(&g_codes), "python_frames_unnamed",
        (unsigned long long)atomic_load(&g_unnamed), "python_names_not_copied",
        (unsigned long long)atomic_load(&g_nocopy));
}

/* ---- For the tests ---- */

#define PYS_TEST_MAX 4096

static PyObject *words_list(const uint64_t *w, int n) {
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong((unsigned long long)w[i]);
        if (!v) Py_CLEAR(l);
        else PyList_SET_ITEM(l, i, v);
    }
    return l;
}

static int test_max(int max) {
    if (max < 1 || max > PYS_TEST_MAX) {
        PyErr_Format(PyExc_ValueError, "max must be 1 to %d, not %d", PYS_TEST_MAX, max);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(sampler_walk_doc,
"_sampler_walk(max=256) -> list[int]\n--\n\n"
"For the tests: runs the Python frame walker (the one the SIGPROF handler\n"
"runs) in the calling thread now and returns its words, innermost frame\n"
"first (_sampler_describe names them).  max: 1 to 4096.");

static PyObject *py_sampler_walk(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    static char *kwlist[] = {"max", NULL};
    int max = 256;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|i:_sampler_walk", kwlist, &max)) return NULL;
    if (test_max(max) || sampler_init()) return NULL;
    uint64_t w[PYS_TEST_MAX];
    int n = py_walk(w, max);
    return words_list(w, n);
}

PyDoc_STRVAR(sampler_describe_doc,
"_sampler_describe(word) -> (function, file, line) or None\n--\n\n"
"For the tests: the frame walker's describe (the one finalize runs) for a\n"
"word of _sampler_walk or _sampler_probe_thread; None where it gives \"?\"\n"
"(not a word of the walker's, or a code object the table had no room for).");

static PyObject *py_sampler_describe(PyObject *mod, PyObject *arg) {
    (void)mod;
    unsigned long long w = PyLong_AsUnsignedLongLong(arg);
    if (w == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    char func[1024], file[4096];
    int64_t line = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS /* as at finalize: the GIL is not needed */
    rc = py_describe((uint64_t)w, func, sizeof func, file, sizeof file, &line);
    Py_END_ALLOW_THREADS
    if (rc) Py_RETURN_NONE;
    return Py_BuildValue("(s#s#L)", func, (Py_ssize_t)strlen(func), file,
                         (Py_ssize_t)strlen(file), (long long)line);
}

/* _sampler_probe_thread: one walk in another thread's own signal handler,
 * as the sampler does it, on a real-time signal sent once, with a fault
 * guard like the sampler's (sigsetjmp in the handler, siglongjmp from a
 * SIGSEGV/SIGBUS handler installed for the probe's time). */
static uint64_t g_probe_words[PYS_TEST_MAX];
static volatile int g_probe_max;
static _Atomic int g_probe_n = -1;      /* -1 waiting, -2 faulted, else n */
static volatile sig_atomic_t g_probe_in_walk;
static pthread_t g_probe_target;
static sigjmp_buf g_probe_jb;
static struct sigaction g_old_segv, g_old_bus;
static int g_probe_busy;                /* under the GIL */

static void probe_handler(int sig) {
    (void)sig;
    int saved = errno;
    int n;
    if (sigsetjmp(g_probe_jb, 1) == 0) {
        g_probe_in_walk = 1;
        n = py_walk(g_probe_words, g_probe_max);
    } else {
        n = -2; /* the walk faulted: dropped, as the sampler drops it */
    }
    g_probe_in_walk = 0;
    atomic_store_explicit(&g_probe_n, n, memory_order_release);
    errno = saved;
}

static void probe_fault(int sig) {
    if (g_probe_in_walk && pthread_equal(pthread_self(), g_probe_target))
        siglongjmp(g_probe_jb, 1);
    /* not the probe's fault: the previous disposition, and the faulting
     * instruction runs again under it */
    sigaction(sig, sig == SIGBUS ? &g_old_bus : &g_old_segv, NULL);
}

PyDoc_STRVAR(sampler_probe_doc,
"_sampler_probe_thread(ident, max=256, timeout=5.0) -> list[int] or None\n--\n\n"
"For the tests: interrupts the live thread ident (threading.get_ident(),\n"
"a pthread_t) with a real-time signal whose handler runs the Python frame\n"
"walker in that thread, as the SIGPROF handler does, whether or not it\n"
"holds the GIL, and returns the words (innermost first); None when the\n"
"walk hit a memory fault (caught and dropped, as the sampler does).\n"
"Raises TimeoutError when the handler did not run within timeout seconds,\n"
"RuntimeError while another probe runs.");

static PyObject *py_sampler_probe_thread(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    static char *kwlist[] = {"ident", "max", "timeout", NULL};
    unsigned long ident;
    int max = 256;
    double timeout = 5.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "k|id:_sampler_probe_thread", kwlist, &ident,
                                     &max, &timeout))
        return NULL;
    if (test_max(max) || sampler_init()) return NULL;
    if (!(timeout > 0 && timeout <= 3600))
        return PyErr_Format(PyExc_ValueError, "timeout must be > 0 and <= 3600 s");
    if (g_probe_busy) return PyErr_Format(PyExc_RuntimeError, "another probe runs");
    g_probe_busy = 1;
    int sig = SIGRTMIN + 6;
    struct sigaction sa, fa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = probe_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    memset(&fa, 0, sizeof fa);
    fa.sa_handler = probe_fault;
    sigemptyset(&fa.sa_mask);
    fa.sa_flags = SA_NODEFER;
    g_probe_target = (pthread_t)ident;
    g_probe_max = max;
    atomic_store(&g_probe_n, -1);
    if (sigaction(SIGSEGV, &fa, &g_old_segv) || sigaction(SIGBUS, &fa, &g_old_bus) ||
        sigaction(sig, &sa, &old)) {
        int e = errno;
        sigaction(SIGSEGV, &g_old_segv, NULL);
        sigaction(SIGBUS, &g_old_bus, NULL);
        g_probe_busy = 0;
        errno = e;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    int err, n = -1;
    Py_BEGIN_ALLOW_THREADS
    err = pthread_kill((pthread_t)ident, sig);
    if (!err) {
        struct timespec step = {0, 200000}; /* 0.2 ms */
        for (double waited = 0; waited < timeout; waited += 0.0002) {
            n = atomic_load_explicit(&g_probe_n, memory_order_acquire);
            if (n != -1) break;
            nanosleep(&step, NULL);
        }
        n = atomic_load_explicit(&g_probe_n, memory_order_acquire);
    }
    Py_END_ALLOW_THREADS
    if (n != -1 || err) { /* else the handler may still run: it stays */
        sigaction(sig, &old, NULL);
        sigaction(SIGSEGV, &g_old_segv, NULL);
        sigaction(SIGBUS, &g_old_bus, NULL);
    }
    g_probe_busy = 0;
    if (err) {
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    if (n == -1)
        return PyErr_Format(PyExc_TimeoutError, "thread %lu did not run the probe's signal "
                            "handler within %.3g s", ident, timeout);
    if (n == -2) Py_RETURN_NONE;
    return words_list(g_probe_words, n);
}

static PyMethodDef sampler_methods[] = {
    {"sampling_start", (PyCFunction)(void (*)(void))py_sampling_start,
     METH_VARARGS | METH_KEYWORDS, sampling_start_doc},
    {"sampling_stop", py_sampling_stop, METH_NOARGS, sampling_stop_doc},
    {"sampling_hz", py_sampling_hz, METH_NOARGS, sampling_hz_doc},
    {"sampling_stats", py_sampling_stats, METH_NOARGS, sampling_stats_doc},
    {"_sampler_walk", (PyCFunction)(void (*)(void))py_sampler_walk,
     METH_VARARGS | METH_KEYWORDS, sampler_walk_doc},
    {"_sampler_describe", py_sampler_describe, METH_O, sampler_describe_doc},
    {"_sampler_probe_thread", (PyCFunction)(void (*)(void))py_sampler_probe_thread,
     METH_VARARGS | METH_KEYWORDS, sampler_probe_doc},
    {NULL, NULL, 0, NULL},
};

/* Adds the sampling functions to the module m (PyInit__ext).  0, or -1
 * with a Python error.  The table is made by the first sampling_start (or
 * test walk), not here: importing the module costs nothing. */
int sps__py_sampler_init(PyObject *m) {
    return PyModule_AddFunctions(m, sampler_methods);
}
