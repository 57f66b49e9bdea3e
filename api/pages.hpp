#pragma once
// The server-rendered HTML pages (no JavaScript needed; each links its JSON twin under /v1):
//   /                       status: what needs attention first (the gate's answer, not merely
//                           the newest verdict), what runs now, what starts next and why, the
//                           cycle's plan
//   /models[?page=N]        every model version, most urgent first, 500 a page
//   /models/{m}/{v}         one version: the gate's answer, its checks drawn against their bands,
//                           the primary metric's trend, its verification history
//   /verifications[?page=N] the recent verifications, newest first
//   /verifications/{id}     one verification: verdict, checks against their bands, log tail
// Every text from the store is escaped, and the configured secrets are redacted from it. Any page
// reloads itself every S seconds with ?refresh=S (html.hpp: PageFrame).

#include <cstddef>
#include <string>

#include "api/html.hpp"
#include "api/snapshot.hpp"

namespace reverify {

std::string render_status_page(const PageFrame& frame, const ReadModel& model, UnixSeconds now);
std::string render_versions_page(const PageFrame& frame, const ReadModel& model, UnixSeconds now,
                                 std::size_t page);
std::string render_version_page(const PageFrame& frame, const ReadModel& model,
                                const VersionView& view, UnixSeconds now);
std::string render_verifications_page(const PageFrame& frame, const ReadModel& model,
                                      UnixSeconds now, std::size_t page);
std::string render_verification_page(const PageFrame& frame, const ReadModel& model,
                                     const VerificationRow& row, UnixSeconds now);

}  // namespace reverify
