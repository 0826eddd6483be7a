! caf_random_init: RANDOM_INIT(REPEATABLE, IMAGE_DISTINCT) as Fortran 2018 16.9.155 says, on
! every combination.  Each image draws a few numbers after each RANDOM_INIT; image 1 gathers the
! first draws of every image through a coarray and checks:
!   IMAGE_DISTINCT=.true.   the images' sequences differ from each other;
!   IMAGE_DISTINCT=.false.  every image has the same sequence;
!   REPEATABLE=.true.       a second call on the same image gives the same sequence again (and,
!                           by construction of the seed, in every run: see test_caf.c);
!   REPEATABLE=.false.      a second call gives a different sequence (Fortran 2018: a new,
!                           unpredictable seed on each call; libgfortran repeats the first).
! Repeatability across runs is checked by running the sequence twice within the program (the
! standard's "the same each time RANDOM_INIT is called from the same image") and, across two
! runs, by test_caf.c comparing this program's line "repeatable draw" between runs.
program caf_random_init
  implicit none
  integer, parameter :: k = 6
  real(8) :: first(k)[*], again(k)
  real(8), allocatable :: draws(:, :)
  integer :: np, me, i, j
  logical :: rep, dist
  integer :: combo

  np = num_images()
  me = this_image()
  allocate (draws(k, np))
  do combo = 0, 3
    rep = combo / 2 == 1
    dist = mod(combo, 2) == 1
    call random_init(rep, dist)
    call random_number(first)
    call random_init(rep, dist)
    call random_number(again)
    if (rep .and. any(again /= first)) error stop "REPEATABLE=.true.: a second call gave another sequence"
    if (.not. rep .and. all_equal(again, first)) error stop "REPEATABLE=.false.: a second call gave the same sequence"
    sync all
    if (me == 1) then
      do i = 1, np
        draws(:, i) = first(:)[i]
      end do
      do i = 1, np
        do j = i + 1, np
          if (dist .and. all_equal(draws(:, i), draws(:, j))) then
            print '(a,l1,a,l1,a,i0,a,i0)', "repeatable=", rep, " image_distinct=", dist, &
              ": images ", i, " and ", j
            error stop "IMAGE_DISTINCT=.true.: two images have the same sequence"
          end if
          if (.not. dist .and. .not. all_equal(draws(:, i), draws(:, j))) then
            print '(a,l1,a,l1,a,i0,a,i0)', "repeatable=", rep, " image_distinct=", dist, &
              ": images ", i, " and ", j
            error stop "IMAGE_DISTINCT=.false.: two images have different sequences"
          end if
        end do
      end do
      print '(a,l1,a,l1,a)', "random_init(", rep, ", ", dist, ") ok"
    end if
    sync all
  end do
  ! For test_caf.c's comparison between two runs (not compared with other implementations:
  ! the value is this library's).
  call random_init(.true., .false.)
  call random_number(first)
  if (me == 1) write (0, '(a,z16.16)') "repeatable draw ", first(1)
  call random_init(.false., .false.)
  call random_number(first)
  if (me == 1) write (0, '(a,z16.16)') "non-repeatable draw ", first(1)
  if (me == 1) print '(a)', "Test passed."

contains

  logical function all_equal(a, b)
    real(8), intent(in) :: a(:), b(:)
    all_equal = all(a == b)
  end function

end program caf_random_init
