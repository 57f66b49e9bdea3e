#include "core/manifest_strict_json.hpp"

#include <string>
#include <vector>

#include "core/json_text.hpp"
#include "core/manifest_path.hpp"

namespace reverify {
namespace {
using nlohmann::json;

// Builds the DOM from SAX events (as nlohmann's own DOM builder does), refusing what a manifest
// must not contain. Returning false stops the parse at once.
class StrictBuilder {
 public:
  explicit StrictBuilder(const ManifestLimits& limits) : limits_(limits) {}

  bool null() { return add(json(nullptr)); }
  bool boolean(bool v) { return add(json(v)); }
  bool number_integer(json::number_integer_t v) { return add(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return add(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return add(json(v)); }
  bool binary(json::binary_t&) { return fail(current_path(), "binary values are not JSON"); }
  bool string(json::string_t& v) {
    if (!string_fits(v, current_path()))
      return false;
    return add(json(std::move(v)));
  }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& k) {
    Level& level = levels_.back();
    const std::string path = json_path_key(level.path, k);
    if (!string_fits(k, path))
      return false;
    if (level.node->contains(k)) {
      return fail(path, "duplicate key \"" + shorten(k) + "\" (a key may appear once per object)");
    }
    level.pending_key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    std::string what = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix; keep its line/column text.
    if (auto close = what.find("] ");
        what.rfind("[json.exception.", 0) == 0 && close != what.npos) {
      what = what.substr(close + 2);
    }
    if (e.id == 406)
      return fail(current_path(), what + " (must be a finite number)");
    return fail("", "invalid JSON at byte offset " + std::to_string(position) + ": " + what);
  }

  StrictJson result() && {
    StrictJson out;
    out.error = std::move(error_);
    if (!out.error)
      out.value = std::move(root_);
    return out;
  }

 private:
  struct Level {
    json* node;
    std::string path;
    std::string pending_key;     // objects: the key whose value comes next
    std::size_t next_index = 0;  // arrays: the index of the next element
  };

  std::string current_path() const {
    if (levels_.empty())
      return "";
    const Level& level = levels_.back();
    return level.node->is_array() ? json_path_index(level.path, level.next_index)
                                  : json_path_key(level.path, level.pending_key);
  }

  static std::string shorten(const std::string& text) {
    return text.size() <= 64 ? text : text.substr(0, 64) + "...";
  }

  bool string_fits(const std::string& s, const std::string& path) {
    if (s.size() <= limits_.max_string_bytes)
      return true;
    return fail(path, "string of " + std::to_string(s.size()) + " bytes exceeds the limit of " +
                          std::to_string(limits_.max_string_bytes) + " bytes");
  }

  // Places a value in the current container (or as the root); returns where it now lives, or
  // nullptr when the array is full.
  json* place(json value) {
    if (levels_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Level& level = levels_.back();
    if (level.node->is_array()) {
      if (level.next_index >= limits_.max_array_elements) {
        fail(level.path, "array of more than " + std::to_string(limits_.max_array_elements) +
                             " elements exceeds the limit");
        return nullptr;
      }
      ++level.next_index;
      level.node->push_back(std::move(value));
      return &level.node->back();
    }
    json& slot = (*level.node)[level.pending_key];
    slot = std::move(value);
    return &slot;
  }

  bool add(json value) { return place(std::move(value)) != nullptr; }

  bool open(json container) {
    const std::string path = current_path();
    if (levels_.size() >= limits_.max_depth) {
      return fail(path, "nesting deeper than the limit of " + std::to_string(limits_.max_depth) +
                            " levels");
    }
    json* node = place(std::move(container));
    if (node == nullptr)
      return false;
    levels_.push_back(Level{node, path, {}, 0});
    return true;
  }

  bool close() {
    levels_.pop_back();
    return true;
  }

  bool fail(std::string path, std::string message) {
    if (!error_)
      error_ = ValidationError{std::move(path), std::move(message)};
    return false;
  }

  const ManifestLimits& limits_;
  json root_;
  std::vector<Level> levels_;
  std::optional<ValidationError> error_;
};

}  // namespace

std::optional<std::size_t> find_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0)
      return i;
    i += length;
  }
  return std::nullopt;
}

StrictJson parse_strict_json(std::string_view text, const ManifestLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return {{},
            ValidationError{"", "document of " + std::to_string(text.size()) +
                                    " bytes exceeds the limit of " +
                                    std::to_string(limits.max_bytes) + " bytes"}};
  }
  // nlohmann would skip it silently; Python's json and Go's encoding/json refuse it, so a manifest
  // that starts with one is not what the tools around the training job read.
  if (text.starts_with("\xEF\xBB\xBF")) {
    return {{},
            ValidationError{"",
                            "starts with a UTF-8 byte order mark (EF BB BF), which JSON text "
                            "must not have (RFC 8259, section 8.1): save it as UTF-8 without "
                            "a BOM"}};
  }
  if (auto offset = find_invalid_utf8(text)) {
    return {{}, ValidationError{"", "invalid UTF-8 at byte offset " + std::to_string(*offset)}};
  }
  StrictBuilder builder(limits);
  json::sax_parse(text.begin(), text.end(), &builder);
  return std::move(builder).result();
}

}  // namespace reverify
