/* _profiler.c -- the C half of spanscope.profiler (the torch-style face).
 *
 * record_function is a C type: constructing it looks the name up in a dict
 * (name -> region id), __enter__/__exit__ are one sps_begin/sps_end each.
 * Nothing else runs per span unless a profile asked for payloads (shapes,
 * stacks, FLOPs, args): then a Python hook receives (thread, seq, name,
 * args) right after the span began -- (thread, seq) is the begin record's
 * key (sps_thread_seq), which sps_spans reports with the span, so the face
 * joins payloads to spans exactly.
 *
 * The rest hands the core's spans (sps_spans) to Python as one bytes object
 * that numpy views without copying, writes timelines with their stack
 * samples and device activity (sps_timeline_write_device),
 * and exposes the step schedule (Schedule: sps_schedule_action) and the
 * session's steps (sps_step*).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "_convert.h"
#include "spanscope.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read by _regions.c's decorated-function wrapper too. */
int sps__py_capture;            /* 1: every span opened from Python reports */
static PyObject *g_hook;        /* callable(thread, seq, name, args) */
static PyObject *g_decorate;    /* callable(record_function, func) -> wrapper */
static PyObject *g_ids;         /* dict name -> int region id */
static PyObject *g_emit_shapes; /* callable(args) -> str: emit_nvtx(record_shapes=True) */

/* Calls the payload hook for a span of region r whose begin was this
 * thread's last record (every caller calls it right after sps_begin, with
 * nothing recorded in between).  A begin that was not recorded (no
 * session, events dropped) has no key and no span: no call. */
static int report_begin(sps_region_t r, PyObject *name, PyObject *args) {
    (void)r;
    uint32_t thread;
    uint64_t seq;
    if (!g_hook || sps_thread_seq(&thread, &seq)) return 0;
    PyObject *res = PyObject_CallFunction(g_hook, "kKOO", (unsigned long)thread,
                                          (unsigned long long)seq, name, args);
    Py_XDECREF(res);
    return res ? 0 : -1;
}

/* For _regions.c: a decorated function of region r was called with these
 * arguments (vectorcall convention); reports them when capturing. */
int sps__py_capture_call(sps_region_t r, PyObject *name, PyObject *const *args,
                         size_t nargsf, PyObject *kwnames) {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf) + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *t = PyTuple_New(n);
    if (!t) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(t, i, args[i]);
    }
    int rc = report_begin(r, name, t);
    Py_DECREF(t);
    return rc;
}

/* ======================================================================== */
/* record_function                                                           */
/* ======================================================================== */

typedef struct {
    PyObject_HEAD
    sps_region_t id;
    PyObject *name;
    PyObject *args;
} RFObject;

static PyTypeObject RFType;

/* The region id of name (a str), interned once per distinct name. */
static sps_region_t rf_region(PyObject *name) {
    PyObject *v = PyDict_GetItemWithError(g_ids, name);
    if (v) return (sps_region_t)PyLong_AsUnsignedLong(v);
    if (PyErr_Occurred()) return 0;
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(name, &n);
    if (!s) return 0;
    if ((Py_ssize_t)strlen(s) != n) {
        PyErr_SetString(PyExc_ValueError, "record_function name must not contain NUL");
        return 0;
    }
    sps_region_t r = sps_region(s);
    if (!r) {
        PyErr_NoMemory();
        return 0;
    }
    v = PyLong_FromUnsignedLong(r);
    if (!v || PyDict_SetItem(g_ids, name, v)) r = 0;
    Py_XDECREF(v);
    return r;
}

/* record_function(name) without args is stateless, so one object per name
 * serves every use (nested and concurrent ones too): name -> object. */
static PyObject *g_shared;

/* The shared objects again, by the address of their name: a name written
 * as a constant is the same str object on every call, so one compare finds
 * its object with no hash or dict probe (what made record_function 1.3 x a
 * held region on CPython 3.11).  A slot holds a strong reference; its
 * object holds its name, so a name at the slot's address is that name. */
#define RF_CACHE 256
static RFObject *g_rf_cache[RF_CACHE];

static RFObject **rf_slot(PyObject *name) {
    return &g_rf_cache[((uintptr_t)name >> 4) % RF_CACHE];
}

/* The shared object o (name's), cached and returned as a new reference. */
static PyObject *rf_shared(PyObject *name, PyObject *o) {
    RFObject **slot = rf_slot(name);
    if (*slot != (RFObject *)o) Py_XSETREF(*slot, (RFObject *)Py_NewRef(o));
    return Py_NewRef(o);
}

static PyObject *rf_make(PyTypeObject *tp, PyObject *name, PyObject *args) {
    int shared = args == Py_None && tp == &RFType;
    if (shared && PyUnicode_CheckExact(name)) {
        PyObject *o = PyDict_GetItemWithError(g_shared, name);
        if (o) return rf_shared(name, o);
        if (PyErr_Occurred()) return NULL;
    }
    if (!PyUnicode_Check(name))
        return PyErr_Format(PyExc_TypeError, "record_function name must be a str, not %.100s",
                            Py_TYPE(name)->tp_name);
    sps_region_t r = rf_region(name);
    if (!r) return NULL;
    RFObject *self = (RFObject *)tp->tp_alloc(tp, 0);
    if (!self) return NULL;
    self->id = r;
    Py_INCREF(name);
    self->name = name;
    self->args = args == Py_None ? NULL : Py_NewRef(args);
    if (shared && PyUnicode_CheckExact(name)) {
        if (PyDict_SetItem(g_shared, name, (PyObject *)self)) {
            Py_DECREF(self);
            return NULL;
        }
        PyObject *o = rf_shared(name, (PyObject *)self);
        Py_DECREF(self);
        return o;
    }
    return (PyObject *)self;
}

