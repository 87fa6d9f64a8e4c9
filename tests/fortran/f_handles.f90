! use mpi + C: Fortran handles and statuses converted in C (MPI_Comm_f2c, MPI_Type_f2c,
! MPI_Status_f2c, and back with the c2f functions), and C handles converted for Fortran
! (MPI_Comm_c2f(MPI_COMM_WORLD) is MPI_COMM_WORLD, ...), and the ignore sentinels of `mpi` and
! mpi_f08 as C sees them (MPI_F_STATUS_IGNORE, ...).  The C half: f_handles_c.c.
program f_handles
  use mpi
  use mpi_f08, only : F08_STATUS_IGNORE => MPI_STATUS_IGNORE, F08_STATUSES_IGNORE => MPI_STATUSES_IGNORE
  use ftest
  implicit none
  interface
    subroutine c_check(comm, dtype, status, res)
      integer :: comm, dtype, status(*), res(12)
    end subroutine c_check
    subroutine c_handles(world, null, integer, sum, dup)
      integer :: world, null, integer, sum, dup
    end subroutine c_handles
    subroutine c_ignore(s, ss, s08, ss08, res)
      integer :: s(*), ss(*), res(7)
      type(*) :: s08, ss08(*)
    end subroutine c_ignore
  end interface
  integer :: ierr, rank, n, rev, t3, next, prev, res(12), fworld, fnull, fint, fsum, fdup, v
  integer :: status(MPI_STATUS_SIZE), ign(7)
  double precision :: sbuf(6), rbuf(6)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)

  ! A communicator of reversed ranks and a derived datatype, made in Fortran.
  call MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, rev, ierr)
  call MPI_Type_contiguous(3, MPI_DOUBLE_PRECISION, t3, ierr)
  call MPI_Type_commit(t3, ierr)
  ! A ring in rev: 2 elements of t3 from the previous rank (of rev), tag 40 + sender's rank.
  next = mod(n - 1 - rank + 1, n)
  prev = mod(n - 1 - rank - 1 + n, n)
  sbuf = 1.5d0 * rank
  rbuf = 0
  call MPI_Sendrecv(sbuf, 2, t3, next, 40 + n - 1 - rank, rbuf, 2, t3, prev, MPI_ANY_TAG, &
                    rev, status, ierr)
  if (status(MPI_SOURCE) /= prev .or. status(MPI_TAG) /= 40 + prev) call fail('status in Fortran')

  call c_check(rev, t3, status, res)
  if (res(1) /= n) call fail('C: MPI_Comm_size of the Fortran communicator')
  if (res(2) /= n - 1 - rank) call fail('C: MPI_Comm_rank of the Fortran communicator')
  if (res(3) /= 24) call fail('C: MPI_Type_size of the Fortran datatype')
  if (res(4) /= prev) call fail('C: MPI_SOURCE of the Fortran status')
  if (res(5) /= 40 + prev) call fail('C: MPI_TAG of the Fortran status')
  if (res(6) /= 2) call fail('C: MPI_Get_count of the Fortran status')
  if (res(7) /= 1) call fail('C: MPI_Comm_c2f(MPI_Comm_f2c(comm)) /= comm')
  if (res(8) /= 1) call fail('C: MPI_Type_c2f(MPI_Type_f2c(type)) /= type')
  if (res(9) /= 1) call fail('C: MPI_Status_c2f(MPI_Status_f2c(status)) /= status')
  if (res(10) /= MPI_STATUS_SIZE) call fail('C: MPI_F_STATUS_SIZE /= MPI_STATUS_SIZE')
  if (res(11) + 1 /= MPI_SOURCE .or. res(12) + 1 /= MPI_TAG) &
    call fail('C: MPI_F_SOURCE / MPI_F_TAG do not match MPI_SOURCE / MPI_TAG')

  call c_handles(fworld, fnull, fint, fsum, fdup)
  if (fworld /= MPI_COMM_WORLD) call fail('MPI_Comm_c2f(MPI_COMM_WORLD)')
  if (fnull /= MPI_COMM_NULL) call fail('MPI_Comm_c2f(MPI_COMM_NULL)')
  if (fint /= MPI_INTEGER) call fail('MPI_Type_c2f(MPI_INTEGER)')
  if (fsum /= MPI_SUM) call fail('MPI_Op_c2f(MPI_SUM)')
  call MPI_Comm_compare(fdup, MPI_COMM_WORLD, v, ierr)
  if (v /= MPI_CONGRUENT) call fail('communicator duplicated in C: not congruent')
  call MPI_Allreduce(rank, v, 1, MPI_INTEGER, MPI_SUM, fdup, ierr)
  if (v /= n * (n - 1) / 2) call fail('allreduce on the communicator made in C')
  call MPI_Comm_free(fdup, ierr)
  if (fdup /= MPI_COMM_NULL) call fail('comm_free of the communicator made in C')

  ! C sees Fortran's ignore sentinels as MPI_F_STATUS(ES)_IGNORE and MPI_F08_STATUS(ES)_IGNORE
  call c_ignore(MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE, F08_STATUS_IGNORE, F08_STATUSES_IGNORE, ign)
  if (any(ign(1:4) /= 1)) call fail('MPI_F_STATUS(ES)_IGNORE / MPI_F08_STATUS(ES)_IGNORE are not Fortran''s sentinels')
  if (ign(5) /= 1) call fail('pmpi_recv_ from C with MPI_F_STATUS_IGNORE')
  if (ign(6) /= 1 .or. ign(7) /= 1) call fail('a status conversion accepted an ignore constant')

  call MPI_Type_free(t3, ierr)
  call MPI_Comm_free(rev, ierr)
  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    call ftest_fail('f_handles.f90', what)
  end subroutine fail

end program f_handles
