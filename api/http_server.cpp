#include "api/http_server.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <optional>

namespace reverify {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// The status line, the fields and the body in one buffer, written with one send: cheaper than
// Beast's serializer, which walks the fields as a chain of buffer views on every write. `out` is
// the connection's buffer, reused: a keep-alive connection allocates it once.
void serialize(const ApiResponse& response, std::string& out) {
  const auto append = [](std::string& to, beast::string_view text) {
    to.append(text.data(), text.size());
  };
  out.clear();
  out.reserve(256 + response.body().size());
  out += response.version() == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(response.result_int());
  out += ' ';
  append(out, response.reason());
  out += "\r\n";
  for (const auto& field : response) {
    append(out, field.name_string());
    out += ": ";
    append(out, field.value());
    out += "\r\n";
  }
  out += "\r\n";
  out += response.body();
}

}  // namespace

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, HttpServer& server)
      : socket_(std::move(socket)), server_(server) {}
  ~HttpSession() {
    std::lock_guard lock(server_.sessions_mutex_);
    server_.sessions_.erase(this);
  }

  void start() {
    {
      std::lock_guard lock(server_.sessions_mutex_);
      server_.sessions_.emplace(this, weak_from_this());
    }
    // Called on the acceptor's thread: the first read starts on the connection's io_context,
    // like everything else that touches the socket (a close from stop() included).
    net::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->read(); });
  }
  // From any thread: the close runs on the connection's io_context.
  void close_soon() {
    net::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->close(); });
  }
  // From any thread: whether the read or write in progress has run past its deadline.
  bool overdue(Clock::time_point now) const {
    return deadline_.load(std::memory_order_relaxed) < now.time_since_epoch().count();
  }

 private:
  void close() {
    beast::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

  // The whole request (headers and body), and then the whole response, must pass within the
  // limit: the server's sweep closes connections whose deadline has gone by.
  void set_deadline() {
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(server_.limits_.request_timeout_ms);
    deadline_.store(deadline.time_since_epoch().count(), std::memory_order_relaxed);
  }

  void read() {
    parser_.emplace();
    parser_->header_limit(std::uint32_t(server_.limits_.max_header_bytes));
    parser_->body_limit(server_.limits_.max_body_bytes);
    set_deadline();
    http::async_read(
        socket_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == net::error::operation_aborted ||
        ec == net::error::bad_descriptor || server_.stopped_) {
      return close();
    }
    if (ec)
      return reject(ec);
    // The deadline now bounds the handler too: a reply that never comes is cut like a slow read.
    set_deadline();
    const unsigned version = parser_->get().version();
    try {
      server_.handler_(parser_->get(), [self = shared_from_this()](ApiResponse response) {
        // On the connection's io_context: at once when called there (a synchronous answer).
        net::dispatch(self->socket_.get_executor(),
                      [self, response = std::move(response)] { self->write(response); });
      });
    } catch (const std::exception&) {
      // A bug in a handler: answer 500, keep serving everyone else.
      ApiResponse response(http::status::internal_server_error, version);
      response.set(http::field::server, server_header());
      response.set(http::field::content_type, "application/json");
      response.body() = "{\"error\": \"internal error\"}\n";
      response.prepare_payload();
      write(response);
    }
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
    response.set(http::field::server, server_header());
    response.keep_alive(false);
    response.body() = "{\"error\": \"" + why + "\"}\n";
    response.prepare_payload();
    write(response);
  }

  void write(const ApiResponse& response) {
    keep_alive_ = response.keep_alive();
    serialize(response, out_);
    set_deadline();
    net::async_write(socket_, net::buffer(out_),
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec || !self->keep_alive_ || self->server_.stopped_)
                         return self->close();
                       self->read();
                     });
  }

  tcp::socket socket_;  // its executor is the connection's io_context
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string out_;
  bool keep_alive_ = false;
  std::atomic<Clock::rep> deadline_{Clock::time_point::max().time_since_epoch().count()};
  HttpServer& server_;
};

HttpServer::HttpServer(std::vector<net::io_context*> workers, ApiConfig limits, Handler handler)
    : limits_(std::move(limits)),
      handler_(std::move(handler)),
      workers_(std::move(workers)),
      acceptor_(*workers_.at(0)),
      sweep_timer_(*workers_.at(0)) {
  for (auto* worker : workers_)
    running_.push_back(net::make_work_guard(*worker));
}

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
  sweep();
  return bound;
}

void HttpServer::accept() {
  // The connections go to the io_contexts in turn: each is served by one thread, and every
  // thread serves an equal share.
  auto& worker = *workers_[next_worker_];
  next_worker_ = (next_worker_ + 1) % workers_.size();
  acceptor_.async_accept(worker, [this](beast::error_code ec, tcp::socket socket) {
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

// One timer for all connections, instead of arming and cancelling a timer on every read and
// write: a request is cut at most a quarter of the limit (or a second) after its deadline.
void HttpServer::sweep() {
  const auto period = std::clamp(std::chrono::milliseconds(limits_.request_timeout_ms / 4),
                                 std::chrono::milliseconds(50), std::chrono::milliseconds(1000));
  sweep_timer_.expires_after(period);
  sweep_timer_.async_wait([this](beast::error_code ec) {
    if (ec || stopped_)
      return;
    const auto now = Clock::now();
    for (const auto& session : live_sessions()) {
      if (session->overdue(now))
        session->close_soon();
    }
    sweep();
  });
}

std::vector<std::shared_ptr<HttpSession>> HttpServer::live_sessions() {
  std::vector<std::shared_ptr<HttpSession>> live;
  std::lock_guard lock(sessions_mutex_);
  for (const auto& [raw, weak] : sessions_) {
    // Moved into the vector, never dropped here: the last reference to a session must not go
    // while the mutex is held, as its destructor takes the mutex too.
    if (auto session = weak.lock())
      live.push_back(std::move(session));
  }
  return live;
}

void HttpServer::stop() {
  if (stopped_.exchange(true))
    return;
  net::dispatch(acceptor_.get_executor(), [this] {
    beast::error_code ec;
    acceptor_.close(ec);
    sweep_timer_.cancel();
  });
  for (const auto& session : live_sessions())
    session->close_soon();
  for (auto& guard : running_)
    guard.reset();
}

}  // namespace reverify
