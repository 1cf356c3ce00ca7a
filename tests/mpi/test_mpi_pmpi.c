/* test_mpi_pmpi.c -- run with mpirun -n 4 --oversubscribe, linked with
 * libspanscope_pmpi: MPI calls become regions, and the merged file's
 * /communication table counts every rank's calls and bytes; spanscope's own
 * messages (setup, finalize) are not counted.
 *
 *     test_mpi_pmpi DIR */
#include "mpitest.h"

#include <hdf5.h>
#include <string.h>

typedef struct { char region[64]; int64_t rank, calls, bytes; } row_t;

static size_t read_comm(const char *path, row_t *rows, size_t cap) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    hid_t d = H5Dopen2(f, "communication/region", H5P_DEFAULT);
    CHECK(d >= 0);
    hid_t s = H5Dget_space(d);
    size_t n = (size_t)H5Sget_simple_extent_npoints(s);
    CHECK(n <= cap);
    char **names = calloc(n + 1, sizeof *names);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    CHECK(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) >= 0);
    int64_t *col = calloc(n + 1, sizeof *col);
    static const char *const cn[] = {"communication/rank", "communication/calls",
                                     "communication/bytes"};
    for (int c = 0; c < 3; c++) {
        hid_t e = H5Dopen2(f, cn[c], H5P_DEFAULT);
        CHECK(e >= 0 && H5Dread(e, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, col) >= 0);
        for (size_t i = 0; i < n; i++)
            (&rows[i].rank)[c] = col[i];
        H5Dclose(e);
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(rows[i].region, sizeof rows[i].region, "%s", names[i]);
        free(names[i]);
    }
    free(names);
    free(col);
    H5Tclose(t);
    H5Sclose(s);
    H5Dclose(d);
    H5Fclose(f);
    return n;
}

static const row_t *find(const row_t *rows, size_t n, const char *region, int rank) {
    for (size_t i = 0; i < n; i++)
        if (rows[i].rank == rank && !strcmp(rows[i].region, region)) return &rows[i];
    return NULL;
}

static void expect(const row_t *rows, size_t n, const char *region, int rank,
                   int64_t calls, int64_t bytes) {
    const row_t *r = find(rows, n, region, rank);
    if (!r || r->calls != calls || r->bytes != bytes) {
        fprintf(stderr, "%s on rank %d: want %lld calls %lld bytes, got %lld %lld\n",
                region, rank, (long long)calls, (long long)bytes,
                r ? (long long)r->calls : -1LL, r ? (long long)r->bytes : -1LL);
        CHECK(!"communication counts");
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int rank = mt_rank;
    CHECK(argc == 2 && size >= 2 && size % 2 == 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/pmpi.h5", argv[1]);

    MPI_Barrier(MPI_COMM_WORLD); /* before setup: not recorded */
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    CHECK(sps_setup(&cfg) == 0);

    int buf[1000] = {0};
    size_t n1 = 0; /* rows of the first period (rank 0) */
    if (rank % 2 == 0) MPI_Send(buf, 1000, MPI_INT, rank + 1, 7, MPI_COMM_WORLD);
    else MPI_Recv(buf, 1000, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double x[10] = {1}, y[10];
    for (int i = 0; i < 3; i++) MPI_Allreduce(x, y, 10, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    char sb[16] = "hello", rb[16];
    MPI_Request req[2];
    MPI_Irecv(rb, 16, MPI_CHAR, (rank + size - 1) % size, 9, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(sb, 16, MPI_CHAR, (rank + 1) % size, 9, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    long long v = rank;
    MPI_Bcast(&v, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    /* MPI_PROC_NULL as the peer: the calls count, their bytes are 0 */
    MPI_Ssend(buf, 1000, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD);
    MPI_Sendrecv(buf, 10, MPI_INT, MPI_PROC_NULL, 7, y, 10, MPI_DOUBLE, MPI_PROC_NULL,
                 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* 6 bytes received as 4-byte elements (not a whole number of them):
     * still 6 bytes */
    MPI_Datatype quad;
    MPI_Type_contiguous(4, MPI_BYTE, &quad);
    MPI_Type_commit(&quad);
    if (rank % 2 == 0) MPI_Send(sb, 6, MPI_BYTE, rank + 1, 8, MPI_COMM_WORLD);
    else MPI_Recv(buf, 4, quad, rank - 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Type_free(&quad);
    /* an id no sps_region handed out: ignored, no row, no crash */
    sps_mpi_count((sps_region_t)1000000, 5);

    CHECK(sps_finalize() == 0);
    if (rank == 0) {
        row_t rows[256];
        size_t n = read_comm(path, rows, 256);
        for (int k = 0; k < size; k++) {
            if (k % 2 == 0) expect(rows, n, "MPI_Send", k, 2, 4006);
            else expect(rows, n, "MPI_Recv", k, 2, 4006);
            expect(rows, n, "MPI_Allreduce", k, 3, 240);
            expect(rows, n, "MPI_Barrier", k, 1, 0);
            expect(rows, n, "MPI_Irecv", k, 1, 16);
            expect(rows, n, "MPI_Isend", k, 1, 16);
            expect(rows, n, "MPI_Waitall", k, 1, 0);
            expect(rows, n, "MPI_Bcast", k, 1, 8);
            expect(rows, n, "MPI_Ssend", k, 1, 0);
            expect(rows, n, "MPI_Sendrecv", k, 1, 0);
        }
        /* nothing else: spanscope's own messages go through PMPI, and the
         * unregistered id has no row */
        CHECK(n == (size_t)size * 9);
        n1 = n;
    }
    /* a second period counts from zero */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(sps_finalize() == 0);
    if (rank == 0) {
        row_t rows[256];
        size_t n = read_comm(path, rows, 256);
        CHECK(n == (size_t)size);
        for (int k = 0; k < size; k++) expect(rows, n, "MPI_Barrier", k, 1, 0);
    }
    CHECK(sps_shutdown() == 0);
    /* last, after every check: CTest matches this line */
    if (rank == 0) printf("test_mpi_pmpi: %zu rows of /communication as expected\n", n1);
    MPI_Finalize();
    return 0;
}
