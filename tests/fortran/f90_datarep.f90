! MPI_REGISTER_DATAREP from Fortran (use mpi): a representation "twice" keeps every INTEGER as two
! (the value and its negation) through Fortran conversion and extent functions that get the
! program's EXTRA_STATE; a view in it writes and reads back converted, MPI_FILE_GET_TYPE_EXTENT
! follows it, the file's own INTEGERs are checked through a native view, a failing extent
! function is MPI_ERR_CONVERSION, a second registration MPI_ERR_DUP_DATAREP. One rank.
module datarep_twice
  use mpi
  implicit none
  integer :: calls = 0
contains
  subroutine twice_extent(datatype, extent, extra_state, ierror)
    integer :: datatype, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
    ierror = MPI_SUCCESS
    if (extra_state /= 42) ierror = MPI_ERR_OTHER
    if (datatype == MPI_INTEGER) then
      extent = 8
    else
      ierror = MPI_ERR_TYPE
    end if
  end subroutine twice_extent

  subroutine twice_write(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    integer :: userbuf(*), filebuf(*), datatype, count, ierror, i
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    calls = calls + 1
    ierror = MPI_SUCCESS
    if (extra_state /= 42 .or. datatype /= MPI_INTEGER) ierror = MPI_ERR_OTHER
    do i = 1, count
      filebuf(2 * i - 1) = userbuf(position + i)
      filebuf(2 * i) = -userbuf(position + i)
    end do
  end subroutine twice_write

  subroutine twice_read(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    integer :: userbuf(*), filebuf(*), datatype, count, ierror, i
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    calls = calls + 1
    ierror = MPI_SUCCESS
    if (extra_state /= 42 .or. datatype /= MPI_INTEGER) ierror = MPI_ERR_OTHER
    do i = 1, count
      if (filebuf(2 * i) /= -filebuf(2 * i - 1)) ierror = MPI_ERR_OTHER
      userbuf(position + i) = filebuf(2 * i - 1)
    end do
  end subroutine twice_read
end module datarep_twice

program f90_datarep
  use mpi
  use datarep_twice
  use ftest, only : ftest_fail
  implicit none
  integer :: fh, ierr, cls, i, v(5), back(5), raw(10), st(MPI_STATUS_SIZE), n, pid
  integer(kind=MPI_ADDRESS_KIND) :: extra, ext
  character(len=64) :: fname

  call MPI_Init(ierr)
  pid = getpid()
  write (fname, '(a,i0)') '/tmp/aptus-f90-datarep-', pid
  extra = 42
  call MPI_Register_datarep('twice', twice_read, twice_write, twice_extent, extra, ierr)
  if (ierr /= MPI_SUCCESS) call ftest_fail('f90_datarep.f90', 'MPI_Register_datarep')
  extra = 0 ! the library keeps its own copy
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)
  call MPI_Register_datarep('twice', twice_read, twice_write, twice_extent, extra, ierr)
  call MPI_Error_class(ierr, cls, i)
  if (cls /= MPI_ERR_DUP_DATAREP) call ftest_fail('f90_datarep.f90', 'a second registration: not MPI_ERR_DUP_DATAREP')

  call MPI_File_open(MPI_COMM_SELF, fname, ior(MPI_MODE_RDWR, ior(MPI_MODE_CREATE, MPI_MODE_DELETE_ON_CLOSE)), &
                     MPI_INFO_NULL, fh, ierr)
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'twice', MPI_INFO_NULL, ierr)
  if (ierr /= MPI_SUCCESS) call ftest_fail('f90_datarep.f90', 'set_view in twice')
  call MPI_File_get_type_extent(fh, MPI_INTEGER, ext, ierr)
  if (ierr /= MPI_SUCCESS .or. ext /= 8) call ftest_fail('f90_datarep.f90', 'file extent of MPI_INTEGER')
  call MPI_File_get_type_extent(fh, MPI_REAL, ext, ierr)
  call MPI_Error_class(ierr, cls, i)
  if (cls /= MPI_ERR_CONVERSION) call ftest_fail('f90_datarep.f90', 'failing extent function: not MPI_ERR_CONVERSION')
  v = (/ 1, -2, 30, 400, 5000 /)
  call MPI_File_write(fh, v, 5, MPI_INTEGER, st, ierr)
  if (ierr /= MPI_SUCCESS) call ftest_fail('f90_datarep.f90', 'write through twice')
  call MPI_Get_count(st, MPI_INTEGER, n, ierr)
  if (n /= 5) call ftest_fail('f90_datarep.f90', 'write count')
  back = 0
  call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, back, 5, MPI_INTEGER, st, ierr)
  if (ierr /= MPI_SUCCESS) call ftest_fail('f90_datarep.f90', 'read through twice')
  do i = 1, 5
    if (back(i) /= v(i)) call ftest_fail('f90_datarep.f90', 'read back converted')
  end do
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
  call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, raw, 10, MPI_INTEGER, st, ierr)
  do i = 1, 5
    if (raw(2 * i - 1) /= v(i) .or. raw(2 * i) /= -v(i)) call ftest_fail('f90_datarep.f90', 'the file''s INTEGERs')
  end do
  if (calls < 2) call ftest_fail('f90_datarep.f90', 'the conversion functions were not called')
  call MPI_File_close(fh, ierr)
  call MPI_Finalize(ierr)
  write (*, '(a)') 'f90_datarep: ok'
end program f90_datarep
