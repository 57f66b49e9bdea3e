# tests/daemon: the systemd unit check (a script) and the reverifyd binary the integration
# tests start.
add_test(NAME daemon_systemd_verify
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/systemd_verify.sh ${PROJECT_SOURCE_DIR}
                 $<TARGET_FILE:reverifyd>)
set_tests_properties(daemon_systemd_verify PROPERTIES LABELS integration TIMEOUT 120)
foreach(t daemon_daemon_itest daemon_crash_itest api_metrics_itest)
  if(TARGET ${t})
    add_dependencies(${t} reverifyd reverify)
  endif()
endforeach()
