# The job kit (python/reverify_job.py): its own tests, the subsample vectors among them, with
# Debian's /usr/bin/python3 (numpy and torch parts run where those are installed, as on CI), and
# its installation with pip from the repository, without a package index.
add_test(NAME jobkit_unittest
         COMMAND /usr/bin/python3 -m unittest discover -s ${PROJECT_SOURCE_DIR}/python/tests -v)
set_tests_properties(jobkit_unittest PROPERTIES LABELS unit TIMEOUT 300)

add_test(NAME jobkit_install COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/install.sh)
set_tests_properties(jobkit_install PROPERTIES LABELS integration TIMEOUT 300)
set_property(TEST jobkit_install APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})
