#pragma once
// One declarative name table per enum, and the two conversions every enum shares.
//
// An enum takes part by specialising EnumNames next to its declaration:
//   template <> struct EnumNames<RebuildMode> {
//     static constexpr EnumName<RebuildMode> table[] = {{RebuildMode::full, "full"}, ...};
//   };
// Then to_string(value) gives its name (the word stored in SQLite, written to JSON and the
// config) and enum_from_string<E>(text) the value, or nullopt for a word the table does not hold.
// A table's rows may be a richer struct than EnumName<E> (ScoringMetric's also hold its family and
// direction): the conversions read only each row's `.value` and `.name`.
// Each enumerator is listed once; a value missing from its table is a bug (to_string says
// "unknown" rather than crash). tests/daemon/enum_names_test.cpp holds every named enum: it takes
// each enum's enumerators from the enum itself, not from its table, and checks that each has one
// name that reads back, so a new enum goes on its list.

#include <optional>
#include <string>
#include <string_view>

namespace reverify {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

template <class E>
struct EnumNames;

template <class E>
concept NamedEnum = requires {
  EnumNames<E>::table;
};

template <NamedEnum E>
const char* to_string(E value) {
  for (const auto& entry : EnumNames<E>::table) {
    if (entry.value == value)
      return entry.name;
  }
  return "unknown";
}

template <NamedEnum E>
std::optional<E> enum_from_string(std::string_view text) {
  for (const auto& entry : EnumNames<E>::table) {
    if (text == entry.name)
      return entry.value;
  }
  return std::nullopt;
}

// "full, steps": the accepted words, for error messages.
template <NamedEnum E>
std::string enum_names(std::string_view separator = ", ") {
  std::string out;
  for (const auto& entry : EnumNames<E>::table) {
    if (!out.empty())
      out += separator;
    out += entry.name;
  }
  return out;
}

}  // namespace reverify
