# The history store's tests on real databases (tests/unit/test_history_store.c):
# built once for SQLite and once for PostgreSQL ($KPT_TEST_PG_URL, else
# skipped with 77; .ci/run starts a server with tests/pg-server.sh).
list(APPEND KPT_UNIT_CUSTOM test_history_store)
if(CMOCKA_FOUND AND TARGET kptanalyzer)
  foreach(variant test_history_store test_history_store_pg)
    add_executable(${variant} ${CMAKE_CURRENT_LIST_DIR}/test_history_store.c)
    target_link_libraries(${variant} PRIVATE ${kpt_cpu_libs} PkgConfig::CMOCKA)
    target_compile_definitions(${variant} PRIVATE KPT_SRC_DIR="${PROJECT_SOURCE_DIR}")
    add_test(NAME unit.${variant} COMMAND ${KPT_SKIP_NOTE} unit.${variant} $<TARGET_FILE:${variant}>)
    set_tests_properties(unit.${variant} PROPERTIES LABELS unit TIMEOUT 300 SKIP_RETURN_CODE 77)
  endforeach()
  if(LIBPQ_FOUND)
    target_compile_definitions(test_history_store_pg PRIVATE KPT_TEST_PG=1)
  else()
    # no libpq: the PostgreSQL variant reports itself skipped
    target_compile_definitions(test_history_store_pg PRIVATE KPT_TEST_PG=1 KPT_TEST_NO_PQ=1)
  endif()
endif()
