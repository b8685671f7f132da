# test_baseline makes recordings in-process (kpt_synth), so it is built
# here rather than by the generic unit loop.
include(${PROJECT_SOURCE_DIR}/tests/synth/synth.cmake)
if(CMOCKA_FOUND)
  list(APPEND KPT_UNIT_CUSTOM test_baseline)
  add_executable(test_baseline ${CMAKE_CURRENT_LIST_DIR}/test_baseline.c)
  get_property(kpt_baseline_test_libs GLOBAL PROPERTY KPT_CPU_LIBS)
  target_link_libraries(test_baseline PRIVATE ${kpt_baseline_test_libs} kpt_synth PkgConfig::CMOCKA)
  add_test(NAME unit.test_baseline COMMAND test_baseline)
  set_tests_properties(unit.test_baseline PROPERTIES LABELS unit TIMEOUT 300)
endif()
