// The main of every test executable. The unit tests of one area share an executable, which CTest
// runs once per test file with `--source-file` (tests/CMakeLists.txt); a run in which no test case
// passed the filters fails, so a test whose filter matches nothing (a file renamed, a typo in a
// filter) cannot pass by running nothing.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

unsigned test_cases_run = 0;  // written once, by RunCounter at the end of the run

// A listener (it reports nothing): keeps how many test cases passed the filters.
struct RunCounter : doctest::IReporter {
  explicit RunCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    test_cases_run = stats.numTestCasesPassingFilters;
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("run_counter", 1, RunCounter);

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int failed = context.run();
  if (context.shouldExit())
    return failed;  // --help, --list-test-cases and other queries
  if (failed == 0 && test_cases_run == 0) {
    std::fputs("doctest_main: no test case passed the filters: nothing was tested\n", stderr);
    return 1;
  }
  return failed;
}
