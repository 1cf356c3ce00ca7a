/* hello.c -- the smallest spanscope program: three ways to mark a region.
 *
 *   hello              prints the summary table
 *   hello out.h5       also writes every call to out.h5
 */
#include <spanscope.h>

#include <stdio.h>

static double work(int n) { /* something to time */
    volatile double x = 0.0;
    for (int i = 1; i <= n; i++) x += 1.0 / ((double)i * i);
    return x;
}

/* 1. SPS_FUNCTION(): a region named after the enclosing function that lasts
 *    to the end of its block. */
static double compute(int n) {
    SPS_FUNCTION();
    return work(n);
}

int main(int argc, char **argv) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = argc > 1 ? argv[1] : NULL; /* NULL: table only */
    cfg.verbose = 1;                           /* sps_finalize prints the table */
    int rc = sps_setup(&cfg);
    if (rc) {
        fprintf(stderr, "hello: %s\n", sps_strerror(rc));
        return 1;
    }

    /* 2. sps_begin / sps_end with an id interned once (cheap to call). */
    sps_region_t io = sps_region("print");

    double sum = 0.0;
    for (int i = 0; i < 10; i++) {
        SPS_REGION("step"); /* 3. a named scope: ends with the block */
        sum += compute(100000);
        sps_begin(io);
        printf("step %d: sum = %.9f\n", i, sum);
        sps_end(io);
    }

    rc = sps_finalize(); /* writes the file (if any) and prints the table */
    if (rc) fprintf(stderr, "hello: %s\n", sps_strerror(rc));
    sps_shutdown();
    return rc ? 1 : 0;
}
