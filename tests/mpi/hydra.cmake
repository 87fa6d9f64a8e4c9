# Tests registered by the hydra work (see tests/mpi/CMakeLists.txt for aptus_mpi_test).
