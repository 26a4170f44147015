# Finds GLPK (the GNU Linear Programming Kit), which the memory planner's
# optimal mode solves its 0-1 programs with. Defines the imported target
# GLPK::GLPK; a missing GLPK stops the configure with the package to install.
find_path(GLPK_INCLUDE_DIR glpk.h)
find_library(GLPK_LIBRARY glpk)
if(NOT GLPK_INCLUDE_DIR OR NOT GLPK_LIBRARY)
  message(FATAL_ERROR
    "GLPK not found (glpk.h and libglpk). On Debian install the package "
    "libglpk-dev (scripts/setup.sh does), or point GLPK_INCLUDE_DIR and "
    "GLPK_LIBRARY at an installed GLPK.")
endif()
if(NOT TARGET GLPK::GLPK)
  add_library(GLPK::GLPK UNKNOWN IMPORTED)
  set_target_properties(GLPK::GLPK PROPERTIES
    IMPORTED_LOCATION "${GLPK_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${GLPK_INCLUDE_DIR}")
endif()
set(GLPK_FOUND TRUE)
mark_as_advanced(GLPK_INCLUDE_DIR GLPK_LIBRARY)
