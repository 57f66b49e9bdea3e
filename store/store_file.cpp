// The store's file: the high-water mark of the ids it handed out, and whether it still takes
// writes (store/store.hpp).
#include <sys/stat.h>

#include "store/restore_advice.hpp"
#include "store/sqlite.hpp"
#include "store/store.hpp"

namespace reverify {

using sql::Statement;
using sql::Transaction;

namespace {

// What the way out is once the file under a running daemon is damaged: it cannot be mended in
// place, only replaced by a backup.
std::string put_back(const std::string& path) {
  return "Stop reverifyd, move " + path + " aside with its -wal and -shm files, then " +
         restore_commands();
}

}  // namespace

Result<StoreHighWater> Store::high_water() {
  std::lock_guard lock(mutex_);
  return read_high_water();
}

Result<StoreHighWater> Store::read_high_water() {
  Statement s(db_,
              "SELECT name, seq FROM sqlite_sequence WHERE name IN ('verifications', 'pages')");
  StoreHighWater mark;
  for (;;) {
    auto row = s.step();
    if (!row.ok())
      return row.error();
    if (!*row)
      return mark;
    (s.text(0) == "pages" ? mark.page : mark.verification) = s.int64(1);
  }
}

Status Store::continue_after(const StoreHighWater& mark) {
  std::lock_guard lock(mutex_);
  Transaction tx(db_);
  if (!tx.begun().ok())
    return tx.begun();
  // sqlite_sequence has a row for a table once it had one; the next id is seq + 1.
  for (const auto& [table, seq] :
       {std::pair{"verifications", mark.verification}, std::pair{"pages", mark.page}}) {
    Statement raise(db_, "UPDATE sqlite_sequence SET seq = MAX(seq, ?2) WHERE name = ?1");
    raise.bind(1, table).bind(2, seq);
    if (auto s = raise.run(); !s.ok())
      return s;
    if (sqlite3_changes(db_) == 0 && seq > 0) {
      Statement first(db_, "INSERT INTO sqlite_sequence (name, seq) VALUES (?1, ?2)");
      first.bind(1, table).bind(2, seq);
      if (auto s = first.run(); !s.ok())
        return s;
    }
  }
  return tx.commit();
}

void Store::keep_high_water(HighWaterKeeper keeper) {
  std::lock_guard lock(mutex_);
  keeper_ = std::move(keeper);
}

Status Store::ids_handed_out() {
  if (!keeper_)
    return Status::success();
  // A write transaction of its own: another process's keeper waits until this one has kept the
  // mark, and then reads its own ids above it.
  Transaction tx(db_);
  if (!tx.begun().ok())
    return tx.begun();
  auto mark = read_high_water();
  if (!mark.ok())
    return mark.error();
  if (auto s = keeper_(*mark); !s.ok())
    return s;
  return tx.commit();
}

void Store::remember_file() {
  struct stat st {};
  const char* path = sqlite3_db_filename(db_, "main");
  if (path && *path && ::stat(path, &st) == 0)
    file_ = FileSeen{st.st_dev, st.st_ino, st.st_size};
}

std::optional<std::string> Store::file_fault() {
  if (file_fault_ || !file_)
    return file_fault_;
  const std::string path = sqlite3_db_filename(db_, "main");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    file_fault_ = path +
                  " is gone: reverifyd writes on into the file it opened, which is lost when it "
                  "stops. " +
                  put_back(path);
  } else if (st.st_dev != file_->device || st.st_ino != file_->inode) {
    file_fault_ = path +
                  " is no longer the file reverifyd opened (it was replaced while reverifyd ran): "
                  "what reverifyd records now goes into the old file and is lost when it stops. "
                  "Restart reverifyd to open the file now at that path (it refuses one that is "
                  "older than the state_dir's history)";
  } else if (st.st_size < file_->largest) {
    file_fault_ = path + " was cut from " + std::to_string(file_->largest) + " to " +
                  std::to_string(st.st_size) +
                  " bytes while reverifyd ran (SQLite never shrinks it): the store is damaged. " +
                  put_back(path);
  } else {
    file_->largest = st.st_size;
  }
  return file_fault_;
}

Status Store::check_health() {
  std::lock_guard lock(mutex_);
  if (auto fault = file_fault())
    return make_error(ErrorCode::io, *fault);
  const auto written = [this]() -> Status {
    // A write of one page: the header's user_version written again with the value it holds.
    Transaction tx(db_);
    if (!tx.begun().ok())
      return tx.begun();
    std::int64_t number = 0;
    {
      Statement version(db_, "PRAGMA user_version");
      auto row = version.step();
      if (!row.ok())
        return row.error();
      number = *row ? version.int64(0) : 0;
    }
    const std::string again = "PRAGMA user_version = " + std::to_string(number);
    if (auto s = sql::exec(db_, again.c_str()); !s.ok())
      return s;
    return tx.commit();
  }();
  if (written.ok())
    return written;
  return make_error(ErrorCode::io, std::string(sqlite3_db_filename(db_, "main")) +
                                       " does not take writes: " + written.error().message);
}

}  // namespace reverify
