#include "admin/http_message.h"

#include <algorithm>
#include <ctime>

namespace sparktrace::admin {
namespace {

// Header text never carries a line break into the answer.
void AppendHeaderText(std::string& out, std::string_view text) {
  for (const char c : text) out += c == '\r' || c == '\n' ? ' ' : c;
}

void AppendHeader(std::string& out, std::string_view name, std::string_view value) {
  AppendHeaderText(out, name);
  out += ": ";
  AppendHeaderText(out, value);
  out += "\r\n";
}

// RFC 9110 5.6.7 IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
std::string HttpDate() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[64];
  const std::size_t length = std::strftime(text, sizeof(text), "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return std::string(text, length);
}

bool HasNoBody(int status) { return (status >= 100 && status < 200) || status == 204 || status == 304; }

}  // namespace

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 421: return "Misdirected Request";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

std::string SerializeResponseHead(const HttpResponse& response, const ResponseFraming& framing) {
  const bool no_body = HasNoBody(response.status);
  std::string out;
  out.reserve(256);
  out += "HTTP/1.1 ";
  out += std::to_string(response.status);
  out += ' ';
  out += ReasonPhrase(response.status);
  out += "\r\n";
  AppendHeader(out, "Date", HttpDate());
  if (!no_body) {
    AppendHeader(out, "Content-Type", response.content_type);
    AppendHeader(out, "Content-Length", std::to_string(response.body.size()));
  }
  for (const auto& [name, value] : response.headers) AppendHeader(out, name, value);
  if (!framing.keep_alive) {
    AppendHeader(out, "Connection", "close");
  } else if (framing.version_minor == 0) {
    AppendHeader(out, "Connection", "keep-alive");
  }
  out += "\r\n";
  return out;
}

bool SendsBody(const HttpResponse& response, const ResponseFraming& framing) {
  return !framing.head_only && !HasNoBody(response.status);
}

HttpResponse TextResponse(int status, std::string body) {
  return HttpResponse{status, "text/plain; charset=utf-8", std::move(body), {}};
}

}  // namespace sparktrace::admin
