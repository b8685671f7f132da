# docs.examples: every command example of README.md and docs/*.md runs against
# the committed data (tests/docs/check_examples.py has the convention); label
# cli, no GPU needed: GPU commands are only parsed (KPTPROF_CHECK_ARGS).
if(TARGET kptprof)
  add_test(NAME docs.examples COMMAND ${KPT_SKIP_NOTE} docs.examples bash ${CMAKE_CURRENT_LIST_DIR}/check-examples.sh)
  set_tests_properties(docs.examples PROPERTIES LABELS cli TIMEOUT 600 SKIP_RETURN_CODE 77
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;KPT_BUILD=${PROJECT_BINARY_DIR}")
endif()
