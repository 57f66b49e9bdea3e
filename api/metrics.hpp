#pragma once
// /metrics in the Prometheus text exposition format (version 0.0.4), rendered once per read
// model so a scrape costs a string copy. Checked by `promtool check metrics` in the tests.

#include <string>

namespace reverify {

struct ReadModel;

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string render_metrics(const ReadModel& model);

}  // namespace reverify
