! The MPI-1 routines removed in MPI 3.0 that old programs still call, through mpif.h: the
! INTEGER-displacement type constructors, the extent queries, MPI_ERRHANDLER_SET/GET, and an
! MPI_ADDRESS whose value does not fit an INTEGER refused with MPI_ERR_ARG. Run on 2 ranks.
      program f77legacy
      implicit none
      include 'mpif.h'
      integer rank, ierr, cls, ext, lb, ub, addr, errh, i
      integer tstruct, thvec, thind, sz, guard(2)
      integer(kind=MPI_ADDRESS_KIND) aaddr
      integer blens(2), displs(2), types(2)
      integer ibuf(8), obuf(8)
      double precision big(1000000)
      common /bigblk/ big
      call mpi_init(ierr)
      call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
      call mpi_errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
      call mpi_errhandler_get(MPI_COMM_WORLD, errh, ierr)
      if (errh .ne. MPI_ERRORS_RETURN) call fail(rank, 'errhandler_get')
c     a struct of one INTEGER at 0 and two at 8 bytes: extent 16
      blens(1) = 1
      blens(2) = 2
      displs(1) = 0
      displs(2) = 8
      types(1) = MPI_INTEGER
      types(2) = MPI_INTEGER
      call mpi_type_struct(2, blens, displs, types, tstruct, ierr)
      call mpi_type_commit(tstruct, ierr)
      call mpi_type_extent(tstruct, ext, ierr)
      call mpi_type_lb(tstruct, lb, ierr)
      call mpi_type_ub(tstruct, ub, ierr)
      call mpi_type_size(tstruct, sz, ierr)
      if (ext .ne. 16 .or. lb .ne. 0 .or. ub .ne. 16 .or. sz .ne. 12)
     &   call fail(rank, 'type_struct extent/lb/ub/size')
c     every other INTEGER, by hvector and by hindexed
      call mpi_type_hvector(4, 1, 8, MPI_INTEGER, thvec, ierr)
      call mpi_type_commit(thvec, ierr)
      displs(1) = 0
      displs(2) = 16
      blens(1) = 1
      blens(2) = 1
      call mpi_type_hindexed(2, blens, displs, MPI_INTEGER, thind, ierr)
      call mpi_type_commit(thind, ierr)
      do i = 1, 8
        ibuf(i) = 10 * i
        obuf(i) = -1
      end do
      if (rank .eq. 0) then
        call mpi_send(ibuf, 1, thvec, 1, 1, MPI_COMM_WORLD, ierr)
        call mpi_send(ibuf, 1, tstruct, 1, 2, MPI_COMM_WORLD, ierr)
        call mpi_send(ibuf, 1, thind, 1, 3, MPI_COMM_WORLD, ierr)
      else if (rank .eq. 1) then
        call mpi_recv(obuf, 4, MPI_INTEGER, 0, 1, MPI_COMM_WORLD,
     &                MPI_STATUS_IGNORE, ierr)
        if (obuf(1) .ne. 10 .or. obuf(2) .ne. 30 .or. obuf(3) .ne. 50
     &      .or. obuf(4) .ne. 70) call fail(rank, 'hvector data')
        call mpi_recv(obuf, 3, MPI_INTEGER, 0, 2, MPI_COMM_WORLD,
     &                MPI_STATUS_IGNORE, ierr)
        if (obuf(1) .ne. 10 .or. obuf(2) .ne. 30 .or. obuf(3) .ne. 40)
     &     call fail(rank, 'struct data')
        call mpi_recv(obuf, 2, MPI_INTEGER, 0, 3, MPI_COMM_WORLD,
     &                MPI_STATUS_IGNORE, ierr)
        if (obuf(1) .ne. 10 .or. obuf(2) .ne. 50)
     &     call fail(rank, 'hindexed data')
      end if
c     an address that does not fit an INTEGER (a PIE's data: past 2**31) is refused with
c     MPI_ERR_ARG, never cut; one that fits is the address
      call mpi_get_address(big(1000000), aaddr, ierr)
      call mpi_address(big(1000000), addr, ierr)
      if (ierr .eq. MPI_SUCCESS) then
        if (addr .ne. aaddr) call fail(rank, 'mpi_address value')
      else
        call mpi_error_class(ierr, cls, i)
        if (cls .ne. MPI_ERR_ARG) call fail(rank, 'mpi_address class')
        if (aaddr .eq. int(aaddr, kind(addr)))
     &     call fail(rank, 'mpi_address refused an INTEGER address')
      end if
c     buffered sends; the detach writes no address into the argument (an INTEGER here)
      call mpi_buffer_attach(big, 8192, ierr)
      call mpi_bsend(ibuf, 8, MPI_INTEGER, 1 - rank, 9, MPI_COMM_WORLD,
     &               ierr)
      call mpi_recv(obuf, 8, MPI_INTEGER, 1 - rank, 9, MPI_COMM_WORLD,
     &              MPI_STATUS_IGNORE, ierr)
      if (obuf(8) .ne. 80) call fail(rank, 'bsend data')
      guard(1) = 11
      guard(2) = 22
      call mpi_buffer_detach(guard(1), sz, ierr)
      if (sz .ne. 8192 .or. guard(2) .ne. 22)
     &   call fail(rank, 'buffer_detach size or guard')
      call mpi_type_free(tstruct, ierr)
      call mpi_type_free(thvec, ierr)
      call mpi_type_free(thind, ierr)
      call mpi_finalize(ierr)
      end

      subroutine fail(rank, what)
      implicit none
      include 'mpif.h'
      integer rank, ierr
      character*(*) what
      write (*, '(a,i0,a,a)') 'FAIL f77_legacy.f: rank ', rank, ': ',
     &   what
      call mpi_abort(MPI_COMM_WORLD, 1, ierr)
      end
