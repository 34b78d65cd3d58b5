#pragma once
// One access-log line per RPC (method, status, duration, messages and bytes each way, peer), and
// at debug level one line per call start with the request header names — secret values redacted.

#include "proxy/call_observer.h"

namespace sparktrace::proxy {

class AccessLog final : public CallObserver {
 public:
  std::unique_ptr<CallTap> OnCallStarted(const CallStart& start) override;
};

}  // namespace sparktrace::proxy
