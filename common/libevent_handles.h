#pragma once
// Owning handles for the libevent objects the relay and the admin server hold: each frees its object
// with the library's own function when it goes out of scope. Header-only; whoever includes it links
// libevent (CFree serves other C libraries' objects too, e.g. OpenSSL's).

#include <memory>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

namespace sparktrace {

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

}  // namespace sparktrace
