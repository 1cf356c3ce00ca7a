!> bench_scope_fortran.f90 -- what a begin+end pair costs from Fortran: the
!! scope_profiler module's sp_begin/sp_end (the C API's checked pair) beside
!! the spanscope module's sps_begin/sps_end (the library's sps__begin /
!! sps__end), in one session, modes interleaved, each batch's period dropped
!! (sp_reset: the session is the default profiler's alone, so it drops it).
!! Prints the median and minimum ns per pair of 11 batches of 200000 pairs.
program bench_scope_fortran
   use scope_profiler
   use spanscope, only: sps_region, sps_begin, sps_end, sps_now_ns, sps_region_kind
   use, intrinsic :: iso_fortran_env, only: int64, real64
   implicit none
   integer, parameter :: n = 200000, reps = 11, mid = 6 ! the median of 11
   integer :: id, i, r, code
   integer(sps_region_kind) :: sid
   integer(int64) :: t0
   real(real64) :: t(reps, 2)

   call sp_init('bench_scope_fortran')
   id = sp_region('bench')
   sid = sps_region('bench_sps')
   do r = 1, reps
      t0 = sps_now_ns()
      do i = 1, n
         call sps_begin(sid)
         call sps_end(sid)
      end do
      t(r, 1) = real(sps_now_ns() - t0, real64) / n
      call sp_reset(stat=code)
      t0 = sps_now_ns()
      do i = 1, n
         call sp_begin(id)
         call sp_end(id)
      end do
      t(r, 2) = real(sps_now_ns() - t0, real64) / n
      call sp_reset(stat=code)
   end do
   call sort(t(:, 1))
   call sort(t(:, 2))
   print '(a)', 'Fortran begin+end pair, ns (median, min of 11 batches of 200000 pairs)'
   print '(a, 2f9.2)', 'sps_begin/sps_end (module spanscope)     ', t(mid, 1), t(1, 1)
   print '(a, 2f9.2)', 'sp_begin/sp_end   (module scope_profiler)', t(mid, 2), t(1, 2)
   call sp_finalize()

contains

   subroutine sort(a)
      real(real64), intent(inout) :: a(:)
      integer :: i, j
      real(real64) :: x
      do i = 2, size(a)
         x = a(i)
         j = i - 1
         do while (j >= 1)
            if (a(j) <= x) exit
            a(j + 1) = a(j)
            j = j - 1
         end do
         a(j + 1) = x
      end do
   end subroutine sort

end program bench_scope_fortran
