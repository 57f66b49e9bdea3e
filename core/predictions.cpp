#include "core/predictions.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <type_traits>

#include "core/hashing_io.hpp"
#include "core/sha256.hpp"

namespace reverify {
namespace {

static_assert(std::endian::native == std::endian::little,
              "npy reader assumes a little-endian host");

Error parse_error(const std::string& name, const std::string& what) {
  return make_error(ErrorCode::parse, name + ": " + what);
}

// The value of `key` in numpy's header dict literal, as raw text up to the next top-level comma.
std::optional<std::string_view> header_value(std::string_view header, std::string_view key) {
  for (const char quote : {'\'', '"'}) {
    const std::string quoted = std::string(1, quote) + std::string(key) + quote;
    auto at = header.find(quoted);
    if (at == std::string_view::npos)
      continue;
    at = header.find(':', at + quoted.size());
    if (at == std::string_view::npos)
      return std::nullopt;
    std::size_t begin = header.find_first_not_of(' ', at + 1);
    if (begin == std::string_view::npos)
      return std::nullopt;
    std::size_t end =
        header[begin] == '(' ? header.find(')', begin) + 1 : header.find_first_of(",}", begin);
    if (end == std::string_view::npos || end == 0)
      return std::nullopt;
    return header.substr(begin, end - begin);
  }
  return std::nullopt;
}

// Checked a block at a time with a branch-free test the compiler vectorises (NaN and Inf both
// fail |x| <= DBL_MAX); only a failing block is searched for its first bad value.
Status check_finite(std::span<const double> values, std::size_t cols, const std::string& name) {
  constexpr std::size_t kBlock = 4096;
  constexpr double kLargest = std::numeric_limits<double>::max();
  for (std::size_t begin = 0; begin < values.size(); begin += kBlock) {
    const std::size_t end = std::min(values.size(), begin + kBlock);
    int bad = 0;
    for (std::size_t i = begin; i < end; ++i)
      bad |= !(std::fabs(values[i]) <= kLargest);
    if (bad == 0)
      continue;
    for (std::size_t i = begin; i < end; ++i) {
      if (!std::isfinite(values[i])) {
        return parse_error(name, std::string(std::isnan(values[i]) ? "NaN" : "Inf") + " at row " +
                                     std::to_string(i / cols) + ", column " +
                                     std::to_string(i % cols) + ": predictions must be finite");
      }
    }
  }
  return Status::success();
}

// Converts to double; false (with the index in `inexact`) at the first integer a double cannot
// hold exactly (beyond 2^53).
template <class T>
bool convert(std::span<const std::byte> data, std::vector<double>& out, std::size_t& inexact) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
    if constexpr (std::is_integral_v<T> && sizeof(T) == 8) {
      // 2^63 (out of range for the cast back) is itself inexact for int64 and uint64 here.
      if (std::abs(out[i]) >= 0x1p63 || static_cast<T>(out[i]) != v) {
        inexact = i;
        return false;
      }
    }
  }
  return true;
}

enum class NpyDtypes { floats, numbers };

struct NpyDtype {
  const char* descr;
  std::size_t item;
  bool (*convert)(std::span<const std::byte>, std::vector<double>&, std::size_t&);
  bool integral;
};

constexpr NpyDtype kNpyDtypes[] = {
    {"<f8", 8, convert<double>, false},      {"<f4", 4, convert<float>, false},
    {"|b1", 1, convert<std::uint8_t>, true}, {"|u1", 1, convert<std::uint8_t>, true},
    {"|i1", 1, convert<std::int8_t>, true},  {"<u2", 2, convert<std::uint16_t>, true},
    {"<i2", 2, convert<std::int16_t>, true}, {"<u4", 4, convert<std::uint32_t>, true},
    {"<i4", 4, convert<std::int32_t>, true}, {"<u8", 8, convert<std::uint64_t>, true},
    {"<i8", 8, convert<std::int64_t>, true},
};

