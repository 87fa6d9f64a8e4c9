C     mpif.h (fixed form): MPI_Send / MPI_Recv of INTEGER and DOUBLE
C     PRECISION arrays, the status array (MPI_SOURCE, MPI_TAG,
C     MPI_Get_count), MPI_STATUS_IGNORE, MPI_Isend / MPI_Irecv /
C     MPI_Waitall with MPI_STATUSES_IGNORE, MPI_Wtime / MPI_Wtick and
C     MPI_Initialized / MPI_Finalized before and after.  Ranks 0 and 1
C     talk; any further ranks only take part in the setup.
      PROGRAM F77BASIC
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER N
      PARAMETER (N = 10)
      INTEGER IERR, RANK, NPROCS, PEER, I, CNT, K
      INTEGER STATUS(MPI_STATUS_SIZE), REQS(4)
      INTEGER IBUF(N), IBUF2(N)
      DOUBLE PRECISION DBUF(N), DBUF2(N), T1, T2, TICK
      LOGICAL FLAG

      FLAG = .TRUE.
      CALL MPI_INITIALIZED(FLAG, IERR)
      IF (FLAG) THEN
         WRITE (*, '(A)') 'FAIL f77_basic.f: initialized before init'
         STOP 1
      END IF
      CALL MPI_INIT(IERR)
      IF (IERR .NE. MPI_SUCCESS) THEN
         WRITE (*, '(A)') 'FAIL f77_basic.f: MPI_Init ierr'
         STOP 1
      END IF
      CALL MPI_INITIALIZED(FLAG, IERR)
      IF (.NOT. FLAG) CALL FAILED('not initialized after init')
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      IF (NPROCS .LT. 2) CALL FAILED('needs 2 ranks')
      IF (RANK .LT. 0 .OR. RANK .GE. NPROCS) CALL FAILED('rank')
      PEER = 1 - RANK

      IF (RANK .EQ. 0) THEN
         DO I = 1, N
            IBUF(I) = 7 * I + 1
            DBUF(I) = 0.5D0 * I - 3.0D0
         END DO
         CALL MPI_SEND(IBUF, N, MPI_INTEGER, 1, 11, MPI_COMM_WORLD,
     &                 IERR)
         CALL MPI_SEND(DBUF, 7, MPI_DOUBLE_PRECISION, 1, 12,
     &                 MPI_COMM_WORLD, IERR)
         IBUF2 = -1
         CALL MPI_RECV(IBUF2, N, MPI_INTEGER, 1, 13, MPI_COMM_WORLD,
     &                 MPI_STATUS_IGNORE, IERR)
         IF (IERR .NE. MPI_SUCCESS) CALL FAILED('recv ignore ierr')
         DO I = 1, N
            IF (IBUF2(I) .NE. 100 - I) CALL FAILED('status_ignore data')
         END DO
      ELSE IF (RANK .EQ. 1) THEN
         IBUF = 0
         STATUS(MPI_SOURCE) = -5
         STATUS(MPI_TAG) = -5
         CALL MPI_RECV(IBUF, N, MPI_INTEGER, MPI_ANY_SOURCE,
     &                 MPI_ANY_TAG, MPI_COMM_WORLD, STATUS, IERR)
         IF (IERR .NE. MPI_SUCCESS) CALL FAILED('recv ierr')
         IF (STATUS(MPI_SOURCE) .NE. 0) CALL FAILED('status source')
         IF (STATUS(MPI_TAG) .NE. 11) CALL FAILED('status tag')
         CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, CNT, IERR)
         IF (CNT .NE. N) CALL FAILED('get_count integer')
         DO I = 1, N
            IF (IBUF(I) .NE. 7 * I + 1) CALL FAILED('integer data')
         END DO
         DBUF = 99.0D0
         CALL MPI_RECV(DBUF, N, MPI_DOUBLE_PRECISION, 0, MPI_ANY_TAG,
     &                 MPI_COMM_WORLD, STATUS, IERR)
         IF (STATUS(MPI_SOURCE) .NE. 0) CALL FAILED('status source 2')
         IF (STATUS(MPI_TAG) .NE. 12) CALL FAILED('status tag 2')
         CALL MPI_GET_COUNT(STATUS, MPI_DOUBLE_PRECISION, CNT, IERR)
         IF (CNT .NE. 7) CALL FAILED('get_count double')
         DO I = 1, 7
            IF (ABS(DBUF(I) - (0.5D0 * I - 3.0D0)) .GT. 0.0D0)
     &         CALL FAILED('double data')
         END DO
         IF (ABS(DBUF(8) - 99.0D0) .GT. 0.0D0)
     &      CALL FAILED('double past count written')
         DO I = 1, N
            IBUF2(I) = 100 - I
         END DO
         CALL MPI_SEND(IBUF2, N, MPI_INTEGER, 0, 13, MPI_COMM_WORLD,
     &                 IERR)
      END IF

