# kpt-ctlrec: writes a recording with control characters in its names and
# meta values, for tests/cli/test_report_controls.sh (lands at
# ${PROJECT_BINARY_DIR}/kpt-ctlrec).
add_executable(kpt-ctlrec ${CMAKE_CURRENT_LIST_DIR}/kpt_ctlrec.c)
target_link_libraries(kpt-ctlrec PRIVATE kpt)
set_target_properties(kpt-ctlrec PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
