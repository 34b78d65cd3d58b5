#pragma once
// Which request header values must never reach a log.

#include <string>
#include <string_view>

#include "proxy/call_observer.h"

namespace sparktrace::proxy {

// authorization, authentication, cookie, proxy-authorization, and names containing token,
// password, passwd, secret, api-key/apikey, credential or session-key.
bool IsSecretHeader(std::string_view key);

// "authorization=<redacted> x-dag=etl trace-bin=<24 base64 chars>" for debug logs. Values of
// secret headers are never included; binary (`-bin`) values are summarised by the length of
// their base64 text as sent, which is all the proxy has of them.
std::string DescribeHeadersForLog(const ClientMetadata& metadata);

}  // namespace sparktrace::proxy
