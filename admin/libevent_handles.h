#pragma once
// Owning handles for the libevent objects the admin server holds: each frees its object with
// libevent's own function when it goes out of scope.

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include <memory>

namespace sparktrace::admin {

template <auto Free>
struct LibeventFree {
  template <typename T>
  void operator()(T* object) const {
    Free(object);
  }
};

using EventBasePtr = std::unique_ptr<event_base, LibeventFree<event_base_free>>;
using EventPtr = std::unique_ptr<event, LibeventFree<event_free>>;
using BufferEventPtr = std::unique_ptr<bufferevent, LibeventFree<bufferevent_free>>;
using ListenerPtr = std::unique_ptr<evconnlistener, LibeventFree<evconnlistener_free>>;

}  // namespace sparktrace::admin
