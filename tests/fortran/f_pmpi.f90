! use mpi + C: PMPI interposition of a Fortran entry point.  f_pmpi_c.c defines mpi_barrier_,
! which counts the calls and passes them on to the library's pmpi_barrier_; every
! MPI_Barrier this program calls must go through it, and still be a barrier.
program f_pmpi
  use mpi
  use ftest
  implicit none
  interface
    subroutine get_count(n)
      integer :: n
    end subroutine get_count
  end interface
  integer :: ierr, rank, n, calls, i, val, flagged
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  call get_count(calls)
  if (calls /= 0) call fail('barrier counted before any barrier')

  ! First barrier: the wrapper returns the library's ierr.
  ierr = -1
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) call fail('ierr of the wrapped barrier')
  call get_count(calls)
  if (calls /= 1) call fail('first barrier not counted by the wrapper')

  ! Second barrier, which must still synchronise: rank 0 sends only after it, and no rank may
  ! have seen the message before entering it.
  flagged = 0
  if (rank == 1) then
    call MPI_Iprobe(0, 9, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
    if (flag) flagged = 1
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. n > 1) then
    call MPI_Send(rank, 1, MPI_INTEGER, 1, 9, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    if (flagged /= 0) call fail('message seen before the barrier')
    call MPI_Recv(val, 1, MPI_INTEGER, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end if
  call get_count(calls)
  if (calls /= 2) call fail('second barrier not counted by the wrapper')

  ! Other calls are not counted.
  do i = 1, 3
    call MPI_Allreduce(rank, val, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  call get_count(calls)
  if (calls /= 2) call fail('calls other than MPI_Barrier counted')

  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    call ftest_fail('f_pmpi.f90', what)
  end subroutine fail

end program f_pmpi
