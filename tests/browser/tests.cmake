# The status page in a real browser: Debian's headless chromium driven by puppeteer-core, with
# axe-core's accessibility rules, against a reverifyd with real verdicts (status_page_browser.sh).
add_test(NAME browser_status_page COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/status_page_browser.sh)
# npm ci needs the registry on the first run; the label lets an offline run exclude it (-LE network).
set_tests_properties(browser_status_page PROPERTIES LABELS "integration;network;browser"
                     TIMEOUT 600)
set_property(TEST browser_status_page APPEND PROPERTY ENVIRONMENT ${REVERIFY_TEST_ENV})
