! caf_convert.f90 — type and kind conversion in coindexed assignment, every pair of numeric
! kinds: integer 1, 2, 4, 8, 16; real and complex 4, 8, 10, 16 (real(16) is IEEE binary128);
! every pair of logical kinds 1, 2, 4, 8, 16.
! Each pair goes through send (x(:)[i] = y), get (y = x(:)[i]) and sendget (x(:)[i] = z(:)[j]),
! and a few through scalars and strided or reversed sections.  The expected value of every
! element is gfortran's own conversion of the same source on this image (every image holds the
! same sources), so a value rounded twice or truncated differently is caught.  Then character
! kind 1 <-> kind 4 with blank padding and truncation, and a kind-4 code above 255 ('?').
! (One statement per pair and entry point: kinds are fixed at compile time.)
program caf_convert
  implicit none
  integer, parameter :: n = 4, np = 13
  integer(1) :: si1(n)[*], di1(n, np)[*], li1(n)
  integer(2) :: si2(n)[*], di2(n, np)[*], li2(n)
  integer(4) :: si4(n)[*], di4(n, np)[*], li4(n)
  integer(8) :: si8(n)[*], di8(n, np)[*], li8(n)
  integer(16) :: si16(n)[*], di16(n, np)[*], li16(n)
  real(4) :: sr4(n)[*], dr4(n, np)[*], lr4(n)
  real(8) :: sr8(n)[*], dr8(n, np)[*], lr8(n)
  real(10) :: sr10(n)[*], dr10(n, np)[*], lr10(n)
  real(16) :: sr16(n)[*], dr16(n, np)[*], lr16(n)
  complex(4) :: sc4(n)[*], dc4(n, np)[*], lc4(n)
  complex(8) :: sc8(n)[*], dc8(n, np)[*], lc8(n)
  complex(10) :: sc10(n)[*], dc10(n, np)[*], lc10(n)
  complex(16) :: sc16(n)[*], dc16(n, np)[*], lc16(n)
  logical(1) :: sl1(n)[*], dl1(n, np)[*], ll1(n)
  logical(2) :: sl2(n)[*], dl2(n, np)[*], ll2(n)
  logical(4) :: sl4(n)[*], dl4(n, np)[*], ll4(n)
  logical(8) :: sl8(n)[*], dl8(n, np)[*], ll8(n)
  logical(16) :: sl16(n)[*], dl16(n, np)[*], ll16(n)
  integer :: me, right, left
  character(len=3, kind=1) :: a3[*]
  character(len=5, kind=1) :: a5[*], a5l
  character(len=2, kind=1) :: a2[*]
  character(len=3, kind=4) :: u3[*], u3l
  character(len=5, kind=4) :: u5[*], u5l
  character(len=2, kind=4) :: u2[*]
  character(len=3, kind=1) :: aa(3)[*]
  character(len=4, kind=4) :: uu(3)[*], uul(3)
  character(len=12, kind=1) :: nm[*], ww(4)[*]
  character(len=5, kind=1) :: sub5
  character(len=3, kind=1) :: sub3
  character(len=12, kind=1) :: held
  real(16) :: q

  me = this_image()
  right = 1 + mod(me, num_images()); left = 1 + mod(me - 2 + num_images(), num_images())
  ! the same sources on every image: integers that fit every kind, reals with a fraction
  ! (truncated toward zero into integers) and ones no binary format holds exactly (rounded)
  q = 1.0_16 / 3
  si16 = [-100_16, 0_16, 7_16, 127_16]
  sr16 = [-2.75_16, 0.5_16, q, 100.25_16]
  sc16 = [cmplx(-2.75_16, 1.5_16, 16), cmplx(q, -q, 16), cmplx(7, 0, 16), cmplx(100.25_16, 2 * q, 16)]
  si1 = int(si16, 1)
  si2 = int(si16, 2)
  si4 = int(si16, 4)
  si8 = int(si16, 8)
  sr4 = real(sr16, 4)
  sr8 = real(sr16, 8)
  sr10 = real(sr16, 10)
  sc4 = cmplx(sc16, kind=4)
  sc8 = cmplx(sc16, kind=8)
  sc10 = cmplx(sc16, kind=10)
  sl16 = [.true._16, .false._16, .true._16, .true._16]
  sl1 = logical(sl16, 1)
  sl2 = logical(sl16, 2)
  sl4 = logical(sl16, 4)
  sl8 = logical(sl16, 8)
  li1 = si1
  li2 = si2
  li4 = si4
  li8 = si8
  li16 = si16
  lr4 = sr4
  lr8 = sr8
  lr10 = sr10
  lr16 = sr16
  lc4 = sc4
  lc8 = sc8
  lc10 = sc10
  lc16 = sc16
  ll1 = sl1
  ll2 = sl2
  ll4 = sl4
  ll8 = sl8
  ll16 = sl16
  sync all

  ! ---- send: d<kind>(:, j)[right] = <source kind j>
  di1(:, 1)[right] = li1
  di1(:, 2)[right] = li2
  di1(:, 3)[right] = li4
  di1(:, 4)[right] = li8
  di1(:, 5)[right] = li16
  di1(:, 6)[right] = lr4
  di1(:, 7)[right] = lr8
  di1(:, 8)[right] = lr10
  di1(:, 9)[right] = lr16
  di1(:, 10)[right] = lc4
  di1(:, 11)[right] = lc8
  di1(:, 12)[right] = lc10
  di1(:, 13)[right] = lc16
  di2(:, 1)[right] = li1
  di2(:, 2)[right] = li2
  di2(:, 3)[right] = li4
  di2(:, 4)[right] = li8
  di2(:, 5)[right] = li16
  di2(:, 6)[right] = lr4
  di2(:, 7)[right] = lr8
  di2(:, 8)[right] = lr10
  di2(:, 9)[right] = lr16
  di2(:, 10)[right] = lc4
  di2(:, 11)[right] = lc8
  di2(:, 12)[right] = lc10
  di2(:, 13)[right] = lc16
  di4(:, 1)[right] = li1
  di4(:, 2)[right] = li2
  di4(:, 3)[right] = li4
  di4(:, 4)[right] = li8
  di4(:, 5)[right] = li16
  di4(:, 6)[right] = lr4
  di4(:, 7)[right] = lr8
  di4(:, 8)[right] = lr10
  di4(:, 9)[right] = lr16
  di4(:, 10)[right] = lc4
  di4(:, 11)[right] = lc8
  di4(:, 12)[right] = lc10
  di4(:, 13)[right] = lc16
  di8(:, 1)[right] = li1
  di8(:, 2)[right] = li2
  di8(:, 3)[right] = li4
  di8(:, 4)[right] = li8
  di8(:, 5)[right] = li16
  di8(:, 6)[right] = lr4
  di8(:, 7)[right] = lr8
  di8(:, 8)[right] = lr10
  di8(:, 9)[right] = lr16
  di8(:, 10)[right] = lc4
  di8(:, 11)[right] = lc8
  di8(:, 12)[right] = lc10
  di8(:, 13)[right] = lc16
  di16(:, 1)[right] = li1
  di16(:, 2)[right] = li2
  di16(:, 3)[right] = li4
  di16(:, 4)[right] = li8
  di16(:, 5)[right] = li16
  di16(:, 6)[right] = lr4
  di16(:, 7)[right] = lr8
  di16(:, 8)[right] = lr10
  di16(:, 9)[right] = lr16
  di16(:, 10)[right] = lc4
  di16(:, 11)[right] = lc8
  di16(:, 12)[right] = lc10
  di16(:, 13)[right] = lc16
  dr4(:, 1)[right] = li1
  dr4(:, 2)[right] = li2
  dr4(:, 3)[right] = li4
  dr4(:, 4)[right] = li8
  dr4(:, 5)[right] = li16
  dr4(:, 6)[right] = lr4
  dr4(:, 7)[right] = lr8
  dr4(:, 8)[right] = lr10
  dr4(:, 9)[right] = lr16
  dr4(:, 10)[right] = lc4
  dr4(:, 11)[right] = lc8
  dr4(:, 12)[right] = lc10
  dr4(:, 13)[right] = lc16
  dr8(:, 1)[right] = li1
  dr8(:, 2)[right] = li2
  dr8(:, 3)[right] = li4
  dr8(:, 4)[right] = li8
  dr8(:, 5)[right] = li16
  dr8(:, 6)[right] = lr4
  dr8(:, 7)[right] = lr8
  dr8(:, 8)[right] = lr10
  dr8(:, 9)[right] = lr16
  dr8(:, 10)[right] = lc4
  dr8(:, 11)[right] = lc8
  dr8(:, 12)[right] = lc10
  dr8(:, 13)[right] = lc16
  dr10(:, 1)[right] = li1
  dr10(:, 2)[right] = li2
  dr10(:, 3)[right] = li4
  dr10(:, 4)[right] = li8
  dr10(:, 5)[right] = li16
  dr10(:, 6)[right] = lr4
  dr10(:, 7)[right] = lr8
  dr10(:, 8)[right] = lr10
  dr10(:, 9)[right] = lr16
  dr10(:, 10)[right] = lc4
  dr10(:, 11)[right] = lc8
  dr10(:, 12)[right] = lc10
  dr10(:, 13)[right] = lc16
  dr16(:, 1)[right] = li1
  dr16(:, 2)[right] = li2
  dr16(:, 3)[right] = li4
  dr16(:, 4)[right] = li8
  dr16(:, 5)[right] = li16
  dr16(:, 6)[right] = lr4
  dr16(:, 7)[right] = lr8
  dr16(:, 8)[right] = lr10
  dr16(:, 9)[right] = lr16
  dr16(:, 10)[right] = lc4
  dr16(:, 11)[right] = lc8
  dr16(:, 12)[right] = lc10
  dr16(:, 13)[right] = lc16
  dc4(:, 1)[right] = li1
  dc4(:, 2)[right] = li2
  dc4(:, 3)[right] = li4
  dc4(:, 4)[right] = li8
  dc4(:, 5)[right] = li16
  dc4(:, 6)[right] = lr4
  dc4(:, 7)[right] = lr8
  dc4(:, 8)[right] = lr10
  dc4(:, 9)[right] = lr16
  dc4(:, 10)[right] = lc4
  dc4(:, 11)[right] = lc8
  dc4(:, 12)[right] = lc10
  dc4(:, 13)[right] = lc16
  dc8(:, 1)[right] = li1
  dc8(:, 2)[right] = li2
  dc8(:, 3)[right] = li4
  dc8(:, 4)[right] = li8
  dc8(:, 5)[right] = li16
  dc8(:, 6)[right] = lr4
  dc8(:, 7)[right] = lr8
  dc8(:, 8)[right] = lr10
  dc8(:, 9)[right] = lr16
  dc8(:, 10)[right] = lc4
  dc8(:, 11)[right] = lc8
  dc8(:, 12)[right] = lc10
  dc8(:, 13)[right] = lc16
  dc10(:, 1)[right] = li1
  dc10(:, 2)[right] = li2
  dc10(:, 3)[right] = li4
  dc10(:, 4)[right] = li8
  dc10(:, 5)[right] = li16
  dc10(:, 6)[right] = lr4
  dc10(:, 7)[right] = lr8
  dc10(:, 8)[right] = lr10
  dc10(:, 9)[right] = lr16
  dc10(:, 10)[right] = lc4
  dc10(:, 11)[right] = lc8
  dc10(:, 12)[right] = lc10
  dc10(:, 13)[right] = lc16
  dc16(:, 1)[right] = li1
  dc16(:, 2)[right] = li2
  dc16(:, 3)[right] = li4
  dc16(:, 4)[right] = li8
  dc16(:, 5)[right] = li16
  dc16(:, 6)[right] = lr4
  dc16(:, 7)[right] = lr8
  dc16(:, 8)[right] = lr10
  dc16(:, 9)[right] = lr16
  dc16(:, 10)[right] = lc4
  dc16(:, 11)[right] = lc8
  dc16(:, 12)[right] = lc10
  dc16(:, 13)[right] = lc16
  sync all
  if (any(di1(:, 1) /= int(li1, 1))) error stop 'send integer(1) = integer(1)'
  if (any(di1(:, 2) /= int(li2, 1))) error stop 'send integer(1) = integer(2)'
  if (any(di1(:, 3) /= int(li4, 1))) error stop 'send integer(1) = integer(4)'
  if (any(di1(:, 4) /= int(li8, 1))) error stop 'send integer(1) = integer(8)'
  if (any(di1(:, 5) /= int(li16, 1))) error stop 'send integer(1) = integer(16)'
  if (any(di1(:, 6) /= int(lr4, 1))) error stop 'send integer(1) = real(4)'
  if (any(di1(:, 7) /= int(lr8, 1))) error stop 'send integer(1) = real(8)'
  if (any(di1(:, 8) /= int(lr10, 1))) error stop 'send integer(1) = real(10)'
  if (any(di1(:, 9) /= int(lr16, 1))) error stop 'send integer(1) = real(16)'
  if (any(di1(:, 10) /= int(lc4, 1))) error stop 'send integer(1) = complex(4)'
  if (any(di1(:, 11) /= int(lc8, 1))) error stop 'send integer(1) = complex(8)'
  if (any(di1(:, 12) /= int(lc10, 1))) error stop 'send integer(1) = complex(10)'
  if (any(di1(:, 13) /= int(lc16, 1))) error stop 'send integer(1) = complex(16)'
  if (any(di2(:, 1) /= int(li1, 2))) error stop 'send integer(2) = integer(1)'
  if (any(di2(:, 2) /= int(li2, 2))) error stop 'send integer(2) = integer(2)'
  if (any(di2(:, 3) /= int(li4, 2))) error stop 'send integer(2) = integer(4)'
  if (any(di2(:, 4) /= int(li8, 2))) error stop 'send integer(2) = integer(8)'
  if (any(di2(:, 5) /= int(li16, 2))) error stop 'send integer(2) = integer(16)'
  if (any(di2(:, 6) /= int(lr4, 2))) error stop 'send integer(2) = real(4)'
  if (any(di2(:, 7) /= int(lr8, 2))) error stop 'send integer(2) = real(8)'
  if (any(di2(:, 8) /= int(lr10, 2))) error stop 'send integer(2) = real(10)'
  if (any(di2(:, 9) /= int(lr16, 2))) error stop 'send integer(2) = real(16)'
  if (any(di2(:, 10) /= int(lc4, 2))) error stop 'send integer(2) = complex(4)'
  if (any(di2(:, 11) /= int(lc8, 2))) error stop 'send integer(2) = complex(8)'
  if (any(di2(:, 12) /= int(lc10, 2))) error stop 'send integer(2) = complex(10)'
  if (any(di2(:, 13) /= int(lc16, 2))) error stop 'send integer(2) = complex(16)'
  if (any(di4(:, 1) /= int(li1, 4))) error stop 'send integer(4) = integer(1)'
  if (any(di4(:, 2) /= int(li2, 4))) error stop 'send integer(4) = integer(2)'
  if (any(di4(:, 3) /= int(li4, 4))) error stop 'send integer(4) = integer(4)'
  if (any(di4(:, 4) /= int(li8, 4))) error stop 'send integer(4) = integer(8)'
  if (any(di4(:, 5) /= int(li16, 4))) error stop 'send integer(4) = integer(16)'
  if (any(di4(:, 6) /= int(lr4, 4))) error stop 'send integer(4) = real(4)'
  if (any(di4(:, 7) /= int(lr8, 4))) error stop 'send integer(4) = real(8)'
  if (any(di4(:, 8) /= int(lr10, 4))) error stop 'send integer(4) = real(10)'
  if (any(di4(:, 9) /= int(lr16, 4))) error stop 'send integer(4) = real(16)'
  if (any(di4(:, 10) /= int(lc4, 4))) error stop 'send integer(4) = complex(4)'
  if (any(di4(:, 11) /= int(lc8, 4))) error stop 'send integer(4) = complex(8)'
  if (any(di4(:, 12) /= int(lc10, 4))) error stop 'send integer(4) = complex(10)'
  if (any(di4(:, 13) /= int(lc16, 4))) error stop 'send integer(4) = complex(16)'
  if (any(di8(:, 1) /= int(li1, 8))) error stop 'send integer(8) = integer(1)'
  if (any(di8(:, 2) /= int(li2, 8))) error stop 'send integer(8) = integer(2)'
  if (any(di8(:, 3) /= int(li4, 8))) error stop 'send integer(8) = integer(4)'
  if (any(di8(:, 4) /= int(li8, 8))) error stop 'send integer(8) = integer(8)'
  if (any(di8(:, 5) /= int(li16, 8))) error stop 'send integer(8) = integer(16)'
  if (any(di8(:, 6) /= int(lr4, 8))) error stop 'send integer(8) = real(4)'
  if (any(di8(:, 7) /= int(lr8, 8))) error stop 'send integer(8) = real(8)'
  if (any(di8(:, 8) /= int(lr10, 8))) error stop 'send integer(8) = real(10)'
  if (any(di8(:, 9) /= int(lr16, 8))) error stop 'send integer(8) = real(16)'
  if (any(di8(:, 10) /= int(lc4, 8))) error stop 'send integer(8) = complex(4)'
  if (any(di8(:, 11) /= int(lc8, 8))) error stop 'send integer(8) = complex(8)'
  if (any(di8(:, 12) /= int(lc10, 8))) error stop 'send integer(8) = complex(10)'
  if (any(di8(:, 13) /= int(lc16, 8))) error stop 'send integer(8) = complex(16)'
  if (any(di16(:, 1) /= int(li1, 16))) error stop 'send integer(16) = integer(1)'
  if (any(di16(:, 2) /= int(li2, 16))) error stop 'send integer(16) = integer(2)'
  if (any(di16(:, 3) /= int(li4, 16))) error stop 'send integer(16) = integer(4)'
  if (any(di16(:, 4) /= int(li8, 16))) error stop 'send integer(16) = integer(8)'
  if (any(di16(:, 5) /= int(li16, 16))) error stop 'send integer(16) = integer(16)'
  if (any(di16(:, 6) /= int(lr4, 16))) error stop 'send integer(16) = real(4)'
  if (any(di16(:, 7) /= int(lr8, 16))) error stop 'send integer(16) = real(8)'
  if (any(di16(:, 8) /= int(lr10, 16))) error stop 'send integer(16) = real(10)'
  if (any(di16(:, 9) /= int(lr16, 16))) error stop 'send integer(16) = real(16)'
  if (any(di16(:, 10) /= int(lc4, 16))) error stop 'send integer(16) = complex(4)'
  if (any(di16(:, 11) /= int(lc8, 16))) error stop 'send integer(16) = complex(8)'
  if (any(di16(:, 12) /= int(lc10, 16))) error stop 'send integer(16) = complex(10)'
  if (any(di16(:, 13) /= int(lc16, 16))) error stop 'send integer(16) = complex(16)'
  if (any(dr4(:, 1) /= real(li1, 4))) error stop 'send real(4) = integer(1)'
  if (any(dr4(:, 2) /= real(li2, 4))) error stop 'send real(4) = integer(2)'
  if (any(dr4(:, 3) /= real(li4, 4))) error stop 'send real(4) = integer(4)'
  if (any(dr4(:, 4) /= real(li8, 4))) error stop 'send real(4) = integer(8)'
  if (any(dr4(:, 5) /= real(li16, 4))) error stop 'send real(4) = integer(16)'
  if (any(dr4(:, 6) /= real(lr4, 4))) error stop 'send real(4) = real(4)'
  if (any(dr4(:, 7) /= real(lr8, 4))) error stop 'send real(4) = real(8)'
  if (any(dr4(:, 8) /= real(lr10, 4))) error stop 'send real(4) = real(10)'
  if (any(dr4(:, 9) /= real(lr16, 4))) error stop 'send real(4) = real(16)'
  if (any(dr4(:, 10) /= real(lc4, 4))) error stop 'send real(4) = complex(4)'
  if (any(dr4(:, 11) /= real(lc8, 4))) error stop 'send real(4) = complex(8)'
  if (any(dr4(:, 12) /= real(lc10, 4))) error stop 'send real(4) = complex(10)'
  if (any(dr4(:, 13) /= real(lc16, 4))) error stop 'send real(4) = complex(16)'
  if (any(dr8(:, 1) /= real(li1, 8))) error stop 'send real(8) = integer(1)'
  if (any(dr8(:, 2) /= real(li2, 8))) error stop 'send real(8) = integer(2)'
  if (any(dr8(:, 3) /= real(li4, 8))) error stop 'send real(8) = integer(4)'
  if (any(dr8(:, 4) /= real(li8, 8))) error stop 'send real(8) = integer(8)'
  if (any(dr8(:, 5) /= real(li16, 8))) error stop 'send real(8) = integer(16)'
  if (any(dr8(:, 6) /= real(lr4, 8))) error stop 'send real(8) = real(4)'
  if (any(dr8(:, 7) /= real(lr8, 8))) error stop 'send real(8) = real(8)'
  if (any(dr8(:, 8) /= real(lr10, 8))) error stop 'send real(8) = real(10)'
  if (any(dr8(:, 9) /= real(lr16, 8))) error stop 'send real(8) = real(16)'
  if (any(dr8(:, 10) /= real(lc4, 8))) error stop 'send real(8) = complex(4)'
  if (any(dr8(:, 11) /= real(lc8, 8))) error stop 'send real(8) = complex(8)'
  if (any(dr8(:, 12) /= real(lc10, 8))) error stop 'send real(8) = complex(10)'
  if (any(dr8(:, 13) /= real(lc16, 8))) error stop 'send real(8) = complex(16)'
  if (any(dr10(:, 1) /= real(li1, 10))) error stop 'send real(10) = integer(1)'
  if (any(dr10(:, 2) /= real(li2, 10))) error stop 'send real(10) = integer(2)'
  if (any(dr10(:, 3) /= real(li4, 10))) error stop 'send real(10) = integer(4)'
  if (any(dr10(:, 4) /= real(li8, 10))) error stop 'send real(10) = integer(8)'
  if (any(dr10(:, 5) /= real(li16, 10))) error stop 'send real(10) = integer(16)'
  if (any(dr10(:, 6) /= real(lr4, 10))) error stop 'send real(10) = real(4)'
  if (any(dr10(:, 7) /= real(lr8, 10))) error stop 'send real(10) = real(8)'
  if (any(dr10(:, 8) /= real(lr10, 10))) error stop 'send real(10) = real(10)'
  if (any(dr10(:, 9) /= real(lr16, 10))) error stop 'send real(10) = real(16)'
  if (any(dr10(:, 10) /= real(lc4, 10))) error stop 'send real(10) = complex(4)'
  if (any(dr10(:, 11) /= real(lc8, 10))) error stop 'send real(10) = complex(8)'
  if (any(dr10(:, 12) /= real(lc10, 10))) error stop 'send real(10) = complex(10)'
  if (any(dr10(:, 13) /= real(lc16, 10))) error stop 'send real(10) = complex(16)'
  if (any(dr16(:, 1) /= real(li1, 16))) error stop 'send real(16) = integer(1)'
  if (any(dr16(:, 2) /= real(li2, 16))) error stop 'send real(16) = integer(2)'
  if (any(dr16(:, 3) /= real(li4, 16))) error stop 'send real(16) = integer(4)'
  if (any(dr16(:, 4) /= real(li8, 16))) error stop 'send real(16) = integer(8)'
  if (any(dr16(:, 5) /= real(li16, 16))) error stop 'send real(16) = integer(16)'
  if (any(dr16(:, 6) /= real(lr4, 16))) error stop 'send real(16) = real(4)'
  if (any(dr16(:, 7) /= real(lr8, 16))) error stop 'send real(16) = real(8)'
  if (any(dr16(:, 8) /= real(lr10, 16))) error stop 'send real(16) = real(10)'
  if (any(dr16(:, 9) /= real(lr16, 16))) error stop 'send real(16) = real(16)'
  if (any(dr16(:, 10) /= real(lc4, 16))) error stop 'send real(16) = complex(4)'
  if (any(dr16(:, 11) /= real(lc8, 16))) error stop 'send real(16) = complex(8)'
  if (any(dr16(:, 12) /= real(lc10, 16))) error stop 'send real(16) = complex(10)'
  if (any(dr16(:, 13) /= real(lc16, 16))) error stop 'send real(16) = complex(16)'
  if (any(dc4(:, 1) /= cmplx(li1, kind=4))) error stop 'send complex(4) = integer(1)'
  if (any(dc4(:, 2) /= cmplx(li2, kind=4))) error stop 'send complex(4) = integer(2)'
  if (any(dc4(:, 3) /= cmplx(li4, kind=4))) error stop 'send complex(4) = integer(4)'
  if (any(dc4(:, 4) /= cmplx(li8, kind=4))) error stop 'send complex(4) = integer(8)'
  if (any(dc4(:, 5) /= cmplx(li16, kind=4))) error stop 'send complex(4) = integer(16)'
  if (any(dc4(:, 6) /= cmplx(lr4, kind=4))) error stop 'send complex(4) = real(4)'
  if (any(dc4(:, 7) /= cmplx(lr8, kind=4))) error stop 'send complex(4) = real(8)'
  if (any(dc4(:, 8) /= cmplx(lr10, kind=4))) error stop 'send complex(4) = real(10)'
  if (any(dc4(:, 9) /= cmplx(lr16, kind=4))) error stop 'send complex(4) = real(16)'
  if (any(dc4(:, 10) /= cmplx(lc4, kind=4))) error stop 'send complex(4) = complex(4)'
  if (any(dc4(:, 11) /= cmplx(lc8, kind=4))) error stop 'send complex(4) = complex(8)'
  if (any(dc4(:, 12) /= cmplx(lc10, kind=4))) error stop 'send complex(4) = complex(10)'
  if (any(dc4(:, 13) /= cmplx(lc16, kind=4))) error stop 'send complex(4) = complex(16)'
  if (any(dc8(:, 1) /= cmplx(li1, kind=8))) error stop 'send complex(8) = integer(1)'
  if (any(dc8(:, 2) /= cmplx(li2, kind=8))) error stop 'send complex(8) = integer(2)'
  if (any(dc8(:, 3) /= cmplx(li4, kind=8))) error stop 'send complex(8) = integer(4)'
  if (any(dc8(:, 4) /= cmplx(li8, kind=8))) error stop 'send complex(8) = integer(8)'
  if (any(dc8(:, 5) /= cmplx(li16, kind=8))) error stop 'send complex(8) = integer(16)'
  if (any(dc8(:, 6) /= cmplx(lr4, kind=8))) error stop 'send complex(8) = real(4)'
  if (any(dc8(:, 7) /= cmplx(lr8, kind=8))) error stop 'send complex(8) = real(8)'
  if (any(dc8(:, 8) /= cmplx(lr10, kind=8))) error stop 'send complex(8) = real(10)'
  if (any(dc8(:, 9) /= cmplx(lr16, kind=8))) error stop 'send complex(8) = real(16)'
  if (any(dc8(:, 10) /= cmplx(lc4, kind=8))) error stop 'send complex(8) = complex(4)'
  if (any(dc8(:, 11) /= cmplx(lc8, kind=8))) error stop 'send complex(8) = complex(8)'
  if (any(dc8(:, 12) /= cmplx(lc10, kind=8))) error stop 'send complex(8) = complex(10)'
  if (any(dc8(:, 13) /= cmplx(lc16, kind=8))) error stop 'send complex(8) = complex(16)'
  if (any(dc10(:, 1) /= cmplx(li1, kind=10))) error stop 'send complex(10) = integer(1)'
  if (any(dc10(:, 2) /= cmplx(li2, kind=10))) error stop 'send complex(10) = integer(2)'
  if (any(dc10(:, 3) /= cmplx(li4, kind=10))) error stop 'send complex(10) = integer(4)'
  if (any(dc10(:, 4) /= cmplx(li8, kind=10))) error stop 'send complex(10) = integer(8)'
  if (any(dc10(:, 5) /= cmplx(li16, kind=10))) error stop 'send complex(10) = integer(16)'
  if (any(dc10(:, 6) /= cmplx(lr4, kind=10))) error stop 'send complex(10) = real(4)'
  if (any(dc10(:, 7) /= cmplx(lr8, kind=10))) error stop 'send complex(10) = real(8)'
  if (any(dc10(:, 8) /= cmplx(lr10, kind=10))) error stop 'send complex(10) = real(10)'
  if (any(dc10(:, 9) /= cmplx(lr16, kind=10))) error stop 'send complex(10) = real(16)'
  if (any(dc10(:, 10) /= cmplx(lc4, kind=10))) error stop 'send complex(10) = complex(4)'
  if (any(dc10(:, 11) /= cmplx(lc8, kind=10))) error stop 'send complex(10) = complex(8)'
  if (any(dc10(:, 12) /= cmplx(lc10, kind=10))) error stop 'send complex(10) = complex(10)'
  if (any(dc10(:, 13) /= cmplx(lc16, kind=10))) error stop 'send complex(10) = complex(16)'
  if (any(dc16(:, 1) /= cmplx(li1, kind=16))) error stop 'send complex(16) = integer(1)'
  if (any(dc16(:, 2) /= cmplx(li2, kind=16))) error stop 'send complex(16) = integer(2)'
  if (any(dc16(:, 3) /= cmplx(li4, kind=16))) error stop 'send complex(16) = integer(4)'
  if (any(dc16(:, 4) /= cmplx(li8, kind=16))) error stop 'send complex(16) = integer(8)'
  if (any(dc16(:, 5) /= cmplx(li16, kind=16))) error stop 'send complex(16) = integer(16)'
  if (any(dc16(:, 6) /= cmplx(lr4, kind=16))) error stop 'send complex(16) = real(4)'
  if (any(dc16(:, 7) /= cmplx(lr8, kind=16))) error stop 'send complex(16) = real(8)'
  if (any(dc16(:, 8) /= cmplx(lr10, kind=16))) error stop 'send complex(16) = real(10)'
  if (any(dc16(:, 9) /= cmplx(lr16, kind=16))) error stop 'send complex(16) = real(16)'
  if (any(dc16(:, 10) /= cmplx(lc4, kind=16))) error stop 'send complex(16) = complex(4)'
  if (any(dc16(:, 11) /= cmplx(lc8, kind=16))) error stop 'send complex(16) = complex(8)'
  if (any(dc16(:, 12) /= cmplx(lc10, kind=16))) error stop 'send complex(16) = complex(10)'
  if (any(dc16(:, 13) /= cmplx(lc16, kind=16))) error stop 'send complex(16) = complex(16)'
  sync all

  ! ---- get: local <kind> = source coarray of kind j on the right
  li1 = si1(:)[right]
  if (any(li1 /= int(si1, 1))) error stop 'get integer(1) = integer(1)'
  li1 = si2(:)[right]
  if (any(li1 /= int(si2, 1))) error stop 'get integer(1) = integer(2)'
  li1 = si4(:)[right]
  if (any(li1 /= int(si4, 1))) error stop 'get integer(1) = integer(4)'
  li1 = si8(:)[right]
  if (any(li1 /= int(si8, 1))) error stop 'get integer(1) = integer(8)'
  li1 = si16(:)[right]
  if (any(li1 /= int(si16, 1))) error stop 'get integer(1) = integer(16)'
  li1 = sr4(:)[right]
  if (any(li1 /= int(sr4, 1))) error stop 'get integer(1) = real(4)'
  li1 = sr8(:)[right]
  if (any(li1 /= int(sr8, 1))) error stop 'get integer(1) = real(8)'
  li1 = sr10(:)[right]
  if (any(li1 /= int(sr10, 1))) error stop 'get integer(1) = real(10)'
  li1 = sr16(:)[right]
  if (any(li1 /= int(sr16, 1))) error stop 'get integer(1) = real(16)'
  li1 = sc4(:)[right]
  if (any(li1 /= int(sc4, 1))) error stop 'get integer(1) = complex(4)'
  li1 = sc8(:)[right]
  if (any(li1 /= int(sc8, 1))) error stop 'get integer(1) = complex(8)'
  li1 = sc10(:)[right]
  if (any(li1 /= int(sc10, 1))) error stop 'get integer(1) = complex(10)'
  li1 = sc16(:)[right]
  if (any(li1 /= int(sc16, 1))) error stop 'get integer(1) = complex(16)'
  li2 = si1(:)[right]
  if (any(li2 /= int(si1, 2))) error stop 'get integer(2) = integer(1)'
  li2 = si2(:)[right]
  if (any(li2 /= int(si2, 2))) error stop 'get integer(2) = integer(2)'
  li2 = si4(:)[right]
  if (any(li2 /= int(si4, 2))) error stop 'get integer(2) = integer(4)'
  li2 = si8(:)[right]
  if (any(li2 /= int(si8, 2))) error stop 'get integer(2) = integer(8)'
  li2 = si16(:)[right]
  if (any(li2 /= int(si16, 2))) error stop 'get integer(2) = integer(16)'
  li2 = sr4(:)[right]
  if (any(li2 /= int(sr4, 2))) error stop 'get integer(2) = real(4)'
  li2 = sr8(:)[right]
  if (any(li2 /= int(sr8, 2))) error stop 'get integer(2) = real(8)'
  li2 = sr10(:)[right]
  if (any(li2 /= int(sr10, 2))) error stop 'get integer(2) = real(10)'
  li2 = sr16(:)[right]
  if (any(li2 /= int(sr16, 2))) error stop 'get integer(2) = real(16)'
  li2 = sc4(:)[right]
  if (any(li2 /= int(sc4, 2))) error stop 'get integer(2) = complex(4)'
  li2 = sc8(:)[right]
  if (any(li2 /= int(sc8, 2))) error stop 'get integer(2) = complex(8)'
  li2 = sc10(:)[right]
  if (any(li2 /= int(sc10, 2))) error stop 'get integer(2) = complex(10)'
  li2 = sc16(:)[right]
  if (any(li2 /= int(sc16, 2))) error stop 'get integer(2) = complex(16)'
  li4 = si1(:)[right]
  if (any(li4 /= int(si1, 4))) error stop 'get integer(4) = integer(1)'
  li4 = si2(:)[right]
  if (any(li4 /= int(si2, 4))) error stop 'get integer(4) = integer(2)'
  li4 = si4(:)[right]
  if (any(li4 /= int(si4, 4))) error stop 'get integer(4) = integer(4)'
  li4 = si8(:)[right]
  if (any(li4 /= int(si8, 4))) error stop 'get integer(4) = integer(8)'
  li4 = si16(:)[right]
  if (any(li4 /= int(si16, 4))) error stop 'get integer(4) = integer(16)'
  li4 = sr4(:)[right]
  if (any(li4 /= int(sr4, 4))) error stop 'get integer(4) = real(4)'
  li4 = sr8(:)[right]
  if (any(li4 /= int(sr8, 4))) error stop 'get integer(4) = real(8)'
  li4 = sr10(:)[right]
  if (any(li4 /= int(sr10, 4))) error stop 'get integer(4) = real(10)'
  li4 = sr16(:)[right]
  if (any(li4 /= int(sr16, 4))) error stop 'get integer(4) = real(16)'
  li4 = sc4(:)[right]
  if (any(li4 /= int(sc4, 4))) error stop 'get integer(4) = complex(4)'
  li4 = sc8(:)[right]
  if (any(li4 /= int(sc8, 4))) error stop 'get integer(4) = complex(8)'
  li4 = sc10(:)[right]
  if (any(li4 /= int(sc10, 4))) error stop 'get integer(4) = complex(10)'
  li4 = sc16(:)[right]
  if (any(li4 /= int(sc16, 4))) error stop 'get integer(4) = complex(16)'
  li8 = si1(:)[right]
  if (any(li8 /= int(si1, 8))) error stop 'get integer(8) = integer(1)'
  li8 = si2(:)[right]
  if (any(li8 /= int(si2, 8))) error stop 'get integer(8) = integer(2)'
  li8 = si4(:)[right]
  if (any(li8 /= int(si4, 8))) error stop 'get integer(8) = integer(4)'
  li8 = si8(:)[right]
  if (any(li8 /= int(si8, 8))) error stop 'get integer(8) = integer(8)'
  li8 = si16(:)[right]
  if (any(li8 /= int(si16, 8))) error stop 'get integer(8) = integer(16)'
  li8 = sr4(:)[right]
  if (any(li8 /= int(sr4, 8))) error stop 'get integer(8) = real(4)'
  li8 = sr8(:)[right]
  if (any(li8 /= int(sr8, 8))) error stop 'get integer(8) = real(8)'
  li8 = sr10(:)[right]
  if (any(li8 /= int(sr10, 8))) error stop 'get integer(8) = real(10)'
  li8 = sr16(:)[right]
  if (any(li8 /= int(sr16, 8))) error stop 'get integer(8) = real(16)'
  li8 = sc4(:)[right]
  if (any(li8 /= int(sc4, 8))) error stop 'get integer(8) = complex(4)'
  li8 = sc8(:)[right]
  if (any(li8 /= int(sc8, 8))) error stop 'get integer(8) = complex(8)'
  li8 = sc10(:)[right]
  if (any(li8 /= int(sc10, 8))) error stop 'get integer(8) = complex(10)'
  li8 = sc16(:)[right]
  if (any(li8 /= int(sc16, 8))) error stop 'get integer(8) = complex(16)'
  li16 = si1(:)[right]
  if (any(li16 /= int(si1, 16))) error stop 'get integer(16) = integer(1)'
  li16 = si2(:)[right]
  if (any(li16 /= int(si2, 16))) error stop 'get integer(16) = integer(2)'
  li16 = si4(:)[right]
  if (any(li16 /= int(si4, 16))) error stop 'get integer(16) = integer(4)'
  li16 = si8(:)[right]
  if (any(li16 /= int(si8, 16))) error stop 'get integer(16) = integer(8)'
  li16 = si16(:)[right]
  if (any(li16 /= int(si16, 16))) error stop 'get integer(16) = integer(16)'
  li16 = sr4(:)[right]
  if (any(li16 /= int(sr4, 16))) error stop 'get integer(16) = real(4)'
  li16 = sr8(:)[right]
  if (any(li16 /= int(sr8, 16))) error stop 'get integer(16) = real(8)'
  li16 = sr10(:)[right]
  if (any(li16 /= int(sr10, 16))) error stop 'get integer(16) = real(10)'
  li16 = sr16(:)[right]
  if (any(li16 /= int(sr16, 16))) error stop 'get integer(16) = real(16)'
  li16 = sc4(:)[right]
  if (any(li16 /= int(sc4, 16))) error stop 'get integer(16) = complex(4)'
  li16 = sc8(:)[right]
  if (any(li16 /= int(sc8, 16))) error stop 'get integer(16) = complex(8)'
  li16 = sc10(:)[right]
  if (any(li16 /= int(sc10, 16))) error stop 'get integer(16) = complex(10)'
  li16 = sc16(:)[right]
  if (any(li16 /= int(sc16, 16))) error stop 'get integer(16) = complex(16)'
  lr4 = si1(:)[right]
  if (any(lr4 /= real(si1, 4))) error stop 'get real(4) = integer(1)'
  lr4 = si2(:)[right]
  if (any(lr4 /= real(si2, 4))) error stop 'get real(4) = integer(2)'
  lr4 = si4(:)[right]
  if (any(lr4 /= real(si4, 4))) error stop 'get real(4) = integer(4)'
  lr4 = si8(:)[right]
  if (any(lr4 /= real(si8, 4))) error stop 'get real(4) = integer(8)'
  lr4 = si16(:)[right]
  if (any(lr4 /= real(si16, 4))) error stop 'get real(4) = integer(16)'
  lr4 = sr4(:)[right]
  if (any(lr4 /= real(sr4, 4))) error stop 'get real(4) = real(4)'
  lr4 = sr8(:)[right]
  if (any(lr4 /= real(sr8, 4))) error stop 'get real(4) = real(8)'
  lr4 = sr10(:)[right]
  if (any(lr4 /= real(sr10, 4))) error stop 'get real(4) = real(10)'
  lr4 = sr16(:)[right]
  if (any(lr4 /= real(sr16, 4))) error stop 'get real(4) = real(16)'
  lr4 = sc4(:)[right]
  if (any(lr4 /= real(sc4, 4))) error stop 'get real(4) = complex(4)'
  lr4 = sc8(:)[right]
  if (any(lr4 /= real(sc8, 4))) error stop 'get real(4) = complex(8)'
  lr4 = sc10(:)[right]
  if (any(lr4 /= real(sc10, 4))) error stop 'get real(4) = complex(10)'
  lr4 = sc16(:)[right]
  if (any(lr4 /= real(sc16, 4))) error stop 'get real(4) = complex(16)'
  lr8 = si1(:)[right]
  if (any(lr8 /= real(si1, 8))) error stop 'get real(8) = integer(1)'
  lr8 = si2(:)[right]
  if (any(lr8 /= real(si2, 8))) error stop 'get real(8) = integer(2)'
  lr8 = si4(:)[right]
  if (any(lr8 /= real(si4, 8))) error stop 'get real(8) = integer(4)'
  lr8 = si8(:)[right]
  if (any(lr8 /= real(si8, 8))) error stop 'get real(8) = integer(8)'
  lr8 = si16(:)[right]
  if (any(lr8 /= real(si16, 8))) error stop 'get real(8) = integer(16)'
  lr8 = sr4(:)[right]
  if (any(lr8 /= real(sr4, 8))) error stop 'get real(8) = real(4)'
  lr8 = sr8(:)[right]
  if (any(lr8 /= real(sr8, 8))) error stop 'get real(8) = real(8)'
  lr8 = sr10(:)[right]
  if (any(lr8 /= real(sr10, 8))) error stop 'get real(8) = real(10)'
  lr8 = sr16(:)[right]
  if (any(lr8 /= real(sr16, 8))) error stop 'get real(8) = real(16)'
  lr8 = sc4(:)[right]
  if (any(lr8 /= real(sc4, 8))) error stop 'get real(8) = complex(4)'
  lr8 = sc8(:)[right]
  if (any(lr8 /= real(sc8, 8))) error stop 'get real(8) = complex(8)'
  lr8 = sc10(:)[right]
  if (any(lr8 /= real(sc10, 8))) error stop 'get real(8) = complex(10)'
  lr8 = sc16(:)[right]
  if (any(lr8 /= real(sc16, 8))) error stop 'get real(8) = complex(16)'
  lr10 = si1(:)[right]
  if (any(lr10 /= real(si1, 10))) error stop 'get real(10) = integer(1)'
  lr10 = si2(:)[right]
  if (any(lr10 /= real(si2, 10))) error stop 'get real(10) = integer(2)'
  lr10 = si4(:)[right]
  if (any(lr10 /= real(si4, 10))) error stop 'get real(10) = integer(4)'
  lr10 = si8(:)[right]
  if (any(lr10 /= real(si8, 10))) error stop 'get real(10) = integer(8)'
  lr10 = si16(:)[right]
  if (any(lr10 /= real(si16, 10))) error stop 'get real(10) = integer(16)'
  lr10 = sr4(:)[right]
  if (any(lr10 /= real(sr4, 10))) error stop 'get real(10) = real(4)'
  lr10 = sr8(:)[right]
  if (any(lr10 /= real(sr8, 10))) error stop 'get real(10) = real(8)'
  lr10 = sr10(:)[right]
  if (any(lr10 /= real(sr10, 10))) error stop 'get real(10) = real(10)'
  lr10 = sr16(:)[right]
  if (any(lr10 /= real(sr16, 10))) error stop 'get real(10) = real(16)'
  lr10 = sc4(:)[right]
  if (any(lr10 /= real(sc4, 10))) error stop 'get real(10) = complex(4)'
  lr10 = sc8(:)[right]
  if (any(lr10 /= real(sc8, 10))) error stop 'get real(10) = complex(8)'
  lr10 = sc10(:)[right]
  if (any(lr10 /= real(sc10, 10))) error stop 'get real(10) = complex(10)'
  lr10 = sc16(:)[right]
  if (any(lr10 /= real(sc16, 10))) error stop 'get real(10) = complex(16)'
  lr16 = si1(:)[right]
  if (any(lr16 /= real(si1, 16))) error stop 'get real(16) = integer(1)'
  lr16 = si2(:)[right]
  if (any(lr16 /= real(si2, 16))) error stop 'get real(16) = integer(2)'
  lr16 = si4(:)[right]
  if (any(lr16 /= real(si4, 16))) error stop 'get real(16) = integer(4)'
  lr16 = si8(:)[right]
  if (any(lr16 /= real(si8, 16))) error stop 'get real(16) = integer(8)'
  lr16 = si16(:)[right]
  if (any(lr16 /= real(si16, 16))) error stop 'get real(16) = integer(16)'
  lr16 = sr4(:)[right]
  if (any(lr16 /= real(sr4, 16))) error stop 'get real(16) = real(4)'
  lr16 = sr8(:)[right]
  if (any(lr16 /= real(sr8, 16))) error stop 'get real(16) = real(8)'
  lr16 = sr10(:)[right]
  if (any(lr16 /= real(sr10, 16))) error stop 'get real(16) = real(10)'
  lr16 = sr16(:)[right]
  if (any(lr16 /= real(sr16, 16))) error stop 'get real(16) = real(16)'
  lr16 = sc4(:)[right]
  if (any(lr16 /= real(sc4, 16))) error stop 'get real(16) = complex(4)'
  lr16 = sc8(:)[right]
  if (any(lr16 /= real(sc8, 16))) error stop 'get real(16) = complex(8)'
  lr16 = sc10(:)[right]
  if (any(lr16 /= real(sc10, 16))) error stop 'get real(16) = complex(10)'
  lr16 = sc16(:)[right]
  if (any(lr16 /= real(sc16, 16))) error stop 'get real(16) = complex(16)'
  lc4 = si1(:)[right]
  if (any(lc4 /= cmplx(si1, kind=4))) error stop 'get complex(4) = integer(1)'
  lc4 = si2(:)[right]
  if (any(lc4 /= cmplx(si2, kind=4))) error stop 'get complex(4) = integer(2)'
  lc4 = si4(:)[right]
  if (any(lc4 /= cmplx(si4, kind=4))) error stop 'get complex(4) = integer(4)'
  lc4 = si8(:)[right]
  if (any(lc4 /= cmplx(si8, kind=4))) error stop 'get complex(4) = integer(8)'
  lc4 = si16(:)[right]
  if (any(lc4 /= cmplx(si16, kind=4))) error stop 'get complex(4) = integer(16)'
  lc4 = sr4(:)[right]
  if (any(lc4 /= cmplx(sr4, kind=4))) error stop 'get complex(4) = real(4)'
  lc4 = sr8(:)[right]
  if (any(lc4 /= cmplx(sr8, kind=4))) error stop 'get complex(4) = real(8)'
  lc4 = sr10(:)[right]
  if (any(lc4 /= cmplx(sr10, kind=4))) error stop 'get complex(4) = real(10)'
  lc4 = sr16(:)[right]
  if (any(lc4 /= cmplx(sr16, kind=4))) error stop 'get complex(4) = real(16)'
  lc4 = sc4(:)[right]
  if (any(lc4 /= cmplx(sc4, kind=4))) error stop 'get complex(4) = complex(4)'
  lc4 = sc8(:)[right]
  if (any(lc4 /= cmplx(sc8, kind=4))) error stop 'get complex(4) = complex(8)'
  lc4 = sc10(:)[right]
  if (any(lc4 /= cmplx(sc10, kind=4))) error stop 'get complex(4) = complex(10)'
  lc4 = sc16(:)[right]
  if (any(lc4 /= cmplx(sc16, kind=4))) error stop 'get complex(4) = complex(16)'
  lc8 = si1(:)[right]
  if (any(lc8 /= cmplx(si1, kind=8))) error stop 'get complex(8) = integer(1)'
  lc8 = si2(:)[right]
  if (any(lc8 /= cmplx(si2, kind=8))) error stop 'get complex(8) = integer(2)'
  lc8 = si4(:)[right]
  if (any(lc8 /= cmplx(si4, kind=8))) error stop 'get complex(8) = integer(4)'
  lc8 = si8(:)[right]
  if (any(lc8 /= cmplx(si8, kind=8))) error stop 'get complex(8) = integer(8)'
  lc8 = si16(:)[right]
  if (any(lc8 /= cmplx(si16, kind=8))) error stop 'get complex(8) = integer(16)'
  lc8 = sr4(:)[right]
  if (any(lc8 /= cmplx(sr4, kind=8))) error stop 'get complex(8) = real(4)'
  lc8 = sr8(:)[right]
  if (any(lc8 /= cmplx(sr8, kind=8))) error stop 'get complex(8) = real(8)'
  lc8 = sr10(:)[right]
  if (any(lc8 /= cmplx(sr10, kind=8))) error stop 'get complex(8) = real(10)'
  lc8 = sr16(:)[right]
  if (any(lc8 /= cmplx(sr16, kind=8))) error stop 'get complex(8) = real(16)'
  lc8 = sc4(:)[right]
  if (any(lc8 /= cmplx(sc4, kind=8))) error stop 'get complex(8) = complex(4)'
  lc8 = sc8(:)[right]
  if (any(lc8 /= cmplx(sc8, kind=8))) error stop 'get complex(8) = complex(8)'
  lc8 = sc10(:)[right]
  if (any(lc8 /= cmplx(sc10, kind=8))) error stop 'get complex(8) = complex(10)'
  lc8 = sc16(:)[right]
  if (any(lc8 /= cmplx(sc16, kind=8))) error stop 'get complex(8) = complex(16)'
  lc10 = si1(:)[right]
  if (any(lc10 /= cmplx(si1, kind=10))) error stop 'get complex(10) = integer(1)'
  lc10 = si2(:)[right]
  if (any(lc10 /= cmplx(si2, kind=10))) error stop 'get complex(10) = integer(2)'
  lc10 = si4(:)[right]
  if (any(lc10 /= cmplx(si4, kind=10))) error stop 'get complex(10) = integer(4)'
  lc10 = si8(:)[right]
  if (any(lc10 /= cmplx(si8, kind=10))) error stop 'get complex(10) = integer(8)'
  lc10 = si16(:)[right]
  if (any(lc10 /= cmplx(si16, kind=10))) error stop 'get complex(10) = integer(16)'
  lc10 = sr4(:)[right]
  if (any(lc10 /= cmplx(sr4, kind=10))) error stop 'get complex(10) = real(4)'
  lc10 = sr8(:)[right]
  if (any(lc10 /= cmplx(sr8, kind=10))) error stop 'get complex(10) = real(8)'
  lc10 = sr10(:)[right]
  if (any(lc10 /= cmplx(sr10, kind=10))) error stop 'get complex(10) = real(10)'
  lc10 = sr16(:)[right]
  if (any(lc10 /= cmplx(sr16, kind=10))) error stop 'get complex(10) = real(16)'
  lc10 = sc4(:)[right]
  if (any(lc10 /= cmplx(sc4, kind=10))) error stop 'get complex(10) = complex(4)'
  lc10 = sc8(:)[right]
  if (any(lc10 /= cmplx(sc8, kind=10))) error stop 'get complex(10) = complex(8)'
  lc10 = sc10(:)[right]
  if (any(lc10 /= cmplx(sc10, kind=10))) error stop 'get complex(10) = complex(10)'
  lc10 = sc16(:)[right]
  if (any(lc10 /= cmplx(sc16, kind=10))) error stop 'get complex(10) = complex(16)'
  lc16 = si1(:)[right]
  if (any(lc16 /= cmplx(si1, kind=16))) error stop 'get complex(16) = integer(1)'
  lc16 = si2(:)[right]
  if (any(lc16 /= cmplx(si2, kind=16))) error stop 'get complex(16) = integer(2)'
  lc16 = si4(:)[right]
  if (any(lc16 /= cmplx(si4, kind=16))) error stop 'get complex(16) = integer(4)'
  lc16 = si8(:)[right]
  if (any(lc16 /= cmplx(si8, kind=16))) error stop 'get complex(16) = integer(8)'
  lc16 = si16(:)[right]
  if (any(lc16 /= cmplx(si16, kind=16))) error stop 'get complex(16) = integer(16)'
  lc16 = sr4(:)[right]
  if (any(lc16 /= cmplx(sr4, kind=16))) error stop 'get complex(16) = real(4)'
  lc16 = sr8(:)[right]
  if (any(lc16 /= cmplx(sr8, kind=16))) error stop 'get complex(16) = real(8)'
  lc16 = sr10(:)[right]
  if (any(lc16 /= cmplx(sr10, kind=16))) error stop 'get complex(16) = real(10)'
  lc16 = sr16(:)[right]
  if (any(lc16 /= cmplx(sr16, kind=16))) error stop 'get complex(16) = real(16)'
  lc16 = sc4(:)[right]
  if (any(lc16 /= cmplx(sc4, kind=16))) error stop 'get complex(16) = complex(4)'
  lc16 = sc8(:)[right]
  if (any(lc16 /= cmplx(sc8, kind=16))) error stop 'get complex(16) = complex(8)'
  lc16 = sc10(:)[right]
  if (any(lc16 /= cmplx(sc10, kind=16))) error stop 'get complex(16) = complex(10)'
  lc16 = sc16(:)[right]
  if (any(lc16 /= cmplx(sc16, kind=16))) error stop 'get complex(16) = complex(16)'

  ! ---- sendget: d<kind>(:, j)[right] = source coarray of kind j on the left
  di1 = 0
  di2 = 0
  di4 = 0
  di8 = 0
  di16 = 0
  dr4 = 0
  dr8 = 0
  dr10 = 0
  dr16 = 0
  dc4 = 0
  dc8 = 0
  dc10 = 0
  dc16 = 0
  sync all
  di1(:, 1)[right] = si1(:)[left]
  di1(:, 2)[right] = si2(:)[left]
  di1(:, 3)[right] = si4(:)[left]
  di1(:, 4)[right] = si8(:)[left]
  di1(:, 5)[right] = si16(:)[left]
  di1(:, 6)[right] = sr4(:)[left]
  di1(:, 7)[right] = sr8(:)[left]
  di1(:, 8)[right] = sr10(:)[left]
  di1(:, 9)[right] = sr16(:)[left]
  di1(:, 10)[right] = sc4(:)[left]
  di1(:, 11)[right] = sc8(:)[left]
  di1(:, 12)[right] = sc10(:)[left]
  di1(:, 13)[right] = sc16(:)[left]
  di2(:, 1)[right] = si1(:)[left]
  di2(:, 2)[right] = si2(:)[left]
  di2(:, 3)[right] = si4(:)[left]
  di2(:, 4)[right] = si8(:)[left]
  di2(:, 5)[right] = si16(:)[left]
  di2(:, 6)[right] = sr4(:)[left]
  di2(:, 7)[right] = sr8(:)[left]
  di2(:, 8)[right] = sr10(:)[left]
  di2(:, 9)[right] = sr16(:)[left]
  di2(:, 10)[right] = sc4(:)[left]
  di2(:, 11)[right] = sc8(:)[left]
  di2(:, 12)[right] = sc10(:)[left]
  di2(:, 13)[right] = sc16(:)[left]
  di4(:, 1)[right] = si1(:)[left]
  di4(:, 2)[right] = si2(:)[left]
  di4(:, 3)[right] = si4(:)[left]
  di4(:, 4)[right] = si8(:)[left]
  di4(:, 5)[right] = si16(:)[left]
  di4(:, 6)[right] = sr4(:)[left]
  di4(:, 7)[right] = sr8(:)[left]
  di4(:, 8)[right] = sr10(:)[left]
  di4(:, 9)[right] = sr16(:)[left]
  di4(:, 10)[right] = sc4(:)[left]
  di4(:, 11)[right] = sc8(:)[left]
  di4(:, 12)[right] = sc10(:)[left]
  di4(:, 13)[right] = sc16(:)[left]
  di8(:, 1)[right] = si1(:)[left]
  di8(:, 2)[right] = si2(:)[left]
  di8(:, 3)[right] = si4(:)[left]
  di8(:, 4)[right] = si8(:)[left]
  di8(:, 5)[right] = si16(:)[left]
  di8(:, 6)[right] = sr4(:)[left]
  di8(:, 7)[right] = sr8(:)[left]
  di8(:, 8)[right] = sr10(:)[left]
  di8(:, 9)[right] = sr16(:)[left]
  di8(:, 10)[right] = sc4(:)[left]
  di8(:, 11)[right] = sc8(:)[left]
  di8(:, 12)[right] = sc10(:)[left]
  di8(:, 13)[right] = sc16(:)[left]
  di16(:, 1)[right] = si1(:)[left]
  di16(:, 2)[right] = si2(:)[left]
  di16(:, 3)[right] = si4(:)[left]
  di16(:, 4)[right] = si8(:)[left]
  di16(:, 5)[right] = si16(:)[left]
  di16(:, 6)[right] = sr4(:)[left]
  di16(:, 7)[right] = sr8(:)[left]
  di16(:, 8)[right] = sr10(:)[left]
  di16(:, 9)[right] = sr16(:)[left]
  di16(:, 10)[right] = sc4(:)[left]
  di16(:, 11)[right] = sc8(:)[left]
  di16(:, 12)[right] = sc10(:)[left]
  di16(:, 13)[right] = sc16(:)[left]
  dr4(:, 1)[right] = si1(:)[left]
  dr4(:, 2)[right] = si2(:)[left]
  dr4(:, 3)[right] = si4(:)[left]
  dr4(:, 4)[right] = si8(:)[left]
  dr4(:, 5)[right] = si16(:)[left]
  dr4(:, 6)[right] = sr4(:)[left]
  dr4(:, 7)[right] = sr8(:)[left]
  dr4(:, 8)[right] = sr10(:)[left]
  dr4(:, 9)[right] = sr16(:)[left]
  dr4(:, 10)[right] = sc4(:)[left]
  dr4(:, 11)[right] = sc8(:)[left]
  dr4(:, 12)[right] = sc10(:)[left]
  dr4(:, 13)[right] = sc16(:)[left]
  dr8(:, 1)[right] = si1(:)[left]
  dr8(:, 2)[right] = si2(:)[left]
  dr8(:, 3)[right] = si4(:)[left]
  dr8(:, 4)[right] = si8(:)[left]
  dr8(:, 5)[right] = si16(:)[left]
  dr8(:, 6)[right] = sr4(:)[left]
  dr8(:, 7)[right] = sr8(:)[left]
  dr8(:, 8)[right] = sr10(:)[left]
  dr8(:, 9)[right] = sr16(:)[left]
  dr8(:, 10)[right] = sc4(:)[left]
  dr8(:, 11)[right] = sc8(:)[left]
  dr8(:, 12)[right] = sc10(:)[left]
  dr8(:, 13)[right] = sc16(:)[left]
  dr10(:, 1)[right] = si1(:)[left]
  dr10(:, 2)[right] = si2(:)[left]
  dr10(:, 3)[right] = si4(:)[left]
  dr10(:, 4)[right] = si8(:)[left]
  dr10(:, 5)[right] = si16(:)[left]
  dr10(:, 6)[right] = sr4(:)[left]
  dr10(:, 7)[right] = sr8(:)[left]
  dr10(:, 8)[right] = sr10(:)[left]
  dr10(:, 9)[right] = sr16(:)[left]
  dr10(:, 10)[right] = sc4(:)[left]
  dr10(:, 11)[right] = sc8(:)[left]
  dr10(:, 12)[right] = sc10(:)[left]
  dr10(:, 13)[right] = sc16(:)[left]
  dr16(:, 1)[right] = si1(:)[left]
  dr16(:, 2)[right] = si2(:)[left]
  dr16(:, 3)[right] = si4(:)[left]
  dr16(:, 4)[right] = si8(:)[left]
  dr16(:, 5)[right] = si16(:)[left]
  dr16(:, 6)[right] = sr4(:)[left]
  dr16(:, 7)[right] = sr8(:)[left]
  dr16(:, 8)[right] = sr10(:)[left]
  dr16(:, 9)[right] = sr16(:)[left]
  dr16(:, 10)[right] = sc4(:)[left]
  dr16(:, 11)[right] = sc8(:)[left]
  dr16(:, 12)[right] = sc10(:)[left]
  dr16(:, 13)[right] = sc16(:)[left]
  dc4(:, 1)[right] = si1(:)[left]
  dc4(:, 2)[right] = si2(:)[left]
  dc4(:, 3)[right] = si4(:)[left]
  dc4(:, 4)[right] = si8(:)[left]
  dc4(:, 5)[right] = si16(:)[left]
  dc4(:, 6)[right] = sr4(:)[left]
  dc4(:, 7)[right] = sr8(:)[left]
  dc4(:, 8)[right] = sr10(:)[left]
  dc4(:, 9)[right] = sr16(:)[left]
  dc4(:, 10)[right] = sc4(:)[left]
  dc4(:, 11)[right] = sc8(:)[left]
  dc4(:, 12)[right] = sc10(:)[left]
  dc4(:, 13)[right] = sc16(:)[left]
  dc8(:, 1)[right] = si1(:)[left]
  dc8(:, 2)[right] = si2(:)[left]
  dc8(:, 3)[right] = si4(:)[left]
  dc8(:, 4)[right] = si8(:)[left]
  dc8(:, 5)[right] = si16(:)[left]
  dc8(:, 6)[right] = sr4(:)[left]
  dc8(:, 7)[right] = sr8(:)[left]
  dc8(:, 8)[right] = sr10(:)[left]
  dc8(:, 9)[right] = sr16(:)[left]
  dc8(:, 10)[right] = sc4(:)[left]
  dc8(:, 11)[right] = sc8(:)[left]
  dc8(:, 12)[right] = sc10(:)[left]
  dc8(:, 13)[right] = sc16(:)[left]
  dc10(:, 1)[right] = si1(:)[left]
  dc10(:, 2)[right] = si2(:)[left]
  dc10(:, 3)[right] = si4(:)[left]
  dc10(:, 4)[right] = si8(:)[left]
  dc10(:, 5)[right] = si16(:)[left]
  dc10(:, 6)[right] = sr4(:)[left]
  dc10(:, 7)[right] = sr8(:)[left]
  dc10(:, 8)[right] = sr10(:)[left]
  dc10(:, 9)[right] = sr16(:)[left]
  dc10(:, 10)[right] = sc4(:)[left]
  dc10(:, 11)[right] = sc8(:)[left]
  dc10(:, 12)[right] = sc10(:)[left]
  dc10(:, 13)[right] = sc16(:)[left]
  dc16(:, 1)[right] = si1(:)[left]
  dc16(:, 2)[right] = si2(:)[left]
  dc16(:, 3)[right] = si4(:)[left]
  dc16(:, 4)[right] = si8(:)[left]
  dc16(:, 5)[right] = si16(:)[left]
  dc16(:, 6)[right] = sr4(:)[left]
  dc16(:, 7)[right] = sr8(:)[left]
  dc16(:, 8)[right] = sr10(:)[left]
  dc16(:, 9)[right] = sr16(:)[left]
  dc16(:, 10)[right] = sc4(:)[left]
  dc16(:, 11)[right] = sc8(:)[left]
  dc16(:, 12)[right] = sc10(:)[left]
  dc16(:, 13)[right] = sc16(:)[left]
  sync all
  if (any(di1(:, 1) /= int(si1, 1))) error stop 'sendget integer(1) = integer(1)'
  if (any(di1(:, 2) /= int(si2, 1))) error stop 'sendget integer(1) = integer(2)'
  if (any(di1(:, 3) /= int(si4, 1))) error stop 'sendget integer(1) = integer(4)'
  if (any(di1(:, 4) /= int(si8, 1))) error stop 'sendget integer(1) = integer(8)'
  if (any(di1(:, 5) /= int(si16, 1))) error stop 'sendget integer(1) = integer(16)'
  if (any(di1(:, 6) /= int(sr4, 1))) error stop 'sendget integer(1) = real(4)'
  if (any(di1(:, 7) /= int(sr8, 1))) error stop 'sendget integer(1) = real(8)'
  if (any(di1(:, 8) /= int(sr10, 1))) error stop 'sendget integer(1) = real(10)'
  if (any(di1(:, 9) /= int(sr16, 1))) error stop 'sendget integer(1) = real(16)'
  if (any(di1(:, 10) /= int(sc4, 1))) error stop 'sendget integer(1) = complex(4)'
  if (any(di1(:, 11) /= int(sc8, 1))) error stop 'sendget integer(1) = complex(8)'
  if (any(di1(:, 12) /= int(sc10, 1))) error stop 'sendget integer(1) = complex(10)'
  if (any(di1(:, 13) /= int(sc16, 1))) error stop 'sendget integer(1) = complex(16)'
  if (any(di2(:, 1) /= int(si1, 2))) error stop 'sendget integer(2) = integer(1)'
  if (any(di2(:, 2) /= int(si2, 2))) error stop 'sendget integer(2) = integer(2)'
  if (any(di2(:, 3) /= int(si4, 2))) error stop 'sendget integer(2) = integer(4)'
  if (any(di2(:, 4) /= int(si8, 2))) error stop 'sendget integer(2) = integer(8)'
  if (any(di2(:, 5) /= int(si16, 2))) error stop 'sendget integer(2) = integer(16)'
  if (any(di2(:, 6) /= int(sr4, 2))) error stop 'sendget integer(2) = real(4)'
  if (any(di2(:, 7) /= int(sr8, 2))) error stop 'sendget integer(2) = real(8)'
  if (any(di2(:, 8) /= int(sr10, 2))) error stop 'sendget integer(2) = real(10)'
  if (any(di2(:, 9) /= int(sr16, 2))) error stop 'sendget integer(2) = real(16)'
  if (any(di2(:, 10) /= int(sc4, 2))) error stop 'sendget integer(2) = complex(4)'
  if (any(di2(:, 11) /= int(sc8, 2))) error stop 'sendget integer(2) = complex(8)'
  if (any(di2(:, 12) /= int(sc10, 2))) error stop 'sendget integer(2) = complex(10)'
  if (any(di2(:, 13) /= int(sc16, 2))) error stop 'sendget integer(2) = complex(16)'
  if (any(di4(:, 1) /= int(si1, 4))) error stop 'sendget integer(4) = integer(1)'
  if (any(di4(:, 2) /= int(si2, 4))) error stop 'sendget integer(4) = integer(2)'
  if (any(di4(:, 3) /= int(si4, 4))) error stop 'sendget integer(4) = integer(4)'
  if (any(di4(:, 4) /= int(si8, 4))) error stop 'sendget integer(4) = integer(8)'
  if (any(di4(:, 5) /= int(si16, 4))) error stop 'sendget integer(4) = integer(16)'
  if (any(di4(:, 6) /= int(sr4, 4))) error stop 'sendget integer(4) = real(4)'
  if (any(di4(:, 7) /= int(sr8, 4))) error stop 'sendget integer(4) = real(8)'
  if (any(di4(:, 8) /= int(sr10, 4))) error stop 'sendget integer(4) = real(10)'
  if (any(di4(:, 9) /= int(sr16, 4))) error stop 'sendget integer(4) = real(16)'
  if (any(di4(:, 10) /= int(sc4, 4))) error stop 'sendget integer(4) = complex(4)'
  if (any(di4(:, 11) /= int(sc8, 4))) error stop 'sendget integer(4) = complex(8)'
  if (any(di4(:, 12) /= int(sc10, 4))) error stop 'sendget integer(4) = complex(10)'
  if (any(di4(:, 13) /= int(sc16, 4))) error stop 'sendget integer(4) = complex(16)'
  if (any(di8(:, 1) /= int(si1, 8))) error stop 'sendget integer(8) = integer(1)'
  if (any(di8(:, 2) /= int(si2, 8))) error stop 'sendget integer(8) = integer(2)'
  if (any(di8(:, 3) /= int(si4, 8))) error stop 'sendget integer(8) = integer(4)'
  if (any(di8(:, 4) /= int(si8, 8))) error stop 'sendget integer(8) = integer(8)'
  if (any(di8(:, 5) /= int(si16, 8))) error stop 'sendget integer(8) = integer(16)'
  if (any(di8(:, 6) /= int(sr4, 8))) error stop 'sendget integer(8) = real(4)'
  if (any(di8(:, 7) /= int(sr8, 8))) error stop 'sendget integer(8) = real(8)'
  if (any(di8(:, 8) /= int(sr10, 8))) error stop 'sendget integer(8) = real(10)'
  if (any(di8(:, 9) /= int(sr16, 8))) error stop 'sendget integer(8) = real(16)'
  if (any(di8(:, 10) /= int(sc4, 8))) error stop 'sendget integer(8) = complex(4)'
  if (any(di8(:, 11) /= int(sc8, 8))) error stop 'sendget integer(8) = complex(8)'
  if (any(di8(:, 12) /= int(sc10, 8))) error stop 'sendget integer(8) = complex(10)'
  if (any(di8(:, 13) /= int(sc16, 8))) error stop 'sendget integer(8) = complex(16)'
  if (any(di16(:, 1) /= int(si1, 16))) error stop 'sendget integer(16) = integer(1)'
  if (any(di16(:, 2) /= int(si2, 16))) error stop 'sendget integer(16) = integer(2)'
  if (any(di16(:, 3) /= int(si4, 16))) error stop 'sendget integer(16) = integer(4)'
  if (any(di16(:, 4) /= int(si8, 16))) error stop 'sendget integer(16) = integer(8)'
  if (any(di16(:, 5) /= int(si16, 16))) error stop 'sendget integer(16) = integer(16)'
  if (any(di16(:, 6) /= int(sr4, 16))) error stop 'sendget integer(16) = real(4)'
  if (any(di16(:, 7) /= int(sr8, 16))) error stop 'sendget integer(16) = real(8)'
  if (any(di16(:, 8) /= int(sr10, 16))) error stop 'sendget integer(16) = real(10)'
  if (any(di16(:, 9) /= int(sr16, 16))) error stop 'sendget integer(16) = real(16)'
  if (any(di16(:, 10) /= int(sc4, 16))) error stop 'sendget integer(16) = complex(4)'
  if (any(di16(:, 11) /= int(sc8, 16))) error stop 'sendget integer(16) = complex(8)'
  if (any(di16(:, 12) /= int(sc10, 16))) error stop 'sendget integer(16) = complex(10)'
  if (any(di16(:, 13) /= int(sc16, 16))) error stop 'sendget integer(16) = complex(16)'
  if (any(dr4(:, 1) /= real(si1, 4))) error stop 'sendget real(4) = integer(1)'
  if (any(dr4(:, 2) /= real(si2, 4))) error stop 'sendget real(4) = integer(2)'
  if (any(dr4(:, 3) /= real(si4, 4))) error stop 'sendget real(4) = integer(4)'
  if (any(dr4(:, 4) /= real(si8, 4))) error stop 'sendget real(4) = integer(8)'
  if (any(dr4(:, 5) /= real(si16, 4))) error stop 'sendget real(4) = integer(16)'
  if (any(dr4(:, 6) /= real(sr4, 4))) error stop 'sendget real(4) = real(4)'
  if (any(dr4(:, 7) /= real(sr8, 4))) error stop 'sendget real(4) = real(8)'
  if (any(dr4(:, 8) /= real(sr10, 4))) error stop 'sendget real(4) = real(10)'
  if (any(dr4(:, 9) /= real(sr16, 4))) error stop 'sendget real(4) = real(16)'
  if (any(dr4(:, 10) /= real(sc4, 4))) error stop 'sendget real(4) = complex(4)'
  if (any(dr4(:, 11) /= real(sc8, 4))) error stop 'sendget real(4) = complex(8)'
  if (any(dr4(:, 12) /= real(sc10, 4))) error stop 'sendget real(4) = complex(10)'
  if (any(dr4(:, 13) /= real(sc16, 4))) error stop 'sendget real(4) = complex(16)'
  if (any(dr8(:, 1) /= real(si1, 8))) error stop 'sendget real(8) = integer(1)'
  if (any(dr8(:, 2) /= real(si2, 8))) error stop 'sendget real(8) = integer(2)'
  if (any(dr8(:, 3) /= real(si4, 8))) error stop 'sendget real(8) = integer(4)'
  if (any(dr8(:, 4) /= real(si8, 8))) error stop 'sendget real(8) = integer(8)'
  if (any(dr8(:, 5) /= real(si16, 8))) error stop 'sendget real(8) = integer(16)'
  if (any(dr8(:, 6) /= real(sr4, 8))) error stop 'sendget real(8) = real(4)'
  if (any(dr8(:, 7) /= real(sr8, 8))) error stop 'sendget real(8) = real(8)'
  if (any(dr8(:, 8) /= real(sr10, 8))) error stop 'sendget real(8) = real(10)'
  if (any(dr8(:, 9) /= real(sr16, 8))) error stop 'sendget real(8) = real(16)'
  if (any(dr8(:, 10) /= real(sc4, 8))) error stop 'sendget real(8) = complex(4)'
  if (any(dr8(:, 11) /= real(sc8, 8))) error stop 'sendget real(8) = complex(8)'
  if (any(dr8(:, 12) /= real(sc10, 8))) error stop 'sendget real(8) = complex(10)'
  if (any(dr8(:, 13) /= real(sc16, 8))) error stop 'sendget real(8) = complex(16)'
  if (any(dr10(:, 1) /= real(si1, 10))) error stop 'sendget real(10) = integer(1)'
  if (any(dr10(:, 2) /= real(si2, 10))) error stop 'sendget real(10) = integer(2)'
  if (any(dr10(:, 3) /= real(si4, 10))) error stop 'sendget real(10) = integer(4)'
  if (any(dr10(:, 4) /= real(si8, 10))) error stop 'sendget real(10) = integer(8)'
  if (any(dr10(:, 5) /= real(si16, 10))) error stop 'sendget real(10) = integer(16)'
  if (any(dr10(:, 6) /= real(sr4, 10))) error stop 'sendget real(10) = real(4)'
  if (any(dr10(:, 7) /= real(sr8, 10))) error stop 'sendget real(10) = real(8)'
  if (any(dr10(:, 8) /= real(sr10, 10))) error stop 'sendget real(10) = real(10)'
  if (any(dr10(:, 9) /= real(sr16, 10))) error stop 'sendget real(10) = real(16)'
  if (any(dr10(:, 10) /= real(sc4, 10))) error stop 'sendget real(10) = complex(4)'
  if (any(dr10(:, 11) /= real(sc8, 10))) error stop 'sendget real(10) = complex(8)'
  if (any(dr10(:, 12) /= real(sc10, 10))) error stop 'sendget real(10) = complex(10)'
  if (any(dr10(:, 13) /= real(sc16, 10))) error stop 'sendget real(10) = complex(16)'
  if (any(dr16(:, 1) /= real(si1, 16))) error stop 'sendget real(16) = integer(1)'
  if (any(dr16(:, 2) /= real(si2, 16))) error stop 'sendget real(16) = integer(2)'
  if (any(dr16(:, 3) /= real(si4, 16))) error stop 'sendget real(16) = integer(4)'
  if (any(dr16(:, 4) /= real(si8, 16))) error stop 'sendget real(16) = integer(8)'
  if (any(dr16(:, 5) /= real(si16, 16))) error stop 'sendget real(16) = integer(16)'
  if (any(dr16(:, 6) /= real(sr4, 16))) error stop 'sendget real(16) = real(4)'
  if (any(dr16(:, 7) /= real(sr8, 16))) error stop 'sendget real(16) = real(8)'
  if (any(dr16(:, 8) /= real(sr10, 16))) error stop 'sendget real(16) = real(10)'
  if (any(dr16(:, 9) /= real(sr16, 16))) error stop 'sendget real(16) = real(16)'
  if (any(dr16(:, 10) /= real(sc4, 16))) error stop 'sendget real(16) = complex(4)'
  if (any(dr16(:, 11) /= real(sc8, 16))) error stop 'sendget real(16) = complex(8)'
  if (any(dr16(:, 12) /= real(sc10, 16))) error stop 'sendget real(16) = complex(10)'
  if (any(dr16(:, 13) /= real(sc16, 16))) error stop 'sendget real(16) = complex(16)'
  if (any(dc4(:, 1) /= cmplx(si1, kind=4))) error stop 'sendget complex(4) = integer(1)'
  if (any(dc4(:, 2) /= cmplx(si2, kind=4))) error stop 'sendget complex(4) = integer(2)'
  if (any(dc4(:, 3) /= cmplx(si4, kind=4))) error stop 'sendget complex(4) = integer(4)'
  if (any(dc4(:, 4) /= cmplx(si8, kind=4))) error stop 'sendget complex(4) = integer(8)'
  if (any(dc4(:, 5) /= cmplx(si16, kind=4))) error stop 'sendget complex(4) = integer(16)'
  if (any(dc4(:, 6) /= cmplx(sr4, kind=4))) error stop 'sendget complex(4) = real(4)'
  if (any(dc4(:, 7) /= cmplx(sr8, kind=4))) error stop 'sendget complex(4) = real(8)'
  if (any(dc4(:, 8) /= cmplx(sr10, kind=4))) error stop 'sendget complex(4) = real(10)'
  if (any(dc4(:, 9) /= cmplx(sr16, kind=4))) error stop 'sendget complex(4) = real(16)'
  if (any(dc4(:, 10) /= cmplx(sc4, kind=4))) error stop 'sendget complex(4) = complex(4)'
  if (any(dc4(:, 11) /= cmplx(sc8, kind=4))) error stop 'sendget complex(4) = complex(8)'
  if (any(dc4(:, 12) /= cmplx(sc10, kind=4))) error stop 'sendget complex(4) = complex(10)'
  if (any(dc4(:, 13) /= cmplx(sc16, kind=4))) error stop 'sendget complex(4) = complex(16)'
  if (any(dc8(:, 1) /= cmplx(si1, kind=8))) error stop 'sendget complex(8) = integer(1)'
  if (any(dc8(:, 2) /= cmplx(si2, kind=8))) error stop 'sendget complex(8) = integer(2)'
  if (any(dc8(:, 3) /= cmplx(si4, kind=8))) error stop 'sendget complex(8) = integer(4)'
  if (any(dc8(:, 4) /= cmplx(si8, kind=8))) error stop 'sendget complex(8) = integer(8)'
  if (any(dc8(:, 5) /= cmplx(si16, kind=8))) error stop 'sendget complex(8) = integer(16)'
  if (any(dc8(:, 6) /= cmplx(sr4, kind=8))) error stop 'sendget complex(8) = real(4)'
  if (any(dc8(:, 7) /= cmplx(sr8, kind=8))) error stop 'sendget complex(8) = real(8)'
  if (any(dc8(:, 8) /= cmplx(sr10, kind=8))) error stop 'sendget complex(8) = real(10)'
  if (any(dc8(:, 9) /= cmplx(sr16, kind=8))) error stop 'sendget complex(8) = real(16)'
  if (any(dc8(:, 10) /= cmplx(sc4, kind=8))) error stop 'sendget complex(8) = complex(4)'
  if (any(dc8(:, 11) /= cmplx(sc8, kind=8))) error stop 'sendget complex(8) = complex(8)'
  if (any(dc8(:, 12) /= cmplx(sc10, kind=8))) error stop 'sendget complex(8) = complex(10)'
  if (any(dc8(:, 13) /= cmplx(sc16, kind=8))) error stop 'sendget complex(8) = complex(16)'
  if (any(dc10(:, 1) /= cmplx(si1, kind=10))) error stop 'sendget complex(10) = integer(1)'
  if (any(dc10(:, 2) /= cmplx(si2, kind=10))) error stop 'sendget complex(10) = integer(2)'
  if (any(dc10(:, 3) /= cmplx(si4, kind=10))) error stop 'sendget complex(10) = integer(4)'
  if (any(dc10(:, 4) /= cmplx(si8, kind=10))) error stop 'sendget complex(10) = integer(8)'
  if (any(dc10(:, 5) /= cmplx(si16, kind=10))) error stop 'sendget complex(10) = integer(16)'
  if (any(dc10(:, 6) /= cmplx(sr4, kind=10))) error stop 'sendget complex(10) = real(4)'
  if (any(dc10(:, 7) /= cmplx(sr8, kind=10))) error stop 'sendget complex(10) = real(8)'
  if (any(dc10(:, 8) /= cmplx(sr10, kind=10))) error stop 'sendget complex(10) = real(10)'
  if (any(dc10(:, 9) /= cmplx(sr16, kind=10))) error stop 'sendget complex(10) = real(16)'
  if (any(dc10(:, 10) /= cmplx(sc4, kind=10))) error stop 'sendget complex(10) = complex(4)'
  if (any(dc10(:, 11) /= cmplx(sc8, kind=10))) error stop 'sendget complex(10) = complex(8)'
  if (any(dc10(:, 12) /= cmplx(sc10, kind=10))) error stop 'sendget complex(10) = complex(10)'
  if (any(dc10(:, 13) /= cmplx(sc16, kind=10))) error stop 'sendget complex(10) = complex(16)'
  if (any(dc16(:, 1) /= cmplx(si1, kind=16))) error stop 'sendget complex(16) = integer(1)'
  if (any(dc16(:, 2) /= cmplx(si2, kind=16))) error stop 'sendget complex(16) = integer(2)'
  if (any(dc16(:, 3) /= cmplx(si4, kind=16))) error stop 'sendget complex(16) = integer(4)'
  if (any(dc16(:, 4) /= cmplx(si8, kind=16))) error stop 'sendget complex(16) = integer(8)'
  if (any(dc16(:, 5) /= cmplx(si16, kind=16))) error stop 'sendget complex(16) = integer(16)'
  if (any(dc16(:, 6) /= cmplx(sr4, kind=16))) error stop 'sendget complex(16) = real(4)'
  if (any(dc16(:, 7) /= cmplx(sr8, kind=16))) error stop 'sendget complex(16) = real(8)'
  if (any(dc16(:, 8) /= cmplx(sr10, kind=16))) error stop 'sendget complex(16) = real(10)'
  if (any(dc16(:, 9) /= cmplx(sr16, kind=16))) error stop 'sendget complex(16) = real(16)'
  if (any(dc16(:, 10) /= cmplx(sc4, kind=16))) error stop 'sendget complex(16) = complex(4)'
  if (any(dc16(:, 11) /= cmplx(sc8, kind=16))) error stop 'sendget complex(16) = complex(8)'
  if (any(dc16(:, 12) /= cmplx(sc10, kind=16))) error stop 'sendget complex(16) = complex(10)'
  if (any(dc16(:, 13) /= cmplx(sc16, kind=16))) error stop 'sendget complex(16) = complex(16)'
  sync all

  ! ---- logical kinds
  ! ---- send: d<kind>(:, j)[right] = <source kind j>
  dl1(:, 1)[right] = ll1
  dl1(:, 2)[right] = ll2
  dl1(:, 3)[right] = ll4
  dl1(:, 4)[right] = ll8
  dl1(:, 5)[right] = ll16
  dl2(:, 1)[right] = ll1
  dl2(:, 2)[right] = ll2
  dl2(:, 3)[right] = ll4
  dl2(:, 4)[right] = ll8
  dl2(:, 5)[right] = ll16
  dl4(:, 1)[right] = ll1
  dl4(:, 2)[right] = ll2
  dl4(:, 3)[right] = ll4
  dl4(:, 4)[right] = ll8
  dl4(:, 5)[right] = ll16
  dl8(:, 1)[right] = ll1
  dl8(:, 2)[right] = ll2
  dl8(:, 3)[right] = ll4
  dl8(:, 4)[right] = ll8
  dl8(:, 5)[right] = ll16
  dl16(:, 1)[right] = ll1
  dl16(:, 2)[right] = ll2
  dl16(:, 3)[right] = ll4
  dl16(:, 4)[right] = ll8
  dl16(:, 5)[right] = ll16
  sync all
  if (any(dl1(:, 1) .neqv. logical(ll1, 1))) error stop 'send logical(1) = logical(1)'
  if (any(dl1(:, 2) .neqv. logical(ll2, 1))) error stop 'send logical(1) = logical(2)'
  if (any(dl1(:, 3) .neqv. logical(ll4, 1))) error stop 'send logical(1) = logical(4)'
  if (any(dl1(:, 4) .neqv. logical(ll8, 1))) error stop 'send logical(1) = logical(8)'
  if (any(dl1(:, 5) .neqv. logical(ll16, 1))) error stop 'send logical(1) = logical(16)'
  if (any(dl2(:, 1) .neqv. logical(ll1, 2))) error stop 'send logical(2) = logical(1)'
  if (any(dl2(:, 2) .neqv. logical(ll2, 2))) error stop 'send logical(2) = logical(2)'
  if (any(dl2(:, 3) .neqv. logical(ll4, 2))) error stop 'send logical(2) = logical(4)'
  if (any(dl2(:, 4) .neqv. logical(ll8, 2))) error stop 'send logical(2) = logical(8)'
  if (any(dl2(:, 5) .neqv. logical(ll16, 2))) error stop 'send logical(2) = logical(16)'
  if (any(dl4(:, 1) .neqv. logical(ll1, 4))) error stop 'send logical(4) = logical(1)'
  if (any(dl4(:, 2) .neqv. logical(ll2, 4))) error stop 'send logical(4) = logical(2)'
  if (any(dl4(:, 3) .neqv. logical(ll4, 4))) error stop 'send logical(4) = logical(4)'
  if (any(dl4(:, 4) .neqv. logical(ll8, 4))) error stop 'send logical(4) = logical(8)'
  if (any(dl4(:, 5) .neqv. logical(ll16, 4))) error stop 'send logical(4) = logical(16)'
  if (any(dl8(:, 1) .neqv. logical(ll1, 8))) error stop 'send logical(8) = logical(1)'
  if (any(dl8(:, 2) .neqv. logical(ll2, 8))) error stop 'send logical(8) = logical(2)'
  if (any(dl8(:, 3) .neqv. logical(ll4, 8))) error stop 'send logical(8) = logical(4)'
  if (any(dl8(:, 4) .neqv. logical(ll8, 8))) error stop 'send logical(8) = logical(8)'
  if (any(dl8(:, 5) .neqv. logical(ll16, 8))) error stop 'send logical(8) = logical(16)'
  if (any(dl16(:, 1) .neqv. logical(ll1, 16))) error stop 'send logical(16) = logical(1)'
  if (any(dl16(:, 2) .neqv. logical(ll2, 16))) error stop 'send logical(16) = logical(2)'
  if (any(dl16(:, 3) .neqv. logical(ll4, 16))) error stop 'send logical(16) = logical(4)'
  if (any(dl16(:, 4) .neqv. logical(ll8, 16))) error stop 'send logical(16) = logical(8)'
  if (any(dl16(:, 5) .neqv. logical(ll16, 16))) error stop 'send logical(16) = logical(16)'
  sync all

  ! ---- get: local <kind> = source coarray of kind j on the right
  ll1 = sl1(:)[right]
  if (any(ll1 .neqv. logical(sl1, 1))) error stop 'get logical(1) = logical(1)'
  ll1 = sl2(:)[right]
  if (any(ll1 .neqv. logical(sl2, 1))) error stop 'get logical(1) = logical(2)'
  ll1 = sl4(:)[right]
  if (any(ll1 .neqv. logical(sl4, 1))) error stop 'get logical(1) = logical(4)'
  ll1 = sl8(:)[right]
  if (any(ll1 .neqv. logical(sl8, 1))) error stop 'get logical(1) = logical(8)'
  ll1 = sl16(:)[right]
  if (any(ll1 .neqv. logical(sl16, 1))) error stop 'get logical(1) = logical(16)'
  ll2 = sl1(:)[right]
  if (any(ll2 .neqv. logical(sl1, 2))) error stop 'get logical(2) = logical(1)'
  ll2 = sl2(:)[right]
  if (any(ll2 .neqv. logical(sl2, 2))) error stop 'get logical(2) = logical(2)'
  ll2 = sl4(:)[right]
  if (any(ll2 .neqv. logical(sl4, 2))) error stop 'get logical(2) = logical(4)'
  ll2 = sl8(:)[right]
  if (any(ll2 .neqv. logical(sl8, 2))) error stop 'get logical(2) = logical(8)'
  ll2 = sl16(:)[right]
  if (any(ll2 .neqv. logical(sl16, 2))) error stop 'get logical(2) = logical(16)'
  ll4 = sl1(:)[right]
  if (any(ll4 .neqv. logical(sl1, 4))) error stop 'get logical(4) = logical(1)'
  ll4 = sl2(:)[right]
  if (any(ll4 .neqv. logical(sl2, 4))) error stop 'get logical(4) = logical(2)'
  ll4 = sl4(:)[right]
  if (any(ll4 .neqv. logical(sl4, 4))) error stop 'get logical(4) = logical(4)'
  ll4 = sl8(:)[right]
  if (any(ll4 .neqv. logical(sl8, 4))) error stop 'get logical(4) = logical(8)'
  ll4 = sl16(:)[right]
  if (any(ll4 .neqv. logical(sl16, 4))) error stop 'get logical(4) = logical(16)'
  ll8 = sl1(:)[right]
  if (any(ll8 .neqv. logical(sl1, 8))) error stop 'get logical(8) = logical(1)'
  ll8 = sl2(:)[right]
  if (any(ll8 .neqv. logical(sl2, 8))) error stop 'get logical(8) = logical(2)'
  ll8 = sl4(:)[right]
  if (any(ll8 .neqv. logical(sl4, 8))) error stop 'get logical(8) = logical(4)'
  ll8 = sl8(:)[right]
  if (any(ll8 .neqv. logical(sl8, 8))) error stop 'get logical(8) = logical(8)'
  ll8 = sl16(:)[right]
  if (any(ll8 .neqv. logical(sl16, 8))) error stop 'get logical(8) = logical(16)'
  ll16 = sl1(:)[right]
  if (any(ll16 .neqv. logical(sl1, 16))) error stop 'get logical(16) = logical(1)'
  ll16 = sl2(:)[right]
  if (any(ll16 .neqv. logical(sl2, 16))) error stop 'get logical(16) = logical(2)'
  ll16 = sl4(:)[right]
  if (any(ll16 .neqv. logical(sl4, 16))) error stop 'get logical(16) = logical(4)'
  ll16 = sl8(:)[right]
  if (any(ll16 .neqv. logical(sl8, 16))) error stop 'get logical(16) = logical(8)'
  ll16 = sl16(:)[right]
  if (any(ll16 .neqv. logical(sl16, 16))) error stop 'get logical(16) = logical(16)'

  ! ---- sendget: d<kind>(:, j)[right] = source coarray of kind j on the left
  dl1 = .false.
  dl2 = .false.
  dl4 = .false.
  dl8 = .false.
  dl16 = .false.
  sync all
  dl1(:, 1)[right] = sl1(:)[left]
  dl1(:, 2)[right] = sl2(:)[left]
  dl1(:, 3)[right] = sl4(:)[left]
  dl1(:, 4)[right] = sl8(:)[left]
  dl1(:, 5)[right] = sl16(:)[left]
  dl2(:, 1)[right] = sl1(:)[left]
  dl2(:, 2)[right] = sl2(:)[left]
  dl2(:, 3)[right] = sl4(:)[left]
  dl2(:, 4)[right] = sl8(:)[left]
  dl2(:, 5)[right] = sl16(:)[left]
  dl4(:, 1)[right] = sl1(:)[left]
  dl4(:, 2)[right] = sl2(:)[left]
  dl4(:, 3)[right] = sl4(:)[left]
  dl4(:, 4)[right] = sl8(:)[left]
  dl4(:, 5)[right] = sl16(:)[left]
  dl8(:, 1)[right] = sl1(:)[left]
  dl8(:, 2)[right] = sl2(:)[left]
  dl8(:, 3)[right] = sl4(:)[left]
  dl8(:, 4)[right] = sl8(:)[left]
  dl8(:, 5)[right] = sl16(:)[left]
  dl16(:, 1)[right] = sl1(:)[left]
  dl16(:, 2)[right] = sl2(:)[left]
  dl16(:, 3)[right] = sl4(:)[left]
  dl16(:, 4)[right] = sl8(:)[left]
  dl16(:, 5)[right] = sl16(:)[left]
  sync all
  if (any(dl1(:, 1) .neqv. logical(sl1, 1))) error stop 'sendget logical(1) = logical(1)'
  if (any(dl1(:, 2) .neqv. logical(sl2, 1))) error stop 'sendget logical(1) = logical(2)'
  if (any(dl1(:, 3) .neqv. logical(sl4, 1))) error stop 'sendget logical(1) = logical(4)'
  if (any(dl1(:, 4) .neqv. logical(sl8, 1))) error stop 'sendget logical(1) = logical(8)'
  if (any(dl1(:, 5) .neqv. logical(sl16, 1))) error stop 'sendget logical(1) = logical(16)'
  if (any(dl2(:, 1) .neqv. logical(sl1, 2))) error stop 'sendget logical(2) = logical(1)'
  if (any(dl2(:, 2) .neqv. logical(sl2, 2))) error stop 'sendget logical(2) = logical(2)'
  if (any(dl2(:, 3) .neqv. logical(sl4, 2))) error stop 'sendget logical(2) = logical(4)'
  if (any(dl2(:, 4) .neqv. logical(sl8, 2))) error stop 'sendget logical(2) = logical(8)'
  if (any(dl2(:, 5) .neqv. logical(sl16, 2))) error stop 'sendget logical(2) = logical(16)'
  if (any(dl4(:, 1) .neqv. logical(sl1, 4))) error stop 'sendget logical(4) = logical(1)'
  if (any(dl4(:, 2) .neqv. logical(sl2, 4))) error stop 'sendget logical(4) = logical(2)'
  if (any(dl4(:, 3) .neqv. logical(sl4, 4))) error stop 'sendget logical(4) = logical(4)'
  if (any(dl4(:, 4) .neqv. logical(sl8, 4))) error stop 'sendget logical(4) = logical(8)'
  if (any(dl4(:, 5) .neqv. logical(sl16, 4))) error stop 'sendget logical(4) = logical(16)'
  if (any(dl8(:, 1) .neqv. logical(sl1, 8))) error stop 'sendget logical(8) = logical(1)'
  if (any(dl8(:, 2) .neqv. logical(sl2, 8))) error stop 'sendget logical(8) = logical(2)'
  if (any(dl8(:, 3) .neqv. logical(sl4, 8))) error stop 'sendget logical(8) = logical(4)'
  if (any(dl8(:, 4) .neqv. logical(sl8, 8))) error stop 'sendget logical(8) = logical(8)'
  if (any(dl8(:, 5) .neqv. logical(sl16, 8))) error stop 'sendget logical(8) = logical(16)'
  if (any(dl16(:, 1) .neqv. logical(sl1, 16))) error stop 'sendget logical(16) = logical(1)'
  if (any(dl16(:, 2) .neqv. logical(sl2, 16))) error stop 'sendget logical(16) = logical(2)'
  if (any(dl16(:, 3) .neqv. logical(sl4, 16))) error stop 'sendget logical(16) = logical(4)'
  if (any(dl16(:, 4) .neqv. logical(sl8, 16))) error stop 'sendget logical(16) = logical(8)'
  if (any(dl16(:, 5) .neqv. logical(sl16, 16))) error stop 'sendget logical(16) = logical(16)'
  sync all

  ! ---- scalars, a reversed and a strided section, a scalar broadcast, with conversion
  dr4 = 0; dc8 = 0; di2 = 0; dr16 = 0
  sync all
  dr4(n:1:-1, 1)[right] = li16                   ! integer(16) -> real(4), reversed
  dc8(1:n:2, 2)[right] = lr16(1:2)               ! real(16) -> complex(8), strided
  di2(2, 3)[right] = lc10(4)                     ! complex(10) -> integer(2), scalar
  dr16(:, 4)[right] = lr10(3)                    ! real(10) -> real(16), broadcast
  sync all
  if (any(dr4(n:1:-1, 1) /= real(li16, 4))) error stop 'send reversed integer(16) -> real(4)'
  if (any(dc8(1:n:2, 2) /= cmplx(lr16(1:2), kind=8)) .or. any(dc8(2:n:2, 2) /= 0)) &
    error stop 'send strided real(16) -> complex(8)'
  if (di2(2, 3) /= int(lc10(4), 2) .or. any(di2(:, 1) /= 0)) error stop 'send scalar complex(10) -> integer(2)'
  if (any(dr16(:, 4) /= real(lr10(3), 16))) error stop 'send broadcast real(10) -> real(16)'
  lr8 = 0
  lr8(2) = sr16(3)[right]                        ! scalar get real(16) -> real(8)
  if (lr8(2) /= real(q, 8)) error stop 'get scalar real(16) -> real(8)'
  li8 = si1(n:1:-1)[left]                        ! reversed get integer(1) -> integer(8)
  if (any(li8 /= int(si1(n:1:-1), 8))) error stop 'get reversed integer(1) -> integer(8)'
  lc4 = sc16(:)[right]
  if (any(lc4 /= cmplx(sc16, kind=4))) error stop 'get complex(16) -> complex(4)'

  ! ---- integer(16) beyond 2^64 and real(16) beyond double precision
  si16(1) = 2_16**100 + 1                        ! exact in real(16), rounded in real(8)
  sr16(2) = 2.0_16**70 + 0.5_16
  sync all
  lr16 = si16(:)[right]
  if (lr16(1) /= real(2_16**100 + 1, 16)) error stop 'get integer(16) -> real(16) beyond 2^64'
  lr8 = si16(:)[right]
  if (lr8(1) /= real(2_16**100 + 1, 8)) error stop 'get integer(16) -> real(8) beyond 2^64'
  li16 = sr16(:)[right]
  if (li16(2) /= 2_16**70) error stop 'get real(16) -> integer(16) beyond 2^64'
  lr10 = sr16(:)[right]
  if (lr10(2) /= real(2.0_16**70 + 0.5_16, 10)) error stop 'get real(16) -> real(10)'

  ! ---- character kind 1 <-> kind 4, padding and truncation
  a3 = 'abc'; a5 = 'vwxyz'; a2 = 'pq'
  u3 = 4_'ABC'; u5 = 4_'VWXYZ'; u2 = 4_'PQ'
  aa = ['one', 'two', 'six']
  uu = [4_'ONE!', 4_'TWO!', 4_'SIX!']
  sync all
  u5l = a3[right]                                ! get, kind 1 -> 4, padded
  if (u5l /= 4_'abc  ') error stop 'get character kind 1 -> 4, padded'
  a5l = u3[right]                                ! get, kind 4 -> 1, padded
  if (a5l /= 'ABC  ') error stop 'get character kind 4 -> 1, padded'
  uul = aa(:)[right]
  if (any(uul /= [4_'one ', 4_'two ', 4_'six '])) error stop 'get character array kind 1 -> 4'
  call truncating(2, 3)                          ! truncation: lengths known only at run time
  a2 = 'pq'                                      ! (truncating wrote 'XY' there)
  u5[right] = a3                                 ! send, kind 1 -> 4, padded
  a5[right] = u3                                 ! send, kind 4 -> 1, padded
  u2[right] = a2                                 ! send, kind 1 -> 4
  aa(3:1:-1)[right] = [4_'AB', 4_'CD', 4_'EF']   ! send array, kind 4 -> 1, reversed, padded
  uu(:)[right] = a2                              ! send scalar kind 1 -> array kind 4
  sync all
  if (u5 /= 4_'abc  ') error stop 'send character kind 1 -> 4, padded'
  if (a5 /= 'ABC  ') error stop 'send character kind 4 -> 1, padded'
  if (u2 /= 4_'pq') error stop 'send character kind 1 -> 4'
  if (any(aa /= ['EF ', 'CD ', 'AB '])) error stop 'send character array kind 4 -> 1'
  if (any(uu /= 4_'pq  ')) error stop 'send character scalar kind 1 -> 4 broadcast'
  sync all
  a3 = 'abc'
  u3l = 4_'A'
  u3l(2:3) = char(int(z'263A'), 4) // char(int(z'263A'), 4)  ! codes above 255 (U+263A)
  u3 = u3l
  sync all
  u5[right] = a3[left]                           ! sendget, kind 1 -> 4
  a5[right] = u3[left]                           ! sendget, kind 4 -> 1: '?' above 255
  sync all
  if (u5 /= 4_'abc  ') error stop 'sendget character kind 1 -> 4'
  if (a5 /= 'A??  ') error stop 'sendget character kind 4 -> 1, codes above 255'

  ! ---- substrings of another image's character coarray not starting at 1: gfortran 12 passes
  ! the offset of the substring and the length of the whole variable, so only the destination's
  ! length says what to read (the variable's end is past the window's for a scalar or the last
  ! element)
  ww = ['first-elem-1', 'second-ele-2', 'third-elem-3', 'last-elemnt4']
  write (nm, '(a, i0, a)') 'image_', me, '_xyz'
  sync all
  sub5 = nm[right](3:7)
  write (held, '(a, i0, a)') 'image_', right, '_xyz'   ! what image `right` holds
  if (sub5 /= held(3:7)) error stop 'get substring (3:7) of a scalar'
  sub3 = ww(4)[right](3:5)
  if (sub3 /= 'st-') error stop 'get substring (3:5) of the last element'
  sub3 = ww(2)[right](3:5)
  if (sub3 /= 'con') error stop 'get substring (3:5) of an element'

  sync all
  if (me == 1) write (*, '(a)') 'Test passed.'

