/* nvtx_inject.c -- a test NVTX tool (issue 38 part 5): an injection library
 * that NVTX loads from NVTX_INJECTION64_PATH, as Nsight Systems' own.  Its
 * InitializeInjectionNvtx2 fills NVTX's callback tables (the core2 module:
 * domains, registered strings, domain ranges; the core module: the
 * default domain's ranges and marks) with functions that record what they
 * receive; tests/c/test_emit_nvtx.c and tests/python/test_emit_nvtx.py
 * read the record through the nvtx_inject_* functions below (dlsym /
 * ctypes on the same library, which the loader hands back already loaded).
 *
 * The record: one event per push, pop and mark (kind, the calling thread's
 * id, the domain's name -- "" for the default domain -- and the range's
 * name), and per-name counts of domain creations and string registrations.
 * Domain and string handles are the addresses of this library's own
 * records, so a handle names what it was made from. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define NAME_MAX_ 96
#define MAX_EVENTS (1 << 20)
#define MAX_HANDLES 4096

typedef struct dom {
    char name[NAME_MAX_];
} dom_t;

typedef struct str {
    const dom_t *dom;
    char name[NAME_MAX_];
} str_t;

typedef struct event {
    char kind;  /* 'P' push, 'O' pop, 'M' mark */
    long tid;
    const dom_t *dom; /* NULL: the default domain */
    char name[NAME_MAX_];
} event_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static event_t *g_ev;
static int g_nev, g_lost, g_initialized;
static dom_t g_doms[MAX_HANDLES];
static int g_ndoms;
static str_t g_strs[MAX_HANDLES];
static int g_nstrs;

static long tid_now(void) { return (long)syscall(SYS_gettid); }

static void copy_name(char *dst, const char *src) {
    snprintf(dst, NAME_MAX_, "%s", src ? src : "");
}

/* The name an event's attributes carry. */
static void attr_name(const nvtxEventAttributes_t *a, char *out) {
    out[0] = 0;
    if (!a) return;
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) copy_name(out, a->message.ascii);
    else if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered)
        copy_name(out, ((const str_t *)(const void *)a->message.registered)->name);
}

static void add(char kind, const dom_t *dom, const char *name) {
    pthread_mutex_lock(&g_lock);
    if (!g_ev) g_ev = calloc(MAX_EVENTS, sizeof *g_ev);
    if (g_ev && g_nev < MAX_EVENTS) {
        event_t *e = &g_ev[g_nev++];
        e->kind = kind;
        e->tid = tid_now();
        e->dom = dom;
        copy_name(e->name, name);
    } else {
        g_lost++;
    }
    pthread_mutex_unlock(&g_lock);
}

/* ---- core2: domains ------------------------------------------------------ */

static nvtxDomainHandle_t NVTX_API dom_create(const char *name) {
    pthread_mutex_lock(&g_lock);
    dom_t *d = NULL;
    if (g_ndoms < MAX_HANDLES) {
        d = &g_doms[g_ndoms++];
        copy_name(d->name, name);
    }
    pthread_mutex_unlock(&g_lock);
    return (nvtxDomainHandle_t)(void *)d;
}

static nvtxStringHandle_t NVTX_API str_register(nvtxDomainHandle_t dom, const char *s) {
    pthread_mutex_lock(&g_lock);
    str_t *h = NULL;
    if (g_nstrs < MAX_HANDLES) {
        h = &g_strs[g_nstrs++];
        h->dom = (const dom_t *)(void *)dom;
        copy_name(h->name, s);
    }
    pthread_mutex_unlock(&g_lock);
    return (nvtxStringHandle_t)(void *)h;
}

static int NVTX_API dom_push(nvtxDomainHandle_t dom, const nvtxEventAttributes_t *a) {
    char name[NAME_MAX_];
    attr_name(a, name);
    add('P', (const dom_t *)(void *)dom, name);
    return 0;
}

static int NVTX_API dom_pop(nvtxDomainHandle_t dom) {
    add('O', (const dom_t *)(void *)dom, "");
    return 0;
}

static void NVTX_API dom_mark(nvtxDomainHandle_t dom, const nvtxEventAttributes_t *a) {
    char name[NAME_MAX_];
    attr_name(a, name);
    add('M', (const dom_t *)(void *)dom, name);
}

/* NVTX_INJECT_NOOP=1 (bench/bench_emit.py): pushes and pops that do
 * nothing, so that a benchmark sees what an attached tool costs the
 * emitter, not what this tool's record costs */
