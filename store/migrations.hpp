#pragma once
// Numbered schema migrations, applied in order at start inside one transaction each; the applied
// number is SQLite's user_version. Never edit a released migration: append a new one.

#include <span>

#include "core/result.hpp"

struct sqlite3;

namespace reverify {

struct Migration {
  int number;
  const char* sql;
  // Run after `sql`, in the same transaction: fills what SQL cannot compute (a verdict's summary
  // is worked out by policies/headline.hpp from its checks). Optional.
  Status (*fill)(sqlite3* db) = nullptr;
};

std::span<const Migration> migrations();

}  // namespace reverify
