! use mpi_f08: handle types and their comparison, TYPE(MPI_Status), the optional ierror, the
! sentinels (MPI_STATUS(ES)_IGNORE, MPI_IN_PLACE), arrays of requests, a user reduction with the
! f08 interface (C_PTR arguments), nonblocking collectives, one-sided communication with fence,
! the f2f08 status conversions, and a strided section sent by a blocking call. Run on 2-4 ranks.
module f08_ops
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
contains
  ! Concatenation of decimal numbers held as pairs (value, 10**digits): associative, not
  ! commutative, so the order of the ranks is checked too.
  subroutine concat(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:, :), b(:, :)
    if (datatype /= MPI_2INTEGER) return
    call c_f_pointer(invec, a, [2, len])
    call c_f_pointer(inoutvec, b, [2, len])
    b(1, :) = a(1, :) * b(2, :) + b(1, :)
    b(2, :) = a(2, :) * b(2, :)
  end subroutine concat
end module f08_ops

program f08_basic
  use mpi_f08
  use f08_ops
  use ftest
  implicit none
  integer :: rank, size, ierr, i, n, peer, count
  integer :: sums(3), expect
  ! buffers of nonblocking calls: ASYNCHRONOUS (MPI 4.1, 19.1.17), or the compiler may keep them in
  ! registers across the waits
  integer, asynchronous :: buf(10), got(10)
  integer :: grid(4, 5), col(5)
  double precision :: t0
  type(MPI_Status) :: status, st2
  type(MPI_Request) :: reqs(4)
  type(MPI_Comm) :: dup, half
  type(MPI_Op) :: op
  type(MPI_Win) :: win
  integer :: fstat(MPI_STATUS_SIZE)
  integer, target :: winbuf(4)
  integer(kind=MPI_ADDRESS_KIND) :: winsize
  logical :: flag, ltrue, lfalse
  type(MPI_Info) :: info
  character(len=MPI_MAX_INFO_VAL) :: value
  integer(kind=MPI_COUNT_KIND) :: bigcount, lb, extent

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Comm_size with ierror')
  if (size < 2) call fail('needs at least 2 ranks')
  t0 = MPI_Wtime()

  ! point to point with a status, then with MPI_STATUS_IGNORE
  if (rank == 0) then
    buf = [(i, i = 1, 10)]
    call MPI_Send(buf, 10, MPI_INTEGER, 1, 7, MPI_COMM_WORLD)
    call MPI_Send(buf, 3, MPI_INTEGER, 1, 8, MPI_COMM_WORLD)
  else if (rank == 1) then
    got = 0
    call MPI_Recv(got, 10, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status)
    if (status%MPI_SOURCE /= 0 .or. status%MPI_TAG /= 7) call fail('status source/tag')
    call MPI_Get_count(status, MPI_INTEGER, count)
    if (count /= 10 .or. any(got /= [(i, i = 1, 10)])) call fail('received data or count')
    call MPI_Recv(got, 10, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    if (any(got(1:3) /= [1, 2, 3])) call fail('receive with MPI_STATUS_IGNORE')
    ! the sentinel was recognised, not written as a status
    if (MPI_STATUS_IGNORE%MPI_TAG /= 0 .or. MPI_STATUS_IGNORE%MPI_SOURCE /= 0) call fail('MPI_STATUS_IGNORE written')
    ! the status converted to the INTEGER form and back
    call MPI_Status_f082f(status, fstat)
    if (fstat(MPI_SOURCE) /= 0 .or. fstat(MPI_TAG) /= 7) call fail('MPI_Status_f082f')
    call MPI_Status_f2f08(fstat, st2)
    if (st2%MPI_TAG /= 7) call fail('MPI_Status_f2f08')
  end if

  ! a ring of nonblocking exchanges: an array of TYPE(MPI_Request), MPI_STATUSES_IGNORE
  peer = mod(rank + 1, size)
  buf = rank
  got = -1
  call MPI_Irecv(got, 10, MPI_INTEGER, mod(rank + size - 1, size), 3, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(buf, 10, MPI_INTEGER, peer, 3, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs(1:2), MPI_STATUSES_IGNORE)
  if (any(got /= mod(rank + size - 1, size))) call fail('ring exchange')
  if (reqs(1) /= MPI_REQUEST_NULL .or. reqs(2) /= MPI_REQUEST_NULL) call fail('requests not set to null')

  ! indices into an array of requests count from 1 (MPI_Waitany, MPI_Waitsome)
  got = -1
  do i = 1, 3
    call MPI_Irecv(got(i), 1, MPI_INTEGER, mod(rank + size - 1, size), 20 + i, MPI_COMM_WORLD, reqs(i))
  end do
  reqs(4) = MPI_REQUEST_NULL
  call MPI_Send(rank, 1, MPI_INTEGER, peer, 22, MPI_COMM_WORLD)
  ! (the peer may have sent 21 and 23 too by now: whichever completed, its position counts from 1)
  call MPI_Waitany(4, reqs, n, status)
  if (n < 1 .or. n > 3) call fail('MPI_Waitany index out of 1..3')
  if (status%MPI_TAG /= 20 + n) call fail('MPI_Waitany index (1-based) does not match the tag')
  if (reqs(n) /= MPI_REQUEST_NULL .or. got(n) /= mod(rank + size - 1, size)) call fail('MPI_Waitany request/data')
  call MPI_Send(rank, 1, MPI_INTEGER, peer, 21, MPI_COMM_WORLD)
  call MPI_Send(rank, 1, MPI_INTEGER, peer, 23, MPI_COMM_WORLD)
  count = 1
  do while (count < 3)
    call MPI_Waitsome(4, reqs, n, sums, MPI_STATUSES_IGNORE)
    if (n == MPI_UNDEFINED) call fail('MPI_Waitsome found no active request')
    do i = 1, n
      if (sums(i) < 1 .or. sums(i) > 3) call fail('MPI_Waitsome index (1-based)')
      if (got(sums(i)) /= mod(rank + size - 1, size)) call fail('MPI_Waitsome data at its index')
    end do
    count = count + n
  end do
  call MPI_Waitany(4, reqs, n, status)
  if (n /= MPI_UNDEFINED) call fail('MPI_Waitany on inactive requests did not give MPI_UNDEFINED')

  ! MPI_IN_PLACE reduction and a user reduction (non-commutative: ranks in order)
  sums = [rank, 1, 2 * rank]
  call MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (sums(1) /= size * (size - 1) / 2 .or. sums(2) /= size .or. sums(3) /= size * (size - 1)) &
    call fail('MPI_IN_PLACE allreduce')
  call MPI_Op_create(concat, .false., op)
  call MPI_Allreduce([rank + 1, 10], sums(1:2), 1, MPI_2INTEGER, op, MPI_COMM_WORLD)
  expect = 0
  do i = 1, size
    expect = 10 * expect + i
  end do
  if (sums(1) /= expect .or. sums(2) /= 10**size) call fail('user reduction (ranks in order)')
  call MPI_Op_free(op)
  if (op /= MPI_OP_NULL) call fail('MPI_Op_free did not set MPI_OP_NULL')

  ! communicators: dup, split, compare, free
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_split(dup, mod(rank, 2), -rank, half)
  call MPI_Comm_size(half, n)
  if (n /= (size + 1 - mod(rank, 2)) / 2) call fail('split size')
  call MPI_Comm_free(half)
  if (half /= MPI_COMM_NULL) call fail('MPI_Comm_free did not set MPI_COMM_NULL')

  ! nonblocking collectives
  n = merge(42, 0, rank == 0)
  call MPI_Ibcast(n, 1, MPI_INTEGER, 0, dup, reqs(1))
  call MPI_Iallreduce(rank, sums(1), 1, MPI_INTEGER, MPI_MAX, dup, reqs(2))
  call MPI_Waitall(2, reqs(1:2), MPI_STATUSES_IGNORE)
  if (n /= 42 .or. sums(1) /= size - 1) call fail('nonblocking collectives')
  call MPI_Comm_free(dup)

  ! one-sided: each rank puts its rank into slot 1 of the next rank's window
  winbuf = -1
  winsize = 4 * 4
  call MPI_Win_create(winbuf, winsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Win_fence(0, win)
  call MPI_Put(rank, 1, MPI_INTEGER, peer, 1_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  if (winbuf(2) /= mod(rank + size - 1, size) .or. winbuf(1) /= -1) call fail('MPI_Put with fence')
  call MPI_Win_free(win)

  ! large-count forms: the generic takes INTEGER(KIND=MPI_COUNT_KIND) counts; the extent query,
  ! whose two forms no argument tells apart, is MPI_Type_get_extent_c
  if (rank == 0) then
    buf = [(100 + i, i = 1, 10)]
    call MPI_Send(buf, 10_MPI_COUNT_KIND, MPI_INTEGER, 1, 11, MPI_COMM_WORLD)
  else if (rank == 1) then
    call MPI_Recv(got, 10_MPI_COUNT_KIND, MPI_INTEGER, 0, 11, MPI_COMM_WORLD, status)
    call MPI_Get_count(status, MPI_INTEGER, bigcount)
    if (bigcount /= 10_MPI_COUNT_KIND .or. any(got /= [(100 + i, i = 1, 10)])) call fail('large-count send/recv')
  end if
  call MPI_Type_get_extent_c(MPI_DOUBLE_PRECISION, lb, extent)
  if (lb /= 0 .or. extent /= 8) call fail('MPI_Type_get_extent_c')

  ! a strided section sent by a blocking call (copied in by the compiler)
  grid = reshape([(i, i = 1, 20)], [4, 5])
  if (rank == 0) then
    call MPI_Send(grid(2, :), 5, MPI_INTEGER, 1, 9, MPI_COMM_WORLD)
  else if (rank == 1) then
    call MPI_Recv(col, 5, MPI_INTEGER, 0, 9, MPI_COMM_WORLD, status)
    if (any(col /= grid(2, :))) call fail('strided section')
  end if

  ! the bindings told the C library their LOGICAL values and type sizes when they were loaded
  call MPI_Abi_get_fortran_booleans(4, ltrue, lfalse, flag)
  if (.not. flag .or. .not. ltrue .or. lfalse) call fail('MPI_Abi_get_fortran_booleans')
  call MPI_Abi_get_fortran_info(info)
  if (info == MPI_INFO_NULL) call fail('MPI_Abi_get_fortran_info gave MPI_INFO_NULL')
  call MPI_Info_get(info, 'mpi_integer_size', MPI_MAX_INFO_VAL, value, flag)
  if (.not. flag .or. value /= '4') call fail('mpi_integer_size of MPI_Abi_get_fortran_info')
  call MPI_Info_free(info)

  call MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE)
  if (flag) call fail('MPI_Iprobe found a message nobody sent')
  if (MPI_Wtime() < t0) call fail('MPI_Wtime went back')
  call MPI_Finalize(ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Finalize')
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    call ftest_fail('f08_basic.f90', what)
  end subroutine fail
end program f08_basic
