/* setup.c -- sps_setup and sps_shutdown: the public calls that open and close
 * a session.  They put the layers together: core opens the session, the
 * model's aggregate recorder is registered with core, integrations (MPI)
 * take part through their operations table, and the model's analysis is
 * reset with the recording. */
#include "api/api.h"
#include "api/device.h"
#include "api/env.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* What the model derived from a session's recording, forgotten with it
 * (called by core under the session lock): the analysis, the per-call
 * queries' kept calls, the regions' attributes, the task table and the
 * added /metadata. */
static void forget_derived(void) {
    sps__analysis_reset();
    sps__collect_reset();
    sps__rinfo_reset(); /* sources, tags, metadata are the session's */
    sps__tasks_reset(); /* and so are its tasks */
    sps__meta_reset();  /* and the /metadata a binding added */
}

/* api/signals.c: SIGTERM & co. write the profile (docs/signals.md) */

int sps_setup(const sps_config_t *cfg) {
    static const sps_config_t defaults = SPS_CONFIG_INIT;
    if (!cfg) cfg = &defaults;
    int rc = sps__config_check(cfg);
    if (rc) return rc;
    sps__process_init();
    if (sps__session_live()) return SPS_EACTIVE;
    /* core records aggregate mode through the model's fold */
    sps__agg_ops = &sps__agg_fold_ops;
    /* the spill writer analyzes retired chunks in its idle time, so that
     * finalize has less to do: while the recorders are quiet, and while
     * they are busy where a trial shows it does not slow them
     * (SPANSCOPE_BG_ANALYSIS=0: never; =1: whenever the writer is idle;
     * =quiet: only while the recorders are quiet; model/analyze.c) */
    const char *bg = getenv("SPANSCOPE_BG_ANALYSIS");
    sps__bg_ops = bg && strcmp(bg, "0") == 0 ? NULL : &sps__bg_analyze_ops;
    sps__bg_mode = !bg ? SPS__BG_TRIAL
                 : strcmp(bg, "1") == 0 ? SPS__BG_ALWAYS
                 : strcmp(bg, "quiet") == 0 ? SPS__BG_QUIET : SPS__BG_TRIAL;
    /* a long analysis runs on two cores (SPANSCOPE_ANALYSIS_THREADS=1: on
     * one; model/analyze.c) */
    const char *at = getenv("SPANSCOPE_ANALYSIS_THREADS");
    sps__an_split_min = at && strcmp(at, "1") == 0 ? UINT64_MAX : sps__an_split_default;
    /* The registered distributed integration (api/dist.c; MPI: collective
     * when MPI is initialised).  Runs before the lock: it talks to other
     * ranks. */
    sps__dist_t dist = {0};
    rc = cfg->local ? 0 : sps__dist_setup(&dist);
    if (rc) return rc;
    rc = sps__session_open(cfg, &dist, forget_derived);
    /* SIGTERM & co. write the profile (api/signals.c) */
    if (!rc && (rc = sps__signals_install()) != 0) sps__session_close(forget_derived);
    /* stack samples (the sampler integration's table: src/ext/sampler.c) */
    const sps__sample_ops_t *smp = sps__sample_ops;
    if (!rc && cfg->sample_hz) {
        rc = smp ? smp->start(cfg->sample_hz) : SPS_ENOTSUP;
        if (rc) {
            sps__signals_uninstall(); /* the dispositions as they were */
            sps__session_close(forget_derived);
        }
    }
    return rc;
}

