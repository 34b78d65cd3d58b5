#pragma once
// One HTTP/2 connection of the relay, either side: a client's connection to the proxy
// (Role::kServer) or the proxy's connection to the upstream (Role::kClient). It owns the
// transport (ConnectionIo: plain socket or TLS) and the nghttp2 session, moves bytes between them, and
// hands every stream event to the stream's Http2Stream (http2_stream.h): the relay logic lives there,
// not here.
//
// Flow control is the application's (nghttp2's automatic WINDOW_UPDATE is off): a stream's
// receive window reopens only when the Http2Stream reports, through Consume, that the other side
// took the bytes. The session writes into its output only while it holds less than
// kHighWatermark, and resumes when it has drained to ConnectionIo::kLowWatermark, so a slow peer
// stalls its streams instead of growing the proxy's memory.
//
// Lifetime: Close marks the connection dead and tells its streams and its owner; the owner frees
// it later (RelayContext::AfterEvent), never inside one of its own callbacks.
// Threads: one relay worker's event loop; no locks.

#include <event2/buffer.h>
#include <nghttp2/nghttp2.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "proxy/call_connection.h"
#include "proxy/connection_io.h"
#include "proxy/http2_stream.h"
#include "proxy/libevent_handles.h"
#include "proxy/relay_context.h"

