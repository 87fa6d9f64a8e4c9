! What every Fortran test prints on a wrong result before it aborts the job:
! "FAIL <file>: rank <r>: <what>" (the tests' CMake fails a run whose output has "FAIL").
module ftest
  implicit none
  private
  public :: ftest_fail
contains
  subroutine ftest_fail(file, what)
    use mpi, only : MPI_COMM_WORLD, MPI_Comm_rank, MPI_Abort
    character(len=*), intent(in) :: file, what
    integer :: rank, ierr
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    write (*, '(a,i0,a)') 'FAIL ' // file // ': rank ', rank, ': ' // what
    flush (6)
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end subroutine ftest_fail
end module ftest
