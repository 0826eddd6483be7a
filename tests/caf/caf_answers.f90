! caf_answers.f90 — the answers printed, for tests/test_caf_compare.c to hold libcaf_rmx to
! OpenCoarrays' (the same source on both, the outputs compared line by line).  Only what
! OpenCoarrays 2.10.1 gets right (see tests/caf/compare.conf), each result also checked here
! (ERROR STOP on a mismatch): gets and puts of scalars, strided sections, 2-D sections, characters
! and derived types; kind conversions in coindexed assignments; a put to the image's own coarray
! read back in the same segment; allocatable coarrays; collectives; atomics; LOCK; events;
! SYNC IMAGES; cobounds.  Image 1 prints every line, after collecting what it needs.
program caf_answers
  implicit none
  type :: pt
    integer :: id
    real(8) :: x(3)
    character(len=4) :: tag
  end type
  integer :: a(6)[*], inbox(16)[*], total[*], hits[*]
  real(8) :: m(3, 4)[*]
  character(len=8) :: word[*]
  type(pt) :: p[*]
  integer :: cob(2)[2, *]
  integer(1) :: i1[*]
  real(4) :: r4(3)[*]
  real(8) :: r8(3)
  integer(8) :: i8(3)
  integer, allocatable :: d(:)[:]
  integer :: me, n, i, j, v, iv(4), prod
  real(8) :: rv
  character(len=200) :: line

  me = this_image()
  n = num_images()
  if (n < 2 .or. n > 16) error stop 'caf_answers: 2 to 16 images'

  ! ---- gets: a strided section of every image
  a = [(me * 10 + i, i = 1, 6)]
  sync all
  if (me == 1) then
    do i = 1, n
      iv(1:3) = a(2:6:2)[i]
      if (any(iv(1:3) /= i * 10 + [2, 4, 6])) error stop 'strided get'
      write (line, '(a,i0,a,3(1x,i0))') 'get a(2:6:2)[', i, ']:', iv(1:3)
      print '(a)', trim(line)
    end do
  end if

  ! ---- puts: every image writes its slot of image 1's inbox, then a reversed section
  inbox = 0
  sync all
  inbox(me)[1] = me * me
  sync all
  if (me == 1) then
    if (any(inbox(1:n) /= [(i * i, i = 1, n)])) error stop 'scalar puts'
    write (line, '(a,16(1x,i0))') 'put inbox(me)[1]:', inbox(1:n)
    print '(a)', trim(line)
  end if
  sync all
  if (me == 2) inbox(4:1:-1)[1] = [1, 2, 3, 4] * 7
  sync all
  if (me == 1) then
    if (any(inbox(1:4) /= [28, 21, 14, 7])) error stop 'reversed put'
    print '(a,4(1x,i0))', 'put inbox(4:1:-1)[1]:', inbox(1:4)
  end if

  ! ---- 2-D sections: a row and a column of another image's matrix
  m = reshape([(me + 0.25d0 * i, i = 1, 12)], [3, 4])
  sync all
  if (me == 1) then
    rv = sum(m(2, :)[n])
    if (rv /= 4 * n + 0.25d0 * (2 + 5 + 8 + 11)) error stop '2-D row get'
    print '(a,4(1x,f6.2))', 'get m(2,:)[n]:', m(2, :)[n]
    print '(a,3(1x,f6.2))', 'get m(:,3)[2]:', m(:, 3)[2]
  end if

  ! ---- characters and derived types
  write (word, '(a,i0)') 'image', me
  p = pt(me, [me * 1d0, me * 2d0, me * 3d0], 'p' // achar(48 + mod(me, 10)))
  sync all
  if (me == 1) then
    line = word[n]
    if (line /= 'image' // achar(48 + mod(n, 10)) .and. n < 10) error stop 'character get'
    print '(a,a)', 'get word[n]: ', trim(line)
    if (p[2]%id /= 2 .or. any(p[2]%x /= [2d0, 4d0, 6d0]) .or. p[2]%tag /= 'p2') error stop 'derived get'
    print '(a,i0,3(1x,f4.1),1x,a)', 'get p[2]: ', p[2]%id, p[2]%x, trim(p[2]%tag)
    p[n] = pt(-1, [0.5d0, 1.5d0, 2.5d0], 'none')
  end if
  sync all
  if (me == n) then
    if (p%id /= -1 .or. p%tag /= 'none' .or. p%x(3) /= 2.5d0) error stop 'derived put'
  end if

  ! ---- kind conversions done by the runtime: gets into other kinds, puts from other kinds
  r4 = [1.5, -2.25, 3.0] * me
  i1 = int(-me, 1)
  sync all
  if (me == 1) then
    r8 = r4(:)[n]
    if (any(r8 /= [1.5d0, -2.25d0, 3d0] * n)) error stop 'get real(4) into real(8)'
    print '(a,3(1x,f7.2))', 'get real(4) into real(8):', r8
    i8 = i1[n]
    if (any(i8 /= -n)) error stop 'get integer(1) into integer(8)'
    print '(a,3(1x,i0))', 'get integer(1) into integer(8):', i8
    r4(:)[2] = [10_8, -20_8, 30_8]
    i1[2] = 77_8
  end if
  sync all
  if (me == 2) then
    if (any(r4 /= [10., -20., 30.]) .or. i1 /= 77) error stop 'put from other kinds'
  end if
  sync all
  if (me == 1) print '(a,3(1x,f6.1),1x,i0)', 'put integer(8) into real(4), integer(1):', r4(:)[2], i1[2]

  ! ---- a put to this image's own coarray is seen by a local read in the same segment
  a(3)[me] = -me
  a(5:6)[me] = [50, 60]
  if (a(3) /= -me .or. any(a(5:6) /= [50, 60])) error stop 'own put not visible in the segment'
  if (me == 1) print '(a,3(1x,i0))', 'own put read back:', a(3), a(5:6)
  sync all

  ! ---- an allocatable coarray, allocated twice with different sizes
  do j = 1, 2
    allocate(d(3 * j)[*])
    d = [(me * 100 + i, i = 1, 3 * j)]
    sync all
    if (me == 1) then
      iv(1:3) = d(1:3 * j:j)[n]
      if (any(iv(1:3) /= n * 100 + [(1 + (i - 1) * j, i = 1, 3)])) error stop 'allocatable get'
      print '(a,i0,a,3(1x,i0))', 'allocatable d(', 3 * j, ') get:', iv(1:3)
    end if
    sync all
    deallocate(d)
  end do

  ! ---- collectives
  iv = [me, -me, 2 * me, 1]
  call co_sum(iv)
  if (any(iv /= [n * (n + 1) / 2, -n * (n + 1) / 2, n * (n + 1), n])) error stop 'co_sum'
  if (me == 1) print '(a,4(1x,i0))', 'co_sum:', iv
  iv = [me, -me, mod(me, 2), 7]
  call co_max(iv, result_image=1)
  if (me == 1) then
    if (any(iv /= [n, -1, 1, 7])) error stop 'co_max result_image'
    print '(a,4(1x,i0))', 'co_max:', iv
  end if
  rv = 1d0 / me
  call co_min(rv)
  if (rv /= 1d0 / n) error stop 'co_min'
  if (me == 1) print '(a,f10.6)', 'co_min 1/me:', rv
  prod = me
  call co_reduce(prod, imul)
  if (me == 1) print '(a,i0)', 'co_reduce product: ', prod
  p = pt(me, [me * 1d0, 0d0, 0d0], 'b' // achar(48 + mod(me, 10)))
  call co_broadcast(p, source_image=n)
  if (p%id /= n .or. p%x(1) /= n) error stop 'co_broadcast'
  if (me == 1) print '(a,i0,1x,f4.1,1x,a)', 'co_broadcast from n: ', p%id, p%x(1), trim(p%tag)

  ! ---- atomics: every image adds into image 1's counter; the total is exact
  if (me == 1) call atomic_define(hits, 0)
  sync all
  do i = 1, 5
    call atomic_add(hits[1], me)
  end do
  sync all
  call atomic_ref(v, hits[1])
  if (v /= 5 * n * (n + 1) / 2) error stop 'atomic_add'
  if (me == 1) print '(a,i0)', 'atomic_add total: ', v

  ! ---- LOCK guarding a read-modify-write on image 1
  total = 0
  sync all
  call locked_add(me)
  sync all
  if (me == 1) then
    if (total /= n * (n + 1) / 2) error stop 'lock'
    print '(a,i0)', 'locked total: ', total
  end if

  ! ---- events: every other image posts to image 1 twice; image 1 waits for them all
  call post_and_wait()

  ! ---- SYNC IMAGES: a token handed round the ring, each image adds its number
  call ring()

  ! ---- cobounds of a 2-D codimension
  if (me == 1) then
    print '(a,2(1x,i0),a,2(1x,i0))', 'cobounds lco:', lcobound(cob), ' uco:', ucobound(cob)
    print '(a,i0)', 'image_index(cob,[2,1]): ', image_index(cob, [2, 1])
  end if
  if (any(this_image(cob) /= [1 + mod(me - 1, 2), 1 + (me - 1) / 2])) error stop 'this_image(coarray)'

  sync all
  if (me == 1) print '(a)', 'Test passed.'
contains
  pure function imul(x, y) result(z)
    integer, intent(in) :: x, y
    integer :: z
    z = x * y
  end function

  subroutine locked_add(k)
    use, intrinsic :: iso_fortran_env, only: lock_type
    integer, intent(in) :: k
    type(lock_type), save :: lk[*]
    integer :: t
    lock(lk[1])
    t = total[1]
    total[1] = t + k
    unlock(lk[1])
  end subroutine

  subroutine post_and_wait()
    use, intrinsic :: iso_fortran_env, only: event_type
    type(event_type), save :: ev[*]
    integer :: cnt
    if (me /= 1) then
      event post(ev[1])
      event post(ev[1])
    else
      event wait(ev, until_count=2 * (n - 1))
      call event_query(ev, cnt)
      if (cnt /= 0) error stop 'event count'
      print '(a,i0)', 'events waited for: ', 2 * (n - 1)
    end if
    sync all
  end subroutine

  subroutine ring()
    integer, save :: token[*]
    token = 0
    sync all
    if (me == 1) then
      token[2] = 1
      sync images(2)
      sync images(n)
      if (token /= n * (n + 1) / 2) error stop 'ring'
      print '(a,i0)', 'ring token: ', token
    else
      sync images(me - 1)
      token[1 + mod(me, n)] = token + me
      sync images(1 + mod(me, n))
    end if
    sync all
  end subroutine
end program caf_answers
