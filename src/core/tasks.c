/* tasks.c -- the session's task table: the asyncio tasks (or other
 * cooperative lanes) a binding follows, one row each, as the binding last
 * handed them over (sps_tasks_set).  Each finalize writes a copy to
 * /task_table.  The binding keeps the counts (steps, running and suspended
 * time) itself: they change at task switches, which C never sees; this
 * keeps the table and its strings, off the hot path, under a lock of its
 * own, and forgets it with the session. */
#include "core/core.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static sps_task_t *g_tasks;
static size_t g_n;
static sps_task_step_t *g_steps; /* sps_task_steps_set's, as given */
static size_t g_nsteps;

/* Frees rows t[0..n) and their strings. */
static void rows_free(sps_task_t *t, size_t n) {
    for (size_t i = 0; t && i < n; i++) {
        free((char *)t[i].kind);
        free((char *)t[i].name);
        free((char *)t[i].coro_name);
    }
    free(t);
}

/* A deep copy of t[0..n) into *out (NULL when n is 0): 0 or SPS_ENOMEM. */
static int rows_copy(const sps_task_t *t, size_t n, sps_task_t **out) {
    *out = NULL;
    if (!n) return 0;
    sps_task_t *c = calloc(n, sizeof *c);
    if (!c) return SPS_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        c[i] = t[i];
        c[i].kind = strdup(t[i].kind ? t[i].kind : "");
        c[i].name = strdup(t[i].name ? t[i].name : "");
        c[i].coro_name = strdup(t[i].coro_name ? t[i].coro_name : "");
        if (!c[i].kind || !c[i].name || !c[i].coro_name) {
            rows_free(c, i + 1);
            return SPS_ENOMEM;
        }
    }
    *out = c;
    return 0;
}

int sps_tasks_set(const sps_task_t *tasks, size_t n) {
    if (n && !tasks) return SPS_EINVAL;
    if (!sps_is_active()) return SPS_ENOSESSION;
    sps_task_t *c;
    int rc = rows_copy(tasks, n, &c);
    if (rc) return rc;
    pthread_mutex_lock(&g_lock);
    rows_free(g_tasks, g_n);
    g_tasks = c;
    g_n = n;
    pthread_mutex_unlock(&g_lock);
    return 0;
}

int sps_task_steps_set(const sps_task_step_t *steps, size_t n) {
    if (n && !steps) return SPS_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (steps[i].end_ns < steps[i].start_ns) return SPS_EINVAL;
    if (!sps_is_active()) return SPS_ENOSESSION;
    sps_task_step_t *c = n ? malloc(n * sizeof *c) : NULL;
    if (n && !c) return SPS_ENOMEM;
    if (n) memcpy(c, steps, n * sizeof *c);
    pthread_mutex_lock(&g_lock);
    free(g_steps);
    g_steps = c;
    g_nsteps = n;
    pthread_mutex_unlock(&g_lock);
    return 0;
}

int sps__task_steps_copy(sps_task_step_t **out, size_t *n) {
    pthread_mutex_lock(&g_lock);
    *n = 0;
    *out = g_nsteps ? malloc(g_nsteps * sizeof **out) : NULL;
    int rc = g_nsteps && !*out ? SPS_ENOMEM : 0;
    if (*out) {
        memcpy(*out, g_steps, g_nsteps * sizeof **out);
        *n = g_nsteps;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int sps__tasks_copy(sps_task_t **out, size_t *n) {
    pthread_mutex_lock(&g_lock);
    int rc = rows_copy(g_tasks, g_n, out);
    *n = rc ? 0 : g_n;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

void sps__tasks_free(sps_task_t *t, size_t n) { rows_free(t, n); }

void sps__tasks_reset(void) {
    pthread_mutex_lock(&g_lock);
    rows_free(g_tasks, g_n);
    g_tasks = NULL;
    g_n = 0;
    free(g_steps);
    g_steps = NULL;
    g_nsteps = 0;
    pthread_mutex_unlock(&g_lock);
}

/* In a fork child (session.c's atfork_child), where only the forking thread
 * exists: the task table's lock, held at the fork by another thread of the
 * parent (for a few instructions), would stay held forever, and the child's
 * session open, which runs in the fork handler, would wait on it.
 * Re-initialised unlocked. */
void sps__tasks_atfork_child(void) {
    pthread_mutex_unlock(&g_lock); /* atfork_prepare took it in this thread */
}

/* Around a fork (session.c's atfork_prepare / atfork_parent): held across
 * it, so that no other thread of the parent is half-way through a change
 * the child would inherit (the child re-initialises it, above). */
void sps__tasks_fork_lock(int lock) {
    if (lock) pthread_mutex_lock(&g_lock);
    else pthread_mutex_unlock(&g_lock);
}
