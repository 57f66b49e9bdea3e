// core/eval_columns.hpp: labels, segment keys and query ids read from the eval set's columns and
// from hashed files, and every bad input as an error naming the field, the file, the line or
// record, and what was expected.

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>

#include "core/eval_columns.hpp"
#include "core/hashing.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;

namespace {

// An .npy file (format 1.0) of `descr` with these raw little-endian bytes.
std::string npy(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

template <class T>
std::string raw(std::initializer_list<T> values) {
  std::string bytes;
  for (T v : values)
    bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
  return bytes;
}

// An eval set of 5 records: id, label, feature; and a world of files next to a manifest.
struct World {
  test::TempDir dir{"reverify-eval-columns-test-"};
  std::string eval_text =
      "id,label,region\nr0,0,north\nr1,2,south\nr2,1,north\n\nr3,1,south\nr4,0,north\n";

  std::string path(const std::string& name) const { return (dir.path / name).string(); }
  std::string write(const std::string& name, const std::string& bytes) const {
    dir.write(name, bytes);
    return sha256_hex(bytes);
  }
  EvalSources sources() const {
    const std::string sha = write("eval.csv", eval_text);
    return EvalSources{path("manifest.json"), FileRef{"eval.csv", sha}};
  }
  RecordColumn file(const std::string& name, const std::string& bytes,
                    std::optional<std::string> column = std::nullopt) const {
    return RecordColumn{name, write(name, bytes), std::move(column)};
  }
};

RecordColumn eval_column(const std::string& name) {
  return RecordColumn{std::nullopt, std::nullopt, name};
}

ScoringSpec spec_of(ScoringTask task, RecordColumn labels) {
  ScoringSpec spec;
  spec.task = task;
  spec.labels = std::move(labels);
  return spec;
}

ScoringSpec multiclass(RecordColumn labels) {
  ScoringSpec spec = spec_of(ScoringTask::multiclass, std::move(labels));
  spec.classes = 3;
  return spec;
}

std::string error_of(const ScoringSpec& spec, const EvalSources& sources, std::size_t rows = 5,
                     ErrorCode code = ErrorCode::invalid_argument) {
  auto in = read_scoring_inputs(spec, sources, rows);
  REQUIRE_FALSE(in.ok());
  CHECK(in.error().code == code);
  return in.error().message;
}

}  // namespace

TEST_CASE("labels and segment keys from the eval set's columns, a query id file, in record order") {
  World w;
  ScoringSpec spec = multiclass(eval_column("label"));
  spec.segments = {SegmentKeySpec{"region", eval_column("region")},
                   SegmentKeySpec{"digit", eval_column("label")},
                   SegmentKeySpec{"size", w.file("size.txt", "10\n2\n10\n2\n10\n")}};
  auto in = read_scoring_inputs(spec, w.sources(), 5);
  REQUIRE_MESSAGE(in.ok(), in.error().message);
  CHECK(in->task == ScoringTask::multiclass);
  CHECK(in->classes == 3);
  CHECK(in->metrics == task_metrics(ScoringTask::multiclass));
  CHECK(in->labels == std::vector<double>{0, 2, 1, 1, 0});
  REQUIRE(in->segment_keys.size() == 3);
  const SegmentKey& region = in->segment_keys[0];
  CHECK(region.keys.values == std::vector<std::string>{"north", "south"});
  CHECK(region.keys.codes == std::vector<std::uint32_t>{0, 1, 0, 1, 0});
  CHECK(region.segment(1) == "region=south");
  // numeric values sort as numbers: 2 before 10
  CHECK(in->segment_keys[2].keys.values == std::vector<std::string>{"2", "10"});
  CHECK(in->segment_keys[1].segment(2) == "digit=2");
}

TEST_CASE("labels from .npy (integer and float dtypes) and from text with or without a header") {
  World w;
  const EvalSources sources{w.path("manifest.json"), std::nullopt};
  for (const auto& [name, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"int64.npy", npy("<i8", "(5,)", raw<std::int64_t>({0, 2, 1, 1, 0}))},
           {"uint8.npy", npy("|u1", "(5,)", raw<std::uint8_t>({0, 2, 1, 1, 0}))},
           {"column.npy", npy("<f8", "(5, 1)", raw<double>({0, 2, 1, 1, 0}))},
           {"headed.txt", "label\n0\n2\n1\n1\n0\n"},
           {"plain.csv", "0\n2.0\n1\n1\n0\n"}}) {
    CAPTURE(name);
    auto in = read_scoring_inputs(multiclass(w.file(name, bytes)), sources, 5);
    REQUIRE_MESSAGE(in.ok(), in.error().message);
    CHECK(in->labels == std::vector<double>{0, 2, 1, 1, 0});
  }
  // Key values from numbers: integers without a fraction, others in their shortest form.
  ScoringSpec spec = multiclass(w.file("l.txt", "0\n1\n2\n"));
  spec.segments = {
      SegmentKeySpec{"r", w.file("r.npy", npy("<f8", "(3,)", raw<double>({0.5, 3, 0.5})))}};
  auto in = read_scoring_inputs(spec, sources, 3);
  REQUIRE_MESSAGE(in.ok(), in.error().message);
  CHECK(in->segment_keys[0].keys.values == std::vector<std::string>{"0.5", "3"});
}

