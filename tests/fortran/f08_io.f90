! use mpi_f08 with MPI-IO: a file opened by every rank, a view of INTEGERs with a displacement,
! each rank's row of a matrix (a non-contiguous section) written by MPI_File_iwrite_at (the
! section described in place by a datatype) and by MPI_File_write_at_all (the compiler's copy),
! read back into another section; errors as MPI_ERR_* classes. Run on 2-3 ranks.
program f08_io
  use mpi_f08
  use ftest, only : ftest_fail
  implicit none
  integer, parameter :: n = 6
  integer :: rank, nproc, i, j, ierr, cls
  integer, asynchronous :: a(3, n), b(3, n)
  integer(kind=MPI_OFFSET_KIND) :: fsize
  type(MPI_File) :: fh
  type(MPI_Request) :: req
  type(MPI_Status) :: st
  character(len=64) :: fname

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc)
  ! a name of this job's own (rank 0's process id: GNU Fortran's GETPID)
  i = 0
  if (rank == 0) i = getpid()
  call MPI_Bcast(i, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  write (fname, '(a,i0)') '/tmp/aptus-f08-io-', i
  if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL, ierr)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_open(MPI_COMM_WORLD, fname, ior(MPI_MODE_RDWR, MPI_MODE_CREATE), MPI_INFO_NULL, fh)
  call MPI_File_set_view(fh, 16_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL)
  do j = 1, n
    do i = 1, 3
      a(i, j) = 1000 * rank + 10 * i + j
    end do
  end do
  ! row 2 through a nonblocking write (in place), row 3 through a collective one (a copy)
  call MPI_File_iwrite_at(fh, int(rank * 2 * n, MPI_OFFSET_KIND), a(2, :), n, MPI_INTEGER, req)
  call MPI_Wait(req, st)
  call MPI_Get_count(st, MPI_INTEGER, i)
  if (i /= n) call ftest_fail('f08_io.f90', 'MPI_File_iwrite_at count')
  call MPI_File_write_at_all(fh, int(rank * 2 * n + n, MPI_OFFSET_KIND), a(3, :), n, MPI_INTEGER, &
                             MPI_STATUS_IGNORE)
  call MPI_File_sync(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_sync(fh)
  b = -1
  call MPI_File_iread_at(fh, int(mod(rank + 1, nproc) * 2 * n, MPI_OFFSET_KIND), b(1, :), n, MPI_INTEGER, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call MPI_File_read_at(fh, int(mod(rank + 1, nproc) * 2 * n + n, MPI_OFFSET_KIND), b(3, :), n, &
                        MPI_INTEGER, MPI_STATUS_IGNORE)
  do j = 1, n
    if (b(1, j) /= 1000 * mod(rank + 1, nproc) + 20 + j) call ftest_fail('f08_io.f90', 'row 2 read back')
    if (b(3, j) /= 1000 * mod(rank + 1, nproc) + 30 + j) call ftest_fail('f08_io.f90', 'row 3 read back')
    if (b(2, j) /= -1) call ftest_fail('f08_io.f90', 'a read wrote outside its section')
  end do
  call MPI_File_get_size(fh, fsize)
  if (fsize /= 16 + 4 * 2 * n * nproc) call ftest_fail('f08_io.f90', 'file size')
  ! errors come back as classes (MPI_ERRORS_RETURN is the default for files)
  call MPI_File_seek(fh, -1_MPI_OFFSET_KIND, MPI_SEEK_SET, ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPI_ERR_ARG) call ftest_fail('f08_io.f90', 'negative seek not MPI_ERR_ARG')
  call MPI_File_close(fh)
  if (fh /= MPI_FILE_NULL) call ftest_fail('f08_io.f90', 'fh not MPI_FILE_NULL after close')
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL)
  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPI_ERR_NO_SUCH_FILE) call ftest_fail('f08_io.f90', 'opening a deleted file: not MPI_ERR_NO_SUCH_FILE')
  call MPI_Finalize()
  if (rank == 0) write (*, '(a)') 'f08_io: ok'
end program f08_io
