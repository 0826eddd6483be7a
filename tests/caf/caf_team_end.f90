! END TEAM deallocates the coarrays allocated in the team and still allocated (Fortran 2018
! 11.1.5.2), so the same CHANGE TEAM construct can run again and allocate them anew.
! (OpenCoarrays 2.10 leaves them allocated: this program is not compared with it.)
program caf_team_end
  use iso_fortran_env, only: team_type
  implicit none
  type(team_type) :: t
  integer, allocatable :: a(:)[:]
  integer :: round, k, total

  form team (2 - mod(this_image(), 2), t)
  do round = 1, 3
    change team (t)
      allocate(a(round)[*])
      a = this_image() * round
      sync all
      total = 0
      do k = 1, num_images()
        total = total + a(round)[k]
      end do
      if (total /= round * num_images() * (num_images() + 1) / 2) error stop 'wrong sum'
    end team
    if (allocated(a)) error stop 'END TEAM left a team coarray allocated'
  end do
  sync all
  if (this_image() == 1) write(*, '(a)') 'Test passed.'
end program
