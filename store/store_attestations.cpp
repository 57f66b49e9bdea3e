// Signed verification summaries: written by record_verdict in the verdict's transaction, read
// here for the API's read model and `reverify attest export`.
#include "store/store_rows.hpp"

namespace reverify {

using sql::Statement;
using store_rows::collect_rows;

Result<std::vector<AttestationRow>> Store::attestations(const std::vector<std::int64_t>& ids) {
  std::lock_guard lock(mutex_);
  // The ids travel as one JSON array: one statement, whatever their number.
  Statement s(db_, R"sql(
SELECT a.verification_id, v.model, v.version, v.class, a.result, a.key_id, a.envelope_json,
       a.policy_json, a.created_at
FROM attestations a JOIN verifications v ON v.id = a.verification_id
WHERE a.verification_id IN (SELECT value FROM json_each(?1)) ORDER BY a.verification_id)sql");
  s.bind(1, nlohmann::json(ids).dump());
  return collect_rows<AttestationRow>(s, [](const Statement& r) {
    return AttestationRow{r.int64(0), r.text(1), r.text(2), r.text(3), r.text(4),
                          r.text(5),  r.text(6), r.text(7), r.int64(8)};
  });
}

}  // namespace reverify
