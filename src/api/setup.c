/* setup.c -- sps_setup and sps_shutdown: the public calls that open and close
 * a session.  They put the layers together: core opens the session, the
 * model's aggregate recorder is registered with core, integrations (MPI)
 * take part through their operations table, and the model's analysis is
 * reset with the recording. */
#include "api/api.h"

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
    /* stack samples (the sampler integration's table: src/ext/sampler.c) */
    const sps__sample_ops_t *smp = sps__sample_ops;
    if (!rc && cfg->sample_hz) {
        rc = smp ? smp->start(cfg->sample_hz) : SPS_ENOTSUP;
        if (rc) sps__session_close(forget_derived);
    }
    return rc;
}

int sps_shutdown(void) {
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

/* SPANSCOPE_<name>, else SCOPE_PROFILER_<name> (scope-profiler's spelling),
 * else NULL.  *which gets the variable's full name, for messages. */
static const char *env_get(const char *name, char *which, size_t cap) {
    static const char *const prefixes[] = {"SPANSCOPE_", "SCOPE_PROFILER_"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(which, cap, "%s%s", prefixes[i], name);
        const char *v = getenv(which);
        if (v) return v;
    }
    return NULL;
}

/* The boolean variable name into *out (-1 when unset).  0, or SPS_EINVAL
 * with the error message set. */
static int env_bool(const char *name, int *out) {
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    char which[64];
    const char *v = env_get(name, which, sizeof which);
    *out = -1;
    if (!v) return 0;
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) return *out = 1, 0;
        if (strcasecmp(v, no[i]) == 0) return *out = 0, 0;
    }
    return sps__err_fail(SPS_EINVAL, "%s=%s: expected 1/0, true/false, yes/no or on/off",
                         which, v);
}

/* The whole-number variable name into *out (unchanged when unset). */
static int env_size(const char *name, size_t *out) {
    char which[64];
    const char *v = env_get(name, which, sizeof which);
    if (!v) return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *end || errno || v[0] == '-' || n > SIZE_MAX)
        return sps__err_fail(SPS_EINVAL, "%s=%s: expected a whole number of bytes", which, v);
    *out = (size_t)n;
    return 0;
}

/* The sampling rate variable name into *out (unchanged when unset): a
 * whole number of samples per second, 0 (off) to 10000. */
static int env_hz(const char *name, int *out) {
    char which[64];
    const char *v = env_get(name, which, sizeof which);
    if (!v) return 0;
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!*v || *end || errno || n < 0 || n > 10000)
        return sps__err_fail(SPS_EINVAL, "%s=%s: expected samples per second, 0 to 10000",
                             which, v);
    *out = (int)n;
    return 0;
}

static int env_read(sps_env_t *e) {
    static const sps_config_t defaults = SPS_CONFIG_INIT;
    char which[64];
    memset(e, 0, sizeof *e);
    e->cfg = defaults;
    const char *out = env_get("OUTPUT", which, sizeof which);
    e->has_output = out != NULL;
    e->cfg.file_path = out && *out && strcasecmp(out, "none") != 0 ? out : NULL;
    e->cfg.label = env_get("LABEL", which, sizeof which);
    e->config_path = env_get("CONFIG", which, sizeof which);
    e->enable_tags = env_get("ENABLE_TAGS", which, sizeof which);
    int rc = env_bool("RECURSIVE", &e->recursive);
    if (!rc) rc = env_bool("AUTO_FINALIZE", &e->auto_finalize);
    if (!rc) rc = env_bool("DEACTIVATE_PROFILING", &e->deactivate);
    if (!rc) rc = env_bool("AGGREGATION_MODE", &e->aggregate);
    if (!rc) rc = env_size("MEMORY_LIMIT", &e->cfg.memory_limit);
    if (!rc) rc = env_hz("SAMPLE_HZ", &e->cfg.sample_hz); /* stack samples */
    e->cfg.aggregate = e->aggregate == 1;
    return rc;
}

int sps_env_read(sps_env_t *out, char *err, size_t errlen) {
    if (!out) return sps__err_copy(SPS_EINVAL, err, errlen);
    sps__err_clear();
    return sps__err_copy(env_read(out), err, errlen);
}

static void finalize_at_exit(void) {
    if (sps_is_active()) sps_finalize();
}

int sps_setup_from_env(char *err, size_t errlen) {
    sps_env_t e;
    sps__err_clear();
    int rc = env_read(&e);
    if (rc == 0 && e.config_path)
        rc = sps__err_fail(SPS_ENOTSUP, "SPANSCOPE_CONFIG=%s: TOML configuration files are "
                           "read by the Python face only (ProfileManager.setup_from_env)",
                           e.config_path);
    if (rc == 0 && e.deactivate != 1) {
        rc = sps_setup(&e.cfg);
        if (rc == 0 && e.auto_finalize == 1) {
            static int registered;
            if (!registered && atexit(finalize_at_exit) == 0) registered = 1;
        }
    }
    return sps__err_copy(rc, err, errlen);
}
