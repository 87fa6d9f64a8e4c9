/* Shared by the one-sided tests (rma_win.c, rma_basic.c, rma_sync.c): the ranks around this one,
 * the value each rank puts, and the epoch in which a process touches its own window memory. */
#ifndef APTUS_TESTS_RMA_COMMON_H
#define APTUS_TESTS_RMA_COMMON_H

#include "mtest.h"

static int rank, size, left, right;

/* MPI_Init, and this rank's place among its neighbours (modulo the size). */
static void rma_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank - 1 + size) % size;
}

/* The value that rank src puts at index i. */
static int val(int src, int i)
{
    return src * 1000 + i + 1;
}

/* Loads and stores of this process's own window memory happen inside a lock of its own window, so that
 * they are ordered with the RMA of others in the separate memory model as well as in the unified one. */
static void local_begin(MPI_Win win)
{
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
}

static void local_end(MPI_Win win)
{
    MPI_CHECK(MPI_Win_sync(win));
    MPI_CHECK(MPI_Win_unlock(rank, win));
}

#endif
