#include "proxy/descriptor_limit.h"

#include <sys/resource.h>

#include <algorithm>

namespace sparktrace::proxy {

DescriptorLimit RaiseDescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return {};
  DescriptorLimit result{limit.rlim_cur, limit.rlim_cur};
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) result.now = raised.rlim_cur;
  }
  return result;
}

std::int64_t ConnectionsThatFit(std::uint64_t descriptors, std::uint64_t reserved, std::int64_t wanted) {
  if (descriptors <= reserved) return 1;  // a tiny limit: serve one rather than none
  const std::uint64_t room = descriptors - reserved;
  return std::min<std::int64_t>(wanted, static_cast<std::int64_t>(std::min<std::uint64_t>(room, INT64_MAX)));
}

}  // namespace sparktrace::proxy
