# tests/cli: the unit tests of what the commands print link the API too, to render the same
# verdict through the daemon's pages and answers (verdict_surfaces_test).
if(TARGET cli_unit_tests)
  target_link_libraries(cli_unit_tests PRIVATE reverify_api)
endif()
