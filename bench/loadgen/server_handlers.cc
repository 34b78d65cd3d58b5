#include "server_handlers.h"

#include "payload.h"
#include "protocol.h"

#include <charconv>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace sparktrace::loadgen {
namespace {

// Echoes the single request message back and finishes.
class UnaryEcho final : public grpc::ServerGenericBidiReactor {
 public:
  UnaryEcho() { StartRead(&message_); }

  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request message"));
      return;
    }
    StartWriteAndFinish(&message_, grpc::WriteOptions(), grpc::Status::OK);
  }
  void OnDone() override { delete this; }

 private:
  grpc::ByteBuffer message_;
};

bool ParseCount(std::string_view text, std::int64_t max, std::int64_t* out) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > max) return false;
  *out = value;
  return true;
}

// Reads the stream parameters (metadata first, else the "N S" payload), then writes N copies of
// one pre-allocated S-byte slice, one write in flight at a time, and finishes.
class ServerStream final : public grpc::ServerGenericBidiReactor {
 public:
  explicit ServerStream(grpc::GenericCallbackServerContext* context) {
    const auto& metadata = context->client_metadata();
    auto messages = metadata.find(kMessagesKey);
    auto bytes = metadata.find(kMessageBytesKey);
    if (messages != metadata.end() && bytes != metadata.end()) {
      have_params_ = ParseCount({messages->second.data(), messages->second.size()}, kMaxStreamMessages, &remaining_) &&
                     ParseCount({bytes->second.data(), bytes->second.size()}, kMaxMessageBytes, &message_bytes_);
    }
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!have_params_ && ok) have_params_ = ParsePayload();
    if (!have_params_) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "stream needs x-bench-messages and x-bench-message-bytes"));
      return;
    }
    message_ = SharedPayload(static_cast<std::size_t>(message_bytes_));
    WriteNext();
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "write failed"));
      return;
    }
    WriteNext();
  }

  void OnDone() override { delete this; }

 private:
  bool ParsePayload() {
    std::vector<grpc::Slice> slices;
    if (!request_.Dump(&slices).ok()) return false;
    std::string text;
    for (const auto& s : slices) text.append(reinterpret_cast<const char*>(s.begin()), s.size());
    auto space = text.find(' ');
    if (space == std::string::npos) return false;
    return ParseCount(std::string_view(text).substr(0, space), kMaxStreamMessages, &remaining_) &&
           ParseCount(std::string_view(text).substr(space + 1), kMaxMessageBytes, &message_bytes_);
  }

  void WriteNext() {
    if (remaining_ == 0) {
      Finish(grpc::Status::OK);
      return;
    }
    --remaining_;
    StartWrite(&message_);
  }

  grpc::ByteBuffer request_;
  grpc::ByteBuffer message_;
  bool have_params_ = false;
  std::int64_t remaining_ = 0;
  std::int64_t message_bytes_ = 0;
};

// Sends (empty) initial metadata so the client sees the stream established, then holds it until
// the client cancels (or the server shuts down, which cancels it). A proxy must pass such
// headers on at once, although they carry no application metadata.
class IdleStream final : public grpc::ServerGenericBidiReactor {
 public:
  explicit IdleStream(grpc::GenericCallbackServerContext* /*context*/) { StartSendInitialMetadata(); }
  void OnCancel() override { Finish(grpc::Status::CANCELLED); }
  void OnDone() override { delete this; }
};

class Unimplemented final : public grpc::ServerGenericBidiReactor {
 public:
  explicit Unimplemented(const std::string& method) {
    Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method " + method));
  }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerGenericBidiReactor* LoadService::CreateReactor(grpc::GenericCallbackServerContext* context) {
  const std::string& method = context->method();
  if (method == kUnaryMethod) return new UnaryEcho();
  if (method == kStreamMethod) return new ServerStream(context);
  if (method == kIdleMethod) return new IdleStream(context);
  return new Unimplemented(method);
}

}  // namespace sparktrace::loadgen
