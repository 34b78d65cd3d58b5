#include "common/flags.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace sparktrace {
namespace {

const FlagSpec* FindSpec(std::span<const FlagSpec> specs, std::string_view name) {
  auto it = std::find_if(specs.begin(), specs.end(), [&](const FlagSpec& s) { return s.name == name; });
  return it == specs.end() ? nullptr : &*it;
}

Result<bool> ParseBool(std::string_view flag, std::string_view text) {
  if (text == "true" || text == "1" || text == "yes") return true;
  if (text == "false" || text == "0" || text == "no") return false;
  return InvalidArgument("--" + std::string(flag) + ": '" + std::string(text) + "' is not true or false");
}

std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

}  // namespace

const std::string& ParsedFlags::Get(std::string_view name) const {
  if (auto it = values_.find(name); it != values_.end() && !it->second.empty()) return it->second.back();
  static const std::string kEmpty;
  auto it = defaults_.find(name);
  return it == defaults_.end() ? kEmpty : it->second;
}

const std::vector<std::string>& ParsedFlags::GetAll(std::string_view name) const {
  static const std::vector<std::string> kNone;
  auto it = values_.find(name);
  return it == values_.end() ? kNone : it->second;
}

bool ParsedFlags::GetBool(std::string_view name) const { return Get(name) == "true"; }

bool ParsedFlags::IsSet(std::string_view name) const { return values_.contains(name); }

std::optional<std::string> ProcessEnvironment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string FlagEnvironmentName(std::string_view flag_name) {
  std::string env = "SPARKTRACE_";
  for (char c : flag_name) {
    env += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return env;
}

bool WantsHelp(std::span<const std::string> args) {
  for (const auto& arg : args) {
    if (arg == "--") return false;
    if (arg == "-h" || arg == "--help") return true;
  }
  return false;
}

Result<ParsedFlags> ParseFlags(std::span<const FlagSpec> specs, std::span<const std::string> args,
                               const EnvironmentLookup& environment) {
  ParsedFlags parsed;
  for (const auto& spec : specs) {
    parsed.defaults_[spec.name] = spec.value_name.empty() && spec.default_value.empty() ? "false" : spec.default_value;
  }

  std::map<std::string, std::vector<std::string>, std::less<>> from_command_line;
  bool flags_ended = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_ended || !arg.starts_with("-") || arg == "-") {
      parsed.positional_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_ended = true;
      continue;
    }
    if (!arg.starts_with("--")) return InvalidArgument("unknown flag '" + arg + "' (flags start with --)");
    std::string_view body = std::string_view(arg).substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = body.find('='); eq != std::string_view::npos) {
      inline_value = std::string(body.substr(eq + 1));
      body = body.substr(0, eq);
    }
    const FlagSpec* spec = FindSpec(specs, body);
    if (spec == nullptr) return InvalidArgument("unknown flag --" + std::string(body) + " (see --help)");

    std::string value;
    if (spec->value_name.empty()) {
      auto as_bool = ParseBool(spec->name, inline_value.value_or("true"));
      if (!as_bool.ok()) return as_bool.error();
      value = *as_bool ? "true" : "false";
    } else if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return InvalidArgument("--" + spec->name + " needs a value (" + spec->value_name + ")");
    }
    auto& slot = from_command_line[spec->name];
    if (!spec->repeatable) slot.clear();
    slot.push_back(std::move(value));
  }

  for (const auto& spec : specs) {
    if (auto it = from_command_line.find(spec.name); it != from_command_line.end()) {
      parsed.values_[spec.name] = std::move(it->second);
      continue;
    }
    const std::string env_name = FlagEnvironmentName(spec.name);
    if (auto env_value = environment(env_name)) {
      if (spec.value_name.empty()) {
        auto as_bool = ParseBool(spec.name, *env_value);
        if (!as_bool.ok()) return InvalidArgument(env_name + ": '" + *env_value + "' is not true or false");
        parsed.values_[spec.name] = {*as_bool ? "true" : "false"};
      } else if (spec.repeatable) {
        parsed.values_[spec.name] = SplitComma(*env_value);
      } else {
        parsed.values_[spec.name] = {*env_value};
      }
      continue;
    }
    if (spec.required) {
      return InvalidArgument("--" + spec.name + " is required (or set " + env_name + ")");
    }
  }
  return parsed;
}

std::string FormatFlagHelp(std::span<const FlagSpec> specs) {
  std::string text = "Flags (each may also be set as SPARKTRACE_<FLAG> in the environment):\n";
  for (const auto& spec : specs) {
    std::string head = "  --" + spec.name;
    if (!spec.value_name.empty()) head += " " + spec.value_name;
    text += head;
    text += head.size() < 34 ? std::string(34 - head.size(), ' ') : "\n" + std::string(34, ' ');
    text += spec.help;
    if (spec.required) text += " (required)";
    if (!spec.default_value.empty()) text += " [default: " + spec.default_value + "]";
    if (spec.repeatable) text += " (repeatable)";
    text += "\n";
  }
  return text;
}

Error FlagError(std::string_view flag, const Error& cause) {
  const std::string prefix = "--" + std::string(flag);
  if (cause.message.starts_with(prefix)) return cause;
  return InvalidArgument(prefix + ": " + cause.message);
}

}  // namespace sparktrace
