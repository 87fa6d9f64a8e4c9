! Attributes across the languages (MPI 4.1, 19.3.7): a value set in Fortran is read in C as a
! pointer to the integer, and in Fortran as the integer, also on a communicator duplicated with
! MPI_COMM_DUP_FN; a pointer set in C is read in Fortran as its integer value. The predefined
! copy functions called directly do what they say. MPI_INFO_GET of a missing key leaves the value
! alone; MPI_INFO_GET_STRING's BUFLEN counts characters (no terminator). Run on 2 ranks (under ASan: the cells behind Fortran's values are all freed).
program f_attrlang
  use mpi
  use ftest
  implicit none
  integer :: rank, ierr, key_null, key_dup, dup, found, info, buflen
  integer(kind=MPI_ADDRESS_KIND) :: extra, val, vin, vout
  logical :: flag
  character(len=16) :: value
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  extra = 0
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key_null, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key_dup, extra, ierr)

  ! set in Fortran: Fortran reads the integer, C a pointer to it
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key_null, 123456789012_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, key_null, val, flag, ierr)
  if (.not. flag .or. val /= 123456789012_MPI_ADDRESS_KIND) call fail('Fortran get of a Fortran value')
  call c_read_attr(MPI_COMM_WORLD, key_null, val, found)
  if (found == 0 .or. val /= 123456789012_MPI_ADDRESS_KIND) call fail('C get of a Fortran value')
  ! replaced, then read again (the replaced cell is dropped)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key_null, -7_MPI_ADDRESS_KIND, ierr)
  call c_read_attr(MPI_COMM_WORLD, key_null, val, found)
  if (val /= -7) call fail('C get after a second set')

  ! set in C (a pointer): Fortran reads its integer value
  call c_set_attr(MPI_COMM_WORLD, key_null, 4660_MPI_ADDRESS_KIND)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, key_null, val, flag, ierr)
  if (.not. flag .or. val /= 4660) call fail('Fortran get of a C pointer')

  ! MPI_COMM_DUP_FN: the duplicate has the value, in both languages; NULL_COPY: not copied
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key_dup, 777_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_get_attr(dup, key_dup, val, flag, ierr)
  if (.not. flag .or. val /= 777) call fail('value copied by MPI_COMM_DUP_FN')
  call c_read_attr(dup, key_dup, val, found)
  if (found == 0 .or. val /= 777) call fail('C get of the copied value')
  call MPI_Comm_get_attr(dup, key_null, val, flag, ierr)
  if (flag) call fail('MPI_COMM_NULL_COPY_FN copied')
  call MPI_Comm_free(dup, ierr)

  ! the predefined copy functions, called as functions
  vin = 99
  vout = 0
  flag = .false.
  call MPI_COMM_DUP_FN(MPI_COMM_WORLD, key_dup, extra, vin, vout, flag, ierr)
  if (.not. flag .or. vout /= 99 .or. ierr /= MPI_SUCCESS) call fail('MPI_COMM_DUP_FN called directly')
  flag = .true.
  call MPI_COMM_NULL_COPY_FN(MPI_COMM_WORLD, key_dup, extra, vin, vout, flag, ierr)
  if (flag .or. ierr /= MPI_SUCCESS) call fail('MPI_COMM_NULL_COPY_FN called directly')

  call MPI_Comm_delete_attr(MPI_COMM_WORLD, key_null, ierr)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, key_dup, ierr)
  call MPI_Comm_free_keyval(key_null, ierr)
  call MPI_Comm_free_keyval(key_dup, ierr)

  ! MPI_INFO_GET of a key that is not there: flag false, value as it was
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'present', 'yes', ierr)
  value = 'unchanged'
  call MPI_Info_get(info, 'absent', 16, value, flag, ierr)
  if (flag .or. value /= 'unchanged') call fail('MPI_INFO_GET of a missing key changed the value')
  call MPI_Info_get(info, 'present', 16, value, flag, ierr)
  if (.not. flag .or. value /= 'yes') call fail('MPI_INFO_GET of a present key')
  ! MPI_INFO_GET_STRING: BUFLEN counts no terminator; VALUE gets its first BUFLEN characters
  value = 'unchanged'
  buflen = 16
  call MPI_Info_get_string(info, 'present', buflen, value, flag, ierr)
  if (.not. flag .or. buflen /= 3 .or. value /= 'yes') call fail('MPI_INFO_GET_STRING, room enough')
  buflen = 2
  call MPI_Info_get_string(info, 'present', buflen, value, flag, ierr)
  if (.not. flag .or. buflen /= 3 .or. value /= 'ye') call fail('MPI_INFO_GET_STRING, truncated')
  value = 'unchanged'
  buflen = 0
  call MPI_Info_get_string(info, 'present', buflen, value, flag, ierr)
  if (.not. flag .or. buflen /= 3 .or. value /= 'unchanged') call fail('MPI_INFO_GET_STRING, BUFLEN 0')
  buflen = 16
  call MPI_Info_get_string(info, 'absent', buflen, value, flag, ierr)
  if (flag .or. value /= 'unchanged') call fail('MPI_INFO_GET_STRING of a missing key')
  call MPI_Info_free(info, ierr)
  call MPI_Finalize(ierr)
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    call ftest_fail('f_attrlang.f90', what)
  end subroutine fail
end program f_attrlang
