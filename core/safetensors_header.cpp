#include "core/safetensors_header.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

namespace reverify {
namespace {
using nlohmann::json;

struct DtypeWidth {
  std::string_view name;
  unsigned bits;
};
// The official list (safetensors 0.6, `Dtype::bitsize`).
constexpr std::array<DtypeWidth, 20> kDtypes{{
    {"BOOL", 8}, {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
    {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16},
    {"U16", 16}, {"F16", 16},    {"BF16", 16},   {"I32", 32},    {"U32", 32},
    {"F32", 32}, {"C64", 64},    {"F64", 64},    {"I64", 64},    {"U64", 64},
}};

Error header_error(const std::string& what) {
  return make_error(ErrorCode::parse, "safetensors header: " + what);
}

Error tensor_error(const std::string& name, const std::string& what) {
  return header_error("tensor " + json(name).dump() + ": " + what);
}

// Built by appending: g++ 12 -O3 warns falsely (-Wrestrict) on "literal" + std::string&&.
std::string dims_text(const std::vector<std::uint64_t>& shape) {
  std::string out = "[";
  out += join_dims(shape);
  return out += "]";
}

std::string range_text(const SafetensorsTensor& t) {
  std::string out = "[";
  out += std::to_string(t.begin);
  out += ", ";
  out += std::to_string(t.end);
  return out += ")";
}

// Parses JSON, rejecting duplicate keys at any depth (nlohmann would silently keep the last one,
// which could hide a tensor).
Result<json> parse_json_without_duplicates(std::string_view text) {
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  auto on_event = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start)
      open_objects.emplace_back();
    if (event == json::parse_event_t::object_end)
      open_objects.pop_back();
    if (event == json::parse_event_t::key &&
        !open_objects.back().insert(parsed.get<std::string>()).second && duplicate.empty()) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  try {
    json parsed = json::parse(text.begin(), text.end(), on_event);
    if (!duplicate.empty())
      return header_error("key " + json(duplicate).dump() + " appears twice");
    return parsed;
  } catch (const json::parse_error& e) {
    return header_error(std::string("not valid JSON (") + e.what() + ")");
  }
}

Status check_metadata(const json& metadata) {
  if (!metadata.is_object())
    return header_error("__metadata__ must be an object of strings");
  for (const auto& [key, value] : metadata.items()) {
    if (!value.is_string()) {
      return header_error("__metadata__." + key + " must be a string, got " + value.type_name());
    }
  }
  return Status::success();
}

Result<std::uint64_t> unsigned_field(const std::string& name, const std::string& field,
                                     const json& value) {
  if (!value.is_number_unsigned()) {
    return tensor_error(name, field + " must hold non-negative integers, got " + value.dump());
  }
  return value.get<std::uint64_t>();
}

Result<std::uint64_t> byte_length(const SafetensorsTensor& t, unsigned bits) {
  std::uint64_t elements = 1;
  for (std::uint64_t dim : t.shape) {
    if (__builtin_mul_overflow(elements, dim, &elements)) {
      return tensor_error(t.name, "shape " + dims_text(t.shape) + " overflows 64 bits");
    }
  }
  std::uint64_t total_bits = 0;
  if (__builtin_mul_overflow(elements, std::uint64_t{bits}, &total_bits)) {
    return tensor_error(t.name,
                        "shape " + dims_text(t.shape) + " x " + t.dtype + " overflows 64 bits");
  }
  if (total_bits % 8 != 0) {
    return tensor_error(t.name, std::to_string(elements) + " elements of " + t.dtype + " (" +
                                    std::to_string(bits) + " bits each) do not fill whole bytes");
  }
  return total_bits / 8;
}

Result<SafetensorsTensor> parse_tensor(const std::string& name, const json& info,
                                       std::uint64_t data_size) {
  if (name.find_first_of(std::string_view("\t\n\0", 3)) != std::string::npos) {
    return tensor_error(
        name, "name holds a tab, newline or NUL, which the tensor hash lines cannot represent");
  }
  if (!info.is_object())
    return tensor_error(name, "must be an object, got " + std::string(info.type_name()));
  for (const auto& [key, value] : info.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      return tensor_error(
          name, "unknown key " + json(key).dump() + " (expected dtype, shape, data_offsets)");
    }
  }
  SafetensorsTensor t;
  t.name = name;
  if (!info.contains("dtype") || !info["dtype"].is_string())
    return tensor_error(name, "dtype must be a string");
  t.dtype = info["dtype"].get<std::string>();
  const unsigned bits = safetensors_dtype_bits(t.dtype);
  if (bits == 0)
    return tensor_error(name, "unknown dtype " + json(t.dtype).dump());