/* record_function(name, args=None), the fast way in. */
static PyObject *RF_vectorcall(PyObject *tp, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n == 1 && !kwnames && tp == (PyObject *)&RFType) { /* record_function(name) */
        RFObject *o = *rf_slot(args[0]);
        if (o && o->name == args[0]) return Py_NewRef((PyObject *)o);
    }
    PyObject *name = n > 0 ? args[0] : NULL, *a = n > 1 ? args[1] : NULL;
    Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (n > 2) return PyErr_Format(PyExc_TypeError, "record_function takes at most 2 arguments");
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        if (PyUnicode_CompareWithASCIIString(k, "name") == 0 && !name) name = args[n + i];
        else if (PyUnicode_CompareWithASCIIString(k, "args") == 0 && !a) a = args[n + i];
        else return PyErr_Format(PyExc_TypeError, "record_function got an unexpected or "
                                 "repeated keyword argument %R", k);
    }
    if (!name) return PyErr_Format(PyExc_TypeError, "record_function missing argument 'name'");
    return rf_make((PyTypeObject *)tp, name, a ? a : Py_None);
}

static PyObject *RF_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    PyObject *name, *a = Py_None;
    static char *kwlist[] = {"name", "args", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O", kwlist, &name, &a)) return NULL;
    return rf_make(tp, name, a);
}

/* args may hold anything, the object itself included: GC support. */
static int RF_traverse(RFObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->args);
    return 0;
}

static int RF_clear(RFObject *self) {
    Py_CLEAR(self->args);
    return 0;
}

