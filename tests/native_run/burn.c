/* burn.c -- a program not modified for profiling that spends CPU time in
 * one function: under `spanscope run --sample-hz N` its stack samples
 * land in the profile although it has no region. */
#include <stdio.h>

static double burn(long n) {
    double s = 0;
    for (long i = 1; i < n; i++) s += 1.0 / (double)i;
    return s;
}

int main(void) {
    printf("%.3f\n", burn(100000000));
    return 0;
}
