! caf_self_order.f90 — coindexed assignments to and from one's own image are in program order:
! the next statement sees a put to this_image(), and a put never lands late over what the program
! wrote locally afterwards (not even across SYNC ALL).  Every entry point: send, get and sendget;
! scalars and arrays; contiguous, strided and reversed sections; with type/kind conversion;
! overlapping source and destination (may_require_tmp); character and 2-d coarrays; an
! allocatable component and a get into an allocatable (the *_by_ref entry points).
program caf_self_order
  implicit none
  type :: holder
    integer, allocatable :: v(:)
  end type
  integer, parameter :: n = 64
  integer :: a(n)[*], b(n)[*], s[*], g(8, 6)[*]
  real(8) :: r(n)[*]
  character(len=5) :: c(4)[*]
  integer :: me, i, j, x, y(n), expect(n)
  integer(8) :: i8(n)
  real(4) :: f
  type(holder) :: h[*]
  integer, allocatable :: al(:)

  me = this_image()

  ! ---- send, element by element in a loop: each put is visible at once
  a = 0
  do i = 1, n
    a(i)[me] = i * 3
    if (a(i) /= i * 3) error stop 'loop put not visible at once'
    a(i) = a(i) + 1                    ! a late transfer of i*3 would undo this
  end do
  if (any(a /= [(i * 3 + 1, i = 1, n)])) error stop 'loop put overwrote a later local write'
  sync all
  if (any(a /= [(i * 3 + 1, i = 1, n)])) error stop 'loop put overwrote across sync all'

  ! ---- scalar send then a local write then sync all
  s = 1
  s[me] = 2
  if (s /= 2) error stop 'scalar put not visible'
  s = 3
  sync all
  if (s /= 3) error stop 'scalar put landed after a local write'

  ! ---- get after a local write that follows a put to the same bytes
  a(5)[me] = 100
  a(5) = 200
  x = a(5)[me]
  if (x /= 200) error stop 'get saw a put older than a local write'
  if (a(5) /= 200) error stop 'get let an older put overwrite a local write'

  ! ---- whole array, contiguous section, strided and reversed sections
  a(:)[me] = [(-i, i = 1, n)]
  if (any(a /= [(-i, i = 1, n)])) error stop 'array put not visible'
  a(10:20)[me] = 7
  if (any(a(10:20) /= 7) .or. a(9) /= -9 .or. a(21) /= -21) error stop 'broadcast put'
  a(1:n:4)[me] = [(1000 + i, i = 1, n, 4)]
  if (any(a(1:n:4) /= [(1000 + i, i = 1, n, 4)]) .or. a(2) /= -2) error stop 'strided put'
  a(n:1:-3)[me] = [(2000 + i, i = n, 1, -3)]
  if (any(a(n:1:-3) /= [(2000 + i, i = n, 1, -3)])) error stop 'reversed put'
  a = 0
  sync all
  if (any(a /= 0)) error stop 'array puts landed after a local write'

  ! ---- kind conversion in both directions
  i8 = [(int(i, 8) * 11_8, i = 1, n)]
  a(:)[me] = i8
  if (any(a /= [(i * 11, i = 1, n)])) error stop 'converting put not visible'
  a = 1
  r(:)[me] = [(real(i, 8) / 2, i = 1, n)]
  if (any(r /= [(real(i, 8) / 2, i = 1, n)])) error stop 'real put not visible'
  r(3)[me] = 4                       ! integer into real(8)
  f = r(3)[me]                       ! real(8) into real(4)
  if (f /= 4.0) error stop 'converting scalar put/get'
  r = -1
  sync all
  if (any(a /= 1) .or. any(r /= -1)) error stop 'converting puts landed late'

  ! ---- overlap on this image (may_require_tmp): a shifted copy of itself
  a = [(i, i = 1, n)]
  a(2:n)[me] = a(1:n-1)
  expect = [1, (i, i = 1, n - 1)]
  if (any(a /= expect)) error stop 'overlapping shift up'
  a = [(i, i = 1, n)]
  a(1:n-1)[me] = a(2:n)
  expect = [(i, i = 2, n), n]
  if (any(a /= expect)) error stop 'overlapping shift down'
  a = [(i, i = 1, n)]
  a(:)[me] = a(n:1:-1)
  if (any(a /= [(i, i = n, 1, -1)])) error stop 'overlapping reversal'

  ! ---- sendget: self to self, then local writes
  b = [(i * 5, i = 1, n)]
  a = 0
  a(:)[me] = b(:)[me]
  if (any(a /= b)) error stop 'sendget not visible'
  a(1:n:2)[me] = b(n:1:-2)[me]
  if (any(a(1:n:2) /= b(n:1:-2))) error stop 'strided sendget not visible'
  a = 9
  sync all
  if (any(a /= 9)) error stop 'sendget landed late'

  ! ---- 2-d sections
  g = 0
  g(2:7:2, 3:5)[me] = reshape([(i, i = 1, 9)], [3, 3])
  if (any(g(2:7:2, 3:5) /= reshape([(i, i = 1, 9)], [3, 3]))) error stop '2-d put not visible'
  g(:, 1)[me] = g(:, 4)
  if (any(g(:, 1) /= g(:, 4))) error stop '2-d column put'
  y(1:8) = g(:, 1)[me]
  if (any(y(1:8) /= g(:, 4))) error stop '2-d column get'
  g = -5
  sync all
  if (any(g /= -5)) error stop '2-d puts landed late'

  ! ---- character, with padding
  c = 'zzzzz'
  c(2)[me] = 'ab'
  if (c(2) /= 'ab   ') error stop 'character put not visible'
  c(2) = 'qq'
  sync all
  if (c(2) /= 'qq') error stop 'character put landed late'

  ! ---- many puts to separate bytes then a get of all of them, then local writes
  do j = 1, 3
    do i = 1, n
      b(i)[me] = i + j
    end do
    y = b(:)[me]
    if (any(y /= [(i + j, i = 1, n)])) error stop 'get after a loop of puts'
    b = -j
  end do
  sync all
  if (any(b /= -3)) error stop 'loop puts landed late'

  ! ---- through reference chains (the *_by_ref entry points): an allocatable component, and a
  ! get into an allocatable that takes the result's shape
  allocate (h%v(n))
  h%v = 0
  sync all
  do i = 1, n
    h[me]%v(i) = i * 7
    if (h%v(i) /= i * 7) error stop 'component put not visible at once'
    h%v(i) = -i
  end do
  a = [(i, i = 1, n)]
  a(3)[me] = 33
  al = a(1:5)[me]
  if (any(al /= [1, 2, 33, 4, 5])) error stop 'get into an allocatable after a put'
  a(3) = 0
  sync all
  if (any(h%v /= [(-i, i = 1, n)])) error stop 'component puts landed late'
  if (a(3) /= 0) error stop 'put landed after a local write (by_ref get)'

  sync all
  if (me == 1) write (*, '(a)') 'Test passed.'
end program