static void RF_dealloc(RFObject *self) {
    PyObject_GC_UnTrack(self);
    Py_XDECREF(self->name);
    Py_XDECREF(self->args);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* emit_nvtx/emit_itt(record_shapes=True): the shapes of args as the label
 * of the begin that follows (sps_emit_label), while an emitter is on.  A
 * label that cannot be made is left out (profiling never fails the call). */
static int emit_shapes(PyObject *args) {
    if (!g_emit_shapes || !args || !sps_emit_active()) return 0;
    PyObject *t = PyObject_CallOneArg(g_emit_shapes, args);
    const char *u = t && PyUnicode_Check(t) ? PyUnicode_AsUTF8(t) : NULL;
    if (u && *u) sps_emit_label(u);
    Py_XDECREF(t);
    PyErr_Clear();
    return u && *u;
}

static PyObject *RF_enter(RFObject *self, PyObject *unused) {
    (void)unused;
    if (__builtin_expect(g_emit_shapes != NULL, 0) && emit_shapes(self->args)) {
        sps_begin(self->id);
        sps_emit_label(NULL);
    } else {
        sps_begin(self->id);
    }
    if (g_hook && (sps__py_capture || self->args) &&
        report_begin(self->id, self->name, self->args ? self->args : Py_None)) {
        sps_end(self->id);
        return NULL;
    }
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *RF_exit(RFObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)args;
    (void)nargs;
    sps_end(self->id);
    Py_RETURN_FALSE; /* never swallows the exception */
}

/* record_function(...)(func): a decorator, made by the Python face. */
static PyObject *RF_call(RFObject *self, PyObject *args, PyObject *kw) {
    PyObject *func;
    if (kw && PyDict_GET_SIZE(kw))
        return PyErr_Format(PyExc_TypeError, "record_function used as a decorator takes "
                            "one function");
    if (!PyArg_ParseTuple(args, "O", &func)) return NULL;
    if (!g_decorate) return PyErr_Format(PyExc_RuntimeError, "spanscope.profiler not imported");
    return PyObject_CallFunctionObjArgs(g_decorate, (PyObject *)self, func, NULL);
}

static PyObject *RF_repr(RFObject *self) {
    return PyUnicode_FromFormat("record_function(%R)", self->name);
}

static PyObject *RF_get_args(RFObject *self, void *c) {
    (void)c;
    PyObject *a = self->args ? self->args : Py_None;
    Py_INCREF(a);
    return a;
}

static PyMethodDef RF_methods[] = {
    {"__enter__", (PyCFunction)RF_enter, METH_NOARGS, "Open the span (sps_begin)."},
    {"__exit__", (PyCFunction)(void (*)(void))RF_exit, METH_FASTCALL,
     "Close the span (sps_end); exceptions pass through."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef RF_members[] = {
    {"name", T_OBJECT, offsetof(RFObject, name), READONLY, "the span's name"},
    {"id", T_UINT, offsetof(RFObject, id), READONLY, "region id in the C core"},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef RF_getset[] = {
    {"args", (getter)RF_get_args, NULL, "the args given (None if none)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject RFType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "spanscope.profiler.record_function",
    .tp_basicsize = sizeof(RFObject),
    .tp_dealloc = (destructor)RF_dealloc,
    .tp_repr = (reprfunc)RF_repr,
    .tp_call = (ternaryfunc)RF_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)RF_traverse,
    .tp_clear = (inquiry)RF_clear,
    .tp_doc = "record_function(name, args=None): a span of the recording, as a context\n"
              "manager (with record_function('x'): ...) or a decorator.  args (a dict)\n"
              "is kept with the span while a profile records; args['flops'] declares\n"
              "the span's floating-point operations.",
    .tp_methods = RF_methods,
    .tp_members = RF_members,
    .tp_getset = RF_getset,
    .tp_new = RF_new,
    .tp_vectorcall = RF_vectorcall,
};

/* ======================================================================== */
/* Schedule: torch.profiler.schedule, computed by the core                   */
/* ======================================================================== */

typedef struct {
    PyObject_HEAD
    sps_schedule_t s;
    PyObject *actions; /* tuple: what to return for each sps_action_t */
} ScheduleObject;

static PyTypeObject ScheduleType;

/* Schedule(wait, warmup, active, repeat, skip_first, skip_first_wait,
 * actions): the Python face checks the arguments and names them in its
 * errors; this checks again (sps_schedule_check) so that no invalid
 * schedule exists. */
static PyObject *Schedule_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    sps_schedule_t s;
    PyObject *actions;
    static char *kwlist[] = {"wait", "warmup", "active", "repeat", "skip_first",
                             "skip_first_wait", "actions", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "LLLLLLO!", kwlist, &s.wait, &s.warmup,
                                     &s.active, &s.repeat, &s.skip_first,
                                     &s.skip_first_wait, &PyTuple_Type, &actions))
        return NULL;
    if (PyTuple_GET_SIZE(actions) != 4)
        return PyErr_Format(PyExc_ValueError, "actions must hold 4 values");
    if (sps_schedule_check(&s))
        return PyErr_Format(PyExc_ValueError, "invalid schedule (wait, warmup >= 0, "
                            "active >= 1, repeat, skip_first >= 0, skip_first_wait 0 or 1, "
                            "wait + warmup + active < 2**63)");
    ScheduleObject *self = (ScheduleObject *)tp->tp_alloc(tp, 0);
    if (!self) return NULL;
    self->s = s;
    self->actions = Py_NewRef(actions);
    return (PyObject *)self;
}

static void Schedule_dealloc(ScheduleObject *self) {
    Py_XDECREF(self->actions);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* schedule(step) -> actions[sps_schedule_action(step)].  A negative step
 * is an AssertionError worded as torch's schedule_fn asserts it. */
static PyObject *Schedule_call(ScheduleObject *self, PyObject *args, PyObject *kw) {
    PyObject *arg;
    if ((kw && PyDict_GET_SIZE(kw)) || !PyArg_ParseTuple(args, "O", &arg))
        return PyErr_Format(PyExc_TypeError, "a schedule takes one argument, the step");
    long long step = PyLong_AsLongLong(arg);
    if (step == -1 && PyErr_Occurred()) return NULL;
    int a = sps_schedule_action(&self->s, step);
    if (a < 0)
        return PyErr_Format(PyExc_AssertionError, "Step must be non-negative. Got %lld.", step);
    return Py_NewRef(PyTuple_GET_ITEM(self->actions, a));
}

static PyObject *Schedule_repr(ScheduleObject *self) {
    return PyUnicode_FromFormat("schedule(wait=%lld, warmup=%lld, active=%lld, repeat=%lld, "
                                "skip_first=%lld, skip_first_wait=%lld)",
                                (long long)self->s.wait, (long long)self->s.warmup,
                                (long long)self->s.active, (long long)self->s.repeat,
                                (long long)self->s.skip_first,
                                (long long)self->s.skip_first_wait);
}

static PyMemberDef Schedule_members[] = {
    {"wait", T_LONGLONG, offsetof(ScheduleObject, s.wait), READONLY, NULL},
    {"warmup", T_LONGLONG, offsetof(ScheduleObject, s.warmup), READONLY, NULL},
    {"active", T_LONGLONG, offsetof(ScheduleObject, s.active), READONLY, NULL},
    {"repeat", T_LONGLONG, offsetof(ScheduleObject, s.repeat), READONLY, NULL},
    {"skip_first", T_LONGLONG, offsetof(ScheduleObject, s.skip_first), READONLY, NULL},
    {"skip_first_wait", T_LONGLONG, offsetof(ScheduleObject, s.skip_first_wait), READONLY,
     NULL},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject ScheduleType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "spanscope.profiler.schedule",
    .tp_basicsize = sizeof(ScheduleObject),
    .tp_dealloc = (destructor)Schedule_dealloc,
    .tp_repr = (reprfunc)Schedule_repr,
    .tp_call = (ternaryfunc)Schedule_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A step schedule: schedule(step) -> ProfilerAction, by the core's "
              "sps_schedule_action.",
    .tp_members = Schedule_members,
    .tp_new = Schedule_new,
};

/* ======================================================================== */
/* Module functions                                                          */
/* ======================================================================== */

static PyObject *raise_rc(int rc) {
    if (rc == SPS_ENOMEM) return PyErr_NoMemory();
    if (rc == SPS_EINVAL) return PyErr_Format(PyExc_ValueError, "%s", sps_strerror(rc));
    if (rc == SPS_EPATH || rc == SPS_EIO)
        return PyErr_Format(PyExc_OSError, "%s (%s)", sps_strerror(rc), sps_err_name(rc));
    return PyErr_Format(PyExc_RuntimeError, "%s (%s)", sps_strerror(rc), sps_err_name(rc));
}

/* spans(from_ns, to_ns) -> bytes of sps_span_t records (SPAN_SIZE bytes each). */
static PyObject *py_spans(PyObject *mod, PyObject *args) {
    (void)mod;
    long long from, to;
    if (!PyArg_ParseTuple(args, "LL", &from, &to)) return NULL;
    sps_span_t *v = NULL;
    size_t n = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_spans(from, to, &v, &n);
    Py_END_ALLOW_THREADS
    if (rc) return raise_rc(rc);
    PyObject *b = PyBytes_FromStringAndSize((const char *)v, (Py_ssize_t)(n * sizeof *v));
    sps_free(v);
    return b;
}

/* spans_values(from_ns, to_ns) -> (bytes of sps_span_t records, bytes of
 * uint64 values: per span nvals own then nvals self, nvals) */
static PyObject *py_spans_values(PyObject *mod, PyObject *args) {
    (void)mod;
    long long from, to;
    if (!PyArg_ParseTuple(args, "LL", &from, &to)) return NULL;
    sps_span_t *v = NULL;
    uint64_t *vals = NULL;
    size_t n = 0;
    uint32_t nv = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_spans_values(from, to, &v, &n, &vals, &nv);
    Py_END_ALLOW_THREADS
    if (rc) return raise_rc(rc);
    /* y# of NULL is None: an empty window gives b"" */
    PyObject *out = Py_BuildValue("(y#y#I)", v ? (const char *)v : "",
                                  (Py_ssize_t)(v ? n * sizeof *v : 0),
                                  vals ? (const char *)vals : "",
                                  (Py_ssize_t)(vals ? n * 2 * nv * sizeof *vals : 0), nv);
    sps_free(v);
    sps_free(vals);
    return out;
}

/* value_names() -> [str]: the running session's values (sps_value_name). */
static PyObject *py_value_names(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    PyObject *l = PyList_New(0);
    for (uint32_t i = 0; l; i++) {
        const char *name = sps_value_name(i);
        if (!name) break;
        PyObject *s = PyUnicode_FromString(name);
        if (!s || PyList_Append(l, s)) {
            Py_XDECREF(s);
            Py_CLEAR(l);
            break;
        }
        Py_DECREF(s);
    }
    return l;
}

static PyObject *py_thread_info(PyObject *mod, PyObject *arg) {
    (void)mod;
    unsigned long i = PyLong_AsUnsignedLong(arg);
    if (PyErr_Occurred()) return NULL;
    sps_thread_t t;
    if (i > UINT32_MAX || sps_thread_info((uint32_t)i, &t)) Py_RETURN_NONE;
    return Py_BuildValue("(LLs)", (long long)t.native_id, (long long)t.first_ns, t.name);
}

static PyObject *py_thread_current(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return PyLong_FromLongLong(sps_thread_current());
}

static PyObject *py_set_capture(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *hook;
    int all = 0;
    if (!PyArg_ParseTuple(args, "O|p", &hook, &all)) return NULL;
    if (hook != Py_None && !PyCallable_Check(hook))
        return PyErr_Format(PyExc_TypeError, "hook must be callable or None");
    Py_XSETREF(g_hook, hook == Py_None ? NULL : Py_NewRef(hook));
    sps__py_capture = g_hook && all;
    Py_RETURN_NONE;
}

/* set_emit_shapes(fn or None): the callable that turns a record_function's
 * args into the emitters' label (emit_nvtx(record_shapes=True)); returns
 * the one before. */
static PyObject *py_set_emit_shapes(PyObject *mod, PyObject *fn) {
    (void)mod;
    PyObject *old = g_emit_shapes ? g_emit_shapes : Py_NewRef(Py_None);
    g_emit_shapes = fn == Py_None ? NULL : Py_NewRef(fn);
    return old;
}

static PyObject *py_set_decorate(PyObject *mod, PyObject *fn) {
    (void)mod;
    Py_XSETREF(g_decorate, fn == Py_None ? NULL : Py_NewRef(fn));
    Py_RETURN_NONE;
}

/* A list of str (or None entries) as a C array of UTF-8 pointers that stay
 * valid while the list lives.  NULL entries for None.  *out NULL if the
 * list is None. */
static int str_array(PyObject *list, const char ***out, size_t *n, const char *what) {
    *out = NULL;
    *n = 0;
    if (list == Py_None) return 0;
    if (!PyList_Check(list)) {
        PyErr_Format(PyExc_TypeError, "%s must be a list", what);
        return -1;
    }
    Py_ssize_t m = PyList_GET_SIZE(list);
    const char **v = calloc((size_t)m + 1, sizeof *v);
    if (!v) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *s = PyList_GET_ITEM(list, i);
        if (s == Py_None) continue;
        if (!PyUnicode_Check(s) || !(v[i] = PyUnicode_AsUTF8(s))) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s must hold str", what);
            free(v);
            return -1;
        }
    }
    *out = v;
    *n = (size_t)m;
    return 0;
}

/* The int64 column key of the samples dict d (bytes, native int64) into
 * *v, its length into *n.  -1 with an exception set. */
static int smp_col(PyObject *d, const char *key, const int64_t **v, size_t *n) {
    PyObject *b = PyDict_GetItemString(d, key); /* borrowed */
    if (!b || !PyBytes_Check(b) || PyBytes_GET_SIZE(b) % (Py_ssize_t)sizeof(int64_t)) {
        PyErr_Format(PyExc_TypeError, "samples['%s'] must be bytes of int64", key);
        return -1;
    }
    *v = (const int64_t *)PyBytes_AS_STRING(b);
    *n = (size_t)PyBytes_GET_SIZE(b) / sizeof(int64_t);
    return 0;
}

/* The samples dict d (None: no samples) as the caller's sps_samples_t for
 * sps_timeline_write_samples: int64 columns as bytes (times_ns, tids,
 * stacks, weights, regions per sample; stack_offsets, stack_frames; lines,
 * kinds, addresses per frame), functions, files, modules and region_names
 * as lists of str, hz and lost ints.  The arrays borrow d's objects (d
 * must live while *s is used); the string arrays are malloc'd into str[4]
 * (freed by the caller, also on failure).  0, or -1 with an exception. */
static int samples_of_dict(PyObject *d, sps_samples_t *s, const char **str[4]) {
    memset(s, 0, sizeof *s);
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "samples must be a dict or None");
        return -1;
    }
    size_t n, m, nst, nf[7];
    if (smp_col(d, "times_ns", &s->times_ns, &n) || smp_col(d, "tids", &s->tids, &m) ||
        smp_col(d, "stacks", &s->stacks, &nf[0]) || smp_col(d, "weights", &s->weights, &nf[1]) ||
        smp_col(d, "regions", &s->regions, &nf[2]) ||
        smp_col(d, "stack_offsets", &s->stack_offsets, &nst) ||
        smp_col(d, "stack_frames", &s->stack_frames, &nf[3]) ||
        smp_col(d, "lines", &s->lines, &nf[4]) || smp_col(d, "kinds", &s->kinds, &nf[5]) ||
        smp_col(d, "addresses", &s->addresses, &nf[6]))
        return -1;
    size_t k[4];
    static const char *const keys[4] = {"functions", "files", "modules", "region_names"};
    for (int i = 0; i < 4; i++) {
        PyObject *l = PyDict_GetItemString(d, keys[i]);
        if (!l) {
            PyErr_Format(PyExc_TypeError, "samples needs %s", keys[i]);
            return -1;
        }
        if (str_array(l, &str[i], &k[i], keys[i])) return -1;
    }
    if (m != n || nf[0] != n || nf[1] != n || nf[2] != n || nst < 1 || nf[5] != nf[4] ||
        nf[6] != nf[4] || k[0] != nf[4] || k[1] != nf[4] || k[2] != nf[4]) {
        PyErr_SetString(PyExc_ValueError, "samples: the columns' lengths disagree");
        return -1;
    }
    PyObject *hz = PyDict_GetItemString(d, "hz"), *lost = PyDict_GetItemString(d, "lost");
    s->hz = hz ? PyLong_AsLongLong(hz) : 0;
    s->lost = lost ? PyLong_AsLongLong(lost) : 0;
    if (PyErr_Occurred()) return -1;
    s->n = n;
    s->nstacks = nst - 1;
    s->nframes = nf[4];
    s->functions = str[0];
    s->files = str[1];
    s->modules = str[2];
    s->region_names = str[3];
    s->nregion_names = k[3];
    return 0;
}

