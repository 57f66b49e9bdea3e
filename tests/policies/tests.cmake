# The tolerance simulation (docs/design.md's two tolerance properties, measured) evaluates about a million
# bands and a hundred thousand score comparisons. It builds its own optimised copy of policies/
# (the same sources, -O2) so that it stays a unit test of seconds in Debug and sanitizer builds;
# everything else in it is the product's code as is.
get_target_property(simulated_policies reverify_policies SOURCES)
add_executable(policies_tolerance_simulation_test ${CMAKE_CURRENT_LIST_DIR}/tolerance_simulation.cpp
               ${simulated_policies} $<TARGET_OBJECTS:reverify_doctest_main>)
target_compile_options(policies_tolerance_simulation_test PRIVATE -O2)
target_link_libraries(policies_tolerance_simulation_test PRIVATE reverify_core doctest::doctest)
add_test(NAME policies_tolerance_simulation_test COMMAND policies_tolerance_simulation_test)
set_tests_properties(policies_tolerance_simulation_test PROPERTIES LABELS unit TIMEOUT 300)
