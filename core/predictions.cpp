#include "core/predictions.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <type_traits>

namespace reverify {
namespace {

static_assert(std::endian::native == std::endian::little,
              "npy reader assumes a little-endian host");

// A read-only memory map of a whole file, unmapped on destruction.
class MappedFile {
 public:
  static Result<MappedFile> open(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return make_error(ErrorCode::io, path.string() + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    MappedFile file;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return make_error(ErrorCode::io, path.string() + ": not a regular file");
    }
    file.size_ = static_cast<std::size_t>(st.st_size);
    if (file.size_ > 0) {
      void* data = ::mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (data == MAP_FAILED) {
        ::close(fd);
        return make_error(ErrorCode::io, path.string() + ": cannot map: " + std::strerror(errno));
      }
      ::madvise(data, file.size_, MADV_SEQUENTIAL);
      file.data_ = data;
    }
    ::close(fd);
    return file;
  }
  MappedFile(MappedFile&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(other.size_) {}
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile() {
    if (data_)
      ::munmap(data_, size_);
  }
  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(data_), size_}; }

 private:
  MappedFile() = default;
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

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

Status check_finite(const Predictions& p, const std::string& name) {
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    if (!std::isfinite(p.values[i])) {
      return parse_error(name, std::string(std::isnan(p.values[i]) ? "NaN" : "Inf") + " at row " +
                                   std::to_string(i / p.cols) + ", column " +
                                   std::to_string(i % p.cols) + ": predictions must be finite");
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

Result<Predictions> parse_npy_as(std::span<const std::byte> bytes, const std::string& name,
                                 NpyDtypes accepted) {
  static constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return parse_error(name, "not an .npy file (missing \\x93NUMPY magic)");
  const auto major = static_cast<unsigned>(bytes[6]);
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<std::size_t>(bytes[8]) | static_cast<std::size_t>(bytes[9]) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return parse_error(name, "truncated .npy header");
    for (int i = 3; i >= 0; --i)
      header_len = header_len << 8 | static_cast<std::size_t>(bytes[8 + i]);
    header_start = 12;
  } else {
    return parse_error(
        name, "unsupported .npy format version " + std::to_string(major) + " (expected 1, 2 or 3)");
  }
  if (bytes.size() < header_start + header_len)
    return parse_error(name, "truncated .npy header");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + header_start),
                                header_len);
  const auto descr = header_value(header, "descr");
  const auto fortran = header_value(header, "fortran_order");
  const auto shape = header_value(header, "shape");
  if (!descr || !fortran || !shape)
    return parse_error(name, "malformed .npy header (needs descr, fortran_order and shape): " +
                                 std::string(header));
  const auto dtype = trim_cell(descr->substr(1, descr->size() >= 2 ? descr->size() - 2 : 0));
  const NpyDtype* type = nullptr;
  for (const NpyDtype& candidate : kNpyDtypes) {
    if (dtype == candidate.descr && (accepted == NpyDtypes::numbers || !candidate.integral))
      type = &candidate;
  }
  if (type == nullptr)
    return parse_error(name, "dtype '" + std::string(dtype) + "' is not supported (expected " +
                                 (accepted == NpyDtypes::numbers
                                      ? "a little-endian bool, integer or '<f4'/'<f8' dtype)"
                                      : "'<f4' or '<f8')"));
  const std::size_t item = type->item;

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

  Predictions p;
  p.rows = dims[0];
  p.cols = dims.size() == 2 ? dims[1] : 1;
  p.two_d = dims.size() == 2;
  if (p.rows == 0 || p.cols == 0)
    return parse_error(name, "has no predictions (shape " + std::string(*shape) + ")");
  const std::size_t count = p.rows * p.cols;
  const auto data = bytes.subspan(header_start + header_len);
  if (count > data.size() / item)
    return parse_error(name, "truncated: shape " + std::string(*shape) + " needs " +
                                 std::to_string(count * item) + " bytes of data, the file holds " +
                                 std::to_string(data.size()));
  p.values.resize(count);
  if (std::size_t inexact = 0; !type->convert(data, p.values, inexact))
    return parse_error(name, "the integer at row " + std::to_string(inexact / p.cols) +
                                 ", column " + std::to_string(inexact % p.cols) +
                                 " is beyond 2^53: a double cannot hold it exactly");
  if (accepted == NpyDtypes::floats) {
    if (auto finite = check_finite(p, name); !finite.ok())
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
  if (auto finite = check_finite(p, name); !finite.ok())
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

Result<Predictions> read_npy(const std::filesystem::path& path) {
  auto file = MappedFile::open(path);
  if (!file.ok())
    return file.error();
  return parse_npy(file->bytes(), path.string());
}

Result<Predictions> read_csv(const std::filesystem::path& path) {
  auto file = MappedFile::open(path);
  if (!file.ok())
    return file.error();
  const auto bytes = file->bytes();
  return parse_csv(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                   path.string());
}

Result<Predictions> read_predictions(const std::filesystem::path& path) {
  const auto ext = path.extension().string();
  if (ext == ".npy")
    return read_npy(path);
  if (ext == ".csv" || ext == ".txt")
    return read_csv(path);
  auto file = MappedFile::open(path);
  if (!file.ok())
    return file.error();
  const auto bytes = file->bytes();
  if (bytes.size() >= 6 && static_cast<unsigned char>(bytes[0]) == 0x93)
    return parse_npy(bytes, path.string());
  return parse_csv(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                   path.string());
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

}  // namespace reverify
