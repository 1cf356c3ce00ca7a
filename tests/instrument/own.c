/* own.c -- a program of tests/instrument with a session of its own
 * (SPANSCOPE_INSTRUMENT_SETUP=0: the library sets none up): the calls of
 * its instrumented functions go to the session the program opens.
 *
 *   own FILE.h5
 */
#include <spanscope.h>

#include <stdio.h>

__attribute__((noinline)) int work(int i) { return i * 2 + 1; }

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = argv[1];
    if (sps_setup(&cfg)) return 1;
    int s = 0;
    for (int i = 0; i < 6; i++) s += work(i);
    int rc = sps_finalize();
    printf("sum %d\n", s);
    return rc != 0;
}
