/* bench_record: writes a recording of N calls for the timeline benchmarks.
 *
 *     bench_record N OUT.h5 [THREADS [RANK SIZE]]
 *
 * Each thread runs an outer region around 9 inner calls (a 2-level tree,
 * 3 region names), so N calls give N spans in the file. */
#include <pthread.h>
#include <spanscope.h>
#include <stdio.h>
#include <stdlib.h>

static long g_per_thread;
volatile double g_sink; /* keeps the work from being optimised away */

static void *work(void *arg) {
    (void)arg;
    sps_region_t outer = sps_region("step"), a = sps_region("compute"),
                 b = sps_region("exchange");
    double x = 0;
    for (long i = 0; i < g_per_thread; i += 10) {
        sps_begin(outer);
        for (int k = 0; k < 9; k++) {
            sps_region_t r = k % 3 ? a : b;
            sps_begin(r);
            for (int j = 0; j < 20 + (int)(i % 7); j++) x += j;
            sps_end(r);
        }
        sps_end(outer);
    }
    g_sink = x;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench_record N OUT.h5 [THREADS [RANK SIZE]]\n");
        return 2;
    }
    long n = atol(argv[1]);
    int nt = argc > 3 ? atoi(argv[3]) : 2;
    if (n <= 0 || nt <= 0 || nt > 256) return 2;
    g_per_thread = n / nt;
    sps_config_t cfg = SPS_CONFIG_INIT;
    if (argc > 5) {
        cfg.rank = atoi(argv[4]);
        cfg.size = atoi(argv[5]);
    }
    if (sps_setup(&cfg) < 0) return 1;
    pthread_t th[256];
    for (int t = 0; t < nt; t++) pthread_create(&th[t], NULL, work, NULL);
    for (int t = 0; t < nt; t++) pthread_join(th[t], NULL);
    int rc = sps_finalize_to(argv[2]);
    if (rc < 0) fprintf(stderr, "bench_record: %s\n", sps_strerror(rc));
    return rc < 0;
}
