# The Fortran bindings (MPI 5.0's standard ABI, Fortran section): libmpifort_abi.so.1 over
# libmpi_abi through standard C ABI calls only, mpif.h and the module `mpi`, and the wrapper
# mpifort (mpif77, mpif90). Built when CMake finds a Fortran compiler; the sources under
# src/fortran/gen/ and include/mpif.h are written by tools/gen_fortran.py and committed.
include(CheckLanguage)
check_language(Fortran)
option(APTUS_WITH_FORTRAN "Build the Fortran bindings when a Fortran compiler is found" ON)
if(NOT APTUS_WITH_FORTRAN OR NOT CMAKE_Fortran_COMPILER)
  message(STATUS "Aptus MPI: no Fortran compiler; the Fortran bindings are not built")
  return()
endif()
enable_language(Fortran)
set(APTUS_FORTRAN_MODDIR ${PROJECT_BINARY_DIR}/fortran/modules)
add_library(mpifort_abi SHARED
  src/fortran/f_runtime.c src/fortran/f_hand.c src/fortran/f_section.c src/fortran/gen/f_entries.c
  src/fortran/gen/mpi_module.f90 src/fortran/gen/mpi_f08.f90)
target_include_directories(mpifort_abi PRIVATE ${PROJECT_SOURCE_DIR}/src)
# The Fortran compiler's C descriptor header (ISO_Fortran_binding.h): the array sections of
# mpi_f08 arrive as its CFI_cdesc_t, whose layout is that compiler's.
execute_process(COMMAND ${CMAKE_Fortran_COMPILER} -print-file-name=include
  OUTPUT_VARIABLE aptus_fc_include OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
find_file(APTUS_CFI_HEADER ISO_Fortran_binding.h HINTS "${aptus_fc_include}")
if(NOT APTUS_CFI_HEADER)
  message(FATAL_ERROR "Aptus MPI: the Fortran compiler ${CMAKE_Fortran_COMPILER} has no ISO_Fortran_binding.h "
    "(Fortran 2018 C descriptors, gfortran 9 or later); configure with -DAPTUS_WITH_FORTRAN=OFF")
endif()
set_source_files_properties(src/fortran/f_section.c PROPERTIES
  COMPILE_DEFINITIONS "APTUS_CFI_HEADER=\"${APTUS_CFI_HEADER}\"")
target_include_directories(mpifort_abi PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<BUILD_INTERFACE:${APTUS_FORTRAN_MODDIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(mpifort_abi PUBLIC mpi_abi PRIVATE Threads::Threads)
# INSTALL_RPATH $ORIGIN: libmpi_abi is found beside it (a program's own run path does not serve
# the libraries it loads).
set_target_properties(mpifort_abi PROPERTIES VERSION 1.0.0 SOVERSION 1
  Fortran_MODULE_DIRECTORY ${APTUS_FORTRAN_MODDIR} LINKER_LANGUAGE C INSTALL_RPATH "$ORIGIN")
find_package(Threads REQUIRED)
install(TARGETS mpifort_abi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES include/mpif.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(m mpi mpi_f08 aptus_f08_types aptus_f08_entries aptus_f08_impl)
  install(FILES ${APTUS_FORTRAN_MODDIR}/${m}.mod DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()

# The wrapper: the build tree's copy with absolute paths, the installed one relative to itself.
set(APTUS_WRAPPER_LANG "Fortran")
set(APTUS_WRAPPER_ENV "APTUS_FC")
set(APTUS_WRAPPER_DEFAULT ${CMAKE_Fortran_COMPILER})
set(APTUS_WRAPPER_LIBS "-lmpifort_abi -lmpi_abi")
set(APTUS_VERSION ${PROJECT_VERSION})
# gfortran 10 and later refuse calls through mpif.h whose buffers differ in type unless told
# (the standard's "choice" arguments): the wrapper adds the flag for that compiler only.
set(APTUS_WRAPPER_FLAGS "")
if(CMAKE_Fortran_COMPILER_ID STREQUAL "GNU" AND CMAKE_Fortran_COMPILER_VERSION VERSION_GREATER_EQUAL 10)
  set(APTUS_WRAPPER_FLAGS "-fallow-argument-mismatch")
endif()
set(APTUS_WRAPPER_PATHS "incdir=\"${PROJECT_SOURCE_DIR}/include\"\nmoddir=\"${APTUS_FORTRAN_MODDIR}\"\nlibdir=\"${PROJECT_BINARY_DIR}\"")
set(wrappers ${PROJECT_BINARY_DIR}/tools/wrappers)
foreach(name mpifort mpif77 mpif90)
  configure_file(tools/wrappers/wrapper.in ${wrappers}/${name} @ONLY FILE_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endforeach()
# (installed, the modules are in the include directory)
set(APTUS_WRAPPER_PATHS "prefix=$(cd \"$(dirname \"$(readlink -f \"$0\")\")/..\" && pwd)\nincdir=\"$prefix/${CMAKE_INSTALL_INCLUDEDIR}\"\nlibdir=\"$prefix/${CMAKE_INSTALL_LIBDIR}\"")
configure_file(tools/wrappers/wrapper.in ${wrappers}/install/mpifort @ONLY)
install(PROGRAMS ${wrappers}/install/mpifort DESTINATION ${CMAKE_INSTALL_BINDIR})
install(CODE "foreach(n mpif77 mpif90)
  file(CREATE_LINK mpifort \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/\${n} SYMBOLIC)
endforeach()")
message(STATUS "Aptus MPI: Fortran bindings with ${CMAKE_Fortran_COMPILER_ID} ${CMAKE_Fortran_COMPILER_VERSION}")
