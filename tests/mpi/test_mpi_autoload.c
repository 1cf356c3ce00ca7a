/* test_mpi_autoload.c -- run with mpirun -n 4 --oversubscribe: a program
 * linked with the shared libspanscope and MPI but NOT with libspanscope_mpi
 * (as a program that calls only sps_setup gets when the linker drops
 * -lspanscope_mpi under --as-needed) still has a collective session: the
 * core loads libspanscope_mpi from its own directory when MPI is
 * initialised at sps_setup (src/api/dist.c).
 *
 *   1. before MPI_Init: sps_setup gives a local session and loads nothing;
 *   2. after MPI_Init, with SPANSCOPE_MPI=0: local again, nothing loaded;
 *   3. after MPI_Init: libspanscope_mpi is loaded, its sps_mpi_clock_offset
 *      sees this session (the library shares this process's core), and the
 *      finalize writes one file holding every rank.
 *
 *     test_mpi_autoload DIR */
#include "mpitest.h"
#include "mpi_h5.h"

#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#define MPI_LIB "libspanscope_mpi.so.1"

/* The already loaded libspanscope_mpi, or NULL (RTLD_NOLOAD: never loads). */
static void *loaded(void) { return dlopen(MPI_LIB, RTLD_NOW | RTLD_NOLOAD); }

int main(int argc, char **argv) {
    CHECK(argc == 2);
    CHECK(!loaded()); /* the program itself does not link it */

    /* 1. MPI not initialised yet: this process's own session */
    CHECK(sps_setup(NULL) == 0);
    CHECK(!loaded());
    CHECK(sps_finalize_to(NULL) == 0);
    CHECK(sps_shutdown() == 0);

    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int rank = mt_rank;
    CHECK(size >= 2);

    /* 2. switched off: nothing is loaded, the session is local */
    setenv("SPANSCOPE_MPI", "0", 1);
    CHECK(sps_setup(NULL) == 0);
    CHECK(!loaded());
    CHECK(sps_finalize_to(NULL) == 0); /* not collective: no rank waits */
    CHECK(sps_shutdown() == 0);
    unsetenv("SPANSCOPE_MPI");

    /* 3. MPI is up: the core loads libspanscope_mpi, the session is
     * collective */
    char path[4096];
    snprintf(path, sizeof path, "%s/auto.h5", argv[1]);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    CHECK(sps_setup(&cfg) == 0);
    void *lib = loaded();
    CHECK(lib);
    int (*clock_offset)(int64_t *, int64_t *) =
        (int (*)(int64_t *, int64_t *))dlsym(lib, "sps_mpi_clock_offset");
    CHECK(clock_offset);
    int64_t off = -1, err = -1;
    CHECK(clock_offset(&off, &err) == 0); /* it sees this very session */
    CHECK(err >= 0 && err < 100000000);
    if (rank == 0) CHECK(off == 0 && err == 0);
    sps_region_t work = sps_region("auto_work");
    for (int i = 0; i <= rank; i++) {
        sps_begin(work);
        sps_end(work);
    }
    CHECK(sps_finalize() == 0); /* collective: one file */
    if (rank == 0) {
        CHECK(meta_i64(path, "metadata", "mpi_size") == size);
        int64_t ranks[256], counts[256];
        size_t n = read_col(path, "rank_region_index/ranks", ranks, 256);
        CHECK(n > 0 && read_col(path, "rank_region_index/event_counts", counts, 256) == n);
        /* rank r recorded r + 1 calls: every rank is in the file */
        int64_t seen = 0, total = 0;
        for (size_t i = 0; i < n; i++) {
            seen |= (int64_t)1 << ranks[i];
            total += counts[i];
        }
        CHECK(seen == ((int64_t)1 << size) - 1);
        CHECK(total == (int64_t)size * (size + 1) / 2);
        CHECK(access(path, R_OK) == 0);
    }
    CHECK(sps_shutdown() == 0); /* collective too: frees the duplicate */
    CHECK(clock_offset(NULL, NULL) == SPS_ENOSESSION);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("test_mpi_autoload: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
