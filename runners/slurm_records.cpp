#include "runners/slurm_records.hpp"

#include <algorithm>
#include <charconv>

#include "core/unix_time.hpp"

namespace reverify {
namespace {

bool is_key(std::string_view key) {
  if (key.empty())
    return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '/' || c == ':' || c == '.';
  });
}

std::optional<std::int64_t> to_int(std::string_view text) {
  std::int64_t value = 0;
  const auto end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end)
    return std::nullopt;
  return value;
}

std::string_view field(const SlurmRecord& record, std::string_view key) {
  const auto it = record.find(key);
  return it == record.end() ? std::string_view() : std::string_view(it->second);
}

// "(null)", "None", "Unknown" and "N/A" are Slurm's ways of saying "nothing".
std::string value_or_empty(std::string_view value) {
  if (value == "(null)" || value == "None" || value == "Unknown" || value == "N/A")
    return {};
  return std::string(value);
}

std::optional<std::int64_t> slurm_time(std::string_view text) {
  if (value_or_empty(text).empty())
    return std::nullopt;
  // Slurm prints the controller's local time without a zone; only differences are taken here,
  // so reading both ends as UTC gives the right span.
  auto parsed = parse_rfc3339(std::string(text) + "Z");
  return parsed ? std::optional<std::int64_t>(*parsed) : std::nullopt;
}

// Splits at commas outside parentheses: "gpu:a100:4(S:0,1),mps:100" -> two items.
std::vector<std::string_view> top_level_items(std::string_view text) {
  std::vector<std::string_view> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '(')
      ++depth;
    else if (c == ')')
      depth = std::max(0, depth - 1);
    else if (c == ',' && depth == 0) {
      if (i > start)
        items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return items;
}

bool lists(std::string_view comma_list, std::string_view item) {
  for (auto part : top_level_items(comma_list)) {
    if (part == item)
      return true;
  }
  return false;
}

}  // namespace

SlurmRecord parse_scontrol_line(std::string_view line) {
  SlurmRecord record;
  std::string* last = nullptr;
  std::size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\n' || line[pos] == '\r'))
      ++pos;
    std::size_t end = pos;
    while (end < line.size() && line[end] != ' ' && line[end] != '\n' && line[end] != '\r')
      ++end;
    if (end == pos)
      break;
    const std::string_view word = line.substr(pos, end - pos);
    const auto eq = word.find('=');
    if (eq != std::string_view::npos && is_key(word.substr(0, eq))) {
      last = &record[std::string(word.substr(0, eq))];
      *last = std::string(word.substr(eq + 1));
    } else if (last) {
      *last += ' ';
      *last += word;
    }
    pos = end;
  }
  return record;
}

std::vector<SlurmRecord> parse_scontrol_lines(std::string_view text) {
  std::vector<SlurmRecord> records;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    auto record = parse_scontrol_line(text.substr(pos, end - pos));
    if (!record.empty())
      records.push_back(std::move(record));
    pos = end + 1;
  }
  return records;
}

bool SlurmJob::active() const {
  switch (state) {
    case SlurmJobState::pending:
    case SlurmJobState::configuring:
    case SlurmJobState::running:
    case SlurmJobState::suspended:
    case SlurmJobState::completing:
    case SlurmJobState::requeued:
    case SlurmJobState::requeue_hold:
    case SlurmJobState::requeue_fed:
    case SlurmJobState::resizing:
    case SlurmJobState::signaling:
    case SlurmJobState::stage_out:
    case SlurmJobState::stopped:
      return true;
    default:
      return false;
  }
}

