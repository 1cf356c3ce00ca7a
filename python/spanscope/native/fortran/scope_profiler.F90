! scope_profiler.F90 -- scope-profiler 0.7.5's Fortran module, for a program
! built without linking libspanscope: compile this file first, as
! scope-profiler's recipe does,
!
!     gfortran -o prog "$(python -c 'import spanscope.results as r; print(r.fortran_source_path())')" prog.f90
!
! It is spanscope's module (fortran/scope_profiler.f90, installed here as
! scope_profiler_module.inc: its documentation is this module's) over a
! forwarding module (scope_profiler_forward.inc) that defines the C
! functions the module calls and forwards them to this package's
! libspanscope, loaded with dlopen at the first call.  Regions are recorded
! by spanscope; a profiler writes scope-profiler's ".spt" trace
! ("<prefix>_rank<NNNNN>.spt", as scope-profiler's Fortran API), which
! spanscope.results.load_traces / convert_traces read.  The file is
! preprocessed (the .F90 suffix): give it by absolute path, as
! fortran_source_path() is, so that the library is found beside it.
#include "scope_profiler_forward.inc"
#include "scope_profiler_module.inc"
