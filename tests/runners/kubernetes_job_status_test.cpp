#include <doctest/doctest.h>

#include <vector>

#include "runners/kubernetes_job_status.hpp"

using namespace reverify;
using nlohmann::json;

namespace {

json job_with(json conditions) {
  return {{"status", {{"conditions", std::move(conditions)}}}};
}

json pod(const std::string& name, const std::string& created, json conditions, json state) {
  return {
      {"metadata", {{"name", name}, {"creationTimestamp", created}}},
      {"status",
       {{"conditions", std::move(conditions)},
        {"containerStatuses", json::array({{{"name", "rebuild"}, {"state", std::move(state)}}})}}}};
}

}  // namespace

TEST_CASE("watch events are split on newlines whatever the chunking") {
  const std::string stream = R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})"
                             "\n"
                             R"({"type":"MODIFIED","object":{"metadata":{"name":"b"}}})"
                             "\n"
                             R"({"kind":"Status","code":410,"message":"too old"})";
  for (std::size_t chunk : {1u, 7u, 1000u}) {
    CAPTURE(chunk);
    WatchStreamParser parser;
    std::vector<json> events;
    auto collect = [&](const json& e) {
      events.push_back(e);
      return true;
    };
    for (std::size_t i = 0; i < stream.size(); i += chunk)
      parser.feed(std::string_view(stream).substr(i, chunk), collect);
    CHECK(events.size() == 2);  // the last line has no newline yet
    parser.feed("\n", collect);
    REQUIRE(events.size() == 3);
    CHECK(events[1]["object"]["metadata"]["name"] == "b");
    CHECK(events[2]["type"] ==
          "ERROR");  // a bare Status (an error response) reads as an ERROR event
    CHECK(events[2]["object"]["code"] == 410);
  }
}

TEST_CASE("the parser stops when asked and reports garbage as an ERROR event") {
  WatchStreamParser parser;
  int seen = 0;
  CHECK_FALSE(parser.feed("{\"type\":\"ADDED\"}\n{\"type\":\"ADDED\"}\n",
                          [&](const json&) { return ++seen < 1; }));
  CHECK(seen == 1);
  json last;
  parser.feed("not json\n", [&](const json& e) {
    last = e;
    return true;
  });
  CHECK(last["type"] == "ERROR");
  CHECK(last["object"]["message"].get<std::string>().find("not json") != std::string::npos);
}

TEST_CASE("Job conditions map to outcomes") {
  CHECK(classify_job(json::object()).phase == JobPhase::running);
  CHECK(classify_job(job_with({{{"type", "Complete"}, {"status", "True"}}})).phase ==
        JobPhase::succeeded);
  // FailureTarget comes before the pods are gone: not terminal yet.
  CHECK(classify_job(job_with({{{"type", "FailureTarget"}, {"status", "True"}}})).phase ==
        JobPhase::running);
  CHECK(classify_job(job_with({{{"type", "Complete"}, {"status", "False"}}})).phase ==
        JobPhase::running);
  auto deadline = classify_job(job_with({{{"type", "Failed"},
                                          {"status", "True"},
                                          {"reason", "DeadlineExceeded"},
                                          {"message", "too long"}}}));
  CHECK(deadline.phase == JobPhase::failed);
  CHECK(deadline.deadline_exceeded());
  CHECK(deadline.message == "too long");
  auto backoff = classify_job(
      job_with({{{"type", "Failed"}, {"status", "True"}, {"reason", "BackoffLimitExceeded"}}}));
  CHECK(backoff.phase == JobPhase::failed);
  CHECK_FALSE(backoff.deadline_exceeded());
}

TEST_CASE("the final pod is the newest one that was not disrupted") {
  const json disrupted = json::array({{{"type", "DisruptionTarget"}, {"status", "True"}}});
  const json done = {{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}};
  CHECK_FALSE(final_pod(json{{"items", json::array()}}).has_value());
  json list = {
      {"items", json::array({pod("p2", "2026-11-29T00:00:02Z", json::array(), done),
                             pod("p1", "2026-11-29T00:00:01Z", disrupted,
                                 {{"terminated", {{"exitCode", 143}}}}),
                             pod("p3", "2026-11-29T00:00:03Z", disrupted, json::object())})}};
  auto chosen = final_pod(list);
  REQUIRE(chosen);
  CHECK((*chosen)["metadata"]["name"] == "p2");
  auto end = container_end(*chosen, "rebuild");
  REQUIRE(end);
  CHECK(end->exit_code == 0);
  CHECK(end->reason == "Completed");
  CHECK_FALSE(end->run_seconds.has_value());  // no startedAt / finishedAt
  CHECK_FALSE(container_end(*chosen, "other").has_value());
  // Only disrupted pods: the newest of them.
  json only_disrupted = {
      {"items", json::array({pod("p1", "2026-11-29T00:00:01Z", disrupted, json::object())})}};
  CHECK((*final_pod(only_disrupted))["metadata"]["name"] == "p1");
}

TEST_CASE("pods that can never start are provision failures; pulling and pending are not") {
  auto waiting = [](const std::string& reason) {
    return pod("p", "t", json::array(),
               {{"waiting", {{"reason", reason}, {"message", "manifest unknown"}}}});
  };
  auto failure = provision_failure(waiting("ImagePullBackOff"), "rebuild");
  REQUIRE(failure);
  CHECK(*failure == "ImagePullBackOff: manifest unknown");
  CHECK(provision_failure(waiting("InvalidImageName"), "rebuild"));
  CHECK_FALSE(provision_failure(waiting("ContainerCreating"), "rebuild"));
  CHECK_FALSE(provision_failure(waiting("ErrImagePull"), "rebuild"));  // kubelet retries once more
  CHECK_FALSE(
      provision_failure(pod("p", "t", json::array(), {{"running", json::object()}}), "rebuild"));
}

TEST_CASE("status_message reads a Status body or shortens anything else") {
  CHECK(status_message(R"({"kind":"Status","message":"jobs.batch \"x\" already exists"})") ==
        "jobs.batch \"x\" already exists");
  CHECK(status_message("plain text") == "plain text");
  CHECK(status_message(std::string(1000, 'x')).size() == 303);
}

TEST_CASE("a terminated container's own run time, in the API's whole seconds") {
  auto ended = [](json terminated) {
    return pod("p", "2026-11-29T00:00:01Z", json::array(), {{"terminated", terminated}});
  };
  auto end = container_end(ended({{"exitCode", 0},
                                  {"startedAt", "2026-11-29T10:00:05Z"},
                                  {"finishedAt", "2026-11-29T10:02:17Z"}}),
                           "rebuild");
  REQUIRE(end);
  CHECK(end->run_seconds == 132.0);
  // Missing, unreadable or backwards times: no run time rather than a wrong one.
  for (const json& bad :
       {json{{"startedAt", "2026-11-29T10:00:05Z"}},
        json{{"startedAt", "yesterday"}, {"finishedAt", "2026-11-29T10:00:05Z"}},
        json{{"startedAt", 5}, {"finishedAt", "2026-11-29T10:00:05Z"}},
        json{{"startedAt", "2026-11-29T10:00:05Z"}, {"finishedAt", "2026-11-29T10:00:04Z"}}}) {
    INFO(bad.dump());
    auto without = container_end(ended(bad), "rebuild");
    REQUIRE(without);
    CHECK_FALSE(without->run_seconds.has_value());
  }
}
