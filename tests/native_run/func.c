/* func.c -- built with -finstrument-functions and nothing else: under
 * `spanscope run --functions` each function is a region (main 1, mid 3,
 * leaf 12). */
#include <stdio.h>

static int leaf(int x) { return x * 2; }

int mid(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += leaf(i);
    return s;
}

int main(void) {
    int s = 0;
    for (int i = 0; i < 3; i++) s += mid(4);
    printf("func %d\n", s);
    return 0;
}
