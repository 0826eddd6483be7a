! caf_oom — libcaf_rmx's out-of-memory paths inside a team (tests/caf/fail_malloc.c fails one
! malloc of a given size on one image): the image out of memory and the others get STAT=, none
! crashes or waits forever.  Before: ALLOCATE in a team handed the team's exchange a one-record
! buffer when the image could not allocate the team's records, which the exchange overran, and
! then read the records through NULL.
program caf_oom
  use, intrinsic :: iso_c_binding, only: c_size_t, c_int
  use, intrinsic :: iso_fortran_env, only: team_type
  implicit none
  interface
    subroutine fail_next_malloc(n) bind(C)
      import :: c_size_t
      integer(c_size_t), value :: n
    end subroutine
    integer(c_int) function malloc_failed() bind(C)
      import :: c_int
    end function
    integer(c_int) function malloc_failing() bind(C)
      import :: c_int
    end function
  end interface
  type(team_type) :: everyone
  integer, allocatable :: a(:)[:]
  integer :: st, n, round
  character(len=200) :: msg

  if (malloc_failing() == 0) then ! AddressSanitizer owns malloc: nothing to fail
    if (this_image() == 1) write(*, '(a)') 'caf_oom: skipped (no malloc to fail under AddressSanitizer)'
    stop
  end if
  form team (1, everyone)
  change team (everyone)
    n = num_images()
    do round = 1, 2
      msg = ''
      ! the team's exchange records: 16 bytes (displacement, ok) per team image
      if (this_image() == 1) call fail_next_malloc(int(16 * n, c_size_t))
      allocate(a(8)[*], stat=st, errmsg=msg)
      if (this_image() == 1) then
        call check(malloc_failed() /= 0, 'the armed malloc did not fire inside ALLOCATE')
        call check(st /= 0 .and. index(msg, 'memory') > 0, 'STAT=/ERRMSG= of the image out of memory')
      else
        call check(st /= 0, 'STAT= of the others (an image out of memory)')
      end if
      call check(.not. allocated(a), 'allocated after a failed ALLOCATE')
      sync all
    end do
    ! Memory back: the same ALLOCATE works, on every image.
    allocate(a(8)[*], stat=st, errmsg=msg)
    call check(st == 0, 'ALLOCATE after the failures')
    a = this_image()
    sync all
    call check(a(8)[mod(this_image(), n) + 1] == mod(this_image(), n) + 1, 'the coarray after the failures')
    sync all
    deallocate(a)
  end team
  if (this_image() == 1) write(*, '(a)') 'caf_oom: ok'
contains
  include 'check.inc'
end program
