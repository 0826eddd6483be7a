! caf_segments.f90 — the segment rules, checked on the data and on the engine's counters
! (caf_rmx_stats, a libcaf_rmx extension): puts issued in a segment are deferred (no completion
! is forced while they are issued), a get of data put earlier in the same segment sees it, and
! SYNC ALL / SYNC IMAGES complete everything.  Where the neighbour's memory is mapped here (direct
! access, the default on one node; or UCX's own copies into it, RMX_DIRECT=0) a put is a copy,
! complete at once: nothing is left for SYNC ALL to flush or for a get to wait for, and the
! counters say so.
program caf_segments
  use, intrinsic :: iso_c_binding, only: c_int64_t
  implicit none
  interface
    subroutine caf_rmx_stats(s) bind(C, name='caf_rmx_stats')
      import :: c_int64_t
      integer(c_int64_t), intent(out) :: s(13)
    end subroutine
  end interface
  integer, parameter :: PUTS = 1, UCP_PUTS = 4, FLUSH_EP = 6, FLUSH_WORKER = 7, FLOW_WAITS = 8
  integer, parameter :: BARRIERS = 10, DIRECT_PUTS = 11, LANDED_PUTS = 13
  integer, parameter :: k = 8, big_n = 131072
  integer :: v(64)[*], x, w(5), me, n, right, left, i, j, round
  real(8) :: g(12, 10)[*]
  real(8), allocatable :: big(:)[:]
  real(8), allocatable :: back(:)
  integer(c_int64_t) :: s0(13), s1(13), s2(13)
  logical :: direct, landed

  me = this_image(); n = num_images()
  right = 1 + mod(me, n); left = 1 + mod(me - 2 + n, n)
  v = 0
  sync all

  ! ---- k puts in one segment: issued, none completed yet (deferred to the segment end)
  call caf_rmx_stats(s0)
  do i = 1, k
    v(2 * i)[right] = me * 100 + i
  end do
  call caf_rmx_stats(s1)
  if (s1(PUTS) - s0(PUTS) /= k) error stop 'each coindexed store is one rmx put'
  direct = s1(DIRECT_PUTS) > s0(DIRECT_PUTS)
  if (direct .and. s1(DIRECT_PUTS) - s0(DIRECT_PUTS) /= k) error stop 'some puts direct, some not'
  ! UCX's copies: each put lands when issued (the last one may wait, staged, for SYNC ALL)
  landed = s1(LANDED_PUTS) > s0(LANDED_PUTS)
  if (landed .and. s1(LANDED_PUTS) - s0(LANDED_PUTS) < k - 1) error stop 'some puts landed, some not'
  direct = direct .or. landed
  if (s1(FLUSH_EP) + s1(FLUSH_WORKER) /= s0(FLUSH_EP) + s0(FLUSH_WORKER)) &
    error stop 'puts were completed inside the segment: not deferred'
  ! ---- sync all completes them: every image sees its left neighbour's k values
  sync all
  call caf_rmx_stats(s2)
  if (.not. direct .and. s2(FLUSH_EP) + s2(FLUSH_WORKER) <= s1(FLUSH_EP) + s1(FLUSH_WORKER)) &
    error stop 'sync all completed nothing'
  if (s2(BARRIERS) /= s1(BARRIERS) + 1) error stop 'sync all is one barrier'
  do i = 1, k
    if (v(2 * i) /= left * 100 + i) error stop 'a put was not complete after sync all'
    if (v(2 * i - 1) /= 0) error stop 'a put wrote between the elements'
  end do

  ! ---- get after put in the same segment (flow dependency): the get sees the put
  sync all
  call caf_rmx_stats(s0)
  v(10)[right] = -me
  x = v(10)[right]
  call caf_rmx_stats(s1)
  if (x /= -me) error stop 'get did not see the put of the same segment'
  if (.not. direct .and. s1(FLOW_WAITS) <= s0(FLOW_WAITS)) &
    error stop 'no flow wait before the dependent get'
  ! overlapping but not identical sections
  v(20:25)[right] = [(-i, i = 1, 6)]
  w = v(23:27)[right]
  if (any(w(1:3) /= [-4, -5, -6])) error stop 'get of an overlapping section missed the put'
  if (any(w(4:5) /= 0)) error stop 'get of an overlapping section: bytes beyond the put changed'

  ! ---- put after put to the same element in one segment: the later one wins
  sync all
  do round = 1, 20
    v(30)[right] = round * 1000 + me
  end do
  v(31)[right] = 1
  v(31)[right] = 2
  sync all
  if (v(30) /= 20 * 1000 + left) error stop 'put after put: the last put must win'
  if (v(31) /= 2) error stop 'put after put (adjacent): the last put must win'

  ! ---- sync images completes the puts to the partner (data, then the image control)
  if (n >= 2) then
    if (me == 1) then
      v(40)[2] = 4242
      sync images(2)
    else if (me == 2) then
      sync images(1)
      if (v(40) /= 4242) error stop 'sync images did not complete the partner put'
    end if
  end if

  ! ---- a large put (1 MiB) then a get of it in the same segment, then after sync all
  allocate(big(big_n)[*], back(big_n))
  big = 0
  sync all
  big(:)[right] = [(real(me * big_n + i, 8), i = 1, big_n)]
  back = big(:)[right]
  if (any(back /= [(real(me * big_n + i, 8), i = 1, big_n)])) error stop 'large get after put'
  sync all
  if (any(big /= [(real(left * big_n + i, 8), i = 1, big_n)])) error stop 'large put after sync all'
  deallocate(big)

  ! ---- descriptors reach the engine as sections, so contiguity decides the UCP operations:
  !      g(:, 2:4) is one run of 36 elements (one UCP put, not 36); g(1:6, 2:4) is 3 runs.
  !      (At most: a coalescing tracker may still hold small puts back until the segment ends.)
  g = 0
  sync all
  call caf_rmx_stats(s0)
  g(:, 2:4)[right] = reshape([(real(i, 8), i = 1, 36)], [12, 3])
  call caf_rmx_stats(s1)
  if (s1(UCP_PUTS) - s0(UCP_PUTS) > 1) error stop 'a contiguous 2-d section must be one UCP put'
  ! the first section's put may still be staged: complete it, so the count below is the block's
  sync memory
  call caf_rmx_stats(s1)
  g(1:6, 6:8)[right] = -1d0
  call caf_rmx_stats(s2)
  if (s2(UCP_PUTS) - s1(UCP_PUTS) > 3) error stop 'a 6x3 block of a 12-row array is 3 runs at most'
  sync all
  if (any(g(:, 2:4) /= reshape([(real(i, 8), i = 1, 36)], [12, 3]))) error stop 'contiguous 2-d put'
  do j = 1, 10
    do i = 1, 12
      if ((j < 2 .or. j > 4) .and. .not. (i <= 6 .and. j >= 6 .and. j <= 8) .and. g(i, j) /= 0) &
        error stop 'a 2-d put wrote outside its section'
    end do
  end do
  if (any(g(1:6, 6:8) /= -1d0)) error stop 'block put'

  ! ---- sync memory ends the segment too: puts to our own image are complete after it
  v(50)[me] = 77
  sync memory
  if (v(50) /= 77) error stop 'sync memory did not complete a put to this image'

  sync all
  if (me == 1) print '(a,i0,a)', 'caf_segments: ', n, ' images ok'
end program caf_segments
