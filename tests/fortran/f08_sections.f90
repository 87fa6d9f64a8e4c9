! use mpi_f08 with MPI_SUBARRAYS_SUPPORTED: non-contiguous array sections as the buffers of
! nonblocking, persistent, one-sided and nonblocking collective calls, read and written in place
! (every element outside the section checked untouched), and the sections no datatype can
! describe refused with MPI_ERR_BUFFER. Built at -O2 (ASYNCHRONOUS buffers). Run on 2-4 ranks.
program f08_sections
  use mpi_f08
  use ftest, only : ftest_fail
  implicit none
  integer, parameter :: n = 8
  integer :: rank, nproc, right, left, i, j, k, ierr
  integer, asynchronous :: a(n, n), b(n, n), v(3 * n), w(3 * n)
  integer, asynchronous, allocatable :: g(:, :), gv(:)
  real, asynchronous :: r(2 * n)
  complex, asynchronous :: z(n)
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: st
  type(MPI_Win) :: win
  type(MPI_Datatype) :: pair

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc)
  right = mod(rank + 1, nproc)
  left = mod(rank + nproc - 1, nproc)
  if (.not. MPI_SUBARRAYS_SUPPORTED) call fail('MPI_SUBARRAYS_SUPPORTED is .FALSE.')

  ! a strided 1-D section into another strided one
  call fill(a, rank)
  b = -1
  call MPI_Irecv(b(1, 1:n:2), n / 2, MPI_INTEGER, left, 1, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(a(2:n:2, 3), n / 2, MPI_INTEGER, right, 1, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  do i = 1, n / 2
    if (b(1, 2 * i - 1) /= val(left, 2 * i, 3)) call fail('strided row received')
  end do
  if (count(b /= -1) /= n / 2) call fail('strided receive wrote outside its section')

  ! a 2-D block (not one stride) into a 2-D strided block, then a partial count of it
  b = -1
  call MPI_Irecv(b(1:n:2, 2:7:2), 12, MPI_INTEGER, left, 2, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(a(3:6, 4:6), 12, MPI_INTEGER, right, 2, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  k = 0
  do j = 2, 7, 2
    do i = 1, n, 2
      if (b(i, j) /= val(left, 3 + mod(k, 4), 4 + k / 4)) call fail('2-D block received')
      k = k + 1
    end do
  end do
  if (count(b /= -1) /= 12) call fail('2-D receive wrote outside its section')
  b = -1
  call MPI_Irecv(b(1:n:2, 2:7:2), 12, MPI_INTEGER, left, 3, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(a(3:6, 4:6), 7, MPI_INTEGER, right, 3, MPI_COMM_WORLD, reqs(2))
  call MPI_Wait(reqs(1), st)
  call MPI_Wait(reqs(2), MPI_STATUS_IGNORE)
  call MPI_Get_count(st, MPI_INTEGER, k)
  if (k /= 7) call fail('partial count: MPI_Get_count')
  if (count(b /= -1) /= 7 .or. b(5, 4) /= val(left, 5, 5) .or. b(7, 4) /= -1 .or. b(1, 6) /= -1) &
    call fail('partial count of a 2-D section')

  ! a reversed section (negative stride) and COMPLEX elements sent as pairs of REAL
  v = -1
  w = [(100 * rank + i, i = 1, 3 * n)]
  call MPI_Irecv(v(2:2 * n:2), n, MPI_INTEGER, left, 4, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(w(n:1:-1), n, MPI_INTEGER, right, 4, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  do i = 1, n
    if (v(2 * i) /= 100 * left + n + 1 - i) call fail('reversed section')
  end do
  if (count(v /= -1) /= n) call fail('reversed section wrote outside')
  z = [(cmplx(rank, i), i = 1, n)]
  r = -1
  call MPI_Irecv(r(1:2 * n:2), n / 2, MPI_REAL, left, 5, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(z(1:n:4), 4, MPI_REAL, right, 5, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  if (any(abs(r(1:2 * n:2) - [real(left), 1.0, real(left), 5.0, -1.0, -1.0, -1.0, -1.0]) > 0.0)) &
    call fail('COMPLEX section as REAL')

  ! persistent requests on sections, started twice with new values
  call MPI_Recv_init(b(2, :), n, MPI_INTEGER, left, 6, MPI_COMM_WORLD, reqs(1))
  call MPI_Send_init(a(:, 5), n, MPI_INTEGER, right, 6, MPI_COMM_WORLD, reqs(2))
  do k = 1, 2
    a(:, 5) = [(1000 * k + 10 * rank + i, i = 1, n)]
    b = -1
    call MPI_Startall(2, reqs)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
    if (any(b(2, :) /= [(1000 * k + 10 * left + i, i = 1, n)])) call fail('persistent section')
    if (count(b /= -1) /= n) call fail('persistent section wrote outside')
  end do
  call MPI_Request_free(reqs(1))
  call MPI_Request_free(reqs(2))

  ! a broadcast and a reduction in place on a row; a reduction between two strided sections
  a = -1
  if (rank == 0) a(3, :) = [(7 * i, i = 1, n)]
  call MPI_Ibcast(a(3, :), n, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(1))
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  if (any(a(3, :) /= [(7 * i, i = 1, n)]) .or. count(a /= -1) /= n) call fail('MPI_Ibcast of a row')
  a(4, :) = [(rank + i, i = 1, n)]
  call MPI_Iallreduce(MPI_IN_PLACE, a(4, :), n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(1))
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  if (any(a(4, :) /= [(nproc * (nproc - 1) / 2 + nproc * i, i = 1, n)])) call fail('in-place Iallreduce on a row')
  b = 0
  call MPI_Iallreduce(a(3, :), b(5, :), n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, reqs(1))
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  if (any(b(5, :) /= a(3, :)) .or. count(b /= 0) /= n) call fail('Iallreduce between rows')

  ! gathers and an all-to-all whose blocks lie along rows
  allocate(g(2, nproc * 3), gv(nproc * 3))
  g = -1
  a(6, 1:3) = [rank, rank + 10, rank + 20]
  call MPI_Iallgather(a(6, 1:3), 3, MPI_INTEGER, g(2, :), 3, MPI_INTEGER, MPI_COMM_WORLD, reqs(1))
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  do k = 0, nproc - 1
    if (any(g(2, 3 * k + 1:3 * k + 3) /= [k, k + 10, k + 20])) call fail('Iallgather into a row')
  end do
  if (any(g(1, :) /= -1)) call fail('Iallgather wrote outside its row')
  g(1, :) = [(100 * rank + i, i = 1, 3 * nproc)]
  gv = -1
  call MPI_Ialltoall(g(1, :), 3, MPI_INTEGER, gv, 3, MPI_INTEGER, MPI_COMM_WORLD, reqs(1))
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  do k = 0, nproc - 1
    if (any(gv(3 * k + 1:3 * k + 3) /= [(100 * k + 3 * rank + i, i = 1, 3)])) call fail('Ialltoall from a row')
  end do
  ! a 2-D block as the one message a rank gives a gather; blocks of an all-to-all as the columns
  ! of a 2-D block (not one stride: one datatype per column, resized to the column distance)
  deallocate(gv)
  allocate(gv(4 * nproc))
  gv = -1
  a = -1
  a(2:3, 5:6) = reshape([(10 * rank + i, i = 1, 4)], [2, 2])
  call MPI_Iallgather(a(2:3, 5:6), 4, MPI_INTEGER, gv, 4, MPI_INTEGER, MPI_COMM_WORLD, reqs(1))
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  do k = 0, nproc - 1
    if (any(gv(4 * k + 1:4 * k + 4) /= [(10 * k + i, i = 1, 4)])) call fail('Iallgather from a 2-D block')
  end do
  b = -1
  gv(1:3 * nproc) = [(100 * rank + i, i = 1, 3 * nproc)]
  call MPI_Ialltoall(gv, 3, MPI_INTEGER, b(2:4, 1:nproc), 3, MPI_INTEGER, MPI_COMM_WORLD, reqs(1))
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  do k = 0, nproc - 1
    if (any(b(2:4, k + 1) /= [(100 * k + 3 * rank + i, i = 1, 3)])) call fail('Ialltoall into columns of a 2-D block')
  end do
  if (count(b /= -1) /= 3 * nproc) call fail('Ialltoall into columns wrote outside')
  deallocate(g, gv)

  ! one-sided: a put from a strided section, a get into one
  w = -1
  call MPI_Win_create(w, int(3 * n * 4, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  a(:, 7) = [(50 * rank + i, i = 1, n)]
  call MPI_Win_fence(0, win)
  call MPI_Put(a(1:n:2, 7), n / 2, MPI_INTEGER, right, 2_MPI_ADDRESS_KIND, n / 2, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  if (any(w(3:2 + n / 2) /= [(50 * left + 2 * i - 1, i = 1, n / 2)])) call fail('MPI_Put from a section')
  if (count(w /= -1) /= n / 2) call fail('MPI_Put wrote outside')
  b = -1
  call MPI_Get(b(8, 1:n:2), n / 2, MPI_INTEGER, right, 2_MPI_ADDRESS_KIND, n / 2, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  if (any(b(8, 1:n:2) /= [(50 * rank + 2 * i - 1, i = 1, n / 2)])) call fail('MPI_Get into a section')
  if (count(b /= -1) /= n / 2) call fail('MPI_Get wrote outside')
  call MPI_Win_free(win)

  ! what no datatype describes: refused with MPI_ERR_BUFFER, nothing started
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Ialltoall(v, 2, MPI_INTEGER, a(1:3, 1:2), 2, MPI_INTEGER, MPI_COMM_WORLD, reqs(1), ierr)
  call expect_buffer_error(ierr, 'blocks of two layouts in MPI_Ialltoall')
  call MPI_Iallreduce(a(3, :), v(1:n), n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, reqs(1), ierr)
  call expect_buffer_error(ierr, 'MPI_Iallreduce between a row and a contiguous array')
  call MPI_Type_contiguous(2, MPI_INTEGER, pair)
  call MPI_Type_commit(pair)
  call MPI_Isend(a(1, :), n / 2, pair, right, 7, MPI_COMM_WORLD, reqs(1), ierr)
  call expect_buffer_error(ierr, 'a datatype spanning two elements of a section')
  call MPI_Isend(a(1, 1:4), 5, MPI_INTEGER, right, 7, MPI_COMM_WORLD, reqs(1), ierr)
  call expect_buffer_error(ierr, 'a count larger than the section')
  call MPI_Win_create(a(1, :), int(n * 4, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call expect_buffer_error(ierr, 'window memory as a section')
  call MPI_Type_free(pair)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) write (*, '(a)') 'f08_sections: ok'
  call MPI_Finalize()
contains
  integer function val(r, i, j)
    integer, intent(in) :: r, i, j
    val = 10000 * r + 100 * i + j
  end function val
  subroutine fill(x, r)
    integer, intent(out) :: x(:, :)
    integer, intent(in) :: r
    integer :: i, j
    do j = 1, size(x, 2)
      do i = 1, size(x, 1)
        x(i, j) = val(r, i, j)
      end do
    end do
  end subroutine fill
  subroutine expect_buffer_error(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    integer :: c
    if (code == MPI_SUCCESS) call fail(what // ': accepted')
    call MPI_Error_class(code, c)
    if (c /= MPI_ERR_BUFFER) call fail(what // ': not MPI_ERR_BUFFER')
  end subroutine expect_buffer_error
  subroutine fail(what)
    character(len=*), intent(in) :: what
    call ftest_fail('f08_sections.f90', what)
  end subroutine fail
end program f08_sections