/* The device dict d as the caller's sps_device_t for
 * sps_timeline_write_device: int64 columns as bytes, one entry per row --
 * kinds, names_idx, starts_ns, ends_ns, correlations, tids, devices and
 * streams needed; contexts, bytes, regions, grid_x..z, block_x..z,
 * copy_kinds, src_kinds, dst_kinds optional (missing or None: NULL) --
 * names and region_names lists of str.  The arrays borrow d's objects;
 * the string arrays are malloc'd into str[2] (freed by the caller, also
 * on failure).  0, or -1 with an exception. */
static int device_of_dict(PyObject *d, sps_device_t *dv, const char **str[2]) {
    memset(dv, 0, sizeof *dv);
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "device must be a dict or None");
        return -1;
    }
    static const char *const keys[] = {
        "kinds", "names_idx", "starts_ns", "ends_ns", "correlations", "tids", "devices",
        "streams", "contexts", "bytes", "regions", "grid_x", "grid_y", "grid_z", "block_x",
        "block_y", "block_z", "copy_kinds", "src_kinds", "dst_kinds"};
    const int64_t **cols[] = {&dv->kinds, &dv->names_idx, &dv->starts_ns, &dv->ends_ns,
                              &dv->correlations, &dv->tids, &dv->devices, &dv->streams,
                              &dv->contexts, &dv->bytes, &dv->regions, &dv->grid_x,
                              &dv->grid_y, &dv->grid_z, &dv->block_x, &dv->block_y,
                              &dv->block_z, &dv->copy_kinds, &dv->src_kinds, &dv->dst_kinds};
    size_t n = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        PyObject *b = PyDict_GetItemString(d, keys[i]); /* borrowed */
        if (i >= 8 && (!b || b == Py_None)) continue;    /* optional */
        size_t m;
        if (!b || !PyBytes_Check(b) || PyBytes_GET_SIZE(b) % (Py_ssize_t)sizeof(int64_t)) {
            PyErr_Format(PyExc_TypeError, "device['%s'] must be bytes of int64", keys[i]);
            return -1;
        }
        m = (size_t)PyBytes_GET_SIZE(b) / sizeof(int64_t);
        if (i == 0) n = m;
        else if (m != n) {
            PyErr_Format(PyExc_ValueError, "device['%s'] has %zu rows, not %zu", keys[i], m, n);
            return -1;
        }
        *cols[i] = (const int64_t *)PyBytes_AS_STRING(b);
    }
    size_t k[2];
    static const char *const lists[2] = {"names", "region_names"};
    for (int i = 0; i < 2; i++) {
        PyObject *l = PyDict_GetItemString(d, lists[i]);
        if (!l) {
            PyErr_Format(PyExc_TypeError, "device needs %s", lists[i]);
            return -1;
        }
        if (str_array(l, &str[i], &k[i], lists[i])) return -1;
    }
    dv->n = n;
    dv->names = str[0];
    dv->nnames = k[0];
    dv->region_names = str[1];
    dv->nregion_names = k[1];
    dv->present = 1;
    return 0;
}

