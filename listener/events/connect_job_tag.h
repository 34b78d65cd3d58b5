#pragma once
// The Spark Connect operation job tag, which joins a Connect operation to its Spark jobs and SQL
// executions:
//
//   SparkConnect_OperationTag_User_<userId>_Session_<sessionId>_Operation_<operationId>
//
// found in a job's spark.job.tags property, in SparkListenerSQLExecutionStart.jobTags and, exactly,
// in the jobTag of the SparkListenerConnectOperation* events. Spark 3.5.0 and 3.5.1 wrote user and
// session the other way round (User_<sessionId>_Session_<userId>; fixed by SPARK-47921).
//
// Parsed by the fixed prefix and the "_Operation_" marker, never by splitting on '_': user ids are
// free text and may contain '_' (even "_Session_"). Session and operation ids are UUIDs in every
// Spark Connect client; where a UUID is found tells which order the tag uses.
//
// Pure functions; thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparktrace::listener::events {

inline constexpr std::string_view kConnectOperationTagPrefix = "SparkConnect_OperationTag_";

// The order of user and session in a tag.
enum class ConnectJobTagOrder {
  kDetect,        // decide from where the session UUID is (see ParseConnectJobTag)
  kUserFirst,     // User_<userId>_Session_<sessionId>: Spark 3.5.2+ and 4.x
  kSessionFirst,  // User_<sessionId>_Session_<userId>: Spark 3.5.0 and 3.5.1
};

struct ConnectJobTag {
  std::string user_id;
  std::string session_id;
  std::string operation_id;
  // True when the tag was read as User_<sessionId>_Session_<userId> (Spark 3.5.0/3.5.1).
  bool user_session_swapped = false;
};

// Parses an operation tag; nullopt for any other string (session tags
// "SparkConnect_SessionTag_...", user tags, tags of other origins, truncated or empty parts).
//
// The operation id is what follows the last "_Operation_"; it must be non-empty and free of '_'
// (UUIDs are). With kDetect, the remaining "<a>_Session_<b>" is read as user first when the part
// after the last "_Session_" is a UUID; else as session first (3.5.0/3.5.1) when the part before
// the first "_Session_" is a UUID; else (hand-written ids) as user first, split at the last
// "_Session_". A tag whose user id is itself a UUID is ambiguous; pass the order the Spark
// version implies (ConnectJobTagOrderForSparkVersion) when it is known.
std::optional<ConnectJobTag> ParseConnectJobTag(std::string_view tag,
                                                ConnectJobTagOrder order = ConnectJobTagOrder::kDetect);

// The order a Spark version writes: kSessionFirst for "3.5.0" and "3.5.1" (with any suffix such
// as "3.5.1-amzn-0"), kUserFirst for any other parseable version, kDetect when unknown/empty.
ConnectJobTagOrder ConnectJobTagOrderForSparkVersion(std::string_view spark_version);

// Splits a spark.job.tags value. Spark joins the tags with ',' and a tag cannot contain ',' or be
// empty, so this splits at ',' and drops empty pieces; nothing is trimmed (tags may contain
// spaces, e.g. "broadcast exchange (runId ...)"). The views point into `joined_tags`.
std::vector<std::string_view> SplitJobTags(std::string_view joined_tags);

// True for a canonical 8-4-4-4-12 hexadecimal UUID (either case).
bool IsUuid(std::string_view text);

}  // namespace sparktrace::listener::events
