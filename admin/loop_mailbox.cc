#include "admin/loop_mailbox.h"

#include <utility>

namespace sparktrace::admin {

Result<std::unique_ptr<LoopMailbox>> LoopMailbox::Create(event_base* base) {
  auto mailbox = std::unique_ptr<LoopMailbox>(new LoopMailbox());
  mailbox->wake_.reset(event_new(base, -1, 0, OnWake, mailbox.get()));
  if (!mailbox->wake_) return Error{ErrorCode::kInternal, "libevent: event_new failed for the admin mailbox"};
  return mailbox;
}

void LoopMailbox::Post(std::function<void()> task) {
  {
    const std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
  }
  // Activating an already active event is a no-op: one wake-up runs every task queued by then.
  event_active(wake_.get(), EV_READ, 0);
}

void LoopMailbox::OnWake(evutil_socket_t, short, void* self) {
  auto* mailbox = static_cast<LoopMailbox*>(self);
  std::vector<std::function<void()>> tasks;
  {
    const std::lock_guard lock(mailbox->mu_);
    tasks.swap(mailbox->tasks_);
  }
  for (auto& task : tasks) task();
}

}  // namespace sparktrace::admin
