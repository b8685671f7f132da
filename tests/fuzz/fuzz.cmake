# The reader's fuzz target. Included by tests/CMakeLists.txt.
#  - every build: fuzz_replay runs the committed corpus (tests/fuzz/corpus/)
#    through the same entry point as the fuzzer (ctest label unit;fuzz);
#  - KPT_FUZZ=ON with clang: fuzz_reader, a libFuzzer binary, with the kpt
#    library instrumented for coverage and ASan/UBSan.
#    tests/fuzz/run-fuzz.sh SECONDS builds and runs it.
add_executable(fuzz_replay ${CMAKE_CURRENT_LIST_DIR}/fuzz_reader.c ${CMAKE_CURRENT_LIST_DIR}/fuzz_replay.c)
target_link_libraries(fuzz_replay PRIVATE kpt)
add_test(NAME fuzz.reader_corpus COMMAND fuzz_replay ${CMAKE_CURRENT_LIST_DIR}/corpus)
set_tests_properties(fuzz.reader_corpus PROPERTIES LABELS "unit;fuzz" TIMEOUT 300)

# The same for the Chrome trace importer: fuzz_import_replay runs
# tests/fuzz/corpus_import/, fuzz_import is its libFuzzer binary
# (KPT_FUZZ_TARGET=fuzz_import tests/fuzz/run-fuzz.sh SECONDS).
add_executable(fuzz_import_replay ${CMAKE_CURRENT_LIST_DIR}/fuzz_import.c ${CMAKE_CURRENT_LIST_DIR}/fuzz_replay.c)
target_link_libraries(fuzz_import_replay PRIVATE kpt)
add_test(NAME fuzz.import_corpus COMMAND fuzz_import_replay ${CMAKE_CURRENT_LIST_DIR}/corpus_import)
set_tests_properties(fuzz.import_corpus PROPERTIES LABELS "unit;fuzz" TIMEOUT 300)
# The nsys SQLite importer goes through the same entry point (kpt_import
# sniffs the format): seeds in tests/fuzz/corpus_import_nsys/
# (KPT_FUZZ_TARGET=fuzz_import_nsys tests/fuzz/run-fuzz.sh SECONDS).
add_test(NAME fuzz.import_nsys_corpus COMMAND fuzz_import_replay ${CMAKE_CURRENT_LIST_DIR}/corpus_import_nsys)
set_tests_properties(fuzz.import_nsys_corpus PROPERTIES LABELS "unit;fuzz" TIMEOUT 300)

if(KPT_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "KPT_FUZZ=ON needs clang (configure with CC=clang CXX=clang++)")
  endif()
  # undefined behaviour is a finding like a crash: -fno-sanitize-recover
  # makes UBSan abort at the first report (without it, libFuzzer goes on).
  target_compile_options(kpt PRIVATE -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
  add_executable(fuzz_reader ${CMAKE_CURRENT_LIST_DIR}/fuzz_reader.c)
  target_compile_options(fuzz_reader PRIVATE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
  target_link_options(fuzz_reader PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_reader PRIVATE kpt)
  set_target_properties(fuzz_reader PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
  add_executable(fuzz_import ${CMAKE_CURRENT_LIST_DIR}/fuzz_import.c)
  target_compile_options(fuzz_import PRIVATE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
  target_link_options(fuzz_import PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_import PRIVATE kpt)
  set_target_properties(fuzz_import PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
endif()

# Regenerates the seed corpus: fuzz_make_corpus tests/fuzz/corpus
include(${CMAKE_CURRENT_LIST_DIR}/../synth/synth.cmake)
if(TARGET kpt_synth)
  add_executable(fuzz_make_corpus ${CMAKE_CURRENT_LIST_DIR}/make_corpus.c)
  target_link_libraries(fuzz_make_corpus PRIVATE kpt_synth kpt)
endif()

# The history store's fuzzer (fuzz_history.c): mutated SQLite stores through
# the commands that read one, in forked children of kptprof's own main.
# ctest runs 10 stores; .ci/run runs it for a bounded time under ASan/UBSan
# (tests/fuzz/run-history-fuzz.sh).
if(SQLITE3_FOUND AND TARGET kptanalyzer)
  file(GLOB kpt_fuzz_cli_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/cli/*.c)
  list(REMOVE_ITEM kpt_fuzz_cli_sources ${PROJECT_SOURCE_DIR}/cli/main.c)
  add_executable(fuzz_history ${CMAKE_CURRENT_LIST_DIR}/fuzz_history.c ${kpt_fuzz_cli_sources}
    ${PROJECT_SOURCE_DIR}/collectors/kpt_inject_path.c ${PROJECT_SOURCE_DIR}/collectors/kpt_window.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_record.c ${PROJECT_SOURCE_DIR}/collectors/kpt_record_merge.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_record_project.c ${PROJECT_SOURCE_DIR}/collectors/kpt_devprobe.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_ab.c)
  target_include_directories(fuzz_history PRIVATE ${PROJECT_SOURCE_DIR}/cli ${PROJECT_SOURCE_DIR}/collectors)
  target_compile_definitions(fuzz_history PRIVATE KPT_VERSION="${PROJECT_VERSION}")
  target_link_libraries(fuzz_history PRIVATE ${kpt_cpu_libs} PkgConfig::SQLITE3)
  add_test(NAME fuzz.history_store COMMAND fuzz_history --seed 1 --count 10
    ${PROJECT_BINARY_DIR}/fuzz-history-ctest ${PROJECT_SOURCE_DIR}/tests/data/copy_base.kpt
    ${PROJECT_SOURCE_DIR}/tests/data/copy_plant10_512MiB.kpt)
  set_tests_properties(fuzz.history_store PROPERTIES LABELS "unit;fuzz" TIMEOUT 600)
endif()
