// Which Host and Origin values the trace view and the POST routes answer (admin/host_check.h).

#include "admin/host_check.h"

#include <gtest/gtest.h>

namespace sparktrace::admin {
namespace {

TEST(HostPolicy, AllowsAddressesLocalhostAndTheBoundName) {
  const HostPolicy policy = HostPolicy::Create("sparktrace-0.internal", {});
  for (const char* host : {"127.0.0.1", "127.0.0.1:9464", "10.1.2.3:80", "[::1]", "[::1]:9464", "[fe80::1]:1",
                           "localhost", "LocalHost:9464", "localhost.:1", "sparktrace-0.internal:9464",
                           "SPARKTRACE-0.INTERNAL"}) {
    EXPECT_TRUE(policy.Allows(host)) << host;
  }
  // A rebinding page names its own domain; malformed values are never allowed.
  for (const char* host : {"evil.example", "evil.example:9464", "127.0.0.1.evil.example", "localhost.evil",
                           "sub.localhost", "", ":9464", "a b", "host:port", "host:99999", "host:1:2", "[::1",
                           "[not-v6]:1", "[::1]x", "0x7f.1"}) {
    EXPECT_FALSE(policy.Allows(host)) << host;
  }
}

TEST(HostPolicy, AllowsListedNamesDomainsOrEverything) {
  const HostPolicy listed = HostPolicy::Create("0.0.0.0", {"sparktrace.tools.svc", ".traces.example.com"});
  EXPECT_TRUE(listed.Allows("sparktrace.tools.svc:9464"));
  EXPECT_TRUE(listed.Allows("traces.example.com"));
  EXPECT_TRUE(listed.Allows("eu.traces.example.com:443"));
  EXPECT_FALSE(listed.Allows("eviltraces.example.com"));
  EXPECT_FALSE(listed.Allows("sparktrace.tools.svc.evil"));
  EXPECT_FALSE(listed.Allows("0.0.0.1.evil"));

  const HostPolicy any = HostPolicy::Create("127.0.0.1", {"*"});
  EXPECT_TRUE(any.Allows("anything.example"));
  EXPECT_TRUE(any.Allows("not even a name"));
}

TEST(SameOrigin, ComparesHostAndPortWithTheSchemeDefault) {
  EXPECT_TRUE(IsSameOrigin("http://127.0.0.1:9464", "127.0.0.1:9464"));
  EXPECT_TRUE(IsSameOrigin("HTTP://LOCALHOST:9464", "localhost:9464"));
  EXPECT_TRUE(IsSameOrigin("http://traces.example.com", "traces.example.com:80"));
  EXPECT_TRUE(IsSameOrigin("https://traces.example.com", "traces.example.com"));  // behind a TLS ingress
  EXPECT_TRUE(IsSameOrigin("http://[::1]:9464", "[::1]:9464"));

  EXPECT_FALSE(IsSameOrigin("http://evil.example", "127.0.0.1:9464"));
  EXPECT_FALSE(IsSameOrigin("http://127.0.0.1:8080", "127.0.0.1:9464"));
  EXPECT_FALSE(IsSameOrigin("http://127.0.0.1", "127.0.0.1:9464"));
  EXPECT_FALSE(IsSameOrigin("https://traces.example.com", "traces.example.com:80"));
  EXPECT_FALSE(IsSameOrigin("null", "127.0.0.1:9464"));
  EXPECT_FALSE(IsSameOrigin("file://", "127.0.0.1:9464"));
  EXPECT_FALSE(IsSameOrigin("http://127.0.0.1:9464/path", "127.0.0.1:9464"));
  EXPECT_FALSE(IsSameOrigin("http://", "127.0.0.1:9464"));
}

}  // namespace
}  // namespace sparktrace::admin
