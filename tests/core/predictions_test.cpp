#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>

#include <unistd.h>

#include "core/predictions.hpp"
#include "tests/support/files.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;

namespace {

std::filesystem::path fixture(const std::string& name) {
  return test::source_dir() / "tests/core/predictions_data" / name;
}

const test::TempDir temp_dir("reverify-predictions-test-");

std::filesystem::path temp_file(const std::string& name, const std::string& content) {
  return temp_dir.write(name, content);
}

bool mentions(const Error& e, const std::string& part) {
  return e.message.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("npy written by numpy: f8 and f4, 1-D and 2-D, format versions 1 to 3") {
  for (const char* name : {"f8_1d.npy", "f4_1d.npy"}) {
    CAPTURE(name);
    auto p = read_predictions(fixture(name));
    REQUIRE(p.ok());
    CHECK(p->rows == 4);
    CHECK(p->cols == 1);
    CHECK_FALSE(p->two_d);
    CHECK(p->values == std::vector<double>{0.25, 0.5, 0.75, 1.0});
  }
  for (const char* name : {"f8_2d.npy", "f8_2d_v2.npy", "f8_2d_v3.npy"}) {
    CAPTURE(name);
    auto p = read_npy(fixture(name));
    REQUIRE(p.ok());
    CHECK(p->rows == 3);
    CHECK(p->cols == 2);
    CHECK(p->two_d);
    CHECK(p->values == std::vector<double>{0.1, 0.9, 0.8, 0.2, 0.3, 0.7});
  }
}

TEST_CASE("npy errors name the dtype, order, shape or the non-finite value") {
  auto fortran = read_npy(fixture("fortran_2d.npy"));
  REQUIRE_FALSE(fortran.ok());
  CHECK(mentions(fortran.error(), "Fortran"));
  auto big = read_npy(fixture("big_endian.npy"));
  REQUIRE_FALSE(big.ok());
  CHECK(mentions(big.error(), "'>f8'"));
  auto ints = read_npy(fixture("int64.npy"));
  REQUIRE_FALSE(ints.ok());
  CHECK(mentions(ints.error(), "'<i8'"));
  auto nan = read_npy(fixture("nan.npy"));
  REQUIRE_FALSE(nan.ok());
  CHECK(mentions(nan.error(), "NaN at row 1, column 0"));
  auto inf = read_npy(fixture("inf_2d.npy"));
  REQUIRE_FALSE(inf.ok());
  CHECK(mentions(inf.error(), "Inf at row 1, column 0"));
  auto three = read_npy(fixture("three_d.npy"));
  REQUIRE_FALSE(three.ok());
  CHECK(mentions(three.error(), "1-D or 2-D"));
  auto missing = read_predictions(fixture("does_not_exist.npy"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::io);
}

TEST_CASE("truncated and foreign bytes are parse errors") {
  auto not_npy = read_npy(temp_file("x.npy", "hello world, not numpy"));
  REQUIRE_FALSE(not_npy.ok());
  CHECK(mentions(not_npy.error(), "magic"));
  const std::string bytes = test::read_file(fixture("f8_1d.npy"));
  auto truncated = read_npy(temp_file("t.npy", bytes.substr(0, bytes.size() - 3)));
  REQUIRE_FALSE(truncated.ok());
  CHECK(mentions(truncated.error(), "truncated"));
}

TEST_CASE("write_npy round trip") {
  Predictions p;
  p.rows = 2;
  p.cols = 3;
  p.two_d = true;
  p.values = {1, 2, 3, 4, 5, 6.5};
  const auto path = temp_file("w.npy", "");
  REQUIRE(write_npy(path, p).ok());
  auto back = read_predictions(path);
  REQUIRE(back.ok());
  CHECK(back->rows == 2);
  CHECK(back->cols == 3);
  CHECK(back->values == p.values);
}

TEST_CASE("CSV: one or more columns, optional header, errors name the line") {
  auto one = read_predictions(temp_file("a.csv", "0.1\n0.2\r\n0.3\n"));
  REQUIRE(one.ok());
  CHECK(one->rows == 3);
  CHECK_FALSE(one->two_d);
  auto many = read_predictions(temp_file("b.csv", "cat,dog\n0.1, 0.9\n0.7,0.3\n\n"));
  REQUIRE(many.ok());
  CHECK(many->rows == 2);
  CHECK(many->cols == 2);
  CHECK(many->two_d);
  CHECK(many->values == std::vector<double>{0.1, 0.9, 0.7, 0.3});
  auto ragged = read_predictions(temp_file("c.csv", "0.1,0.2\n0.3\n"));
  REQUIRE_FALSE(ragged.ok());
  CHECK(mentions(ragged.error(), "line 2: 1 columns, expected 2"));
  auto text = read_predictions(temp_file("d.csv", "score\n0.1\nabc\n"));
  REQUIRE_FALSE(text.ok());
  CHECK(mentions(text.error(), "line 3"));
  auto nan = read_predictions(temp_file("e.csv", "0.1\nnan\n"));
  REQUIRE_FALSE(nan.ok());
  CHECK(mentions(nan.error(), "NaN at row 1"));
  auto empty = read_predictions(temp_file("f.csv", "score\n"));
  REQUIRE_FALSE(empty.ok());
  CHECK(mentions(empty.error(), "no prediction rows"));
}
