! caf_fail_team: FAIL IMAGE inside a team whose image indices differ from the initial team's.
! Image 1 forms a team of its own; images 2..np form the other, where initial image k is image
! k - 1, and (with 3 or more images) the last image fails.  IMAGE_STATUS, FAILED_IMAGES and
! NUM_IMAGES(FAILED=) answer for the current team, in its numbering (image 1's team has no failed
! image); SYNC ALL (STAT=) in the team reports STAT_FAILED_IMAGE and still synchronizes the
! survivors.  The images then STOP inside their teams (gfortran 12's END TEAM has no STAT=, so
! leaving a team with a failed member would be error termination).  2, 3 and 4 images.
program caf_fail_team
  use, intrinsic :: iso_fortran_env, only: team_type, STAT_FAILED_IMAGE
  implicit none
  type(team_type) :: t
  integer :: me, np, st, i, victim, tme, tnp
  integer, allocatable :: fl(:)
  integer :: mark[*]

  me = this_image()
  np = num_images()
  mark = 0
  form team (merge(1, 2, me == 1), t)
  change team (t)
    tme = this_image()
    tnp = num_images()
    if (me > 1 .and. tme /= me - 1) error stop "team index is not initial index - 1"
    if (me > 1 .and. np >= 3) then
      victim = tnp               ! initial image np
      sync all
      if (me == np) fail image
      sync all (stat=st)
      if (st /= STAT_FAILED_IMAGE) error stop "SYNC ALL in the team: stat is not STAT_FAILED_IMAGE"
      if (image_status(victim) /= STAT_FAILED_IMAGE) error stop "image_status(team index of the failed image)"
      do i = 1, tnp
        if (i /= victim .and. image_status(i) /= 0) error stop "a survivor's image_status is not 0"
      end do
      fl = failed_images()
      if (size(fl) /= 1) error stop "failed_images() does not list one image"
      if (fl(1) /= victim) error stop "failed_images() does not give the team index"
      if (num_images(failed=.true.) /= 1) error stop "num_images(failed=.true.) is not 1"
      ! the survivors still synchronize: a put before SYNC ALL is seen after it
      do i = 1, tnp
        if (i /= victim .and. i /= tme) mark[i] = 1
      end do
      sync all (stat=st)
      if (st /= STAT_FAILED_IMAGE) error stop "second SYNC ALL in the team"
      if (tnp > 2 .and. mark /= 1) error stop "a put before SYNC ALL was not seen after it"
    end if
    if (me == 1) then
      ! initial image np is not in this team: whether or not it has failed yet, none here has
      if (size(failed_images()) /= 0) error stop "failed_images() lists an image of another team"
      if (num_images(failed=.true.) /= 0) error stop "num_images(failed=.true.) counts another team"
      if (image_status(1) /= 0) error stop "image_status(1) in image 1's team"
      print '(a)', "Test passed."
    end if
    stop
  end team
end program caf_fail_team
