#pragma once
// A local HTTP receiver for the pager tests: 127.0.0.1 on a port of its own (or a given one),
// one io_context thread, every request recorded and answered by a handler the test supplies.
// Header-only test support; not a test itself.

#include <boost/asio.hpp>
#include <boost/beast.hpp>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace reverify::test {

struct ReceivedRequest {
  std::string method, target, body, authorization, content_type, idempotency_key;
};

struct Reply {
  unsigned status = 200;
  std::string body;
};

class HttpReceiver {
 public:
  using Handler = std::function<Reply(const ReceivedRequest&)>;

  explicit HttpReceiver(Handler handler, std::uint16_t port = 0)
      : handler_(std::move(handler)),
        acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), port}) {
    accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~HttpReceiver() { stop(); }
  HttpReceiver(const HttpReceiver&) = delete;
  HttpReceiver& operator=(const HttpReceiver&) = delete;

  void stop() {
    boost::asio::post(io_, [this] { acceptor_.close(); });
    io_.stop();
    if (thread_.joinable())
      thread_.join();
  }

  std::uint16_t port() const { return port_; }
  std::string url(const std::string& path = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<ReceivedRequest> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, boost::asio::ip::tcp::socket s) {
      if (ec)
        return;
      serve(std::move(s));  // one request per connection; blocking is fine in a test receiver
      accept();
    });
  }

  void serve(boost::asio::ip::tcp::socket socket) {
    namespace http = boost::beast::http;
    boost::beast::flat_buffer buffer;
    http::request<http::string_body> req;
    boost::system::error_code ec;
    http::read(socket, buffer, req, ec);
    if (ec)
      return;
    ReceivedRequest got{std::string(req.method_string()),
                        std::string(req.target()),
                        req.body(),
                        std::string(req[http::field::authorization]),
                        std::string(req[http::field::content_type]),
                        std::string(req["Idempotency-Key"])};
    Reply reply = handler_(got);
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(std::move(got));
    }
    http::response<http::string_body> res{static_cast<http::status>(reply.status), req.version()};
    res.set(http::field::content_type, "application/json");
    res.keep_alive(false);
    res.body() = reply.body;
    res.prepare_payload();
    http::write(socket, res, ec);
    socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
  }

  Handler handler_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = acceptor_.local_endpoint().port();
  std::thread thread_;
  std::mutex mutex_;
  std::vector<ReceivedRequest> requests_;
};

}  // namespace reverify::test
