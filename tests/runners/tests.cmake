# Docker test services as a CTest fixture other areas can reuse: add
#   set_tests_properties(<test> PROPERTIES FIXTURES_REQUIRED docker)
# and read $REVERIFY_SERVICES_DIR/docker.env (DOCKER_SOCK, REGISTRY, TRAINER_IMAGE, BASE_IMAGE).
add_test(NAME services_docker_up
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/services/docker_up.sh ${PROJECT_BINARY_DIR}/services)
set_tests_properties(services_docker_up PROPERTIES FIXTURES_SETUP docker LABELS integration TIMEOUT 900)
add_test(NAME services_docker_down
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/services/docker_down.sh ${PROJECT_BINARY_DIR}/services)
set_tests_properties(services_docker_down PROPERTIES FIXTURES_CLEANUP docker LABELS integration TIMEOUT 300)
# Pulls into two engines (each unpacks every layer): slow on a loaded 2-core machine.
set_tests_properties(runners_docker_runner_itest PROPERTIES FIXTURES_REQUIRED docker TIMEOUT 1800)
