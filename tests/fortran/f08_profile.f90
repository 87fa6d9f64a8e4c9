! use mpi_f08: the profiling interface of the f08 specifics (MPI 4.1, 15.2 and Table 19.1). This
! program defines MPI_Send_f08ts (a procedure with a choice buffer: "ts", subarrays supported)
! and MPI_Comm_size_f08 itself, counting the calls and passing them on to PMPI_Send and
! PMPI_Comm_size; every MPI_Send and MPI_Comm_size the program makes must go through them, and
! still work. Run on 2 ranks.
module prof_counts
  implicit none
  integer :: sends = 0, sent = 0, sizes = 0
end module prof_counts

program f08_profile
  use mpi_f08
  use prof_counts
  use ftest, only : ftest_fail
  implicit none
  integer :: rank, nproc, i, got(3)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc)
  if (sizes /= 1 .or. nproc /= 2) call ftest_fail('f08_profile.f90', 'MPI_Comm_size_f08 not intercepted')
  do i = 1, 3
    if (rank == 0) then
      call MPI_Send([i, 2 * i, 3 * i], 3, MPI_INTEGER, 1, i, MPI_COMM_WORLD)
    else
      call MPI_Recv(got, 3, MPI_INTEGER, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      if (any(got /= [i, 2 * i, 3 * i])) call ftest_fail('f08_profile.f90', 'intercepted send delivered wrong data')
    end if
  end do
  if (rank == 0 .and. (sends /= 3 .or. sent /= 9)) call ftest_fail('f08_profile.f90', 'MPI_Send_f08ts not intercepted')
  if (rank == 1 .and. sends /= 0) call ftest_fail('f08_profile.f90', 'sends counted on the receiver')
  call MPI_Finalize()
  if (rank == 0) write (*, '(a)') 'f08_profile: ok'
end program f08_profile

subroutine MPI_Send_f08ts(buf, count, datatype, dest, tag, comm, ierror)
  use mpi_f08, only_the_interface => MPI_Send_f08ts
  use prof_counts
  implicit none
  type(*), dimension(..), intent(in) :: buf
  integer, intent(in) :: count, dest, tag
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  sends = sends + 1
  sent = sent + count
  call PMPI_Send(buf, count, datatype, dest, tag, comm, ierror)
end subroutine MPI_Send_f08ts

subroutine MPI_Comm_size_f08(comm, size, ierror)
  use mpi_f08, only_the_interface => MPI_Comm_size_f08
  use prof_counts
  implicit none
  type(MPI_Comm), intent(in) :: comm
  integer, intent(out) :: size
  integer, optional, intent(out) :: ierror
  sizes = sizes + 1
  call PMPI_Comm_size(comm, size, ierror)
end subroutine MPI_Comm_size_f08