Result<SlurmJob> read_slurm_job(const SlurmRecord& record) {
  SlurmJob job;
  job.id = std::string(field(record, "JobId"));
  if (job.id.empty())
    return make_error(ErrorCode::io, "scontrol show job: no JobId in its output");
  // "CANCELLED by 0" in some releases; the state is the first word.
  const std::string_view state_text = field(record, "JobState");
  const auto state = enum_from_string<SlurmJobState>(state_text.substr(0, state_text.find(' ')));
  if (!state) {
    return make_error(ErrorCode::io, "scontrol show job " + job.id + ": JobState \"" +
                                         std::string(state_text) + "\" is not one reverify knows");
  }
  job.state = *state;
  job.name = std::string(field(record, "JobName"));
  job.comment = value_or_empty(field(record, "Comment"));
  job.reason = value_or_empty(field(record, "Reason"));
  job.partition = value_or_empty(field(record, "Partition"));
  job.nodes = value_or_empty(field(record, "NodeList"));
  const std::string_view exit_code = field(record, "ExitCode");
  if (const auto colon = exit_code.find(':'); colon != std::string_view::npos) {
    job.exit_status = static_cast<int>(to_int(exit_code.substr(0, colon)).value_or(0));
    job.exit_signal = static_cast<int>(to_int(exit_code.substr(colon + 1)).value_or(0));
  }
  job.restarts = static_cast<int>(to_int(field(record, "Restarts")).value_or(0));
  job.run_seconds = parse_slurm_duration(field(record, "RunTime"));
  const auto start = slurm_time(field(record, "StartTime"));
  const auto end = slurm_time(field(record, "EndTime"));
  if (start && end && *end >= *start && !job.active())
    job.start_end_seconds = *end - *start;
  return job;
}

std::optional<std::int64_t> parse_slurm_duration(std::string_view text) {
  std::int64_t days = 0;
  if (const auto dash = text.find('-'); dash != std::string_view::npos) {
    const auto d = to_int(text.substr(0, dash));
    if (!d || *d < 0)
      return std::nullopt;
    days = *d;
    text = text.substr(dash + 1);
  }
  std::vector<std::int64_t> parts;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto colon = text.find(':', pos);
    if (colon == std::string_view::npos)
      colon = text.size();
    const auto part = to_int(text.substr(pos, colon - pos));
    if (!part || *part < 0)
      return std::nullopt;
    parts.push_back(*part);
    pos = colon + 1;
  }
  if (parts.size() < 2 || parts.size() > 3)
    return std::nullopt;
  std::int64_t seconds = 0;
  for (const auto part : parts)
    seconds = seconds * 60 + part;
  return days * 86400 + seconds;
}

std::map<std::string, std::int64_t> node_gpus(std::string_view gres) {
  std::map<std::string, std::int64_t> gpus;
  for (auto item : top_level_items(gres)) {
    item = item.substr(0, item.find('('));  // "(S:0-1)", "(IDX:0-3)"
    if (item.substr(0, 4) != "gpu:")
      continue;
    item.remove_prefix(4);
    std::string type;
    if (const auto colon = item.find(':'); colon != std::string_view::npos) {
      type = std::string(item.substr(0, colon));
      item.remove_prefix(colon + 1);
    }
    if (const auto count = to_int(item); count && *count > 0)
      gpus[type] += *count;
  }
  return gpus;
}

std::int64_t most_gpus_on_one_node(const std::vector<SlurmRecord>& nodes,
                                   std::string_view partition, const SlurmGpuRequest& request) {
  std::int64_t most = 0;
  for (const auto& node : nodes) {
    if (!lists(field(node, "Partitions"), partition))
      continue;
    if (!request.feature.empty() && !lists(field(node, "AvailableFeatures"), request.feature))
      continue;
    std::int64_t here = 0;
    for (const auto& [type, count] : node_gpus(field(node, "Gres"))) {
      if (request.gres_type.empty() || type == request.gres_type)
        here += count;
    }
    most = std::max(most, here);
  }
  return most;
}

std::string default_partition(const std::vector<SlurmRecord>& partitions) {
  for (const auto& partition : partitions) {
    if (field(partition, "Default") == "YES")
      return std::string(field(partition, "PartitionName"));
  }
  return {};
}

}  // namespace reverify
