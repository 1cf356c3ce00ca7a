/* setup.c -- sps_setup and sps_shutdown: the public calls that open and close
 * a session.  They put the layers together: core opens the session, the
 * model's aggregate recorder is registered with core, integrations (MPI)
 * take part through their operations table, and the model's analysis is
 * reset with the recording. */
#include "api/api.h"

/* What the model derived from a session's recording, forgotten with it
 * (called by core under the session lock): the analysis and the per-call
 * queries' kept calls. */
static void forget_derived(void) {
    sps__analysis_reset();
    sps__collect_reset();
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
    /* The registered distributed integration (api/dist.c; MPI: collective
     * when MPI is initialised).  Runs before the lock: it talks to other
     * ranks. */
    sps__dist_t dist = {0};
    rc = cfg->local ? 0 : sps__dist_setup(&dist);
    if (rc) return rc;
    return sps__session_open(cfg, &dist, forget_derived);
}

int sps_shutdown(void) {
    if (sps__session_close(forget_derived)) sps__dist_shutdown();
    return 0;
}
