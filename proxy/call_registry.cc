#include "proxy/call_registry.h"

#include <vector>

#include "proxy/relay_context.h"
#include "proxy/relayed_call.h"

namespace sparktrace::proxy {

CallRegistry::~CallRegistry() {
  for (std::size_t i = 0; i < calls_.size(); ++i) live_.Remove();
}

RelayedCall& CallRegistry::Add(std::unique_ptr<RelayedCall> call) {
  RelayedCall& added = *call;
  calls_.emplace(&added, std::move(call));
  live_.Add();
  return added;
}

void CallRegistry::Finished(RelayedCall& call) {
  const auto it = calls_.find(&call);
  if (it == calls_.end()) return;
  context_.Retire(std::move(it->second));
  calls_.erase(it);
  live_.Remove();
}

void CallRegistry::CancelAll() {
  std::vector<RelayedCall*> calls;
  calls.reserve(calls_.size());
  for (const auto& entry : calls_) calls.push_back(entry.first);
  for (RelayedCall* call : calls) call->Cancel();
}

}  // namespace sparktrace::proxy
