#pragma once
// The OpenSSL contexts of the relay's two TLS sides, both negotiating HTTP/2 by ALPN ("h2"), as
// gRPC requires over TLS.

#include <string>

#include "common/result.h"
#include "proxy/libevent_handles.h"

namespace sparktrace::proxy {

// The listener's: presents `cert_pem` (the chain, leaf first) with `key_pem`.
Result<SslContextPtr> NewServerTlsContext(const std::string& cert_pem, const std::string& key_pem);

// The upstream connections': verifies the server's certificate against `ca_pem`, or the system's
// roots when empty. Host names are checked per connection (UpstreamPool).
Result<SslContextPtr> NewClientTlsContext(const std::string& ca_pem);

}  // namespace sparktrace::proxy
