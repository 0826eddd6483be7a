! caf_events: EVENT POST / EVENT WAIT / EVENT_QUERY and CRITICAL, in the initial team and inside
! teams (where event variables allocated in the team live in the heap window).
!  - many posters, one waiter with UNTIL_COUNT; EVENT_QUERY's count before and after the wait;
!  - EVENT WAIT makes the poster's earlier segment visible: each image puts a block into its
!    neighbour's coarray, then posts; the neighbour waits and must see the block (many rounds);
!  - arrays of event variables, STAT= on success;
!  - the same inside a team (static and team-allocated events, team-relative image indices), and
!    CRITICAL guarding a non-atomic update of a counter on the team's first image.
! Works with 2, 3 and 4 images; image 1 prints the results.
program caf_events
  use, intrinsic :: iso_fortran_env, only: event_type, team_type
  implicit none
  integer, parameter :: rounds = 40, k = 3
  type(event_type) :: ev[*], ack[*], many(2)[*]
  type(event_type), allocatable :: tev[:], tack[:]
  integer :: box(4)[*], counter[*]
  type(team_type) :: half
  integer :: me, np, i, r, cnt, st, next, prev, t, tme, tnp, tnext, tprev

  me = this_image()
  np = num_images()
  next = mod(me, np) + 1
  prev = mod(me - 2 + np, np) + 1

  ! ---- many posters, one waiter
  if (me /= 1) event post (ev[1])
  if (me == 1) then
    event wait (ev, until_count=np - 1)
    call event_query(ev, cnt)
    if (cnt /= 0) error stop "event count not 0 after EVENT WAIT (UNTIL_COUNT=)"
  end if
  sync all

  ! ---- EVENT_QUERY counts the posts not yet waited for
  if (me /= 1) then
    do i = 1, k
      event post (ev[1], stat=st)
      if (st /= 0) error stop "EVENT POST (STAT=) failed"
    end do
  end if
  sync all
  if (me == 1) then
    call event_query(ev, cnt, st)
    if (st /= 0 .or. cnt /= k * (np - 1)) error stop "EVENT_QUERY: wrong count"
    do i = 1, np - 1
      event wait (ev, until_count=k)
    end do
    call event_query(ev, cnt)
    if (cnt /= 0) error stop "event count not 0 after the waits"
    print '(a,i0,a)', "event_query counted ", k * (np - 1), " posts"
  end if
  sync all

  ! ---- EVENT WAIT orders the poster's earlier segment before the waiter's next one
  call ring(1, next, prev, me)
  if (me == 1) print '(a,i0,a)', "ring of ", rounds, " rounds: every block seen after its post"

  ! ---- arrays of event variables
  event post (many(2)[next])
  event post (many(1)[prev])
  event wait (many(1))
  event wait (many(2))
  call event_query(many(1), cnt)
  if (cnt /= 0) error stop "many(1) count not 0"
  call event_query(many(2), cnt)
  if (cnt /= 0) error stop "many(2) count not 0"
  sync all

  ! ---- inside a team: odd and even images
  form team (2 - mod(me, 2), half)
  counter = 0
  change team (half)
    tme = this_image()
    tnp = num_images()
    tnext = mod(tme, tnp) + 1
    tprev = mod(tme - 2 + tnp, tnp) + 1
    allocate (tev[*], tack[*])
    ! team-relative indices with a static event and with events allocated in the team
    call ring(1, tnext, tprev, tme)
    call ring(2, tnext, tprev, tme)
    if (tme /= 1) event post (tev[1])
    if (tme == 1 .and. tnp > 1) then  ! UNTIL_COUNT below 1 means 1
      event wait (tev, until_count=tnp - 1)
      call event_query(tev, cnt)
      if (cnt /= 0) error stop "team event count not 0"
    end if
    ! CRITICAL: a get, add and put on team image 1's counter lose no update
    do r = 1, rounds
      critical
        t = counter[1]
        counter[1] = t + 1
      end critical
    end do
    sync all
    if (tme == 1 .and. counter /= tnp * rounds) error stop "CRITICAL did not exclude in a team"
    deallocate (tev, tack)
  end team
  sync all

  ! ---- CRITICAL across the whole program again, after the teams
  counter = 0
  sync all
  do r = 1, rounds
    critical
      t = counter[1]
      counter[1] = t + 1
    end critical
  end do
  sync all
  if (me == 1) then
    if (counter /= np * rounds) error stop "CRITICAL did not exclude"
    print '(a)', "events and critical in teams ok"
    print '(a)', "Test passed."
  end if

contains

  ! Each image puts a block into its successor's box, then posts the successor's event; it waits
  ! for its own, and then must see its predecessor's block; the acknowledgement lets the
  ! predecessor overwrite the block in the next round.  which: 1 the static events ev / ack,
  ! 2 the events allocated in the team tev / tack (gfortran 12 passes no event variable to a
  ! dummy argument).
  subroutine ring(which, nxt, prv, self)
    integer, intent(in) :: which, nxt, prv, self
    integer :: rr, j
    do rr = 1, rounds
      box(:)[nxt] = [(rr * 1000 + self * 10 + j, j = 1, 4)]
      if (which == 1) then
        event post (ev[nxt])
        event wait (ev)
      else
        event post (tev[nxt])
        event wait (tev)
      end if
      do j = 1, 4
        if (box(j) /= rr * 1000 + prv * 10 + j) then
          print '(a,i0,a,i0,a,i0)', "image ", this_image(), " round ", rr, ": block holds ", box(j)
          error stop "EVENT WAIT did not make the poster's put visible"
        end if
      end do
      if (which == 1) then
        event post (ack[prv])
        event wait (ack)
      else
        event post (tack[prv])
        event wait (tack)
      end if
    end do
  end subroutine

end program caf_events
