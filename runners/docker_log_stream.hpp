#pragma once
// Demultiplexes the Docker logs stream of a container without a TTY: frames of an 8-byte header
// (stream type: 0 stdin, 1 stdout, 2 stderr; three zero bytes; big-endian uint32 length) then the
// payload. Chunks may split frames anywhere; the decoder keeps the partial frame.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace reverify {

class DockerLogStream {
 public:
  using Sink = std::function<void(int stream, std::string_view payload)>;
  explicit DockerLogStream(Sink sink) : sink_(std::move(sink)) {}
  void feed(std::string_view chunk);
  // Bytes of an unfinished frame still buffered (a stream that ended mid-frame).
  std::size_t pending() const { return buffer_.size(); }

 private:
  Sink sink_;
  std::string buffer_;
};

}  // namespace reverify
