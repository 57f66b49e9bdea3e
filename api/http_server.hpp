#pragma once
// The HTTP listener (Boost.Beast on the io_context it is given; reverifyd's API io_context, run
// by one thread per core): accepts connections, reads one request at a time per connection with
// limits, hands it to a plain handler function and writes the response. Limits (ApiConfig):
// header bytes (431), body bytes (413), whole-request read time and response write time (the
// connection is closed; checked by one sweep timer, so within a quarter of the limit, at most a
// second, after it), malformed requests (400). Keep-alive is honoured.
//
// The handler gets each request with a reply function: it answers at once (every GET) or keeps
// the reply and calls it later, exactly once, from any thread (a POST the daemon's loop records
// first); the response is written on the connection's strand. A reply that never comes is cut
// like a slow request (the connection is closed at the request deadline).
//
// Thread-safety: the io_context may be run by several threads. Each connection lives on its own
// strand and the acceptor on another, so the handler is called concurrently for different
// connections: it must be thread-safe. stop() may be called from any thread.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

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

  HttpServer(boost::asio::io_context& io, ApiConfig limits, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts accepting; port 0 picks a free port. Returns the bound endpoint.
  Result<boost::asio::ip::tcp::endpoint> listen(const std::string& address, std::uint16_t port);
  // Stops accepting and closes every open connection, so io_context::run() can return.
  void stop();

 private:
  friend class HttpSession;
  void accept();
  void sweep();  // closes connections past their deadline, then re-arms
  std::vector<std::shared_ptr<HttpSession>> live_sessions();

  ApiConfig limits_;
  Handler handler_;
  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;  // on a strand of its own
  boost::asio::steady_timer sweep_timer_;    // on the acceptor's strand
  std::mutex sessions_mutex_;
  std::map<HttpSession*, std::weak_ptr<HttpSession>> sessions_;
  std::atomic<bool> stopped_{false};
};

}  // namespace reverify
