# Stubs for the MPI functions that no source file defines yet.
#
# include(cmake/unimplemented.cmake) from the top-level CMakeLists.txt, then add
# ${APTUS_GENERATED_SOURCES} to the library's sources.  The generator
# (tools/gen_unimplemented.py) reads every prototype of include/mpi.h, scans
# src/**/*.c for the functions already defined, and writes one stub per missing
# function into ${CMAKE_BINARY_DIR}/generated/unimplemented.c.  It runs again
# whenever mpi.h, the generator or any source file under src/ changes; adding
# or removing a source file re-runs the configure step (CONFIGURE_DEPENDS).

find_package(Python3 REQUIRED COMPONENTS Interpreter)

file(GLOB_RECURSE APTUS_UNIMPLEMENTED_SCANNED CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/src/*.c)

set(APTUS_UNIMPLEMENTED_C ${CMAKE_BINARY_DIR}/generated/unimplemented.c)

# The definitions are read from the compiled objects of aptus_core (nm), so functions written
# through macros count too.
#
# Dependencies, for every generator: the target name aptus_core in DEPENDS makes every target
# that uses this command (aptus_stubs) wait until aptus_core is built -- without it the Makefiles
# generator may run the command before the objects exist, and fails with "No rule to make target
# .../pmi.c.o", since one target's makefile has no rules for another's objects. The object files
# themselves (file-level dependencies) then make the command run again whenever one of them was
# rebuilt: by then they exist, so make only compares their times.
add_custom_command(
  OUTPUT ${APTUS_UNIMPLEMENTED_C}
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/gen_unimplemented.py
          --quiet
          --header ${PROJECT_SOURCE_DIR}/include/mpi.h
          ${APTUS_UNIMPLEMENTED_C}
          --objects $<TARGET_OBJECTS:aptus_core>
  DEPENDS aptus_core
          ${PROJECT_SOURCE_DIR}/tools/gen_unimplemented.py
          ${PROJECT_SOURCE_DIR}/include/mpi.h
          $<TARGET_OBJECTS:aptus_core>
  COMMENT "Generating stubs for the MPI functions not implemented yet"
  COMMAND_EXPAND_LISTS
  VERBATIM)

set(APTUS_GENERATED_SOURCES ${APTUS_UNIMPLEMENTED_C})
