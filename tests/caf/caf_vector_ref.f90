! Vector subscripts in references gfortran sends through the *_by_ref calls: into an allocatable
! variable (c(v)[i] reshapes it), through allocatable components (x[i]%a(v), x[i]%m(1:2, v)),
! as the target of an assignment (x[i]%a(v) = ...) and on both sides of a get-put.
program caf_vector_ref
  implicit none
  type t
    real, allocatable :: a(:)
    integer, allocatable :: m(:, :)
  end type
  type(t) :: x[*]
  real, allocatable :: c(:)[:], w(:)
  integer, allocatable :: mm(:, :)
  real :: f(3)
  integer :: idx(3) = [4, 1, 3], cols(2) = [3, 1]
  integer :: me, np, j, k, i

  me = this_image()
  np = num_images()
  j = mod(me, np) + 1
  k = mod(j, np) + 1
  allocate(c(5)[*])
  c = [(10.0 * me + i, i = 1, 5)]
  allocate(x%a(6), x%m(2, 3))
  x%a = [(100.0 * me + i, i = 1, 6)]
  x%m = reshape([(1000 * me + i, i = 1, 6)], [2, 3])
  sync all

  w = c(idx)[j]                           ! get_by_ref into an allocatable, vector subscript
  call check(size(w) == 3 .and. all(w == 10.0 * j + idx), 'w = c(idx)[j]')
  f = x[j]%a(idx)
  call check(all(f == 100.0 * j + idx), 'x[j]%a(idx)')
  mm = x[j]%m(:, cols)
  call check(all(shape(mm) == [2, 2]), 'shape of x[j]%m(:, cols)')
  call check(all(mm(:, 1) == 1000 * j + [5, 6]) .and. all(mm(:, 2) == 1000 * j + [1, 2]), &
             'x[j]%m(:, cols)')
  i = x[j]%m(2, cols(1))
  call check(i == 1000 * j + 6, 'x[j]%m(2, cols(1))')
  sync all

  x[j]%a(idx) = -[1.0, 2.0, 3.0] * me     ! send_by_ref, vector subscript
  sync all
  i = me - 1
  if (i == 0) i = np
  call check(x%a(4) == -1.0 * i .and. x%a(1) == -2.0 * i .and. x%a(3) == -3.0 * i, &
             'x[j]%a(idx) = ...')
  call check(x%a(2) == 100.0 * me + 2 .and. x%a(5) == 100.0 * me + 5, 'untouched elements')
  sync all

  ! sendget_by_ref, vectors on both sides; a(2:3) are not written in this segment.
  x[j]%a([6, 5]) = x[k]%a([2, 3])
  sync all
  ! Written by image i from image me + 1 = j, whose a(3) image me set to -3 * me above.
  call check(x%a(6) == 100.0 * j + 2 .and. x%a(5) == -3.0 * me, 'x[j]%a(v) = x[k]%a(u)')
  sync all
  if (me == 1) then
    write(*, '(a, i0, a)') 'vector subscripts by reference: ', np, ' images agree'
    write(*, '(a)') 'Test passed.'
  end if

contains

  include 'check.inc'
end program
