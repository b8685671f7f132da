# Skipped tests say why in the normal ctest output. A test registered as
#   add_test(NAME N COMMAND ${KPT_SKIP_NOTE} N CMD ...)
# runs under tests/ctest/skip-note.sh, which keeps the last output line of a
# test that exits 77 in ${KPT_SKIP_DIR}/N; ctest clears that folder before the
# tests (CTEST_CUSTOM_PRE_TEST) and prints each note after its summary
# (CTEST_CUSTOM_POST_TEST, skip-reasons.sh).
set(KPT_SKIP_DIR ${PROJECT_BINARY_DIR}/Testing/skipped)
set(KPT_SKIP_NOTE bash ${CMAKE_CURRENT_LIST_DIR}/ctest/skip-note.sh ${KPT_SKIP_DIR})
file(WRITE ${PROJECT_BINARY_DIR}/CTestCustom.cmake
  "set(CTEST_CUSTOM_PRE_TEST \"rm -rf ${KPT_SKIP_DIR}\")\n"
  "set(CTEST_CUSTOM_POST_TEST \"sh ${CMAKE_CURRENT_LIST_DIR}/ctest/skip-reasons.sh ${KPT_SKIP_DIR}\")\n")
