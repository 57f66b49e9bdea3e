// Registry sources under a platform condition (policies/source_condition.hpp): opened with the one
// operator alert, closed with its resolve, each in one transaction with its page.
#include <sqlite3.h>

#include "store/store_rows.hpp"

namespace reverify {

using sql::Statement;
using sql::Transaction;
using store_rows::collect_rows;
using store_rows::insert_pages;
using store_rows::parse_column;

namespace {

constexpr const char* kSourceConditionColumns =
    "rowid, source, condition, since, versions, verification_id, reason";

Result<SourceConditionRow> read_source_condition(const Statement& s) {
  auto condition =
      parse_column<SourceCondition>("source_conditions", s.int64(0), "condition", s.text(2));
  if (!condition.ok())
    return condition.error();
  return SourceConditionRow{s.text(1), *condition, s.int64(3), s.int64(4), s.int64(5), s.text(6)};
}

}  // namespace

Result<bool> Store::change_with_page(const std::string& change,
                                     const std::function<void(Statement&)>& bind,
                                     std::int64_t verification_id, const PageToRecord& page) {
  const UnixSeconds now = clock_();
  Transaction tx(db_);
  if (!tx.begun().ok())
    return tx.begun().error();
  Statement s(db_, change);
  bind(s);
  if (auto st = s.run(); !st.ok())
    return st.error();
  if (sqlite3_changes(db_) == 0)
    return false;
  auto pages = insert_pages(db_, verification_id, {page}, now, identity_.id);
  if (!pages.ok())
    return pages.error();
  if (auto st = tx.commit(); !st.ok())
    return st.error();
  if (auto st = ids_handed_out(); !st.ok())
    return st.error();
  return true;
}

Result<bool> Store::open_source_condition(const SourceConditionRow& row,
                                          const PageToRecord& alert) {
  std::lock_guard lock(mutex_);
  // Open already: its alert went out when it opened.
  return change_with_page(
      "INSERT INTO source_conditions (source, condition, since, versions, verification_id, "
      "reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (source) DO NOTHING",
      [&](Statement& s) {
        s.bind(1, row.source).bind(2, to_string(row.condition)).bind(3, row.since);
        s.bind(4, row.versions).bind(5, row.verification_id).bind(6, row.reason);
      },
      row.verification_id, alert);
}

Result<bool> Store::close_source_condition(const std::string& source, std::int64_t verification_id,
                                           const PageToRecord& resolve) {
  std::lock_guard lock(mutex_);
  return change_with_page(
      "DELETE FROM source_conditions WHERE source = ?1", [&](Statement& s) { s.bind(1, source); },
      verification_id, resolve);
}

Result<std::optional<SourceConditionRow>> Store::source_condition(const std::string& source) {
  std::lock_guard lock(mutex_);
  Statement s(db_, std::string("SELECT ") + kSourceConditionColumns +
                       " FROM source_conditions WHERE source = ?1");
  s.bind(1, source);
  auto rows = collect_rows<SourceConditionRow>(s, read_source_condition);
  if (!rows.ok())
    return rows.error();
  if (rows->empty())
    return std::optional<SourceConditionRow>();
  return std::optional<SourceConditionRow>(std::move(rows->front()));
}

Result<std::vector<SourceConditionRow>> Store::source_conditions() {
  std::lock_guard lock(mutex_);
  Statement s(db_, std::string("SELECT ") + kSourceConditionColumns +
                       " FROM source_conditions ORDER BY source");
  return collect_rows<SourceConditionRow>(s, read_source_condition);
}

}  // namespace reverify
