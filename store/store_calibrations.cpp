// Calibrations: `reverify calibrate`'s tolerance specs, the newest per model version counts.
#include "store/store_rows.hpp"
#include "store/tolerance_json.hpp"

namespace reverify {

using sql::Statement;
using store_rows::parse_json_column;

Status Store::put_calibration(const std::string& model, const std::string& version,
                              const ToleranceSpec& spec, int seeds) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "INSERT INTO calibrations (model, version, spec_json, seeds, created_at) "
              "VALUES (?1, ?2, ?3, ?4, ?5)");
  s.bind(1, model).bind(2, version).bind(3, tolerance_to_json(spec).dump());
  s.bind(4, std::int64_t(seeds));
  s.bind(5, clock_());
  return s.run();
}

Result<std::optional<ToleranceSpec>> Store::calibration(const std::string& model,
                                                        const std::string& version) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "SELECT spec_json FROM calibrations WHERE model = ?1 AND version = ?2 "
              "ORDER BY id DESC LIMIT 1");
  s.bind(1, model).bind(2, version);
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

}  // namespace reverify
