# The floors of docs/architecture.md: includes and calls go down, the
# analyzer's objects call each other round no circle (tests/arch/test_layers.sh;
# reads the sources and, with nm, the built libraries). CPU, about a second.
add_test(NAME arch.test_layers COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_layers.sh)
set_tests_properties(arch.test_layers PROPERTIES LABELS unit TIMEOUT 60
  ENVIRONMENT "KPT_SRC=${PROJECT_SOURCE_DIR};KPT_BUILD=${PROJECT_BINARY_DIR}")
