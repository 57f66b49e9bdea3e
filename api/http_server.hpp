#pragma once
// The HTTP listener (Boost.Beast on the io_contexts it is given; reverifyd gives one per core,
// each run by one thread of its own, as nginx runs one event loop a worker): accepts connections
// on the first and hands them to the io_contexts in turn, reads one request at a time per
// connection with limits, hands it to a plain handler function and writes the response. Limits
// (ApiConfig): header bytes (431), body bytes (413), whole-request read time and response write
// time (the connection is closed; checked by one sweep timer, so within a quarter of the limit, at
// most a second, after it), malformed requests (400). Keep-alive is honoured.
//
// The handler gets each request with a reply function: it answers at once (every GET) or keeps
// the reply and calls it later, exactly once, from any thread (a POST the daemon's loop records
// first); the response is written on the connection's io_context. A reply that never comes is cut
// like a slow request (the connection is closed at the request deadline).
//
// Thread-safety: each io_context must be run by one thread at a time (a connection and the
// acceptor need no strand: their io_context's thread is one); different io_contexts run at once,
// so the handler is called concurrently for connections on different ones: it must be
// thread-safe. stop() may be called from any thread. Why no shared io_context with a strand per
// connection: its threads hand every completion to one another through one queue and wake each
// other up, which cost about a fifth of the gate's requests/s (docs/benchmarks.md "Which targets
// are met").

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "api/http_api.hpp"
#include "core/result.hpp"
#include "settings/config.hpp"

namespace reverify {

class HttpSession;

class HttpServer {
 public:
  using Handler = std::function<void(const ApiRequest&, ApiReply reply)>;

  // `workers` is not empty; the acceptor and the deadline sweep run on the first.
  HttpServer(std::vector<boost::asio::io_context*> workers, ApiConfig limits, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts accepting; port 0 picks a free port. Returns the bound endpoint.
  Result<boost::asio::ip::tcp::endpoint> listen(const std::string& address, std::uint16_t port);
  // Stops accepting and closes every open connection, so each worker's run() can return.
  void stop();

 private:
  friend class HttpSession;
  void accept();
  void sweep();  // closes connections past their deadline, then re-arms
  std::vector<std::shared_ptr<HttpSession>> live_sessions();

  ApiConfig limits_;
  Handler handler_;
  std::vector<boost::asio::io_context*> workers_;
  // Keeps every worker's run() going while it has no connection, until stop().
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> running_;
  std::size_t next_worker_ = 0;              // the next connection's; on the first worker
  boost::asio::ip::tcp::acceptor acceptor_;  // on the first worker
  boost::asio::steady_timer sweep_timer_;    // on the first worker
  std::mutex sessions_mutex_;
  std::map<HttpSession*, std::weak_ptr<HttpSession>> sessions_;
  std::atomic<bool> stopped_{false};
};

}  // namespace reverify
