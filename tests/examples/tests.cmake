# The released example model, end to end through the `reverify` CLI and the process runner
# (no services needed). Real training runs: a few seconds each.
add_test(NAME examples_example_e2e COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/example_e2e.sh)
set_tests_properties(examples_example_e2e PROPERTIES LABELS integration TIMEOUT 600)
set_property(TEST examples_example_e2e APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})

# The same example through the docker runner, on the private dockerd and registry of the `docker`
# fixture (tests/runners/tests.cmake).
add_test(NAME examples_example_docker COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/example_docker.sh)
set_tests_properties(examples_example_docker PROPERTIES LABELS integration TIMEOUT 900
                     FIXTURES_REQUIRED docker)
set_property(TEST examples_example_docker APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})

# The PyTorch example (examples/torch-orientation): released inside an mmdebstrap python3-torch
# image and verified through the docker runner (full at level bitwise, steps mode exact).
add_test(NAME examples_torch_docker COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/torch_docker.sh)
set_tests_properties(examples_torch_docker PROPERTIES LABELS integration TIMEOUT 1800
                     FIXTURES_REQUIRED docker)
set_property(TEST examples_torch_docker APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})

# Its two traps (examples/torch-orientation/traps.sh): two small releases and six rebuilds on the
# process runner with this machine's python3-torch, no services.
add_test(NAME examples_torch_traps COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/torch_traps.sh)
set_tests_properties(examples_torch_traps PROPERTIES LABELS integration TIMEOUT 1200)
set_property(TEST examples_torch_traps APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})

# reverifyd on config/demo.yaml as shipped (code_mirrors, no flags) verifies the example.
add_test(NAME examples_daemon_demo COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/daemon_demo.sh)
set_tests_properties(examples_daemon_demo PROPERTIES LABELS integration TIMEOUT 600)
set_property(TEST examples_daemon_demo APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})

# Steps mode catches a hidden input (a file outside the snapshot that no hash covers) in the
# first 20 steps of a digits variant released with exact same-seed steps bands.
add_test(NAME examples_steps_hidden_input COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/steps_hidden_input.sh)
set_tests_properties(examples_steps_hidden_input PROPERTIES LABELS integration TIMEOUT 600)
set_property(TEST examples_steps_hidden_input APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})

# The underpowered flag through reverifyd: a config detect the example's bands cannot meet, the
# gate's JSON and page say so, and gate.require_power refuses the pass.
add_test(NAME examples_daemon_underpowered COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/daemon_underpowered.sh)
set_tests_properties(examples_daemon_underpowered PROPERTIES LABELS integration TIMEOUT 600)
set_property(TEST examples_daemon_underpowered APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})
