! caf_stopped.f90 — an image that executes STOP while the others run on (Fortran 2018 11.4,
! 16.9.97): SYNC ALL with STAT= reports STAT_STOPPED_IMAGE, IMAGE_STATUS and STOPPED_IMAGES name
! it, its coarray stays readable until every image has stopped, and the running images still
! synchronize among themselves.  Before, its STOP (rmx_finalize) matched their SYNC ALL.
program caf_stopped
  use iso_fortran_env, only: STAT_STOPPED_IMAGE
  implicit none
  integer :: x[*], st, me, n, i
  integer, allocatable :: stopped(:), others(:)
  me = this_image()
  n = num_images()
  x = 100 + me
  sync all
  if (me == n) stop
  sync all (stat=st)
  if (st /= STAT_STOPPED_IMAGE) error stop 'sync all: STAT_STOPPED_IMAGE expected'
  sync all (stat=st)
  if (st /= STAT_STOPPED_IMAGE) error stop 'sync all again: STAT_STOPPED_IMAGE expected'
  if (image_status(n) /= STAT_STOPPED_IMAGE) error stop 'image_status of the stopped image'
  if (image_status(me) /= 0) error stop 'image_status of a running image'
  stopped = stopped_images()
  if (size(stopped) /= 1) error stop 'stopped_images: one image expected'
  if (stopped(1) /= n) error stop 'stopped_images: the last image expected'
  if (size(failed_images()) /= 0) error stop 'failed_images: none expected'
  if (x[n] /= 100 + n) error stop 'the stopped image''s coarray must stay readable'
  sync images (n, stat=st)
  if (st /= STAT_STOPPED_IMAGE) error stop 'sync images with the stopped image'
  others = pack([(i, i = 1, n - 1)], [(i, i = 1, n - 1)] /= me)
  x[1 + mod(me, n - 1)] = me
  sync images (others)
  if (n > 2 .and. x /= 1 + mod(me - 2 + n - 1, n - 1)) error stop 'put among running images'
end program caf_stopped
