! bench_caf.f90 — one coarray benchmark for any libcaf: the same source is linked against
! libcaf_rmx and against OpenCoarrays (perf/caf/run.sh) and run with the same image count.
! Every image works on its right neighbour at the same time; image 1 prints the time per
! operation (the slowest image bounds it: each timed block starts and ends with SYNC ALL).
!   small_put    nsmall scalar puts to distinct elements, one SYNC ALL     (us per put)
!   small_get    nsmall scalar gets                                          (us per get)
!   put_1MiB     1 MiB contiguous section put + SYNC ALL                     (MB/s)
!   get_1MiB     1 MiB contiguous section get into a fixed-size array        (MB/s)
!   get_1MiB_re  the same into an allocatable array (gfortran: get_by_ref, reallocating)  (MB/s)
!   put_block2d  g(1:512,1:256)[r] = ..  of a 1024 x 256 real(8) array: 256 runs of 4 KiB (MB/s)
!   put_strided  g(1:1024:2,1:256)[r] = .. every other element: 131072 runs of 8 B     (MB/s)
!   atomic_add   natom ATOMIC_ADD to the neighbour's counter                 (us per op)
!   lock_pair    nlock LOCK + UNLOCK of the neighbour's lock                 (us per pair)
!   sync_all     nsync SYNC ALL                                               (us per op)
!   co_sum       nsync CO_SUM of one integer                                  (us per op)
!   team_sync    nsync SYNC ALL inside CHANGE TEAM (halves from 4 images, all from 2) (us per op)
!   co_reduce    nsync CO_REDUCE of one integer with a user function          (us per op)
!   comp_get     1 MiB section of an allocatable component: v = c[r]%a(:)    (MB/s)
! Each figure is the best of `reps` repetitions (least disturbed by the other load on the host).
program bench_caf
  use, intrinsic :: iso_fortran_env, only: atomic_int_kind, lock_type, team_type
  implicit none
  type comp_t
    real(8), allocatable :: a(:)
  end type
  type(comp_t) :: cx[*]
  type(team_type) :: tm
  integer, parameter :: nsmall = 20000, nbig = 131072, reps = 5
  integer, parameter :: nr = 1024, nc = 256, natom = 2000, nlock = 500, nsync = 200
  integer(atomic_int_kind) :: acount[*]
  type(lock_type) :: lk[*]
  integer :: small(nsmall)[*]
  real(8), allocatable :: big(:)[:], g(:, :)[:]
  real(8), allocatable :: src(:), blk(:, :), half(:, :)
  integer :: me, n, right, i, r, x
  integer(8) :: t0, t1, rate
  real(8) :: best(14), t
  real(8), save :: fixed(nbig)
  character(len=12), parameter :: names(14) = [character(len=12) :: 'small_put', 'small_get', &
       'put_1MiB', 'get_1MiB', 'put_block2d', 'put_strided', 'get_1MiB_re', 'atomic_add', &
       'lock_pair', 'sync_all', 'co_sum', 'team_sync', 'co_reduce', 'comp_get']

  me = this_image(); n = num_images(); right = 1 + mod(me, n)
  allocate(big(nbig)[*], g(nr, nc)[*], src(nbig), blk(nr / 2, nc), half(nr / 2, nc))
  src = [(real(i, 8), i = 1, nbig)]
  blk = 1d0; half = 2d0; small = 0; big = 0; g = 0
  call atomic_define(acount, 0)
  allocate(cx%a(nbig))
  cx%a = real(me, 8)
  form team (1 + mod(me - 1, max(1, n / 2)), tm)
  call system_clock(count_rate=rate)
  best = huge(1d0)
  x = 0
  do r = 1, reps
    call start()
    do i = 1, nsmall
      small(i)[right] = i + r
    end do
    call stop_and_keep(1)

    call start()
    do i = 1, nsmall
      x = x + small(i)[right]
    end do
    call stop_and_keep(2)

    call start()
    big(:)[right] = src
    call stop_and_keep(3)

    call start()
    fixed = big(:)[right]
    call stop_and_keep(4)

    call start()
    src = big(:)[right]
    call stop_and_keep(7)

    call start()
    g(1:nr / 2, :)[right] = blk
    call stop_and_keep(5)

    call start()
    g(1:nr:2, :)[right] = half
    call stop_and_keep(6)

    call start()
    do i = 1, natom
      call atomic_add(acount[right], 1)
    end do
    call stop_and_keep(8)

    call start()
    do i = 1, nlock
      lock(lk[right])
      unlock(lk[right])
    end do
    call stop_and_keep(9)

    call start()
    do i = 1, nsync
      sync all
    end do
    call stop_and_keep(10)

    call start()
    do i = 1, nsync
      x = x + 1
      call co_sum(x)
    end do
    call stop_and_keep(11)

    change team (tm)
      call start()
      do i = 1, nsync
        sync all
      end do
      call stop_and_keep(12)
    end team

    call start()
    do i = 1, nsync
      x = x + 1
      call co_reduce(x, add)
    end do
    call stop_and_keep(13)

    call start()
    fixed = cx[right]%a(:)
    call stop_and_keep(14)
  end do
  if (fixed(nbig) /= real(right, 8)) error stop 'bench: component get'

  ! The data must have arrived, or the timings mean nothing.
  if (small(nsmall) /= nsmall + reps .or. big(nbig) /= nbig) error stop 'bench: puts lost'
  if (g(nr / 2, nc) /= 1d0 .or. g(nr - 1, nc) /= 2d0 .or. g(nr, nc) /= 0d0) error stop 'bench: 2-d'
  if (x == -1 .or. fixed(1) < 0) print *, x
  call atomic_ref(x, acount)
  if (x /= reps * natom) error stop 'bench: atomics lost'
  if (me == 1) then
    print '(a,i0)', 'images ', n
    print '(a12,f14.3,a)', names(1), best(1) / nsmall * 1d6, ' us/op'
    print '(a12,f14.3,a)', names(2), best(2) / nsmall * 1d6, ' us/op'
    print '(a12,f14.3,a)', names(3), 8d0 * nbig / best(3) / 1d6, ' MB/s'
    print '(a12,f14.3,a)', names(4), 8d0 * nbig / best(4) / 1d6, ' MB/s'
    print '(a12,f14.3,a)', names(7), 8d0 * nbig / best(7) / 1d6, ' MB/s'
    print '(a12,f14.3,a)', names(5), 8d0 * (nr / 2) * nc / best(5) / 1d6, ' MB/s'
    print '(a12,f14.3,a)', names(6), 8d0 * (nr / 2) * nc / best(6) / 1d6, ' MB/s'
    print '(a12,f14.3,a)', names(8), best(8) / natom * 1d6, ' us/op'
    print '(a12,f14.3,a)', names(9), best(9) / nlock * 1d6, ' us/op'
    print '(a12,f14.3,a)', names(10), best(10) / nsync * 1d6, ' us/op'
    print '(a12,f14.3,a)', names(11), best(11) / nsync * 1d6, ' us/op'
    print '(a12,f14.3,a)', names(12), best(12) / nsync * 1d6, ' us/op'
    print '(a12,f14.3,a)', names(13), best(13) / nsync * 1d6, ' us/op'
    print '(a12,f14.3,a)', names(14), 8d0 * nbig / best(14) / 1d6, ' MB/s'
  end if
contains
  pure function add(a, b) result(c)
    integer, intent(in) :: a, b
    integer :: c
    c = a + b
  end function
  subroutine start()
    sync all
    call system_clock(t0)
  end subroutine
  subroutine stop_and_keep(k)
    integer, intent(in) :: k
    sync all
    call system_clock(t1)
    t = real(t1 - t0, 8) / real(rate, 8)
    best(k) = min(best(k), t)
  end subroutine
end program bench_caf