/* timeline_write(path, names, thread_ids, thread_names, spans, args, extra,
 *                base_ns, trace_name, rank, world_size, wall_anchor_ns,
 *                mono_anchor_ns, hostname, counters[, pid[, backend[, samples
 *                [, device]]]]):
 * pid 0 (the default) is this process's, backend None (the default) none,
 * samples None (the default) none, else a dict (samples_of_dict) written
 * with the spans (sps_timeline_write_samples: JSON instants, Perfetto
 * PerfSamples, on the rows of their tids); device None (the default) none,
 * else a dict (device_of_dict) written with them (sps_timeline_write_device:
 * kineto's device rows, External ids and flows in JSON, GPU tracks in
 * Perfetto). */
static PyObject *py_timeline_write(PyObject *mod, PyObject *a) {
    (void)mod;
    PyObject *path, *names, *tids, *tnames, *spans, *args, *counters, *samples = Py_None;
    PyObject *device = Py_None;
    const char *extra, *trace_name, *host, *backend = NULL;
    long long base, rank, world, wall, mono, pid = 0;
    if (!PyArg_ParseTuple(a, "O&O!O!OSOzLzLLLLzS|LzOO", PyUnicode_FSConverter, &path,
                          &PyList_Type, &names, &PyList_Type, &tids, &tnames, &spans, &args,
                          &extra, &base, &trace_name, &rank, &world, &wall, &mono, &host,
                          &counters, &pid, &backend, &samples, &device))
        return NULL;
    sps_timeline_t t = {0};
    sps_samples_t smp;
    sps_device_t dev;
    const char **sstr[4] = {NULL, NULL, NULL, NULL}, **dstr[2] = {NULL, NULL};
    memset(&smp, 0, sizeof smp);
    memset(&dev, 0, sizeof dev);
    const char **nm = NULL, **tn = NULL, **ar = NULL;
    size_t nn, ntn, nar;
    int64_t *ids = NULL;
    PyObject *res = NULL;
    if (str_array(names, &nm, &nn, "names") || str_array(tnames, &tn, &ntn, "thread_names") ||
        str_array(args, &ar, &nar, "args"))
        goto out;
    Py_ssize_t nt = PyList_GET_SIZE(tids);
    ids = malloc(((size_t)nt + 1) * sizeof *ids);
    if (!ids) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t i = 0; i < nt; i++)
        if ((ids[i] = PyLong_AsLongLong(PyList_GET_ITEM(tids, i))) == -1 && PyErr_Occurred())
            goto out;
    size_t nspans = (size_t)PyBytes_GET_SIZE(spans) / sizeof(sps_span_t);
    if ((tn && ntn != (size_t)nt) || (ar && nar != nspans)) {
        PyErr_SetString(PyExc_ValueError, "timeline_write: table lengths disagree");
        goto out;
    }
    t = (sps_timeline_t){nn, nm, (size_t)nt, ids, tn, nspans,
                         (const sps_span_t *)PyBytes_AS_STRING(spans), ar, extra, base,
                         NULL, trace_name, rank, world, wall, mono, host,
                         (size_t)PyBytes_GET_SIZE(counters) / sizeof(sps_counter_sample_t),
                         (const sps_counter_sample_t *)PyBytes_AS_STRING(counters), pid,
                         backend};
    if (samples != Py_None && samples_of_dict(samples, &smp, sstr)) goto out;
    if (device != Py_None && device_of_dict(device, &dev, dstr)) goto out;
    int rc;
    /* samples and device (dicts) stay referenced by the caller's frame:
     * their bytes hold still while the GIL is released */
    Py_BEGIN_ALLOW_THREADS
    rc = sps_timeline_write_device(PyBytes_AS_STRING(path), &t,
                                   samples != Py_None ? &smp : NULL,
                                   device != Py_None ? &dev : NULL);
    Py_END_ALLOW_THREADS
    if (rc == SPS_EPATH || rc == SPS_EIO) {
        char msg[600];
        snprintf(msg, sizeof msg, "cannot write %s: %s", PyBytes_AS_STRING(path),
                 sps_strerror(rc)); /* when no cause was noted */
        sps__py_raise_os(rc, msg, PyBytes_AS_STRING(path));
    } else if (rc == SPS_EINVAL && sps_last_error() && *sps_last_error())
        PyErr_Format(PyExc_ValueError, "%s", sps_last_error()); /* names the bad index */
    else if (rc) raise_rc(rc);
    else res = Py_NewRef(Py_None);