// Where an .npy file's data starts, from its first bytes (magic, version, header length): at
// most 12 bytes are needed.
constexpr std::size_t kNpyPreamble = 12;
Result<std::size_t> npy_data_offset(std::span<const std::byte> bytes, const std::string& name) {
  static constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return parse_error(name, "not an .npy file (missing \\x93NUMPY magic)");
  const auto major = static_cast<unsigned>(bytes[6]);
  if (major == 1)
    return 10 + (static_cast<std::size_t>(bytes[8]) | static_cast<std::size_t>(bytes[9]) << 8);
  if (major != 2 && major != 3) {
    return parse_error(
        name, "unsupported .npy format version " + std::to_string(major) + " (expected 1, 2 or 3)");
  }
  if (bytes.size() < 12)
    return parse_error(name, "truncated .npy header");
  std::size_t header_len = 0;
  for (int i = 3; i >= 0; --i)
    header_len = header_len << 8 | static_cast<std::size_t>(bytes[8 + i]);
  return 12 + header_len;
}

// What the header says about the data that follows it.
struct NpyLayout {
  const NpyDtype* type = nullptr;
  std::size_t item = 0;  // bytes per value
  std::size_t rows = 0, cols = 1;
  bool two_d = false;
  std::size_t data_offset = 0;
  std::size_t count() const { return rows * cols; }
};

// Parses the header in `bytes` (the file's first bytes, at least up to its data) of a file of
// `file_size` bytes; a file too short for the data its shape declares is an error.
Result<NpyLayout> parse_npy_header(std::span<const std::byte> bytes, std::uint64_t file_size,
                                   const std::string& name, NpyDtypes accepted) {
  auto data_offset = npy_data_offset(bytes, name);
  if (!data_offset.ok())
    return data_offset.error();
  const std::size_t header_start = bytes[6] == std::byte{1} ? 10 : 12;
  if (bytes.size() < *data_offset)
    return parse_error(name, "truncated .npy header");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + header_start),
                                *data_offset - header_start);
  const auto descr = header_value(header, "descr");
  const auto fortran = header_value(header, "fortran_order");
  const auto shape = header_value(header, "shape");
  if (!descr || !fortran || !shape)
    return parse_error(name, "malformed .npy header (needs descr, fortran_order and shape): " +
                                 std::string(header));
  NpyLayout layout;
  layout.data_offset = *data_offset;
  const auto dtype = trim_cell(descr->substr(1, descr->size() >= 2 ? descr->size() - 2 : 0));
  for (const NpyDtype& candidate : kNpyDtypes) {
    if (dtype == candidate.descr && (accepted == NpyDtypes::numbers || !candidate.integral))
      layout.type = &candidate;
  }
  if (layout.type == nullptr)
    return parse_error(name, "dtype '" + std::string(dtype) + "' is not supported (expected " +
                                 (accepted == NpyDtypes::numbers
                                      ? "a little-endian bool, integer or '<f4'/'<f8' dtype)"
                                      : "'<f4' or '<f8')"));
  layout.item = layout.type->item;

  std::vector<std::size_t> dims;
  for (std::string_view rest = shape->substr(1, shape->size() - 2); !trim_cell(rest).empty();) {
    const auto comma = std::min(rest.find(','), rest.size());
    const auto token = trim_cell(rest.substr(0, comma));
    rest = comma < rest.size() ? rest.substr(comma + 1) : std::string_view{};
    if (token.empty())
      continue;
    std::size_t d = 0;
    auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), d);
    if (ec != std::errc() || end != token.data() + token.size())
      return parse_error(name, "malformed shape " + std::string(*shape));
    dims.push_back(d);
  }
  if (dims.empty() || dims.size() > 2)
    return parse_error(name,
                       "shape " + std::string(*shape) + " is not supported (expected 1-D or 2-D)");
  if (trim_cell(*fortran) == "True" && dims.size() == 2 && dims[0] > 1 && dims[1] > 1)
    return parse_error(name, "Fortran (column-major) order is not supported (expected C order)");
  if (trim_cell(*fortran) != "True" && trim_cell(*fortran) != "False")
    return parse_error(name, "malformed fortran_order " + std::string(*fortran));

  layout.rows = dims[0];
  layout.cols = dims.size() == 2 ? dims[1] : 1;
  layout.two_d = dims.size() == 2;
  if (layout.rows == 0 || layout.cols == 0)
    return parse_error(name, "has no predictions (shape " + std::string(*shape) + ")");
  const std::uint64_t data_bytes = file_size - layout.data_offset;
  if (layout.cols > data_bytes / layout.item ||
      layout.rows > data_bytes / layout.item / layout.cols)
    return parse_error(name, "truncated: shape " + std::string(*shape) + " needs " +
                                 std::to_string(layout.rows * layout.cols * layout.item) +
                                 " bytes of data, the file holds " + std::to_string(data_bytes));
  return layout;
}

