! Derived-type coarrays with allocatable components, components of fixed shape and arrays of
! derived type: local use, and coindexed get, put and get-put through components
! (x[i]%a(:), x[i]%s, x[i]%b(2:3,4), x[i]%us(2)%w), ALLOCATED(x[i]%a), components allocated with
! a different size on each image, deallocation and reallocation.
program caf_components
  implicit none
  type u
    integer :: k
    real :: w(2)
  end type
  type t
    integer :: n
    real, allocatable :: a(:)
    real :: b(4, 5)
    type(u), allocatable :: us(:)
    integer, allocatable :: s
  end type
  ! An allocatable component inside a component that is not allocatable: gfortran 12 makes no
  ! token for it at start-up (the object's initializer copies a stack temporary over the token
  ! field), so ALLOCATE finds whatever was on the stack there.
  type inner
    integer, allocatable :: arr(:)
  end type
  type outer
    type(inner) :: in
  end type
  type t2
    real, pointer :: p(:) => null()           ! allocated by ALLOCATE: reachable like a component
    character(len=:), allocatable :: str      ! deferred length
  end type
  type(t) :: x[*]
  type(t), allocatable :: y[:]
  type(t2) :: z[*]
  type(outer) :: q[*]
  character(len=5) :: str
  integer :: me, np, j, i, k
  real :: v(3), r, b2(2), col(4), bj(4, 5)
  real, allocatable :: whole(:)
  logical :: ok

  me = this_image()
  np = num_images()
  j = mod(me, np) + 1                     ! the next image
  ! Each image allocates its components alone, with its own size.
  allocate(x%a(me + 4), x%s, x%us(3))
  x%n = me
  x%a = [(100 * me + i, i = 1, me + 4)]
  x%s = 1000 * me
  x%b = reshape([(real(10 * me + i), i = 1, 20)], [4, 5])
  do i = 1, 3
    x%us(i)%k = me * 10 + i
    x%us(i)%w = [real(me), real(-i)]
  end do
  allocate(y[*])
  allocate(y%a(2))
  y%a = 0
  allocate(z%p(3))
  z%p = [1.0, 2.0, 3.0] * me
  allocate(character(len=5) :: z%str)
  z%str = 'str' // achar(48 + me) // '.'
  sync all

  ! Gets through components.
  k = x[j]%n
  call check(k == j, 'x[j]%n')
  v = x[j]%a(1:3)
  call check(all(v == [(100.0 * j + i, i = 1, 3)]), 'x[j]%a(1:3)')
  v = x[j]%a(1:5:2)
  call check(all(v == [100.0 * j + 1, 100.0 * j + 3, 100.0 * j + 5]), 'x[j]%a(1:5:2)')
  b2 = x[j]%a(::j + 3)                    ! FULL with a stride: elements 1 and j + 4
  call check(all(b2 == [100.0 * j + 1, 100.0 * j + j + 4]), 'x[j]%a(::n)')
  b2 = x[j]%a(::-(j + 3))                 ! and a negative one: j + 4, then 1
  call check(all(b2 == [100.0 * j + j + 4, 100.0 * j + 1]), 'x[j]%a(::-n)')
  whole = x[j]%a
  call check(size(whole) == j + 4, 'size of x[j]%a')
  call check(all(whole == [(100.0 * j + i, i = 1, j + 4)]), 'x[j]%a whole')
  k = x[j]%s
  call check(k == 1000 * j, 'x[j]%s')
  b2 = x[j]%b(2:3, 4)
  call check(all(b2 == [10.0 * j + 14, 10.0 * j + 15]), 'x[j]%b(2:3,4)')
  col = x[j]%b(:, 5)
  call check(all(col == [(10.0 * j + 16 + i, i = 1, 4)]), 'x[j]%b(:,5)')
  v = x[j]%b(1, 2:4)
  call check(all(v == [10.0 * j + 5, 10.0 * j + 9, 10.0 * j + 13]), 'x[j]%b(1,2:4)')
  bj = x[j]%b
  call check(all(bj == reshape([(real(10 * j + i), i = 1, 20)], [4, 5])), 'x[j]%b whole')
  k = x[j]%us(2)%k
  call check(k == 10 * j + 2, 'x[j]%us(2)%k')
  b2 = x[j]%us(3)%w
  call check(all(b2 == [real(j), -3.0]), 'x[j]%us(3)%w')
  r = x[j]%a(j + 4)
  call check(r == 100.0 * j + j + 4, 'x[j]%a(last)')
  ok = allocated(x[j]%a)
  call check(ok, 'allocated(x[j]%a)')
  b2 = z[j]%p(2:3)
  call check(all(b2 == [2.0 * j, 3.0 * j]), 'z[j]%p(2:3)')
  str = z[j]%str
  call check(str == 'str' // achar(48 + j) // '.', 'z[j]%str')
  sync all

  ! Puts through components: each image writes into the next one's.
  x[j]%a(2) = -1.0 * me
  x[j]%s = -me
  x[j]%b(:, 5) = [(-real(me * i), i = 1, 4)]
  x[j]%us(1)%w(2) = 0.5 * me
  ! Get-put: y of the next image gets two elements of x of the one after it.
  y[j]%a(1:2) = x[mod(j, np) + 1]%a(3:4)
  z[j]%p(1) = -me
  str = 'from' // achar(48 + me)
  z[j]%str = str                          ! from a variable: gfortran 12 passes its length
  sync all
  i = me - 1
  if (i == 0) i = np                      ! the image that wrote here
  call check(x%a(2) == -1.0 * i, 'put x[j]%a(2)')
  call check(x%s == -i, 'put x[j]%s')
  call check(all(x%b(:, 5) == [(-real(i * k), k = 1, 4)]), 'put x[j]%b(:,5)')
  call check(all(x%us(1)%w == [real(me), 0.5 * i]), 'put x[j]%us(1)%w(2)')
  k = mod(me, np) + 1
  call check(all(y%a == [100.0 * k + 3, 100.0 * k + 4]), 'get-put y[j]%a(1:2)')
  call check(z%p(1) == -i .and. z%p(2) == 2.0 * me, 'put z[j]%p(1)')
  call check(z%str == 'from' // achar(48 + i), 'put z[j]%str')

  ! Deallocate on one image; the others see it unallocated, then reallocated with another size.
  sync all
  if (me == np) deallocate(x%a)
  sync all
  ok = allocated(x[np]%a)
  call check(.not. ok, 'allocated(x[np]%a) after deallocate')
  sync all
  if (me == np) then
    allocate(x%a(2))
    x%a = [7.0, 8.0]
  end if
  sync all
  whole = x[np]%a
  call check(size(whole) == 2 .and. all(whole == [7.0, 8.0]), 'x[np]%a reallocated')
  sync all
  deallocate(y)

  ! Nested: allocated on every image (a different size on each), read through two components.
  allocate(q%in%arr(4 + me))
  q%in%arr = [(100 * me + k, k = 1, 4 + me)]
  sync all
  j = mod(me, np) + 1
  whole = q[j]%in%arr(2:4)
  call check(size(whole) == 3 .and. all(whole == [(100 * j + k, k = 2, 4)]), 'q[j]%in%arr(2:4)')
  call check(size(q[j]%in%arr) == 4 + j, 'size(q[j]%in%arr)')
  sync all
  deallocate(q%in%arr)
  allocate(q%in%arr(2))
  q%in%arr = [-me, me]
  sync all
  whole = q[j]%in%arr
  call check(all(whole == [-j, j]), 'q[j]%in%arr reallocated')
  sync all

  if (me == 1) then
    write(*, '(a, i0, a)') 'components: ', np, ' images agree'
    write(*, '(a)') 'Test passed.'
  end if

contains

  include 'check.inc'
end program
