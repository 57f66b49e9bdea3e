#pragma once
// The subsample rule, byte for byte (docs/design.md, "The subsample rule"): which training records
// a job in subsample mode trains on. One implementation for the verifier (the job's environment,
// the check of the keys a job reports, `reverify subsample`, `reverify check-job`); the job kit
// (python/reverify_job.py) implements the same text, and docs/subsample-vectors.json holds the
// vectors both are tested against.
//
// A record with key K (UTF-8 text, never empty, no line feed) is in the subsample with salt S and
// fraction f = m / 10^d iff h * 10^d < m * 2^64, where h is the first 8 bytes, big-endian, of
// SHA-256(S ":" K). Exact integer arithmetic: no floating point anywhere.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace reverify {

// A fraction read exactly from its decimal text: value = numerator / 10^digits, 0 < value <= 1,
// digits <= kMaxSubsampleFractionDigits (trailing zeros after the point dropped first).
struct SubsampleFraction {
  std::uint64_t numerator = 1;
  int digits = 0;
  std::string text;  // the canonical text: "0.25", "1" (no trailing zeros, no exponent)

  bool operator==(const SubsampleFraction&) const = default;
};

inline constexpr int kMaxSubsampleFractionDigits = 18;

// Reads "0.25", "1", "1.0", "0.300": [0-9]+ then optionally "." [0-9]+, nothing else (no sign,
// exponent, spaces or leading "."). invalid_argument naming what was expected otherwise.
Result<SubsampleFraction> parse_subsample_fraction(std::string_view text);

// A manifest's fraction (a JSON number) as the rule reads it: the shortest decimal text that reads
// back as the same double, in fixed notation ("0.3", not "0.29999999999999999" or "3e-1").
// invalid_argument when it is not in (0, 1] or needs more than 18 digits after the point.
Result<SubsampleFraction> subsample_fraction_of(double fraction);

// h: the first 8 bytes of SHA-256(salt ":" key), read as a big-endian unsigned integer.
std::uint64_t subsample_hash(std::string_view salt, std::string_view key);

// Whether a record whose hash is h is in the subsample: h * 10^d < m * 2^64.
bool in_subsample(std::uint64_t h, const SubsampleFraction& fraction);

// Whether the record with this key is in the subsample (subsample_hash, then the comparison).
bool in_subsample(std::string_view salt, std::string_view key, const SubsampleFraction& fraction);

// The threshold T = ceil(m * 2^64 / 10^d) as decimal text: members are exactly the records with
// h < T ("18446744073709551616", 2^64, for f = 1: every record).
std::string subsample_threshold_text(const SubsampleFraction& fraction);

// The content key of a record that has no id: the lowercase hex SHA-256 of its stored bytes (a
// CSV row's bytes without its line ending; an npy row's bytes in the stored dtype, C order).
std::string content_key(std::string_view record_bytes);

// What a job reports about the records it trained on (result.json "subsample"): keys_sha256 is the
// SHA-256 of the distinct keys sorted bytewise, each followed by "\n" (the bytes of the keys file
// a job writes, subsample-keys.txt). invalid_argument naming the first empty key or key holding a
// line feed.
struct SubsampleKeysDigest {
  std::string sha256;
  std::size_t distinct = 0;
};
Result<SubsampleKeysDigest> subsample_keys_digest(std::vector<std::string> keys);

// A job's keys file checked: its bytes are the keys, distinct, sorted bytewise, each followed by
// "\n", and hash to the keys_sha256 it reported (else invalid_argument saying which); then every
// key against the rule: `outside` counts the keys the rule leaves out, the first named.
struct KeysFileCheck {
  std::size_t keys = 0;
  std::size_t outside = 0;
  std::string first_outside;
};
Result<KeysFileCheck> check_keys_file(std::string_view text, std::string_view keys_sha256,
                                      std::string_view salt, const SubsampleFraction& fraction);

}  // namespace reverify
