# Tests registered by the conformance_obj work (see tests/mpi/CMakeLists.txt for aptus_mpi_test).