C     Nonblocking exchange between ranks 0 and 1, three rounds.
      IF (RANK .LE. 1) THEN
         DO K = 1, 3
            DO I = 1, N
               IBUF(I) = 1000 * RANK + 10 * K + I
               DBUF(I) = 1.25D0 * (RANK + 1) + K * I
            END DO
            IBUF2 = -1
            DBUF2 = -1.0D0
            CALL MPI_IRECV(IBUF2, N, MPI_INTEGER, PEER, 21,
     &                     MPI_COMM_WORLD, REQS(1), IERR)
            CALL MPI_IRECV(DBUF2, N, MPI_DOUBLE_PRECISION, PEER, 22,
     &                     MPI_COMM_WORLD, REQS(2), IERR)
            CALL MPI_ISEND(DBUF, N, MPI_DOUBLE_PRECISION, PEER, 22,
     &                     MPI_COMM_WORLD, REQS(3), IERR)
            CALL MPI_ISEND(IBUF, N, MPI_INTEGER, PEER, 21,
     &                     MPI_COMM_WORLD, REQS(4), IERR)
            CALL MPI_WAITALL(4, REQS, MPI_STATUSES_IGNORE, IERR)
            IF (IERR .NE. MPI_SUCCESS) CALL FAILED('waitall ierr')
            DO I = 1, 4
               IF (REQS(I) .NE. MPI_REQUEST_NULL)
     &            CALL FAILED('request not null after waitall')
            END DO
            DO I = 1, N
               IF (IBUF2(I) .NE. 1000 * PEER + 10 * K + I)
     &            CALL FAILED('isend/irecv integer data')
               IF (ABS(DBUF2(I) - (1.25D0 * (PEER + 1) + K * I))
     &             .GT. 0.0D0) CALL FAILED('isend/irecv double data')
            END DO
         END DO
      END IF

C     MPI_Wtime increases; MPI_Wtick is a small positive resolution.
      TICK = MPI_WTICK()
      IF (.NOT. (TICK .GT. 0.0D0 .AND. TICK .LT. 1.0D0))
     &   CALL FAILED('wtick out of range')
      T1 = MPI_WTIME()
      T2 = T1
      DO I = 1, 100000000
         T2 = MPI_WTIME()
         IF (T2 .GT. T1) EXIT
      END DO
      IF (.NOT. (T2 .GT. T1)) CALL FAILED('wtime does not increase')
      IF (T2 - T1 .GT. 10.0D0) CALL FAILED('wtime jumps')

      CALL MPI_FINALIZED(FLAG, IERR)
      IF (FLAG) CALL FAILED('finalized before finalize')
      CALL MPI_FINALIZE(IERR)
      IF (IERR .NE. MPI_SUCCESS) THEN
         WRITE (*, '(A)') 'FAIL f77_basic.f: MPI_Finalize ierr'
         STOP 1
      END IF
      FLAG = .FALSE.
      CALL MPI_FINALIZED(FLAG, IERR)
      IF (.NOT. FLAG) THEN
         WRITE (*, '(A)') 'FAIL f77_basic.f: not finalized after'
         STOP 1
      END IF
      FLAG = .FALSE.
      CALL MPI_INITIALIZED(FLAG, IERR)
      IF (.NOT. FLAG) THEN
         WRITE (*, '(A)') 'FAIL f77_basic.f: not initialized after'
         STOP 1
      END IF
      END

      SUBROUTINE FAILED(WHAT)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      CHARACTER*(*) WHAT
      INTEGER IERR
      WRITE (*, '(A,A)') 'FAIL f77_basic.f: ', WHAT
      FLUSH (6)
      CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END
