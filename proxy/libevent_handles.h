#pragma once
// Owning handles for the C objects of libevent and OpenSSL the relay holds: each frees its object
// with the library's own function when it goes out of scope.

#include <memory>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/ssl.h>

namespace sparktrace::proxy {

template <auto Free>
struct CFree {
  template <typename T>
  void operator()(T* object) const {
    Free(object);
  }
};

using EventBasePtr = std::unique_ptr<event_base, CFree<event_base_free>>;
using EventPtr = std::unique_ptr<event, CFree<event_free>>;
using BufferEventPtr = std::unique_ptr<bufferevent, CFree<bufferevent_free>>;
using ListenerPtr = std::unique_ptr<evconnlistener, CFree<evconnlistener_free>>;
using SslContextPtr = std::unique_ptr<SSL_CTX, CFree<SSL_CTX_free>>;

}  // namespace sparktrace::proxy
