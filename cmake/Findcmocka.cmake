# Findcmocka -- the cmocka unit-testing library, for spanscope's C tests.
# Defines cmocka_FOUND and the imported target cmocka::cmocka.  Looks with
# pkg-config when there is one (its directories as hints), else for the
# header and the library alone.  -DCMAKE_DISABLE_FIND_PACKAGE_cmocka=TRUE
# hides it (tests/install/standalone.sh builds that way).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_CMOCKA QUIET cmocka)
endif()
find_path(CMOCKA_INCLUDE_DIR cmocka.h HINTS ${PC_CMOCKA_INCLUDE_DIRS})
find_library(CMOCKA_LIBRARY cmocka HINTS ${PC_CMOCKA_LIBRARY_DIRS})
set(cmocka_VERSION ${PC_CMOCKA_VERSION})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(cmocka
  REQUIRED_VARS CMOCKA_LIBRARY CMOCKA_INCLUDE_DIR
  VERSION_VAR cmocka_VERSION)
if(cmocka_FOUND AND NOT TARGET cmocka::cmocka)
  add_library(cmocka::cmocka UNKNOWN IMPORTED)
  set_target_properties(cmocka::cmocka PROPERTIES
    IMPORTED_LOCATION "${CMOCKA_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CMOCKA_INCLUDE_DIR}")
endif()
mark_as_advanced(CMOCKA_INCLUDE_DIR CMOCKA_LIBRARY)
