! coarray.f90 — Fortran coarrays on rmx: gfortran -fcoarray=lib turns every coindexed
! assignment into a call of libcaf_rmx, which makes it an rmx put or get; image control
! statements (SYNC ALL, SYNC IMAGES) end rmx segments.
!
! Build (make tests builds it as build/tests/examples/coarray), with the compile wrapper that
! `make` generates (gfortran -fcoarray=lib plus libcaf_rmx, librmx and what they need):
!     build/rmxcaf tests/examples/coarray.f90 -o coarray
! Run on 2 (or more) images, under mpirun, or rmx's own launcher when there is no mpirun:
!     build/rmxrun -n 2 ./coarray        (build/rmxrun --launcher fork -n 2 ./coarray)
program coarray
  implicit none
  integer, parameter :: m = 5
  integer :: greeting(m)[*]     ! a coarray: every image has its own greeting(1:m)
  integer :: square[*]
  integer :: me, n, right, k, got

  me = this_image()
  n = num_images()
  right = 1 + mod(me, n)        ! images are numbered 1..n; the last one's right is image 1

  ! put: image 1 writes its greeting into every other image's.  An image may read what it got
  ! once image 1 and it have passed a matching SYNC IMAGES: image 1 syncs with all, the others
  ! with image 1.
  if (me == 1) then
    greeting = [(100 + k, k = 1, m)]
    do k = 2, n
      greeting(:)[k] = greeting           ! a put: the whole array into image k's copy
    end do
    sync images (*)
  else
    sync images (1)
  end if
  write (*, '(a, i0, a, *(1x, i0))') 'image ', me, ': greeting from image 1:', greeting
  if (any(greeting /= [(100 + k, k = 1, m)])) error stop 'coarray: wrong greeting'

  ! get: every image sets its own square, then reads its right neighbour's.  SYNC ALL between
  ! them: no image reads before every image has written.
  square = me * me
  sync all
  got = square[right]
  write (*, '(a, i0, a, i0, a, i0)') 'image ', me, ': square of image ', right, ' is ', got
  if (got /= right * right) error stop 'coarray: wrong square'
  sync all
  if (me == 1) write (*, '(a, i0, a)') 'coarray: ', n, ' images ok'
end program coarray
