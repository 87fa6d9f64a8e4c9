! use mpi_f08 under MPI_THREAD_MULTIPLE: four OpenMP threads per rank at once, each on its own
! communicator, create and free reductions written in Fortran (the bindings' slots), attribute
! keys with callbacks, and exchange with nonblocking requests (handles converted concurrently),
! some of them on non-contiguous array sections (datatypes made and freed by every thread at once).
! Run on 2-3 ranks.
module thr_ops
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
contains
  ! a + b + 1 elementwise: every combination adds one
  subroutine plus_one(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    if (datatype /= MPI_INTEGER) return
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = a + b + 1
  end subroutine plus_one
  subroutine copy_fn(oldcomm, keyval, extra, vin, vout, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra, vin, vout
    logical :: flag
    vout = vin + extra
    flag = keyval /= MPI_KEYVAL_INVALID .and. oldcomm /= MPI_COMM_NULL
    ierror = MPI_SUCCESS
  end subroutine copy_fn
end module thr_ops

program f08_threads
  use mpi_f08
  use thr_ops
  use omp_lib
  implicit none
  integer, parameter :: nthreads = 4, rounds = 40
  integer :: provided, rank, size, t, bad(nthreads)
  type(MPI_Comm) :: comms(nthreads)

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided)
  if (provided /= MPI_THREAD_MULTIPLE) then
    write (*, '(a)') 'FAIL f08_threads.f90: MPI_THREAD_MULTIPLE not provided'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  do t = 1, nthreads
    call MPI_Comm_dup(MPI_COMM_WORLD, comms(t))
  end do
  bad = 0
  !$omp parallel num_threads(nthreads) private(t)
  t = omp_get_thread_num() + 1
  call work(comms(t), bad(t))
  !$omp end parallel
  do t = 1, nthreads
    if (bad(t) /= 0) then
      write (*, '(a,i0,a,i0,a,i0)') 'FAIL f08_threads.f90: rank ', rank, ' thread ', t, ': wrong results ', bad(t)
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
    call MPI_Comm_free(comms(t))
  end do
  call MPI_Finalize()
contains
  subroutine work(comm, bad)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(inout) :: bad
    type(MPI_Op) :: op
    type(MPI_Comm) :: dup
    type(MPI_Request) :: reqs(2)
    integer :: i, keyval, me, n, sendv(3)
    integer, asynchronous :: recvv(3), grid(3, 5)
    integer :: j
    integer(kind=MPI_ADDRESS_KIND) :: val
    logical :: found
    call MPI_Comm_rank(comm, me)
    call MPI_Comm_size(comm, n)
    do i = 1, rounds
      call MPI_Op_create(plus_one, .true., op)
      sendv = [me, i, 1]
      call MPI_Allreduce(sendv, recvv, 3, MPI_INTEGER, op, comm)
      ! n values combined n - 1 times, each adding one
      if (recvv(1) /= n * (n - 1) / 2 + n - 1 .or. recvv(2) /= n * i + n - 1 .or. recvv(3) /= 2 * n - 1) &
        bad = bad + 1
      call MPI_Op_free(op)
      if (op /= MPI_OP_NULL) bad = bad + 1
      ! an attribute copied by a Fortran callback when the communicator is duplicated
      call MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, keyval, int(i, MPI_ADDRESS_KIND))
      call MPI_Comm_set_attr(comm, keyval, 1000_MPI_ADDRESS_KIND)
      call MPI_Comm_dup(comm, dup)
      call MPI_Comm_get_attr(dup, keyval, val, found)
      if (.not. found .or. val /= 1000 + i) bad = bad + 1
      call MPI_Comm_free(dup)
      call MPI_Comm_delete_attr(comm, keyval)
      call MPI_Comm_free_keyval(keyval)
      ! a ring on this thread's communicator
      call MPI_Irecv(recvv(1), 1, MPI_INTEGER, mod(me + n - 1, n), i, comm, reqs(1))
      call MPI_Isend(me * 100 + i, 1, MPI_INTEGER, mod(me + 1, n), i, comm, reqs(2))
      call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
      if (recvv(1) /= mod(me + n - 1, n) * 100 + i) bad = bad + 1
      ! the same ring on array sections: row 2 of the grid to the next rank's row 3
      grid = -1
      grid(2, :) = [(me * 1000 + i * 10 + j, j = 1, 5)]
      call MPI_Irecv(grid(3, :), 5, MPI_INTEGER, mod(me + n - 1, n), i, comm, reqs(1))
      call MPI_Isend(grid(2, :), 5, MPI_INTEGER, mod(me + 1, n), i, comm, reqs(2))
      call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
      if (any(grid(3, :) /= [(mod(me + n - 1, n) * 1000 + i * 10 + j, j = 1, 5)]) .or. any(grid(1, :) /= -1)) &
        bad = bad + 1
    end do
  end subroutine work
end program f08_threads
