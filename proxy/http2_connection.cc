#include "proxy/http2_connection.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

namespace sparktrace::proxy {
namespace {

// Send rounds (up to kHighWatermark each) in one flush before the loop turns to others.
constexpr int kMaxSendRounds = 16;

std::string_view View(const std::uint8_t* data, std::size_t length) {
  return {reinterpret_cast<const char*>(data), length};
}

struct CallbacksDeleter {
  void operator()(nghttp2_session_callbacks* callbacks) const { nghttp2_session_callbacks_del(callbacks); }
};
struct OptionDeleter {
  void operator()(nghttp2_option* option) const { nghttp2_option_del(option); }
};

// The stream interface speaks RFC 9113 and its own "nothing yet", without nghttp2's names.
static_assert(kHttp2NoError == NGHTTP2_NO_ERROR);
static_assert(kHttp2Cancel == NGHTTP2_CANCEL);
static_assert(kNothingToSendYet == NGHTTP2_ERR_DEFERRED);

}  // namespace

const char* Http2ErrorName(std::uint32_t error_code) { return nghttp2_http2_strerror(error_code); }

std::size_t HeaderListSize(const std::vector<Header>& headers) {
  std::size_t size = 0;
  for (const Header& header : headers) size += HeaderFieldSize(header.name, header.value);
  return size;
}

std::vector<nghttp2_nv> ToNv(const std::vector<Header>& headers) {
  std::vector<nghttp2_nv> nva;
  nva.reserve(headers.size());
  for (const Header& header : headers) {
    // No NO_COPY flags: nghttp2 copies names and values, as the call may end before they are sent.
    nva.push_back(
        {const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(header.name.data())),
         const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(header.value.data())),
         header.name.size(), header.value.size(),
         static_cast<std::uint8_t>(header.never_index ? NGHTTP2_NV_FLAG_NO_INDEX : NGHTTP2_NV_FLAG_NONE)});
  }
  return nva;
}

Http2Connection::Http2Connection(RelayContext& context, Role role, std::unique_ptr<ConnectionIo> io,
                                 std::string peer, Http2ConnectionOwner& owner, const Http2Settings& settings)
    : context_(context),
      role_(role),
      io_(std::move(io)),
      peer_(std::move(peer)),
      owner_(owner),
      max_concurrent_streams_(settings.max_concurrent_streams) {
  nghttp2_session_callbacks* raw_callbacks = nullptr;
  nghttp2_session_callbacks_new(&raw_callbacks);
  const std::unique_ptr<nghttp2_session_callbacks, CallbacksDeleter> callbacks(raw_callbacks);
  nghttp2_session_callbacks_set_send_callback(callbacks.get(), SendCallback);
  nghttp2_session_callbacks_set_send_data_callback(callbacks.get(), SendDataCallback);
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks.get(), OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(callbacks.get(), OnHeaderCallback);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks.get(), OnFrameReceived);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks.get(), OnDataChunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks.get(), OnStreamClose);
  nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks.get(), OnInvalidFrame);

  nghttp2_option* raw_option = nullptr;
  nghttp2_option_new(&raw_option);
  const std::unique_ptr<nghttp2_option, OptionDeleter> option(raw_option);
  nghttp2_option_set_no_auto_window_update(option.get(), 1);
  // Until the upstream's SETTINGS arrive, assume it takes no more than this many streams.
  nghttp2_option_set_peer_max_concurrent_streams(option.get(), 100);

  nghttp2_session* raw_session = nullptr;
  if (role_ == Role::kServer) {
    nghttp2_session_server_new2(&raw_session, callbacks.get(), this, option.get());
  } else {
    nghttp2_session_client_new2(&raw_session, callbacks.get(), this, option.get());
  }
  session_.reset(raw_session);

  std::vector<nghttp2_settings_entry> entries = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, settings.max_concurrent_streams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, static_cast<std::uint32_t>(settings.initial_stream_window)},
      {NGHTTP2_SETTINGS_MAX_FRAME_SIZE, settings.max_frame_size},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, settings.max_header_list_bytes},
  };
  if (role_ == Role::kClient) entries.push_back({NGHTTP2_SETTINGS_ENABLE_PUSH, 0});
  nghttp2_submit_settings(session(), NGHTTP2_FLAG_NONE, entries.data(), entries.size());
  nghttp2_session_set_local_window_size(session(), NGHTTP2_FLAG_NONE, 0, settings.connection_window);

  if (role_ == Role::kServer) ready_ = true;
}

