# contrib/: the Prometheus alert rules (promtool check + promtool test) and the Grafana
# dashboard's queries (they parse as PromQL). The metric names both use are checked against a
# running reverifyd by daemon_operations_itest.
add_test(NAME contrib_prometheus_rules COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/rules_and_dashboard.sh)
set_tests_properties(contrib_prometheus_rules PROPERTIES LABELS unit TIMEOUT 120)
set_property(TEST contrib_prometheus_rules APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})
