#pragma once
// A map's value at a key, as an optional: for settings keyed by name (tolerance.floor,
// tolerance.detect, seed runs) where absent means "not set".

#include <map>
#include <optional>

namespace reverify {

template <class Key, class T, class Compare, class Alloc, class K>
std::optional<T> lookup(const std::map<Key, T, Compare, Alloc>& m, const K& key) {
  auto it = m.find(key);
  return it == m.end() ? std::nullopt : std::optional<T>(it->second);
}

}  // namespace reverify
