! caf_atomic.f90 — atomic subroutines on coarrays: ATOMIC_DEFINE / ATOMIC_REF, ATOMIC_ADD from
! every image into one counter (exact total), ATOMIC_FETCH_ADD handing out distinct tickets,
! ATOMIC_CAS (one winner), AND / OR / XOR and their FETCH_ forms, logical atomics, atomics on an
! element of an atomic array.  (gfortran accepts only ATOMIC_INT_KIND = 4 atoms.)
program caf_atomic
  use, intrinsic :: iso_fortran_env, only: atomic_int_kind, atomic_logical_kind
  implicit none
  integer, parameter :: reps = 50
  integer(atomic_int_kind) :: counter[*], tickets[*], winner[*], bits[*], slots(8)[*]
  integer(atomic_int_kind) :: seen(reps)
  logical(atomic_logical_kind) :: flag[*]
  integer(atomic_int_kind) :: v, old, expect
  logical(atomic_logical_kind) :: lv
  integer :: me, n, i

  me = this_image(); n = num_images()
  call atomic_define(counter, 0)
  call atomic_define(tickets, 0)
  call atomic_define(winner, 0)
  call atomic_define(bits, 0)
  call atomic_define(flag, .false.)
  slots = 0
  sync all

  ! ---- define / ref across images
  call atomic_define(counter[1 + mod(me, n)], 0)
  sync all
  call atomic_ref(v, counter[1])
  if (v /= 0) error stop 'atomic_ref after define'
  sync all                                  ! nobody adds before everyone has read

  ! ---- every image adds reps times into image 1's counter: the total is exact
  do i = 1, reps
    call atomic_add(counter[1], i)
  end do
  sync all
  call atomic_ref(v, counter[1])
  if (v /= n * reps * (reps + 1) / 2) error stop 'atomic_add total'

  ! ---- fetch_add hands out tickets 0 .. n*reps-1, each exactly once
  do i = 1, reps
    call atomic_fetch_add(tickets[n], 1, seen(i))
  end do
  do i = 2, reps
    if (seen(i) <= seen(i - 1)) error stop 'fetch_add tickets must grow on one image'
  end do
  slots(1) = sum(seen)                      ! every image's ticket sum, gathered on image 1 below
  sync all
  if (me == 1) then
    v = 0
    do i = 1, n
      v = v + slots(1)[i]
    end do
    if (v /= (n * reps) * (n * reps - 1) / 2) error stop 'fetch_add: tickets lost or duplicated'
  end if
  sync all
  slots = 0
  sync all

  ! ---- compare-and-swap: exactly one image wins the race for image 1's winner
  expect = 0
  call atomic_cas(winner[1], old, expect, me)
  sync all
  call atomic_ref(v, winner[1])
  if (v < 1 .or. v > n) error stop 'atomic_cas: no winner'
  if ((old == 0) .neqv. (v == me)) error stop 'atomic_cas: old value does not match the outcome'

  ! ---- bitwise: each image sets its own bit with OR, then the last image clears its bit with AND,
  !      image 1 flips bit 20 with XOR twice (back to clear) and once with FETCH_XOR
  call atomic_or(bits[1], ishft(1, me - 1))
  sync all
  call atomic_ref(v, bits[1])
  if (v /= 2**n - 1) error stop 'atomic_or'
  sync all
  if (me == n) call atomic_and(bits[1], not(ishft(1, n - 1)))
  if (me == 1) then
    call atomic_xor(bits[1], ishft(1, 20))
    call atomic_xor(bits[1], ishft(1, 20))
  end if
  sync all
  call atomic_ref(v, bits[1])
  if (v /= 2**(n - 1) - 1) error stop 'atomic_and / atomic_xor'
  sync all
  if (me == 2) then
    call atomic_fetch_xor(bits[1], 3, old)
    if (old /= 2**(n - 1) - 1) error stop 'atomic_fetch_xor old value'
    call atomic_fetch_or(bits[1], ishft(1, 10), old)
    call atomic_fetch_and(bits[1], ishft(1, 10), old)
    call atomic_ref(v, bits[1])
    if (v /= ishft(1, 10)) error stop 'atomic_fetch_or / fetch_and'
  end if

  ! ---- logical atomics and an element of an atomic array
  if (me == n) call atomic_define(flag[1], .true.)
  call atomic_add(slots(3)[1], me)
  sync all
  call atomic_ref(lv, flag[1])
  if (.not. lv) error stop 'logical atomic_define / atomic_ref'
  call atomic_ref(v, slots(3)[1])
  if (v /= n * (n + 1) / 2) error stop 'atomic on an array element'
  call atomic_ref(v, slots(2)[1])
  if (v /= 0) error stop 'atomic on an array element touched its neighbour'

  sync all
  if (me == 1) print '(a,i0,a)', 'caf_atomic: ', n, ' images ok'
end program caf_atomic
