/* _ext.c -- the CPython extension spanscope._ext: a thin face over the C
 * core.  This file is the module itself: its init (PyInit__ext), the
 * session functions (setup, finalize, pause, the session's tables and
 * counters, the environment's settings...), the library's errors as
 * Python exceptions, and the thread namer.
 *
 * The rest is a file per face and job, each adding its objects to the
 * module from its sps__py_*_init (called below; _convert.h lists them and
 * what the files share): _regions.c (scope-profiler's recording objects,
 * everything that runs per call: Region, the registry, region_lookup,
 * ProfiledFunction, the recursive tracer), _results.c (the reader's model
 * and everything that reads files), _profiler.c (the torch-style face's C
 * half), _export.c (the exports), _sampler.c (stack sampling and the
 * CPython frame walker).  The Python package adds the API's
 * shape (ProfileManager, setup options, numpy views) on top.
 *
 * It uses only the public C API and links the shared libspanscope (shipped
 * next to it), so C code in the same process that links libspanscope
 * records into the same session.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>

#include "_convert.h"
#include "spanscope.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================== */
/* Session functions                                                         */
/* ======================================================================== */

/* (_convert.h) */
PyObject *sps__py_raise_os(int rc, const char *msg, const char *path) {
    int os_errno = sps_last_errno();
    if (os_errno && *sps_last_error()) msg = sps_last_error();
    if (!os_errno) os_errno = rc == SPS_EPATH ? EACCES : EIO;
    PyObject *p = path ? PyUnicode_DecodeFSDefault(path) : Py_None;
    if (path && !p) return NULL;
    if (!path) Py_INCREF(p);
    PyObject *e = PyObject_CallFunction(PyExc_OSError, "isO", os_errno, msg, p);
    Py_DECREF(p);
    if (e) {
        PyErr_SetObject((PyObject *)Py_TYPE(e), e);
        Py_DECREF(e);
    }
    return NULL;
}

/* (_convert.h) */
PyObject *sps__py_raise_sps(int rc, const char *path) {
    if (rc == SPS_EPATH || rc == SPS_EIO) return sps__py_raise_os(rc, sps_strerror(rc), path);
    if (rc == SPS_EHDF5) {
        PyObject *p = path ? PyUnicode_DecodeFSDefault(path) : Py_None;
        if (path && !p) return NULL;
        if (!path) Py_INCREF(p);
        PyObject *e = PyObject_CallFunction(PyExc_OSError, "isO", 5,
                                            sps_strerror(rc), p);
        Py_DECREF(p);
        if (e) {
            PyErr_SetObject(PyExc_OSError, e);
            Py_DECREF(e);
        }
        return NULL;
    }
    if (rc == SPS_EINVAL) return PyErr_Format(PyExc_ValueError, "%s", sps_strerror(rc));
    if (rc == SPS_ENOMEM) return PyErr_NoMemory();
    return PyErr_Format(PyExc_RuntimeError, "%s (%s)", sps_strerror(rc), sps_err_name(rc));
}

static PyObject *ext_setup(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    static char *kwlist[] = {"file_path", "aggregate", "memory_limit", "chunk_size",
                             "overflow", "spill_dir", "label", "compress_threshold",
                             "rank", "size", "local", "track", "counters", NULL};
    sps_config_t c = SPS_CONFIG_INIT;
    const char *file_path = NULL, *spill_dir = NULL, *label = NULL, *counters = NULL;
    Py_ssize_t mem = 0, chunk = 0;
    int overflow = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|z$pnnizzliipiz", kwlist, &file_path,
                                     &c.aggregate, &mem, &chunk, &overflow, &spill_dir,
                                     &label, &c.compress_threshold, &c.rank, &c.size,
                                     &c.local, &c.track, &counters))
        return NULL;
    /* track: SPS_TRACK_MEMORY (1) | SPS_TRACK_COUNTERS (2); counters: the
     * perf_event names (sps_set_counters), with SPS_TRACK_COUNTERS */
    if (c.track & SPS_TRACK_COUNTERS) {
        int crc = sps_set_counters(counters);
        if (crc) return PyErr_Format(PyExc_ValueError,
                                     "counters=%s: an unknown perf event name (perf list, "
                                     "or libpfm4's names)", counters ? counters : "''");
    }
    if (mem < 0 || chunk < 0) return PyErr_Format(PyExc_ValueError, "sizes must be >= 0");
    c.file_path = file_path;
    c.memory_limit = (size_t)mem;
    c.chunk_size = (size_t)chunk;
    c.overflow = (sps_overflow_t)overflow;
    c.spill_dir = spill_dir;
    c.label = label;
    int rc = sps_setup(&c);
    if (rc) return sps__py_raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

/* finalize(path, verbose) -> table text ("" unless verbose). */
static PyObject *ext_finalize(PyObject *mod, PyObject *args) {
    (void)mod;
    const char *path = NULL;
    int verbose = 0;
    if (!PyArg_ParseTuple(args, "zp", &path, &verbose)) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = verbose ? open_memstream(&buf, &len) : NULL;
    if (verbose && !fp) return PyErr_NoMemory();
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_finalize_print(path, fp);
    Py_END_ALLOW_THREADS
    if (fp) fclose(fp);
    PyObject *text = rc ? NULL : PyUnicode_DecodeUTF8(buf ? buf : "", (Py_ssize_t)len, "replace");
    free(buf);
    if (rc) return sps__py_raise_sps(rc, path);
    return text;
}



