! use mpi: MPI_COMM_SPAWN and MPI_COMM_SPAWN_MULTIPLE from Fortran. The parents (2 ranks) start
! this program again: 2 copies with MPI_ARGV_NULL, then 2 with the arguments 'child' and
! 'two words' (an array of strings ended by a blank one), then MPI_COMM_SPAWN_MULTIPLE of two
! commands, 1 copy each, argument lists in the rows of ARRAY_OF_ARGV ('multi' and 'A' / 'B').
! Each child checks its arguments (GET_COMMAND_ARGUMENT) and MPI_APPNUM and sends
! 100 * kind + its rank to the parents' rank 0, which checks them all; errcodes must be
! MPI_SUCCESS; every intercommunicator is disconnected.
program f90_spawn
  use mpi
  use ftest
  implicit none
  integer :: ierr, rank, n, parent, inter, i, v, kind, appnum
  integer :: errs(2), np2(2), infos(2)
  logical :: flag
  integer(kind=MPI_ADDRESS_KIND) :: attr
  character(len=512) :: prog, a1, a2
  character(len=16) :: args(3), margs(2, 3)
  character(len=512) :: cmds(2)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  call MPI_Comm_get_parent(parent, ierr)
  call get_command_argument(0, prog)
  if (parent /= MPI_COMM_NULL) then
    call get_command_argument(1, a1)
    call get_command_argument(2, a2)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, attr, flag, ierr)
    appnum = int(attr)
    kind = 1
    if (a1 == 'child') then
      if (a2 /= 'two words' .or. command_argument_count() /= 2) call ftest_fail('f90_spawn', 'arguments')
      kind = 2
    else if (a1 == 'multi') then
      if (.not. flag .or. appnum /= rank) call ftest_fail('f90_spawn', 'MPI_APPNUM of a spawn_multiple child')
      if ((rank == 0 .and. a2 /= 'A') .or. (rank == 1 .and. a2 /= 'B')) call ftest_fail('f90_spawn', 'multi argument')
      kind = 3
    else if (command_argument_count() /= 0) then
      call ftest_fail('f90_spawn', 'MPI_ARGV_NULL gave arguments')
    end if
    call MPI_Send(100 * kind + rank, 1, MPI_INTEGER, 0, 5, parent, ierr)
    call MPI_Comm_disconnect(parent, ierr)
    call MPI_Finalize(ierr)
    stop
  end if
  if (n /= 2) call ftest_fail('f90_spawn', 'needs 2 ranks')

  args(1) = 'child'
  args(2) = 'two words'
  args(3) = ' '
  do kind = 1, 2
    errs = -1
    if (kind == 1) then
      call MPI_Comm_spawn(prog, MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, errs, ierr)
    else
      call MPI_Comm_spawn(prog, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, errs, ierr)
    end if
    if (ierr /= MPI_SUCCESS .or. errs(1) /= MPI_SUCCESS .or. errs(2) /= MPI_SUCCESS) &
      call ftest_fail('f90_spawn', 'MPI_Comm_spawn failed')
    if (rank == 0) then
      do i = 0, 1
        call MPI_Recv(v, 1, MPI_INTEGER, i, 5, inter, MPI_STATUS_IGNORE, ierr)
        if (v /= 100 * kind + i) call ftest_fail('f90_spawn', 'message from a child')
      end do
    end if
    call MPI_Comm_disconnect(inter, ierr)
  end do

  cmds(1) = prog
  cmds(2) = prog
  margs = ' '
  margs(1, 1) = 'multi'
  margs(1, 2) = 'A'
  margs(2, 1) = 'multi'
  margs(2, 2) = 'B'
  np2 = 1
  infos = MPI_INFO_NULL
  call MPI_Comm_spawn_multiple(2, cmds, margs, np2, infos, 1, MPI_COMM_WORLD, inter, errs, ierr)
  if (ierr /= MPI_SUCCESS .or. errs(1) /= MPI_SUCCESS .or. errs(2) /= MPI_SUCCESS) &
    call ftest_fail('f90_spawn', 'MPI_Comm_spawn_multiple failed')
  if (rank == 0) then
    do i = 0, 1
      call MPI_Recv(v, 1, MPI_INTEGER, i, 5, inter, MPI_STATUS_IGNORE, ierr)
      if (v /= 300 + i) call ftest_fail('f90_spawn', 'message from a spawn_multiple child')
    end do
  end if
  call MPI_Comm_disconnect(inter, ierr)
  if (rank == 0) print '(a)', 'f90_spawn: ok'
  call MPI_Finalize(ierr)
end program f90_spawn