contains

  ! Assignments that truncate, with lengths gfortran cannot see at compile time (it warns, and the
  ! build treats warnings as errors, when it can).  Called with short = 2, long = 3.
  subroutine truncating(short, long)
    integer, intent(in) :: short, long
    character(len=short, kind=1) :: c1
    character(len=short, kind=4) :: c4
    character(len=long + 1, kind=4) :: c4s(3)
    character(len=long, kind=1) :: c1l
    character(len=long, kind=4) :: c4l
    c4 = a3[right]                               ! get, kind 1 -> 4, truncated
    if (c4 /= 4_'ab') error stop 'get character kind 1 -> 4, truncated'
    c1 = u3[right]                               ! get, kind 4 -> 1, truncated
    if (c1 /= 'AB') error stop 'get character kind 4 -> 1, truncated'
    ! (Not an array get: gfortran 12 passes the coarray's length as 0 when the local array's
    ! length is a run-time value, and libcaf_rmx refuses that rather than return blanks.)
    sync all
    c4s = [4_'ABCD', 4_'EFGH', 4_'IJKL']
    aa(:)[right] = c4s                           ! send array, kind 4 (len 4) -> 1 (len 3)
    c4l = 4_'XYZ'
    c1l = 'xyz'
    a2[right] = c4l                              ! send, kind 4 -> 1, truncated
    u2[right] = c1l                              ! send, kind 1 -> 4, truncated
    sync all
    if (a2 /= 'XY' .or. u2 /= 4_'xy') error stop 'send character, truncated'
    if (any(aa /= ['ABC', 'EFG', 'IJK'])) error stop 'send character array kind 4 -> 1, truncated'
    sync all
  end subroutine
end program
