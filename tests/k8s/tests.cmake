# Kubernetes runner checks that are not doctest executables:
# - k8s_job_schema: the generated Job objects against the official schema (kubernetes-models).
# The fake API server (fake_apiserver.py) is started by tests/runners/kubernetes_runner_itest.cpp.
add_executable(k8s_dump_jobs ${CMAKE_CURRENT_LIST_DIR}/dump_jobs.cpp)
target_link_libraries(k8s_dump_jobs PRIVATE reverify_runners)
add_test(NAME k8s_job_schema
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_schema_check.sh $<TARGET_FILE:k8s_dump_jobs>
                 ${CMAKE_CURRENT_LIST_DIR} ${PROJECT_BINARY_DIR}/k8s-schema)
# npm ci needs the registry; the label lets an offline run exclude it explicitly (-LE network).
set_tests_properties(k8s_job_schema PROPERTIES LABELS "integration;network" TIMEOUT 600)