Predictions empty_predictions(const NpyLayout& layout) {
  Predictions p;
  p.rows = layout.rows;
  p.cols = layout.cols;
  p.two_d = layout.two_d;
  return p;
}

// Sizes p.values for `count` doubles, their storage advised onto 2 MiB pages first where it
// spans any: zeroing and filling 80 MB then takes ~40 page faults instead of ~20,000.
void size_values(Predictions& p, std::size_t count) {
  constexpr std::uintptr_t kHugePage = 2 << 20;
  p.values.reserve(count);
  const auto begin = reinterpret_cast<std::uintptr_t>(p.values.data());
  const std::uintptr_t first = (begin + kHugePage - 1) / kHugePage * kHugePage;
  const std::uintptr_t last = (begin + count * sizeof(double)) / kHugePage * kHugePage;
  if (last > first)
    (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advisory
  p.values.resize(count);
}

void widen_floats(const std::byte* floats, std::size_t count, double* out) {
  for (std::size_t i = 0; i < count; ++i) {
    float v;
    std::memcpy(&v, floats + i * sizeof v, sizeof v);
    out[i] = static_cast<double>(v);
  }
}

bool has_npy_magic(std::span<const std::byte> bytes) {
  return !bytes.empty() && bytes[0] == std::byte{0x93};
}

// Opens a regular file for reading: its descriptor and size, or an io error naming the path
// (a missing file included).
Result<std::pair<UniqueFd, std::uint64_t>> open_regular(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    return make_error(ErrorCode::io, path.string() + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return make_error(ErrorCode::io, path.string() + ": not a regular file");
  return std::pair{std::move(fd), static_cast<std::uint64_t>(st.st_size)};
}

// Up to `limit` bytes from the start of the file.
Result<std::string> read_start(const std::filesystem::path& path, std::uint64_t limit) {
  auto opened = open_regular(path);
  if (!opened.ok())
    return opened.error();
  std::string bytes(std::min(limit, opened->second), '\0');
  if (auto read = read_exact(opened->first.get(), 0, bytes.data(), bytes.size(), path.string());
      !read.ok())
    return read.error();
  return bytes;
}

std::span<const std::byte> as_bytes(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

}  // namespace

namespace {

Result<Predictions> parse_npy_as(std::span<const std::byte> bytes, const std::string& name,
                                 NpyDtypes accepted) {
  auto layout = parse_npy_header(bytes, bytes.size(), name, accepted);
  if (!layout.ok())
    return layout.error();
  Predictions p = empty_predictions(*layout);
  size_values(p, layout->count());
  const auto data = bytes.subspan(layout->data_offset);
  if (layout->type->convert == convert<double>) {
    std::memcpy(p.values.data(), data.data(), layout->count() * sizeof(double));
  } else if (std::size_t inexact = 0; !layout->type->convert(data, p.values, inexact)) {
    return parse_error(name, "the integer at row " + std::to_string(inexact / p.cols) +
                                 ", column " + std::to_string(inexact % p.cols) +
                                 " is beyond 2^53: a double cannot hold it exactly");
  }
  if (accepted == NpyDtypes::floats) {
    if (auto finite = check_finite(p.values, p.cols, name); !finite.ok())
      return finite.error();
  }
  return p;
}

}  // namespace

Result<Predictions> parse_npy(std::span<const std::byte> bytes, const std::string& name) {
  return parse_npy_as(bytes, name, NpyDtypes::floats);
}

Result<Predictions> parse_npy_numbers(std::span<const std::byte> bytes, const std::string& name) {
  return parse_npy_as(bytes, name, NpyDtypes::numbers);
}

Result<Predictions> parse_csv(std::string_view text, const std::string& name) {
  Predictions p;
  std::size_t line_number = 0;
  bool columns_known = false;
  while (!text.empty()) {
    const auto newline = std::min(text.find('\n'), text.size());
    const auto line = trim_cell(text.substr(0, newline));
    text = newline < text.size() ? text.substr(newline + 1) : std::string_view{};
    ++line_number;
    if (line.empty())
      continue;
    std::vector<double> row;
    bool numeric = true;
    for (std::string_view rest = line;;) {
      const auto comma = std::min(rest.find(','), rest.size());
      const auto v = parse_cell_number(trim_cell(rest.substr(0, comma)));
      numeric = numeric && v.has_value();
      row.push_back(v.value_or(0));
      if (comma == rest.size())
        break;
      rest = rest.substr(comma + 1);
    }
    if (!numeric) {
      if (!columns_known && p.rows == 0 && !p.two_d && p.values.empty()) {
        p.cols = row.size();  // the header row names the columns
        columns_known = true;
        continue;
      }
      return parse_error(
          name, "line " + std::to_string(line_number) + ": expected numbers separated by commas");
    }
    if (!columns_known) {
      p.cols = row.size();
      columns_known = true;
    }
    if (row.size() != p.cols)
      return parse_error(name, "line " + std::to_string(line_number) + ": " +
                                   std::to_string(row.size()) + " columns, expected " +
                                   std::to_string(p.cols));
    p.values.insert(p.values.end(), row.begin(), row.end());
    ++p.rows;
  }
  if (p.rows == 0)
    return parse_error(name, "has no prediction rows");
  p.two_d = p.cols > 1;
  if (auto finite = check_finite(p.values, p.cols, name); !finite.ok())
    return finite.error();
  return p;
}

std::string_view trim_cell(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::optional<double> parse_cell_number(std::string_view cell) {
  double value = 0;
  const char* begin = cell.data() + (!cell.empty() && cell.front() == '+');
  const auto [end, ec] = std::from_chars(begin, cell.data() + cell.size(), value);
  if (cell.empty() || ec != std::errc() || end != cell.data() + cell.size())
    return std::nullopt;
  return value;
}

// Reads the header, then the data straight into the values: one read() of an <f8 file's data
// into their storage, no mapping and no second copy; <f4 is widened a buffer at a time.
Result<Predictions> read_npy(const std::filesystem::path& path) {
  const std::string name = path.string();
  auto opened = open_regular(path);
  if (!opened.ok())
    return opened.error();
  const int fd = opened->first.get();
  const std::uint64_t file_size = opened->second;
  std::vector<std::byte> head(std::min<std::uint64_t>(file_size, kNpyPreamble));
  if (auto read = read_exact(fd, 0, head.data(), head.size(), name); !read.ok())
    return read.error();
  const auto data_offset = npy_data_offset(head, name);
  if (!data_offset.ok())
    return data_offset.error();
  if (*data_offset > file_size)
    return parse_error(name, "truncated .npy header");
  head.resize(*data_offset);
  if (auto read = read_exact(fd, 0, head.data(), head.size(), name); !read.ok())
    return read.error();
  const auto layout = parse_npy_header(head, file_size, name, NpyDtypes::floats);
  if (!layout.ok())
    return layout.error();

  Predictions p = empty_predictions(*layout);
  size_values(p, layout->count());
  if (layout->item == 8) {
    if (auto read = read_exact(fd, layout->data_offset, p.values.data(),
                               layout->count() * sizeof(double), name);
        !read.ok())
      return read.error();
  } else {
    constexpr std::size_t kFloatsPerRead = 64 * 1024;
    std::vector<std::byte> floats(kFloatsPerRead * sizeof(float));
    for (std::size_t done = 0; done < layout->count();) {
      const std::size_t n = std::min(kFloatsPerRead, layout->count() - done);
      if (auto read = read_exact(fd, layout->data_offset + done * sizeof(float), floats.data(),
                                 n * sizeof(float), name);
          !read.ok())
        return read.error();
      widen_floats(floats.data(), n, p.values.data() + done);
      done += n;
    }
  }
  if (auto finite = check_finite(p.values, p.cols, name); !finite.ok())
    return finite.error();
  return p;
}

// Read whole (no mapping: a file that shrinks meanwhile is an error, not a fault).
Result<Predictions> read_csv(const std::filesystem::path& path) {
  auto text = read_start(path, std::numeric_limits<std::uint64_t>::max());
  if (!text.ok())
    return text.error();
  return parse_csv(*text, path.string());
}

Result<Predictions> read_predictions(const std::filesystem::path& path) {
  const auto ext = path.extension().string();
  if (ext == ".npy")
    return read_npy(path);
  if (ext == ".csv" || ext == ".txt")
    return read_csv(path);
  auto start = read_start(path, kNpyPreamble);
  if (!start.ok())
    return start.error();
  return has_npy_magic(as_bytes(*start)) ? read_npy(path) : read_csv(path);
}

PredictionsView::PredictionsView(Predictions owned)
    : rows(owned.rows), cols(owned.cols), two_d(owned.two_d), owned_(std::move(owned)) {
  values_ = owned_->values;
}

PredictionsView::PredictionsView(std::size_t rows, std::size_t cols, bool two_d,
                                 std::span<const double> values, MappedFile file)
    : rows(rows), cols(cols), two_d(two_d), values_(values), file_(std::move(file)) {}

namespace {

Result<PredictionsView> owned_view(Result<Predictions> read) {
  if (!read.ok())
    return read.error();
  return PredictionsView(std::move(read).value());
}

}  // namespace

Result<PredictionsView> view_predictions(const std::filesystem::path& path) {
  const auto ext = path.extension().string();
  if (ext == ".csv" || ext == ".txt")
    return owned_view(read_csv(path));
  auto file = MappedFile::map(path);
  if (!file.ok())
    return file.error();
  const auto bytes = file->bytes();
  if (ext != ".npy" && !has_npy_magic(bytes))
    return owned_view(read_csv(path));
  const std::string name = path.string();
  const auto layout = parse_npy_header(bytes, bytes.size(), name, NpyDtypes::floats);
  if (!layout.ok())
    return layout.error();
  if (layout->item != sizeof(double) || layout->data_offset % alignof(double) != 0)
    return owned_view(parse_npy(bytes, name));
  const std::span<const double> values(
      reinterpret_cast<const double*>(bytes.data() + layout->data_offset), layout->count());
  if (auto finite = check_finite(values, layout->cols, name); !finite.ok())
    return finite.error();
  return PredictionsView(layout->rows, layout->cols, layout->two_d, values, std::move(*file));
}

Status write_npy(const std::filesystem::path& path, const Predictions& p) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" +
                       std::to_string(p.rows) +
                       (p.two_d ? ", " + std::to_string(p.cols) + ")" : ",)") + ", }";
  // Total header (magic + version + length + dict + newline) padded to a multiple of 64 bytes.
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  const char preamble[10] = {'\x93',
                             'N',
                             'U',
                             'M',
                             'P',
                             'Y',
                             1,
                             0,
                             static_cast<char>(header.size() & 0xff),
                             static_cast<char>(header.size() >> 8)};
  out.write(preamble, sizeof preamble);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(p.values.data()),
            static_cast<std::streamsize>(p.values.size() * 8));
  out.close();
  if (!out)
    return make_error(ErrorCode::io, path.string() + ": cannot write");
  return Status::success();
}

std::string values_sha256(const Predictions& p) {
  Sha256 sha;
  const std::uint64_t shape[] = {p.rows, p.cols, p.two_d};
  sha.update(shape, sizeof shape);
  sha.update(p.values.data(), p.values.size() * sizeof(double));
  return sha.final_hex();
}

}  // namespace reverify
