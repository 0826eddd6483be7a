! caf_coll_stat.f90 — a collective in which an image has stopped returns STAT_STOPPED_IMAGE
! through STAT= (Fortran 2018 16.9.46) instead of hanging or crashing: the last image executes
! STOP, the others call CO_SUM, CO_MIN, CO_MAX, CO_BROADCAST and CO_REDUCE with STAT=, scalars
! and an argument larger than one scratch slot, then still synchronize among themselves.
program caf_coll_stat
  use iso_fortran_env, only: STAT_STOPPED_IMAGE
  implicit none
  integer :: me, n, st, k
  integer, allocatable :: a(:)
  me = this_image(); n = num_images()
  allocate(a(1048576))
  sync all
  if (me == n) stop
  k = me
  call co_sum(k, stat=st)
  if (st /= STAT_STOPPED_IMAGE) error stop 'co_sum: STAT_STOPPED_IMAGE expected'
  call co_min(k, result_image=1, stat=st)
  if (st /= STAT_STOPPED_IMAGE) error stop 'co_min result_image: STAT_STOPPED_IMAGE expected'
  call co_max(k, result_image=n, stat=st)
  if (st /= STAT_STOPPED_IMAGE) error stop 'co_max to the stopped image: STAT_STOPPED_IMAGE expected'
  a = me
  call co_broadcast(a, 1, stat=st)
  if (st /= STAT_STOPPED_IMAGE) error stop 'co_broadcast: STAT_STOPPED_IMAGE expected'
  call co_broadcast(k, n, stat=st)
  if (st /= STAT_STOPPED_IMAGE) error stop 'co_broadcast from the stopped image: STAT_STOPPED_IMAGE expected'
  call co_reduce(a, iadd, stat=st)
  if (st /= STAT_STOPPED_IMAGE) error stop 'co_reduce: STAT_STOPPED_IMAGE expected'
  sync all (stat=st)
  if (st /= STAT_STOPPED_IMAGE) error stop 'sync all: STAT_STOPPED_IMAGE expected'
  if (me == 1) print '(a)', 'Test passed.'
contains
  pure integer function iadd(x, y)
    integer, intent(in) :: x, y
    iadd = x + y
  end function
end program caf_coll_stat
