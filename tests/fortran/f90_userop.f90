! use mpi: user-defined reductions written in Fortran (MPI_Op_create / MPI_Allreduce /
! MPI_Op_free): a commutative op on INTEGERs and a non-commutative one on MPI_2INTEGER pairs,
! whose result shows the order of the operands; attribute caching with keyvals
! (MPI_COMM_NULL_COPY_FN / MPI_COMM_DUP_FN, INTEGER(KIND=MPI_ADDRESS_KIND) values, LOGICAL
! flags); MPI_TAG_UB.  Run at 3 ranks (any count up to 9 works).
module userops
  use mpi
  implicit none
  integer :: op_calls = 0, op_errors = 0
contains
  ! a op b = a + b + a*b = (1+a)(1+b) - 1: commutative and associative, unlike any builtin.
  subroutine prodop(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(len), inoutvec(len)
    integer :: i
    op_calls = op_calls + 1
    if (datatype /= MPI_INTEGER) op_errors = op_errors + 1
    do i = 1, len
      inoutvec(i) = invec(i) + inoutvec(i) + invec(i) * inoutvec(i)
    end do
  end subroutine prodop

  ! Concatenation of decimal digits: (value, ndigits); inoutvec = invec op inoutvec, invec
  ! holding the lower ranks' operand.  Associative, not commutative.
  subroutine catop(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(2, len), inoutvec(2, len)
    integer :: i
    op_calls = op_calls + 1
    if (datatype /= MPI_2INTEGER) op_errors = op_errors + 1
    do i = 1, len
      inoutvec(1, i) = invec(1, i) * 10**inoutvec(2, i) + inoutvec(1, i)
      inoutvec(2, i) = invec(2, i) + inoutvec(2, i)
    end do
  end subroutine catop
end module userops

program f90_userop
  use mpi
  use userops
  use ftest
  implicit none
  integer :: ierr, rank, n, i, r, op, cop, keyval, keyval2, dup
  integer :: a(5), b(5), expect(5), pa(2, 2), pb(2, 2)
  integer(kind=MPI_ADDRESS_KIND) :: aval, extra
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  if (n > 9) call fail('at most 9 ranks')

  call MPI_Op_create(prodop, .true., op, ierr)
  do i = 1, 5
    a(i) = mod(rank + i, 4)
    expect(i) = 1
    do r = 0, n - 1
      expect(i) = expect(i) * (1 + mod(r + i, 4))
    end do
    expect(i) = expect(i) - 1
  end do
  b = -1
  call MPI_Allreduce(a, b, 5, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  do i = 1, 5
    if (b(i) /= expect(i)) call fail('commutative user op result')
  end do
  call MPI_Op_free(op, ierr)
  if (op /= MPI_OP_NULL) call fail('op_free: handle not MPI_OP_NULL')

  call MPI_Op_create(catop, .false., cop, ierr)
  pa(:, 1) = (/ rank + 1, 1 /)            ! digits 1 2 3 ... n in rank order
  pa(:, 2) = (/ n - rank, 1 /)            ! digits n ... 1
  pb = -1
  call MPI_Allreduce(pa, pb, 2, MPI_2INTEGER, cop, MPI_COMM_WORLD, ierr)
  expect(1:2) = 0
  do r = 0, n - 1
    expect(1) = expect(1) * 10 + r + 1
    expect(2) = expect(2) * 10 + n - r
  end do
  if (pb(2, 1) /= n .or. pb(2, 2) /= n) call fail('non-commutative op: digit count')
  if (pb(1, 1) /= expect(1) .or. pb(1, 2) /= expect(2)) call fail('non-commutative op: operand order')
  call MPI_Op_free(cop, ierr)
  if (op_errors /= 0) call fail('user op called with a wrong datatype')
  call MPI_Allreduce(op_calls, r, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (n > 1 .and. r == 0) call fail('user ops never called')

  ! Keyvals: a 64-bit attribute value, not copied (NULL_COPY_FN) or copied (DUP_FN) by a dup.
  extra = 0
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, keyval, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval2, extra, ierr)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, 123456789012_MPI_ADDRESS_KIND + rank, ierr)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, keyval2, -77_MPI_ADDRESS_KIND, ierr)
  aval = 0
  flag = .false.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, aval, flag, ierr)
  if (.not. flag) call fail('get_attr flag of an attribute set')
  if (aval /= 123456789012_MPI_ADDRESS_KIND + rank) call fail('get_attr value (64 bits)')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  flag = .true.
  call MPI_Comm_get_attr(dup, keyval, aval, flag, ierr)
  if (flag) call fail('attribute with MPI_COMM_NULL_COPY_FN copied by dup')
  flag = .false.
  aval = 0
  call MPI_Comm_get_attr(dup, keyval2, aval, flag, ierr)
  if (.not. flag .or. aval /= -77) call fail('attribute with MPI_COMM_DUP_FN not copied by dup')
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval, ierr)
  flag = .true.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, aval, flag, ierr)
  if (flag) call fail('get_attr flag after delete_attr')
  call MPI_Comm_free_keyval(keyval, ierr)
  if (keyval /= MPI_KEYVAL_INVALID) call fail('free_keyval: handle not MPI_KEYVAL_INVALID')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval2, ierr)
  call MPI_Comm_free_keyval(keyval2, ierr)

  ! A predefined attribute.
  flag = .false.
  aval = 0
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag, ierr)
  if (.not. flag) call fail('MPI_TAG_UB: flag .false.')
  if (aval < 32767) call fail('MPI_TAG_UB below 32767')

  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    call ftest_fail('f90_userop.f90', what)
  end subroutine fail

end program f90_userop
