! caf_co_reduce.f90 — CO_REDUCE with user operations on every operand type libcaf_rmx can call:
! integer of kind 1, 2, 4, 8, 16 and logical of kind 1, 2, 4, 8 (arguments by reference and by
! VALUE), real and complex of kind 4 and 8, character of kind 1 and 4 (fixed and assumed
! length: the hidden lengths), a derived type (returned in memory), scalars, arrays and strided
! sections, RESULT_IMAGE=, STAT=, arguments spanning several scratch slots; and CO_SUM, CO_MIN,
! CO_MAX for every integer kind, real and complex of kind 4 and 8, character of kind 1 and 4
! (also with ERRMSG=, which gfortran passes by value and so moves A's length around).  Expected
! values are in closed form from the image numbers; OpenCoarrays' co_reduce, co_reduce_res_im and
! co_reduce_string give the same answers where it supports the type.
module caf_co_reduce_ops
  implicit none
  integer, parameter :: strlen = 6
  type stats_t ! 24 bytes: returned in memory
    integer :: count
    real(8) :: total
    real(8) :: biggest
  end type
  type pair_t ! 16 bytes: returned in registers chosen by its components
    integer :: a
    real(8) :: b
  end type
contains
  pure integer(1) function add1(a, b)
    integer(1), intent(in) :: a, b
    add1 = a + b
  end function
  pure integer(2) function mul2(a, b)
    integer(2), intent(in) :: a, b
    mul2 = a * b
  end function
  pure integer(4) function max4v(a, b)
    integer(4), value :: a, b
    max4v = max(a, b)
  end function
  pure integer(8) function add8v(a, b)
    integer(8), value :: a, b
    add8v = a + b
  end function
  pure integer(16) function mul16(a, b)
    integer(16), intent(in) :: a, b
    mul16 = a * b
  end function
  pure logical(1) function and1(a, b)
    logical(1), intent(in) :: a, b
    and1 = a .and. b
  end function
  pure logical(2) function or2v(a, b)
    logical(2), value :: a, b
    or2v = a .or. b
  end function
  pure logical(4) function neqv4(a, b)
    logical(4), intent(in) :: a, b
    neqv4 = a .neqv. b
  end function
  pure logical(8) function and8(a, b)
    logical(8), intent(in) :: a, b
    and8 = a .and. b
  end function
  pure real(4) function min4(a, b)
    real(4), intent(in) :: a, b
    min4 = min(a, b)
  end function
  pure real(8) function add8r_v(a, b)
    real(8), value :: a, b
    add8r_v = a + b
  end function
  pure complex(4) function cmul4(a, b)
    complex(4), intent(in) :: a, b
    cmul4 = a * b
  end function
  pure complex(8) function cadd8v(a, b)
    complex(8), value :: a, b
    cadd8v = a + b
  end function
  pure function strmax(lhs, rhs) result(m)
    character(len=strlen), intent(in) :: lhs, rhs
    character(len=strlen) :: m
    m = merge(lhs, rhs, lhs > rhs)
  end function
  pure function strmin_any(lhs, rhs) result(m)
    character(len=*), intent(in) :: lhs, rhs
    character(len=len(lhs)) :: m
    m = merge(lhs, rhs, lhs < rhs)
  end function
  pure function wmax(lhs, rhs) result(m)
    character(len=3, kind=4), intent(in) :: lhs, rhs
    character(len=3, kind=4) :: m
    m = merge(lhs, rhs, lhs > rhs)
  end function
  pure function cmaxv(lhs, rhs) result(m)
    character(len=1), value :: lhs, rhs
    character(len=1) :: m
    m = max(lhs, rhs)
  end function
  pure function wminv(lhs, rhs) result(m)
    character(len=1, kind=4), value :: lhs, rhs
    character(len=1, kind=4) :: m
    m = min(lhs, rhs)
  end function
  pure function combine(x, y) result(z)
    type(stats_t), intent(in) :: x, y
    type(stats_t) :: z
    z = stats_t(x%count + y%count, x%total + y%total, max(x%biggest, y%biggest))
  end function
  pure function pair_add(x, y) result(z)
    type(pair_t), intent(in) :: x, y
    type(pair_t) :: z
    z = pair_t(x%a + y%a, x%b + y%b)
  end function
  pure integer function iadd(a, b)
    integer, intent(in) :: a, b
    iadd = a + b
  end function
end module caf_co_reduce_ops

program caf_co_reduce
  use caf_co_reduce_ops
  implicit none
  integer :: me, n, i, st, tri, ia(7)
  integer(1) :: i1
  integer(2) :: i2(3)
  integer(4) :: i4
  integer(8) :: i8
  integer(16) :: i16
  logical(1) :: l1
  logical(2) :: l2(2)
  logical(4) :: l4
  logical(8) :: l8
  real(4) :: r4(3)
  real(8) :: r8
  complex(4) :: z4
  complex(8) :: z8(2)
  character(len=strlen), allocatable :: strarr(:)
  character(len=strlen) :: expect
  character(len=10) :: word
  character(len=3, kind=4) :: wide, wides(2)
  character(len=1) :: ch(2)
  character(len=1, kind=4) :: wch
  type(stats_t) :: s(2)
  type(pair_t) :: p
  integer, allocatable :: many(:)
  character(len=5) :: msg5
  character(len=12) :: msg12
  character(len=40) :: msg40

  me = this_image(); n = num_images(); tri = n * (n + 1) / 2

  ! ---- integers of every kind
  i1 = int(me, 1)
  call co_reduce(i1, add1)
  if (i1 /= tri) error stop 'integer(1) by reference'
  i2 = [int(me, 2), 2_2, -1_2]
  call co_reduce(i2, mul2)
  if (any(i2 /= [int(product([(i, i = 1, n)]), 2), int(2**n, 2), int((-1)**n, 2)])) error stop 'integer(2) array'
  i4 = 100 - me
  call co_reduce(i4, max4v, result_image=n, stat=st)
  if (st /= 0) error stop 'integer(4) value: stat'
  if (me == n .and. i4 /= 99) error stop 'integer(4) by value, result_image'
  i8 = 2_8**40 * me
  call co_reduce(i8, add8v)
  if (i8 /= 2_8**40 * tri) error stop 'integer(8) by value'
  i16 = 2_16**20 * me
  call co_reduce(i16, mul16)
  if (i16 /= 2_16**(20 * n) * product([(int(i, 16), i = 1, n)])) error stop 'integer(16)'
  if (me == 1) print '(a,i0,1x,3(i0,1x),i0,1x,i0,1x,i0)', 'integer: ', i1, i2, i8 / 2_8**40, &
                     int(i16 / 2_16**(20 * n))

  ! ---- logicals of every kind
  l1 = logical(me /= 2, 1)
  call co_reduce(l1, and1)
  if (l1 .neqv. (n < 2)) error stop 'logical(1)'
  l2(1) = logical(me == n, 2)
  l2(2) = .false._2
  call co_reduce(l2, or2v)
  if (.not. l2(1) .or. l2(2)) error stop 'logical(2) by value'
  l4 = .true.
  call co_reduce(l4, neqv4)
  if (l4 .neqv. (mod(n, 2) == 1)) error stop 'logical(4)'
  l8 = .true.
  call co_reduce(l8, and8, result_image=1)
  if (me == 1 .and. .not. l8) error stop 'logical(8) result_image'

  ! ---- reals and complexes
  r4 = [real(me), -real(me), 0.5]
  call co_reduce(r4(3:1:-2), min4) ! a section with a negative stride
  if (any(r4 /= [1., -real(me), 0.5])) error stop 'real(4) section'
  r8 = 0.25d0 * me
  call co_reduce(r8, add8r_v)
  if (r8 /= 0.25d0 * tri) error stop 'real(8) by value'
  z4 = (0., 1.)
  call co_reduce(z4, cmul4)
  if (z4 /= (0., 1.)**n) error stop 'complex(4)'
  z8 = [cmplx(me, -me, 8), (1d0, 1d0)]
  call co_reduce(z8, cadd8v)
  if (any(z8 /= [cmplx(tri, -tri, 8), cmplx(n, n, 8)])) error stop 'complex(8) by value'
  if (me == 1) print '(a,3f6.2,f7.3,4f5.1)', 'real: ', r4, r8, z8

  ! ---- character: OpenCoarrays' co_reduce_string, then assumed length and kind 4
  allocate(strarr(10))
  do i = 1, 10
    write (strarr(i), "('foo',i2.2)") i * me
  end do
  call co_reduce(strarr, strmax)
  do i = 1, 10
    write (expect, "('foo',i2.2)") i * n
    if (strarr(i) /= expect) error stop 'character array, fixed length'
  end do
  write (word, '(a,i0)') 'zz-image-', me
  call co_reduce(word, strmin_any, result_image=2)
  if (me == 2 .and. word /= 'zz-image-1') error stop 'character, assumed length'
  wide = 4_'k' // char(int(z'4E00') + 7 * mod(me, 3), kind=4) // 4_'!'
  call co_reduce(wide, wmax)
  if (wide /= 4_'k' // char(int(z'4E00') + 7 * maxval([(mod(i, 3), i = 1, n)]), kind=4) // 4_'!') error stop 'character kind 4'
  ch = [achar(64 + me), achar(100 - me)]
  call co_reduce(ch, cmaxv)
  if (ch(1) /= achar(64 + n) .or. ch(2) /= achar(99)) error stop 'character(1) by value'
  wch = char(int(z'3000') + 255 * me, kind=4)
  call co_reduce(wch, wminv, result_image=n)
  if (me == n .and. wch /= char(int(z'3000') + 255, kind=4)) error stop 'character(1, kind 4) by value'
  if (me == 1) print '(a,4(1x,a))', 'character:', strarr(1), strarr(10), ch

  ! ---- a derived type (returned through memory)
  s = [stats_t(1, real(me, 8), real(me, 8)), stats_t(2, -1d0, -real(me, 8))]
  call co_reduce(s, combine)
  if (s(1)%count /= n .or. s(1)%total /= tri .or. s(1)%biggest /= n) error stop 'derived type (1)'
  if (s(2)%count /= 2 * n .or. s(2)%total /= -n .or. s(2)%biggest /= -1) error stop 'derived type (2)'
  if (me == 1) print '(a,2(1x,i0,2f6.1))', 'derived:', s
  ! one returned in registers the runtime cannot tell: refused through STAT=, never a wrong answer
  p = pair_t(me, 1d0)
  call co_reduce(p, pair_add, stat=st)
  if (st == 0 .and. (p%a /= tri .or. p%b /= n)) error stop 'small derived type: wrong answer'

  ! ---- CO_SUM, CO_MIN, CO_MAX of the other kinds
  i1 = int(me, 1); call co_sum(i1)
  i2 = int(-me, 2); call co_min(i2)
  i16 = 2_16**100 + me; call co_max(i16)
  if (i1 /= tri .or. any(i2 /= -n) .or. i16 /= 2_16**100 + n) error stop 'co_sum/min/max integer kinds'
  z4 = cmplx(me, 1, 4); call co_sum(z4, result_image=1)
  if (me == 1 .and. z4 /= cmplx(tri, n, 4)) error stop 'co_sum complex(4)'
  r4 = [real(me), 2., -real(me)]; call co_max(r4)
  if (any(r4 /= [real(n), 2., -1.])) error stop 'co_max real(4) array'
  wides = [4_'ab' // char(int(z'3000') + 255 * me, kind=4), 4_'zz' // char(int(z'3042') - me, kind=4)]
  call co_max(wides)
  if (wides(1) /= 4_'ab' // char(int(z'3000') + 255 * n, kind=4)) error stop 'co_max character kind 4'
  if (wides(2) /= 4_'zz' // char(int(z'3042') - 1, kind=4)) error stop 'co_max character kind 4 (2)'
  ! (code points 255 apart: their low bytes fall while they rise, so byte order would be wrong)
  ! ERRMSG= (passed by value) with lengths in each of the three ABI cases: A's kind is still
  ! found, and ERRMSG stays as it was (nothing can reach the caller)
  msg5 = 'x'; msg12 = 'y'; msg40 = 'z'
  wide = 4_'m' // char(int(z'3000') + 255 * me, kind=4) // 4_'m'
  call co_min(wide, stat=st, errmsg=msg5)
  if (st /= 0 .or. wide /= 4_'m' // char(int(z'3000') + 255, kind=4) // 4_'m') error stop 'co_min kind 4, short errmsg'
  wide = 4_'m' // char(int(z'3000') + 255 * me, kind=4) // 4_'m'
  call co_max(wide, stat=st, errmsg=msg12)
  if (st /= 0 .or. wide /= 4_'m' // char(int(z'3000') + 255 * n, kind=4) // 4_'m') error stop 'co_max kind 4, errmsg of 12'
  wide = 4_'m' // char(int(z'3000') + 255 * me, kind=4) // 4_'m'
  call co_reduce(wide, wmax, stat=st, errmsg=msg40)
  if (st /= 0 .or. wide /= 4_'m' // char(int(z'3000') + 255 * n, kind=4) // 4_'m') error stop 'co_reduce kind 4, long errmsg'
  write (word, '(a,i0)') 'zz-image-', me
  call co_reduce(word, strmin_any, stat=st, errmsg=msg12)
  if (st /= 0 .or. word /= 'zz-image-1') error stop 'co_reduce assumed length, errmsg of 12'
  if (msg5 /= 'x' .or. msg12 /= 'y' .or. msg40 /= 'z') error stop 'ERRMSG changed'

  ! ---- arguments spanning several scratch slots, whole and strided
  allocate(many(700000))
  many = [(mod(i, 1000) + me, i = 1, size(many))]
  call co_reduce(many, iadd)
  do i = 1, size(many), 9973
    if (many(i) /= n * mod(i, 1000) + tri) error stop 'large co_reduce'
  end do
  if (many(size(many)) /= tri) error stop 'large co_reduce: last element'
  many = me
  call co_reduce(many(2::3), iadd, result_image=n)
  if (me == n .and. (any(many(2::3) /= tri) .or. any(many(1::3) /= me))) error stop 'large strided co_reduce'

  ! ---- a bad RESULT_IMAGE is reported through STAT=
  ia = me
  call co_reduce(ia, iadd, result_image=0 - 1, stat=st)
  if (st == 0) error stop 'co_reduce with a bad result_image must fail'

  sync all
  if (me == 1) print '(a)', 'Test passed.'
end program caf_co_reduce