namespace sparktrace::proxy {

// nghttp2's view of `headers`; valid while `headers` is. nghttp2 copies them on submit.
std::vector<nghttp2_nv> ToNv(const std::vector<Header>& headers);

// The size of a whole header list: the sum of its fields' (HeaderFieldSize).
std::size_t HeaderListSize(const std::vector<Header>& headers);

class Http2Connection;

class Http2ConnectionOwner {
 public:
  virtual ~Http2ConnectionOwner() = default;
  // Server role: a client opened `stream_id`; returns its stream, or nullptr to refuse it.
  virtual Http2Stream* OnNewStream(Http2Connection& connection, std::int32_t stream_id) = 0;
  // The peer's first SETTINGS have arrived: for a client connection, the connection is up; for
  // a client's connection to us, its preface is complete.
  virtual void OnReady(Http2Connection& connection) = 0;
  // The connection is closed; its streams have been told. Called once.
  virtual void OnClosed(Http2Connection& connection) = 0;
  // Server role: nghttp2 refused a client's stream itself, for going past the
  // SETTINGS_MAX_CONCURRENT_STREAMS we announced (REFUSED_STREAM before the client acknowledged
  // the setting, a connection error after).
  virtual void OnStreamsOverLimit(Http2Connection& /*connection*/) {}
};

struct Http2Settings {
  // Streams the peer may open at once (server role; --max-streams-per-connection).
  std::uint32_t max_concurrent_streams = 128;
  // Every stream's receive window to begin with; a RelayedCall grows it from the relay budget
  // (StreamWindow) while its sender is held back by it.
  std::int32_t initial_stream_window = 64 * 1024;
  // All streams of the connection together. The connection window is given back as soon as bytes
  // arrive: the stream windows (and the budget behind them) bound what a stream may hold, and a
  // stalled stream must never hold a window that other clients' calls on a shared upstream
  // connection need.
  std::int32_t connection_window = 64 << 20;
  std::uint32_t max_frame_size = 64 * 1024;
  // The largest header block announced as acceptable (SETTINGS_MAX_HEADER_LIST_SIZE).
  std::uint32_t max_header_list_bytes = 16 * 1024;
};

// The stream verbs (CallConnection) are the only way its streams' owners act on the session;
// session() stays private.
class Http2Connection final : public CallConnection,
                              public Flushable,
                              public Retirable,
                              private ConnectionIoHandler {
 public:
  enum class Role { kServer, kClient };
  static constexpr std::size_t kHighWatermark = std::size_t{256} * 1024;

  // Takes the transport (connected or connecting) and queues the preface and SETTINGS.
  Http2Connection(RelayContext& context, Role role, std::unique_ptr<ConnectionIo> io, std::string peer,
                  Http2ConnectionOwner& owner, const Http2Settings& settings);
  ~Http2Connection() override;
  // Starts the I/O; call once the owner holds the connection (a failed connect reports at once).
  void Start();
  Http2Connection(const Http2Connection&) = delete;
  Http2Connection& operator=(const Http2Connection&) = delete;

  Role role() const { return role_; }
  const std::string& peer() const override { return peer_; }  // "ipv4:127.0.0.1:5000"
  bool closed() const { return closed_; }
  // Why the connection closed ("connect timed out", "closed by peer", ...); empty while open.
  const std::string& close_reason() const { return close_reason_; }
  bool ready() const { return ready_; }
  // Server role: the client's preface and SETTINGS have arrived.
  bool peer_settings_received() const { return peer_settings_received_; }
  std::size_t open_streams() const { return streams_.size(); }
  // Client role: whether one more stream may be opened now (the peer's MAX_CONCURRENT_STREAMS).
  bool HasStreamCapacity() const;

  // Client role: opens a stream carrying `stream`. Until the peer's SETTINGS have arrived the
  // request waits here (so that its MAX_CONCURRENT_STREAMS and MAX_HEADER_LIST_SIZE are known
  // before any stream is sent and none is refused); `stream.OnOpened` gives the id once it is
  // submitted. A request that waited and then cannot go closes its stream (kConnectionLost, or
  // kHeaderListTooLarge).
  Submitted SubmitRequest(std::vector<Header> headers, Http2Stream& stream) override;
  // Registers a server-side stream (OnNewStream's result) so that connection loss reaches it.
  void AttachStream(std::int32_t stream_id, Http2Stream& stream);
  void DetachStream(std::int32_t stream_id, Http2Stream& stream) override;

  // The stream verbs (see CallConnection). Each but SubmitTrailers flushes after this event.
  void SubmitResponse(std::int32_t stream_id, const std::vector<Header>& headers, Http2Stream* body) override;
  bool SubmitTrailers(std::int32_t stream_id, const std::vector<Header>& trailers) override;
  void ResetStream(std::int32_t stream_id, std::uint32_t error_code) override;
  void ResumeData(std::int32_t stream_id) override;
  // The connection's window reopened when the bytes arrived; this reopens the stream's.
  void Consume(std::int32_t stream_id, std::size_t bytes) override;
  // A WINDOW_UPDATE for the difference.
  void GrowStreamWindow(std::int32_t stream_id, std::int32_t window) override;

  // There is something new to send (data queued, frames submitted): flush after this event.
  void WantsFlush();
  // Writes what nghttp2 has to send, up to the high watermark. Runs from RelayContext.
  void Flush() override;

  // Whether a stream was opened since the last call (for closing idle connections).
  bool TakeActivity() { return std::exchange(active_, false); }
  bool draining() const { return draining_; }
  // Keepalive: sends a PING unless the last one is still unanswered; returns false then (the
  // peer or the path to it is gone).
  bool Ping();

  // Stops new streams: GOAWAY (server role) naming the last stream processed. The connection
  // closes once its streams are done.
  void Drain();
  // Closes now. Streams still open are told (OnStreamClosed with kConnectionLost).
  void Close(std::string_view why);
  // Server role: GOAWAY (NO_ERROR, naming the last stream processed), written now as far as the
  // socket takes it, then Close. For a connection with no open stream whose slot another client
  // needs: a gRPC client reconnects on its next call instead of failing it.
  void GoAwayAndClose(std::string_view why);

 private:
  struct SessionDeleter {
    void operator()(nghttp2_session* session) const { nghttp2_session_del(session); }
  };

  nghttp2_session* session() const { return session_.get(); }
  // The data provider that makes nghttp2 pull a stream's DATA from `stream` (ReadyToSend).
  static nghttp2_data_provider DataProvider(Http2Stream& stream);
  void OnIoBytes(std::span<const std::uint8_t> bytes) override;
  void OnIoWritable() override;
  void OnIoConnected() override;
  void OnIoClosed(std::string_view why) override;
  evbuffer* output() const { return io_->output(); }
  Submitted SubmitNow(const std::vector<Header>& headers, Http2Stream& stream);
  // Closes once nothing is left to read, write or flush (after GOAWAY, in either direction).
  void CloseIfFinished();
  Http2Stream* StreamFor(std::int32_t stream_id) const;

  // nghttp2 callbacks.
  static ssize_t SendCallback(nghttp2_session*, const std::uint8_t* data, std::size_t length, int flags,
                              void* self);
  static int SendDataCallback(nghttp2_session*, nghttp2_frame* frame, const std::uint8_t* frame_header,
                              std::size_t length, nghttp2_data_source* source, void* self);
  static ssize_t ReadDataCallback(nghttp2_session*, std::int32_t stream_id, std::uint8_t* buf,
                                  std::size_t length, std::uint32_t* data_flags, nghttp2_data_source* source,
                                  void* self);
  static int OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int OnHeaderCallback(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                              std::size_t name_length, const std::uint8_t* value, std::size_t value_length,
                              std::uint8_t flags, void* self);
  static int OnFrameReceived(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int OnDataChunk(nghttp2_session*, std::uint8_t flags, std::int32_t stream_id,
                         const std::uint8_t* data, std::size_t length, void* self);
  static int OnStreamClose(nghttp2_session*, std::int32_t stream_id, std::uint32_t error_code, void* self);
  static int OnInvalidFrame(nghttp2_session*, const nghttp2_frame* frame, int lib_error_code, void* self);

  RelayContext& context_;
  const Role role_;
  std::unique_ptr<ConnectionIo> io_;
  std::unique_ptr<nghttp2_session, SessionDeleter> session_;
  const std::string peer_;
  Http2ConnectionOwner& owner_;
  const std::uint32_t max_concurrent_streams_;
  std::unordered_set<Http2Stream*> streams_;
  struct PendingRequest {
    std::vector<Header> headers;
    Http2Stream* stream;
  };
  std::vector<PendingRequest> pending_;  // client role: waiting for the peer's SETTINGS
  bool closed_ = false;
  std::string close_reason_;
  bool ready_ = false;
  bool peer_settings_received_ = false;
  bool flush_wanted_ = false;
  bool draining_ = false;
  bool ping_outstanding_ = false;
  bool active_ = false;
};

}  // namespace sparktrace::proxy
