! caf_coll_team.f90 — collectives inside CHANGE TEAM involve only the current team's images:
! FORM TEAM splits the images into odd and even ones (team numbers 1 and 2); inside, CO_SUM,
! CO_MIN, CO_MAX, CO_BROADCAST and CO_REDUCE (with RESULT_IMAGE= / SOURCE_IMAGE= relative to the
! team) act on arrays of 1 Mi elements, larger than one collective scratch slot, and the two
! teams run different numbers of collectives (their sequence counters part ways).  Then the same
! in the initial team again, and once more in teams of the first and the second half.
program caf_coll_team
  use iso_fortran_env, only: team_type
  implicit none
  integer, parameter :: big = 1048576
  type(team_type) :: parity, halves
  integer :: me, n, gid, tme, tn, color, i, st, expect_sum, k
  integer, allocatable :: a(:)
  real(8), allocatable :: r(:)
  character(len=8) :: word

  me = this_image(); n = num_images()
  gid = me
  color = 2 - mod(me, 2) ! 1: odd images, 2: even ones
  allocate(a(big), r(big))

  form team (color, parity)
  change team (parity)
    tme = this_image(); tn = num_images()
    if (tn /= merge((n + 1) / 2, n / 2, color == 1)) error stop 'team size'
    ! sum of the initial image numbers of the team: odd or even numbers up to n
    expect_sum = sum([(i, i = color, n, 2)])
    a = [(gid + mod(i, 7), i = 1, big)]
    call co_sum(a, stat=st)
    if (st /= 0) error stop 'co_sum in a team: stat'
    do i = 1, big, 4099
      if (a(i) /= expect_sum + tn * mod(i, 7)) error stop 'co_sum of a big array in a team'
    end do
    if (a(big) /= expect_sum + tn * mod(big, 7)) error stop 'co_sum in a team: last element'
    ! RESULT_IMAGE and SOURCE_IMAGE are team image indices
    k = gid
    call co_max(k, result_image=tn)
    if (tme == tn .and. k /= maxval([(i, i = color, n, 2)])) error stop 'co_max result_image in a team'
    r = real(gid, 8)
    r(big) = -gid
    call co_broadcast(r, source_image=tn)
    if (any(r(1:big - 1) /= maxval([(i, i = color, n, 2)])) .or. r(big) /= -maxval([(i, i = color, n, 2)])) &
      error stop 'co_broadcast of a big array in a team'
    a = gid
    call co_reduce(a(::2), imin, result_image=1)
    if (tme == 1 .and. (any(a(::2) /= color) .or. any(a(2::2) /= gid))) error stop 'co_reduce in a team'
    if (color == 1) then ! only the odd team: the teams' collective counts now differ
      write (word, '(a,i0)') 'team', gid
      call co_min(word)
      if (word /= 'team1') error stop 'co_min character in team 1'
      k = tme
      call co_sum(k)
      if (k /= tn * (tn + 1) / 2) error stop 'co_sum of team image indices'
      call co_max(k) ! three collectives: an odd number, so a count kept per image would disagree
      if (k /= tn * (tn + 1) / 2) error stop 'co_max in team 1'
    end if
    k = gid
    call co_reduce(k, iadd)
    if (k /= expect_sum) error stop 'co_reduce scalar in a team'
  end team

  ! ---- back in the initial team: every image again
  a = [(me * mod(i, 3), i = 1, big)]
  call co_sum(a)
  do i = 1, big, 5003
    if (a(i) /= n * (n + 1) / 2 * mod(i, 3)) error stop 'co_sum of a big array after END TEAM'
  end do
  r = me
  call co_broadcast(r, n)
  if (any(r /= n)) error stop 'co_broadcast after END TEAM'
  k = me
  call co_min(k, result_image=n)
  if (me == n .and. k /= 1) error stop 'co_min after END TEAM'
  if (me == 1) print '(a,i0,a)', 'initial team: ', n, ' images'

  ! ---- halves: images 1..h and h+1..n (gfortran 12 has no NEW_INDEX=); team image 1 of the
  !      second half is image h+1
  block
    integer :: h, first
    h = n / 2
    first = merge(1, h + 1, me <= h)
    form team (merge(1, 2, me <= h), halves)
    change team (halves)
      if (this_image() /= me - first + 1) error stop 'team image index in a half'
      k = me
      call co_broadcast(k, source_image=1)
      if (k /= first) error stop 'co_broadcast from team image 1 of a half'
      a = me
      call co_reduce(a, imin, result_image=num_images())
      if (this_image() == num_images() .and. any(a /= first)) error stop 'co_reduce to the last image of a half'
      k = 1
      call co_sum(k)
      if (k /= merge(h, n - h, me <= h)) error stop 'co_sum in a half'
    end team
  end block

  sync all
  if (me == 1) print '(a)', 'Test passed.'
contains
  pure integer function imin(x, y)
    integer, intent(in) :: x, y
    imin = min(x, y)
  end function
  pure integer function iadd(x, y)
    integer, intent(in) :: x, y
    iadd = x + y
  end function
end program caf_coll_team
