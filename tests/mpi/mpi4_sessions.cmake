# Tests registered by the mpi4_sessions work (see tests/mpi/CMakeLists.txt for aptus_mpi_test).