Http2Connection::~Http2Connection() = default;

void Http2Connection::Start() {
  io_->Start(*this);
  WantsFlush();
}

bool Http2Connection::HasStreamCapacity() const {
  if (closed_ || draining_ || nghttp2_session_check_request_allowed(session()) == 0) return false;
  const std::uint32_t limit =
      nghttp2_session_get_remote_settings(session(), NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
  return streams_.size() < limit;
}

nghttp2_data_provider Http2Connection::DataProvider(Http2Stream& stream) {
  nghttp2_data_provider provider{};
  provider.source.ptr = &stream;
  provider.read_callback = ReadDataCallback;
  return provider;
}

Http2Connection::Submitted Http2Connection::SubmitRequest(std::vector<Header> headers, Http2Stream& stream) {
  if (closed_ || draining_) return Submitted::kClosing;
  streams_.insert(&stream);
  active_ = true;
  if (!ready_) {
    pending_.push_back({std::move(headers), &stream});
    return Submitted::kYes;
  }
  return SubmitNow(headers, stream);
}

Http2Connection::Submitted Http2Connection::SubmitNow(const std::vector<Header>& headers,
                                                      Http2Stream& stream) {
  // A peer that announced a limit refuses a larger header block, and an HPACK decoder that gives
  // up on one fails the whole connection: such a request never leaves the proxy.
  const std::uint32_t peer_limit =
      nghttp2_session_get_remote_settings(session(), NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE);
  if (HeaderListSize(headers) > peer_limit) {
    streams_.erase(&stream);
    return Submitted::kOverPeerHeaderLimit;
  }
  const std::vector<nghttp2_nv> nva = ToNv(headers);
  const nghttp2_data_provider provider = DataProvider(stream);
  const std::int32_t stream_id =
      nghttp2_submit_request(session(), nullptr, nva.data(), nva.size(), &provider, &stream);
  if (stream_id < 0) {
    streams_.erase(&stream);
    return Submitted::kClosing;
  }
  stream.OnOpened(stream_id);
  WantsFlush();
  return Submitted::kYes;
}

void Http2Connection::AttachStream(std::int32_t stream_id, Http2Stream& stream) {
  nghttp2_session_set_stream_user_data(session(), stream_id, &stream);
  streams_.insert(&stream);
  active_ = true;
}

void Http2Connection::DetachStream(std::int32_t stream_id, Http2Stream& stream) {
  streams_.erase(&stream);
  std::erase_if(pending_, [&stream](const PendingRequest& pending) { return pending.stream == &stream; });
  if (!closed_ && stream_id > 0) nghttp2_session_set_stream_user_data(session(), stream_id, nullptr);
  CloseIfFinished();
}

Http2Stream* Http2Connection::StreamFor(std::int32_t stream_id) const {
  return static_cast<Http2Stream*>(nghttp2_session_get_stream_user_data(session(), stream_id));
}

void Http2Connection::SubmitResponse(std::int32_t stream_id, const std::vector<Header>& headers,
                                     Http2Stream* body) {
  const std::vector<nghttp2_nv> nva = ToNv(headers);
  if (body == nullptr) {
    nghttp2_submit_response(session(), stream_id, nva.data(), nva.size(), nullptr);
  } else {
    const nghttp2_data_provider provider = DataProvider(*body);
    nghttp2_submit_response(session(), stream_id, nva.data(), nva.size(), &provider);
  }
  WantsFlush();
}

bool Http2Connection::SubmitTrailers(std::int32_t stream_id, const std::vector<Header>& trailers) {
  // No WantsFlush: this runs inside Flush (from the data provider), which sends them.
  const std::vector<nghttp2_nv> nva = ToNv(trailers);
  return nghttp2_submit_trailer(session(), stream_id, nva.data(), nva.size()) == 0;
}

void Http2Connection::ResetStream(std::int32_t stream_id, std::uint32_t error_code) {
  nghttp2_submit_rst_stream(session(), NGHTTP2_FLAG_NONE, stream_id, error_code);
  WantsFlush();
}

void Http2Connection::ResumeData(std::int32_t stream_id) {
  // A request still waiting for the peer's SETTINGS has no stream yet: it is asked for its DATA
  // once submitted.
  if (stream_id > 0) nghttp2_session_resume_data(session(), stream_id);
  WantsFlush();
}

void Http2Connection::Consume(std::int32_t stream_id, std::size_t bytes) {
  if (closed_ || bytes == 0 || stream_id <= 0) return;
  nghttp2_session_consume_stream(session(), stream_id, bytes);  // a forgotten stream: nothing to do
  WantsFlush();
}

void Http2Connection::GrowStreamWindow(std::int32_t stream_id, std::int32_t window) {
  if (closed_ || stream_id <= 0) return;
  nghttp2_session_set_local_window_size(session(), NGHTTP2_FLAG_NONE, stream_id, window);
  WantsFlush();
}

void Http2Connection::WantsFlush() {
  if (flush_wanted_ || closed_) return;
  flush_wanted_ = true;
  context_.ScheduleFlush(this);
}

void Http2Connection::Flush() {
  flush_wanted_ = false;
  if (closed_) return;
  // nghttp2 stops at kHighWatermark; when the socket then takes everything at once, no write
  // event will come back to resume it, so go on until it has nothing left or the socket pushes
  // back (OnIoWritable resumes from there).
  for (int round = 0; !closed_; ++round) {
    if (round == kMaxSendRounds) {  // a fast reader: let other connections have the loop
      WantsFlush();
      break;
    }
    const int result = nghttp2_session_send(session());
    if (result != 0) {
      Close(nghttp2_strerror(result));
      return;
    }
    io_->Write();
    if (closed_ || !nghttp2_session_want_write(session()) ||
        evbuffer_get_length(output()) >= ConnectionIo::kLowWatermark) {
      break;
    }
  }
  CloseIfFinished();
}

bool Http2Connection::Ping() {
  if (closed_ || ping_outstanding_) return false;
  ping_outstanding_ = true;
  nghttp2_submit_ping(session(), NGHTTP2_FLAG_NONE, nullptr);
  WantsFlush();
  return true;
}

void Http2Connection::Drain() {
  if (closed_ || draining_) return;
  draining_ = true;
  if (role_ == Role::kServer) {
    nghttp2_submit_goaway(session(), NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(session()),
                          NGHTTP2_NO_ERROR, nullptr, 0);
  }
  WantsFlush();
}

void Http2Connection::GoAwayAndClose(std::string_view why) {
  if (closed_) return;
  Drain();  // the GOAWAY (once: a connection already draining has it queued or sent)
  // Not Flush: it may stop at the high watermark or leave the rest for a later event, and the
  // connection closes before either comes. What the socket does not take now is dropped.
  if (nghttp2_session_send(session()) == 0) io_->Write();
  Close(why);
}

void Http2Connection::CloseIfFinished() {
  if (closed_) return;
  const bool idle_after_drain = draining_ && streams_.empty();
  const bool session_over = !nghttp2_session_want_read(session()) && !nghttp2_session_want_write(session());
  if (!idle_after_drain && !session_over) return;
  if (evbuffer_get_length(output()) > 0) return;  // OnIoWritable comes back
  Close(session_over ? "HTTP/2 session ended" : "drained");
}

void Http2Connection::Close(std::string_view why) {
  if (closed_) return;
  closed_ = true;
  close_reason_ = std::string(why);
  spdlog::debug("connection {} closed: {}", peer_, why);
  io_->Stop();
  const std::vector<Http2Stream*> open(streams_.begin(), streams_.end());
  streams_.clear();
  pending_.clear();
  for (Http2Stream* stream : open) stream->OnStreamClosed(kConnectionLost);
  owner_.OnClosed(*this);
}

void Http2Connection::OnIoBytes(std::span<const std::uint8_t> bytes) {
  if (closed_) return;
  const ssize_t result = nghttp2_session_mem_recv(session(), bytes.data(), bytes.size());
  if (result < 0) {
    // Not a frame-level error (nghttp2 answers those with RST_STREAM or GOAWAY itself): a peer
    // that does not speak HTTP/2 at all, or a flood. Nothing more to say to it.
    Close(nghttp2_strerror(static_cast<int>(result)));
    return;
  }
  WantsFlush();
}

void Http2Connection::OnIoWritable() { WantsFlush(); }

void Http2Connection::OnIoConnected() { WantsFlush(); }

void Http2Connection::OnIoClosed(std::string_view why) { Close(why); }

ssize_t Http2Connection::SendCallback(nghttp2_session* /*session*/, const std::uint8_t* data,
                                      std::size_t length, int /*flags*/, void* self) {
  auto* connection = static_cast<Http2Connection*>(self);
  evbuffer* output = connection->output();
  if (evbuffer_get_length(output) >= kHighWatermark) return NGHTTP2_ERR_WOULDBLOCK;
  if (evbuffer_add(output, data, length) != 0) return NGHTTP2_ERR_CALLBACK_FAILURE;
  return static_cast<ssize_t>(length);
}

int Http2Connection::SendDataCallback(nghttp2_session* /*session*/, nghttp2_frame* frame,
                                      const std::uint8_t* frame_header, std::size_t length,
                                      nghttp2_data_source* source, void* self) {
  auto* connection = static_cast<Http2Connection*>(self);
  evbuffer* output = connection->output();
  if (evbuffer_get_length(output) >= kHighWatermark) return NGHTTP2_ERR_WOULDBLOCK;
  evbuffer_add(output, frame_header, 9);
  // The relay never pads, but a frame that nghttp2 padded would need the pad length first.
  if (frame->data.padlen > 0) {
    const auto pad_length = static_cast<std::uint8_t>(frame->data.padlen - 1);
    evbuffer_add(output, &pad_length, 1);
  }
  static_cast<Http2Stream*>(source->ptr)->SendData(output, length);
  if (frame->data.padlen > 1) {
    const std::vector<std::uint8_t> padding(frame->data.padlen - 1, 0);
    evbuffer_add(output, padding.data(), padding.size());
  }
  return 0;
}

ssize_t Http2Connection::ReadDataCallback(nghttp2_session* /*session*/, std::int32_t /*stream_id*/,
                                          std::uint8_t* /*buf*/, std::size_t length,
                                          std::uint32_t* data_flags, nghttp2_data_source* source,
                                          void* /*self*/) {
  bool end_of_data = false;
  bool no_end_stream = false;
  const ssize_t ready =
      static_cast<Http2Stream*>(source->ptr)->ReadyToSend(length, &end_of_data, &no_end_stream);
  if (ready < 0) return ready;
  if (ready > 0) *data_flags |= NGHTTP2_DATA_FLAG_NO_COPY;
  if (end_of_data) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
  if (no_end_stream) *data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
  return ready;
}

int Http2Connection::OnBeginHeaders(nghttp2_session* /*session*/, const nghttp2_frame* frame, void* self) {
  auto* connection = static_cast<Http2Connection*>(self);
  if (connection->role_ != Role::kServer || frame->hd.type != NGHTTP2_HEADERS ||
      frame->headers.cat != NGHTTP2_HCAT_REQUEST) {
    return 0;
  }
  Http2Stream* stream = connection->owner_.OnNewStream(*connection, frame->hd.stream_id);
  if (stream == nullptr) {
    nghttp2_submit_rst_stream(connection->session(), NGHTTP2_FLAG_NONE, frame->hd.stream_id,
                              NGHTTP2_REFUSED_STREAM);
    return 0;
  }
  connection->AttachStream(frame->hd.stream_id, *stream);
  return 0;
}

int Http2Connection::OnHeaderCallback(nghttp2_session* /*session*/, const nghttp2_frame* frame,
                                      const std::uint8_t* name, std::size_t name_length,
                                      const std::uint8_t* value, std::size_t value_length, std::uint8_t flags,
                                      void* self) {
  auto* connection = static_cast<Http2Connection*>(self);
  if (Http2Stream* stream = connection->StreamFor(frame->hd.stream_id)) {
    stream->OnHeader(View(name, name_length), View(value, value_length),
                     (flags & NGHTTP2_NV_FLAG_NO_INDEX) != 0);
  }
  return 0;
}

int Http2Connection::OnFrameReceived(nghttp2_session* /*session*/, const nghttp2_frame* frame, void* self) {
  auto* connection = static_cast<Http2Connection*>(self);
  if (frame->hd.type == NGHTTP2_SETTINGS && !(frame->hd.flags & NGHTTP2_FLAG_ACK) &&
      !connection->peer_settings_received_) {
    connection->peer_settings_received_ = true;
    connection->ready_ = true;
    std::vector<PendingRequest> pending = std::move(connection->pending_);
    for (PendingRequest& request : pending) {
      switch (connection->SubmitNow(request.headers, *request.stream)) {
        case Submitted::kYes:
          break;
        case Submitted::kClosing:
          request.stream->OnStreamClosed(kConnectionLost);
          break;
        case Submitted::kOverPeerHeaderLimit:
          request.stream->OnStreamClosed(kHeaderListTooLarge);
          break;
      }
    }
    connection->owner_.OnReady(*connection);
    return 0;
  }
  if (frame->hd.type == NGHTTP2_PING && (frame->hd.flags & NGHTTP2_FLAG_ACK)) {
    connection->ping_outstanding_ = false;
    return 0;
  }
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    connection->draining_ = true;  // no new streams here; the open ones run to their end
    connection->CloseIfFinished();
    return 0;
  }
  if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
  Http2Stream* stream = connection->StreamFor(frame->hd.stream_id);
  if (stream == nullptr) return 0;
  const bool end_stream = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
  if (frame->hd.type == NGHTTP2_HEADERS) {
    stream->OnHeadersComplete(end_stream);
  } else if (end_stream) {
    stream->OnEndOfData();
  }
  return 0;
}

