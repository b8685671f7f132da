# test_cli_common: the shared helpers of cli/cli_common.c (option scanning,
# value parsing, human units; the finders of collectors/kpt_record.c) and cli/cli_opt.c (the option parser), compiled into the test with a stub command
# table (kptprof's own table lives in cli/main.c).
if(CMOCKA_FOUND)
  list(APPEND KPT_UNIT_CUSTOM test_cli_common)
  add_executable(test_cli_common ${CMAKE_CURRENT_LIST_DIR}/test_cli_common.c
                 ${PROJECT_SOURCE_DIR}/cli/cli_common.c ${PROJECT_SOURCE_DIR}/cli/cli_opt.c
                 ${PROJECT_SOURCE_DIR}/collectors/kpt_record.c ${PROJECT_SOURCE_DIR}/collectors/kpt_record_merge.c
                 ${PROJECT_SOURCE_DIR}/collectors/kpt_record_project.c ${PROJECT_SOURCE_DIR}/collectors/kpt_devprobe.c
                 ${PROJECT_SOURCE_DIR}/collectors/kpt_window.c)
  target_include_directories(test_cli_common PRIVATE ${PROJECT_SOURCE_DIR}/cli ${PROJECT_SOURCE_DIR}/collectors)
  # cli_common.c names path components by analyzer/baseline's rule and message
  target_compile_definitions(test_cli_common PRIVATE KPT_VERSION="${PROJECT_VERSION}")
  target_link_libraries(test_cli_common PRIVATE kptanalyzer kpt PkgConfig::CMOCKA ${CMAKE_DL_LIBS})
  add_test(NAME unit.test_cli_common COMMAND test_cli_common)
  set_tests_properties(unit.test_cli_common PROPERTIES LABELS unit TIMEOUT 60)
endif()
