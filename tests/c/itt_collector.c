/* itt_collector.c -- a test ITT collector (the library VTune would be),
 * loaded by ittnotify's static part from INTEL_LIBITTNOTIFY64 (tests of
 * issue 38 part 2: tests/c/test_emit_itt.c, tests/python/test_emit_itt.py).
 *
 * The protocol (third_party/ittnotify/src/ittnotify_static.c,
 * __itt_init_ittlib): the static part dlopen()s the library; one that
 * exports __itt_api_init is a "version 2" collector, called with the
 * static part's __itt_global, whose api_list names every ITT function
 * ("__itt_task_begin", ...) with the address of the pointer the static part
 * calls through.  This collector points the ones it implements at its own
 * functions and every other at the entry's null_func (as Intel's reference
 * collector does).  Each module of a process has its own static part (the
 * library, the Python extension): each calls __itt_api_init with its own
 * global; domains and string handles are shared by name, as VTune's are.
 *
 * What it receives goes, one line per call, to the file named by
 * SPS_ITT_LOG (appended with O_APPEND: lines of several threads do not
 * mix); without SPS_ITT_LOG nothing is written:
 *   init                         __itt_api_init (once per static part)
 *   domain NAME                  __itt_domain_create (every call)
 *   string NAME                  __itt_string_handle_create (every call)
 *   begin TID DOMAIN NAME        __itt_task_begin (TID: the kernel's)
 *   end TID DOMAIN               __itt_task_end
 *   marker TID DOMAIN NAME SCOPE __itt_marker
 * Names are written as given (the tests use names without newlines). */
#define _GNU_SOURCE
#define INTEL_NO_MACRO_BODY
#define INTEL_ITTNOTIFY_API_PRIVATE
#include "ittnotify.h"
#include "ittnotify_config.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define COL_EXPORT __attribute__((visibility("default")))

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_fd = -1;
static __itt_domain *g_domains;        /* by name, for the process life */
static __itt_string_handle *g_strings; /* by name, for the process life */

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...) {
    if (g_fd < 0) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n > sizeof buf - 2) n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(g_fd, buf, (size_t)n);
    (void)w;
}

static long tid(void) {
    return (long)syscall(SYS_gettid);
}

static const char *dname(const __itt_domain *d) {
    return d && d->nameA ? d->nameA : "(null)";
}

static const char *sname(const __itt_string_handle *h) {
    return h && h->strA ? h->strA : "(null)";
}

static __itt_domain *ITTAPI col_domain_create(const char *name) {
    if (!name) return NULL;
    pthread_mutex_lock(&g_lock);
    log_line("domain %s", name);
    __itt_domain *d = g_domains;
    while (d && strcmp(d->nameA, name) != 0) d = d->next;
    if (!d && (d = calloc(1, sizeof *d)) != NULL) {
        d->flags = 1; /* enabled */
        d->nameA = strdup(name);
        d->next = g_domains;
        g_domains = d;
    }
    pthread_mutex_unlock(&g_lock);
    return d;
}

static __itt_string_handle *ITTAPI col_string_handle_create(const char *name) {
    if (!name) return NULL;
    pthread_mutex_lock(&g_lock);
    log_line("string %s", name);
    __itt_string_handle *h = g_strings;
    while (h && strcmp(h->strA, name) != 0) h = h->next;
    if (!h && (h = calloc(1, sizeof *h)) != NULL) {
        h->strA = strdup(name);
        h->next = g_strings;
        g_strings = h;
    }
    pthread_mutex_unlock(&g_lock);
    return h;
}

static void ITTAPI col_task_begin(const __itt_domain *d, __itt_id id, __itt_id parent,
                                  __itt_string_handle *name) {
    (void)id;
    (void)parent;
    log_line("begin %ld %s %s", tid(), dname(d), sname(name));
}

static void ITTAPI col_task_end(const __itt_domain *d) {
    log_line("end %ld %s", tid(), dname(d));
}

static void ITTAPI col_marker(const __itt_domain *d, __itt_id id, __itt_string_handle *name,
                              __itt_scope scope) {
    (void)id;
    log_line("marker %ld %s %s %d", tid(), dname(d), sname(name), (int)scope);
}

static const struct {
    const char *name;
    void *fn;
} g_impl[] = {
    {"__itt_domain_create", (void *)col_domain_create},
    {"__itt_string_handle_create", (void *)col_string_handle_create},
    {"__itt_task_begin", (void *)col_task_begin},
    {"__itt_task_end", (void *)col_task_end},
    {"__itt_marker", (void *)col_marker},
};

/* Called by each static part once, at its first ITT call. */
COL_EXPORT void __itt_api_init(__itt_global *p, __itt_group_id groups);
COL_EXPORT void __itt_api_init(__itt_global *p, __itt_group_id groups) {
    (void)groups;
    if (!p || !p->api_list_ptr) return;
    pthread_mutex_lock(&g_lock);
    if (g_fd < 0) {
        const char *path = getenv("SPS_ITT_LOG");
        if (path && *path) g_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    }
    log_line("init");
    pthread_mutex_unlock(&g_lock);
    for (__itt_api_info *a = p->api_list_ptr; a->name; a++) {
        void *fn = a->null_func;
        for (size_t i = 0; i < sizeof g_impl / sizeof g_impl[0]; i++)
            if (strcmp(a->name, g_impl[i].name) == 0) fn = g_impl[i].fn;
        *a->func_ptr = fn;
    }
    /* what the static part made before it loaded the collector (a program
     * that created a domain or handle before its first other ITT call):
     * made again here, so that the log names them */
    for (__itt_domain *d = p->domain_list; d; d = d->next)
        if (d->nameA) (void)col_domain_create(d->nameA);
    for (__itt_string_handle *h = p->string_list; h; h = h->next)
        if (h->strA) (void)col_string_handle_create(h->strA);
}
