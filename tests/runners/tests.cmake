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

# The one-node Slurm cluster (slurmctld, slurmd, munged on loopback, two fake GPUs) as a CTest
# fixture: tests that need it add FIXTURES_REQUIRED slurm and read
# $REVERIFY_SERVICES_DIR/slurm.env (SLURM_CONF, SLURM_PARTITION, SLURM_GPU_TYPE, SLURM_FAULTS...).
# They also take RESOURCE_LOCK slurm_cluster: the fault tests set the node down and preempt every
# job on it, so no two of them share the cluster at once.
add_test(NAME services_slurm_up
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/services/slurm_up.sh ${PROJECT_BINARY_DIR}/services)
set_tests_properties(services_slurm_up PROPERTIES FIXTURES_SETUP slurm LABELS integration TIMEOUT 300)
add_test(NAME services_slurm_down
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/services/slurm_down.sh ${PROJECT_BINARY_DIR}/services)
set_tests_properties(services_slurm_down PROPERTIES FIXTURES_CLEANUP slurm LABELS integration TIMEOUT 120)
set_tests_properties(runners_slurm_runner_itest runners_slurm_faults_itest PROPERTIES
                     FIXTURES_REQUIRED slurm RESOURCE_LOCK slurm_cluster)
# A rebuild in its image through podman on the node: the docker fixture's registry and image too.
set_tests_properties(runners_slurm_podman_itest PROPERTIES
                     FIXTURES_REQUIRED "slurm;docker" RESOURCE_LOCK slurm_cluster)
