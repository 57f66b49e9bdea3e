# docs/: scripts/check_docs.sh (run by scripts/check_code.sh on the repository itself) on trees of
# its own, each broken in one way, so that a checker that stops failing fails here.
add_test(NAME docs_check_docs COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_docs_test.sh)
set_tests_properties(docs_check_docs PROPERTIES LABELS unit TIMEOUT 60)
set_property(TEST docs_check_docs APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})
