# pkg-config files of spanscope's libraries, each written twice from one
# template: NAME.pc for the install (relocatable: its prefix is found from
# where the file lies) and NAME-uninstalled.pc in the build tree, which
# pkg-config prefers when PKG_CONFIG_PATH names the build directory, so that
# a program can be linked against a build that was never installed.

# sps_pc_libs(OUT ITEM...) -- link items (absolute library paths, bare names,
# flags) as pkg-config flags: /d/libx.so -> -L/d -lx, with no -L for the
# compiler's own directories; flags stay as they are.  First use wins.
function(sps_pc_libs out)
  set(flags "")
  foreach(item IN LISTS ARGN)
    if(item MATCHES "^-")
      list(APPEND flags "${item}")
    elseif(IS_ABSOLUTE "${item}")
      get_filename_component(dir "${item}" DIRECTORY)
      get_filename_component(file "${item}" NAME)
      string(REGEX REPLACE "^lib" "" lib "${file}")
      string(REGEX REPLACE "\\.(so|a)(\\.[0-9.]*)?$" "" lib "${lib}")
      list(FIND CMAKE_C_IMPLICIT_LINK_DIRECTORIES "${dir}" implicit)
      if(implicit EQUAL -1)
        list(APPEND flags "-L${dir}")
      endif()
      list(APPEND flags "-l${lib}")
    elseif(NOT item MATCHES "::")
      list(APPEND flags "-l${item}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES flags)
  list(JOIN flags " " flags)
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

# sps_pc_dependency(REQ_VAR LIBS_VAR MODULE VERSION LIB...) -- a private
# dependency of a static link: the pkg-config module MODULE when this
# machine has it (at VERSION, if one is given: the copy CMake found), else
# LIB... as flags.
function(sps_pc_dependency req_var libs_var module version)
  set(req "${${req_var}}")
  set(libs "${${libs_var}}")
  set(use_module OFF)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(_sps_pc_${module} QUIET ${module})
    if(_sps_pc_${module}_FOUND AND
       (version STREQUAL "" OR _sps_pc_${module}_VERSION VERSION_EQUAL version))
      set(use_module ON)
    endif()
  endif()
  if(use_module)
    list(APPEND req ${module})
  else()
    sps_pc_libs(flags ${ARGN})
    list(APPEND libs ${flags})
  endif()
  set(${req_var} "${req}" PARENT_SCOPE)
  set(${libs_var} "${libs}" PARENT_SCOPE)
endfunction()

# sps_write_pc(NAME) -- cmake/NAME.pc.in as NAME.pc (installed into
# LIBDIR/pkgconfig) and NAME-uninstalled.pc (build tree).  The template
# uses @SPS_PC_DIRS@ for its prefix, libdir and includedir lines and any
# variable set by the caller.
function(sps_write_pc name)
  file(RELATIVE_PATH rel "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
  string(REGEX REPLACE "/$" "" rel "${rel}")
  set(SPS_PC_DIRS "# relocatable: the prefix is found from where this file is installed
prefix=\${pcfiledir}/${rel}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${name}.pc.in
    ${PROJECT_BINARY_DIR}/pc/${name}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pc/${name}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  set(libdir "${PROJECT_BINARY_DIR}")
  if(CMAKE_LIBRARY_OUTPUT_DIRECTORY)
    set(libdir "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")
  endif()
  set(SPS_PC_DIRS "# the build tree of ${PROJECT_SOURCE_DIR}, not installed
libdir=${libdir}
includedir=${PROJECT_SOURCE_DIR}/include")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${name}.pc.in
    ${PROJECT_BINARY_DIR}/${name}-uninstalled.pc @ONLY)
endfunction()
