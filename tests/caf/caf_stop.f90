! caf_stop.f90 — normal termination from inside a procedure: every image runs STOP after its
! last coindexed write; the collective finalize behind STOP completes the puts before any image
! is gone, so the last image to check still sees its neighbour's data, and the job exits 0.
program caf_stop
  implicit none
  integer :: x[*]
  x = 0
  sync all
  x[1 + mod(this_image(), num_images())] = this_image()
  call finish(x)
contains
  subroutine finish(v)
    integer, intent(inout) :: v[*]
    sync all
    if (v /= 1 + mod(this_image() - 2 + num_images(), num_images())) error stop 'caf_stop: data'
    if (this_image() == 1) stop 'caf_stop ok'
    stop
  end subroutine
end program caf_stop
