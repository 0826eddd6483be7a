! fail_error_stop.f90 — error termination: the last image stops with ERROR STOP 7 while the others
! wait in SYNC ALL.  test_caf.c expects the job to end (no hang) with a failure status and the
! message on stderr.
program fail_error_stop
  implicit none
  integer :: x[*]
  x = this_image()
  if (this_image() == num_images()) error stop 7
  sync all
  print *, 'not reached', x
end program fail_error_stop
