! caf_rma.f90 — coindexed reads and writes (send, get, sendget) of scalars and array sections:
! contiguous, strided, 2-d and 3-d sections, reversed (negative stride), a scalar broadcast into a
! section, kind conversion, character padding, derived-type components.  Each image fills its
! arrays with values that encode (image, position), exchanges with its neighbour, and checks.
program caf_rma
  implicit none
  type :: pt
    integer :: id
    real(8) :: xy(2)
  end type
  integer, parameter :: m = 12, k = 10
  integer :: a[*], v(m)[*]
  real(8) :: g(m, k)[*], cube(4, 5, 6)[*]
  integer(8) :: big[*]
  character(len=6) :: word[*]
  type(pt) :: p[*], parr(3)[*]
  integer, allocatable :: dyn(:, :)[:], got(:), got2(:, :)
  integer :: me, n, right, left, i, j, x, y(m), w(5)
  real(8) :: h(3, 4), col(m), sl(2, 3, 2)
  integer(8) :: i8
  character(len=10) :: longword

  me = this_image(); n = num_images()
  right = 1 + mod(me, n); left = 1 + mod(me - 2 + n, n)

  ! ---- scalars
  a = -1
  sync all
  a[right] = me
  sync all
  if (a /= left) error stop 'scalar send'
  x = a[right]
  if (x /= me) error stop 'scalar get'

  ! ---- 1-d: whole array, contiguous section, strided section, reversed section
  v = [(1000 * me + i, i = 1, m)]
  sync all
  y = v(:)[right]
  if (any(y /= [(1000 * right + i, i = 1, m)])) error stop 'get whole array'
  w = v(3:7)[right]
  if (any(w /= [(1000 * right + i, i = 3, 7)])) error stop 'get contiguous section'
  w = v(2:10:2)[left]
  if (any(w /= [(1000 * left + i, i = 2, 10, 2)])) error stop 'get strided section'
  w = v(11:3:-2)[right]
  if (any(w /= [(1000 * right + i, i = 11, 3, -2)])) error stop 'get reversed section'
  sync all
  v(1:5)[right] = [(-me * 10 - i, i = 1, 5)]             ! contiguous put
  v(6:12:3)[right] = [-1, -2, -3]                         ! strided put
  sync all
  if (any(v(1:5) /= [(-left * 10 - i, i = 1, 5)])) error stop 'put contiguous section'
  if (any(v(6:12:3) /= [-1, -2, -3])) error stop 'put strided section'
  if (any(v([7, 8, 10, 11]) /= 1000 * me + [7, 8, 10, 11])) error stop 'strided put touched gaps'
  sync all
  v(12:8:-1)[right] = [(100 + i, i = 1, 5)]              ! reversed put
  sync all
  if (any(v(8:12) /= [(100 + i, i = 5, 1, -1)])) error stop 'put reversed section'

  ! ---- 2-d: a column, a block, a strided block; a scalar broadcast into a section
  g = 0
  do j = 1, k
    do i = 1, m
      g(i, j) = me * 10000 + i * 100 + j
    end do
  end do
  sync all
  col = g(:, 4)[right]
  if (any(col /= [(right * 10000 + i * 100 + 4, i = 1, m)])) error stop 'get column'
  h = g(2:4, 5:8)[right]
  do j = 1, 4
    do i = 1, 3
      if (h(i, j) /= right * 10000 + (i + 1) * 100 + (j + 4)) error stop 'get 2-d block'
    end do
  end do
  h = g(1:9:4, 1:10:3)[left]
  do j = 1, 4
    do i = 1, 3
      if (h(i, j) /= left * 10000 + (1 + 4 * (i - 1)) * 100 + (1 + 3 * (j - 1))) &
        error stop 'get strided 2-d block'
    end do
  end do
  sync all
  g(5:7, 2:3)[right] = reshape([(-real(i, 8), i = 1, 6)], [3, 2])
  g(m, :)[right] = 7.5d0                                  ! scalar into a row (stride m)
  sync all
  if (any(g(5:7, 2:3) /= reshape([(-real(i, 8), i = 1, 6)], [3, 2]))) error stop 'put 2-d block'
  if (any(g(m, :) /= 7.5d0)) error stop 'scalar broadcast into a row'
  if (g(4, 2) /= me * 10000 + 4 * 100 + 2) error stop 'put 2-d block touched a neighbour'

  ! ---- 3-d strided section
  do i = 1, 4
    cube(i, :, :) = me * 1000 + i
  end do
  sync all
  sl = cube(2:4:2, 1:5:2, 3:6:3)[right]
  if (any(sl(1, :, :) /= right * 1000 + 2) .or. any(sl(2, :, :) /= right * 1000 + 4)) &
    error stop 'get 3-d strided section'

  ! ---- sendget: image me moves data from its right neighbour to its left one
  sync all
  v = [(1000 * me + i, i = 1, m)]
  sync all
  v(1:4)[left] = v(5:8)[right]
  sync all
  ! my v(1:4) was written by my right neighbour with data of its right neighbour
  if (any(v(1:4) /= [(1000 * (1 + mod(right, n)) + i, i = 5, 8)])) error stop 'sendget'
  g(1, 1:3)[left] = g(2:6:2, 1)[right]
  sync all

  ! ---- kind conversion and characters
  big = 0
  sync all
  big[right] = me                            ! integer(4) -> integer(8) coarray
  sync all
  if (big /= left) error stop 'send with kind conversion'
  i8 = big[left]
  if (i8 /= 1 + mod(left - 2 + n, n)) error stop 'get integer(8)'
  x = big[right]                             ! integer(8) coarray -> integer(4)
  if (x /= me) error stop 'get with kind conversion'
  col(1) = a[right]                          ! integer coarray -> real(8)
  if (col(1) /= me) error stop 'get integer into real'
  word = 'xxxxxx'
  sync all
  word[right] = 'ab'                         ! shorter: blank padded
  sync all
  if (word /= 'ab    ') error stop 'character send with padding'
  longword = word[left]
  if (longword /= 'ab') error stop 'character get into a longer variable'

  ! ---- derived types: whole scalar, a component, an array of them
  p = pt(me, [real(me, 8), -real(me, 8)])
  parr = pt(0, 0d0)
  sync all
  if (p[right]%id /= right) error stop 'get component'
  if (any(p[left]%xy /= [real(left, 8), -real(left, 8)])) error stop 'get array component'
  parr(2)[right] = p
  sync all
  if (parr(2)%id /= left .or. parr(2)%xy(2) /= -left) error stop 'send derived type'
  if (parr(1)%id /= 0 .or. parr(3)%id /= 0) error stop 'send derived type touched neighbours'

  ! ---- allocatable destination of a get from an allocatable coarray (gfortran: get_by_ref,
  !      the destination is (re)allocated to the section's shape)
  allocate(dyn(6, 5)[*])
  dyn = reshape([(me * 100 + i, i = 1, 30)], [6, 5])
  sync all
  got = dyn(:, 2)[right]
  if (size(got) /= 6 .or. any(got /= [(right * 100 + i, i = 7, 12)])) error stop 'get_by_ref column'
  got = dyn(2, 1:5:2)[left]
  if (size(got) /= 3 .or. any(got /= left * 100 + [2, 14, 26])) error stop 'get_by_ref strided row'
  got2 = dyn(2:3, 4:5)[right]
  if (any(shape(got2) /= [2, 2])) error stop 'get_by_ref block shape'
  if (any(got2 /= reshape(right * 100 + [20, 21, 26, 27], [2, 2]))) error stop 'get_by_ref block'
  sync all
  deallocate(dyn)

  sync all
  if (me == 1) print '(a,i0,a)', 'caf_rma: ', n, ' images ok'
end program caf_rma
