/* plain.c -- a program not modified for profiling: prints its arguments
 * (one per bracket, so that a lost or split argument shows), a line on
 * stderr, and exits 3. */
#include <stdio.h>

int main(int argc, char **argv) {
    printf("plain");
    for (int i = 1; i < argc; i++) printf(" [%s]", argv[i]);
    printf("\n");
    fprintf(stderr, "plain: on stderr\n");
    return 3;
}