int sps_shutdown(void) {
    sps__signals_uninstall(); /* api/signals.c: the dispositions as they were */
    const sps__sample_ops_t *smp = sps__sample_ops;
    if (smp) smp->session_end();
    if (sps__session_close(forget_derived)) sps__dist_shutdown();
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Pause and resume                                                          */
/* ------------------------------------------------------------------------ */

/* Both under the session lock, so that a pause never races a setup or a
 * shutdown into leaving sps__active on for a closed session. */
static int pause_set(int on) {
    pthread_mutex_lock(&sps__g.lock);
    int rc = sps__session_live() ? 0 : SPS_ENOSESSION;
    if (rc == 0) sps__pause_set(on);
    pthread_mutex_unlock(&sps__g.lock);
    return rc;
}

int sps_pause(void) { return pause_set(1); }
int sps_resume(void) { return pause_set(0); }

int sps_is_paused(void) {
    return sps__session_live() && __atomic_load_n(&sps__paused, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------ */
/* The environment                                                           */
/* ------------------------------------------------------------------------ */

/* The settings come from the one table of src/api/env.c: defaults < the
 * TOML file SPANSCOPE_CONFIG names < the SPANSCOPE_* variables (each with
 * scope-profiler's SCOPE_PROFILER_* name as an alias) < what the program
 * passes itself (sps_setup's cfg).  sps_env_read reads the variables
 * only; sps_env_resolve and sps_setup_from_env read the file too. */

/* sps_env_resolve's last resolution: its strings live as long as it. */
static pthread_mutex_t g_env_lock = PTHREAD_MUTEX_INITIALIZER;
static sps__settings_t *g_env_last;
static char *g_env_tags;

/* Setting index of a variable or a [profiling] key (the table has both). */
static int env_ix(const char *name) {
    int i = strncmp(name, "SPANSCOPE_", 10) ? sps__setting_by_toml(name)
                                            : sps__setting_by_env(name);
    return i; /* every name used here is in the table (tests/c/test_env_config.c) */
}

/* -1 when setting i is unset, else its boolean (0 or SPS_EINVAL). */
static int env_tri(const sps__settings_t *s, const char *name, int *out) {
    int i = env_ix(name), b = 0;
    *out = -1;
    if (s->v[i].from == SPS__FROM_DEFAULT) return 0;
    int rc = sps__settings_bool(s, i, &b);
    if (!rc) *out = b;
    return rc;
}

/* Where setting i came from, for messages: "VAR=value" or "FILE:LINE: key". */
static void env_where(const sps__settings_t *s, int i, char *buf, size_t cap) {
    const sps__resolved_t *r = &s->v[i];
    if (r->from == SPS__FROM_FILE)
        snprintf(buf, cap, "%s:%d: %s", s->path, sps__tv_line(r->tv), r->via);
    else if (r->from != SPS__FROM_DEFAULT)
        snprintf(buf, cap, "%s=%s", r->via, r->text);
    else
        snprintf(buf, cap, "%s", sps__settings_table(NULL)[i].toml);
}

/* *e from the resolved settings s.  *tags: a malloc'd copy of the file's
 * enable_tags when the file set them (the caller keeps it), else NULL. */
static int env_fill(const sps__settings_t *s, sps_env_t *e, char **tags) {
    static const sps_config_t defaults = SPS_CONFIG_INIT;
    char where[600];
    memset(e, 0, sizeof *e);
    e->cfg = defaults;
    *tags = NULL;
    int fp = env_ix("SPANSCOPE_OUTPUT"), dfo = env_ix("deactivate_file_output");
    int no_file = 0;
    int rc = sps__settings_bool(s, dfo, &no_file);
    if (rc) return rc;
    e->has_output = s->v[fp].from != SPS__FROM_DEFAULT || s->v[dfo].from != SPS__FROM_DEFAULT;
    sps__settings_str(s, fp, &e->cfg.file_path);
    if (no_file) e->cfg.file_path = NULL;
    sps__settings_str(s, env_ix("SPANSCOPE_LABEL"), &e->cfg.label);
    sps__settings_str(s, env_ix("SPANSCOPE_CONFIG"), &e->config_path);
    int t = env_ix("SPANSCOPE_ENABLE_TAGS");
    if (s->v[t].from == SPS__FROM_FILE) {
        char buf[4096];
        rc = sps__settings_list(s, t, buf, sizeof buf);
        if (rc) return rc;
        if (!(*tags = strdup(buf))) return sps__err_fail(SPS_ENOMEM, "out of memory");
        e->enable_tags = *tags;
    } else if (s->v[t].from != SPS__FROM_DEFAULT) {
        e->enable_tags = s->v[t].text;
    }
    rc = env_tri(s, "SPANSCOPE_RECURSIVE", &e->recursive);
    if (!rc) rc = env_tri(s, "SPANSCOPE_AUTO_FINALIZE", &e->auto_finalize);
    if (!rc) rc = env_tri(s, "SPANSCOPE_DEACTIVATE_PROFILING", &e->deactivate);
    if (!rc) rc = env_tri(s, "SPANSCOPE_AGGREGATION_MODE", &e->aggregate);
    if (rc) return rc;
    e->cfg.aggregate = e->aggregate == 1;
    uint64_t u;
    int i = env_ix("SPANSCOPE_MEMORY_LIMIT");
    rc = sps__settings_uint(s, i, &u);
    if (rc || u > SIZE_MAX) {
        env_where(s, i, where, sizeof where);
        return sps__err_fail(SPS_EINVAL, "%s: expected a whole number of bytes", where);
    }
    e->cfg.memory_limit = (size_t)u;
    i = env_ix("chunk_size");
    if (!(rc = sps__settings_uint(s, i, &u))) e->cfg.chunk_size = (size_t)u;
    if (rc || u > SIZE_MAX) return rc ? rc : SPS_EINVAL;
    i = env_ix("SPANSCOPE_SAMPLE_HZ"); /* stack samples */
    rc = sps__settings_uint(s, i, &u);
    if (rc || u > 10000) {
        env_where(s, i, where, sizeof where);
        return sps__err_fail(SPS_EINVAL, "%s: expected samples per second, 0 to 10000", where);
    }
    e->cfg.sample_hz = (int)u;
    const char *v;
    i = env_ix("overflow");
    sps__settings_str(s, i, &v);
    if (v && !strcmp(v, "spill")) e->cfg.overflow = SPS_OVERFLOW_SPILL;
    else if (v && !strcmp(v, "drop")) e->cfg.overflow = SPS_OVERFLOW_DROP;
    else if (v && !strcmp(v, "grow")) e->cfg.overflow = SPS_OVERFLOW_GROW;
    else {
        env_where(s, i, where, sizeof where);
        return sps__err_fail(SPS_EINVAL, "%s: overflow must be spill, drop or grow, not '%s'",
                             where, v ? v : "");
    }
    sps__settings_str(s, env_ix("spill_dir"), &e->cfg.spill_dir);
    /* hdf5_compression as the Python face maps it: auto, gzip, none */
    i = env_ix("hdf5_compression");
    sps__settings_str(s, i, &v);
    char word[16] = "";
    if (v) {
        while (*v == ' ' || *v == '\t') v++;
        size_t n = strlen(v);
        while (n && (v[n - 1] == ' ' || v[n - 1] == '\t')) n--;
        if (n < sizeof word) {
            for (size_t k = 0; k < n; k++) word[k] = (char)(v[k] | (v[k] >= 'A' && v[k] <= 'Z' ? 0x20 : 0));
            word[n] = 0;
        } else {
            snprintf(word, sizeof word, "?");
        }
    }
    if (!strcmp(word, "auto")) e->cfg.compress_threshold = 0;
    else if (!strcmp(word, "gzip")) e->cfg.compress_threshold = 1;
    else if (!strcmp(word, "") || !strcmp(word, "none")) e->cfg.compress_threshold = -1;
    else {
        env_where(s, i, where, sizeof where);
        if (!strcmp(word, "lzf") || !strcmp(word, "zstd"))
            return sps__err_fail(SPS_ENOTSUP, "%s: hdf5_compression '%s' is not available yet "
                                 "in spanscope (gzip+shuffle only): use gzip, auto or none",
                                 where, word);
        return sps__err_fail(SPS_EINVAL, "%s: hdf5_compression must be auto, gzip or none, "
                             "not '%s'", where, v);
    }
    return 0;
}

int sps_env_read(sps_env_t *out, char *err, size_t errlen) {
    if (!out) return sps__err_copy(SPS_EINVAL, err, errlen);
    sps__err_clear();
    sps__settings_t *s = NULL;
    char *tags = NULL;
    int rc = sps__settings_resolve(NULL, &s); /* the variables only */
    if (!rc) rc = env_fill(s, out, &tags);    /* strings: the environment's */
    free(tags);                               /* none: no file */
    sps__settings_free(s);
    return sps__err_copy(rc, err, errlen);
}

/* The configuration file's name: SPANSCOPE_CONFIG, else its alias. */
static const char *config_path_env(void) {
    const char *p = getenv("SPANSCOPE_CONFIG");
    return p ? p : getenv("SCOPE_PROFILER_CONFIG");
}

/* Resolves the settings with the file into *out and the kept state
 * (g_env_last, under g_env_lock); *sp: the resolution. */
static int env_resolve_locked(sps_env_t *out, const sps__settings_t **sp) {
    sps__settings_t *s = NULL;
    char *tags = NULL;
    int rc = sps__settings_resolve(config_path_env(), &s);
    if (!rc) rc = env_fill(s, out, &tags);
    if (rc) {
        free(tags);
        sps__settings_free(s);
        return rc;
    }
    sps__settings_free(g_env_last);
    free(g_env_tags);
    g_env_last = s;
    g_env_tags = tags;
    if (sp) *sp = s;
    return 0;
}

int sps_env_resolve(sps_env_t *out, char *err, size_t errlen) {
    if (!out) return sps__err_copy(SPS_EINVAL, err, errlen);
    sps__err_clear();
    pthread_mutex_lock(&g_env_lock);
    int rc = env_resolve_locked(out, NULL);
    pthread_mutex_unlock(&g_env_lock);
    return sps__err_copy(rc, err, errlen);
}

int sps_config_check(const char *path, char *err, size_t errlen) {
    sps__err_clear();
    if (!path || !*path)
        return sps__err_copy(sps__err_fail(SPS_EINVAL, "no configuration file named"), err,
                             errlen);
    sps__settings_t *s = NULL;
    int rc = sps__settings_resolve(path, &s);
    sps__settings_free(s);
    return sps__err_copy(rc, err, errlen);
}

/* One line on stderr per SPANSCOPE_* variable no setting has (once per
 * process): a warning, not an error -- a variable left in a shell by an
 * older version or a typo must not stop the program. */
static void env_warn_unknown(void) {
    static int done;
    if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL)) return;
    char name[128];
    size_t idx = 0;
    const char *n;
    while ((n = sps__env_unknown_next(&idx, name, sizeof name))) {
        const char *near = sps__env_closest(n);
        fprintf(stderr, "spanscope: unknown variable %s in the environment, ignored%s%s%s "
                "(spanscope config lists the known ones)\n", n,
                near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
    }
}

static void finalize_at_exit(void) {
    if (sps_is_active()) sps_finalize();
}

int sps_setup_from_env(char *err, size_t errlen) {
    sps_env_t e;
    const sps__settings_t *s = NULL;
    sps__err_clear();
    env_warn_unknown();
    pthread_mutex_lock(&g_env_lock);
    int rc = env_resolve_locked(&e, &s);
    char counters[1024] = "";
    if (rc == 0) { /* perf_events: the counters every begin and end reads */
        rc = sps__settings_list(s, env_ix("perf_events"), counters, sizeof counters);
    }
    const char *device = NULL; /* SPANSCOPE_DEVICE: checked before a session starts */
    unsigned device_bits = 0;
    if (rc == 0) {
        sps__settings_str(s, env_ix("SPANSCOPE_DEVICE"), &device);
        if (device && *device) rc = sps__device_env_parse(device, &device_bits);
    }
    if (rc == 0 && e.deactivate != 1) {
        if (counters[0]) {
            rc = sps_set_counters(counters);
            e.cfg.track |= SPS_TRACK_COUNTERS;
        }
        if (rc == 0) rc = sps_setup(&e.cfg); /* under the lock: e's strings are kept */
        /* the device collectors (docs/device.md): one that cannot start
         * here is a warning, the session goes on */
        if (rc == 0 && device_bits) rc = sps__device_env_start(device);
        if (rc == 0 && e.auto_finalize == 1) {
            static int registered;
            if (!registered && atexit(finalize_at_exit) == 0) registered = 1;
        }
    }
    pthread_mutex_unlock(&g_env_lock);
    return sps__err_copy(rc, err, errlen);
}
