#pragma once
// The HTTP listener (Boost.Beast on the daemon's one io_context): accepts connections, reads one
// request at a time per connection with limits, hands it to a plain handler function and writes
// the response. Limits (ApiConfig): header bytes (431), body bytes (413), whole-request read
// time (the connection is closed), malformed requests (400). Keep-alive is honoured.
//
// Thread-safety: construct, listen and stop on the io_context's thread (or before run()).

#include <functional>
#include <memory>
#include <set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "core/result.hpp"
#include "daemon/config.hpp"
#include "daemon/http_api.hpp"

namespace reverify {

class HttpSession;

class HttpServer {
 public:
  using Handler = std::function<ApiResponse(const ApiRequest&)>;

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

  ApiConfig limits_;
  Handler handler_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::set<HttpSession*> sessions_;
  bool stopped_ = false;
};

}  // namespace reverify
