#pragma once
// The addresses of reverify's HTML pages for people, built in one place: the status page links
// them, the daemon's log lines carry them, pages (pager) and `reverify trigger` print them. A
// base of "" gives the path alone ("/verifications/12"), which is what the pages themselves use.
// Names are validated ([A-Za-z0-9._-]), so they are safe in a path as they are.

#include <cstdint>
#include <string>
#include <string_view>

namespace reverify {

// "<base>/verifications/<id>": one verification (verdict, checks, log tail).
std::string verification_page_url(std::string_view base, std::int64_t id);
// "<base>/models/<model>/<version>": one model version (gate, checks, trend, history).
std::string version_page_url(std::string_view base, std::string_view model,
                             std::string_view version);

}  // namespace reverify
