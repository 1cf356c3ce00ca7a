/* likwid.c -- LIKWID's marker API (include/spanscope_likwid.h, the
 * drop-in include/likwid/likwid-marker.h) over spanscope's public C API.
 *
 * The mapping (docs/likwid.md says it for users):
 * - a tag is the spanscope region of the same name (sps_region);
 * - each thread keeps its own table tag -> entry (region id, started, the
 *   open call's start, its completed calls and their time), as LIKWID keeps
 *   its results per hardware thread: START and STOP look the tag up there
 *   (the one string hash and index of src/util, no lock), then call
 *   sps_begin / sps_end; GET and RESET read and zero the entry;
 * - INIT starts a session from the SPANSCOPE_* environment
 *   (sps_setup_from_env, the core's setup of every face) when none runs,
 *   and CLOSE finalizes that session; a running session is used and left
 *   to its owner.
 *
 * Thread entries are freed at thread exit (a pthread key) and, for the
 * thread that calls it, at CLOSE; g_on says whether the API is on.  The
 * generation g_gen is bumped at each INIT: a thread's table from an earlier
 * INIT..CLOSE is dropped at its next use, so no count leaks across runs. */
#include "spanscope_likwid.h"
#include "util/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char *tag;          /* owned copy */
    uint64_t hash;      /* sps__hash_bytes of tag */
    sps_region_t id;    /* the spanscope region */
    int started;        /* a call is open on this thread */
    int64_t start_ns;   /* its start (sps_now_ns) */
    int count;          /* completed calls since INIT / RESET */
    int64_t total_ns;   /* their summed duration */
} entry_t;

typedef struct table {
    entry_t *e;         /* n entries, cap allocated */
    size_t n, cap;
    sps__htab_t index;  /* tag -> index into e */
    unsigned gen;       /* g_gen when made */
} table_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* INIT/CLOSE */
static int g_on;          /* marker API on (atomic loads) */
static int g_owned;       /* INIT started the session, CLOSE ends it */
static unsigned g_gen;    /* INIT count */
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_key;
static int g_key_ok;
static __thread table_t *t_table;

static void table_free(void *p) {
    table_t *t = p;
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) free(t->e[i].tag);
    free(t->e);
    sps__htab_free(&t->index);
    free(t);
}

static void key_make(void) {
    g_key_ok = pthread_key_create(&g_key, table_free) == 0;
}

static int is_on(void) {
    return __atomic_load_n(&g_on, __ATOMIC_ACQUIRE);
}

/* This thread's table for the current INIT, made on first use; NULL when
 * out of memory. */
static table_t *my_table(void) {
    unsigned gen = __atomic_load_n(&g_gen, __ATOMIC_ACQUIRE);
    table_t *t = t_table;
    if (t && t->gen == gen) return t;
    if (t) { /* left from an earlier INIT..CLOSE */
        table_free(t);
        t_table = NULL;
        if (g_key_ok) pthread_setspecific(g_key, NULL);
    }
    t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->gen = gen;
    t_table = t;
    pthread_once(&g_key_once, key_make);
    if (g_key_ok) pthread_setspecific(g_key, t); /* freed at thread exit */
    return t;
}

/* The entry of tag in t, or NULL (not there). */
static entry_t *find(table_t *t, const char *tag, size_t len, uint64_t h, sps__hprobe_t *p) {
    *p = sps__htab_probe(&t->index, h);
    for (uint32_t i; sps__htab_next(&t->index, p, &i);) {
        entry_t *e = &t->e[i];
        if (e->hash == h && !strncmp(e->tag, tag, len) && e->tag[len] == 0) return e;
    }
    return NULL;
}

/* The entry of tag on this thread, made when create and missing.  NULL
 * with *err set: -ENOMEM, -EINVAL (NULL/empty tag or a name spanscope
 * refuses), or 0 (not there and !create). */
static entry_t *lookup(const char *tag, int create, int *err) {
    *err = 0;
    if (!tag || !*tag) {
        *err = -EINVAL;
        return NULL;
    }
    table_t *t = my_table();
    if (!t) {
        *err = -ENOMEM;
        return NULL;
    }
    size_t len = strlen(tag);
    uint64_t h = sps__hash_bytes(tag, len);
    sps__hprobe_t p;
    entry_t *e = find(t, tag, len, h, &p);
    if (e || !create) return e;
    sps_region_t id = sps_region(tag);
    if (id == SPS_REGION_INVALID) {
        *err = -EINVAL;
        return NULL;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        entry_t *ne = realloc(t->e, cap * sizeof *ne);
        if (!ne) {
            *err = -ENOMEM;
            return NULL;
        }
        t->e = ne;
        t->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy || sps__htab_make_room(&t->index, &p)) {
        free(copy);
        *err = -ENOMEM;
        return NULL;
    }
    memcpy(copy, tag, len + 1);
    sps__htab_put(&t->index, &p, (uint32_t)t->n);
    e = &t->e[t->n++];
    *e = (entry_t){.tag = copy, .hash = h, .id = id};
    return e;
}

