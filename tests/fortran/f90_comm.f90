! use mpi: communicators from Fortran -- MPI_Comm_split, MPI_Comm_dup / MPI_Comm_compare,
! MPI_Comm_free, a 2-D Cartesian communicator (LOGICAL periods), MPI_Cart_shift, object names
! and MPI_Get_processor_name (CHARACTER results padded with blanks), LOGICAL flags of
! MPI_Iprobe / MPI_Test, info objects.  Run at 4 ranks (any count >= 2 works).
program f90_comm
  use mpi
  use ftest
  implicit none
  integer :: ierr, rank, n, i, sub, dup, cart, res, ssize, srank, src, dst, req, val, nkeys
  integer :: dims(2), coords(2), info
  logical :: periods(2), flag
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_PROCESSOR_NAME) :: pname
  character(len=MPI_MAX_INFO_VAL) :: value
  character(len=32) :: key

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  if (n < 2) call fail('needs 2 ranks')

  ! Split by parity, ordered by descending world rank.
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, sub, ierr)
  call MPI_Comm_size(sub, ssize, ierr)
  call MPI_Comm_rank(sub, srank, ierr)
  if (ssize /= (n - mod(rank, 2) + 1) / 2) call fail('split size')
  if (srank /= ssize - 1 - rank / 2) call fail('split rank (key order)')
  call MPI_Allreduce(rank, val, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
  if (val /= ssize * mod(rank, 2) + ssize * (ssize - 1)) call fail('allreduce in the split')
  call MPI_Comm_dup(sub, dup, ierr)
  call MPI_Comm_compare(sub, dup, res, ierr)
  if (res /= MPI_CONGRUENT) call fail('compare of a dup: not MPI_CONGRUENT')
  call MPI_Comm_compare(sub, sub, res, ierr)
  if (res /= MPI_IDENT) call fail('compare with itself: not MPI_IDENT')
  call MPI_Comm_compare(sub, MPI_COMM_WORLD, res, ierr)
  if (res /= MPI_UNEQUAL) call fail('compare with world: not MPI_UNEQUAL')
  call MPI_Comm_free(dup, ierr)
  if (dup /= MPI_COMM_NULL) call fail('comm_free: handle not MPI_COMM_NULL')
  call MPI_Comm_free(sub, ierr)
  if (sub /= MPI_COMM_NULL) call fail('comm_free of the split')

  ! Cartesian grid, periodic in the first dimension only, ranks kept.
  dims = 0
  call MPI_Dims_create(n, 2, dims, ierr)
  if (dims(1) * dims(2) /= n .or. dims(1) < dims(2)) call fail('dims_create')
  periods = (/ .true., .false. /)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  dims = -1
  periods = (/ .false., .true. /)
  coords = -1
  call MPI_Cart_get(cart, 2, dims, periods, coords, ierr)
  if (dims(1) * dims(2) /= n) call fail('cart_get dims')
  if (.not. periods(1) .or. periods(2)) call fail('cart_get periods')
  if (coords(1) /= rank / dims(2) .or. coords(2) /= mod(rank, dims(2))) call fail('cart_get coords')
  call MPI_Cart_shift(cart, 0, 1, src, dst, ierr)
  if (src /= mod(coords(1) - 1 + dims(1), dims(1)) * dims(2) + coords(2)) call fail('shift 0 source')
  if (dst /= mod(coords(1) + 1, dims(1)) * dims(2) + coords(2)) call fail('shift 0 dest')
  call MPI_Cart_shift(cart, 1, 1, src, dst, ierr)
  if (coords(2) == dims(2) - 1 .neqv. dst == MPI_PROC_NULL) call fail('shift 1 dest (not periodic)')
  if (coords(2) == 0 .neqv. src == MPI_PROC_NULL) call fail('shift 1 source (not periodic)')
  if (dst /= MPI_PROC_NULL .and. dst /= rank + 1) call fail('shift 1 dest rank')

  ! Names: set with an inner blank, returned padded with blanks.
  call MPI_Comm_set_name(cart, 'my cart comm', ierr)
  name = repeat('x', len(name))
  res = -1
  call MPI_Comm_get_name(cart, name, res, ierr)
  if (res /= 12) call fail('comm_get_name resultlen')
  if (name(1:12) /= 'my cart comm') call fail('comm_get_name text')
  if (name(13:) /= ' ') call fail('comm_get_name: not padded with blanks')
  name = repeat('x', len(name))
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, res, ierr)
  if (res /= 14 .or. name /= 'MPI_COMM_WORLD') call fail('name of MPI_COMM_WORLD')
  pname = repeat('x', len(pname))
  res = -1
  call MPI_Get_processor_name(pname, res, ierr)
  if (res <= 0 .or. res > MPI_MAX_PROCESSOR_NAME) call fail('processor name resultlen')
  if (len_trim(pname(1:res)) == 0) call fail('processor name blank')
  if (res < len(pname)) then
    if (pname(res + 1:) /= ' ') call fail('processor name: not padded with blanks')
  end if

  ! LOGICAL flags: nothing to probe or complete until the barrier, then something.
  flag = .true.
  call MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
  if (flag) call fail('iprobe found a message never sent')
  if (rank == 1) then
    val = -1
    call MPI_Irecv(val, 1, MPI_INTEGER, 0, 55, MPI_COMM_WORLD, req, ierr)
    flag = .true.
    call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
    if (flag) call fail('test completed a receive before its send')
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Send(1234, 1, MPI_INTEGER, 1, 55, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    do i = 1, 100000000
      call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
      if (flag) exit
    end do
    if (.not. flag .or. val /= 1234) call fail('test never completed the receive')
    if (req /= MPI_REQUEST_NULL) call fail('request not null after test')
  end if

  ! Info objects: keys and values in blank-padded CHARACTER variables.
  call MPI_Info_create(info, ierr)
  key = 'aptus_key'
  call MPI_Info_set(info, key, 'value with blanks', ierr)
  call MPI_Info_set(info, 'other', '42', ierr)
  call MPI_Info_get_nkeys(info, nkeys, ierr)
  if (nkeys /= 2) call fail('info nkeys')
  value = repeat('x', len(value))
  flag = .false.
  call MPI_Info_get(info, 'aptus_key', MPI_MAX_INFO_VAL, value, flag, ierr)
  if (.not. flag) call fail('info_get flag of a key set')
  if (value /= 'value with blanks') call fail('info_get value (or its blank padding)')
  flag = .true.
  call MPI_Info_get(info, 'missing', MPI_MAX_INFO_VAL, value, flag, ierr)
  if (flag) call fail('info_get flag of a key not set')
  call MPI_Info_free(info, ierr)
  if (info /= MPI_INFO_NULL) call fail('info_free: handle not MPI_INFO_NULL')

  call MPI_Comm_free(cart, ierr)
  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    call ftest_fail('f90_comm.f90', what)
  end subroutine fail

end program f90_comm