TEST_CASE("ranking: query ids from a named column of a CSV file, relevance grades as labels") {
  World w;
  ScoringSpec spec = spec_of(ScoringTask::ranking, w.file("grades.txt", "3\n0\n1.5\n0\n2\n"));
  spec.k = 3;
  spec.query = w.file("queries.csv", "qid,other\nq1,x\nq1,y\nq2,z\nq2,x\nq1,y\n", "qid");
  auto in = read_scoring_inputs(spec, w.sources(), 5);
  REQUIRE_MESSAGE(in.ok(), in.error().message);
  CHECK(in->k == 3);
  CHECK(in->labels == std::vector<double>{3, 0, 1.5, 0, 2});
  CHECK(in->queries->values == std::vector<std::string>{"q1", "q2"});
  CHECK(in->queries->codes == std::vector<std::uint32_t>{0, 0, 1, 1, 0});
}

TEST_CASE("every bad input is an error naming the field, the file and what was expected") {
  World w;
  const std::string eval = w.path("eval.csv");
  SUBCASE("a labels file whose length differs from the predictions' rows") {
    CHECK(error_of(multiclass(w.file("labels.txt", "0\n1\n2\n1\n")), w.sources()) ==
          "evaluation.scoring.labels: " + w.path("labels.txt") +
              ": 4 values, the predictions have 5 rows (one per eval record, in eval-set order)");
  }
  SUBCASE("a label outside the declared classes") {
    w.eval_text = "id,label\nr0,0\nr1,7\nr2,1\nr3,1\nr4,0\n";
    CHECK(error_of(multiclass(eval_column("label")), w.sources()) ==
          "evaluation.scoring.labels: " + eval +
              ": line 3 (record 1): 7 is not a label: must be an integer in 0..2 (the declared "
              "classes: 3)");
  }
  SUBCASE("a label that is not an integer, for classification") {
    CHECK(error_of(multiclass(w.file("l.npy", npy("<f8", "(5,)", raw<double>({0, 1, 1.5, 0, 0})))),
                   w.sources()) == "evaluation.scoring.labels: " + w.path("l.npy") +
                                       ": record 2: 1.5 is not a label: must be an integer in 0..2 "
                                       "(the declared classes: 3)");
  }
  SUBCASE("a binary label that is not 0 or 1") {
    CHECK(
        error_of(spec_of(ScoringTask::binary, w.file("l.txt", "0\n1\n-1\n0\n1\n")), w.sources()) ==
        "evaluation.scoring.labels: " + w.path("l.txt") +
            ": line 3 (record 2): -1 is not a label: must be 0 or 1 (task "
            "binary)");
  }
  SUBCASE("NaN and infinite labels") {
    CHECK(error_of(multiclass(w.file("l.npy", npy("<f8", "(5,)", raw<double>({0, 1, NAN, 0, 0})))),
                   w.sources()) == "evaluation.scoring.labels: " + w.path("l.npy") +
                                       ": record 2: NaN is not a label: must be a finite number");
    CHECK(error_of(spec_of(ScoringTask::regression, w.file("r.txt", "1.5\n2\ninf\n0\n1\n")),
                   w.sources()) == "evaluation.scoring.labels: " + w.path("r.txt") +
                                       ": line 3 (record 2): Inf is not a label: must be a finite "
                                       "number");
  }
  SUBCASE("a label that is not a number") {
    CHECK(error_of(multiclass(w.file("l.csv", "y,z\n0,a\ncat,b\n1,c\n1,d\n0,e\n", "y")),
                   w.sources()) == "evaluation.scoring.labels: " + w.path("l.csv") +
                                       ": line 3 (record 1): \"cat\" is not a number");
  }
  SUBCASE("a segment key file with missing records") {
    ScoringSpec spec = multiclass(eval_column("label"));
    spec.segments = {SegmentKeySpec{"region", eval_column("region")},
                     SegmentKeySpec{"radius", w.file("radius.txt", "low\nhigh\nlow\n")}};
    CHECK(error_of(spec, w.sources()) ==
          "evaluation.scoring.segments[1]: " + w.path("radius.txt") +
              ": 3 values, the predictions have 5 rows (one per eval record, in eval-set order)");
  }
  SUBCASE("an empty segment key") {
    w.eval_text = "id,label,region\nr0,0,north\nr1,2,\nr2,1,north\nr3,1,south\nr4,0,north\n";
    ScoringSpec spec = multiclass(eval_column("label"));
    spec.segments = {SegmentKeySpec{"region", eval_column("region")}};
    CHECK(error_of(spec, w.sources()) == "evaluation.scoring.segments[0]: " + eval +
                                             ": line 3 (record 1): empty value (every record needs "
                                             "one)");
  }
  SUBCASE("a column that does not exist") {
    ScoringSpec spec = multiclass(eval_column("label"));
    spec.segments = {SegmentKeySpec{"radius", eval_column("radius")}};
    CHECK(error_of(spec, w.sources()) == "evaluation.scoring.segments[0].column: " + eval +
                                             " has no column \"radius\" (its columns: id, label, "
                                             "region)");
  }
  SUBCASE("a labels file whose hash differs from the spec's") {
    RecordColumn labels = w.file("labels.txt", "0\n1\n2\n1\n0\n");
    w.write("labels.txt", "0\n1\n2\n2\n0\n");  // relabelled after release
    CHECK(error_of(multiclass(labels), w.sources(), 5, ErrorCode::input_drift) ==
          "evaluation.scoring.labels.sha256: " + w.path("labels.txt") + " hashes to " +
              sha256_hex("0\n1\n2\n2\n0\n") + ", the manifest records " + *labels.sha256 +
              " (the frozen file changed)");
  }
  SUBCASE("an eval set whose hash differs from evaluation.set's") {
    EvalSources sources = w.sources();
    sources.eval_set->sha256 = std::string(64, 'a');
    CHECK(error_of(multiclass(eval_column("label")), sources, 5, ErrorCode::input_drift) ==
          "evaluation.set.sha256: " + eval + " hashes to " + sha256_hex(w.eval_text) +
              ", the manifest records " + std::string(64, 'a') +
              " (the eval set changed since release)");
  }
  SUBCASE("a quoted field, a ragged line") {
    w.eval_text = "id,label\nr0,0\n\"r,1\",2\n";
    CHECK(error_of(multiclass(eval_column("label")), w.sources(), 2, ErrorCode::parse) ==
          "evaluation.scoring.labels: " + eval +
              ": line 3: quoted fields are not supported (a CSV field holds '\"')");
    w.eval_text = "id,label\nr0,0\nr1\n";
    CHECK(error_of(multiclass(eval_column("label")), w.sources(), 2, ErrorCode::parse) ==
          "evaluation.scoring.labels: " + eval + ": line 3: 1 fields, the header has 2");
  }
  SUBCASE("a file that is not there") {
    CHECK(error_of(multiclass(RecordColumn{"gone.npy", std::string(64, 'b'), std::nullopt}),
                   w.sources(), 5, ErrorCode::not_found)
              .starts_with("evaluation.scoring.labels: " + w.path("gone.npy") + ": "));
  }
  SUBCASE("an .npy array with a column name, or of two columns") {
    const std::string bytes = npy("<f8", "(5, 2)", raw<double>({0, 0, 1, 1, 2, 2, 1, 1, 0, 0}));
    CHECK(error_of(multiclass(w.file("l.npy", bytes, "label")), w.sources()) ==
          "evaluation.scoring.labels.column: " + w.path("l.npy") +
              " is an .npy array, which has no named columns");
    CHECK(error_of(multiclass(w.file("l.npy", bytes)), w.sources()) ==
          "evaluation.scoring.labels: " + w.path("l.npy") +
              ": 5 x 2 array, expected one value per record (1-D, or 2-D with one column)");
  }
  SUBCASE("a NaN segment key from .npy") {
    ScoringSpec spec = multiclass(eval_column("label"));
    spec.segments = {
        SegmentKeySpec{"r", w.file("r.npy", npy("<f4", "(5,)", raw<float>({1, 2, NAN, 1, 2})))}};
    CHECK(error_of(spec, w.sources()) == "evaluation.scoring.segments[0]: " + w.path("r.npy") +
                                             ": record 2: NaN is not a key (must be finite)");
  }
  SUBCASE("a column of an eval set that is a folder") {
    w.write("eval/part-0.csv", w.eval_text);
    const EvalSources folder{w.path("manifest.json"), FileRef{"eval", std::string(64, 'a')}};
    CHECK(error_of(multiclass(eval_column("label")), folder) ==
          "evaluation.scoring.labels.column: names a column of the eval set, but the eval set " +
              w.path("eval") + " is a folder (a column needs a CSV file)");
  }
  SUBCASE("a column of the eval set without evaluation.set") {
    CHECK(error_of(multiclass(eval_column("label")), EvalSources{w.path("m.json"), std::nullopt}) ==
          "evaluation.scoring.labels.column: names a column of the eval set, but evaluation.set "
          "is missing");
  }
}

TEST_CASE("check_csv_column finds a column on the header row, or lists the columns") {
  World w;
  w.sources();
  CHECK(check_csv_column(w.path("eval.csv"), "region").ok());
  const Status missing = check_csv_column(w.path("eval.csv"), "lable");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message ==
        w.path("eval.csv") + " has no column \"lable\" (its columns: id, label, region)");
  w.write("wide.csv", "a,b,c,d,e,f,g,h,i,j\n1,2,3,4,5,6,7,8,9,10\n");
  CHECK(check_csv_column(w.path("wide.csv"), "z").error().message ==
        w.path("wide.csv") +
            " has no column \"z\" (its columns: a, b, c, d, e, f, g, h, ... 10 "
            "in all)");
}
