# MPI tests for this area (included from CMakeLists.txt).
