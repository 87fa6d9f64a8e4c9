! use mpi_f08: callbacks written in Fortran that the other tests leave out -- a generalized
! request (query, free and cancel functions with their extra state), a large-count reduction
! (MPI_Op_create_c), an error handler on a communicator -- and MPI_Sizeof. Run on 2-3 ranks.
module cb_funcs
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: freed = 0, handled = 0, handled_code = MPI_SUCCESS
  type(MPI_Comm) :: handled_comm
contains
  subroutine query(extra, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    type(MPI_Status) :: status
    integer :: ierror
    status%MPI_SOURCE = int(extra)
    status%MPI_TAG = 77
    status%MPI_ERROR = MPI_SUCCESS
    call MPI_Status_set_elements(status, MPI_INTEGER, 3)
    call MPI_Status_set_cancelled(status, .false.)
    ierror = MPI_SUCCESS
  end subroutine query
  subroutine free_fn(extra, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierror
    freed = int(extra)
    extra = extra + 1
    ierror = MPI_SUCCESS
  end subroutine free_fn
  subroutine cancel_fn(extra, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierror
    if (complete .or. extra < 0) freed = -1
    ierror = MPI_SUCCESS
  end subroutine cancel_fn
  ! the large-count reduction: elementwise max
  subroutine big_max(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer(kind=MPI_COUNT_KIND) :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    if (datatype /= MPI_INTEGER) return
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = max(a, b)
  end subroutine big_max
  subroutine on_error(comm, code)
    type(MPI_Comm) :: comm
    integer :: code
    handled = handled + 1
    handled_comm = comm
    handled_code = code
  end subroutine on_error
end module cb_funcs

program f08_callbacks
  use mpi_f08
  use cb_funcs
  use ftest
  use, intrinsic :: iso_c_binding, only : c_ptr, c_loc, c_intptr_t
  implicit none
  integer :: rank, size, n, cls
  integer, asynchronous :: res(4)
  integer(kind=8) :: i8(3)
  real(kind=4) :: r4
  complex(kind=8) :: c8(2, 2)
  logical :: l, flag
  character(len=3) :: name3 = 'abc'
  type(MPI_Request) :: req, req2
  type(MPI_Win) :: win
  type(MPI_Status) :: status
  type(MPI_Op) :: op
  type(MPI_Comm) :: dup
  type(MPI_Errhandler) :: errh
  integer(kind=1), target :: bsbuf(4096)
  integer, asynchronous :: grid(3, 4)
  type(c_ptr) :: detached
  ! (VOLATILE: the free function changes it behind the compiler's back, through MPI_WAIT)
  integer(kind=MPI_ADDRESS_KIND), volatile :: state

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)

  ! MPI_Sizeof: bytes of one element, whatever the rank of the argument
  call MPI_Sizeof(i8, n)
  if (n /= 8) call fail('MPI_Sizeof integer(8)')
  call MPI_Sizeof(r4, n)
  if (n /= 4) call fail('MPI_Sizeof real(4)')
  call MPI_Sizeof(c8, n)
  if (n /= 16) call fail('MPI_Sizeof complex(8)')
  call MPI_Sizeof(l, n)
  if (n /= 4) call fail('MPI_Sizeof logical')
  call MPI_Sizeof(name3, n)  ! (not numeric: an extension, as MPI_CHARACTER has a size)
  if (n /= 3) call fail('MPI_Sizeof character(len=3)')

  ! a generalized request: the query function fills the status, the free function runs once
  ! (the callbacks get this variable itself, as with MPICH and Open MPI)
  state = 40 + rank
  call MPI_Grequest_start(query, free_fn, cancel_fn, state, req)
  call MPI_Test(req, flag, status)
  if (flag) call fail('generalized request complete before MPI_Grequest_complete')
  call MPI_Grequest_complete(req)
  call MPI_Wait(req, status)
  if (status%MPI_SOURCE /= 40 + rank .or. status%MPI_TAG /= 77) call fail('generalized request status')
  call MPI_Get_count(status, MPI_INTEGER, n)
  if (n /= 3) call fail('generalized request count')
  if (freed /= 40 + rank) call fail('generalized request free function')
  if (state /= 41 + rank) call fail('the free function did not see the caller''s EXTRA_STATE')
  if (req /= MPI_REQUEST_NULL) call fail('generalized request not set to null')

  ! a large-count reduction written in Fortran
  call MPI_Op_create_c(big_max, .true., op)
  call MPI_Allreduce([rank, -rank, 7, rank * rank], res, 4, MPI_INTEGER, op, MPI_COMM_WORLD)
  if (any(res /= [size - 1, 0, 7, (size - 1)**2])) call fail('MPI_Op_create_c reduction')
  call MPI_Op_free(op)

  ! an error handler written in Fortran, called with the communicator and the code
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_create_errhandler(on_error, errh)
  call MPI_Comm_set_errhandler(dup, errh)
  call MPI_Errhandler_free(errh)
  call MPI_Send(n, 1, MPI_INTEGER, size + 5, 0, dup)
  if (handled /= 1) call fail('error handler not called once')
  if (handled_comm /= dup) call fail('error handler got another communicator')
  call MPI_Error_class(handled_code, cls)
  if (cls /= MPI_ERR_RANK) call fail('error handler got another error class')
  call MPI_Comm_free(dup)

  ! a non-contiguous section as the buffer of a nonblocking call (MPI_SUBARRAYS_SUPPORTED; the
  ! rest in f08_sections.f90) and as window memory: refused, with MPI_ERR_BUFFER
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  grid = reshape([(n, n = 1, 12)], [3, 4])
  call MPI_Win_create(grid(2, :), 16_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, n)
  call MPI_Error_class(n, cls)
  if (cls /= MPI_ERR_BUFFER) call fail('non-contiguous section as window memory not refused')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
  call MPI_Irecv(res, 4, MPI_INTEGER, mod(rank + size - 1, size), 7, MPI_COMM_WORLD, req)
  call MPI_Isend(grid(2, :), 4, MPI_INTEGER, mod(rank + 1, size), 7, MPI_COMM_WORLD, req2)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call MPI_Wait(req2, MPI_STATUS_IGNORE)
  if (any(res /= [2, 5, 8, 11])) call fail('non-contiguous section in MPI_Isend')
  res = 0
  ! as the buffer of a blocking call: the compiler's contiguous copy
  call MPI_Sendrecv(grid(2, :), 4, MPI_INTEGER, mod(rank + 1, size), 6, res, 4, MPI_INTEGER, &
                    mod(rank + size - 1, size), 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  if (any(res /= [2, 5, 8, 11])) call fail('non-contiguous section in a blocking call')

  ! buffered sends: the detached buffer's address comes back as a C_PTR
  call MPI_Buffer_attach(bsbuf, int(sizeof(bsbuf)))
  call MPI_Bsend(rank, 1, MPI_INTEGER, mod(rank + 1, size), 5, MPI_COMM_WORLD)
  call MPI_Recv(n, 1, MPI_INTEGER, mod(rank + size - 1, size), 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  if (n /= mod(rank + size - 1, size)) call fail('MPI_Bsend data')
  call MPI_Buffer_detach(detached, n)
  if (transfer(detached, 0_c_intptr_t) /= transfer(c_loc(bsbuf), 0_c_intptr_t)) call fail('MPI_Buffer_detach address')
  if (n /= int(sizeof(bsbuf))) call fail('MPI_Buffer_detach size')

  call MPI_Finalize()
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    call ftest_fail('f08_callbacks.f90', what)
  end subroutine fail
end program f08_callbacks
