! fort.f90 -- the Fortran program of tests/instrument (gfortran takes
! -finstrument-functions as gcc does): a module function and an external
! subroutine, with fixed call counts.
module geom
  implicit none
contains
  function area(w, h) result(a)
    integer, intent(in) :: w, h
    integer :: a
    a = w * h
  end function area
end module geom

subroutine accumulate(s, x)
  implicit none
  integer, intent(inout) :: s
  integer, intent(in) :: x
  s = s + x
end subroutine accumulate

program fort
  use geom
  implicit none
  integer :: i, s
  s = 0
  do i = 1, 4
    call accumulate(s, area(i, 2))
  end do
  print '(a,i0)', 'sum ', s
end program fort