int Http2Connection::OnDataChunk(nghttp2_session* session, std::uint8_t /*flags*/, std::int32_t stream_id,
                                 const std::uint8_t* data, std::size_t length, void* self) {
  auto* connection = static_cast<Http2Connection*>(self);
  // The connection's window reopens at once; only the stream's waits for the bytes to be taken.
  nghttp2_session_consume_connection(session, length);
  Http2Stream* stream = connection->StreamFor(stream_id);
  if (stream == nullptr) {
    // Nobody will relay these bytes (the call is over): give the window back at once.
    nghttp2_session_consume_stream(session, stream_id, length);
    return 0;
  }
  stream->OnData({data, length});
  return 0;
}

int Http2Connection::OnInvalidFrame(nghttp2_session* /*session*/, const nghttp2_frame* frame,
                                    int lib_error_code, void* self) {
  auto* connection = static_cast<Http2Connection*>(self);
  // nghttp2 enforces the stream limit we announced before our OnBeginHeaders sees the stream.
  const bool over_limit = lib_error_code == NGHTTP2_ERR_REFUSED_STREAM ||
                          (lib_error_code == NGHTTP2_ERR_PROTO &&
                           connection->streams_.size() >= connection->max_concurrent_streams_);
  if (connection->role_ == Role::kServer && frame->hd.type == NGHTTP2_HEADERS && over_limit) {
    connection->owner_.OnStreamsOverLimit(*connection);
  }
  return 0;
}

int Http2Connection::OnStreamClose(nghttp2_session* /*session*/, std::int32_t stream_id,
                                   std::uint32_t error_code, void* self) {
  auto* connection = static_cast<Http2Connection*>(self);
  Http2Stream* stream = connection->StreamFor(stream_id);
  if (stream == nullptr) return 0;
  connection->streams_.erase(stream);
  stream->OnStreamClosed(error_code);
  return 0;
}

}  // namespace sparktrace::proxy
