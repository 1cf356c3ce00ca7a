!> A runnable example of scope-profiler's Fortran API, recording through
!! spanscope:
!!
!!     make -f <spanscope>/native/fortran/Makefile BUILD_DIR=/tmp/sp-example run
!!
!! or gfortran -O2 -o example "$(python -c 'import spanscope.results as r; \
!!     print(r.fortran_source_path())')" example.f90 && ./example
!!
!! It writes profile_rank00000.spt, which spanscope.results.load_traces() /
!! convert_traces() read.  Regions: "assemble", "solve" (20 calls each),
!! "checkpoint" (2), "fibonacci" around a recursive "fib_call".
program example
   use scope_profiler
   use, intrinsic :: iso_fortran_env, only: int64, output_unit
   implicit none
   integer :: step, assemble, solve, checkpoint, fibonacci
   integer(int64) :: f
   real(kind=8) :: checksum

   call sp_init("profile", rank=0)
   ! region handles are resolved once, outside the loop
   assemble = sp_region("assemble")
   solve = sp_region("solve")
   checkpoint = sp_region("checkpoint")
   fibonacci = sp_region("fibonacci")

   checksum = 0.0d0
   do step = 1, 20
      call sp_begin(assemble)
      checksum = checksum + churn(15000)
      call sp_end(assemble)

      call sp_begin(solve)
      checksum = checksum + churn(40000)
      call sp_end(solve)

      if (mod(step, 10) == 0) then
         call sp_begin(checkpoint)
         checksum = checksum + churn(4000)
         call sp_end(checkpoint)
      end if
   end do

   call sp_begin(fibonacci)
   f = fib(11)
   call sp_end(fibonacci)

   write (output_unit, "(a,i0,a,i0,a,f0.3)") "solve: ", sp_num_calls(solve), &
      " call(s), fib(11) = ", f, ", checksum ", checksum
   call sp_finalize()

contains

   !> Floating-point work the compiler has to keep.
   function churn(n) result(total)
      integer, intent(in) :: n
      real(kind=8) :: total
      integer :: k
      total = 0.0d0
      do k = 1, n
         total = total + sqrt(real(k, kind=8)) / real(k, kind=8)
      end do
   end function churn

   !> A recursive region: each level is one more open call of "fib_call".
   recursive function fib(n) result(out)
      integer, intent(in) :: n
      integer(int64) :: out
      integer :: call_id
      call_id = sp_region("fib_call")
      call sp_begin(call_id)
      if (n < 2) then
         out = n
      else
         out = fib(n - 1) + fib(n - 2)
      end if
      call sp_end(call_id)
   end function fib

end program example