/* The pooled paths of sps_finalize_paths as {"names": [str], "paths":
 * [(parent, name, calls, total_ns, duration_sum_ns, self_ns, min_ns,
 * max_ns, first_start_ns, first_ns, last_end_ns, last_ns, coverage_ns,
 * recursive)]}, or None when not available.  NULL on error. */
static PyObject *period_paths_dict(const sps_period_paths_t *pp) {
    if (!pp->available) Py_RETURN_NONE;
    PyObject *names = sps__py_utf8_list(pp->names, pp->nnames);
    PyObject *paths = names ? PyList_New((Py_ssize_t)pp->npaths) : NULL;
    for (size_t i = 0; paths && i < pp->npaths; i++) {
        const sps_call_path_t *x = &pp->paths[i];
        PyObject *t = Py_BuildValue("(iIKLLLLLLLLLLi)", x->parent, x->name,
                                    (unsigned long long)x->calls, (long long)x->total_ns,
                                    (long long)x->duration_sum_ns, (long long)x->self_ns,
                                    (long long)x->min_ns, (long long)x->max_ns,
                                    (long long)x->first_start_ns, (long long)x->first_ns,
                                    (long long)x->last_end_ns, (long long)x->last_ns,
                                    (long long)x->coverage_ns, x->recursive);
        if (!t) Py_CLEAR(paths);
        else PyList_SET_ITEM(paths, (Py_ssize_t)i, t);
    }
    PyObject *d = paths ? Py_BuildValue("{sOsO}", "names", names, "paths", paths) : NULL;
    Py_XDECREF(names);
    Py_XDECREF(paths);
    return d;
}

/* finalize_paths(path, verbose) -> (table text, paths): finalize (as
 * finalize()) and the period pooled by call path (period_paths_dict; None
 * in a distributed or aggregate session), for print_summary's table.
 * verbose: the C table is made too (its text returned) and a long write
 * shows its progress line, as finalize(path, True). */
static PyObject *ext_finalize_paths(PyObject *mod, PyObject *args) {
    (void)mod;
    const char *path = NULL;
    int verbose = 0;
    if (!PyArg_ParseTuple(args, "zp", &path, &verbose)) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = verbose ? open_memstream(&buf, &len) : NULL;
    if (verbose && !fp) return PyErr_NoMemory();
    sps_period_paths_t pp;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_finalize_paths(path, fp, &pp);
    Py_END_ALLOW_THREADS
    if (fp) fclose(fp);
    PyObject *out = NULL;
    if (rc) {
        sps__py_raise_sps(rc, path);
    } else {
        PyObject *text = PyUnicode_DecodeUTF8(buf ? buf : "", (Py_ssize_t)len, "replace");
        PyObject *paths = text ? period_paths_dict(&pp) : NULL;
        if (paths) out = PyTuple_Pack(2, text, paths);
        Py_XDECREF(text);
        Py_XDECREF(paths);
    }
    sps_period_paths_free(&pp);
    free(buf);
    return out;
}

static PyObject *ext_shutdown(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    sps_shutdown();
    Py_RETURN_NONE;
}

static PyObject *ext_is_active(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return PyBool_FromLong(sps_is_active());
}

static PyObject *ext_now_ns(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return PyLong_FromLongLong(sps_now_ns());
}

static PyObject *ext_session_start_ns(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return PyLong_FromLongLong(sps_session_start_ns());
}

static PyObject *region_list(int recorded) {
    size_t n = recorded ? sps_regions_recorded(NULL, 0) : sps_regions_registered(NULL, 0);
    sps_region_t *v = malloc((n + 1) * sizeof *v);
    if (!v) return PyErr_NoMemory();
    size_t m = recorded ? sps_regions_recorded(v, n) : sps_regions_registered(v, n);
    if (m > n) m = n;
    PyObject *out = PyList_New(0);
    for (size_t i = 0; out && i < m; i++) {
        PyObject *id = PyLong_FromUnsignedLong(v[i]);
        if (!id || PyList_Append(out, id)) Py_CLEAR(out);
        Py_XDECREF(id);
    }
    free(v);
    return out;
}

static PyObject *ext_recorded_ids(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return region_list(1);
}

static PyObject *ext_summary(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) return PyErr_NoMemory();
    int rc = sps_print_summary(fp);
    fclose(fp);
    PyObject *s = rc ? NULL : PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
    free(buf);
    return rc ? sps__py_raise_sps(rc, NULL) : s;
}

/* counters() -> {'dropped': n, 'misuse': n, 'spill_errno': errno or 0,
 * 'spill_error': the spill failure's cause in words or None}
 * (sps_dropped, sps_misuse_count, sps_spill_error). */
static PyObject *ext_counters(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    char why[512];
    int spill = sps_spill_error(why, sizeof why);
    PyObject *text = spill ? PyUnicode_DecodeUTF8(why, (Py_ssize_t)strlen(why), "replace")
                           : Py_NewRef(Py_None);
    if (!text) return NULL;
    return Py_BuildValue("{sKsKsisN}", "dropped", (unsigned long long)sps_dropped(), "misuse",
                         (unsigned long long)sps_misuse_count(), "spill_errno", spill,
                         "spill_error", text);
}

