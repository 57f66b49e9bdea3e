// Registry sources under a platform condition (Store::open_source_condition and its kin): opened
// once with its alert in the outbox, whoever asks again; closed once with its resolve.

#include <doctest/doctest.h>

#include "store/store.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;

namespace {

PageToRecord alert(PageAction action) {
  PageToRecord page;
  page.event.dedup_key = "reverify/source/local";
  page.event.action = action;
  page.event.model = "source:local";
  page.event.version = "inputs-moved";
  page.senders = {"sink"};
  return page;
}

}  // namespace

TEST_CASE("a source's condition opens once with one alert and closes once with its resolve") {
  test::TempDir dir;
  auto opened = Store::open(dir.path / "reverify.db", [] { return UnixSeconds(1'800'000'000); });
  REQUIRE(opened.ok());
  Store& store = **opened;
  ModelVersionRow row;
  row.model = "m";
  row.version = "1";
  row.source = "local";
  row.location = "/reg/m/1/manifest.json";
  REQUIRE(store.upsert_model_version(row).ok());
  const auto id = store.enqueue(QueuedVerification{"m", "1"});
  REQUIRE(id.ok());

  const SourceConditionRow condition{"local", SourceCondition::inputs_moved, 1'800'000'000, 3,
                                     *id,     "every version misses inputs"};
  CHECK(*store.open_source_condition(condition, alert(PageAction::trigger)) == true);
  CHECK(*store.open_source_condition(condition, alert(PageAction::trigger)) == false);
  auto pending = store.pending(10);
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 1);
  CHECK(pending->front().event.action == PageAction::trigger);
  auto listed = store.source_conditions();
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 1);
  CHECK(listed->front().condition == SourceCondition::inputs_moved);
  CHECK(listed->front().versions == 3);
  CHECK(store.source_condition("other")->has_value() == false);

  CHECK(*store.close_source_condition("local", *id, alert(PageAction::resolve)) == true);
  CHECK(*store.close_source_condition("local", *id, alert(PageAction::resolve)) == false);
  CHECK(store.source_conditions()->empty());
  CHECK(store.delivery_counts()->pending == 2);  // the trigger and one resolve
}
