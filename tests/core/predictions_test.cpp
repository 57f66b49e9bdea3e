#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <span>
#include <vector>

#include <sys/wait.h>
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

namespace {

// An .npy file as numpy writes it (format 1.0, header padded to 64 bytes), of raw data bytes.
std::string npy_bytes(const std::string& descr, const std::string& shape, const std::string& data,
                      const std::string& fortran = "False") {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 0xff) +
         static_cast<char>(header.size() >> 8) + header + data;
}

template <class T>
std::string raw_bytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

}  // namespace

TEST_CASE("npy read straight into the values equals the values, f8 and f4, 1-D and 2-D") {
  // Large enough for storage on 2 MiB pages and for f4's several widening reads.
  const std::size_t rows = 100003;
  std::vector<double> doubles(rows * 3);
  std::vector<float> floats(rows * 3);
  for (std::size_t i = 0; i < doubles.size(); ++i) {
    doubles[i] = std::ldexp(static_cast<double>((i * 2654435761u) % 1000003), -20) - 0.3;
    floats[i] = static_cast<float>(doubles[i]);
  }
  const std::vector<double> widened(floats.begin(), floats.end());
  struct Case {
    const char* descr;
    std::string shape;
    std::string data;
    const std::vector<double>* expected;
    std::size_t cols;
  };
  const std::string n = std::to_string(rows * 3), r = std::to_string(rows);
  for (const Case& c : {Case{"<f8", "(" + n + ",)", raw_bytes(doubles), &doubles, 1},
                        Case{"<f8", "(" + r + ", 3)", raw_bytes(doubles), &doubles, 3},
                        Case{"<f4", "(" + n + ",)", raw_bytes(floats), &widened, 1},
                        Case{"<f4", "(" + r + ", 3)", raw_bytes(floats), &widened, 3}}) {
    CAPTURE(c.descr);
    CAPTURE(c.shape);
    const std::string bytes = npy_bytes(c.descr, c.shape, c.data);
    const auto path = temp_file("big.npy", bytes);
    auto read = read_npy(path);
    REQUIRE(read.ok());
    CHECK(read->values == *c.expected);
    CHECK(read->cols == c.cols);
    CHECK(read->rows == c.expected->size() / c.cols);
    CHECK(read->two_d == (c.cols == 3));
    // The in-memory parser agrees.
    auto parsed = parse_npy(std::as_bytes(std::span(bytes.data(), bytes.size())), "big.npy");
    REQUIRE(parsed.ok());
    CHECK(parsed->values == read->values);
    // So does the view in place (mapped for <f8, read and widened for <f4).
    auto viewed = view_predictions(path);
    REQUIRE(viewed.ok());
    CHECK(std::equal(viewed->view().begin(), viewed->view().end(), c.expected->begin(),
                     c.expected->end()));
    CHECK(viewed->rows == read->rows);
    CHECK(viewed->cols == read->cols);
    CHECK(viewed->two_d == read->two_d);
  }
  // A value that is not finite deep in the array is found where it is.
  auto with_nan = doubles;
  with_nan[3 * 77777 + 2] = std::nan("");
  auto nan =
      read_npy(temp_file("nan_big.npy", npy_bytes("<f8", "(" + r + ", 3)", raw_bytes(with_nan))));
  REQUIRE_FALSE(nan.ok());
  CHECK(mentions(nan.error(), "NaN at row 77777, column 2"));
  auto nan_view = view_predictions(temp_dir.path / "nan_big.npy");
  REQUIRE_FALSE(nan_view.ok());
  CHECK(nan_view.error().message == nan.error().message);
  // Fortran order and a data section shorter than the shape are refused.
  auto fortran = read_npy(
      temp_file("f.npy", npy_bytes("<f8", "(4, 2)", raw_bytes(std::vector<double>(8)), "True")));
  REQUIRE_FALSE(fortran.ok());
  CHECK(mentions(fortran.error(), "Fortran"));
  auto fortran_view = view_predictions(temp_dir.path / "f.npy");
  REQUIRE_FALSE(fortran_view.ok());
  CHECK(mentions(fortran_view.error(), "Fortran"));
  auto short_data =
      read_npy(temp_file("s.npy", npy_bytes("<f4", "(" + r + ", 3)", raw_bytes(floats).substr(4))));
  REQUIRE_FALSE(short_data.ok());
  CHECK(mentions(short_data.error(), "truncated: shape"));
  auto header_only = read_npy(temp_file("h.npy", npy_bytes("<f8", "(2,)", "").substr(0, 40)));
  REQUIRE_FALSE(header_only.ok());
  CHECK(mentions(header_only.error(), "truncated .npy header"));
}

TEST_CASE("a view of a CSV file and of a missing file") {
  auto csv = view_predictions(temp_file("v.csv", "a,b\n0.1,0.9\n0.7,0.3\n"));
  REQUIRE(csv.ok());
  CHECK(csv->rows == 2);
  CHECK(csv->cols == 2);
  CHECK(std::vector<double>(csv->view().begin(), csv->view().end()) ==
        std::vector<double>{0.1, 0.9, 0.7, 0.3});
  auto missing = view_predictions(fixture("does_not_exist.npy"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::io);
}

TEST_CASE("a mapped view whose file shrinks ends the process with a message, not a core dump") {
  Predictions p;
  p.rows = 1 << 20;
  p.values.assign(p.rows, 0.5);
  const auto path = temp_file("shrinks.npy", "");
  REQUIRE(write_npy(path, p).ok());
  int err[2];
  REQUIRE(::pipe(err) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::dup2(err[1], STDERR_FILENO);
    auto view = view_predictions(path);
    if (!view.ok() || ::truncate(path.c_str(), 4096) != 0)
      ::_exit(3);
    double sum = 0;
    for (const double v : view->view())
      sum += v;
    ::_exit(sum > 0 ? 4 : 5);  // not reached: the read past the new end faults
  }
  ::close(err[1]);
  std::string message;
  char chunk[256];
  for (ssize_t got; (got = ::read(err[0], chunk, sizeof chunk)) > 0;)
    message.append(chunk, static_cast<std::size_t>(got));
  ::close(err[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(message == path.string() + ": the file shrank while it was being read\n");
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
