! use mpi: MPI_ERRORS_RETURN from Fortran -- erroneous calls return their error code in ierr;
! MPI_Error_class and MPI_Error_string (blank-padded CHARACTER result, resultlen) decode it;
! communication still works afterwards.
program f90_errors
  use mpi
  use ftest
  implicit none
  integer :: ierr, rank, n, cls, res, eh, val, peer
  integer :: status(MPI_STATUS_SIZE)
  character(len=MPI_MAX_ERROR_STRING) :: msg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  if (n < 2) call fail('needs 2 ranks')
  if (n > 99) call fail('rank 99 must not exist')

  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  if (ierr /= MPI_SUCCESS) call fail('set_errhandler')
  call MPI_Comm_get_errhandler(MPI_COMM_WORLD, eh, ierr)
  if (eh /= MPI_ERRORS_RETURN) call fail('get_errhandler: not MPI_ERRORS_RETURN')
  call MPI_Errhandler_free(eh, ierr)
  if (eh /= MPI_ERRHANDLER_NULL) call fail('errhandler_free: handle not MPI_ERRHANDLER_NULL')

  ! A send to a rank that does not exist.
  val = 7
  ierr = MPI_SUCCESS
  call MPI_Send(val, 1, MPI_INTEGER, 99, 0, MPI_COMM_WORLD, ierr)
  if (ierr == MPI_SUCCESS) call fail('send to rank 99 returned MPI_SUCCESS')
  cls = -1
  call MPI_Error_class(ierr, cls, res)
  if (res /= MPI_SUCCESS) call fail('error_class ierr')
  if (cls /= MPI_ERR_RANK) call fail('send to rank 99: class not MPI_ERR_RANK')
  msg = repeat('x', len(msg))
  res = -1
  call MPI_Error_string(ierr, msg, res, cls)
  if (cls /= MPI_SUCCESS) call fail('error_string ierr')
  if (res <= 0 .or. res > MPI_MAX_ERROR_STRING) call fail('error_string resultlen')
  if (len_trim(msg(1:res)) == 0) call fail('error_string: empty message')
  if (res < len(msg)) then
    if (msg(res + 1:) /= ' ') call fail('error_string: not padded with blanks')
  end if

  ! A negative tag; the string of a class.
  ierr = MPI_SUCCESS
  call MPI_Send(val, 1, MPI_INTEGER, 0, -5, MPI_COMM_WORLD, ierr)
  if (ierr == MPI_SUCCESS) call fail('send with tag -5 returned MPI_SUCCESS')
  call MPI_Error_class(ierr, cls, res)
  if (cls /= MPI_ERR_TAG) call fail('send with tag -5: class not MPI_ERR_TAG')
  msg = repeat('x', len(msg))
  call MPI_Error_string(MPI_ERR_RANK, msg, res, ierr)
  if (res <= 0 .or. len_trim(msg) /= res) call fail('error_string of MPI_ERR_RANK')

  ! Communication still works.
  peer = mod(rank + 1, n)
  val = -1
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, peer, 3, val, 1, MPI_INTEGER, &
                    mod(rank - 1 + n, n), 3, MPI_COMM_WORLD, status, ierr)
  if (ierr /= MPI_SUCCESS) call fail('sendrecv after the errors: ierr')
  if (val /= mod(rank - 1 + n, n)) call fail('sendrecv after the errors: data')
  if (status(MPI_SOURCE) /= mod(rank - 1 + n, n) .or. status(MPI_TAG) /= 3) &
    call fail('sendrecv status')

  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    call ftest_fail('f90_errors.f90', what)
  end subroutine fail

end program f90_errors
