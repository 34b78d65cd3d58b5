#pragma once
// A small declarative command-line parser shared by every subcommand. Each flag may also come from
// the environment as SPARKTRACE_<NAME> (upper-case, '-' → '_'); the command line wins. Errors name
// the flag so that `main` can print them and exit 2.

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sparktrace {

struct FlagSpec {
  std::string name;           // without dashes: "max-message-bytes"
  std::string value_name;     // "BYTES"; empty makes it a boolean switch
  std::string default_value;  // shown in --help and returned when unset
  std::string help;
  bool required = false;
  bool repeatable = false;  // may be given several times; env value is comma-separated
};

class ParsedFlags {
 public:
  // The last value given (or the default); repeatable flags: see GetAll.
  const std::string& Get(std::string_view name) const;
  const std::vector<std::string>& GetAll(std::string_view name) const;
  bool GetBool(std::string_view name) const;
  // True when the flag came from the command line or the environment, not the default.
  bool IsSet(std::string_view name) const;

  const std::vector<std::string>& positional() const { return positional_; }

 private:
  friend Result<ParsedFlags> ParseFlags(std::span<const FlagSpec>, std::span<const std::string>,
                                        const std::function<std::optional<std::string>(const std::string&)>&);
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
  std::map<std::string, std::string, std::less<>> defaults_;
  std::vector<std::string> positional_;
};

using EnvironmentLookup = std::function<std::optional<std::string>(const std::string&)>;

// Reads the process environment.
std::optional<std::string> ProcessEnvironment(const std::string& name);

// "SPARKTRACE_MAX_MESSAGE_BYTES" for "max-message-bytes".
std::string FlagEnvironmentName(std::string_view flag_name);

// Parses `args` (without the program and subcommand names). `--` ends the flags.
Result<ParsedFlags> ParseFlags(std::span<const FlagSpec> specs, std::span<const std::string> args,
                               const EnvironmentLookup& environment = ProcessEnvironment);

// True when args contain -h or --help before any `--`.
bool WantsHelp(std::span<const std::string> args);

// "--<flag>: <cause>", the form every flag error takes (exit 2); a cause that already names the flag
// (some value parsers do) is kept as it is.
Error FlagError(std::string_view flag, const Error& cause);

// The "Flags:" block of a --help text, one flag per entry with its default and env name.
std::string FormatFlagHelp(std::span<const FlagSpec> specs);

}  // namespace sparktrace
