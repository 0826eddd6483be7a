! caf_fail_image: Fortran 2018 failed images (after OpenCoarrays' src/tests/unit/fail_images).
! Image 2 takes a lock on image 1, then executes FAIL IMAGE; the survivors see it as failed
! (IMAGE_STATUS, FAILED_IMAGES, NUM_IMAGES(FAILED=)), get STAT_FAILED_IMAGE from every statement
! that involves it (SYNC ALL, SYNC IMAGES, a coindexed get, EVENT POST, ALLOCATE, a
! collective, LOCK of the lock it held), keep synchronizing among themselves, and end normally:
! the job's exit status is 0.  Works with 2, 3 and 4 images (with 2, image 1 survives alone).
program caf_fail_image
  use iso_fortran_env, only: STAT_FAILED_IMAGE, STAT_STOPPED_IMAGE, lock_type, event_type
  implicit none
  integer, parameter :: victim = 2
  integer :: i, st, np, me, v, x, nfailed
  integer, save :: share[*]
  type(lock_type), save :: lk[*]
  type(event_type), save :: ev[*]
  integer, allocatable :: a(:)[:], b(:)[:]
  integer, allocatable :: fl(:), sl(:)
  logical :: got

  np = num_images()
  me = this_image()
  if (np < 2) error stop "caf_fail_image needs at least 2 images"
  share = 100 + me
  do i = 1, np
    if (image_status(i) /= 0) error stop "image_status before the failure is not 0"
  end do
  if (num_images(failed=.true.) /= 0) error stop "num_images(failed=.true.) before the failure"
  if (size(failed_images()) /= 0) error stop "failed_images() before the failure is not empty"
  allocate (b(3)[*])
  b = me
  sync all

  if (me == victim) then
    lock (lk[1])       ! held when it fails: the survivors must be able to take it over
    fail image
    error stop "FAIL IMAGE returned"
  end if

  ! Every survivor learns of the failure from the synchronization itself.
  sync all (stat=st)
  call expect_failed(st, "first sync all")

  if (image_status(victim) /= STAT_FAILED_IMAGE) error stop "image_status(2) is not STAT_FAILED_IMAGE"
  do i = 1, np
    if (i /= victim .and. image_status(i) /= 0 .and. image_status(i) /= STAT_STOPPED_IMAGE) &
      error stop "a survivor's image_status is not 0"
  end do
  fl = failed_images()
  if (size(fl) /= 1) error stop "failed_images() does not list exactly one image"
  if (fl(1) /= victim) error stop "failed_images() does not list image 2"
  sl = stopped_images()
  if (size(sl) /= 0) error stop "stopped_images() is not empty"
  nfailed = num_images(failed=.true.)
  if (nfailed /= 1) error stop "num_images(failed=.true.) is not 1"
  if (num_images(failed=.false.) /= np - 1) error stop "num_images(failed=.false.) is not np-1"
  if (num_images() /= np) error stop "num_images() changed"

  ! Coindexed access to the failed image.
  v = -1
  v = share[victim, stat=st]
  call expect_failed(st, "coindexed get")
  ! (No put: gfortran 12 does not pass STAT= of a coindexed assignment to the library, so a put
  ! to the failed image is error termination.)
  ! ... and to the survivors, which still works.
  do i = 1, np
    if (i == victim) cycle
    v = share[i, stat=st]
    if (st /= 0) error stop "coindexed get from a survivor: stat /= 0"
    if (v /= 100 + i) error stop "coindexed get from a survivor: wrong value"
  end do

  ! Image control statements naming it.
  sync images (victim, stat=st)
  call expect_failed(st, "sync images (2)")
  event post (ev[victim], stat=st)
  call expect_failed(st, "event post to the failed image")
  lock (lk[victim], stat=st)
  call expect_failed(st, "lock on the failed image")

  ! The lock it held on image 1: image 1 takes it over, told that its holder failed.
  if (me == 1) then
    lock (lk[1], acquired_lock=got, stat=st)
    call expect_failed(st, "lock held by the failed image")
    unlock (lk[1], stat=st)
    if (st /= 0) error stop "unlock of the taken-over lock failed"
    lock (lk[1], stat=st)
    if (st /= 0) error stop "lock after the take-over failed"
    unlock (lk[1], stat=st)
    if (st /= 0) error stop "second unlock failed"
  end if

  ! The survivors still synchronize: a put before SYNC IMAGES (*) / SYNC ALL is seen after it.
  sync all (stat=st)  ! every survivor has read its neighbours' share above
  call expect_failed(st, "sync all after the gets")
  if (me == 1) then
    do i = 1, np
      if (i /= victim .and. i /= 1) share[i] = 1000 + i
    end do
  end if
  sync images (*, stat=st)
  call expect_failed(st, "sync images (*)")
  if (me /= 1 .and. share /= 1000 + me) error stop "put before sync images (*) not seen"
  sync all (stat=st)
  call expect_failed(st, "sync all among survivors")
  if (me /= 1) share[1] = 0
  sync all (stat=st)
  call expect_failed(st, "third sync all")
  if (me == 1 .and. share /= 0 .and. np > 2) error stop "put before sync all not seen"

  ! A collective involving it, and ALLOCATE (which synchronizes all images).
  x = me
  call co_sum(x, stat=st)
  call expect_failed(st, "co_sum")
  allocate (a(4)[*], stat=st)
  call expect_failed(st, "allocate")
  if (allocated(a)) error stop "allocate with a failed image allocated the coarray"
  ! DEALLOCATE of a coarray allocated before the failure: done on the survivors, and reported.
  if (any(b /= me)) error stop "a coarray allocated before the failure changed"
  deallocate (b, stat=st)
  call expect_failed(st, "deallocate")
  if (allocated(b)) error stop "deallocate with a failed image left the coarray allocated"

  sync all (stat=st)
  call expect_failed(st, "sync all after allocate")

  ! A second failure, right after a statement that involves no synchronization (OpenCoarrays'
  ! image_fail_test_1): the last image, when there is one besides images 1 and 2.
  if (np >= 3) then
    if (me == np) fail image
    sync all (stat=st)
    call expect_failed(st, "sync all after the second failure")
    fl = failed_images()
    if (size(fl) /= 2) error stop "failed_images() does not list two images"
    if (fl(1) /= victim .or. fl(2) /= np) error stop "failed_images() lists the wrong images"
    if (num_images(failed=.true.) /= 2) error stop "num_images(failed=.true.) is not 2"
    if (image_status(np) /= STAT_FAILED_IMAGE) error stop "image_status(np) is not STAT_FAILED_IMAGE"
    fl = failed_images()
  end if
  fl = fl(1:1)

  sync all (stat=st)
  call expect_failed(st, "last sync all")
  if (me == 1) then
    print '(a,i0)', "failed images: ", fl(1)
    print '(a,i0)', "num_images(failed=.true.) after the first failure = ", nfailed
    print '(a)', "Test passed."
  end if

contains

  subroutine expect_failed(stat, what)
    integer, intent(in) :: stat
    character(*), intent(in) :: what
    if (stat /= STAT_FAILED_IMAGE) then
      print '(a,i0,a,a,a,i0)', "image ", this_image(), ": ", what, ": stat = ", stat
      error stop "expected STAT_FAILED_IMAGE"
    end if
  end subroutine

end program caf_fail_image
