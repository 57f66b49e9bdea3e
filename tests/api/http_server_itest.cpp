// The HTTP listener on several io_contexts, each run by one thread (api/http_server.hpp): new
// connections go to them in turn, so concurrent connections are served on different threads;
// a worker that has no connection yet keeps running until stop(), and stop() lets every run()
// return. Real sockets on 127.0.0.1.

#include <doctest/doctest.h>

#include <boost/asio/connect.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "api/http_server.hpp"

using namespace reverify;
namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

namespace {

// A keep-alive client connection that sends GET requests one at a time; an answer that does not
// come within 10 s fails the test instead of hanging it.
class Client {
 public:
  explicit Client(std::uint16_t port) : stream_(io_) {
    stream_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  }
  // The body of the answer to GET `target`.
  std::string get(const std::string& target) {
    http::request<http::empty_body> request(http::verb::get, target, 11);
    request.set(http::field::host, "127.0.0.1");
    http::response<http::string_body> response;
    boost::beast::error_code error;
    stream_.expires_after(std::chrono::seconds(10));
    http::async_write(stream_, request, [&](boost::beast::error_code ec, std::size_t) {
      if (ec) {
        error = ec;
        return;
      }
      http::async_read(stream_, buffer_, response,
                       [&](boost::beast::error_code read_ec, std::size_t) { error = read_ec; });
    });
    io_.restart();
    io_.run();
    REQUIRE_MESSAGE(!error, "GET " << target << ": " << error.message());
    CHECK(response.result() == http::status::ok);
    return response.body();
  }

 private:
  net::io_context io_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
};

}  // namespace

TEST_CASE("http server: connections go to the workers in turn, each served by its thread") {
  constexpr unsigned kWorkers = 3;
  std::vector<std::unique_ptr<net::io_context>> workers;
  std::vector<net::io_context*> raw;
  for (unsigned i = 0; i < kWorkers; ++i) {
    workers.push_back(std::make_unique<net::io_context>(1));
    raw.push_back(workers.back().get());
  }
  std::mutex mutex;
  std::map<std::string, std::set<std::thread::id>> threads_by_target;
  // Declared before the server: when a check fails, the server stops first, then they join.
  std::vector<std::jthread> threads;
  HttpServer server(raw, ApiConfig{}, [&](const ApiRequest& request, ApiReply reply) {
    {
      std::lock_guard lock(mutex);
      threads_by_target[std::string(request.target())].insert(std::this_thread::get_id());
    }
    ApiResponse response(http::status::ok, request.version());
    response.keep_alive(request.keep_alive());
    response.body() = std::string(request.target());
    response.prepare_payload();
    reply(std::move(response));
  });
  auto bound = server.listen("127.0.0.1", 0);
  REQUIRE(bound.ok());
  for (auto& worker : workers)
    threads.emplace_back([&worker] { worker->run(); });
  // Time enough for a worker with nothing to do to have returned from run(), if it could.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  {
    std::vector<std::unique_ptr<Client>> clients;
    for (unsigned i = 0; i < kWorkers; ++i)
      clients.push_back(std::make_unique<Client>(bound->port()));
    for (int round = 0; round < 3; ++round) {
      for (unsigned i = 0; i < kWorkers; ++i) {
        const std::string target = "/connection/" + std::to_string(i);
        CHECK(clients[i]->get(target) == target);
      }
    }
  }
  std::set<std::thread::id> serving;
  {
    std::lock_guard lock(mutex);
    REQUIRE(threads_by_target.size() == kWorkers);
    for (const auto& [target, ids] : threads_by_target) {
      CAPTURE(target);
      CHECK(ids.size() == 1);  // a connection stays on its worker
      serving.insert(ids.begin(), ids.end());
    }
  }
  CHECK(serving.size() == kWorkers);  // and each worker served one of them
  for (const auto& thread : threads)
    CHECK(serving.count(thread.get_id()) == 1);

  server.stop();
  for (auto& thread : threads)
    thread.join();  // every run() returns once the server is stopped
}
