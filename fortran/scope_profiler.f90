!> scope_profiler.f90 -- scope-profiler 0.7.5's Fortran module over spanscope:
!! the same names and arguments as scope-profiler's own module, by
!! ISO_C_BINDING over scope-profiler's C API in libspanscope
!! (include/scope_profiler.h, src/faces/scope_profiler.c).  Link with
!! -lspanscope_fortran -lspanscope (pkg-config spanscope_fortran).
!!
!!     use scope_profiler
!!     integer :: solve
!!     call sp_init("profile", rank=my_rank)   ! rank optional, default 0
!!     solve = sp_region("solve")              ! resolve the name once
!!     do step = 1, nsteps
!!        call sp_begin(solve)
!!        ...
!!        call sp_end(solve)
!!     end do
!!     call sp_finalize()                      ! writes profile_rank00000.h5
!!
!! What differs from scope-profiler's own module (docs/scope-profiler-c.md):
!! - the file is "<prefix>_rank<NNNNN>.h5" (scope-profiler schema 3, read by
!!   spanscope and by scope-profiler's read_h5 and import-native), not the
!!   ".spt" trace; recording is spanscope's (thread-safe, bounded memory);
!! - a region id is spanscope's region id (>= 1; 0 when sp_region fails);
!! - sp_begin/sp_end are the C API's checked pair (sp_profiler_begin/end on
!!   the default profiler): a few ns more than spanscope's own sps_begin
!!   (module spanscope), no allocation, no lock;
!! - the messages are the C layer's wording (printed by it, on stderr, when
!!   neither stat nor errmsg is given; sp_set_messages turns them off
!!   around a call given one);
!! - there is no nesting limit: SP_ERR_DEPTH is never returned;
!! - SP_ERR_UNSUPPORTED (9, new) when the running spanscope session keeps no
!!   spans (an aggregate session of another face).
!!
!! Optional stat/errmsg arguments are set on every call; without them an
!! error other than SP_ERR_INACTIVE is printed, as scope-profiler does.
module scope_profiler
   use, intrinsic :: iso_c_binding
   use, intrinsic :: iso_fortran_env, only: int32, int64, error_unit
   implicit none
   private

   public :: sp_init, sp_region, sp_begin, sp_end
   public :: sp_begin_name, sp_end_name, sp_finalize
   public :: sp_num_calls, sp_now_ns, sp_is_active
   public :: sp_flush, sp_reset, sp_get_region_stats

   integer, parameter, public :: SP_OK = 0, SP_ERR_INACTIVE = 1, SP_ERR_NO_CLOCK = 2
   integer, parameter, public :: SP_ERR_NO_MEMORY = 3, SP_ERR_IO = 4
   integer, parameter, public :: SP_ERR_UNMATCHED_END = 5, SP_ERR_OPEN_SCOPES = 6
   integer, parameter, public :: SP_ERR_INVALID_ARGUMENT = 7, SP_ERR_DEPTH = 8
   integer, parameter, public :: SP_ERR_UNSUPPORTED = 9

   !> Statistics of a region; times in ns, zero without calls.
   type, public :: sp_region_stats
      integer(int64) :: calls = 0, total_ns = 0, min_ns = 0, max_ns = 0
   end type sp_region_stats

   !> Longest region name kept (scope-profiler's limit: longer names are cut,
   !! in lookups too).
   integer, parameter, public :: SP_MAX_NAME = 128

   !> The C API's sp_scope and sp_region_stats.
   type, bind(c) :: c_scope
      type(c_ptr) :: profiler
      integer(c_int) :: region
      integer(c_int64_t) :: slot
   end type c_scope
   type, bind(c) :: c_stats
      integer(c_int64_t) :: calls, total_ns, min_ns, max_ns
   end type c_stats
   !> spanscope.h's sps_open_call_t.
   type, bind(c) :: c_open_call
      integer(c_int32_t) :: region, depth
      integer(c_int64_t) :: thread
   end type c_open_call

   interface
      function c_init(prefix, rank) bind(c, name="sp_init") result(rc)
         import :: c_char, c_int
         character(kind=c_char), intent(in) :: prefix(*)
         integer(c_int), value :: rank
         integer(c_int) :: rc
      end function c_init
      function c_default() bind(c, name="sp_default_profiler") result(p)
         import :: c_ptr
         type(c_ptr) :: p
      end function c_default
      function c_active(p) bind(c, name="sp_profiler_is_active") result(on)
         import :: c_ptr, c_int
         type(c_ptr), value :: p
         integer(c_int) :: on
      end function c_active
      function c_region_at(p, name, file, line) bind(c, name="sp_profiler_region_at") result(id)
         import :: c_ptr, c_char, c_int
         type(c_ptr), value :: p
         character(kind=c_char), intent(in) :: name(*)
         type(c_ptr), value :: file
         integer(c_int), value :: line
         integer(c_int) :: id
      end function c_region_at
      function c_scope_begin(p, id) bind(c, name="sp_profiler_scope_begin") result(s)
         import :: c_ptr, c_int, c_scope
         type(c_ptr), value :: p
         integer(c_int), value :: id
         type(c_scope) :: s
      end function c_scope_begin
      subroutine c_end(p, id) bind(c, name="sp_profiler_end")
         import :: c_ptr, c_int
         type(c_ptr), value :: p
         integer(c_int), value :: id
      end subroutine c_end
      function c_last_error(p) bind(c, name="sp_profiler_last_error") result(s)
         import :: c_ptr, c_int
         type(c_ptr), value :: p
         integer(c_int) :: s
      end function c_last_error
      function c_num_calls(id) bind(c, name="sp_num_calls") result(n)
         import :: c_int, c_int64_t
         integer(c_int), value :: id
         integer(c_int64_t) :: n
      end function c_num_calls
      function c_now_ns() bind(c, name="sp_now_ns") result(t)
         import :: c_int64_t
         integer(c_int64_t) :: t
      end function c_now_ns
      function c_flush(p) bind(c, name="sp_profiler_flush") result(rc)
         import :: c_ptr, c_int
         type(c_ptr), value :: p
         integer(c_int) :: rc
      end function c_flush
      function c_finalize_or_keep(p) bind(c, name="sp_profiler_finalize_or_keep") result(rc)
         import :: c_ptr, c_int
         type(c_ptr), value :: p
         integer(c_int) :: rc
      end function c_finalize_or_keep
      function c_reset(p) bind(c, name="sp_profiler_reset") result(rc)
         import :: c_ptr, c_int
         type(c_ptr), value :: p
         integer(c_int) :: rc
      end function c_reset
      function c_get_stats(p, id, st) bind(c, name="sp_profiler_get_region_stats") result(rc)
         import :: c_ptr, c_int, c_stats
         type(c_ptr), value :: p
         integer(c_int), value :: id
         type(c_stats), intent(out) :: st
         integer(c_int) :: rc
      end function c_get_stats
      function c_output_path(p) bind(c, name="sp_profiler_output_path") result(s)
         import :: c_ptr
         type(c_ptr), value :: p
         type(c_ptr) :: s
      end function c_output_path
      function c_set_messages(on) bind(c, name="sp_set_messages") result(was)
         import :: c_int
         integer(c_int), value :: on
         integer(c_int) :: was
      end function c_set_messages
      function c_open_calls_all(out, cap) bind(c, name="sps_open_calls_all") result(n)
         import :: c_ptr, c_size_t, c_int64_t
         type(c_ptr), value :: out
         integer(c_size_t), value :: cap
         integer(c_int64_t) :: n
      end function c_open_calls_all
      function c_strlen(s) bind(c, name="strlen") result(n)
         import :: c_ptr, c_size_t
         type(c_ptr), value :: s
         integer(c_size_t) :: n
      end function c_strlen
   end interface

   !> The default profiler of the C API, once sp_init has made one.
   type(c_ptr) :: prof = c_null_ptr

   !> The regions of the calls open when the profiler was finalized (their
   !! calls were entered, not completed: sp_get_region_stats leaves them out).
   integer(c_int32_t), allocatable :: final_open(:)

