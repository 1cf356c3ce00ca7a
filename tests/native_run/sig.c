/* sig.c -- prints, then ends by the signal its argument names (raise):
 * under `spanscope run` its status must stay the signal's. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    printf("sig %s\n", argc > 1 ? argv[1] : "15");
    fflush(stdout);
    raise(argc > 1 ? atoi(argv[1]) : SIGTERM);
    return 0;
}
