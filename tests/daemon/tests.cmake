# tests/daemon: the systemd unit check (a script) and the reverifyd binary the integration
# tests start.
add_test(NAME daemon_systemd_verify
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/systemd_verify.sh ${PROJECT_SOURCE_DIR}
                 $<TARGET_FILE:reverifyd>)
set_tests_properties(daemon_systemd_verify PROPERTIES LABELS integration TIMEOUT 120)
foreach(t daemon_integration_tests api_integration_tests)
  if(TARGET ${t})
    add_dependencies(${t} reverifyd reverify)
  endif()
endforeach()

# `cmake --install` into a DESTDIR: the packaged layout, runnable, with a verified unit.
add_test(NAME daemon_install COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/install.sh)
set_tests_properties(daemon_install PROPERTIES LABELS integration TIMEOUT 300)
set_property(TEST daemon_install APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})

# --check-config in one pass (loader errors and the machine around the config), and the
# daemon's journal priorities.
add_test(NAME daemon_check_config COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_config.sh)
set_tests_properties(daemon_check_config PROPERTIES LABELS integration TIMEOUT 300)
set_property(TEST daemon_check_config APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})

# A hostile job against reverifyd run as the shipped unit runs it (settings reproduced by hand:
# the script's header says which): every attempt on the verifier fails.
add_test(NAME daemon_hostile_unit
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/hostile_unit.sh $<TARGET_FILE:reverifyd>)
set_tests_properties(daemon_hostile_unit PROPERTIES LABELS integration TIMEOUT 300)
set_property(TEST daemon_hostile_unit APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})

# Every command reverify suggests (log lines, pages, the status and version pages, CLI output)
# runs as printed through `sh -c`, from a daemon and a config under a folder named with spaces
# and shell-special characters (the script's header lists each situation and what it checks).
add_test(NAME daemon_suggested_commands_itest
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/suggested_commands_itest.sh)
set_tests_properties(daemon_suggested_commands_itest PROPERTIES LABELS integration TIMEOUT 600)
set_property(TEST daemon_suggested_commands_itest APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})
