# Tests registered by the mpi4_p2p work (see tests/mpi/CMakeLists.txt for aptus_mpi_test).
