!> spanscope.f90 -- spanscope's own Fortran module: the sps_ functions of
!! <spanscope.h> that a Fortran program needs, by ISO_C_BINDING (link with
!! -lspanscope_fortran -lspanscope; pkg-config spanscope_fortran).
!!
!!     use spanscope
!!     integer :: rc
!!     integer(sps_region_kind) :: solve
!!     rc = sps_setup(file_path="profile.h5")
!!     solve = sps_region("solve")            ! resolve the name once
!!     do step = 1, n
!!        call sps_begin(solve)               ! sps__begin: the hot path
!!        ...
!!        call sps_end(solve)
!!     end do
!!     rc = sps_finalize()                    ! writes profile.h5
!!     if (rc /= 0) print *, sps_strerror(rc)
!!
!! Conventions are the C API's: functions that can fail return an integer,
!! 0 on success or a negative SPS_E* code, which sps_strerror names.
!! Strings are copied by the library.  sps_begin/sps_end are direct calls
!! of the library's out-of-line halves (sps__begin/sps__end, which check
!! the session themselves): lock- and allocation-free, any thread.
!! Timestamps are CLOCK_MONOTONIC ns (Python's time.perf_counter_ns()).
module spanscope
   use, intrinsic :: iso_c_binding
   implicit none
   private

   public :: sps_setup, sps_finalize, sps_finalize_to, sps_shutdown, sps_is_active
   public :: sps_region, sps_begin, sps_end, sps_now_ns, sps_strerror
   public :: sps_num_calls, sps_set_file_path

   !> Kind of a region id (C's sps_region_t, an unsigned 32-bit id held in
   !! a signed one: ids are small).
   integer, parameter, public :: sps_region_kind = c_int32_t

   !> Error codes (spanscope.h's SPS_E*).
   integer, parameter, public :: SPS_OK = 0, SPS_EINVAL = -1, SPS_ENOMEM = -2
   integer, parameter, public :: SPS_ENOSESSION = -3, SPS_EACTIVE = -4, SPS_EIO = -5
   integer, parameter, public :: SPS_EHDF5 = -6, SPS_EFORMAT = -7, SPS_ENOREGION = -8
   integer, parameter, public :: SPS_EPATH = -9, SPS_ETOOBIG = -10, SPS_ENOTSUP = -11
   integer, parameter, public :: SPS_EMODE = -12

   !> sps_config_t, field for field (include/spanscope.h).
   type, bind(c) :: c_config
      type(c_ptr) :: file_path = c_null_ptr
      integer(c_int) :: verbose = 0, aggregate = 0
      integer(c_size_t) :: memory_limit = 0, chunk_size = 0
      integer(c_int) :: overflow = 0, reserved0 = 0
      type(c_ptr) :: spill_dir = c_null_ptr, label = c_null_ptr
      integer(c_long) :: compress_threshold = 0
      integer(c_int) :: rank = 0, size = 1
      integer(c_int64_t) :: spill_limit = 0
      integer(c_int) :: local = 0, reserved1 = 0
      integer(c_int) :: emit = 0, reserved2 = 0   ! sps_config_t.emit (SONAME 1)
   end type c_config

   !> sps_stats_t.
   type, bind(c) :: c_stats
      integer(c_int64_t) :: num_calls, total_ns, self_ns, min_ns, max_ns
      real(c_double) :: mean_ns, var_ns2
   end type c_stats

   interface
      function c_setup(cfg) bind(c, name="sps_setup") result(rc)
         import :: c_int, c_config
         type(c_config), intent(in) :: cfg
         integer(c_int) :: rc
      end function c_setup
      function c_finalize() bind(c, name="sps_finalize") result(rc)
         import :: c_int
         integer(c_int) :: rc
      end function c_finalize
      function c_finalize_to(path) bind(c, name="sps_finalize_to") result(rc)
         import :: c_int, c_ptr
         type(c_ptr), value :: path
         integer(c_int) :: rc
      end function c_finalize_to
      function c_set_file_path(path) bind(c, name="sps_set_file_path") result(rc)
         import :: c_int, c_char
         character(kind=c_char), intent(in) :: path(*)
         integer(c_int) :: rc
      end function c_set_file_path
      function c_shutdown() bind(c, name="sps_shutdown") result(rc)
         import :: c_int
         integer(c_int) :: rc
      end function c_shutdown
      function c_is_active() bind(c, name="sps_is_active") result(on)
         import :: c_int
         integer(c_int) :: on
      end function c_is_active
      function c_region(name) bind(c, name="sps_region") result(id)
         import :: c_int32_t, c_char
         character(kind=c_char), intent(in) :: name(*)
         integer(c_int32_t) :: id
      end function c_region
      !> The library's out-of-line hot path (it checks the session itself).
      subroutine c_begin(id) bind(c, name="sps__begin")
         import :: c_int32_t
         integer(c_int32_t), value :: id
      end subroutine c_begin
      subroutine c_end(id) bind(c, name="sps__end")
         import :: c_int32_t
         integer(c_int32_t), value :: id
      end subroutine c_end
      function c_now_ns() bind(c, name="sps_now_ns") result(t)
         import :: c_int64_t
         integer(c_int64_t) :: t
      end function c_now_ns
      function c_strerror(code) bind(c, name="sps_strerror") result(s)
         import :: c_int, c_ptr
         integer(c_int), value :: code
         type(c_ptr) :: s
      end function c_strerror
      function c_region_stats(id, out) bind(c, name="sps_region_stats") result(rc)
         import :: c_int, c_int32_t, c_stats
         integer(c_int32_t), value :: id
         type(c_stats), intent(out) :: out
         integer(c_int) :: rc
      end function c_region_stats
      function c_strlen(s) bind(c, name="strlen") result(n)
         import :: c_ptr, c_size_t
         type(c_ptr), value :: s
         integer(c_size_t) :: n
      end function c_strlen
   end interface

contains

   !> s as a NUL-terminated C string (trailing blanks dropped).
   pure function cstr(s) result(c)
      character(len=*), intent(in) :: s
      character(kind=c_char, len=len_trim(s) + 1) :: c
      c = trim(s)//c_null_char
   end function cstr

   !> Starts a session (sps_setup).  file_path: the HDF5 file sps_finalize
   !! writes (absent: none); verbose: print the summary table at finalize;
   !! aggregate: statistics only; label: stored in /metadata; rank, size:
   !! this process's MPI rank and the world size (0 and 1); local: this
   !! process only, even under MPI.  Returns 0, SPS_EACTIVE or SPS_EINVAL.
   function sps_setup(file_path, verbose, aggregate, label, rank, size, local) result(rc)
      character(len=*), intent(in), optional :: file_path, label
      logical, intent(in), optional :: verbose, aggregate, local
      integer, intent(in), optional :: rank, size
      integer :: rc
      type(c_config) :: cfg
      character(kind=c_char, len=:), allocatable, target :: path_c, label_c
      if (present(file_path)) then
         path_c = cstr(file_path)
         cfg%file_path = c_loc(path_c)
      end if
      if (present(label)) then
         label_c = cstr(label)
         cfg%label = c_loc(label_c)
      end if
      if (present(verbose)) then
         if (verbose) cfg%verbose = 1
      end if
      if (present(aggregate)) then
         if (aggregate) cfg%aggregate = 1
      end if
      if (present(local)) then
         if (local) cfg%local = 1
      end if
      if (present(rank)) cfg%rank = int(rank, c_int)
      if (present(size)) cfg%size = int(size, c_int)
      rc = int(c_setup(cfg))
   end function sps_setup

   !> Writes the period to the session's file and keeps recording
   !! (sps_finalize: a checkpoint).  0 or a negative SPS_E* code.
   function sps_finalize() result(rc)
      integer :: rc
      rc = int(c_finalize())
   end function sps_finalize

   !> sps_finalize to path instead of the configured file, once.
   function sps_finalize_to(path) result(rc)
      character(len=*), intent(in) :: path
      integer :: rc
      character(kind=c_char, len=:), allocatable, target :: path_c
      path_c = cstr(path)
      rc = int(c_finalize_to(c_loc(path_c)))
   end function sps_finalize_to

   !> Changes the session's output path.  0, SPS_ENOSESSION or SPS_ENOMEM.
   function sps_set_file_path(path) result(rc)
      character(len=*), intent(in) :: path
      integer :: rc
      rc = int(c_set_file_path(cstr(path)))
   end function sps_set_file_path

   !> Ends the session without writing (sps_shutdown).  Returns 0.
   function sps_shutdown() result(rc)
      integer :: rc
      rc = int(c_shutdown())
   end function sps_shutdown

   !> Whether a session records in this process.
   function sps_is_active() result(on)
      logical :: on
      on = c_is_active() /= 0
   end function sps_is_active

   !> The id of a region name (interned once per process, trailing blanks
   !! dropped; takes a lock: resolve outside hot loops).
   function sps_region(name) result(id)
      character(len=*), intent(in) :: name
      integer(sps_region_kind) :: id
      id = c_region(cstr(name))
   end function sps_region

   !> Enter / leave a region on the calling thread (regions nest per thread).
   subroutine sps_begin(id)
      integer(sps_region_kind), intent(in) :: id
      call c_begin(id)
   end subroutine sps_begin

   subroutine sps_end(id)
      integer(sps_region_kind), intent(in) :: id
      call c_end(id)
   end subroutine sps_end

   !> Completed calls of a region over the whole session (0 without one).
   function sps_num_calls(id) result(calls)
      integer(sps_region_kind), intent(in) :: id
      integer(c_int64_t) :: calls
      type(c_stats) :: st
      calls = 0
      if (c_region_stats(id, st) == 0) calls = st%num_calls
   end function sps_num_calls

   !> Now, CLOCK_MONOTONIC ns (spanscope's timeline).
   function sps_now_ns() result(t)
      integer(c_int64_t) :: t
      t = c_now_ns()
   end function sps_now_ns

   !> The message of an error code (sps_strerror).
   function sps_strerror(code) result(msg)
      integer, intent(in) :: code
      character(len=:), allocatable :: msg
      type(c_ptr) :: p
      character(kind=c_char), pointer :: chars(:)
      integer :: n, i
      p = c_strerror(int(code, c_int))
      n = int(c_strlen(p))
      call c_f_pointer(p, chars, [n])
      allocate (character(len=n) :: msg)
      do i = 1, n
         msg(i:i) = chars(i)
      end do
   end function sps_strerror

end module spanscope
