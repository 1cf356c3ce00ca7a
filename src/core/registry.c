/* registry.c -- process-wide interning of region names to small ids.
 *
 * Ids are dense (1, 2, ...), never reused and valid for the life of the
 * process, so a call site may cache one in a static across sessions.  The
 * index (util.h's) hashes the raw bytes of the name; lookups and inserts
 * take one mutex (interning is not on the hot path). */
#include "core/core.h"

#include <stdlib.h>
#include <string.h>

#define NAME_MAX_BYTES 4096

typedef struct entry {
    char *raw;     /* identity: the bytes as given (cut at NAME_MAX_BYTES) */
    char *display; /* valid UTF-8 for files and tables */
} entry_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t *g_ent;          /* index = id; [0] is the invalid region */
static _Atomic uint32_t g_count; /* number of ids handed out, incl. 0 */
static uint32_t g_cap;
static sps__htab_t g_index;     /* raw name -> id (util.h) */

static int ensure_entries(void) {
    if (g_count < g_cap) return 0;
    uint32_t cap = g_cap ? g_cap * 2 : 256;
    entry_t *e = realloc(g_ent, cap * sizeof *e);
    if (!e) return -1;
    g_ent = e;
    g_cap = cap;
    return 0;
}

/* First-time setup of the table: entry 0 is the invalid region. */
static int init_locked(void) {
    if (g_count) return 0;
    if (ensure_entries()) return -1;
    g_ent[0].raw = NULL;
    g_ent[0].display = "(invalid)";
    atomic_store(&g_count, 1);
    return 0;
}

/* Adds name (n bytes) as a new id at the empty slot where probe p
 * stopped.  Under the lock.  SPS_REGION_INVALID when out of ids or
 * memory. */
static sps_region_t insert_locked(const char *name, size_t n, sps__hprobe_t *p) {
    if (g_count > SPS__REGION_MAX) return SPS_REGION_INVALID;
    if (sps__htab_make_room(&g_index, p) || ensure_entries()) return SPS_REGION_INVALID;
    char *raw = malloc(n + 1);
    char *disp = n ? sps__utf8_sanitize(name, n) : strdup("(empty)");
    if (!raw || !disp) {
        free(raw);
        free(disp);
        return SPS_REGION_INVALID;
    }
    memcpy(raw, name, n);
    raw[n] = 0;
    uint32_t id = g_count;
    g_ent[id] = (entry_t){raw, disp};
    sps__htab_put(&g_index, p, id);
    atomic_store(&g_count, id + 1);
    return id;
}

/* Returns the id of name, interning it on first sight; SPS_REGION_INVALID
 * for NULL or when memory runs out. */
sps_region_t sps__registry_intern(const char *name) {
    if (!name) return SPS_REGION_INVALID;
    size_t n = strnlen(name, NAME_MAX_BYTES);
    if (n == NAME_MAX_BYTES) n = sps__utf8_cut(name, n); /* a longer name */
    uint64_t h = sps__hash_bytes(name, n);
    pthread_mutex_lock(&g_lock);
    sps_region_t id = SPS_REGION_INVALID;
    if (init_locked() == 0) {
        sps__hprobe_t p = sps__htab_probe(&g_index, h);
        for (uint32_t i; id == SPS_REGION_INVALID && sps__htab_next(&g_index, &p, &i);)
            if (strncmp(g_ent[i].raw, name, n) == 0 && g_ent[i].raw[n] == 0) id = i;
        if (id == SPS_REGION_INVALID && (id = insert_locked(name, n, &p)))
            sps__crash_region(id, g_ent[id].raw); /* crash.c's log */
    }
    pthread_mutex_unlock(&g_lock);
    return id;
}

/* Number of ids handed out so far, counting the invalid id 0. */
uint32_t sps__registry_count(void) {
    uint32_t n = atomic_load(&g_count);
    return n ? n : 1;
}

/* Display name of r: valid UTF-8, stable for the process life; NULL for an
 * id never handed out. */
const char *sps__registry_name(sps_region_t r) {
    if (r == 0) return "(invalid)";
    if (r >= atomic_load(&g_count)) return NULL;
    pthread_mutex_lock(&g_lock); /* g_ent may be moved by realloc */
    const char *s = g_ent[r].display;
    pthread_mutex_unlock(&g_lock);
    return s;
}

/* In a fork child (session.c's atfork_child), where only the forking thread
 * exists: the registry's lock, held at the fork by another thread of the
 * parent (for a few instructions), would stay held forever, and the child's
 * session open, which runs in the fork handler, would wait on it.
 * atfork_prepare took it in this thread: unlocked here. */
void sps__registry_atfork_child(void) {
    pthread_mutex_unlock(&g_lock); /* atfork_prepare took it in this thread */
}

/* Around a fork (session.c's atfork_prepare / atfork_parent): held across
 * it, so that no other thread of the parent is half-way through a change
 * the child would inherit (the child re-initialises it, above). */
void sps__registry_fork_lock(int lock) {
    if (lock) pthread_mutex_lock(&g_lock);
    else pthread_mutex_unlock(&g_lock);
}
