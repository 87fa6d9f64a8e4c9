! use mpi: collectives from Fortran -- MPI_Allreduce with MPI_IN_PLACE (INTEGER MPI_SUM, DOUBLE
! PRECISION MPI_MAX), MPI_Reduce with MPI_MAXLOC on MPI_2INTEGER, MPI_Bcast of a CHARACTER
! string, MPI_Gather with MPI_IN_PLACE at the root, MPI_Allgather, MPI_Alltoall, MPI_Scan,
! MPI_Barrier, MPI_Iallreduce + MPI_Wait, LOGICAL MPI_LAND / MPI_LOR.  Any number of ranks.
program f90_coll
  use mpi
  use ftest
  implicit none
  integer :: ierr, rank, n, i, r, root, req, best, bestrank
  integer :: ia(3), pairs(2, 2), gath(2, 0:63), sbuf(0:63), rbuf(0:63), val
  double precision :: da(2)
  character(len=20) :: str
  logical :: la(3), lo(3)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  if (n > 64) call fail('at most 64 ranks')

  ! Allreduce in place: INTEGER sum and DOUBLE PRECISION max.
  do i = 1, 3
    ia(i) = rank + 10 * i
  end do
  call MPI_Allreduce(MPI_IN_PLACE, ia, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, 3
    if (ia(i) /= n * (n - 1) / 2 + 10 * i * n) call fail('allreduce in place integer sum')
  end do
  da(1) = -dble(rank)
  da(2) = 2.5d0 * rank
  call MPI_Allreduce(MPI_IN_PLACE, da, 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (abs(da(1)) > 0d0 .or. abs(da(2) - 2.5d0 * (n - 1)) > 0d0) &
    call fail('allreduce in place double max')

  ! Reduce MAXLOC on pairs (value, rank) to the last rank; ties go to the lowest rank.
  root = n - 1
  pairs(1, 1) = (rank + 1) * (n - rank)
  pairs(2, 1) = rank
  pairs(1, 2) = mod(rank, 2) * 5
  pairs(2, 2) = rank
  gath = -1
  call MPI_Reduce(pairs, gath, 2, MPI_2INTEGER, MPI_MAXLOC, root, MPI_COMM_WORLD, ierr)
  if (rank == root) then
    best = -1
    bestrank = -1
    do r = 0, n - 1
      if ((r + 1) * (n - r) > best) then
        best = (r + 1) * (n - r)
        bestrank = r
      end if
    end do
    if (gath(1, 0) /= best .or. gath(2, 0) /= bestrank) call fail('maxloc (value, rank)')
    if (n > 1 .and. (gath(1, 1) /= 5 .or. gath(2, 1) /= 1)) call fail('maxloc tie to the lowest rank')
  end if

  ! Bcast of a CHARACTER(len=20) string from rank 1.
  root = min(1, n - 1)
  str = repeat('x', 20)
  if (rank == root) str = 'Hello, Fortran MPI!'
  call MPI_Bcast(str, 20, MPI_CHARACTER, root, MPI_COMM_WORLD, ierr)
  if (str /= 'Hello, Fortran MPI!' .or. str(20:20) /= ' ') call fail('bcast character')

  ! Gather of 2 INTEGERs per rank; the root's own block is already in place.
  gath = -1
  if (rank == root) then
    gath(1, rank) = 10 * rank + 1
    gath(2, rank) = 10 * rank + 2
    call MPI_Gather(MPI_IN_PLACE, 2, MPI_INTEGER, gath, 2, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    do r = 0, n - 1
      if (gath(1, r) /= 10 * r + 1 .or. gath(2, r) /= 10 * r + 2) call fail('gather in place')
    end do
  else
    pairs(1, 1) = 10 * rank + 1
    pairs(2, 1) = 10 * rank + 2
    call MPI_Gather(pairs, 2, MPI_INTEGER, gath, 2, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  end if

  ! Allgather and Alltoall.
  val = 3 * rank + 1
  rbuf = -1
  call MPI_Allgather(val, 1, MPI_INTEGER, rbuf, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do r = 0, n - 1
    if (rbuf(r) /= 3 * r + 1) call fail('allgather')
  end do
  do r = 0, n - 1
    sbuf(r) = 100 * rank + r
  end do
  rbuf = -1
  call MPI_Alltoall(sbuf, 1, MPI_INTEGER, rbuf, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do r = 0, n - 1
    if (rbuf(r) /= 100 * r + rank) call fail('alltoall')
  end do

  ! Scan: inclusive prefix sums of rank+1.
  val = rank + 1
  r = -1
  call MPI_Scan(val, r, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (r /= (rank + 1) * (rank + 2) / 2) call fail('scan')

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) call fail('barrier ierr')

  ! Nonblocking allreduce.
  val = 2 * rank + 1
  r = -1
  call MPI_Iallreduce(val, r, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (req /= MPI_REQUEST_NULL) call fail('request not null after wait')
  if (r /= n * n) call fail('iallreduce')

  ! LOGICAL reductions.
  la(1) = rank /= min(1, n - 1)   ! false on one rank only
  la(2) = .true.
  la(3) = rank == n - 1           ! true on one rank only
  lo = la(3) .eqv. la(2)
  call MPI_Allreduce(la, lo, 3, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  if (lo(1) .or. .not. lo(2) .or. (lo(3) .neqv. (n == 1))) call fail('logical land')
  lo = .not. la
  call MPI_Allreduce(la, lo, 3, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  if ((lo(1) .neqv. (n > 1)) .or. .not. lo(2) .or. .not. lo(3)) call fail('logical lor')
  la = .false.
  call MPI_Allreduce(MPI_IN_PLACE, la, 3, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  if (any(la)) call fail('logical lor of .false.')

  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    call ftest_fail('f90_coll.f90', what)
  end subroutine fail

end program f90_coll
