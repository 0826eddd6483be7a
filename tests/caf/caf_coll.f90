! caf_coll.f90 — collective subroutines: CO_SUM, CO_MIN, CO_MAX (integer, real, complex,
! character; scalars and arrays, strided actual arguments, RESULT_IMAGE=, STAT=), CO_BROADCAST
! (arrays and a derived type), CO_REDUCE with a user function.  Expected values are computed
! in closed form from the image numbers.
program caf_coll
  implicit none
  type :: rec
    integer :: id
    real(8) :: w(3)
    character(len=4) :: tag
  end type
  integer :: me, n, i, st, iv, ia(5), strided(10)
  integer(8) :: i8
  real(8) :: rv, ra(4)
  real(4) :: r4
  complex(8) :: z
  character(len=5) :: word
  type(rec) :: r
  character(len=64) :: msg

  me = this_image(); n = num_images()

  ! ---- CO_SUM
  iv = me
  call co_sum(iv)
  if (iv /= n * (n + 1) / 2) error stop 'co_sum integer scalar'
  ia = [(me * i, i = 1, 5)]
  call co_sum(ia, stat=st)
  if (st /= 0) error stop 'co_sum stat'
  if (any(ia /= [(i * n * (n + 1) / 2, i = 1, 5)])) error stop 'co_sum integer array'
  i8 = 2_8**40 + me
  call co_sum(i8)
  if (i8 /= n * 2_8**40 + n * (n + 1) / 2) error stop 'co_sum integer(8)'
  ra = [(real(me, 8) / i, i = 1, 4)]
  call co_sum(ra)
  if (any(abs(ra - [(real(n * (n + 1) / 2, 8) / i, i = 1, 4)]) > 1d-12)) error stop 'co_sum real(8) array'
  r4 = 0.5 * me
  call co_sum(r4)
  if (abs(r4 - 0.25 * n * (n + 1)) > 1e-5) error stop 'co_sum real(4)'
  z = cmplx(me, -2 * me, 8)
  call co_sum(z)
  if (z /= cmplx(n * (n + 1) / 2, -n * (n + 1), 8)) error stop 'co_sum complex'
  ! a strided actual argument: only its elements take part, the gaps stay untouched
  strided = -7
  strided(1:10:3) = me
  call co_sum(strided(1:10:3))
  if (any(strided(1:10:3) /= n * (n + 1) / 2)) error stop 'co_sum strided argument'
  if (any(strided([2, 3, 5, 6, 8, 9]) /= -7)) error stop 'co_sum strided argument: gaps written'
  ! RESULT_IMAGE: only that image must hold the result
  iv = 10 * me
  call co_sum(iv, result_image=n)
  if (me == n .and. iv /= 10 * n * (n + 1) / 2) error stop 'co_sum result_image'

  ! ---- CO_MIN / CO_MAX
  iv = 100 - me
  call co_min(iv)
  if (iv /= 100 - n) error stop 'co_min integer'
  rv = real(me, 8) * merge(-1d0, 1d0, mod(me, 2) == 0)
  call co_max(rv)
  if (rv /= real(n - merge(1, 0, mod(n, 2) == 0), 8)) error stop 'co_max real'
  ia = [(merge(me, -me, mod(i, 2) == 0), i = 1, 5)]
  call co_max(ia)
  if (any(ia /= [(merge(n, -1, mod(i, 2) == 0), i = 1, 5)])) error stop 'co_max integer array'
  call co_min(ia, result_image=1)
  if (me == 1 .and. any(ia /= [(merge(n, -1, mod(i, 2) == 0), i = 1, 5)])) error stop 'co_min result_image'
  write (word, '(a,i1)') 'img', me
  call co_max(word)
  if (word /= 'img' // achar(48 + n)) error stop 'co_max character'
  write (word, '(a,i1)') 'img', me
  call co_min(word)
  if (word /= 'img1') error stop 'co_min character'

  ! ---- CO_BROADCAST
  ia = me
  call co_broadcast(ia, source_image=n)
  if (any(ia /= n)) error stop 'co_broadcast integer array'
  r = rec(me, [real(me, 8), 2d0 * me, 3d0 * me], 'r' // achar(48 + me))
  call co_broadcast(r, source_image=1)
  if (r%id /= 1 .or. any(r%w /= [1d0, 2d0, 3d0]) .or. r%tag /= 'r1') error stop 'co_broadcast derived type'
  ra = real(me, 8)
  call co_broadcast(ra(2:4:2), 2)
  if (any(ra(2:4:2) /= 2d0) .or. ra(1) /= me .or. ra(3) /= me) error stop 'co_broadcast strided'

  ! ---- CO_REDUCE with a user operation
  iv = me
  call co_reduce(iv, imul)
  if (iv /= product([(i, i = 1, n)])) error stop 'co_reduce integer product'
  rv = real(me, 8)
  call co_reduce(rv, rmax)
  if (rv /= n) error stop 'co_reduce real max'

  ! ---- a big argument: it moves in several rounds through the fixed scratch slots
  block
    integer, allocatable :: huge_arr(:)
    allocate(huge_arr(300000))
    huge_arr = me
    call co_sum(huge_arr)
    if (any(huge_arr /= n * (n + 1) / 2)) error stop 'co_sum large array'
  end block

  ! ---- a bad RESULT_IMAGE is reported through STAT= (gfortran 12 passes ERRMSG= of CO_* by
  !      value, so the library cannot set it; it must at least not crash on it)
  msg = 'unchanged'
  call co_sum(iv, result_image=n + 1, stat=st, errmsg=msg)
  if (st == 0) error stop 'co_sum with a bad result_image must fail'
  if (msg /= 'unchanged') error stop 'errmsg of a by-value CO_* argument changed?'

  sync all
  if (me == 1) print '(a,i0,a)', 'caf_coll: ', n, ' images ok'
contains
  pure function imul(a, b) result(c)
    integer, intent(in) :: a, b
    integer :: c
    c = a * b
  end function
  pure function rmax(a, b) result(c)
    real(8), intent(in) :: a, b
    real(8) :: c
    c = max(a, b)
  end function
end program caf_coll
