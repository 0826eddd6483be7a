! fail_critical_failed.f90 — image 2 fails inside a CRITICAL construct; when image 1 then enters
! the same construct, gfortran 12 gives it no STAT= (CRITICAL (STAT=) is not supported), so it
! is error termination naming the failed holder (test_caf.c expects the message).
program fail_critical_failed
  implicit none
  integer :: st
  sync all
  if (this_image() == 2) call guarded(.true.)
  sync all (stat=st)  ! every other image knows of the failure now
  if (this_image() == 1) call guarded(.false.)
contains
  subroutine guarded(fail)
    logical, intent(in) :: fail
    critical
      if (fail) fail image
      print *, 'not reached', st
    end critical
  end subroutine
end program fail_critical_failed
