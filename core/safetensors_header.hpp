#pragma once
// Strict validation of a safetensors header (https://huggingface.co/docs/safetensors): the JSON
// that follows the 8-byte little-endian header length. Pure: no I/O.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace reverify {

inline constexpr std::uint64_t kSafetensorsMaxHeader = 100'000'000;  // as the reference library

struct SafetensorsTensor {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0, end = 0;  // data_offsets, relative to the start of the data section
};

// "2,3" for shape [2, 3]; "" for a scalar.
std::string join_dims(const std::vector<std::uint64_t>& shape);

// Element width in bits of a dtype of the official list (safetensors 0.6), 0 for unknown names.
unsigned safetensors_dtype_bits(std::string_view dtype);

// Validates `header` against a data section of `data_size` bytes: a JSON object without duplicate
// keys; `__metadata__`, when present, string -> string; every other key a tensor name without tab,
// newline or NUL, mapping to exactly {dtype, shape, data_offsets}; known dtype; shape x dtype width
// = the byte length of data_offsets; offsets in range; tensors covering the data section
// contiguously, without gap or overlap. The first violation is returned, naming tensor and rule.
// Tensors come back sorted by name.
Result<std::vector<SafetensorsTensor>> parse_safetensors_header(std::string_view header,
                                                                std::uint64_t data_size);

}  // namespace reverify
