# kpt-hostrec: writes recordings with names hostile to every output format,
# for tests/cli/test_hostile_names.sh (lands at ${PROJECT_BINARY_DIR}/kpt-hostrec).
add_executable(kpt-hostrec ${CMAKE_CURRENT_LIST_DIR}/kpt_hostrec.c)
target_link_libraries(kpt-hostrec PRIVATE kpt)
set_target_properties(kpt-hostrec PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
