# Included by ctest after the test list catch_discover_tests generated for
# unit_devices_cuda: a case that printed "skipped:" (no driver, no GPU, no nvcc) is
# reported as skipped, not passed, as the conformance suites do.
foreach(test ${unit_devices_cuda_TESTS})
  set_tests_properties("${test}" PROPERTIES SKIP_REGULAR_EXPRESSION "skipped:")
endforeach()
