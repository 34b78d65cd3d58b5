#pragma once
// The relay's owning handles: libevent's (common/libevent_handles.h) and OpenSSL's context.

#include <memory>

#include <openssl/ssl.h>

#include "common/libevent_handles.h"

namespace sparktrace::proxy {

using SslContextPtr = std::unique_ptr<SSL_CTX, CFree<SSL_CTX_free>>;

}  // namespace sparktrace::proxy
