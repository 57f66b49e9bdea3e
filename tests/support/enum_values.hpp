#pragma once
// The enumerators an enum declares, found without its name table: each candidate value's
// template signature names the enumerator (`V = reverify::RebuildMode::full`) when one is declared
// with that value and shows a cast (`V = (reverify::RebuildMode)7`) when none is (GCC and Clang
// print __PRETTY_FUNCTION__ so). So a test of an enum's names can iterate what the enum declares
// and find a value its table forgot. Values 0..kMaxEnumerator-1 are searched: every enum here
// counts from 0.

#include <string_view>
#include <utility>
#include <vector>

namespace reverify::test {

inline constexpr int kMaxEnumerator = 128;

template <auto V>
constexpr std::string_view signature_of() {
  return __PRETTY_FUNCTION__;
}

template <class E, int I>
constexpr bool declares() {
  constexpr std::string_view signature = signature_of<static_cast<E>(I)>();
  constexpr auto at = signature.rfind("V = ");
  static_assert(at != std::string_view::npos, "unexpected __PRETTY_FUNCTION__ form");
  return signature[at + 4] != '(';
}

template <class E, int... I>
std::vector<E> declared_in(std::integer_sequence<int, I...>) {
  std::vector<E> out;
  ((declares<E, I>() ? out.push_back(static_cast<E>(I)) : void()), ...);
  return out;
}

// Every enumerator of E with a value in [0, kMaxEnumerator), in value order.
template <class E>
std::vector<E> declared_enumerators() {
  return declared_in<E>(std::make_integer_sequence<int, kMaxEnumerator>{});
}

}  // namespace reverify::test
