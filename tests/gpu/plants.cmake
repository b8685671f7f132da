# Planted slowdowns and architecture coverage of the kernel library (issue 24).
#   unit.test_attn_path   the forward-attention path per compute capability
#                         (plain C; built here because kernels/ needs CUDA)
#   unit.test_moe_path    the MoE expert-FFN path per request, compute
#                         capability and FFN size (plain C, likewise)
#   gpu.kernels_plant     --plant NAME=10 slows one workload per family by
#                         5..20% (median of interleaved runs), --check passes
#   arch.attn_elf         libkptkernels holds code for every architecture of
#                         the build (cuobjdump --list-elf); sm_90a for the
#                         wgmma kernel when 90 is listed (label arch, slow)
list(APPEND KPT_UNIT_CUSTOM test_attn_path test_moe_path)
if(CMOCKA_FOUND)
  add_executable(test_attn_path ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_attn_path.c
    ${PROJECT_SOURCE_DIR}/kernels/attention/kpt_attn_path.c)
  target_include_directories(test_attn_path PRIVATE ${PROJECT_SOURCE_DIR}/kernels/attention)
  target_link_libraries(test_attn_path PRIVATE PkgConfig::CMOCKA)
  add_test(NAME unit.test_attn_path COMMAND test_attn_path)
  set_tests_properties(unit.test_attn_path PROPERTIES LABELS unit TIMEOUT 60)
  add_executable(test_moe_path ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_moe_path.c
    ${PROJECT_SOURCE_DIR}/kernels/moe/kpt_moe_path.c)
  target_include_directories(test_moe_path PRIVATE ${PROJECT_SOURCE_DIR}/kernels/moe ${PROJECT_SOURCE_DIR}/lib)
  target_link_libraries(test_moe_path PRIVATE PkgConfig::CMOCKA)
  add_test(NAME unit.test_moe_path COMMAND test_moe_path)
  set_tests_properties(unit.test_moe_path PROPERTIES LABELS unit TIMEOUT 60)
endif()
if(TARGET kpt-workloads)
  add_test(NAME gpu.kernels_plant COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/kernels_plant.sh)
  set_tests_properties(gpu.kernels_plant PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900
    ENVIRONMENT "KW=$<TARGET_FILE:kpt-workloads>")
endif()
if(TARGET kptkernels)
  find_program(KPT_CUOBJDUMP cuobjdump HINTS ${CUDAToolkit_BIN_DIR})
  if(KPT_CUOBJDUMP)
    string(REPLACE ";" "," kpt_arch_csv "${CMAKE_CUDA_ARCHITECTURES}")
    add_test(NAME arch.attn_elf COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/attn_arch_elf.sh
      $<TARGET_FILE:kptkernels> "${kpt_arch_csv}" "${KPT_ATTN_SM90}")
    set_tests_properties(arch.attn_elf PROPERTIES LABELS "arch;slow" TIMEOUT 120 SKIP_RETURN_CODE 77
      ENVIRONMENT "CUOBJDUMP=${KPT_CUOBJDUMP}")
  endif()
endif()
