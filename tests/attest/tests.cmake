# Signed summaries end to end from `reverify run --config`, checked by `reverify attest verify`
# and by the second implementation (dsse_reference.py). Real training runs: a few seconds each.
add_test(NAME attest_cli_e2e COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/attest_cli_e2e.sh)
set_tests_properties(attest_cli_e2e PROPERTIES LABELS integration TIMEOUT 600)
set_property(TEST attest_cli_e2e APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})
