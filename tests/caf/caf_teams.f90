! Fortran 2018 teams: FORM TEAM / CHANGE TEAM / END TEAM / SYNC TEAM, TEAM_NUMBER, image indices
! and NUM_IMAGES relative to the current team, nested teams, coarrays allocated inside a team
! (put, get, atomics on them), coarrays of the initial team reached with team-relative indices,
! SYNC ALL and SYNC IMAGES inside a team.  (caf_team_end.f90: what END TEAM deallocates.)
program caf_teams
  use iso_fortran_env, only: team_type
  implicit none
  type(team_type) :: halves, quarters
  integer :: me, np, color, n, i, k, expect, nt, my_index
  integer :: g[*]                          ! a coarray of the initial team
  integer, allocatable :: tc(:)[:]         ! allocated inside the team
  integer, allocatable :: members(:)
  real(8), allocatable :: big(:)[:]
  integer :: st
  character(len=120) :: msg
  integer :: total

  me = this_image()
  np = num_images()
  g = 0
  color = 2 - mod(me, 2)                   ! odd images: team 1, even images: team 2
  form team (color, halves)
  call check(team_number() == -1, 'team_number of the initial team')
  sync all

  change team (halves)
    ! Team images keep the parent's order: image k of team c is initial image 2k-1 (c=1) or 2k.
    nt = num_images()
    my_index = this_image()
    call check(team_number() == color, 'team_number in the team')
    call check(team_number(halves) == color, 'team_number(team)')
    call check(nt == (np + 2 - color) / 2, 'num_images in the team')
    call check(my_index == (me + 1) / 2, 'this_image in the team')
    allocate(tc(nt)[*])
    tc = 0
    sync all
    ! Everyone puts its initial image number into slot my_index of every team image.
    do k = 1, nt
      tc(my_index)[k] = me
    end do
    sync all
    allocate(members(nt))
    members = [(2 * i - 2 + color, i = 1, nt)]
    call check(all(tc == members), 'puts into a coarray allocated in the team')
    ! Gets from the next team image.
    k = mod(my_index, nt) + 1
    n = tc(1)[k]
    call check(n == color, 'get from a coarray allocated in the team')
    ! The initial team's coarray, with an index relative to this team: team image 1.
    if (my_index == nt) g[1] = 100 * color
    sync team (halves)
    ! SYNC IMAGES with team indices: a ring within the team.
    if (nt > 1) then
      if (my_index == 1) then
        sync images (nt)
      else if (my_index == nt) then
        sync images (1)
      end if
    end if
    ! A nested team: each image alone (team number = index in this team).
    form team (my_index, quarters)
    change team (quarters)
      call check(num_images() == 1 .and. this_image() == 1, 'nested team of one')
      call check(team_number() == my_index, 'team_number of the nested team')
      sync all
    end team
    call check(num_images() == nt, 'num_images after the nested END TEAM')
    ! More than the heap window holds (RMX_CAF_HEAP, 256 MiB): STAT= and ERRMSG= say why (the
    ! reason went to stderr, even under STAT=, and ERRMSG= said only "out of memory")
    allocate(big(40000000)[*], stat=st, errmsg=msg)
    call check(st /= 0 .and. .not. allocated(big), 'allocate beyond the heap window: STAT=')
    call check(index(msg, 'do not fit in the heap window') > 0, 'allocate beyond the heap: ERRMSG=')
    deallocate(members)
    deallocate(tc)
  end team

  call check(num_images() == np .and. this_image() == me, 'back in the initial team')
  sync all
  ! Team image 1 of each team is initial image 1 (odd) or 2 (even).
  if (me <= 2) call check(g == 100 * color, 'put to g[1] from inside the team')
  ! A second round with the same team variable: nothing from the first is left over.
  change team (halves)
    allocate(tc(2)[*])
    tc = this_image()
    sync all
    total = 0
    do k = 1, num_images()
      total = total + tc(1)[k]
    end do
    call check(total == num_images() * (num_images() + 1) / 2, 'second CHANGE TEAM')
    deallocate(tc)
  end team
  sync all
  expect = np
  if (me == 1) then
    write(*, '(a, i0, a)') 'teams: ', expect, ' images, two teams, nested teams of one'
    write(*, '(a)') 'Test passed.'
  end if

contains

  include 'check.inc'
end program
