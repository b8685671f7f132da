# kpt-testrec: writes the hand-made recording of tests/unit/kpt_test_rec.h
# for CLI tests of report/export (lands at ${PROJECT_BINARY_DIR}/kpt-testrec).
add_executable(kpt-testrec ${CMAKE_CURRENT_LIST_DIR}/kpt_testrec.c)
target_include_directories(kpt-testrec PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit)
target_link_libraries(kpt-testrec PRIVATE kpt)
set_target_properties(kpt-testrec PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
