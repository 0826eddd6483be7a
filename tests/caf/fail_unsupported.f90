! fail_unsupported.f90 — an unsupported feature fails loudly: a coindexed reference with a vector
! subscript.  test_caf.c expects a failure status and the entry point named on stderr.
program fail_unsupported
  implicit none
  integer :: v(4)[*], w(2)
  v = this_image()
  sync all
  w = v([1, 3])[1 + mod(this_image(), num_images())]
  print *, 'not reached', w
end program fail_unsupported
