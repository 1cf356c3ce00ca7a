/* inst_counts.c -- reads a recording with the public reader
 * (sps_file_open) and prints, for tests/instrument/run.sh to compare:
 *   count NAME N            calls of each region (all rows, all threads)
 *   parent CHILD PARENT N   calls of CHILD whose parent (the one fold's)
 *                           is a call of PARENT ("-" for a root)
 *   misuse N                the file's /metadata misuse_count
 * one line each, sorted by the caller.
 *
 *   inst_counts FILE.h5
 */
#include <spanscope.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: inst_counts FILE.h5\n");
        return 2;
    }
    const sps_file_t *f;
    char err[512];
    int rc = sps_file_open(argv[1], &f, err, sizeof err);
    if (rc) {
        fprintf(stderr, "inst_counts: %s\n", err);
        return 1;
    }
    uint64_t *n = calloc(f->nnames ? f->nnames : 1, sizeof *n);
    if (!n) return 1;
    for (size_t i = 0; i < f->nrows; i++) n[f->rows[i].region] += f->rows[i].count;
    for (size_t i = 0; i < f->nnames; i++)
        if (n[i]) printf("count\t%s\t%llu\n", f->names[i], (unsigned long long)n[i]);
    /* (child, parent) pairs: nnames x (nnames + 1) counters */
    size_t nn = f->nnames, w = nn + 1;
    uint64_t *pc = calloc(nn ? nn * w : 1, sizeof *pc);
    if (!pc) return 1;
    for (uint64_t e = 0; e < f->nevents; e++) {
        if (f->row[e] == SPS_FILE_NO_ROW) continue;
        size_t c = f->rows[f->row[e]].region;
        int32_t p = f->parent[e];
        size_t pr = p < 0 || f->row[p] == SPS_FILE_NO_ROW ? nn : f->rows[f->row[p]].region;
        pc[c * w + pr]++;
    }
    for (size_t c = 0; c < nn; c++)
        for (size_t p = 0; p < w; p++)
            if (pc[c * w + p])
                printf("parent\t%s\t%s\t%llu\n", f->names[c], p == nn ? "-" : f->names[p],
                       (unsigned long long)pc[c * w + p]);
    for (size_t i = 0; i < f->nattrs; i++)
        if (!strcmp(f->attrs[i].name, "misuse_count") && f->attrs[i].kind == SPS_META_INT)
            printf("misuse\t%lld\n", (long long)f->attrs[i].ints[0]);
    free(pc);
    free(n);
    sps_file_close(f);
    return 0;
}
