/* own.c -- a program that links libspanscope and opens its own session
 * (sps_setup with its own path, regions, sps_finalize), as a program built
 * for spanscope does.  Under `spanscope run` its sps_setup must succeed and
 * the run's output path win.
 *
 *   own [PATH [CMD_BEFORE [CMD_AFTER]]]
 * CMD_BEFORE runs (system) inside the session before the finalize,
 * CMD_AFTER after it: children that inherit the run's environment must
 * not replace the profile. */
#include <spanscope.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = argc > 1 ? argv[1] : "own.h5";
    int rc = sps_setup(&cfg);
    if (rc) {
        fprintf(stderr, "own: sps_setup: %s\n", sps_strerror(rc));
        return 1;
    }
    sps_region_t outer = sps_region("outer"), inner = sps_region("inner");
    sps_begin(outer);
    for (int i = 0; i < 5; i++) {
        sps_begin(inner);
        sps_end(inner);
    }
    sps_end(outer);
    if (argc > 2 && argv[2][0]) (void)!system(argv[2]); /* its status is not this test's */
    rc = sps_finalize();
    if (rc) {
        fprintf(stderr, "own: sps_finalize: %s\n", sps_strerror(rc));
        return 1;
    }
    if (argc > 3 && argv[3][0]) (void)!system(argv[3]);
    printf("own done\n");
    return 0;
}
