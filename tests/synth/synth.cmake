include_guard(GLOBAL)
# kpt-synth: realistic synthetic recordings for tests and benchmarks.
# Included by tests/CMakeLists.txt. The generator is also a library
# (kpt_synth, header tests/synth/kpt_synth.h) for tests and benchmarks that
# make recordings in-process. The binary lands at ${PROJECT_BINARY_DIR}/kpt-synth.
add_library(kpt_synth STATIC ${CMAKE_CURRENT_LIST_DIR}/kpt_synth_gen.c)
target_include_directories(kpt_synth PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(kpt_synth PUBLIC kpt m)
add_executable(kpt-synth ${CMAKE_CURRENT_LIST_DIR}/kpt_synth.c)
target_link_libraries(kpt-synth PRIVATE kpt_synth)
set_target_properties(kpt-synth PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})

# Unit test of the generator (needs kpt_synth, so built here).
if(CMOCKA_FOUND)
  list(APPEND KPT_UNIT_CUSTOM test_synth)
  add_executable(test_synth ${CMAKE_CURRENT_LIST_DIR}/../unit/test_synth.c)
  target_link_libraries(test_synth PRIVATE kpt_synth kpt PkgConfig::CMOCKA)
  add_test(NAME unit.test_synth COMMAND test_synth)
  set_tests_properties(unit.test_synth PROPERTIES LABELS unit TIMEOUT 300)
endif()

add_test(NAME synth.kpt_synth_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_kpt_synth_cli.sh $<TARGET_FILE:kpt-synth>)
set_tests_properties(synth.kpt_synth_cli PROPERTIES LABELS unit TIMEOUT 60)