out:
    for (int i = 0; i < 4; i++) free(sstr[i]);
    for (int i = 0; i < 2; i++) free(dstr[i]);
    free(nm);
    free(tn);
    free(ar);
    free(ids);
    Py_DECREF(path);
    return res;
}

/* merge(out_path, [paths]) -> None (sps_merge).  OSError when a file cannot
 * be read or written, ValueError for invalid input, with the library's
 * one-line reason. */
static PyObject *py_merge(PyObject *mod, PyObject *a) {
    (void)mod;
    PyObject *out, *list;
    if (!PyArg_ParseTuple(a, "O&O!", PyUnicode_FSConverter, &out, &PyList_Type, &list))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    PyObject **enc = calloc((size_t)n + 1, sizeof *enc);
    const char **paths = calloc((size_t)n + 1, sizeof *paths);
    PyObject *res = NULL;
    if (!enc || !paths) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_FSConverter(PyList_GET_ITEM(list, i), &enc[i])) goto out;
        paths[i] = PyBytes_AS_STRING(enc[i]);
    }
    char *msg = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&msg, &len);
    if (!err) {
        PyErr_NoMemory();
        goto out;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_merge(PyBytes_AS_STRING(out), paths, (size_t)n, err);
    Py_END_ALLOW_THREADS
    fclose(err);
    while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\r')) msg[--len] = 0;
    const char *why = len ? msg : sps_strerror(rc);
    if (rc == SPS_EIO || rc == SPS_EPATH) sps__py_raise_os(rc, why, PyBytes_AS_STRING(out));
    else if (rc == SPS_ENOMEM) PyErr_NoMemory();
    else if (rc) PyErr_SetString(PyExc_ValueError, why);
    else res = Py_NewRef(Py_None);
    free(msg);
out:
    if (enc)
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(enc[i]);
    free(enc);
    free(paths);
    Py_DECREF(out);
    return res;
}

