#pragma once
// Numbered schema migrations, applied in order at start inside one transaction each; the applied
// number is SQLite's user_version. Never edit a released migration: append a new one.

#include <span>

namespace reverify {

struct Migration {
  int number;
  const char* sql;
};

std::span<const Migration> migrations();

}  // namespace reverify