static int NVTX_API dom_push_noop(nvtxDomainHandle_t dom, const nvtxEventAttributes_t *a) {
    (void)dom;
    (void)a;
    return 0;
}
static int NVTX_API dom_pop_noop(nvtxDomainHandle_t dom) {
    (void)dom;
    return 0;
}

/* ---- core: the default domain ------------------------------------------- */

static int NVTX_API push_a(const char *msg) {
    add('P', NULL, msg);
    return 0;
}
static int NVTX_API push_ex(const nvtxEventAttributes_t *a) {
    char name[NAME_MAX_];
    attr_name(a, name);
    add('P', NULL, name);
    return 0;
}
static int NVTX_API pop0(void) {
    add('O', NULL, "");
    return 0;
}
static void NVTX_API mark_a(const char *msg) { add('M', NULL, msg); }

/* ---- the injection entry point ------------------------------------------ */

static int set_slot(NvtxFunctionTable t, unsigned size, unsigned id, NvtxFunctionPointer f) {
    if (!t || id >= size || !t[id]) return 0;
    *t[id] = f;
    return 1;
}

EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
    const NvtxExportTableCallbacks *cb =
        (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb) return 0;
    NvtxFunctionTable core = NULL, core2 = NULL;
    unsigned ncore = 0, ncore2 = 0;
    if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &ncore) ||
        !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &ncore2))
        return 0;
    int ok = 1;
    ok &= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)dom_create);
    ok &= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainRegisterStringA,
                   (NvtxFunctionPointer)str_register);
    const char *noop = getenv("NVTX_INJECT_NOOP");
    int quiet = noop && noop[0] == '1';
    ok &= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainRangePushEx,
                   quiet ? (NvtxFunctionPointer)dom_push_noop : (NvtxFunctionPointer)dom_push);
    ok &= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainRangePop,
                   quiet ? (NvtxFunctionPointer)dom_pop_noop : (NvtxFunctionPointer)dom_pop);
    ok &= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)dom_mark);
    ok &= set_slot(core, ncore, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)push_a);
    ok &= set_slot(core, ncore, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)push_ex);
    ok &= set_slot(core, ncore, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)pop0);
    ok &= set_slot(core, ncore, NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)mark_a);
    pthread_mutex_lock(&g_lock);
    g_initialized = ok;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

/* ---- what the tests read ------------------------------------------------- */

/* 1 once NVTX initialized this tool (and every slot was filled). */
EXPORT int nvtx_inject_initialized(void) {
    pthread_mutex_lock(&g_lock);
    int v = g_initialized;
    pthread_mutex_unlock(&g_lock);
    return v;
}

/* Events recorded since the last reset; events that did not fit. */
EXPORT int nvtx_inject_count(void) {
    pthread_mutex_lock(&g_lock);
    int n = g_nev;
    pthread_mutex_unlock(&g_lock);
    return n;
}
EXPORT int nvtx_inject_lost(void) { return g_lost; }

/* Event i: its kind ('P', 'O', 'M'), thread id, domain name ("" for the
 * default domain) and name, copied into the caller's buffers (cap bytes
 * each).  0, or -1 when i is out of range. */
EXPORT int nvtx_inject_event(int i, char *kind, long *tid, char *domain, char *name,
                             size_t cap) {
    pthread_mutex_lock(&g_lock);
    int rc = -1;
    if (i >= 0 && i < g_nev) {
        const event_t *e = &g_ev[i];
        *kind = e->kind;
        *tid = e->tid;
        snprintf(domain, cap, "%s", e->dom ? e->dom->name : "");
        snprintf(name, cap, "%s", e->name);
        rc = 0;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* Times a domain named name was created. */
EXPORT int nvtx_inject_domains(const char *name) {
    pthread_mutex_lock(&g_lock);
    int n = 0;
    for (int i = 0; i < g_ndoms; i++) n += strcmp(g_doms[i].name, name) == 0;
    pthread_mutex_unlock(&g_lock);
    return n;
}

/* Times the string s was registered in a domain named domain. */
EXPORT int nvtx_inject_registrations(const char *domain, const char *s) {
    pthread_mutex_lock(&g_lock);
    int n = 0;
    for (int i = 0; i < g_nstrs; i++)
        n += g_strs[i].dom && strcmp(g_strs[i].dom->name, domain) == 0 &&
             strcmp(g_strs[i].name, s) == 0;
    pthread_mutex_unlock(&g_lock);
    return n;
}

/* Forgets the events (not the domains and strings, which live on). */
EXPORT void nvtx_inject_reset(void) {
    pthread_mutex_lock(&g_lock);
    g_nev = 0;
    g_lost = 0;
    pthread_mutex_unlock(&g_lock);
}
