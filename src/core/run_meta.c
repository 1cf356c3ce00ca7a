/* run_meta.c -- /metadata attributes a binding adds to the session's files
 * (sps_metadata_set): strings under names of its choosing, such as the
 * environment scope-profiler's metadata_detail="full" records.  Kept with
 * the session (sps_setup starts without), under a lock of their own; each
 * finalize writes a copy. */
#include "core/core.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char **g_keys, **g_values;
static size_t g_n, g_cap;

/* Index of key, or g_n.  Under the lock. */
static size_t find_locked(const char *key) {
    size_t i = 0;
    while (i < g_n && strcmp(g_keys[i], key) != 0) i++;
    return i;
}

/* Drops entry i.  Under the lock. */
static void drop_locked(size_t i) {
    free(g_keys[i]);
    free(g_values[i]);
    g_keys[i] = g_keys[g_n - 1];
    g_values[i] = g_values[g_n - 1];
    g_n--;
}

int sps_metadata_set(const char *key, const char *value) {
    if (!key || !*key) return SPS_EINVAL;
    if (!sps_is_active()) return SPS_ENOSESSION;
    int rc = 0;
    pthread_mutex_lock(&g_lock);
    size_t i = find_locked(key);
    if (!value) {
        if (i < g_n) drop_locked(i);
    } else if (i < g_n) {
        char *v = strdup(value);
        if (v) free(g_values[i]), g_values[i] = v;
        else rc = SPS_ENOMEM;
    } else {
        if (g_n == g_cap) {
            size_t cap = g_cap ? 2 * g_cap : 16;
            char **k = realloc(g_keys, cap * sizeof *k);
            if (k) g_keys = k;
            char **v = k ? realloc(g_values, cap * sizeof *v) : NULL;
            if (v) g_values = v, g_cap = cap;
        }
        char *k = g_n < g_cap ? strdup(key) : NULL, *v = k ? strdup(value) : NULL;
        if (!v) {
            free(k);
            rc = SPS_ENOMEM;
        } else {
            g_keys[g_n] = k;
            g_values[g_n++] = v;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int sps__meta_copy(char ***keys, char ***values, size_t *n) {
    *keys = *values = NULL;
    *n = 0;
    int rc = 0;
    pthread_mutex_lock(&g_lock);
    if (g_n) {
        *keys = calloc(g_n, sizeof **keys);
        *values = calloc(g_n, sizeof **values);
        rc = *keys && *values ? 0 : SPS_ENOMEM;
        for (size_t i = 0; !rc && i < g_n; i++) {
            (*keys)[i] = strdup(g_keys[i]);
            (*values)[i] = strdup(g_values[i]);
            *n = i + 1;
            if (!(*keys)[i] || !(*values)[i]) rc = SPS_ENOMEM;
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (rc) {
        sps__meta_free(*keys, *values, *n);
        *keys = *values = NULL;
        *n = 0;
    }
    return rc;
}

void sps__meta_free(char **keys, char **values, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (keys) free(keys[i]);
        if (values) free(values[i]);
    }
    free(keys);
    free(values);
}

void sps__meta_reset(void) {
    pthread_mutex_lock(&g_lock);
    while (g_n) drop_locked(g_n - 1);
    pthread_mutex_unlock(&g_lock);
}

/* In a fork child (session.c's atfork_child), where only the forking thread
 * exists: the lock of /metadata strings, held at the fork by another thread
 * of the parent (for a few instructions), would stay held forever, and the
 * child's session open, which runs in the fork handler, would wait on it.
 * Re-initialised unlocked. */
void sps__meta_atfork_child(void) {
    pthread_mutex_unlock(&g_lock); /* atfork_prepare took it in this thread */
}

/* Around a fork (session.c's atfork_prepare / atfork_parent): held across
 * it, so that no other thread of the parent is half-way through a change
 * the child would inherit (the child re-initialises it, above). */
void sps__meta_fork_lock(int lock) {
    if (lock) pthread_mutex_lock(&g_lock);
    else pthread_mutex_unlock(&g_lock);
}
