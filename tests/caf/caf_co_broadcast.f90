! caf_co_broadcast.f90 — CO_BROADCAST of derived types with allocatable components (gfortran 12
! broadcasts each allocated component through a descriptor whose span it leaves unset: it must
! not be trusted), of mixed scalar / allocatable components, of a derived type with array,
! character and complex components, of character scalars and arrays, of strided sections, of a
! pointer array whose span differs from its element size, and of an argument larger than one
! scratch slot.  Mirrors OpenCoarrays' co_broadcast_alloc_mixed, co_broadcast_allocatable_
! components and co_broadcast_derived_type, whose answers are the expected values here.
program caf_co_broadcast
  implicit none
  type nsas_t
    integer :: i
    integer, allocatable :: j
  end type
  type asas_t
    integer, allocatable :: i
    integer, allocatable :: j
  end type
  type nsaa_t
    integer :: i
    integer, allocatable :: j(:)
  end type
  type naaa_t
    integer :: i(3)
    integer, allocatable :: j(:)
  end type
  type dynamic
    character(len=4), allocatable :: string_array(:)
    complex, allocatable :: scalar
    integer, allocatable :: vector(:)
    logical, allocatable :: matrix(:,:)
    real, allocatable :: superstring(:,:,:, :,:,:, :,:,:, :,:,:, :,:,:)
  end type
  type component
    integer :: subcomponent = 0
  end type
  type child
    integer :: heritable = 0
    type(component) :: a, b(1,2,1, 1,1,1, 1)
    character(len=4) :: c = '', z(0)
    complex :: i = (0., 0.), j(1) = (0., 0.)
    integer :: k = 0, l(2,3) = 0
    logical :: r = .false., s(1,2,3, 1,2,3, 1) = .false.
    real :: t = 0., u(3,2,1) = 0.
  end type
  type rec
    integer :: id
    real(8) :: w(3)
    character(len=4) :: tag
  end type
  type big_t
    real(8) :: x(300000) ! 2.4 MB: more than one scratch slot, moved in pieces
    integer :: tail
  end type
  type(nsas_t) :: nsas
  type(asas_t) :: asas
  type(nsaa_t) :: nsaa
  type(naaa_t) :: naaa
  type(dynamic) :: msg, content
  type(child) :: message, expect
  type(rec) :: recs(4)
  type(rec), target :: pick(5)
  type(big_t), allocatable :: big
  type(nsaa_t), allocatable :: arr(:)
  integer, allocatable :: odd(:)
  integer, pointer :: ids(:)
  character(len=6) :: word, words(3)
  character(len=3, kind=4) :: wide
  integer :: me, n, i, st, grid(6, 5)
  real(8) :: ra(8)

  me = this_image(); n = num_images()

  ! ---- mixtures of scalar and allocatable components (OpenCoarrays issue #727)
  if (me == 1) then
    nsas = nsas_t(2, 3)
    asas = asas_t(4, 5)
    nsaa = nsaa_t(6, [7, 8])
    naaa = naaa_t([9, 10, 11], [12, 13, 14, 15])
  else
    allocate(nsas%j); nsas%i = -1; nsas%j = -1
    allocate(asas%i, asas%j); asas%i = -1; asas%j = -1
    allocate(nsaa%j(2)); nsaa%i = -1; nsaa%j = -1
    allocate(naaa%j(4)); naaa%i = -1; naaa%j = -1
  end if
  call co_broadcast(nsas, 1)
  if (nsas%i /= 2 .or. nsas%j /= 3) error stop 'nsas: scalar and allocatable scalar'
  call co_broadcast(asas, 1)
  if (asas%i /= 4 .or. asas%j /= 5) error stop 'asas: two allocatable scalars'
  call co_broadcast(nsaa, 1)
  if (nsaa%i /= 6 .or. any(nsaa%j /= [7, 8])) error stop 'nsaa: scalar and allocatable array'
  ! (gfortran 12 drops STAT= here: it passes none with the per-component calls it makes)
  call co_broadcast(naaa, 1)
  if (any(naaa%i /= [9, 10, 11]) .or. any(naaa%j /= [12, 13, 14, 15])) error stop 'naaa: array and allocatable array'
  ! the same from a fresh stack frame over dirtied stack: the span gfortran leaves unset is then
  ! large garbage, which crashed when trusted
  call dirty_stack()
  call bcast_in_subroutine()
  if (me == 1) print '(a,*(1x,i0))', 'mixed:', nsas%i, nsas%j, asas%i, asas%j, nsaa%i, nsaa%j, naaa%i, naaa%j

  ! ---- an allocatable array of them (gfortran 12 walks an uninitialized descriptor for a
  !      non-allocatable array of such a type, so only this kind of array can be tested)
  allocate(arr(3))
  do i = 1, 3
    arr(i)%i = me * 10 + i
    allocate(arr(i)%j(i))
    arr(i)%j = -me
  end do
  call co_broadcast(arr, n)
  do i = 1, 3
    if (arr(i)%i /= n * 10 + i .or. any(arr(i)%j /= -n)) error stop 'allocatable array of a type with allocatable components'
  end do

  ! ---- allocatable components of every intrinsic type and up to rank 15, from the last image
  content = dynamic(string_array=['text', 'more'], scalar=(0., 1.), vector=[integer ::], &
                    matrix=reshape([.true., .false., .true.], [1, 3]), &
                    superstring=reshape([1, 2, 3, 4], [2,1,2, 1,1,1, 1,1,1, 1,1,1, 1,1,1]))
  msg = content
  if (me /= n) then
    msg%string_array = 'xxxx'
    msg%scalar = (9., 9.)
    msg%matrix = .false.
    msg%superstring = 0
  end if
  call co_broadcast(msg, source_image=n)
  if (any(msg%string_array /= content%string_array)) error stop 'dynamic: character array'
  if (msg%scalar /= content%scalar) error stop 'dynamic: complex scalar'
  if (size(msg%vector) /= 0) error stop 'dynamic: empty vector'
  if (any(msg%matrix .neqv. content%matrix)) error stop 'dynamic: logical matrix'
  if (any(msg%superstring /= content%superstring)) error stop 'dynamic: rank 15'
  if (me == 1) print '(a,2(1x,a),2f4.0,3l2,4f4.0)', 'dynamic:', msg%string_array, msg%scalar, &
                     msg%matrix, msg%superstring

  ! ---- a derived type of array, character, complex, logical and derived components
  expect = child(heritable=-4, a=component(-3), b=reshape([component(-2), component(-1)], [1,2,1, 1,1,1, 1]), &
                 c='text', z=[character(len=4) ::], i=(0., 1.), j=(2., 3.), k=4, l=5, r=.true., s=.true., &
                 t=7., u=8.)
  if (me == 1) message = expect
  call co_broadcast(message, source_image=1)
  if (message%heritable /= -4 .or. message%a%subcomponent /= -3) error stop 'child: integers'
  if (any(message%b%subcomponent /= expect%b%subcomponent)) error stop 'child: derived array'
  if (message%c /= 'text' .or. message%i /= (0., 1.) .or. any(message%j /= (2., 3.))) error stop 'child: character, complex'
  if (message%k /= 4 .or. any(message%l /= 5) .or. .not. message%r .or. .not. all(message%s)) error stop 'child: integer, logical'
  if (message%t /= 7. .or. any(message%u /= 8.)) error stop 'child: real'

  ! ---- an array of derived type from a middle image, and a strided section of it
  recs = [(rec(10 * me + i, [real(me, 8), real(i, 8), 0d0], 'r' // achar(48 + me)), i = 1, 4)]
  call co_broadcast(recs, source_image=(n + 1) / 2)
  do i = 1, 4
    if (recs(i)%id /= 10 * ((n + 1) / 2) + i .or. recs(i)%tag /= 'r' // achar(48 + (n + 1) / 2)) error stop 'derived array'
  end do
  recs%id = me
  call co_broadcast(recs(4:1:-3), 2)
  if (any(recs%id /= [2, me, me, 2])) error stop 'derived array, negative stride'

  ! ---- a pointer array whose elements are 16+ bytes apart (span is real here)
  pick = [(rec(me * 100 + i, 0d0, 'p'), i = 1, 5)]
  ids => pick(1:5:2)%id
  call co_broadcast(ids, n)
  if (any(pick%id /= [n * 100 + 1, me * 100 + 2, n * 100 + 3, me * 100 + 4, n * 100 + 5])) error stop 'pointer with span'
  pick%id = me
  ids => pick(4:1:-3)%id ! negative stride, remapped bounds
  ids(0:1) => pick(4:1:-3)%id
  call co_broadcast(ids, 1)
  if (any(pick%id /= [1, me, me, 1, me])) error stop 'pointer with span, negative stride'

  ! ---- character scalars and arrays, kind 1 and kind 4
  write (word, '(a,i0)') 'image', me
  call co_broadcast(word, 2)
  if (word /= 'image2') error stop 'character scalar'
  words = [character(len=6) :: 'a', 'bb', 'ccc']
  if (me /= 1) words = 'zzzzzz'
  call co_broadcast(words(2:3), 1)
  if (words(2) /= 'bb' .or. words(3) /= 'ccc') error stop 'character array'
  if (me /= 1 .and. words(1) /= 'zzzzzz') error stop 'character array: outside the section'
  wide = 4_'w' // char(int(z'4E2D') + me, kind=4) // 4_'!'
  call co_broadcast(wide, n)
  if (wide /= 4_'w' // char(int(z'4E2D') + n, kind=4) // 4_'!') error stop 'character kind 4'
  if (me == 1) print '(4a)', 'character: ', word, words(2:3)

  ! ---- a two-dimensional section, and a real array
  grid = me
  call co_broadcast(grid(2:5:3, 1:5:2), 1)
  if (any(grid(2:5:3, 1:5:2) /= 1)) error stop 'section of a matrix'
  if (me /= 1 .and. (any(grid(1, :) /= me) .or. any(grid(2:5:3, 2:4:2) /= me))) error stop 'matrix outside the section'
  ra = [(me * i, i = 1, 8)]
  st = -1
  call co_broadcast(ra, n, stat=st)
  if (st /= 0) error stop 'real array: stat'
  if (any(ra /= [(n * i, i = 1, 8)])) error stop 'real array'

  ! ---- a scalar larger than a scratch slot
  allocate(big)
  big%x = [(real(me, 8) * i, i = 1, size(big%x))]
  big%tail = me
  call co_broadcast(big, n)
  if (big%tail /= n) error stop 'big scalar: tail'
  if (any(big%x /= [(real(n, 8) * i, i = 1, size(big%x))])) error stop 'big scalar'

  ! ---- allocatable components allocated nowhere: gfortran passes a null base address (and for
  !      an array stale bounds); nothing moves
  call bcast_unallocated()
  ! ---- a non-conforming size elsewhere than on the source is reported, and left unchanged
  allocate(odd(merge(3, 2, me == 1)))
  odd = me
  call co_broadcast(odd, 1, stat=st)
  if (me == 1 .and. st /= 0) error stop 'size mismatch: the source must succeed'
  if (me /= 1 .and. (st == 0 .or. any(odd /= me))) error stop 'size mismatch must be reported, A unchanged'

  ! ---- a bad SOURCE_IMAGE is reported through STAT=
  call co_broadcast(word, n + 1, stat=st)
  if (st == 0) error stop 'co_broadcast with a bad source_image must fail'

  sync all
  if (me == 1) print '(a)', 'Test passed.'
contains
  subroutine dirty_stack()
    integer(8), volatile :: junk(512)
    junk = 2_8**40 + 3
    if (junk(512) /= 2_8**40 + 3) error stop 'dirty_stack'
  end subroutine
  subroutine bcast_unallocated()
    type(asas_t) :: none
    type(nsaa_t) :: empty
    empty%i = me
    call co_broadcast(none, 1)
    call co_broadcast(empty, n)
    if (allocated(none%i) .or. allocated(none%j) .or. allocated(empty%j)) error stop 'unallocated components'
    if (empty%i /= n) error stop 'beside an unallocated component'
  end subroutine
  subroutine bcast_in_subroutine()
    integer :: k
    nsaa%i = me
    nsaa%j(:) = [(me * k, k = 1, 2)]
    naaa%i = me
    naaa%j(:) = [(-me * k, k = 1, 4)]
    call co_broadcast(nsaa, n)
    call co_broadcast(naaa, 1)
    if (nsaa%i /= n .or. any(nsaa%j /= [(n * k, k = 1, 2)])) error stop 'allocatable component in a subroutine'
    if (any(naaa%i /= 1) .or. any(naaa%j /= [(-k, k = 1, 4)])) error stop 'allocatable component in a subroutine (2)'
    nsaa = nsaa_t(6, [7, 8])
    naaa = naaa_t([9, 10, 11], [12, 13, 14, 15])
  end subroutine
end program caf_co_broadcast