  if (!info.contains("shape") || !info["shape"].is_array())
    return tensor_error(name, "shape must be an array");
  for (const json& dim : info["shape"]) {
    auto value = unsigned_field(name, "shape", dim);
    if (!value)
      return value.error();
    t.shape.push_back(*value);
  }
  auto length = byte_length(t, bits);
  if (!length)
    return length.error();

  const json* offsets = info.contains("data_offsets") ? &info["data_offsets"] : nullptr;
  if (offsets == nullptr || !offsets->is_array() || offsets->size() != 2) {
    return tensor_error(name, "data_offsets must be an array [begin, end]");
  }
  auto begin = unsigned_field(name, "data_offsets", (*offsets)[0]);
  if (!begin)
    return begin.error();
  auto end = unsigned_field(name, "data_offsets", (*offsets)[1]);
  if (!end)
    return end.error();
  t.begin = *begin;
  t.end = *end;
  if (t.begin > t.end)
    return tensor_error(name, "data_offsets " + range_text(t) + " end before they begin");
  if (t.end > data_size) {
    return tensor_error(name, "data_offsets " + range_text(t) + " run past the data section (" +
                                  std::to_string(data_size) + " bytes)");
  }
  if (t.end - t.begin != *length) {
    return tensor_error(name, "shape " + dims_text(t.shape) + " x " + t.dtype + " is " +
                                  std::to_string(*length) + " bytes but data_offsets " +
                                  range_text(t) + " span " + std::to_string(t.end - t.begin));
  }
  return t;
}

// Every byte of the data section belongs to exactly one tensor.
Status check_coverage(std::vector<const SafetensorsTensor*> by_offset, std::uint64_t data_size) {
  std::sort(by_offset.begin(), by_offset.end(), [](const auto* a, const auto* b) {
    return std::pair(a->begin, a->end) < std::pair(b->begin, b->end);
  });
  std::uint64_t covered = 0;
  const SafetensorsTensor* previous = nullptr;
  for (const SafetensorsTensor* t : by_offset) {
    if (t->begin > covered) {
      return header_error("data section bytes [" + std::to_string(covered) + ", " +
                          std::to_string(t->begin) + ") belong to no tensor (gap before tensor " +
                          json(t->name).dump() + ")");
    }
    if (t->begin < covered) {
      return tensor_error(t->name, "data_offsets " + range_text(*t) + " overlap tensor " +
                                       json(previous->name).dump() + " " + range_text(*previous));
    }
    covered = t->end;
    previous = t;
  }
  if (covered != data_size) {
    return header_error("data section bytes [" + std::to_string(covered) + ", " +
                        std::to_string(data_size) + ") after the last tensor belong to no tensor");
  }
  return Status::success();
}

}  // namespace

std::string join_dims(const std::vector<std::uint64_t>& shape) {
  std::string out;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0)
      out += ',';
    out += std::to_string(shape[i]);
  }
  return out;
}

unsigned safetensors_dtype_bits(std::string_view dtype) {
  for (const DtypeWidth& known : kDtypes) {
    if (known.name == dtype)
      return known.bits;
  }
  return 0;
}

Result<std::vector<SafetensorsTensor>> parse_safetensors_header(std::string_view header,
                                                                std::uint64_t data_size) {
  auto parsed = parse_json_without_duplicates(header);
  if (!parsed)
    return parsed.error();
  if (!parsed->is_object()) {
    return header_error(std::string("must be a JSON object, got ") + parsed->type_name());
  }
  std::vector<SafetensorsTensor> tensors;
  for (const auto& [key, value] : parsed->items()) {  // nlohmann's object is sorted by key
    if (key == "__metadata__") {
      Status status = check_metadata(value);
      if (!status)
        return status.error();
      continue;
    }
    auto tensor = parse_tensor(key, value, data_size);
    if (!tensor)
      return tensor.error();
    tensors.push_back(std::move(tensor).value());
  }
  std::vector<const SafetensorsTensor*> by_offset;
  for (const SafetensorsTensor& t : tensors)
    by_offset.push_back(&t);
  Status coverage = check_coverage(std::move(by_offset), data_size);
  if (!coverage)
    return coverage.error();
  return tensors;
}

}  // namespace reverify
