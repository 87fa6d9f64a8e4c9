# libfabric is loaded at run time (src/fabric/fabric.c, docs/DESIGN.md "Fatal signals and the
# fabric libraries"), not linked. What linking would have bound is read here from the library the
# build found (pkg-config), so that the run-time load binds the same:
#   APTUS_LIBFABRIC_SONAME       its SONAME (libfabric.so.1), looked up on the loader's path;
#   APTUS_LIBFABRIC_PATH         the file itself, tried when the SONAME is not found;
#   APTUS_FI_<NAME>_VERSION      the default symbol version of each entry point the library
#                                calls (fi_getinfo@@FABRIC_1.3, ...): the structure layouts the
#                                headers describe. Without nm the unversioned symbol is taken.
#
# aptus_libfabric_runtime() adds them to the compile definitions of src/fabric/fabric.c (call it
# from the directory that builds that file).

function(aptus_libfabric_runtime)
  set(lib "")
  foreach(l IN LISTS LIBFABRIC_LINK_LIBRARIES)
    if(l MATCHES "libfabric[^/]*\\.so")
      set(lib ${l})
    endif()
  endforeach()
  if(NOT lib)
    find_library(APTUS_LIBFABRIC_FILE NAMES fabric HINTS ${LIBFABRIC_LIBRARY_DIRS})
    set(lib ${APTUS_LIBFABRIC_FILE})
  endif()
  set(defs "")
  set(soname "libfabric.so.1")
  if(lib AND EXISTS ${lib})
    get_filename_component(real ${lib} REALPATH)
    list(APPEND defs "APTUS_LIBFABRIC_PATH=\"${real}\"")
    if(CMAKE_OBJDUMP)
      execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${real} OUTPUT_VARIABLE dyn ERROR_QUIET)
      if(dyn MATCHES "SONAME +([^ \n]+)")
        set(soname ${CMAKE_MATCH_1})
      endif()
    endif()
    if(CMAKE_NM)
      execute_process(COMMAND ${CMAKE_NM} -D --defined-only ${real} OUTPUT_VARIABLE syms ERROR_QUIET)
      foreach(fn getinfo freeinfo dupinfo fabric strerror)
        if(syms MATCHES " fi_${fn}@@([A-Za-z0-9_.]+)")
          string(TOUPPER ${fn} up)
          list(APPEND defs "APTUS_FI_${up}_VERSION=\"${CMAKE_MATCH_1}\"")
        endif()
      endforeach()
    endif()
  endif()
  list(APPEND defs "APTUS_LIBFABRIC_SONAME=\"${soname}\"")
  message(STATUS "Aptus MPI: libfabric loaded at run time as ${soname} (${defs})")
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/fabric/fabric.c APPEND PROPERTY COMPILE_DEFINITIONS ${defs})
endfunction()
