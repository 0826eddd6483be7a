! fail_unsupported.f90 — an unsupported feature fails loudly: a coindexed reference whose vector
! subscript is itself a strided section, which gfortran 12 passes wrongly (nvec = extent / stride,
! the index array read as if contiguous), so libcaf_rmx refuses it rather than read the wrong
! elements.  test_caf.c expects a failure status and the entry point named on stderr.
program fail_unsupported
  implicit none
  integer :: v(4)[*], w(2), idx(4)
  v = this_image()
  idx = [1, 2, 3, 4]
  sync all
  w = v(idx(1:4:2))[1 + mod(this_image(), num_images())]
  print *, 'not reached', w
end program fail_unsupported
