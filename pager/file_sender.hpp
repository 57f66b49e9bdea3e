#pragma once
// The local sink (the demo's, and a debugging aid): appends one JSON line per event, the
// PageEvent's to_json plus "sender" and "severity", to a file. Idempotent by page: a row
// re-delivered after a crash between writing and recording is not written twice, because the
// lines already in the file are read back before the first append of each process. A page is
// identified by (page key, dedup_key, action, created_at); the page key holds the store's id, so
// the pages of a new store, whose ids start from 1 again, are never taken for old ones, and each
// line's "page_key" names one page for whoever reads the file.
//
// Thread-safety: deliver() may be called from several threads; one process per file.

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "pager/notifier.hpp"
#include "pager/pager_config.hpp"

namespace reverify {

class FileNotifier final : public Notifier {
 public:
  explicit FileNotifier(SenderConfig config);
  DeliveryResult deliver(const PageEvent& event, int attempt) override;

 private:
  bool load_written_ids();

  SenderConfig config_;
  std::mutex mutex_;
  bool loaded_ = false;
  std::set<std::string> written_;  // identity_of() of each line of this sender
};

}  // namespace reverify
