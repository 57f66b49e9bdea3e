#pragma once
// Prediction files: the rebuild's and the released model's outputs, one row per eval record in
// eval-set order (docs/design.md, "The rebuild contract"). Readers for .npy (format 1-3, <f4/<f8,
// 1-D or 2-D, C order) and CSV (one or more numeric columns, optional header row). An .npy file's
// data is read straight into `values` (one read() for <f8, into storage advised onto 2 MiB pages;
// <f4 is widened a buffer at a time); a CSV file is mapped and parsed. NaN or Inf is an error
// naming the row and column.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_range.hpp"
#include "core/result.hpp"

namespace reverify {

struct Predictions {
  std::size_t rows = 0;
  std::size_t cols = 1;        // 1 for 1-D scores; number of classes for 2-D
  bool two_d = false;          // a 2-D array (even with one column) or a CSV with >1 column
  std::vector<double> values;  // row-major, rows * cols

  std::span<const double> view() const { return values; }
};

// The SHA-256 of the predictions' shape (rows, cols, 2-D) and values: equal for two runs that
// predicted exactly the same, bit for bit, whatever bytes and format their files hold.
std::string values_sha256(const Predictions& p);

// By extension: ".npy" -> read_npy, ".csv"/".tsv"/".txt" -> read_csv; otherwise the npy magic is
// sniffed. Errors: ErrorCode::io (cannot open/map), ErrorCode::parse (format, dtype, order, NaN).
Result<Predictions> read_predictions(const std::filesystem::path& path);
Result<Predictions> read_npy(const std::filesystem::path& path);
Result<Predictions> read_csv(const std::filesystem::path& path);

// Parse from memory (the mapped bytes); `name` is used in error messages.
Result<Predictions> parse_npy(std::span<const std::byte> bytes, const std::string& name);
Result<Predictions> parse_csv(std::string_view text, const std::string& name);
// Like parse_npy, and also bool and integer dtypes (|b1, |u1, |i1, <u2, <i2, <u4, <i4, <u8, <i8),
// as doubles: labels, segment keys and query ids (core/eval_columns.hpp), whose reader judges NaN
// and infinite values itself. An integer beyond 2^53 that a double cannot hold exactly is an
// error naming its row.
Result<Predictions> parse_npy_numbers(std::span<const std::byte> bytes, const std::string& name);

// The text cells of CSV and one-value-per-line files, as every reader of per-record files reads
// them: a cell without its surrounding spaces, tabs and carriage returns; a number as
// std::from_chars reads it, with an optional leading '+', the whole cell or nothing.
std::string_view trim_cell(std::string_view cell);
std::optional<double> parse_cell_number(std::string_view cell);

// Predictions read in place where the file allows it: an <f8, C-order .npy file's values are its
// data, mapped (MappedFile: the page cache's own pages, no copy and no fresh memory, which on a VM
// can cost a host fault a page); any other file is read into owned values as read_predictions
// does. While a mapped view lives, its file must not shrink: if it does, the process ends with a
// message naming the file (core/mapped_range.hpp), so this is for short-lived commands
// (`reverify compare`); long-lived code uses read_predictions.
class PredictionsView {
 public:
  explicit PredictionsView(Predictions owned);
  PredictionsView(std::size_t rows, std::size_t cols, bool two_d, std::span<const double> values,
                  MappedFile file);

  std::size_t rows = 0;
  std::size_t cols = 1;
  bool two_d = false;
  std::span<const double> view() const { return values_; }

 private:
  std::span<const double> values_;
  std::optional<Predictions> owned_;
  std::optional<MappedFile> file_;
};

// The same files and errors as read_predictions.
Result<PredictionsView> view_predictions(const std::filesystem::path& path);

// Writes a little-endian <f8 .npy (format 1.0), C order. For tests, benchmarks and calibration.
Status write_npy(const std::filesystem::path& path, const Predictions& predictions);

}  // namespace reverify
