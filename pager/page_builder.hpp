#pragma once
// Builds the page for one verdict: a phone-sized summary (<= 1024 chars) that says whose fault it
// is and what moved, and the complete evidence in `details`. Pure: no clock, no I/O.
//
// Actions by verdict class:
//   failed:*      -> trigger (the model's fault: an input or its numbers moved)
//   error:*       -> trigger (reverify's or the infrastructure's fault, lower severity), except
//                    error:job of a job that exited non-zero by itself or ran into its own pids
//                    or memory bound (Verdict::job_exit_status), or exited 0 with outputs the
//                    contract refuses (Verdict::job_output_fault): the recorded job failed to
//                    rerun; the summary quotes its last log lines and details.fault is "job",
//                    never "reverify ... failed, not the model". error:infra (a full or
//                    read-only disk, the host's OOM killer under the job) says the platform
//                    failed, with the runner's evidence; its details.fault is "system"
//   passed        -> resolve (closes an open page; chat senders show it as a pass notice only
//                    when the route asks for notify_on_pass)
//   uncalibrated  -> notice  (no pass/fail verdict is possible; tells how to calibrate; never
//                    pages anyone and never resolves an open page)

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/text.hpp"  // truncate_utf8, which the senders use too
#include "pager/notifier.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

inline constexpr std::size_t kMaxSummaryChars = 1024;  // PagerDuty payload.summary
inline constexpr std::size_t kMaxDedupKeyChars = 255;  // PagerDuty dedup_key
inline constexpr std::size_t kMaxLogTailChars = 8192;  // kept in details (the end of the log)

// An input that no longer matches what the manifest recorded (the usual cause of input-drift).
struct MovedInput {
  std::string input;                 // "dataset", "eval set", "image", "lockfile"
  std::string recorded;              // hash / digest in the manifest
  std::string observed;              // hash / digest found now ("" = missing)
  std::vector<std::string> changed;  // e.g. the data files that changed, were added or removed
};

struct PageInput {
  std::string model, version, owner;
  Verdict verdict;
  std::vector<MovedInput> moved_inputs;  // empty: the failed input checks' explanations say it
  nlohmann::json evidence;               // the pipeline's evidence, kept whole in details
  std::string log_tail;                  // the job's last output; trimmed to its end
  std::string public_url;            // base of links ("https://reverify.example"); "" = no links
  std::int64_t verification_id = 0;  // 0 = unknown (no link to the verification)
  std::string command_scope;  // VerdictPolicy::command_scope: the suggested commands carry it
  std::string created_at;     // RFC 3339 UTC
};

// "reverify/<model>/<version>" (names are validated, so it always fits in 255 chars).
std::string page_dedup_key(const std::string& model, const std::string& version);

PageAction page_action_for(VerdictClass cls);

// Whose problem the verdict is: "model" for failed:*, "system" for error:*, "" otherwise.
PageFault page_fault(const Verdict& verdict);

PageEvent build_page(const PageInput& input);

}  // namespace reverify
