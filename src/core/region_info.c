/* region_info.c -- what a session knows about a region besides its calls:
 * where it is defined (file, line, source text), its tags, and the
 * per-call metadata of the period the next finalize writes.  The HDF5
 * writer puts them in /rank_region_index's source_files, source_lines,
 * source_texts, tags and event_metadata columns (scope-profiler's).
 *
 * Kept apart from the registry (names are process-wide, these belong to a
 * session: sps_setup clears them) and off the hot path: its own lock, and
 * a finalize copies what it writes, so a binding may set an attribute
 * while a file is being written. */
#include "core/core.h"

#include <stdlib.h>
#include <string.h>

typedef struct rinfo_slot {
    char *file, *text, *tags, *md;
    int64_t line;
    uint64_t md_calls, md_gen;
} rinfo_slot_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static rinfo_slot_t *g_slots; /* by region id */
static uint32_t g_cap;
static uint64_t g_md_gen;     /* numbers each metadata blob set */

/* The slot of r, grown as needed; NULL when out of memory.  Under the lock. */
static rinfo_slot_t *slot_locked(sps_region_t r) {
    if (r >= g_cap) {
        uint32_t cap = r + 256;
        rinfo_slot_t *s = realloc(g_slots, cap * sizeof *s);
        if (!s) return NULL;
        memset(s + g_cap, 0, (cap - g_cap) * sizeof *s);
        for (uint32_t i = g_cap; i < cap; i++) s[i].line = -1;
        g_slots = s;
        g_cap = cap;
    }
    return &g_slots[r];
}

/* *dst = a copy of src (NULL stays NULL).  0, or -1 out of memory (*dst
 * unchanged). */
static int replace(char **dst, const char *src) {
    char *c = src ? strdup(src) : NULL;
    if (src && !c) return -1;
    free(*dst);
    *dst = c;
    return 0;
}

/* 0 if r is an id handed out (not the invalid region), else SPS_EINVAL. */
static int check_id(sps_region_t r) {
    return r != SPS_REGION_INVALID && r < sps__registry_count() ? 0 : SPS_EINVAL;
}

int sps_region_set_source(sps_region_t r, const char *file, int64_t line,
                          const char *text) {
    int rc = check_id(r);
    if (rc) return rc;
    pthread_mutex_lock(&g_lock);
    rinfo_slot_t *s = slot_locked(r);
    if (!s || replace(&s->file, file) || replace(&s->text, text)) rc = SPS_ENOMEM;
    else s->line = line < 0 ? -1 : line;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int sps_region_set_tags(sps_region_t r, const char *tags_json) {
    int rc = check_id(r);
    if (rc) return rc;
    pthread_mutex_lock(&g_lock);
    rinfo_slot_t *s = slot_locked(r);
    if (!s || replace(&s->tags, tags_json)) rc = SPS_ENOMEM;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int sps_region_set_event_metadata(sps_region_t r, const char *json, uint64_t ncalls) {
    int rc = check_id(r);
    if (rc) return rc;
    pthread_mutex_lock(&g_lock);
    rinfo_slot_t *s = slot_locked(r);
    if (!s || replace(&s->md, json)) rc = SPS_ENOMEM;
    else {
        s->md_calls = json ? ncalls : 0;
        s->md_gen = ++g_md_gen;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int sps__rinfo_copy(sps_region_t r, sps__rinfo_t *out) {
    memset(out, 0, sizeof *out);
    out->line = -1;
    int rc = 0;
    pthread_mutex_lock(&g_lock);
    if (r < g_cap) {
        const rinfo_slot_t *s = &g_slots[r];
        out->line = s->line;
        out->md_calls = s->md_calls;
        out->md_gen = s->md_gen;
        if (replace(&out->file, s->file) || replace(&out->text, s->text) ||
            replace(&out->tags, s->tags) || replace(&out->md, s->md))
            rc = SPS_ENOMEM;
    }
    pthread_mutex_unlock(&g_lock);
    if (rc) sps__rinfo_free(out);
    return rc;
}

void sps__rinfo_free(sps__rinfo_t *i) {
    free(i->file);
    free(i->text);
    free(i->tags);
    free(i->md);
    memset(i, 0, sizeof *i);
    i->line = -1;
}

void sps__rinfo_written(sps_region_t r, uint64_t md_gen) {
    pthread_mutex_lock(&g_lock);
    if (r < g_cap && md_gen && g_slots[r].md_gen == md_gen) {
        free(g_slots[r].md);
        g_slots[r].md = NULL;
        g_slots[r].md_calls = 0;
    }
    pthread_mutex_unlock(&g_lock);
}

void sps__rinfo_reset(void) {
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < g_cap; i++) {
        free(g_slots[i].file);
        free(g_slots[i].text);
        free(g_slots[i].tags);
        free(g_slots[i].md);
        memset(&g_slots[i], 0, sizeof g_slots[i]);
        g_slots[i].line = -1;
    }
    pthread_mutex_unlock(&g_lock);
}

/* In a fork child (session.c's atfork_child), where only the forking thread
 * exists: the lock of region attributes, held at the fork by another thread
 * of the parent (for a few instructions), would stay held forever, and the
 * child's session open, which runs in the fork handler, would wait on it.
 * Re-initialised unlocked. */
void sps__rinfo_atfork_child(void) {
    pthread_mutex_unlock(&g_lock); /* atfork_prepare took it in this thread */
}

/* Around a fork (session.c's atfork_prepare / atfork_parent): held across
 * it, so that no other thread of the parent is half-way through a change
 * the child would inherit (the child re-initialises it, above). */
void sps__rinfo_fork_lock(int lock) {
    if (lock) pthread_mutex_lock(&g_lock);
    else pthread_mutex_unlock(&g_lock);
}
