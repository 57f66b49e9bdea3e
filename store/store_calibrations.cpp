// Calibrations: `reverify calibrate`'s and the daemon's tolerance specs, the newest per model
// version and reference counts.
#include <sqlite3.h>

#include "store/store_rows.hpp"
#include "store/tolerance_json.hpp"

namespace reverify {

using sql::Statement;
using store_rows::parse_json_column;

namespace {
// NULL where leave-one-out was not measured.
void bind_leave_one_out(Statement& s, int index,
                        const std::optional<LeaveOneOutFinding>& leave_one_out) {
  if (leave_one_out)
    s.bind(index, to_json(*leave_one_out).dump());
  else
    s.bind_null(index);
}
}  // namespace

Result<std::int64_t> Store::put_calibration(const std::string& model, const std::string& version,
                                            const ToleranceSpec& spec, int seeds,
                                            CalibrationEnd end, const std::string& note,
                                            const std::optional<LeaveOneOutFinding>& leave_one_out,
                                            CalibratedReference reference) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "INSERT INTO calibrations (model, version, spec_json, seeds, created_at, ended, "
              "note, leave_one_out_json, reference) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  s.bind(1, model).bind(2, version).bind(3, tolerance_to_json(spec).dump());
  s.bind(4, std::int64_t(seeds));
  s.bind(5, clock_());
  s.bind(6, std::string(to_string(end))).bind(7, note);
  bind_leave_one_out(s, 8, leave_one_out);
  s.bind(9, std::string(to_string(reference)));
  if (auto ran = s.run(); !ran.ok())
    return ran.error();
  return std::int64_t(sqlite3_last_insert_rowid(db_));
}

Status Store::update_calibration(std::int64_t id, const ToleranceSpec& spec, int seeds,
                                 CalibrationEnd end, const std::string& note,
                                 const std::optional<LeaveOneOutFinding>& leave_one_out) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "UPDATE calibrations SET spec_json = ?2, seeds = ?3, created_at = ?4, ended = ?5, "
              "note = ?6, leave_one_out_json = ?7 WHERE id = ?1");
  s.bind(1, id).bind(2, tolerance_to_json(spec).dump()).bind(3, std::int64_t(seeds));
  s.bind(4, clock_()).bind(5, std::string(to_string(end))).bind(6, note);
  bind_leave_one_out(s, 7, leave_one_out);
  if (auto ran = s.run(); !ran.ok())
    return ran;
  if (sqlite3_changes(db_) != 1)
    return make_error(ErrorCode::not_found, "calibration " + std::to_string(id) + " is not stored");
  return Status::success();
}

Result<std::optional<ToleranceSpec>> Store::calibration(const std::string& model,
                                                        const std::string& version,
                                                        CalibratedReference reference) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "SELECT spec_json FROM calibrations WHERE model = ?1 AND version = ?2 "
              "AND reference = ?3 ORDER BY id DESC LIMIT 1");
  s.bind(1, model).bind(2, version).bind(3, std::string(to_string(reference)));
  auto row = s.step();
  if (!row.ok())
    return row.error();
  if (!*row)
    return std::optional<ToleranceSpec>();
  auto spec = tolerance_from_json(parse_json_column(s.text(0)));
  if (!spec) {
    return make_error(ErrorCode::parse, "calibration of " + model + "@" + version +
                                            ": stored spec_json is not a tolerance spec");
  }
  return spec;
}

Result<std::vector<CalibrationBrief>> Store::latest_calibrations() {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "SELECT id, model, version, seeds, created_at, ended, note, leave_one_out_json "
              "FROM calibrations "
              "WHERE id IN (SELECT MAX(id) FROM calibrations WHERE reference = 'release' "
              "GROUP BY model, version) "
              "ORDER BY model, version");
  return store_rows::collect_rows<CalibrationBrief>(
      s, [](const Statement& r) -> Result<CalibrationBrief> {
        auto end = store_rows::parse_column<CalibrationEnd>("calibrations", r.int64(0), "ended",
                                                            r.text(5));
        if (!end.ok())
          return end.error();
        CalibrationBrief brief{r.text(1), r.text(2), r.int64(3), r.int64(4), *end, r.text(6), {}};
        if (!r.is_null(7)) {
          brief.leave_one_out = leave_one_out_finding_from_json(parse_json_column(r.text(7)));
          if (!brief.leave_one_out) {
            return make_error(ErrorCode::parse, "calibration " + std::to_string(r.int64(0)) +
                                                    ": stored leave_one_out_json is not a "
                                                    "leave-one-out finding");
          }
        }
        return brief;
      });
}

}  // namespace reverify
