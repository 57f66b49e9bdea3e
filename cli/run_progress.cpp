#include "cli/run_progress.hpp"

#include <cstdio>

namespace reverify::cli {
namespace {

std::string clock_text(std::chrono::steady_clock::duration elapsed) {
  const auto total = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", static_cast<long long>(total / 3600),
                  static_cast<long long>(total / 60 % 60), static_cast<long long>(total % 60));
  } else {
    std::snprintf(text, sizeof text, "%lld:%02lld", static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  }
  return text;
}

}  // namespace

RunProgress::RunProgress()
    : line_(stderr), start_(std::chrono::steady_clock::now()), stage_start_(start_) {
  if (line_.enabled())
    ticker_ = std::thread([this] { redraw_every_second(); });
}

RunProgress::~RunProgress() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable())
    ticker_.join();
}

std::function<void(std::string_view, std::string_view)> RunProgress::stages() {
  return [this](std::string_view name, std::string_view detail) { stage(name, detail); };
}

std::function<void(const JobHandle&)> RunProgress::started() {
  return [this](const JobHandle& job) { job_started(job); };
}

LogSink RunProgress::logs() {
  return [this](std::string_view chunk) { log_chunk(chunk); };
}

std::string RunProgress::since_start() const {
  return "[" + clock_text(std::chrono::steady_clock::now() - start_) + "] ";
}

void RunProgress::stage(std::string_view name, std::string_view detail) {
  {
    std::lock_guard lock(mutex_);
    stage_ = std::string(name);
    stage_start_ = std::chrono::steady_clock::now();
    last_line_.clear();
    partial_.clear();
  }
  line_.print(since_start() + std::string(name) + ": " + std::string(detail));
  wake_.notify_all();
}

void RunProgress::job_started(const JobHandle& job) {
  std::string where;
  {
    std::lock_guard lock(mutex_);
    log_file_.close();
    const auto path = job.work_dir / "job.log";
    if (job.work_dir.empty()) {
      where = "its log streams into the report";
    } else if (writes_job_log(job.runner_kind)) {
      where = "its log: " + path.string();
    } else {
      log_file_.open(path, std::ios::binary | std::ios::trunc);
      where = log_file_ ? "its log: " + path.string() : "its log streams into the report";
    }
  }
  line_.print(since_start() + "job " + job.ref + " started; " + where);
}

void RunProgress::log_chunk(std::string_view chunk) {
  std::unique_lock lock(mutex_);
  const std::string before = last_line_;
  if (log_file_.is_open())
    log_file_.write(chunk.data(), static_cast<std::streamsize>(chunk.size())).flush();
  partial_.append(chunk);
  for (auto newline = partial_.find('\n'); newline != std::string::npos;
       newline = partial_.find('\n')) {
    std::string line = partial_.substr(0, newline);
    partial_.erase(0, newline + 1);
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos)
      last_line_ = std::move(line);
  }
  if (partial_.size() > 4096)  // a job that never ends its line still shows something
    last_line_ = partial_.substr(partial_.size() - 200);
  if (last_line_ == before)
    return;
  const std::string text = status_text_locked();
  lock.unlock();
  line_.draw(text);  // the new line now, not at the next second
}

std::string RunProgress::status_text_locked() const {
  const auto now = std::chrono::steady_clock::now();
  std::string text = "[" + stage_ + " " + clock_text(now - stage_start_) + ", " +
                     clock_text(now - start_) + " in all]";
  if (!last_line_.empty())
    text += " " + last_line_;
  return text;
}

void RunProgress::redraw_every_second() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const std::string text = status_text_locked();
    lock.unlock();
    line_.draw(text);
    lock.lock();
    wake_.wait_for(lock, std::chrono::seconds(1));
  }
}

}  // namespace reverify::cli
