# The status page in a real browser: Debian's headless chromium driven by puppeteer-core, with
# axe-core's accessibility rules, against a reverifyd with real verdicts (status_page_browser.sh).
add_test(NAME browser_status_page COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/status_page_browser.sh)
# npm ci needs the registry on the first run; the label lets an offline run exclude it (-LE network).
set_tests_properties(browser_status_page PROPERTIES LABELS "integration;network;browser"
                     TIMEOUT 600)
set_property(TEST browser_status_page APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})
# The demo's failed variant as its owner sees it at 1280x800, and every command the pages suggest
# run as printed (failed_variant_browser.sh).
add_test(NAME browser_failed_variant COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/failed_variant_browser.sh)
set_tests_properties(browser_failed_variant PROPERTIES LABELS "integration;network;browser"
                     TIMEOUT 900)
set_property(TEST browser_failed_variant APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})
