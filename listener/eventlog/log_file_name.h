#pragma once
// Event-log names as Spark's EventLogFileWriters make them (facts §1e). The name base is the
// application id (plus `_<attempt>`) after sanitising, which turns every '.' into '_', so a base never
// contains a dot and whatever follows the last dot is a codec suffix. The base is only a file name: the
// real application id is inside the log (SparkListenerApplicationStart), which is not this module's job.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "listener/eventlog/codec.h"

namespace sparktrace::listener::eventlog {

inline constexpr std::string_view kInProgressSuffix = ".inprogress";
inline constexpr std::string_view kRollingDirectoryPrefix = "eventlog_v2_";

// Single-file mode: `<base>[.<codec>]`, written as `<base>[.<codec>].inprogress` until the app stops.
struct SingleFileLogName {
  std::string base;          // "local-1642039451826"
  std::string final_name;    // the name once complete: "local-1642039451826.zstd"
  std::string codec_suffix;  // "zstd"; empty for plain; kept verbatim for messages about unknown codecs
  Codec codec = Codec::kNone;
  bool in_progress = false;
};

// nullopt for names that cannot be a log (empty base).
std::optional<SingleFileLogName> ParseSingleFileLogName(std::string_view file_name);

// Rolling mode: a directory `eventlog_v2_<base>`. Returns the base.
std::optional<std::string> ParseRollingDirectoryName(std::string_view directory_name);

// `events_<index>_<base>[.<codec>]`, plus `.compact` for files the History Server compacted.
struct RollingEventFileName {
  std::uint64_t index = 0;
  std::string codec_suffix;
  Codec codec = Codec::kNone;
  bool compacted = false;
};

std::optional<RollingEventFileName> ParseRollingEventFileName(std::string_view file_name,
                                                              std::string_view base);

// `appstatus_<base>.inprogress` while the application runs, `appstatus_<base>` once it stopped.
enum class AppStatusMarker { kInProgress, kComplete };

std::optional<AppStatusMarker> ParseAppStatusFileName(std::string_view file_name, std::string_view base);

}  // namespace sparktrace::listener::eventlog
