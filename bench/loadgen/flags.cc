#include "flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string_view>

namespace sparktrace::loadgen {
namespace {

// Splits "--key=value" / "--key value" pairs, in order; every option takes a value. Applying
// them in order keeps "the last one wins" for plain options and lets --metadata repeat.
using Pairs = std::vector<std::pair<std::string, std::string>>;

bool SplitPairs(const std::vector<std::string>& args, Pairs* out, std::string* error) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (!arg.starts_with("--")) {
      *error = "unexpected argument: " + args[i];
      return false;
    }
    arg.remove_prefix(2);
    if (auto eq = arg.find('='); eq != std::string_view::npos) {
      out->emplace_back(std::string(arg.substr(0, eq)), std::string(arg.substr(eq + 1)));
      continue;
    }
    if (i + 1 >= args.size()) {
      *error = "missing value for --" + std::string(arg);
      return false;
    }
    out->emplace_back(std::string(arg), args[++i]);
  }
  return true;
}

bool ParseInt(const std::string& text, std::int64_t min, std::int64_t max, std::int64_t* out) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return false;
  }
  *out = value;
  return true;
}

bool ParseSeconds(const std::string& text, double* out) {
  try {
    std::size_t used = 0;
    double value = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(value) || value < 0 || value > 86400) return false;
    *out = value;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

using Setter = std::function<bool(const std::string&)>;

bool Apply(const Pairs& pairs, const std::map<std::string, Setter>& setters, std::string* error) {
  for (const auto& [key, value] : pairs) {
    auto it = setters.find(key);
    if (it == setters.end()) {
      *error = "unknown option --" + key;
      return false;
    }
    if (!it->second(value)) {
      *error = "bad value for --" + key + ": " + value;
      return false;
    }
  }
  return true;
}

Setter IntSetter(std::int64_t min, std::int64_t max, std::int64_t* out) {
  return [=](const std::string& v) { return ParseInt(v, min, max, out); };
}

Setter IntSetter(int min, int max, int* out) {
  return [=](const std::string& v) {
    std::int64_t value = 0;
    if (!ParseInt(v, min, max, &value)) return false;
    *out = static_cast<int>(value);
    return true;
  };
}

Setter SecondsSetter(double* out) {
  return [=](const std::string& v) { return ParseSeconds(v, out); };
}

// "key=value": a lower-case gRPC metadata key (no reserved "grpc-" keys, no binary "-bin" ones).
bool ParseMetadata(const std::string& v, std::vector<std::pair<std::string, std::string>>* out) {
  const auto eq = v.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  std::string key = v.substr(0, eq);
  const bool key_ok = std::all_of(key.begin(), key.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '-' || c == '_' || c == '.';
  });
  if (!key_ok || key.starts_with("grpc-") || key.ends_with("-bin")) return false;
  out->emplace_back(std::move(key), v.substr(eq + 1));
  return true;
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

std::optional<ServerOptions> ParseServerOptions(const std::vector<std::string>& args,
                                                std::string* error) {
  Pairs pairs;
  if (!SplitPairs(args, &pairs, error)) return std::nullopt;
  ServerOptions options;
  std::map<std::string, Setter> setters = {
      {"listen", [&](const std::string& v) { options.listen = v; return !v.empty(); }},
  };
  if (!Apply(pairs, setters, error)) return std::nullopt;
  return options;
}

std::optional<ClientOptions> ParseClientOptions(const std::vector<std::string>& args,
                                                std::string* error) {
  Pairs pairs;
  if (!SplitPairs(args, &pairs, error)) return std::nullopt;
  ClientOptions o;
  auto mode_setter = [&](const std::string& v) {
    if (v == "unary") o.mode = Mode::kUnary;
    else if (v == "stream") o.mode = Mode::kStream;
    else if (v == "idle") o.mode = Mode::kIdle;
    else return false;
    return true;
  };
  std::map<std::string, Setter> setters = {
      {"target", [&](const std::string& v) { o.target = v; return !v.empty(); }},
      {"mode", mode_setter},
      {"concurrency", IntSetter(1, 100000, &o.concurrency)},
      {"streams", IntSetter(1, 100000, &o.concurrency)},
      {"streams-per-channel", IntSetter(1, 100000, &o.streams_per_channel)},
      {"duration", SecondsSetter(&o.duration_s)},
      {"warmup", [&](const std::string& v) { o.warmup_given = true; return ParseSeconds(v, &o.warmup_s); }},
      {"calls", IntSetter(std::int64_t{0}, std::int64_t{1} << 40, &o.calls)},
      {"request-bytes", IntSetter(0, 64 << 20, &o.request_bytes)},
      {"message-bytes", IntSetter(std::int64_t{0}, std::int64_t{256} << 20, &o.message_bytes)},
      {"messages", IntSetter(std::int64_t{1}, std::int64_t{10'000'000}, &o.messages)},
      {"call-timeout", SecondsSetter(&o.call_timeout_s)},
      {"connect-timeout", SecondsSetter(&o.connect_timeout_s)},
      {"establish-timeout", SecondsSetter(&o.establish_timeout_s)},
      {"hold-max", SecondsSetter(&o.hold_max_s)},
      {"read-bytes-per-s", IntSetter(std::int64_t{0}, std::int64_t{1} << 40, &o.read_bytes_per_s)},
      {"progress-bytes", IntSetter(std::int64_t{0}, std::int64_t{1} << 50, &o.progress_bytes)},
      {"method", [&](const std::string& v) { o.method = v; return v.size() > 1 && v[0] == '/'; }},
      {"request-file", [&](const std::string& v) { o.request_file = v; return !v.empty(); }},
      {"fresh-uuid", [&](const std::string& v) { o.fresh_uuid = v; return v.size() == 36; }},
      {"metadata", [&](const std::string& v) { return ParseMetadata(v, &o.metadata); }},
  };
  if (!Apply(pairs, setters, error)) return std::nullopt;
  if (o.target.empty()) {
    *error = "--target is required";
    return std::nullopt;
  }
  if (o.custom_request()) {
    if (o.mode == Mode::kIdle) {
      *error = "--request-file is for unary and stream modes";
      return std::nullopt;
    }
    if (!ReadFile(o.request_file, &o.request)) {
      *error = "cannot read --request-file " + o.request_file;
      return std::nullopt;
    }
  }
  if ((o.read_bytes_per_s > 0 || o.progress_bytes > 0) && o.mode != Mode::kStream) {
    *error = "--read-bytes-per-s and --progress-bytes are for stream mode";
    return std::nullopt;
  }
  if (!o.fresh_uuid.empty() && o.request.find(o.fresh_uuid) == std::string::npos) {
    *error = "--fresh-uuid needs --request-file containing the placeholder";
    return std::nullopt;
  }
  return o;
}

int ChannelCount(const ClientOptions& options) {
  return (options.concurrency + options.streams_per_channel - 1) / options.streams_per_channel;
}

}  // namespace sparktrace::loadgen
