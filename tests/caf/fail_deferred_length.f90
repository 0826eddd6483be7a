! fail_deferred_length.f90 — the one coindexed assignment gfortran 12 gives no length for: an
! expression into a deferred-length character component of another image.  It must fail loudly
! naming the entry point (test_caf.c), never move zero bytes and carry on.
program fail_deferred_length
  implicit none
  type t
    character(len=:), allocatable :: str
  end type
  type(t) :: z[*]
  allocate(character(len=5) :: z%str)
  z%str = 'abcde'
  sync all
  z[1]%str = 'from' // achar(48 + this_image())
  sync all
  print *, 'not reached ', z%str
end program fail_deferred_length
