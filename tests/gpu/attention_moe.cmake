# Tests of the attention and MoE kernels (issue 6).
#   unit.test_ref_attention_moe  the float64 references (plain C; built here
#                                because kernels/ is only added with CUDA)
#   gpu.attention_moe_check      every kernel and tile variant against the
#                                references: fresh random inputs, NaN-poisoned
#                                outputs, awkward sizes (kpt-attn-moe check)
#   gpu.attention_moe_torch      the same kernels against PyTorch (SDPA, an
#                                eager MoE layer) on shared inputs; 77 without
#                                torch or a GPU
list(APPEND KPT_UNIT_CUSTOM test_ref_attention_moe)
if(CMOCKA_FOUND)
  add_executable(test_ref_attention_moe ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_ref_attention_moe.c
    ${PROJECT_SOURCE_DIR}/kernels/attention/ref_attention.c ${PROJECT_SOURCE_DIR}/kernels/moe/ref_moe.c)
  target_include_directories(test_ref_attention_moe PRIVATE ${PROJECT_SOURCE_DIR}/kernels/attention
    ${PROJECT_SOURCE_DIR}/kernels/moe)
  target_link_libraries(test_ref_attention_moe PRIVATE PkgConfig::CMOCKA m)
  add_test(NAME unit.test_ref_attention_moe COMMAND test_ref_attention_moe)
  set_tests_properties(unit.test_ref_attention_moe PROPERTIES LABELS unit TIMEOUT 60)
endif()
# bench/ (which defines kpt-attn-moe and kptattnmoe) is added after tests/:
# key on libkptkernels, and let add_test resolve the targets at generation.
if(TARGET kptkernels)
  add_test(NAME gpu.attention_moe_check COMMAND kpt-attn-moe check)
  find_program(KPT_PYTHON3 python3)
  if(KPT_PYTHON3)
    add_test(NAME gpu.attention_moe_torch COMMAND ${KPT_PYTHON3}
      ${PROJECT_SOURCE_DIR}/bench/attention_moe/torch_compare.py $<TARGET_FILE:kptattnmoe> --quick)
    set_tests_properties(gpu.attention_moe_torch PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
  endif()
  set_tests_properties(gpu.attention_moe_check PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
  # No GPU needed: bad usage is one line on stderr and exit status 2.
  add_test(NAME cli.attention_moe_usage COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/attention_moe_usage.sh
    $<TARGET_FILE:kpt-attn-moe>)
  set_tests_properties(cli.attention_moe_usage PROPERTIES LABELS cli TIMEOUT 60)
endif()