contains

   !> Optional status outputs are set on every call. Errors are printed only
   !! when neither output is supplied. Inactive instrumentation stays quiet.
   subroutine report(code, message, stat, errmsg)
      integer, intent(in) :: code
      character(len=*), intent(in) :: message
      integer, intent(out), optional :: stat
      character(len=*), intent(out), optional :: errmsg
      if (present(stat)) stat = code
      if (present(errmsg)) errmsg = message
      if (code /= SP_OK .and. code /= SP_ERR_INACTIVE) then
         if (.not. present(stat) .and. .not. present(errmsg)) &
            write (error_unit, '(a)') 'scope_profiler: '//message
      end if
   end subroutine report

   !> Turns the C layer's messages off on this thread for a call given stat
   !! or errmsg (quiet: nothing is printed then); returns what to restore.
   function hush(quiet) result(was)
      logical, intent(in) :: quiet
      integer(c_int) :: was
      was = 1_c_int
      if (quiet) was = c_set_messages(0_c_int)
   end function hush

   subroutine unhush(quiet, was)
      logical, intent(in) :: quiet
      integer(c_int), intent(in) :: was
      integer(c_int) :: ignored
      if (quiet) ignored = c_set_messages(was)
   end subroutine unhush

   !> Like report, for a failure the C layer has already printed: sets the
   !! outputs, prints nothing more.
   subroutine relay(code, message, stat, errmsg)
      integer, intent(in) :: code
      character(len=*), intent(in) :: message
      integer, intent(out), optional :: stat
      character(len=*), intent(out), optional :: errmsg
      if (present(stat)) stat = code
      if (present(errmsg)) errmsg = message
   end subroutine relay

   !> A C API status as this module's code.
   integer function from_c(s)
      integer(c_int), intent(in) :: s
      if (s == 7) then
         from_c = SP_ERR_UNSUPPORTED
      else
         from_c = int(s)
      end if
   end function from_c

   !> The default profiler's output path.
   function out_path() result(path)
      character(len=:), allocatable :: path
      type(c_ptr) :: p
      character(kind=c_char), pointer :: chars(:)
      integer :: i, n
      path = ''
      if (.not. c_associated(prof)) return
      p = c_output_path(prof)
      if (.not. c_associated(p)) return
      n = int(c_strlen(p))
      call c_f_pointer(p, chars, [n])
      path = repeat(' ', n)
      do i = 1, n
         path(i:i) = chars(i)
      end do
   end function out_path

   !> The regions of the calls open now on every thread (spanscope's
   !! sps_open_calls_all: a query).
   function open_regions() result(regions)
      integer(c_int32_t), allocatable :: regions(:)
      type(c_open_call), allocatable, target :: buf(:)
      integer(c_int64_t) :: n, m
      allocate (regions(0))
      n = c_open_calls_all(c_null_ptr, 0_c_size_t)
      if (n <= 0) return
      allocate (buf(n))
      m = c_open_calls_all(c_loc(buf), int(n, c_size_t))
      regions = buf(1:min(m, n))%region
   end function open_regions

   !> Nanoseconds on spanscope's clock, the one of Python's
   !! time.perf_counter_ns().
   function sp_now_ns() result(now)
      integer(int64) :: now
      now = int(c_now_ns(), int64)
   end function sp_now_ns

   !> Whether sp_init() has been called and regions are being recorded.
   function sp_is_active() result(is_active)
      logical :: is_active
      is_active = .false.
      if (c_associated(prof)) is_active = c_active(prof) /= 0
   end function sp_is_active

   !> Starts a fresh profiler (the C API's sp_init); handles of an earlier
   !! one are no longer valid.  Prefixes longer than 512 characters or
   !! empty, and negative ranks, are rejected.
   subroutine sp_init(prefix, rank, stat, errmsg)
      character(len=*), intent(in) :: prefix
      integer, intent(in), optional :: rank
      integer, intent(out), optional :: stat
      character(len=*), intent(out), optional :: errmsg
      integer(c_int) :: r, rc, was
      call report(SP_OK, '', stat, errmsg)
      if (len_trim(prefix) > 512 .or. len_trim(prefix) == 0) then
         call report(SP_ERR_INVALID_ARGUMENT, 'invalid output prefix length', stat, errmsg)
         return
      end if
      r = 0
      if (present(rank)) then
         if (rank < 0) then
            call report(SP_ERR_INVALID_ARGUMENT, 'rank must be nonnegative', stat, errmsg)
            return
         end if
         r = int(rank, c_int)
      end if
      if (allocated(final_open)) deallocate (final_open)
      was = hush(present(stat) .or. present(errmsg))
      rc = c_init(trim(prefix)//c_null_char, r)
      call unhush(present(stat) .or. present(errmsg), was)
      prof = c_default()
      if (rc /= 0) then
         if (c_associated(prof)) then
            call relay(from_c(c_last_error(prof)), 'cannot start profiling', stat, errmsg)
         else
            call report(SP_ERR_NO_MEMORY, 'out of memory', stat, errmsg)
         end if
      end if
   end subroutine sp_init

   !> Resolves a name once, outside hot loops (names are cut at SP_MAX_NAME
   !! characters, trailing blanks dropped).  file/line: where the region is
   !! defined; the first location given is kept.  Returns 0 when inactive.
   function sp_region(name, file, line, stat, errmsg) result(id)
      character(len=*), intent(in) :: name
      character(len=*), intent(in), optional :: file
      integer, intent(in), optional :: line
      integer, intent(out), optional :: stat
      character(len=*), intent(out), optional :: errmsg
      integer :: id
      character(len=SP_MAX_NAME) :: key
      character(kind=c_char, len=:), allocatable, target :: file_c
      type(c_ptr) :: file_p
      integer(c_int) :: ln, was
      id = 0
      call report(SP_OK, '', stat, errmsg)
      if (.not. sp_is_active()) then
         call report(SP_ERR_INACTIVE, 'profiler is inactive', stat, errmsg)
         return
      end if
      key = name
      file_p = c_null_ptr
      ln = -1
      if (present(file)) then
         if (len_trim(file) > 0) then
            file_c = trim(file)//c_null_char
            file_p = c_loc(file_c)
            if (present(line)) then
               if (line >= 0) ln = int(line, c_int)
            end if
         end if
      end if
      was = hush(present(stat) .or. present(errmsg))
      id = int(c_region_at(prof, trim(key)//c_null_char, file_p, ln))
      call unhush(present(stat) .or. present(errmsg), was)
      if (id < 1) then
         id = 0
         call relay(from_c(c_last_error(prof)), 'cannot register region '//trim(key), stat, errmsg)
      end if
   end function sp_region

   !> Enter a region.  One C call when all is well (the C API checks the
   !! profiler and the handle itself).
   subroutine sp_begin(id, stat, errmsg)
      integer, intent(in) :: id
      integer, intent(out), optional :: stat
      character(len=*), intent(out), optional :: errmsg
      type(c_scope) :: s
      if (present(stat)) stat = SP_OK
      if (present(errmsg)) errmsg = ''
      s = c_scope_begin(prof, int(id, c_int))
      if (s%slot >= 0) return
      if (.not. sp_is_active()) then
         call report(SP_ERR_INACTIVE, 'profiler is inactive', stat, errmsg)
      else
         call report(SP_ERR_INVALID_ARGUMENT, 'invalid region handle', stat, errmsg)
      end if
   end subroutine sp_begin

   !> Leave a region (its innermost open call on this thread).  Without stat
   !! and errmsg one C call (which reports an unmatched end itself).
   subroutine sp_end(id, stat, errmsg)
      integer, intent(in) :: id
      integer, intent(out), optional :: stat
      character(len=*), intent(out), optional :: errmsg
      integer :: code
      integer(c_int) :: was
      if (id >= 1 .and. .not. present(stat) .and. .not. present(errmsg)) then
         call c_end(prof, int(id, c_int))
         return
      end if
      if (present(stat)) stat = SP_OK
      if (present(errmsg)) errmsg = ''
      if (.not. sp_is_active()) then
         call report(SP_ERR_INACTIVE, 'profiler is inactive', stat, errmsg)
         return
      end if
      if (id < 1) then
         call report(SP_ERR_INVALID_ARGUMENT, 'invalid region handle', stat, errmsg)
         return
      end if
      was = hush(.true.)
      call c_end(prof, int(id, c_int))
      call unhush(.true., was)
      code = from_c(c_last_error(prof))
      if (code == SP_ERR_UNMATCHED_END) &
         call relay(code, 'sp_end without a matching sp_begin', stat, errmsg)
   end subroutine sp_end

   !> sp_begin of sp_region(name): a lookup on every call; prefer handles.
   subroutine sp_begin_name(name, stat, errmsg)
      character(len=*), intent(in) :: name
      integer, intent(out), optional :: stat
      character(len=*), intent(out), optional :: errmsg
      integer :: id, code
      character(len=512) :: message
      id = sp_region(name, stat=code, errmsg=message)
      if (code /= SP_OK) then
         call report(code, trim(message), stat, errmsg)
         return
      end if
      call sp_begin(id, stat, errmsg)
   end subroutine sp_begin_name

   !> sp_end of the region named name.
   subroutine sp_end_name(name, stat, errmsg)
      character(len=*), intent(in) :: name
      integer, intent(out), optional :: stat
      character(len=*), intent(out), optional :: errmsg
      integer :: id, code
      character(len=512) :: message
      id = sp_region(name, stat=code, errmsg=message)
      if (code /= SP_OK) then
         call report(code, trim(message), stat, errmsg)
         return
      end if
      call sp_end(id, stat, errmsg)
   end subroutine sp_end_name

   !> Calls entered (completed and open); readable after finalize.
   function sp_num_calls(id) result(calls)
      integer, intent(in) :: id
      integer(int64) :: calls
      calls = int(c_num_calls(int(id, c_int)), int64)
   end function sp_num_calls

   !> Statistics of a region (see the module's notes for calls).
   subroutine sp_get_region_stats(id, stats, stat, errmsg)
      integer, intent(in) :: id
      type(sp_region_stats), intent(out) :: stats
      integer, intent(out), optional :: stat
      character(len=*), intent(out), optional :: errmsg
      type(c_stats) :: st
      stats = sp_region_stats()
      call report(SP_OK, '', stat, errmsg)
      if (.not. c_associated(prof)) then
         call report(SP_ERR_INACTIVE, 'profiler has not been initialized', stat, errmsg)
         return
      end if
      if (c_get_stats(prof, int(id, c_int), st) /= 0) then
         call report(SP_ERR_INVALID_ARGUMENT, 'invalid region handle', stat, errmsg)
         return
      end if
      ! the C API counts calls entered; this module's calls are completed
      if (sp_is_active()) then
         stats%calls = st%calls - count(open_regions() == int(id, c_int32_t), kind=int64)
      else if (allocated(final_open)) then
         stats%calls = st%calls - count(final_open == int(id, c_int32_t), kind=int64)
      else
         stats%calls = st%calls
      end if
      stats%total_ns = st%total_ns
      stats%min_ns = st%min_ns
      stats%max_ns = st%max_ns
   end subroutine sp_get_region_stats

   !> Clears the measurements, keeping handles; refused while a call is open.
   subroutine sp_reset(stat, errmsg)
      integer, intent(out), optional :: stat
      character(len=*), intent(out), optional :: errmsg
      integer :: code
      call report(SP_OK, '', stat, errmsg)
      if (.not. sp_is_active()) then
         call report(SP_ERR_INACTIVE, 'profiler is inactive', stat, errmsg)
         return
      end if
      code = from_c(c_reset(prof))
      if (code == SP_ERR_OPEN_SCOPES) then
         call report(code, 'cannot reset with open regions', stat, errmsg)
      else if (code /= SP_OK) then
         call report(code, 'cannot reset', stat, errmsg)
      end if
   end subroutine sp_reset

   !> Writes every completed call so far and keeps profiling.
   subroutine sp_flush(stat, errmsg)
      integer, intent(out), optional :: stat
      character(len=*), intent(out), optional :: errmsg
      integer(c_int) :: rc, was
      call report(SP_OK, '', stat, errmsg)
      if (.not. sp_is_active()) then
         call report(SP_ERR_INACTIVE, 'profiler is inactive', stat, errmsg)
         return
      end if
      was = hush(present(stat) .or. present(errmsg))
      rc = c_flush(prof)
      call unhush(present(stat) .or. present(errmsg), was)
      if (rc /= 0) call relay(from_c(c_last_error(prof)), 'cannot write '//out_path(), stat, errmsg)
   end subroutine sp_flush

   !> Writes the file and stops; open calls are left out (SP_ERR_OPEN_SCOPES).
   !! When the file cannot be written the profiler stays active, so that the
   !! program can fix the cause and call sp_finalize again (scope-profiler's
   !! rule: the C API's sp_profiler_finalize_or_keep).  Finalizing twice is
   !! harmless.
   subroutine sp_finalize(stat, errmsg)
      integer, intent(out), optional :: stat
      character(len=*), intent(out), optional :: errmsg
      integer :: code
      integer(c_int) :: rc, was
      call report(SP_OK, '', stat, errmsg)
      if (.not. sp_is_active()) return
      final_open = open_regions()
      was = hush(present(stat) .or. present(errmsg))
      rc = c_finalize_or_keep(prof)
      call unhush(present(stat) .or. present(errmsg), was)
      if (rc /= 0) then
         call relay(from_c(c_last_error(prof)), 'cannot write '//out_path(), stat, errmsg)
         return
      end if
      code = from_c(c_last_error(prof))
      if (code == SP_ERR_OPEN_SCOPES) call relay(code, &
         'regions still open at sp_finalize; unfinished calls dropped', stat, errmsg)
   end subroutine sp_finalize

end module scope_profiler
