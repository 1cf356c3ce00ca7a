/* own.c -- a program of tests/instrument with a session of its own
 * (SPANSCOPE_INSTRUMENT_SETUP=0: the library sets none up): the calls of
 * its instrumented functions go to the session the program opens.  main
 * was entered before the session, so it is no region; rec(4) pauses the
 * session inside rec(2) and resumes it there, so rec(1) and rec(0) are
 * not recorded and each exit still ends its own call: rec has 3 calls.
 *
 *   own FILE.h5
 */
#include <spanscope.h>

#include <stdio.h>

__attribute__((noinline)) int work(int i) { return i * 2 + 1; }

__attribute__((noinline)) int rec(int n) {
    if (n == 2) sps_pause();
    int r = n ? rec(n - 1) + 1 : 0;
    if (n == 2) sps_resume();
    return r;
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = argv[1];
    if (sps_setup(&cfg)) return 1;
    int s = 0;
    for (int i = 0; i < 6; i++) s += work(i);
    s += rec(4);
    int rc = sps_finalize();
    printf("sum %d\n", s);
    return rc != 0;
}
