// test_cxx.cpp -- scope_profiler.hpp's guards and macros and
// scope_profiler_mpi.hpp's wrappers (against fake_mpi/mpi.h), run against
// libspanscope.  Writes cxx_rank00000.h5 and mpi_rank00000.h5 (check.py cxx).
#include <scope_profiler_mpi.hpp>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

static int failures;
#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            std::fprintf(stderr, "test_cxx.cpp:%d: check failed: %s\n", __LINE__, #cond); \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static int mpi_calls;
int MPI_Type_size(MPI_Datatype datatype, int *size) { *size = datatype; return 0; }
MPI_Fint MPI_Comm_c2f(MPI_Comm communicator) { return communicator; }
int MPI_Send(const void *, int, MPI_Datatype, int, int, MPI_Comm) { ++mpi_calls; return 23; }
int MPI_Recv(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *) { ++mpi_calls; return 0; }
int MPI_Isend(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *r)
{ ++mpi_calls; *r = 1; return 0; }
int MPI_Irecv(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *r)
{ ++mpi_calls; *r = 2; return 0; }
int MPI_Wait(MPI_Request *r, MPI_Status *) { ++mpi_calls; *r = MPI_REQUEST_NULL; return 0; }
int MPI_Barrier(MPI_Comm) { ++mpi_calls; return 0; }
int MPI_Bcast(void *, int, MPI_Datatype, int, MPI_Comm) { ++mpi_calls; return 0; }
int MPI_Reduce(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm) { ++mpi_calls; return 0; }
int MPI_Allreduce(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm) { ++mpi_calls; return 0; }

static void throws_inside_scope(sp_profiler *p, int region) {
    sp::Scope s(p, region);
    throw std::runtime_error("boom");
}

static void solve() {
    SP_PROFILE_FUNCTION();
    { SP_PROFILE_SCOPE("inner"); }
}

int main() {
    sp_profiler *p = sp_create("cxx", 0);
    int guarded = sp_profiler_region(p, "guarded");
    { sp::Scope s(p, guarded); }                         // normal exit
    try { throws_inside_scope(p, guarded); } catch (const std::runtime_error &) {}
    {                                                     // move construction
        sp::Scope a(p, guarded);
        sp::Scope b(std::move(a));
    }
    {                                                     // move assignment
        sp::Scope a(p, guarded);
        sp::Scope b(p, guarded);
        b = std::move(a);                                 // ends b's call first
    }
    sp_region_stats st;
    CHECK(sp_profiler_get_region_stats(p, guarded, &st) == SP_OK && st.calls == 5);
    CHECK(sp_profiler_finalize(p) == 0);
    sp_destroy(p);

    sp_init("mpi", 0);
    solve();
    solve();
    int value = 1, result = 0;
    CHECK(sp::mpi::send(&value, 4, 8, 2, 9, MPI_COMM_WORLD) == 23);  // MPI's code kept
    sp::mpi::recv(&value, 4, 8, 3, 10, MPI_COMM_WORLD);
    sp::mpi::Request sent = sp::mpi::isend(&value, 4, 8, 2, 11, MPI_COMM_WORLD);
    CHECK(sent.error() == MPI_SUCCESS && sent.active());
    sp::mpi::wait(sent);
    CHECK(!sent.active());
    sp::mpi::Request received = sp::mpi::irecv(&value, 4, 8, 3, 12, MPI_COMM_WORLD);
    sp::mpi::wait(received);
    sp::mpi::barrier(MPI_COMM_WORLD);
    sp::mpi::bcast(&value, 4, 8, 1, MPI_COMM_WORLD);
    sp::mpi::reduce(&value, &result, 4, 8, 1, 1, MPI_COMM_WORLD);
    sp::mpi::allreduce(&value, &result, 4, 8, 1, MPI_COMM_WORLD);
    CHECK(mpi_calls == 10);
    CHECK(sp_finalize() == 0);
    if (failures) std::fprintf(stderr, "test_cxx: %d check(s) failed\n", failures);
    else std::printf("test_cxx: all checks passed\n");
    return failures != 0;
}
