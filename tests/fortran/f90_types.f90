! use mpi: derived datatypes from Fortran -- MPI_Type_vector for a strided row of a 2-D array
! (column-major: the elements of a row are 5 INTEGERs apart), MPI_Get_address +
! MPI_Type_create_struct with absolute addresses sent from / received into MPI_BOTTOM,
! MPI_Type_size, MPI_Type_get_extent (INTEGER(KIND=MPI_ADDRESS_KIND)), MPI_Type_free.
! Ranks 0 and 1 talk.
program f90_types
  use mpi
  use ftest
  implicit none
  double precision :: dsize8
  integer :: isize4(3)
  integer :: sz
  integer, parameter :: nr = 5, nc = 4
  integer :: ierr, rank, n, i, j, rowtype, stype, isz, dsz, tsz, cnt
  integer :: a(nr, nc), row(nc)
  integer :: status(MPI_STATUS_SIZE), blens(2), types(2)
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent, addrs(2), a1, a2
  ! Reached through MPI_BOTTOM only: the compiler must not keep them in registers.
  integer, volatile :: ival
  double precision, volatile :: dvals(3)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  if (n < 2) call fail('needs 2 ranks')
  call MPI_Type_size(MPI_INTEGER, isz, ierr)
  call MPI_Type_size(MPI_DOUBLE_PRECISION, dsz, ierr)
  if (isz /= 4 .or. dsz /= 8) call fail('size of INTEGER / DOUBLE PRECISION')

  ! A row of a(nr, nc): nc blocks of 1 INTEGER, nr apart.
  call MPI_Type_vector(nc, 1, nr, MPI_INTEGER, rowtype, ierr)
  call MPI_Type_commit(rowtype, ierr)
  call MPI_Type_size(rowtype, tsz, ierr)
  if (tsz /= nc * isz) call fail('vector size')
  lb = -1
  extent = -1
  call MPI_Type_get_extent(rowtype, lb, extent, ierr)
  if (lb /= 0 .or. extent /= ((nc - 1) * nr + 1) * isz) call fail('vector extent')

  if (rank == 0) then
    do j = 1, nc
      do i = 1, nr
        a(i, j) = 10 * i + j
      end do
    end do
    call MPI_Send(a(2, 1), 1, rowtype, 1, 1, MPI_COMM_WORLD, ierr)
    call MPI_Send(a(4, 1), 1, rowtype, 1, 2, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    row = -1
    call MPI_Recv(row, nc, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, status, ierr)
    call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
    if (cnt /= nc) call fail('count of the row')
    do j = 1, nc
      if (row(j) /= 20 + j) call fail('row 2 received contiguous')
    end do
    a = -1
    call MPI_Recv(a(3, 1), 1, rowtype, 0, 2, MPI_COMM_WORLD, status, ierr)
    call MPI_Get_count(status, rowtype, cnt, ierr)
    if (cnt /= 1) call fail('count of the vector')
    do j = 1, nc
      do i = 1, nr
        if (i == 3 .and. a(i, j) /= 40 + j) call fail('row 4 received into row 3')
        if (i /= 3 .and. a(i, j) /= -1) call fail('vector receive wrote outside its row')
      end do
    end do
  end if
  call MPI_Type_free(rowtype, ierr)
  if (rowtype /= MPI_DATATYPE_NULL) call fail('type_free: handle not MPI_DATATYPE_NULL')

  ! A struct of absolute addresses: one INTEGER and three DOUBLE PRECISIONs.
  call MPI_Get_address(dvals(1), a1, ierr)
  call MPI_Get_address(dvals(2), a2, ierr)
  if (a2 - a1 /= dsz) call fail('get_address of consecutive array elements')
  call MPI_Get_address(ival, addrs(1), ierr)
  call MPI_Get_address(dvals, addrs(2), ierr)
  if (addrs(2) /= a1) call fail('get_address of an array and of its first element')
  blens = (/ 1, 3 /)
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
  call MPI_Type_create_struct(2, blens, addrs, types, stype, ierr)
  call MPI_Type_commit(stype, ierr)
  call MPI_Type_size(stype, tsz, ierr)
  if (tsz /= isz + 3 * dsz) call fail('struct size')
  call MPI_Type_get_extent(stype, lb, extent, ierr)
  if (lb /= min(addrs(1), addrs(2))) call fail('struct lower bound')
  if (extent < max(addrs(1) + isz, addrs(2) + 3 * dsz) - lb) call fail('struct extent')

  if (rank == 0) then
    ival = 4242
    dvals = (/ 1.5d0, -2.25d0, 1.0d10 /)
    call MPI_Send(MPI_BOTTOM, 1, stype, 1, 3, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    ival = 0
    dvals = 0d0
    call MPI_Recv(MPI_BOTTOM, 1, stype, 0, 3, MPI_COMM_WORLD, status, ierr)
    call MPI_Get_count(status, stype, cnt, ierr)
    if (cnt /= 1) call fail('count of the struct')
    if (ival /= 4242) call fail('struct INTEGER from MPI_BOTTOM')
    if (abs(dvals(1) - 1.5d0) > 0d0 .or. abs(dvals(2) + 2.25d0) > 0d0 &
        .or. abs(dvals(3) - 1.0d10) > 0d0) call fail('struct DOUBLE PRECISION from MPI_BOTTOM')
  end if
  call MPI_Type_free(stype, ierr)
  if (stype /= MPI_DATATYPE_NULL) call fail('type_free of the struct')

  ! MPI_SIZEOF (a generic of the module): bytes of one element, any rank
  call MPI_Sizeof(dsize8, sz, ierr)
  if (ierr /= MPI_SUCCESS .or. sz /= 8) call fail('MPI_Sizeof double precision')
  call MPI_Sizeof(isize4, sz, ierr)
  if (sz /= 4) call fail('MPI_Sizeof INTEGER array')
  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    call ftest_fail('f90_types.f90', what)
  end subroutine fail

end program f90_types
