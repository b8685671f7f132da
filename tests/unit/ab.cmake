# collectors/kpt_ab.c, the A/B orchestration: a unit test with a recorder
# stand-in, linked with the recorder's CUDA-free files as kptprof is.
list(APPEND KPT_UNIT_CUSTOM test_ab)
if(CMOCKA_FOUND)
  add_executable(test_ab ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_ab.c ${PROJECT_SOURCE_DIR}/collectors/kpt_ab.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_record.c ${PROJECT_SOURCE_DIR}/collectors/kpt_record_merge.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_record_project.c ${PROJECT_SOURCE_DIR}/collectors/kpt_devprobe.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_inject_path.c ${PROJECT_SOURCE_DIR}/collectors/kpt_window.c)
  target_include_directories(test_ab PRIVATE ${PROJECT_SOURCE_DIR}/collectors)
  target_compile_definitions(test_ab PRIVATE KPT_VERSION="${PROJECT_VERSION}")
  target_link_libraries(test_ab PRIVATE ${kpt_cpu_libs} PkgConfig::CMOCKA dl m)
  add_test(NAME unit.test_ab COMMAND test_ab)
  set_tests_properties(unit.test_ab PROPERTIES LABELS unit TIMEOUT 60)
endif()