static PyObject *py_capture_stacks(PyObject *mod, PyObject *on) {
    (void)mod;
    int rc = sps_capture_stacks(PyObject_IsTrue(on));
    if (rc) return raise_rc(rc);
    Py_RETURN_NONE;
}

/* stack_format(id) -> list of "symbol+0xoff (object)" frames, innermost first. */
static PyObject *py_stack_format(PyObject *mod, PyObject *arg) {
    (void)mod;
    unsigned long id = PyLong_AsUnsignedLong(arg);
    if (PyErr_Occurred()) return NULL;
    if (id > UINT32_MAX) return PyList_New(0);
    size_t n = sps_stack_format((uint32_t)id, NULL, 0);
    char *buf = malloc(n + 1);
    if (!buf) return PyErr_NoMemory();
    sps_stack_format((uint32_t)id, buf, n + 1);
    PyObject *text = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)n, "replace");
    free(buf);
    if (!text) return NULL;
    PyObject *lines = PyUnicode_Splitlines(text, 0);
    Py_DECREF(text);
    return lines;
}

static PyObject *g_cids; /* dict name -> counter id */

/* counter(name, value): one sample of a named counter (sps_counter). */
static PyObject *py_counter(PyObject *mod, PyObject *const *args, Py_ssize_t n) {
    (void)mod;
    if (n != 2 || !PyUnicode_Check(args[0]))
        return PyErr_Format(PyExc_TypeError, "counter(name: str, value: float)");
    double v = PyFloat_AsDouble(args[1]);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    PyObject *id = PyDict_GetItemWithError(g_cids, args[0]);
    if (!id) {
        if (PyErr_Occurred()) return NULL;
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(args[0], &len);
        if (!s) return NULL;
        if ((Py_ssize_t)strlen(s) != len)
            return PyErr_Format(PyExc_ValueError, "counter name must not contain NUL");
        id = PyLong_FromUnsignedLong(sps_counter_id(s));
        if (!id || PyDict_SetItem(g_cids, args[0], id)) {
            Py_XDECREF(id);
            return NULL;
        }
        Py_DECREF(id);
    }
    sps_counter((sps_region_t)PyLong_AsUnsignedLong(id), v);
    Py_RETURN_NONE;
}

/* counter_samples(from_ns, to_ns) -> bytes of sps_counter_sample_t (24 bytes each). */
static PyObject *py_counter_samples(PyObject *mod, PyObject *args) {
    (void)mod;
    long long from, to;
    if (!PyArg_ParseTuple(args, "LL", &from, &to)) return NULL;
    sps_counter_sample_t *v = NULL;
    size_t n = 0;
    int rc = sps_counter_samples(from, to, &v, &n);
    if (rc) return raise_rc(rc);
    PyObject *b = PyBytes_FromStringAndSize((const char *)v, (Py_ssize_t)(n * sizeof *v));
    sps_free(v);
    return b;
}

