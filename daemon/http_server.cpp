#include "daemon/http_server.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <optional>

namespace reverify {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, HttpServer& server)
      : stream_(std::move(socket)), server_(server) {}
  ~HttpSession() {
    std::lock_guard lock(server_.sessions_mutex_);
    server_.sessions_.erase(this);
  }

  void start() {
    {
      std::lock_guard lock(server_.sessions_mutex_);
      server_.sessions_.emplace(this, weak_from_this());
    }
    read();
  }
  // From any thread: the close runs on the connection's strand.
  void close_soon() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->close(); });
  }

 private:
  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  void read() {
    parser_.emplace();
    parser_->header_limit(std::uint32_t(server_.limits_.max_header_bytes));
    parser_->body_limit(server_.limits_.max_body_bytes);
    // The whole request (headers and body) must arrive within the limit: slow clients are cut.
    stream_.expires_after(std::chrono::milliseconds(server_.limits_.request_timeout_ms));
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == net::error::operation_aborted || server_.stopped_) {
      return close();
    }
    if (ec)
      return reject(ec);
    ApiResponse response;
    try {
      response = server_.handler_(parser_->get());
    } catch (const std::exception&) {
      // A bug in a handler: answer 500, keep serving everyone else.
      response = ApiResponse(http::status::internal_server_error, parser_->get().version());
      response.set(http::field::content_type, "application/json");
      response.body() = "{\"error\": \"internal error\"}\n";
      response.prepare_payload();
    }
    write(std::move(response));
  }

  // Malformed or over-limit requests get a 4xx and the connection is closed (the rest of the
  // stream cannot be trusted to be framed correctly).
  void reject(beast::error_code ec) {
    http::status status = http::status::bad_request;
    std::string why = "malformed request";
    if (ec == http::error::header_limit) {
      status = http::status::request_header_fields_too_large;
      why = "request header too large";
    } else if (ec == http::error::body_limit) {
      status = http::status::payload_too_large;
      why = "request body too large";
    }
    ApiResponse response(status, 11);
    response.set(http::field::content_type, "application/json");
    response.set(http::field::server, "reverifyd");
    response.keep_alive(false);
    response.body() = "{\"error\": \"" + why + "\"}\n";
    response.prepare_payload();
    write(std::move(response));
  }

  void write(ApiResponse response) {
    response_ = std::make_shared<ApiResponse>(std::move(response));
    stream_.expires_after(std::chrono::milliseconds(server_.limits_.request_timeout_ms));
    http::async_write(stream_, *response_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        const bool keep = self->response_->keep_alive();
                        self->response_.reset();
                        if (ec || !keep || self->server_.stopped_)
                          return self->close();
                        self->read();
                      });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<ApiResponse> response_;
  HttpServer& server_;
};

HttpServer::HttpServer(net::io_context& io, ApiConfig limits, Handler handler)
    : limits_(std::move(limits)),
      handler_(std::move(handler)),
      io_(io),
      acceptor_(net::make_strand(io)) {}

HttpServer::~HttpServer() {
  stop();
}

Result<tcp::endpoint> HttpServer::listen(const std::string& address, std::uint16_t port) {
  beast::error_code ec;
  auto ip = net::ip::make_address(address, ec);
  if (ec) {
    return make_error(ErrorCode::invalid_argument,
                      "api.address: not an IP address: \"" + address + "\"");
  }
  tcp::endpoint endpoint(ip, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec)
    acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec)
    acceptor_.bind(endpoint, ec);
  if (!ec)
    acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return make_error(ErrorCode::io, "cannot listen on " + address + ":" + std::to_string(port) +
                                         ": " + ec.message());
  }
  auto bound = acceptor_.local_endpoint(ec);
  accept();
  return bound;
}

void HttpServer::accept() {
  // Each connection gets a strand of its own: its operations never run concurrently, while
  // different connections are served by every thread that runs the io_context.
  acceptor_.async_accept(net::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
    if (stopped_ || !acceptor_.is_open())
      return;
    if (!ec) {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      std::make_shared<HttpSession>(std::move(socket), *this)->start();
    }
    accept();
  });
}

void HttpServer::stop() {
  if (stopped_.exchange(true))
    return;
  net::dispatch(acceptor_.get_executor(), [this] {
    beast::error_code ec;
    acceptor_.close(ec);
  });
  std::vector<std::shared_ptr<HttpSession>> open;
  {
    std::lock_guard lock(sessions_mutex_);
    for (const auto& [raw, weak] : sessions_) {
      if (auto session = weak.lock())
        open.push_back(std::move(session));
    }
  }
  for (const auto& session : open)
    session->close_soon();
}

}  // namespace reverify
