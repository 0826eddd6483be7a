! caf_lock.f90 — mutual exclusion and events: LOCK / UNLOCK guarding a non-atomic read-modify-
! write of image 1's counter (get, add, put) so that no update is lost; ACQUIRED_LOCK=; STAT= of
! UNLOCK on a lock not held; CRITICAL doing the same; arrays of locks on several images;
! EVENT POST / EVENT WAIT / EVENT_QUERY handing work from image to image.
program caf_lock
  use, intrinsic :: iso_fortran_env, only: lock_type, event_type, STAT_UNLOCKED, STAT_LOCKED
  implicit none
  integer, parameter :: reps = 20
  type(lock_type) :: lk[*], many(3)[*]
  type(event_type) :: ev[*]
  integer :: total[*], crit_total[*], per_lock(3)[*]
  integer :: me, n, i, t, st, cnt
  logical :: got
  character(len=80) :: msg

  me = this_image(); n = num_images()
  total = 0; crit_total = 0; per_lock = 0
  sync all

  ! ---- LOCK / UNLOCK: get, add, put under the lock; the total must be exact
  do i = 1, reps
    lock(lk[1])
    t = total[1]
    total[1] = t + 1
    unlock(lk[1])
  end do
  sync all
  if (me == 1 .and. total /= n * reps) error stop 'lock did not exclude: updates lost'

  ! ---- ACQUIRED_LOCK: while image 1 holds the lock, nobody else gets it
  if (me == 1) lock(lk[1])
  sync all
  if (me /= 1) then
    lock(lk[1], acquired_lock=got)
    if (got) error stop 'acquired a lock held by image 1'
  end if
  sync all
  if (me == 1) unlock(lk[1])
  sync all
  if (me == n) then
    lock(lk[1], acquired_lock=got)
    if (.not. got) error stop 'could not acquire a free lock'
    lock(lk[1], stat=st)
    if (st /= STAT_LOCKED) error stop 'locking a lock this image holds: STAT_LOCKED'
    unlock(lk[1])
  end if
  sync all

  ! ---- UNLOCK of a lock this image does not hold is an error condition
  msg = ''
  unlock(lk[1], stat=st, errmsg=msg)
  if (st /= STAT_UNLOCKED) error stop 'unlock of an unlocked lock: STAT_UNLOCKED'
  if (index(msg, 'not locked') == 0) error stop 'unlock of an unlocked lock: ERRMSG='
  sync all

  ! ---- CRITICAL: the same read-modify-write, no lock variable in sight
  do i = 1, reps
    critical
      t = crit_total[1]
      crit_total[1] = t + 2
    end critical
  end do
  sync all
  if (me == 1 .and. crit_total /= 2 * n * reps) error stop 'critical did not exclude'

  ! ---- an array of locks on every image: lock k of image j guards per_lock(k) of image j
  do i = 1, reps
    do t = 1, 3
      lock(many(t)[1 + mod(me + t, n)])
      cnt = per_lock(t)[1 + mod(me + t, n)]
      per_lock(t)[1 + mod(me + t, n)] = cnt + t
      unlock(many(t)[1 + mod(me + t, n)])
    end do
  end do
  sync all
  if (any(per_lock /= [(t * reps, t = 1, 3)])) error stop 'array of locks'

  ! ---- events: a relay 1 -> 2 -> ... -> n, then every image posts to image 1 which waits for all
  if (me > 1) event wait(ev)
  if (me < n) event post(ev[me + 1])
  sync all
  event post(ev[1])
  if (me == 1) then
    event wait(ev, until_count=n)
    call event_query(ev, cnt)
    if (cnt /= 0) error stop 'event count after wait'
  end if
  sync all
  if (me == 1) print '(a,i0,a)', 'caf_lock: ', n, ' images ok'
end program caf_lock