/* step() -> the step number begun (sps_step). */
static PyObject *py_step(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    int64_t n = sps_step();
    if (n < 0) return raise_rc((int)n);
    return PyLong_FromLongLong(n);
}

/* step_begin(n): sps_step_begin. */
static PyObject *py_step_begin(PyObject *mod, PyObject *arg) {
    (void)mod;
    long long n = PyLong_AsLongLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    int rc = sps_step_begin(n);
    if (rc) return raise_rc(rc);
    Py_RETURN_NONE;
}

/* step_end(): sps_step_end. */
static PyObject *py_step_end(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    int rc = sps_step_end();
    if (rc) return raise_rc(rc);
    Py_RETURN_NONE;
}

/* clock_anchor() -> (wall_ns, mono_ns) of the session, (0, 0) without one. */
static PyObject *py_clock_anchor(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    int64_t w, m;
    sps_clock_anchor(&w, &m);
    return Py_BuildValue("(LL)", (long long)w, (long long)m);
}

/* thread_seq() -> (thread, seq) of this thread's last record, or None
 * (sps_thread_seq; for tests). */
static PyObject *py_thread_seq(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    uint32_t t;
    uint64_t q;
    if (sps_thread_seq(&t, &q)) Py_RETURN_NONE;
    return Py_BuildValue("(kK)", (unsigned long)t, (unsigned long long)q);
}

static PyMethodDef prof_methods[] = {
    {"step", py_step, METH_NOARGS,
     "step() -> n: end this thread's step, begin the next (sps_step)."},
    {"step_begin", py_step_begin, METH_O,
     "step_begin(n): set the step counter and begin step n here (sps_step_begin)."},
    {"step_end", py_step_end, METH_NOARGS, "step_end(): end this thread's step (sps_step_end)."},
    {"clock_anchor", py_clock_anchor, METH_NOARGS,
     "clock_anchor() -> (wall_ns, mono_ns): the session's anchor, (0, 0) without one."},
    {"thread_seq", py_thread_seq, METH_NOARGS,
     "thread_seq() -> (thread, seq) of this thread's last record, or None."},
    {"counter", (PyCFunction)(void (*)(void))py_counter, METH_FASTCALL,
     "counter(name, value): one sample of a named counter."},
    {"counter_samples", py_counter_samples, METH_VARARGS,
     "counter_samples(from_ns, to_ns) -> bytes of counter samples."},
    {"capture_stacks", py_capture_stacks, METH_O,
     "capture_stacks(on): native stacks of span begins (sps_capture_stacks)."},
    {"stack_format", py_stack_format, METH_O, "stack_format(id) -> native frames."},
    {"merge", py_merge, METH_VARARGS,
     "merge(out_path, [paths]): sps_merge (per-rank files into one)."},
    {"spans_values", py_spans_values, METH_VARARGS,
     "spans_values(from_ns, to_ns) -> (span records, uint64 values: per span nvals own "
     "then nvals self, nvals)"},
    {"value_names", py_value_names, METH_NOARGS,
     "value_names() -> names of the running session's values (sps_value_name)"},
    {"spans", py_spans, METH_VARARGS,
     "spans(from_ns, to_ns) -> bytes: the session's spans inside the window "
     "(sps_span_t records)."},
    {"thread_info", py_thread_info, METH_O, "thread_info(i) -> (native_id, first_ns, name) or None."},
    {"thread_current", py_thread_current, METH_NOARGS, "This thread's index, or -1."},
    {"set_capture", py_set_capture, METH_VARARGS,
     "set_capture(hook or None, all=False): payload hook for spans opened from Python, "
     "called as hook(thread, seq, name, args) right after the span began."},
    {"set_decorate", py_set_decorate, METH_O, "The record_function decorator factory."},
    {"set_emit_shapes", py_set_emit_shapes, METH_O,
     "set_emit_shapes(fn or None): args -> the emitters' label; returns the one before."},
    {"timeline_write", py_timeline_write, METH_VARARGS, "Write spans as a trace file."},
    {NULL, NULL, 0, NULL}};

/* Called by PyInit__ext: adds record_function and the functions above. */
int sps__py_profiler_init(PyObject *m) {
    if (PyType_Ready(&RFType) < 0 || PyType_Ready(&ScheduleType) < 0) return -1;
    g_ids = PyDict_New();
    g_shared = PyDict_New();
    g_cids = PyDict_New();
    if (!g_ids || !g_shared || !g_cids || PyModule_AddObjectRef(m, "record_function", (PyObject *)&RFType) ||
        PyModule_AddObjectRef(m, "Schedule", (PyObject *)&ScheduleType) ||
        PyModule_AddIntConstant(m, "SPAN_SIZE", (long)sizeof(sps_span_t)) ||
        PyModule_AddIntConstant(m, "COUNTER_SAMPLE_SIZE", (long)sizeof(sps_counter_sample_t)))
        return -1;
    for (PyMethodDef *d = prof_methods; d->ml_name; d++) {
        PyObject *f = PyCFunction_New(d, NULL);
        if (!f || PyModule_AddObject(m, d->ml_name, f)) {
            Py_XDECREF(f);
            return -1;
        }
    }
    return 0;
}
