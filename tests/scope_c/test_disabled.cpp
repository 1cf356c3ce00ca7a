// test_disabled.cpp -- with SP_DISABLE_PROFILING the C++ macros and the MPI
// wrappers evaluate nothing and leave no region name in the program (run.sh
// greps the binary).  expensive_name() has no definition: it must not be
// referenced.
#define SP_DISABLE_PROFILING
#include <scope_profiler_mpi.hpp>

const char *expensive_name();
static int type_size_calls;
int MPI_Type_size(MPI_Datatype datatype, int *size) { ++type_size_calls; *size = datatype; return 0; }
MPI_Fint MPI_Comm_c2f(MPI_Comm communicator) { return communicator; }
int MPI_Send(const void *, int, MPI_Datatype, int, int, MPI_Comm) { return 23; }
int main() {
    SP_PROFILE_SCOPE(expensive_name());
    SP_PROFILE_SCOPE("disabled-region-that-must-not-survive");
    SP_PROFILE_FUNCTION();
    int value = 1;
    int status = sp::mpi::send(&value, 4, 8, 2, 9, MPI_COMM_WORLD);
    return status == 23 && type_size_calls == 0 ? 0 : 1;
}
