! fail_unallocated_component.f90 — a coindexed reference to an allocatable component that the
! other image has not allocated is an error: error termination naming it, never a read of
! whatever the unallocated descriptor held.  test_caf.c expects the failure and the message.
program fail_unallocated_component
  implicit none
  type t
    real, allocatable :: a(:)
  end type
  type(t) :: x[*]
  real :: w(2)
  if (this_image() == 1) allocate(x%a(4))
  sync all
  if (this_image() == 1) w = x[num_images()]%a(1:2)
  sync all
  print *, 'not reached', w
end program fail_unallocated_component
