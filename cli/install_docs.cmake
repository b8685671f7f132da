# install_docs.cmake - run by `cmake --install` (cli/CMakeLists.txt): asks the
# built kptprof for its man pages and shell completion and installs them.
# In: KPTPROF (the binary), KPT_GEN_DIR (a build folder to write into),
# KPT_MANDIR, KPT_DATADIR (relative to the prefix).

# run_kptprof(OUT_FILE ARGS...): kptprof ARGS > OUT_FILE; any failure stops the install.
function(run_kptprof out)
  execute_process(COMMAND "${KPTPROF}" ${ARGN} OUTPUT_FILE "${out}" RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kptprof: 'kptprof ${ARGN}' failed (${rc}): ${err}")
  endif()
endfunction()

file(MAKE_DIRECTORY "${KPT_GEN_DIR}/man1")
execute_process(COMMAND "${KPTPROF}" help OUTPUT_VARIABLE list RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kptprof: '${KPTPROF} help' failed (${rc}): cannot list the commands for the man pages")
endif()
# `kptprof help` lists the commands as "  NAME  summary" lines
string(REGEX MATCHALL "\n  [a-z]+ " cmds "${list}")
set(pages "${KPT_GEN_DIR}/man1/kptprof.1")
run_kptprof("${KPT_GEN_DIR}/man1/kptprof.1" help --man)
foreach(c IN LISTS cmds)
  string(STRIP "${c}" c)
  run_kptprof("${KPT_GEN_DIR}/man1/kptprof-${c}.1" help --man ${c})
  list(APPEND pages "${KPT_GEN_DIR}/man1/kptprof-${c}.1")
endforeach()
run_kptprof("${KPT_GEN_DIR}/kptprof.bash" help --completion bash)
run_kptprof("${KPT_GEN_DIR}/_kptprof" help --completion zsh)

file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/${KPT_MANDIR}/man1" TYPE FILE FILES ${pages})
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/${KPT_DATADIR}/bash-completion/completions" TYPE FILE
     RENAME kptprof FILES "${KPT_GEN_DIR}/kptprof.bash")
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/${KPT_DATADIR}/zsh/site-functions" TYPE FILE
     FILES "${KPT_GEN_DIR}/_kptprof")
