/* test_mpi_copy.c -- run with mpirun -n 4 --oversubscribe: the chunk-copy
 * merge of a collective finalize (docs/mpi.md, "The collective finalize").
 *
 * The ranks record 50 000, 1 000, 0 and 70 001 events (outer{inner} pairs,
 * rank 3 one more), so that with 32 768-event chunks:
 *   - rank 0 owns chunks 0 and 1 and completes chunk 1 with rank 1's
 *     1 000 events and the first 14 536 of rank 3;
 *   - rank 1 lies inside chunk 1 and owns nothing; rank 2 is empty;
 *   - rank 3 starts mid-chunk and owns chunks 2 and 3 (the short last one).
 * Period 1 merges by copying chunks (rank 0 prints how many, and that it
 * read every part's index from the message its rank sent), period 4 the
 * same with rank 3's index read from its file (SPANSCOPE_MPI_INDEX=file on
 * rank 3), period 2 the
 * same with SPANSCOPE_MPI_MERGE=events (event by event), period 3 is too
 * small for a chunk (event by event by itself).  Rank 0 reads the parts
 * where the ranks wrote them (each rank's TMPDIR, all under DIR), except
 * in period 2, with SPANSCOPE_MPI_HANDOVER=send: then they come through
 * MPI; in period 3 only rank 3 sets it, so its part alone comes through
 * MPI.  In every merged file each
 * rank's calls are all there, ids in one run, each row's durations sum to
 * its stored total (min and max too), starts lie in the row's range, and
 * every child lies inside its parent on the same rank: a chunk copied to
 * the wrong place, or rows handed to the wrong rank, breaks these.
 *
 *     test_mpi_copy DIR */
#include "mpitest.h"
#include "mpi_h5.h"
#include "sps_int.h"
#include "formats/h5_read.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The events rank r records in period p (outer{inner} pairs, +1 outer on
 * rank 3 in period 1). */
static uint64_t events_of(int r, int p) {
    static const uint64_t big[4] = {50000, 1000, 0, 70001};
    if (p == 3) return r == 2 ? 0 : 200;
    return big[r];
}

static void record(int rank, int p) {
    sps_region_t outer = sps_region("outer"), inner = sps_region("inner");
    uint64_t n = events_of(rank, p);
    for (uint64_t i = 0; i + 1 < n; i += 2) {
        sps_begin(outer);
        sps_begin(inner);
        sps_end(inner);
        sps_end(outer);
    }
    if (n % 2) {
        sps_begin(outer);
        sps_end(outer);
    }
}

/* Checks the merged file at path against what every rank recorded in
 * period p (rank 0 only). */
static void check_file(const char *path, int size, int p, const char *how) {
    char got[96];
    CHECK(!strcmp(meta_str(path, "metadata", "mpi_merge", got, sizeof got), how));
    sps__h5r_t *r = NULL, *ix = NULL;
    CHECK(sps__h5r_open(&r, path) == 0);
    CHECK(sps__h5r_open_index(&ix, path) == 0 && ix->nrows == r->nrows);
    CHECK(r->call_ids && r->parent_ids);
    uint64_t total = 0;
    for (int k = 0; k < size; k++) total += events_of(k, p);
    CHECK(r->nevents == total);
    for (int k = 0; k < size; k++) {
        /* this rank's events: counts, ids in one run, parents around children */
        uint64_t n = 0;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t i = 0; i < r->nrows; i++) {
            const sps__row_t *w = &r->rows[i];
            if (w->rank != (uint32_t)k) continue;
            CHECK(ix->summary); /* as the rows' ranks (or rank 0) computed it */
            const sps__summary_t *st = &ix->summary[i];
            n += w->count;
            int64_t sum = 0, mn = INT64_MAX, mx = INT64_MIN;
            for (uint64_t e = w->offset; e < w->offset + w->count; e++) {
                sum += r->dur[e];
                mn = r->dur[e] < mn ? r->dur[e] : mn;
                mx = r->dur[e] > mx ? r->dur[e] : mx;
                CHECK(r->start[e] >= st->start_minimum);
                CHECK(r->start[e] + r->dur[e] <= st->end_maximum);
                lo = r->call_ids[e] < lo ? r->call_ids[e] : lo;
                hi = r->call_ids[e] > hi ? r->call_ids[e] : hi;
            }
            if (w->count) CHECK(sum == st->total && mn == st->minimum && mx == st->maximum);
        }
        CHECK(n == events_of(k, p));
        if (!n) continue;
        CHECK((uint64_t)(hi - lo) + 1 == n);
        uint64_t *at = malloc(n * sizeof *at); /* call id - lo -> event */
        CHECK(at);
        for (uint64_t j = 0; j < n; j++) at[j] = UINT64_MAX;
        for (size_t i = 0; i < r->nrows; i++)
            for (uint64_t e = r->rows[i].offset;
                 r->rows[i].rank == (uint32_t)k && e < r->rows[i].offset + r->rows[i].count; e++) {
                CHECK(at[r->call_ids[e] - lo] == UINT64_MAX);
                at[r->call_ids[e] - lo] = e;
            }
        uint64_t children = 0;
        for (uint64_t j = 0; j < n; j++) {
            uint64_t e = at[j];
            int64_t par = r->parent_ids[e];
            if (par < 0) continue;
            CHECK(par >= lo && par <= hi);
            uint64_t q = at[par - lo];
            CHECK(r->start[q] <= r->start[e]);
            CHECK(r->start[e] + r->dur[e] <= r->start[q] + r->dur[q]);
            children++;
        }
        CHECK(children == n / 2);
        free(at);
    }
    sps__h5r_free(r);
    sps__h5r_free(ix);
}