void sps_likwid_init(void) {
    pthread_mutex_lock(&g_lock);
    if (g_on) {
        pthread_mutex_unlock(&g_lock);
        return;
    }
    if (!sps_is_active()) {
        /* the environment's session, as the C core sets it up for every
         * face (sps_setup_from_env: SPANSCOPE_OUTPUT and the other
         * SPANSCOPE_* variables over the TOML file SPANSCOPE_CONFIG names,
         * AUTO_FINALIZE); SPANSCOPE_DEACTIVATE_PROFILING=1 (or the file's
         * deactivate_profiling): markers on, nothing recorded.  Without
         * SPANSCOPE_OUTPUT or the file's file_path the file is
         * spanscope_likwid.h5 (sps_env_resolve: has_output counts the
         * file's settings too; a bad file is told here, before setup). */
        sps_env_t env;
        char err[512];
        err[0] = 0;
        int rc = sps_env_resolve(&env, err, sizeof err);
        if (rc == 0) rc = sps_setup_from_env(err, sizeof err);
        if (rc == 0 && sps_is_active()) {
            g_owned = 1;
            if (!env.has_output) sps_set_file_path("spanscope_likwid.h5");
        } else if (rc && rc != SPS_EACTIVE) {
            fprintf(stderr, "spanscope likwid: %s; not profiling\n",
                    err[0] ? err : sps_strerror(rc));
        }
    }
    __atomic_add_fetch(&g_gen, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&g_on, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_lock);
}

void sps_likwid_thread_init(void) {
    (void)is_on(); /* nothing per thread: every thread records */
}

int sps_likwid_is_on(void) {
    return is_on();
}

int sps_likwid_register(const char *tag) {
    if (!is_on()) return -EFAULT;
    int err;
    entry_t *e = lookup(tag, 1, &err);
    return e ? 0 : err;
}

int sps_likwid_start(const char *tag) {
    if (!is_on()) return -EFAULT;
    int err;
    entry_t *e = lookup(tag, 1, &err);
    if (!e) return err;
    if (e->started) { /* LIKWID warns and restarts; the open call goes on */
        fprintf(stderr, "WARN: Region %s was already started\n", tag);
        return 0;
    }
    e->started = 1;
    e->start_ns = sps_now_ns();
    sps_begin(e->id);
    return 0;
}

int sps_likwid_stop(const char *tag) {
    if (!is_on()) return -EFAULT;
    int err;
    entry_t *e = lookup(tag, 0, &err);
    if (err) return err;
    if (!e || !e->started) {
        fprintf(stderr, "WARN: Stopping an unknown/not-started region %s\n", tag);
        return -EFAULT;
    }
    sps_end(e->id);
    e->started = 0;
    e->count++;
    e->total_ns += sps_now_ns() - e->start_ns;
    return 0;
}

void sps_likwid_get(const char *tag, int *nevents, double *events, double *time, int *count) {
    (void)events; /* no hardware events: never written */
    int err;
    entry_t *e = is_on() ? lookup(tag, 0, &err) : NULL;
    if (nevents) *nevents = 0;
    if (time) *time = e ? (double)e->total_ns * 1e-9 : 0.0;
    if (count) *count = e ? e->count : 0;
}

int sps_likwid_reset(const char *tag) {
    if (!is_on()) return -EFAULT;
    int err;
    entry_t *e = lookup(tag, 0, &err);
    if (err) return err;
    if (!e) return -EFAULT;
    if (e->started) {
        fprintf(stderr, "ERROR: Can only reset stopped regions\n");
        return -EFAULT;
    }
    e->count = 0;
    e->total_ns = 0;
    return 0;
}

void sps_likwid_switch(void) {
    /* one group (time): nothing to switch to */
}

void sps_likwid_close(void) {
    pthread_mutex_lock(&g_lock);
    if (!g_on) {
        pthread_mutex_unlock(&g_lock);
        return;
    }
    __atomic_store_n(&g_on, 0, __ATOMIC_RELEASE);
    if (g_owned) {
        g_owned = 0;
        int rc = sps_finalize();
        if (rc)
            fprintf(stderr, "spanscope likwid: writing the profile failed: %s (%s)\n",
                    sps_strerror(rc), sps_last_error());
        sps_shutdown();
    }
    if (t_table) {
        table_free(t_table);
        t_table = NULL;
        if (g_key_ok) pthread_setspecific(g_key, NULL);
    }
    pthread_mutex_unlock(&g_lock);
}
