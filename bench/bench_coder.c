/* bench_coder -- the chunk encoder (formats/deflate.c) on real columns.
 *
 *   bench_coder [--fast] COLUMN.i64 ...
 *
 * Each file holds one event column as little-endian int64 (for example
 * written by h5py: f["events/start_deltas"][:].tofile(path)).  The column
 * is cut in chunks of 32768 rows, as the HDF5 writer does, and each chunk
 * encoded by sps__coder_column with the split stream off and on (--fast:
 * as the durations are, ISA-L whatever they hold).  Every output is
 * inflated by zlib and compared with the shuffled input, so a wrong stream
 * fails the run (exit 1).  Prints, per file and mode, bytes per row and ns
 * per row (best of 5 passes, the encoding only). */
#include "formats/formats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define CH 32768u

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t *read_column(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    rewind(f);
    int64_t *v = malloc(bytes > 0 ? (size_t)bytes : 1);
    *n = bytes > 0 ? (size_t)bytes / 8 : 0;
    if (v && fread(v, 8, *n, f) != *n) {
        free(v);
        v = NULL;
    }
    fclose(f);
    return v;
}

/* Whether out[0..len) inflates to the HDF5 shuffle of e[0..n). */
static int check(const unsigned char *out, size_t len, const int64_t *e, size_t n) {
    static unsigned char plain[CH * 8];
    uLongf got = sizeof plain;
    if (uncompress(plain, &got, out, (uLong)len) != Z_OK || got != n * 8) return 0;
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 8; j++)
            if (plain[(size_t)j * n + i] != (unsigned char)((uint64_t)e[i] >> (8 * j))) return 0;
    return 1;
}

/* One mode over the whole column: bytes and best ns per row; 0 if a
 * stream was wrong. */
static int run(const int64_t *v, size_t n, int fast, int split, double *bpr, double *nspr) {
    size_t rows = n / CH * CH;
    double best = 1e30;
    size_t bytes = 0;
    for (int pass = 0; pass < 5; pass++) {
        sps__coder_t *c = sps__coder_new(CH * 8);
        if (!c) return 0;
        sps__coder_split(c, split);
        if (fast) sps__coder_fast_columns(c, 1u);
        double t = 0;
        bytes = 0;
        for (size_t at = 0; at < rows; at += CH) {
            unsigned char *out;
            size_t len;
            double t0 = now_s();
            int rc = sps__coder_column(c, 0, v + at, CH, &out, &len);
            t += now_s() - t0;
            if (rc || (pass == 0 && !check(out, len, v + at, CH))) {
                free(out);
                sps__coder_free(c);
                return 0;
            }
            bytes += len;
            free(out);
        }
        sps__coder_free(c);
        if (t < best) best = t;
    }
    *bpr = rows ? (double)bytes / (double)rows : 0;
    *nspr = rows ? best * 1e9 / (double)rows : 0;
    return 1;
}

int main(int argc, char **argv) {
    int fast = 0, bad = 0;
    printf("%-40s %-10s %10s %10s\n", "column", "mode", "B/row", "ns/row");
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--fast")) {
            fast = 1;
            continue;
        }
        size_t n;
        int64_t *v = read_column(argv[i], &n);
        if (!v || n < CH) {
            fprintf(stderr, "bench_coder: %s: not a column of >= %u int64\n", argv[i], CH);
            free(v);
            return 2;
        }
        for (int split = 0; split < 2; split++) {
            double b, t;
            if (!run(v, n, fast, split, &b, &t)) {
                fprintf(stderr, "bench_coder: %s: a wrong stream (split %d)\n", argv[i], split);
                bad = 1;
                continue;
            }
            printf("%-40s %-10s %10.4f %10.2f\n", argv[i], split ? "split" : "whole", b, t);
        }
        free(v);
    }
    printf("encoders: %s\n", sps__coder_name());
    return bad;
}
