! f_latency: ping-pong latency from Fortran, through `use mpi_f08` and `use mpi` in one program
! (the cost the Fortran bindings add over the C calls: compare with pt2pt_latency).
!
! Ranks 0 and 1 exchange SIZE bytes (MPI_BYTE) with MPI_Send/MPI_Recv; one-way latency = round
! trip / 2. For 8 B and 1 KiB: REPS timed loops of ITERS round trips through each binding; prints
! the best and the median of the loops' averages, in microseconds. Plain MPI; builds with any
! mpifort: mpifort -O2 -o f_latency f_latency.f90 (arguments: ITERS REPS, default 20000 5).
module f_latency_f08
  use mpi_f08
  implicit none
  private
  public :: loop_f08
contains
  double precision function loop_f08(me, n, iters) result(us)
    integer, intent(in) :: me, n, iters
    character(len=1) :: buf(1024)
    integer :: i
    double precision :: t0
    buf = 'x'
    call MPI_Barrier(MPI_COMM_WORLD)
    t0 = MPI_Wtime()
    do i = 1, iters
      if (me == 0) then
        call MPI_Send(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD)
        call MPI_Recv(buf, n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      else if (me == 1) then
        call MPI_Recv(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call MPI_Send(buf, n, MPI_BYTE, 0, 2, MPI_COMM_WORLD)
      end if
    end do
    us = (MPI_Wtime() - t0) / iters / 2 * 1.0d6
  end function loop_f08
end module f_latency_f08

module f_latency_f90
  use mpi
  implicit none
  private
  public :: loop_f90
contains
  double precision function loop_f90(me, n, iters) result(us)
    integer, intent(in) :: me, n, iters
    character(len=1) :: buf(1024)
    integer :: i, ierr
    double precision :: t0
    buf = 'x'
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    do i = 1, iters
      if (me == 0) then
        call MPI_Send(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, ierr)
        call MPI_Recv(buf, n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      else if (me == 1) then
        call MPI_Recv(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call MPI_Send(buf, n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, ierr)
      end if
    end do
    us = (MPI_Wtime() - t0) / iters / 2 * 1.0d6
  end function loop_f90
end module f_latency_f90

program f_latency
  use mpi_f08, only: MPI_Init, MPI_Finalize, MPI_Comm_rank, MPI_COMM_WORLD
  use f_latency_f08
  use f_latency_f90
  implicit none
  integer, parameter :: sizes(2) = [8, 1024]
  integer :: me, iters, reps, s, r, b
  double precision, allocatable :: t(:)
  character(len=16) :: arg
  character(len=8), parameter :: names(2) = ['mpi_f08 ', 'mpi     ']
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  iters = 20000
  reps = 5
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) reps
  end if
  allocate (t(reps))
  if (me == 0) write (*, '(a)') '# binding   size  best(us)  median(us)'
  do s = 1, size(sizes)
    do b = 1, 2
      do r = 1, reps
        if (b == 1) then
          t(r) = loop_f08(me, sizes(s), iters)
        else
          t(r) = loop_f90(me, sizes(s), iters)
        end if
      end do
      call sort(t)
      if (me == 0) write (*, '(a8,i8,2f11.3)') names(b), sizes(s), t(1), t((reps + 1) / 2)
    end do
  end do
  call MPI_Finalize()
contains
  subroutine sort(a)
    double precision, intent(inout) :: a(:)
    integer :: i, j
    double precision :: x
    do i = 2, size(a)
      x = a(i)
      j = i - 1
      do while (j >= 1)
        if (a(j) <= x) exit
        a(j + 1) = a(j)
        j = j - 1
      end do
      a(j + 1) = x
    end do
  end subroutine sort
end program f_latency
