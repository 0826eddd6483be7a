! caf_vector.f90 — vector subscripts on coindexed objects: send (a(v)[i] = b), get (b = a(v)[i])
! and sendget (a(v)[i] = c(w)[j]), index arrays of every integer kind, 2-d and 3-d references
! with vector subscripts in some dimensions and triplets or scalars in the others, runs of
! adjacent indices, repeated indices on the right-hand side, a scalar broadcast, kind conversion,
! non-default lower bounds, an allocatable coarray, characters, and one's own image.  Every image
! fills its coarrays with values that encode (image, position), works on its neighbours, checks.
program caf_vector
  implicit none
  integer, parameter :: n = 12
  integer :: a(n)[*], m(6, 5)[*], z(-3:8)[*], t(4, 3, 5)[*]
  real(8) :: r(n)[*]
  character(len=3) :: w(5)[*]
  integer, allocatable :: al(:, :)[:]
  integer :: me, np, right, left, i, j, k
  integer :: b(6), c(3, 2), d(2, 3), e(2, 3, 2), idx(3), jdx(2), g(3)
  integer(1) :: i1(3)
  integer(2) :: i2(3)
  integer(8) :: i8(4)
  integer(16) :: i16(2)
  integer(8) :: big(3)
  character(len=3) :: ws(3)
  integer, parameter :: v415(3) = [4, 1, 5], v41(2) = [4, 1], v52(2) = [5, 2], v13(2) = [1, 3]
  integer, parameter :: v210(3) = [2, -1, 0]

  me = this_image(); np = num_images()
  right = 1 + mod(me, np); left = 1 + mod(me - 2 + np, np)
  idx = [3, 1, 2]
  jdx = [5, 2]

  ! ---- get, index arrays of every integer kind; repeated and reversed indices
  a = [(100 * me + i, i = 1, n)]
  sync all
  i1 = [int(7, 1), int(1, 1), int(12, 1)]
  i2 = [int(4, 2), int(4, 2), int(4, 2)]
  i8 = [10_8, 9_8, 8_8, 7_8]
  b(1:3) = a(idx)[right]
  if (any(b(1:3) /= 100 * right + idx)) error stop 'get, kind-4 vector'
  b(1:3) = a(i1)[right]
  if (any(b(1:3) /= 100 * right + [7, 1, 12])) error stop 'get, kind-1 vector'
  b(1:3) = a(i2)[left]
  if (any(b(1:3) /= 100 * left + 4)) error stop 'get, repeated indices'
  b(1:4) = a(i8)[right]
  if (any(b(1:4) /= 100 * right + [10, 9, 8, 7])) error stop 'get, kind-8 reversed vector'
  i16 = [11_16, 5_16]
  b(1:2) = a(i16)[left]
  if (any(b(1:2) /= 100 * left + [11, 5])) error stop 'get, kind-16 vector'
  b = a([2, 3, 4, 8, 9, 10])[right]            ! two runs of adjacent elements
  if (any(b /= 100 * right + [2, 3, 4, 8, 9, 10])) error stop 'get, runs'
  r = [(real(me * 1000 + i, 8), i = 1, n)]
  sync all
  big = r(idx)[right]                          ! real(8) -> integer(8) through a vector
  if (any(big /= int(right * 1000 + idx, 8))) error stop 'get, vector with conversion'

  ! ---- send: permutation, broadcast, runs, conversion
  sync all
  a([3, 1, 2])[right] = [-1, -2, -3] * me
  a([12, 11])[right] = 0
  a(idx + 5)[right] = [(-10 * me - i, i = 1, 3)]   ! indices 8, 6, 7
  sync all
  if (any(a([3, 1, 2]) /= [-1, -2, -3] * left)) error stop 'send, permutation'
  if (any(a(11:12) /= 0)) error stop 'send, broadcast'
  if (any(a([8, 6, 7]) /= [(-10 * left - i, i = 1, 3)])) error stop 'send, computed vector'
  if (any(a([4, 5, 9, 10]) /= 100 * me + [4, 5, 9, 10])) error stop 'send touched other elements'
  sync all
  r(i8)[right] = [1, 2, 3, 4] * me             ! integer -> real(8)
  sync all
  if (any(r(10:7:-1) /= real([1, 2, 3, 4] * left, 8))) error stop 'send, vector with conversion'

  ! ---- 2-d: vector in one dimension, triplet or scalar in the other
  m = reshape([(1000 * me + i, i = 1, 30)], [6, 5])
  sync all
  c = m(idx, 2:4:2)[right]
  do j = 1, 2
    do i = 1, 3
      if (c(i, j) /= 1000 * right + idx(i) + 6 * (2 * j - 1)) error stop 'get 2-d, m(v, l:u:s)'
    end do
  end do
  b(1:3) = m(idx, 5)[left]
  if (any(b(1:3) /= 1000 * left + idx + 24)) error stop 'get 2-d, m(v, scalar)'
  b(1:2) = m(4, jdx)[right]
  if (any(b(1:2) /= 1000 * right + 4 + 6 * (jdx - 1))) error stop 'get 2-d, m(scalar, v)'
  d = m(2:3, [4, 1, 5])[right]
  do j = 1, 3
    do i = 1, 2
      if (d(i, j) /= 1000 * right + i + 1 + 6 * (v415(j) - 1)) error stop 'get 2-d, m(l:u, v)'
    end do
  end do
  c = m(idx, jdx)[right]
  do j = 1, 2
    do i = 1, 3
      if (c(i, j) /= 1000 * right + idx(i) + 6 * (jdx(j) - 1)) error stop 'get 2-d, m(v, w)'
    end do
  end do
  sync all
  m(idx, jdx)[right] = reshape([(-me * 10 - i, i = 1, 6)], [3, 2])
  m(6, [1, 3])[right] = 7
  sync all
  do j = 1, 2
    do i = 1, 3
      if (m(idx(i), jdx(j)) /= -left * 10 - (i + 3 * (j - 1))) error stop 'send 2-d, m(v, w)'
    end do
  end do
  if (any(m(6, [1, 3]) /= 7)) error stop 'send 2-d, m(scalar, v) broadcast'
  if (m(4, 1) /= 1000 * me + 4 .or. m(1, 4) /= 1000 * me + 19) error stop 'send 2-d touched others'

  ! ---- 3-d: vectors in the first and last dimensions
  t = reshape([(me * 1000 + i, i = 1, 60)], [4, 3, 5])
  sync all
  e = t([4, 1], 1:3, [5, 2])[right]
  do k = 1, 2
    do j = 1, 3
      do i = 1, 2
        if (e(i, j, k) /= right * 1000 + v41(i) + 4 * (j - 1) + 12 * (v52(k) - 1)) &
          error stop 'get 3-d'
      end do
    end do
  end do
  sync all
  t([2, 3], 2, [1, 4, 5])[right] = reshape([(-i, i = 1, 6)], [2, 3])
  sync all
  if (any(t(2:3, 2, 1) /= [-1, -2]) .or. any(t(2:3, 2, 4) /= [-3, -4]) .or. &
      any(t(2:3, 2, 5) /= [-5, -6])) error stop 'send 3-d'
  if (t(2, 2, 2) /= me * 1000 + 2 + 4 + 12) error stop 'send 3-d touched others'

  ! ---- non-default lower bounds, allocatable coarray
  z = [(me * 100 + i, i = -3, 8)]
  allocate (al(0:4, -2:2)[*])
  al = reshape([(me * 100 + i, i = 1, 25)], [5, 5])
  sync all
  b(1:3) = z([-3, 8, 0])[right]
  if (any(b(1:3) /= right * 100 + [-3, 8, 0])) error stop 'get, lower bound -3'
  g = al([4, 0, 2], -2)[right]
  if (any(g /= right * 100 + 1 + [4, 0, 2])) error stop 'get, allocatable with lower bound 0'
  d = al(1:3:2, [2, -1, 0])[right]
  do j = 1, 3
    do i = 1, 2
      if (d(i, j) /= right * 100 + 1 + v13(i) + 5 * (v210(j) + 2)) &
        error stop 'get, allocatable al(l:u:s, v)'
    end do
  end do
  sync all
  z([8, -3])[right] = [1, 2]
  al([0, 4], [2, -2])[right] = reshape([5, 6, 7, 8], [2, 2])
  sync all
  if (z(8) /= 1 .or. z(-3) /= 2 .or. z(0) /= me * 100) error stop 'send, lower bound -3'
  if (al(0, 2) /= 5 .or. al(4, 2) /= 6 .or. al(0, -2) /= 7 .or. al(4, -2) /= 8) &
    error stop 'send, allocatable with lower bounds'

  ! ---- sendget: vectors on either side or both.  Image 1 copies from its left neighbour (image
  ! np) to its right one (image 2), which checks.
  a = [(100 * me + i, i = 1, n)]
  sync all
  if (me == 1) then
    a([5, 4, 6])[right] = a(idx)[left]
    a(1:2)[right] = a([12, 10])[left]
    a([11, 12])[right] = a(8:9)[left]
  end if
  sync all
  if (me == right .and. right /= 1) then
    if (any(a([5, 4, 6]) /= 100 * np + idx)) error stop 'sendget, vector to vector'
    if (any(a(1:2) /= 100 * np + [12, 10])) error stop 'sendget, vector to section'
    if (any(a(11:12) /= 100 * np + [8, 9])) error stop 'sendget, section to vector'
  end if
  sync all
  m = reshape([(1000 * me + i, i = 1, 30)], [6, 5])
  sync all
  ! (Not transpose(m(idx, jdx)[left]): gfortran 12 passes that get a local temporary's descriptor
  ! instead of the coarray's, and no vector.)
  if (me == 1) then
    c = m(idx, jdx)[left]
    m(jdx, idx)[right] = transpose(c)
  end if
  sync all
  if (me == right .and. right /= 1) then
    do j = 1, 3
      do i = 1, 2
        if (m(jdx(i), idx(j)) /= 1000 * np + idx(j) + 6 * (jdx(i) - 1)) &
          error stop 'sendget 2-d through transpose'
      end do
    end do
  end if

  sync all
  m = reshape([(1000 * me + i, i = 1, 30)], [6, 5])
  sync all
  if (me == 1) then
    m(jdx, 1:3)[right] = m(4:5, idx)[left]      ! 2-d sendget, vectors on both sides
    r(idx)[right] = a([1, 12, 6])[left]         ! sendget with conversion
  end if
  sync all
  if (me == right .and. right /= 1) then
    do j = 1, 3
      do i = 1, 2
        if (m(jdx(i), j) /= 1000 * np + 3 + i + 6 * (idx(j) - 1)) error stop 'sendget 2-d'
      end do
    end do
    if (any(r(idx) /= real(100 * np + [1, 12, 6], 8))) error stop 'sendget with conversion'
  end if

  ! ---- characters
  w = ['aaa', 'bbb', 'ccc', 'ddd', 'eee']
  sync all
  ws = w([5, 1, 3])[right]
  if (any(ws /= ['eee', 'aaa', 'ccc'])) error stop 'get characters'
  sync all
  w([2, 4])[right] = ['xy', 'zw']
  sync all
  if (any(w /= ['aaa', 'xy ', 'ccc', 'zw ', 'eee'])) error stop 'send characters, padding'

  ! ---- one's own image: in program order
  a = [(i, i = 1, n)]
  a([n, 1])[me] = [-1, -2]
  if (a(n) /= -1 .or. a(1) /= -2) error stop 'send to self not visible'
  a(1) = 50
  b(1:3) = a([1, n, 2])[me]
  if (any(b(1:3) /= [50, -1, 2])) error stop 'get from self'
  sync all
  if (a(1) /= 50) error stop 'send to self landed late'

  sync all
  if (me == 1) write (*, '(a)') 'Test passed.'
end program