/* sps_query_info as a dict: what the per-call queries decoded and keep. */
static PyObject *ext_query_info(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    sps_query_info_t q;
    sps_query_info(&q);
    return Py_BuildValue("{sKsKsKsK}", "records_read", (unsigned long long)q.records_read,
                         "rebuilds", (unsigned long long)q.rebuilds, "regions",
                         (unsigned long long)q.regions, "bytes", (unsigned long long)q.bytes);
}

static PyObject *ext_region_name(PyObject *mod, PyObject *id) {
    (void)mod;
    unsigned long r = PyLong_AsUnsignedLong(id);
    if (PyErr_Occurred()) return NULL;
    const char *s = r <= UINT32_MAX ? sps_region_name((sps_region_t)r) : NULL;
    if (!s) Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

/* pause() / resume(): sps_pause / sps_resume; RuntimeError without a
 * session. */
static PyObject *ext_pause(PyObject *mod, PyObject *on) {
    (void)mod;
    int t = PyObject_IsTrue(on);
    if (t < 0) return NULL;
    int rc = t ? sps_pause() : sps_resume();
    if (rc) return sps__py_raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

static PyObject *ext_is_paused(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return PyBool_FromLong(sps_is_paused());
}

/* The emitters by name (spanscope.h, SPS_EMIT_*; docs/nvtx-itt.md). */
static const struct {
    const char *name;
    unsigned bit;
} emit_names[] = {{"nvtx", SPS_EMIT_NVTX}, {"itt", SPS_EMIT_ITT}};
#define N_EMIT_NAMES (sizeof emit_names / sizeof emit_names[0])

/* emit_set(name, on) -> bool: turns emitter name ("nvtx", "itt") on or
 * off, session or not; returns whether it was on before (to restore). */
static PyObject *ext_emit_set(PyObject *mod, PyObject *args) {
    (void)mod;
    const char *name;
    int on;
    if (!PyArg_ParseTuple(args, "sp:emit_set", &name, &on)) return NULL;
    unsigned bit = 0;
    for (size_t i = 0; i < N_EMIT_NAMES; i++)
        if (strcmp(name, emit_names[i].name) == 0) bit = emit_names[i].bit;
    if (!bit)
        return PyErr_Format(PyExc_ValueError, "unknown emitter '%s' (known: 'nvtx', 'itt')", name);
    int was = (sps_emit_active() & bit) != 0;
    int rc = sps_emit_set(bit, on);
    if (rc == SPS_ENOTSUP)
        return PyErr_Format(PyExc_RuntimeError,
                            "%s emission is not built into this spanscope (%s): %s", name,
                            sps_err_name(rc),
                            bit == SPS_EMIT_NVTX
                                ? "it was built without the CUDA toolkit's nvtx3 headers"
                                : "it was built without ittnotify");
    if (rc) return sps__py_raise_sps(rc, NULL);
    return PyBool_FromLong(was);
}

/* The names of the emitters on now (which 0) or built into this library
 * (which 1), as a list. */
static PyObject *emit_list(unsigned bits) {
    PyObject *l = PyList_New(0);
    for (size_t i = 0; l && i < N_EMIT_NAMES; i++) {
        if (!(bits & emit_names[i].bit)) continue;
        PyObject *s = PyUnicode_FromString(emit_names[i].name);
        if (!s || PyList_Append(l, s)) {
            Py_XDECREF(s);
            Py_CLEAR(l);
            break;
        }
        Py_DECREF(s);
    }
    return l;
}
static PyObject *ext_emit_active(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return emit_list(sps_emit_active());
}
static PyObject *ext_emit_available(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return emit_list(sps_emit_available());
}

/* open_calls_all() -> [(thread index, depth, name), ...]: the calls open
 * on every thread of the session, each thread's outermost first
 * (sps_open_calls_all); [] without a session, None in an aggregate
 * session (only this thread's are known there: open_calls()). */
static PyObject *ext_open_calls_all(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    for (;;) {
        int64_t n = sps_open_calls_all(NULL, 0);
        if (n == SPS_EMODE) Py_RETURN_NONE;
        if (n < 0) return sps__py_raise_sps((int)n, NULL);
        size_t cap = (size_t)n + 8; /* room for calls begun meanwhile */
        sps_open_call_t *v = malloc(cap * sizeof *v);
        if (!v) return PyErr_NoMemory();
        int64_t m = sps_open_calls_all(v, cap);
        if (m < 0 || (size_t)m > cap) { /* the session changed, or more opened */
            free(v);
            if (m < 0 && m != SPS_EMODE) return sps__py_raise_sps((int)m, NULL);
            continue;
        }
        PyObject *l = PyList_New((Py_ssize_t)m);
        for (int64_t i = 0; l && i < m; i++) {
            const char *nm = sps_region_name(v[i].region);
            PyObject *o = Py_BuildValue("(LIs)", (long long)v[i].thread,
                                        (unsigned int)v[i].depth, nm ? nm : "");
            if (!o) Py_CLEAR(l);
            else PyList_SET_ITEM(l, (Py_ssize_t)i, o);
        }
        free(v);
        return l;
    }
}

/* open_calls() -> names of the calls open on this thread, outermost first
 * (sps_open_calls). */
static PyObject *ext_open_calls(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    for (;;) {
        size_t n = sps_open_calls(NULL, 0);
        sps_region_t *v = malloc((n + 1) * sizeof *v);
        if (!v) return PyErr_NoMemory();
        size_t m = sps_open_calls(v, n);
        if (m > n) { /* more opened in between (another thread: never; safe) */
            free(v);
            continue;
        }
        PyObject *l = PyList_New((Py_ssize_t)m);
        for (size_t i = 0; l && i < m; i++) {
            const char *nm = sps_region_name(v[i]);
            PyObject *o = PyUnicode_DecodeUTF8(nm ? nm : "", (Py_ssize_t)strlen(nm ? nm : ""),
                                               "replace");
            if (!o) Py_CLEAR(l);
            else PyList_SET_ITEM(l, (Py_ssize_t)i, o);
        }
        free(v);
        return l;
    }
}

/* A tri-state of sps_env_t (-1 unset) as None / False / True. */
static PyObject *tri(int v) {
    if (v < 0) Py_RETURN_NONE;
    return PyBool_FromLong(v);
}

static PyObject *str_or_none(const char *s) {
    if (!s) Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(s);
}

/* env_read() -> the environment's settings (sps_env_read: the one table of
 * src/api/env.c, the C auto-setup's reader) as a dict of setup() keywords,
 * only those set, plus "sample_hz" (SPANSCOPE_SAMPLE_HZ, when not 0: the
 * caller starts the sampler) and "unknown_variables" (the SPANSCOPE_*
 * variables no setting has, when there are: the caller warns).  The file SPANSCOPE_CONFIG names is
 * "config_path" (setup() reads it); the file is checked here by the C
 * core's reader (sps_env_resolve).  ValueError for a bad variable or file. */
static PyObject *ext_env_read(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    sps_env_t e;
    char err[512] = "";
    int rc = sps_env_read(&e, err, sizeof err);
    if (rc) return PyErr_Format(PyExc_ValueError, "%s", err[0] ? err : sps_strerror(rc));
    if (e.config_path && *e.config_path) {
        /* the file, read by the C core's strict reader as the C auto-setup
         * reads it: what it refuses (outside the TOML subset, an unknown
         * key, a wrong type) the Python face refuses too, in the same
         * words; the values come from setup(config_path=...).  Not
         * SPS_ENOTSUP (hdf5_compression lzf/zstd): Python's own check
         * raises FeatureNotAvailableError for it. */
        sps_env_t f;
        char ferr[512] = "";
        int frc = sps_env_resolve(&f, ferr, sizeof ferr);
        if (frc && frc != SPS_ENOTSUP)
            return PyErr_Format(PyExc_ValueError, "%s", ferr[0] ? ferr : sps_strerror(frc));
    }
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    int bad = 0;
    if (e.has_output) bad |= sps__py_put(d, "output", str_or_none(e.cfg.file_path));
    if (!bad && e.cfg.label) bad |= sps__py_put(d, "label", str_or_none(e.cfg.label));
    if (!bad && e.config_path) bad |= sps__py_put(d, "config_path", str_or_none(e.config_path));
    if (!bad && e.enable_tags) bad |= sps__py_put(d, "enable_tags", str_or_none(e.enable_tags));
    if (!bad && e.recursive >= 0) bad |= sps__py_put(d, "recursive_profile", tri(e.recursive));
    if (!bad && e.auto_finalize >= 0) bad |= sps__py_put(d, "auto_finalize", tri(e.auto_finalize));
    if (!bad && e.deactivate >= 0) bad |= sps__py_put(d, "deactivate_profiling", tri(e.deactivate));
    if (!bad && e.aggregate >= 0) bad |= sps__py_put(d, "aggregation_mode", tri(e.aggregate));
    if (!bad && e.cfg.memory_limit)
        bad |= sps__py_put(d, "memory_limit", PyLong_FromSize_t(e.cfg.memory_limit));
    if (!bad && e.cfg.sample_hz)
        bad |= sps__py_put(d, "sample_hz", PyLong_FromLong(e.cfg.sample_hz));
    /* the SPANSCOPE_* variables no setting has (the caller warns) */
    extern char **environ;
    PyObject *unknown = bad ? NULL : PyList_New(0);
    bad |= !unknown;
    for (char **ev = environ; !bad && ev && *ev; ev++) {
        if (strncmp(*ev, "SPANSCOPE_", 10)) continue;
        size_t n = strcspn(*ev, "=");
        int known = 0;
        for (size_t i = 0; !known && sps_env_variable(i); i++)
            known = strlen(sps_env_variable(i)) == n && !strncmp(sps_env_variable(i), *ev, n);
        if (known) continue;
        PyObject *name = PyUnicode_DecodeFSDefaultAndSize(*ev, (Py_ssize_t)n);
        bad |= !name || PyList_Append(unknown, name) < 0;
        Py_XDECREF(name);
    }
    if (!bad && PyList_GET_SIZE(unknown)) bad |= sps__py_put(d, "unknown_variables", unknown);
    else Py_XDECREF(unknown);
    if (bad) Py_CLEAR(d);
    return d;
}

/* config_check(path): the TOML file at path checked by the C core's strict
 * reader (sps_config_check), so that setup(config_path=...) refuses what
 * the C auto-setup refuses, in its words.  None, or ValueError (OSError
 * when the file cannot be read).  SPS_ENOTSUP (a value this build lacks,
 * hdf5_compression lzf/zstd) passes: Python's own check raises
 * FeatureNotAvailableError for it. */
static PyObject *ext_config_check(PyObject *mod, PyObject *arg) {
    (void)mod;
    PyObject *b = NULL;
    if (!PyUnicode_FSConverter(arg, &b)) return NULL;
    char err[512] = "";
    int rc = sps_config_check(PyBytes_AS_STRING(b), err, sizeof err);
    Py_DECREF(b);
    if (rc == 0 || rc == SPS_ENOTSUP) Py_RETURN_NONE;
    return PyErr_Format(rc == SPS_EIO ? PyExc_OSError : PyExc_ValueError, "%s",
                        err[0] ? err : sps_strerror(rc));
}

/* A region id argument (an int that fits sps_region_t). */
static int region_id_arg(PyObject *o, sps_region_t *out) {
    unsigned long v = PyLong_AsUnsignedLong(o);
    if (PyErr_Occurred()) return -1;
    if (v > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "region id out of range");
        return -1;
    }
    *out = (sps_region_t)v;
    return 0;
}

/* region_set_source(id, file, line, text): sps_region_set_source (file
 * and text may be None). */
static PyObject *ext_region_set_source(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *ido;
    const char *file, *text;
    long long line;
    if (!PyArg_ParseTuple(args, "OzLz", &ido, &file, &line, &text)) return NULL;
    sps_region_t r;
    if (region_id_arg(ido, &r)) return NULL;
    int rc = sps_region_set_source(r, file, line, text);
    if (rc) return sps__py_raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

/* region_set_tags(id, tags_json): sps_region_set_tags. */
static PyObject *ext_region_set_tags(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *ido;
    const char *tags;
    if (!PyArg_ParseTuple(args, "Oz", &ido, &tags)) return NULL;
    sps_region_t r;
    if (region_id_arg(ido, &r)) return NULL;
    int rc = sps_region_set_tags(r, tags);
    if (rc) return sps__py_raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

/* region_set_event_metadata(id, json, ncalls): sps_region_set_event_metadata. */
static PyObject *ext_region_set_event_metadata(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *ido;
    const char *json;
    unsigned long long n;
    if (!PyArg_ParseTuple(args, "OzK", &ido, &json, &n)) return NULL;
    sps_region_t r;
    if (region_id_arg(ido, &r)) return NULL;
    int rc = sps_region_set_event_metadata(r, json, n);
    if (rc) return sps__py_raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

/* tasks_set(rows): sps_tasks_set from a sequence of tuples (index,
 * thread_index, created_ns, done_ns, steps, running_ns, suspended_ns,
 * kind, name, coro_name). */
static PyObject *ext_tasks_set(PyObject *mod, PyObject *rows) {
    (void)mod;
    PyObject *seq = PySequence_Fast(rows, "tasks_set() needs a sequence of tuples");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    sps_task_t *t = calloc(n ? (size_t)n : 1, sizeof *t);
    int ok = t != NULL;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        sps_task_t *x = &t[i];
        long long v[7];
        ok = PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "LLLLLLLsss;a task row",
                              &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &x->kind,
                              &x->name, &x->coro_name);
        x->index = v[0], x->thread_index = v[1], x->created_ns = v[2], x->done_ns = v[3];
        x->steps = v[4], x->running_ns = v[5], x->suspended_ns = v[6];
    }
    int rc = ok ? sps_tasks_set(t, (size_t)n) : 0; /* copies the strings */
    free(t);
    Py_DECREF(seq);
    if (!ok) return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    if (rc) return sps__py_raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

/* metadata_set(key, value): sps_metadata_set (value None removes). */
static PyObject *ext_metadata_set(PyObject *mod, PyObject *args) {
    (void)mod;
    const char *key, *value;
    if (!PyArg_ParseTuple(args, "sz", &key, &value)) return NULL;
    int rc = sps_metadata_set(key, value);
    if (rc) return sps__py_raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

/* task_steps_set(buffer): sps_task_steps_set from a buffer of int64
 * (array('q')), four per step: task, thread, start_ns, end_ns. */
static PyObject *ext_task_steps_set(PyObject *mod, PyObject *buf) {
    (void)mod;
    Py_buffer v;
    if (PyObject_GetBuffer(buf, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)) return NULL;
    int ok = v.itemsize == 8 && v.len % (4 * 8) == 0 && v.format &&
             (v.format[0] == 'q' || v.format[0] == 'l');
    int rc = 0;
    if (ok) {
        sps_task_step_t *steps = malloc(v.len ? (size_t)v.len : 1); /* 4 int64 each */
        if (!steps) {
            PyBuffer_Release(&v);
            return PyErr_NoMemory();
        }
        memcpy(steps, v.buf, (size_t)v.len);
        Py_BEGIN_ALLOW_THREADS
        rc = sps_task_steps_set(steps, (size_t)v.len / sizeof *steps);
        Py_END_ALLOW_THREADS
        free(steps);
    }
    PyBuffer_Release(&v);
    if (!ok)
        return PyErr_Format(PyExc_TypeError, "task_steps_set() needs int64 items, 4 per step");
    if (rc) return sps__py_raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

/* ======================================================================== */
/* Thread names: a Python thread is named after threading's name             */
/* ======================================================================== */

/* The core's namer (sps_set_thread_namer): on a thread's first record, if
 * the thread holds the GIL and threading knows it, its threading name
 * ("MainThread", "w0", "ThreadPoolExecutor-0_1") becomes its name in every
 * view -- the pthread name of a Python thread is the interpreter's
 * ("python").  Runs no Python code of threading's (the thread object is
 * found in threading._active by ident, its _name is an instance
 * attribute), so the recursive tracer does not see it; were a subclass's
 * _name a property that records, the core does not ask again.  A pending
 * exception is kept.  Threads started by C code (threading's
 * _DummyThread, or unknown to threading) keep their pthread names. */
static void py_thread_namer(void) {
    if (!Py_IsInitialized() || !PyGILState_Check()) return;
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    PyObject *name_s = PyUnicode_FromString("threading");
    PyObject *mod = name_s ? PyImport_GetModule(name_s) : NULL;
    Py_XDECREF(name_s);
    PyObject *active = mod ? PyObject_GetAttrString(mod, "_active") : NULL;
    PyObject *dummy = mod ? PyObject_GetAttrString(mod, "_DummyThread") : NULL;
    PyObject *key = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
    PyObject *thread = (active && key && PyDict_Check(active))
                           ? PyDict_GetItemWithError(active, key) : NULL; /* borrowed */
    if (thread && dummy && PyType_Check(dummy) &&
        !PyObject_TypeCheck(thread, (PyTypeObject *)dummy)) {
        PyObject *name = PyObject_GetAttrString(thread, "_name");
        const char *utf8 = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        if (utf8 && *utf8) sps_thread_set_name(utf8);
        Py_XDECREF(name);
    }
    Py_XDECREF(key);
    Py_XDECREF(dummy);
    Py_XDECREF(active);
    Py_XDECREF(mod);
    PyErr_Restore(exc_type, exc_value, exc_tb); /* and drops any error of ours */
}

/* ======================================================================== */
/* Device collectors (spanscope.h sps_device_*; docs/device.md)             */
/* ======================================================================== */

/* device_available(what) -> None when the collectors of what (DEVICE_*
 * bits) can start here, else the C core's one line saying why not (no
 * NVIDIA driver, no libcupti, built without the collector...).  ValueError
 * for a what the core does not know. */
static PyObject *ext_device_available(PyObject *mod, PyObject *args) {
    (void)mod;
    unsigned what;
    if (!PyArg_ParseTuple(args, "I:device_available", &what)) return NULL;
    int rc = sps_device_available(what);
    if (!rc) Py_RETURN_NONE;
    if (rc == SPS_EINVAL)
        return PyErr_Format(PyExc_ValueError, "device_available(%u): unknown device collector",
                            what);
    const char *why = sps_last_error();
    return PyUnicode_FromString(why && *why ? why : sps_strerror(rc));
}

/* device_start(what): starts the collectors of what for the session open
 * now (or the next one).  RuntimeError with the C core's line when they
 * cannot start (SPS_ENOTSUP; SPS_EACTIVE: on already, or another CUPTI
 * subscriber), ValueError for an unknown what. */
static PyObject *ext_device_start(PyObject *mod, PyObject *args) {
    (void)mod;
    unsigned what;
    if (!PyArg_ParseTuple(args, "I:device_start", &what)) return NULL;
    int rc;
    char why[512] = "";
    Py_BEGIN_ALLOW_THREADS
    rc = sps_device_start(what);
    if (rc) snprintf(why, sizeof why, "%s", sps_last_error());
    Py_END_ALLOW_THREADS
    if (!rc) Py_RETURN_NONE;
    if (rc == SPS_EINVAL)
        return PyErr_Format(PyExc_ValueError, "device_start(%u): unknown device collector",
                            what);
    return PyErr_Format(PyExc_RuntimeError, "%s (%s)", why[0] ? why : sps_strerror(rc),
                        sps_err_name(rc));
}

/* device_stop(what): flushes and stops the collectors of what; the next
 * finalize writes what they collected.  ValueError when what is unknown
 * or names a collector that is not on. */
static PyObject *ext_device_stop(PyObject *mod, PyObject *args) {
    (void)mod;
    unsigned what;
    if (!PyArg_ParseTuple(args, "I:device_stop", &what)) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_device_stop(what);
    Py_END_ALLOW_THREADS
    if (!rc) Py_RETURN_NONE;
    if (rc == SPS_EINVAL)
        return PyErr_Format(PyExc_ValueError, "device_stop(%u): %s", what,
                            *sps_last_error() ? sps_last_error()
                                              : "unknown collector, or not on");
    return sps__py_raise_sps(rc, NULL);
}

/* One int64 column of n rows as bytes (a copy: np.frombuffer reads it). */
static PyObject *device_column(const int64_t *v, size_t n) {
    return PyBytes_FromStringAndSize(v ? (const char *)v : "", v ? (Py_ssize_t)(n * 8) : 0);
}

/* device_read(path) -> the file's device activity (its /device group) as
 * sps_device_read reads and checks it: a dict with n, present, each
 * int64 column of sps_device_t under its own name as bytes (np.frombuffer
 * them: kinds, names_idx, devices, contexts, streams, correlations,
 * starts_ns, ends_ns, bytes, ranks, threads, tids, regions, call_ids,
 * grid_x..z, block_x..z, copy_kinds, src_kinds, dst_kinds), names and
 * region_names (lists of str), collector and clock (str), dropped and
 * cupti_version (int).  A file without /device: present False, n 0.
 * OSError if the file cannot be read, ValueError if it is not valid. */
static PyObject *ext_device_read(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *pathobj;
    if (!PyArg_ParseTuple(args, "O&:device_read", PyUnicode_FSConverter, &pathobj))
        return NULL;
    const char *path = PyBytes_AS_STRING(pathobj);
    sps_device_t d;
    memset(&d, 0, sizeof d);
    int rc;
    char err[512] = "";
    Py_BEGIN_ALLOW_THREADS
    rc = sps_device_read(path, &d);
    if (rc) snprintf(err, sizeof err, "%s", sps_last_error());
    Py_END_ALLOW_THREADS
    if (rc) {
        sps_device_free(&d);
        PyObject *r;
        if (rc == SPS_EIO || rc == SPS_EPATH)
            r = sps__py_raise_os(rc, err[0] ? err : sps_strerror(rc), path);
        else if (rc == SPS_ENOMEM)
            r = PyErr_NoMemory();
        else
            r = PyErr_Format(PyExc_ValueError, "%s: %s", path, err[0] ? err : sps_strerror(rc));
        Py_DECREF(pathobj);
        return r;
    }
    Py_DECREF(pathobj);
    static const char *const names[] = {
        "kinds", "names_idx", "devices", "contexts", "streams", "correlations", "starts_ns",
        "ends_ns", "bytes", "ranks", "threads", "tids", "regions", "call_ids", "grid_x",
        "grid_y", "grid_z", "block_x", "block_y", "block_z", "copy_kinds", "src_kinds",
        "dst_kinds"};
    const int64_t *cols[] = {d.kinds, d.names_idx, d.devices, d.contexts, d.streams,
                             d.correlations, d.starts_ns, d.ends_ns, d.bytes, d.ranks,
                             d.threads, d.tids, d.regions, d.call_ids, d.grid_x, d.grid_y,
                             d.grid_z, d.block_x, d.block_y, d.block_z, d.copy_kinds,
                             d.src_kinds, d.dst_kinds};
    PyObject *o = PyDict_New();
    int bad = !o || sps__py_put(o, "n", PyLong_FromSize_t(d.n)) ||
              sps__py_put(o, "present", PyBool_FromLong(d.present)) ||
              sps__py_put(o, "names", sps__py_utf8_list(d.names, d.nnames)) ||
              sps__py_put(o, "region_names",
                          sps__py_utf8_list(d.region_names, d.nregion_names)) ||
              sps__py_put(o, "collector", PyUnicode_FromString(d.collector ? d.collector : "")) ||
              sps__py_put(o, "clock", PyUnicode_FromString(d.clock ? d.clock : "")) ||
              sps__py_put(o, "dropped", PyLong_FromLongLong((long long)d.dropped)) ||
              sps__py_put(o, "cupti_version", PyLong_FromLongLong((long long)d.cupti_version));
    for (size_t i = 0; !bad && i < sizeof names / sizeof names[0]; i++)
        bad = sps__py_put(o, names[i], device_column(cols[i], d.n));
    sps_device_free(&d);
    if (bad) Py_CLEAR(o);
    return o;
}

/* the ITT functions of torch.profiler.itt's helpers (_itt_ext.c) */
int sps__py_itt_init(PyObject *m);

/* the memory sources (_memhooks.c, docs/memory.md) */
PyObject *sps__py_mem_hooks_install(PyObject *mod, PyObject *args, PyObject *kw);
PyObject *sps__py_mem_hooks_uninstall(PyObject *mod, PyObject *noargs);
PyObject *sps__py_mem_hooks_active(PyObject *mod, PyObject *noargs);
PyObject *sps__py_mem_thread_counts(PyObject *mod, PyObject *noargs);

static PyMethodDef ext_methods[] = {
    {"setup", (PyCFunction)(void (*)(void))ext_setup, METH_VARARGS | METH_KEYWORDS,
     "Start a session (sps_setup)."},
    {"finalize", ext_finalize, METH_VARARGS,
     "finalize(path, verbose) -> table text; writes the period (sps_finalize)."},
    {"finalize_paths", ext_finalize_paths, METH_VARARGS,
     "finalize_paths(path, verbose) -> (text, paths): finalize and the period's call paths."},
    {"shutdown", ext_shutdown, METH_NOARGS, "End the session without writing."},
    {"is_active", ext_is_active, METH_NOARGS, "True while a session records."},
    {"now_ns", ext_now_ns, METH_NOARGS, "The profiler's clock, CLOCK_MONOTONIC ns."},
    {"session_start_ns", ext_session_start_ns, METH_NOARGS, "Session start (ns), 0 if none."},
    {"pause", ext_pause, METH_O, "pause(True) / pause(False): sps_pause / sps_resume."},
    {"is_paused", ext_is_paused, METH_NOARGS, "True while the session is paused."},
    {"emit_set", ext_emit_set, METH_VARARGS,
     "emit_set(name, on) -> bool: emitter 'nvtx' or 'itt' on or off (any time, session or "
     "not); returns whether it was on before."},
    {"emit_active", ext_emit_active, METH_NOARGS, "Names of the emitters on now."},
    {"emit_available", ext_emit_available, METH_NOARGS, "Names of the emitters this build has."},
    {"device_available", ext_device_available, METH_VARARGS,
     "device_available(what) -> None, or why the device collectors of what (DEVICE_* bits) "
     "cannot start here (sps_device_available)."},
    {"device_start", ext_device_start, METH_VARARGS,
     "device_start(what): start the device collectors of what (sps_device_start); "
     "RuntimeError with the reason when they cannot."},
    {"device_stop", ext_device_stop, METH_VARARGS,
     "device_stop(what): flush and stop them (sps_device_stop); the next finalize writes "
     "what they collected."},
    {"device_read", ext_device_read, METH_VARARGS,
     "device_read(path) -> the file's /device rows (sps_device_read) as a dict of int64 "
     "columns (bytes), names, region_names and the collector's attributes."},
    {"open_calls_all", ext_open_calls_all, METH_NOARGS,
     "open_calls_all() -> [(thread, depth, name)]: sps_open_calls_all (None: aggregate)."},
    {"open_calls", ext_open_calls, METH_NOARGS,
     "Names of the calls open on this thread, outermost first."},
    {"region_set_source", ext_region_set_source, METH_VARARGS,
     "region_set_source(id, file, line, text): sps_region_set_source."},
    {"region_set_tags", ext_region_set_tags, METH_VARARGS,
     "region_set_tags(id, tags_json): sps_region_set_tags."},
    {"region_set_event_metadata", ext_region_set_event_metadata, METH_VARARGS,
     "region_set_event_metadata(id, json, ncalls): sps_region_set_event_metadata."},
    {"tasks_set", ext_tasks_set, METH_O,
     "tasks_set(rows): the session's task table (sps_tasks_set), written by finalize."},
    {"metadata_set", ext_metadata_set, METH_VARARGS,
     "metadata_set(key, value): a /metadata string of the session's files (sps_metadata_set)."},
    {"task_steps_set", ext_task_steps_set, METH_O,
     "task_steps_set(int64 buffer, 4 per step): the tasks' steps (sps_task_steps_set)."},
    {"env_read", ext_env_read, METH_NOARGS,
     "The SPANSCOPE_*/SCOPE_PROFILER_* settings of the environment (sps_env_read)."},
    {"config_check", ext_config_check, METH_O,
     "config_check(path): the TOML file checked by the C core's reader (ValueError)."},
    {"recorded_ids", ext_recorded_ids, METH_NOARGS, "Ids of regions with calls."},
    {"summary", ext_summary, METH_NOARGS, "The session's summary table as text."},
    {"counters", ext_counters, METH_NOARGS,
     "{'dropped': n, 'misuse': n, 'spill_errno': errno, 'spill_error': str or None}"},
    {"query_info", ext_query_info, METH_NOARGS,
     "{'records_read', 'rebuilds', 'regions', 'bytes'} of the per-call queries "
     "(sps_query_info)."},
    {"region_name", ext_region_name, METH_O, "Name of a region id, or None."},
    {"mem_hooks_install", (PyCFunction)(void (*)(void))sps__py_mem_hooks_install,
     METH_VARARGS | METH_KEYWORDS,
     "mem_hooks_install(python=True, numpy=True): count every allocation of Python's "
     "allocators and numpy's array data in the allocating thread's memory counters; "
     "numpy='context' for the calling context only; returns {'python', 'numpy', "
     "'numpy_reason', 'numpy_scope', 'malloc_counted'} (docs/memory.md)."},
    {"mem_hooks_uninstall", sps__py_mem_hooks_uninstall, METH_NOARGS,
     "Restore the previous allocators; returns {'python_blocks_dropped', "
     "'python_bytes_dropped', 'numpy_restored', 'numpy_blocks_dropped', "
     "'numpy_bytes_dropped', 'untracked'}."},
    {"mem_hooks_active", sps__py_mem_hooks_active, METH_NOARGS,
     "True while spanscope's memory hooks are installed."},
    {"mem_thread_counts", sps__py_mem_thread_counts, METH_NOARGS,
     "The calling thread's memory counters (sps_mem_thread_counts) as {'alloc_bytes', "
     "'free_bytes', 'allocs', 'frees', 'live_bytes'}."},
    {NULL, NULL, 0, NULL}};

/* Module state is kept in statics (each file's): the extension is
 * single-phase and the core is process-wide anyway. */
static struct PyModuleDef ext_module = {
    PyModuleDef_HEAD_INIT, "spanscope._ext",
    "The C face of spanscope (see the spanscope package).", -1, ext_methods,
    NULL, NULL, NULL, NULL};


PyMODINIT_FUNC PyInit__ext(void) {
    PyObject *m = PyModule_Create(&ext_module);
    if (!m) return NULL;
    if (PyModule_AddStringConstant(m, "version", SPS_VERSION_STRING) ||
        PyModule_AddIntConstant(m, "OVERFLOW_SPILL", SPS_OVERFLOW_SPILL) ||
        PyModule_AddIntConstant(m, "OVERFLOW_DROP", SPS_OVERFLOW_DROP) ||
        PyModule_AddIntConstant(m, "OVERFLOW_GROW", SPS_OVERFLOW_GROW) ||
        PyModule_AddIntConstant(m, "DEVICE_CUPTI", SPS_DEVICE_CUPTI) ||
        PyModule_AddIntConstant(m, "DEVICE_EVENTS", SPS_DEVICE_EVENTS) ||
        sps__py_regions_init(m) || sps__py_results_init(m) || sps__py_profiler_init(m) ||
        sps__py_export_init(m) || sps__py_sampler_init(m) ||
        sps__py_itt_init(m) /* _itt_ext.c */) {
        Py_DECREF(m);
        return NULL;
    }
    sps_set_thread_namer(py_thread_namer);
    return m;
}
