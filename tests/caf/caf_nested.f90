! An allocatable component inside a component that is not allocatable (x%in%arr).  gfortran 12
! registers no token for it at start-up, and the object's initializer copies a stack temporary
! over the token field, so ALLOCATE hands the runtime whatever was on the stack there (in this
! program, not NULL: libcaf_rmx refused "component already allocated" on every image).  The
! rest (different sizes, reallocation, reads through two components) is in caf_components.
program caf_nested
  implicit none
  type :: inner
    integer, allocatable :: arr(:)
  end type
  type :: outer
    type(inner) :: in
  end type
  type(outer) :: x[*]
  integer :: me, nb, i
  integer, allocatable :: t(:)
  me = this_image()
  nb = mod(me, num_images()) + 1
  allocate(x%in%arr(6))
  x%in%arr = [(me * 10 + i, i = 1, 6)]
  sync all
  t = x[nb]%in%arr(2:5)
  call check(all(t == [(nb * 10 + i, i = 2, 5)]), 'x[nb]%in%arr(2:5)')
  sync all
  if (me == 1) write (*, '(a)') 'Test passed.'

contains

  include 'check.inc'
end program
