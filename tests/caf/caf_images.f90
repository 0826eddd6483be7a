! caf_images.f90 — images and coarrays: this_image/num_images, static and allocatable coarrays
! (registration is collective; allocatable ones come and go), sync all / sync images / sync
! memory, image status queries.  Every check is made here; any failure is an ERROR STOP.
program caf_images
  implicit none
  integer :: counter[*]
  real(8) :: grid(4, 3)[*]
  integer, allocatable :: dyn(:)[:], empty(:)[:]
  integer :: me, n, i, round, st
  character(len=64) :: msg

  me = this_image()
  n = num_images()
  if (n < 2) error stop 'needs at least 2 images'
  if (me < 1 .or. me > n) error stop 'this_image out of range'

  ! Static coarrays exist on every image from the start, zero or not: give them values.
  counter = 100 * me
  grid = real(me, 8)
  sync all
  if (counter[1 + mod(me, n)] /= 100 * (1 + mod(me, n))) error stop 'static scalar coarray'
  if (any(grid(:, :)[1 + mod(me, n)] /= real(1 + mod(me, n), 8))) error stop 'static array coarray'

  ! Allocatable coarrays, allocated and freed several times (collective each time).
  do round = 1, 3
    allocate(dyn(round * 10)[*])
    if (size(dyn) /= round * 10) error stop 'allocate size'
    dyn = me * 1000 + round
    sync all
    do i = 1, n
      if (dyn(round * 10)[i] /= i * 1000 + round) error stop 'allocatable coarray contents'
    end do
    sync all
    deallocate(dyn)
    if (allocated(dyn)) error stop 'deallocate'
  end do
  allocate(empty(0)[*])
  if (.not. allocated(empty) .or. size(empty) /= 0) error stop 'zero-size coarray'
  deallocate(empty)

  ! sync images: a ring, each image hands a token to the next one.
  counter = 0
  sync all
  if (me == 1) then
    counter[2] = 1
    sync images(2)
    sync images(n)
    if (counter /= n) error stop 'ring did not come back'
  else
    sync images(me - 1)
    if (counter /= me - 1) error stop 'ring value'
    counter[1 + mod(me, n)] = me
    sync images(1 + mod(me, n))
  end if
  sync images(*)
  sync memory

  ! STAT= on an image control statement that succeeds, and one that cannot.
  sync all(stat=st)
  if (st /= 0) error stop 'sync all stat'
  msg = ''
  sync images(n + 5, stat=st, errmsg=msg)
  if (st == 0) error stop 'sync images with a bad image index must fail'
  if (len_trim(msg) == 0) error stop 'errmsg not set'
  sync images([1, 1], stat=st)
  if (st == 0) error stop 'sync images with an image listed twice must fail'

  if (image_status(1) /= 0) error stop 'image_status'
  if (size(failed_images()) /= 0) error stop 'failed_images'
  if (size(stopped_images()) /= 0) error stop 'stopped_images'
  sync all
  if (me == 1) print '(a,i0,a)', 'caf_images: ', n, ' images ok'
end program caf_images
