#include "proxy/access_log.h"

#include <spdlog/spdlog.h>

#include <string>

#include "common/logging.h"
#include "common/units.h"
#include "proxy/metadata_policy.h"
#include "proxy/status_names.h"

namespace sparktrace::proxy {
namespace {

// Status messages come from the upstream and can be long (Spark puts stack traces in some).
constexpr std::size_t kMaxErrorChars = 300;

class AccessLogTap final : public CallTap {
 public:
  AccessLogTap(std::string method, std::string peer) : method_(std::move(method)), peer_(std::move(peer)) {}

  // The line needs only the counts, which come with CallEnd.
  bool NeedsMessageBytes() const override { return false; }
  void OnRequestMessage(const TappedMessage&) override {}
  void OnResponseMessage(const TappedMessage&) override {}

  void OnCallEnded(const CallEnd& end) override {
    LogFields fields(CurrentLogFormat());
    fields.Add("method", method_)
        .Add("code", StatusCodeName(end.code))
        .Add("duration_ms", FractionalMilliseconds(end.duration));
    if (end.time_to_first_response)
      fields.Add("ttfr_ms", FractionalMilliseconds(*end.time_to_first_response));
    fields.Add("req_msgs", static_cast<std::int64_t>(end.requests.messages))
        .Add("req_bytes", static_cast<std::int64_t>(end.requests.bytes))
        .Add("resp_msgs", static_cast<std::int64_t>(end.responses.messages))
        .Add("resp_bytes", static_cast<std::int64_t>(end.responses.bytes))
        .Add("peer", peer_);
    if (!end.error_message.empty()) fields.Add("error", end.error_message.substr(0, kMaxErrorChars));
    AccessLogger()->info(fields.str());
  }

 private:
  std::string method_;
  std::string peer_;
};

}  // namespace

std::unique_ptr<CallTap> AccessLog::OnCallStarted(const CallStart& start) {
  auto logger = AccessLogger();
  if (logger->should_log(spdlog::level::debug)) {
    LogFields fields(CurrentLogFormat());
    fields.Add("event", "start")
        .Add("method", start.method)
        .Add("peer", start.peer)
        .Add("headers", DescribeHeadersForLog(start.client_metadata));
    logger->debug(fields.str());
  }
  if (!logger->should_log(spdlog::level::info)) return nullptr;
  return std::make_unique<AccessLogTap>(std::string(start.method), std::string(start.peer));
}

}  // namespace sparktrace::proxy
