#include "flags.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <string_view>

namespace sparktrace::loadgen {
namespace {

// Splits "--key=value" / "--key value" pairs into a map; every option takes a value.
bool SplitPairs(const std::vector<std::string>& args, std::map<std::string, std::string>* out,
                std::string* error) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (!arg.starts_with("--")) {
      *error = "unexpected argument: " + args[i];
      return false;
    }
    arg.remove_prefix(2);
    if (auto eq = arg.find('='); eq != std::string_view::npos) {
      (*out)[std::string(arg.substr(0, eq))] = std::string(arg.substr(eq + 1));
      continue;
    }
    if (i + 1 >= args.size()) {
      *error = "missing value for --" + std::string(arg);
      return false;
    }
    (*out)[std::string(arg)] = args[++i];
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

bool Apply(const std::map<std::string, std::string>& pairs, const std::map<std::string, Setter>& setters,
           std::string* error) {
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

}  // namespace

std::optional<ServerOptions> ParseServerOptions(const std::vector<std::string>& args,
                                                std::string* error) {
  std::map<std::string, std::string> pairs;
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
  std::map<std::string, std::string> pairs;
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
  };
  if (!Apply(pairs, setters, error)) return std::nullopt;
  if (o.target.empty()) {
    *error = "--target is required";
    return std::nullopt;
  }
  return o;
}

int ChannelCount(const ClientOptions& options) {
  return (options.concurrency + options.streams_per_channel - 1) / options.streams_per_channel;
}

}  // namespace sparktrace::loadgen
