# kpt-hostile: writes hostile recordings (names, deep and cyclic ranges,
# long names, odd slugs, a damaged kernel section) at test time for the
# CLI tests of untrusted input (lands at ${PROJECT_BINARY_DIR}/kpt-hostile).
add_executable(kpt-hostile ${CMAKE_CURRENT_LIST_DIR}/kpt_hostile.c)
target_include_directories(kpt-hostile PRIVATE ${PROJECT_SOURCE_DIR}/lib)
target_link_libraries(kpt-hostile PRIVATE kpt)
set_target_properties(kpt-hostile PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