/* No part or temporary file is left in dir. */
static void check_no_leftovers(const char *dir) {
    DIR *d = opendir(dir);
    CHECK(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp") || strstr(e->d_name, "spanscope-part-") ||
            strstr(e->d_name, ".copy.h5") || strstr(e->d_name, ".live-")) {
            fprintf(stderr, "rank %d: left over: %s/%s\n", mt_rank, dir, e->d_name);
            CHECK(!"temporary file left over");
        }
    closedir(d);
}

/* Runs the collective finalize of period p into path; rank 0 checks that
 * its report line contains want. */
static void finalize_checked(const char *path, int p, const char *want) {
    char *text = NULL;
    size_t len = 0;
    FILE *fp = mt_rank == 0 ? open_memstream(&text, &len) : NULL;
    int rc = sps__finalize_ex(path, fp);
    if (fp) fflush(fp);
    if (rc && text) fprintf(stderr, "rank %d: period %d: %s\n", mt_rank, p, text);
    CHECK(rc == 0);
    if (fp) {
        fclose(fp);
        const char *line = strstr(text, "spanscope: merged 4 ranks into");
        if (!line || !strstr(line, want)) fprintf(stderr, "period %d printed:\n%s\n", p, text);
        CHECK(line && strstr(line, want));
        const char *nl = strchr(line, '\n');
        printf("period %d: %.*s\n", p, (int)(nl ? nl - line : (long)strlen(line)), line);
        free(text);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc == 2 && size == 4);
    char p1[4096], p2[4096], p3[4096], p4[4096], node[4096];
    snprintf(p1, sizeof p1, "%s/copy.h5", argv[1]);
    snprintf(p2, sizeof p2, "%s/events.h5", argv[1]);
    snprintf(p3, sizeof p3, "%s/small.h5", argv[1]);
    snprintf(p4, sizeof p4, "%s/copy_file_index.h5", argv[1]);
    snprintf(node, sizeof node, "%s/node%d", argv[1], mt_rank);
    CHECK(mkdir(node, 0700) == 0);
    CHECK(setenv("TMPDIR", node, 1) == 0); /* each rank's own directory */
    CHECK(unsetenv("SPANSCOPE_MPI_MERGE") == 0);

    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = p1;
    CHECK(sps_setup(&cfg) == 0);

    record(mt_rank, 1);
    finalize_checked(p1, 1, "(events copied as the ranks compressed them: 4 chunks, 0 rewritten; "
                            "3 of 3 parts read where their ranks wrote them; "
                            "3 of 3 indexes sent as messages)");
    if (mt_rank == 0) check_file(p1, size, 1, "copy: 4 chunks copied, 0 rewritten");

    /* the same with rank 3's index read from its part's file */
    if (mt_rank == 3) CHECK(setenv("SPANSCOPE_MPI_INDEX", "file", 1) == 0);
    record(mt_rank, 4);
    finalize_checked(p4, 4, "(events copied as the ranks compressed them: 4 chunks, 0 rewritten; "
                            "3 of 3 parts read where their ranks wrote them; "
                            "2 of 3 indexes sent as messages)");
    CHECK(unsetenv("SPANSCOPE_MPI_INDEX") == 0);
    if (mt_rank == 0) check_file(p4, size, 4, "copy: 4 chunks copied, 0 rewritten");

    CHECK(setenv("SPANSCOPE_MPI_MERGE", "events", 1) == 0);
    CHECK(setenv("SPANSCOPE_MPI_HANDOVER", "send", 1) == 0);
    record(mt_rank, 2);
    finalize_checked(p2, 2, "(event by event; 0 of 3 parts read where their ranks wrote them)");
    CHECK(unsetenv("SPANSCOPE_MPI_HANDOVER") == 0);
    if (mt_rank == 0) check_file(p2, size, 2, "");
    CHECK(unsetenv("SPANSCOPE_MPI_MERGE") == 0);

    if (mt_rank == 3) CHECK(setenv("SPANSCOPE_MPI_HANDOVER", "send", 1) == 0);
    record(mt_rank, 3);
    finalize_checked(p3, 3, "(event by event; 2 of 3 parts read where their ranks wrote them)");
    CHECK(unsetenv("SPANSCOPE_MPI_HANDOVER") == 0);
    if (mt_rank == 0) check_file(p3, size, 3, "");

    CHECK(sps_shutdown() == 0);
    /* no part left behind in any rank's TMPDIR (the reader's clean copies
     * of the files it checked, .spanscope-h5copy-*, go at exit), and no
     * temporary file next to the outputs */
    MPI_Barrier(MPI_COMM_WORLD);
    check_no_leftovers(node);
    if (mt_rank == 0) check_no_leftovers(argv[1]);
    if (mt_rank == 0) printf("all checks passed on %d ranks\n", size);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
