# example_test(NAME SCRIPT TIMEOUT_S [FIXTURE]): an integration test that runs tests/examples/SCRIPT
# with the suite's environment (REVERIFY_TEST_ENV), after FIXTURE's setup when one is named.
function(example_test name script timeout)
  add_test(NAME ${name} COMMAND bash ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${script})
  set_tests_properties(${name} PROPERTIES LABELS integration TIMEOUT ${timeout})
  if(ARGC GREATER 3)
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED ${ARGV3})
  endif()
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})
endfunction()

# The released example model, end to end through the `reverify` CLI and the process runner
# (no services needed). Real training runs: a few seconds each.
example_test(examples_example_e2e example_e2e.sh 600)

# The same example through the docker runner, on the private dockerd and registry of the `docker`
# fixture (tests/runners/tests.cmake).
example_test(examples_example_docker example_docker.sh 900 docker)

# The PyTorch example (examples/torch-orientation): released inside a python3-torch (copied from the installed packages)
# image and verified through the docker runner (full at level bitwise, steps mode exact).
example_test(examples_torch_docker torch_docker.sh 1800 docker)

# Its two traps (examples/torch-orientation/traps.sh): two small releases and six rebuilds on the
# process runner with this machine's python3-torch, no services.
example_test(examples_torch_traps torch_traps.sh 1200)

# Its subsample reference (release.sh) and a subsample rebuild of it that passes, on the process
# runner with this machine's python3-torch, no services.
example_test(examples_torch_subsample torch_subsample.sh 900)

# reverifyd on config/demo.yaml as shipped (code_mirrors, no flags) verifies the example.
example_test(examples_daemon_demo daemon_demo.sh 600)

# A release published into the registry of a running reverifyd is queued at release, the gate
# says queued meanwhile, and it is verified after its delay in the same cycle (issue #23).
example_test(examples_daemon_at_release daemon_at_release.sh 600)

# Steps mode catches a hidden input (a file outside the snapshot that no hash covers) in the
# first 20 steps of a digits variant released with exact same-seed steps bands.
example_test(examples_steps_hidden_input steps_hidden_input.sh 600)

# The underpowered flag through reverifyd: a config detect the example's bands cannot meet, the
# gate's JSON and page say so, and gate.require_power refuses the pass.
example_test(examples_daemon_underpowered daemon_underpowered.sh 600)

# `reverify bisect` on two digits releases built for it (code and data differ, only the data moves
# the metric) names the data; --budget and a refused pair too.
example_test(examples_bisect bisect.sh 600)

# The owner tools agree with the daemon on the example: `reverify diff` of the release and a
# patched variant fits on one screen and names only the code; `reverify compare --tolerances`
# gives a verification's own bounds and alpha on the same predictions.
example_test(examples_owner_tools owner_tools.sh 600)

# Subsample mode on the digits example: a subsample rebuild of the release passes, a backfilled
# shard fails preflight, the hidden-input variant fails its subsample rebuild, and a version
# without a subsample reference is refused with the reason.
example_test(examples_subsample_digits subsample_digits.sh 600)

# The example through the slurm runner on the one-node cluster of the `slurm` fixture
# (tests/runners/tests.cmake): `reverify run`, then reverifyd with the job pending behind another
# (status page and `reverify plan` show the partition and Slurm's reason), killed and restarted
# while it waits (it reattaches). It takes the cluster alone, as the Slurm fault tests do.
example_test(examples_example_slurm example_slurm.sh 900 slurm)
set_tests_properties(examples_example_slurm PROPERTIES RESOURCE_LOCK slurm_cluster)

# `reverify check-job` on a small trainer that uses the job kit (tests/examples/check_job/): as it
# is, every check passes; with each planted defect (defects/*.patch) check-job names it.
foreach(defect none unseeded-data-order worker-seed steps-ignored subsample-by-shuffle
        metric-on-another-split read-outside-data)
  add_test(NAME examples_check_job_${defect}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_job.sh ${defect})
  set_tests_properties(examples_check_job_${defect} PROPERTIES LABELS integration TIMEOUT 600)
  set_property(TEST examples_check_job_${defect} APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})
endforeach()

# The third example (examples/loan-default): its README is the job author's guide followed for a
# new scikit-learn model with an id-less CSV; every command block runs as printed (check-job,
# release with capture, full, steps and subsample rebuilds, all passing).
example_test(examples_loan_default_readme loan_default_readme.sh 900)

# `reverify check-job` passes both example trainers as released (the job kit inside them): the
# digits one (seconds per run) and the PyTorch one (a minute of runs per mode: ~5 min).
foreach(example digits torch-orientation)
  add_test(NAME examples_check_job_${example}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_job_example.sh ${example})
  set_tests_properties(examples_check_job_${example} PROPERTIES LABELS integration TIMEOUT 1200)
  set_property(TEST examples_check_job_${example} APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})
endforeach()

# The shipped examples are clean: the README's demo (scripts/demo.sh on a copy of the tree), lint,
# calibrate with and without a scoring spec, plan and reverifyd print no WARNING, and the status
# page after them lists no calibration that pages honest reruns and needs attention for the
# failed variant alone.
example_test(examples_walkthrough_clean walkthrough_clean.sh 900)

# The ranking example (examples/search-ranking): its README is the job author's guide followed for
# a ranking model (numpy only), every command block run as printed: check-job passes, a release
# with capture and its rebuild pass, `reverify compare` prints no flip rate, and a version that
# depended on an unrecorded environment variable fails with a headline counting queries (~1 min).
example_test(examples_search_ranking_readme search_ranking_readme.sh 600)
