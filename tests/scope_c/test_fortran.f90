!> test_fortran.f90 -- the Fortran modules scope_profiler (scope-profiler's
!! names, over the C API) and spanscope (sps_ names), run against
!! libspanscope_fortran; stops with a non-zero code naming the failed check.
!! Writes ftrace_rank00000.h5, fstats_rank00002.h5 and fsps.h5 (check.py
!! fortran_api reads them).
program test_fortran
   use scope_profiler
   use spanscope, only: sps_setup, sps_region, sps_begin, sps_end, sps_finalize, &
                        sps_shutdown, sps_is_active, sps_now_ns, sps_strerror, &
                        sps_num_calls, sps_region_kind, SPS_EACTIVE
   use, intrinsic :: iso_fortran_env, only: int64
   implicit none
   integer :: id, other, code, i
   integer(sps_region_kind) :: r
   integer(int64) :: t0
   character(len=512) :: message
   type(sp_region_stats) :: stats

   ! before sp_init: quiet, inactive
   call sp_begin(0, stat=code)
   if (code /= SP_ERR_INACTIVE) stop 1
   call sp_flush(stat=code)
   if (code /= SP_ERR_INACTIVE) stop 2
   call sp_reset(stat=code)
   if (code /= SP_ERR_INACTIVE) stop 3
   call sp_get_region_stats(1, stats, stat=code)
   if (code /= SP_ERR_INACTIVE .or. stats%calls /= 0) stop 4
   if (sp_region('x') /= 0 .or. sp_is_active()) stop 5
   call sp_init('ftrace', rank=-1, stat=code)
   if (code /= SP_ERR_INVALID_ARGUMENT) stop 6
   call sp_init(repeat('x', 513), stat=code)
   if (code /= SP_ERR_INVALID_ARGUMENT) stop 7

   call sp_init('ftrace', stat=code, errmsg=message)
   if (code /= SP_OK .or. len_trim(message) /= 0 .or. .not. sp_is_active()) stop 8
   id = sp_region('recursive')
   other = sp_region('recursive', file='solver.f90', line=42)
   if (other /= id .or. id < 1) stop 9
   call sp_begin(999999, stat=code, errmsg=message)
   if (code /= SP_ERR_INVALID_ARGUMENT .or. len_trim(message) == 0) stop 10
   call sp_end(id, stat=code)
   if (code /= SP_ERR_UNMATCHED_END) stop 11
   t0 = sp_now_ns()
   call sp_begin(id)
   do i = 1, 3
      call sp_begin(id)
      call sp_end(id)
   end do
   if (sp_num_calls(id) /= 4) stop 12
   call sp_get_region_stats(id, stats, stat=code)  ! completed calls: 3, and one open
   if (code /= SP_OK .or. stats%calls /= 3 .or. stats%min_ns < 0 .or. &
       stats%max_ns < stats%min_ns .or. stats%total_ns < stats%max_ns) stop 13
   call sp_reset(stat=code, errmsg=message)
   if (code /= SP_ERR_OPEN_SCOPES .or. len_trim(message) == 0) stop 14
   call sp_end(id)
   call sp_flush(stat=code, errmsg=message)
   if (code /= SP_OK .or. .not. sp_is_active()) stop 15
   call sp_reset(stat=code)
   if (code /= SP_OK .or. sp_num_calls(id) /= 0) stop 16
   call sp_begin_name('named', stat=code)
   if (code /= SP_OK) stop 17
   call sp_end_name('named', stat=code)
   if (code /= SP_OK) stop 18
   call sp_begin(id)
   call sp_end(id)
   if (sp_now_ns() <= t0) stop 19
   call sp_finalize(stat=code)
   if (code /= SP_OK .or. sp_is_active()) stop 20
   call sp_get_region_stats(id, stats, stat=code)
   if (code /= SP_OK .or. stats%calls /= 1) stop 21
   call sp_finalize(stat=code)
   if (code /= SP_OK) stop 22

   ! open at finalize: reported, dropped; a rank in the name
   call sp_init('fstats', rank=2)
   id = sp_region('closed')
   other = sp_region('left_open')
   call sp_begin(id)
   call sp_end(id)
   call sp_begin(other)
   call sp_finalize(stat=code)
   if (code /= SP_ERR_OPEN_SCOPES .or. sp_is_active()) stop 23
   call sp_get_region_stats(other, stats, stat=code)
   if (code /= SP_OK .or. stats%calls /= 0 .or. sp_num_calls(other) /= 1) stop 33
   ! a path that cannot be written
   call sp_init('no/such/dir/f')
   id = sp_region('r')
   call sp_begin(id)
   call sp_end(id)
   call sp_flush(stat=code, errmsg=message)
   if (code /= SP_ERR_IO .or. len_trim(message) == 0) stop 24
   call sp_finalize(stat=code)
   if (code /= SP_ERR_IO .or. .not. sp_is_active()) stop 25
   call execute_command_line('mkdir -p no/such/dir')
   call sp_finalize(stat=code, errmsg=message)
   if (code /= SP_OK .or. len_trim(message) /= 0 .or. sp_is_active()) stop 32

   ! module spanscope: the sps_ names
   if (sps_is_active()) stop 26
   code = sps_setup(file_path='fsps.h5', label='fortran')
   if (code /= 0 .or. .not. sps_is_active()) stop 27
   code = sps_setup()
   if (code /= SPS_EACTIVE .or. sps_strerror(code) /= 'a profiling session is already active') stop 28
   r = sps_region('sps_loop')
   do i = 1, 10
      call sps_begin(r)
      call sps_end(r)
   end do
   if (sps_num_calls(r) /= 10 .or. sps_now_ns() <= t0) stop 29
   code = sps_finalize()
   if (code /= 0) stop 30
   code = sps_shutdown()
   if (sps_is_active()) stop 31
   print '(a)', 'test_fortran: all checks passed'
end program test_fortran
