// sparktrace-listener-parse-bench: how fast one event-log line becomes a SparkEvent.
//
// Loads every real plain (uncompressed) event log under the data directory into one buffer with
// kEventLinePadding spare bytes at its end, then, in each of --runs rounds, parses every line
// --passes times with each contender, interleaved so machine noise hits all alike:
//   sparktrace_in_place  EventParser::Parse(line, readable_bytes): lines read where they are;
//   sparktrace_copy      EventParser::Parse(line): each line copied into the parser's buffer;
//   nlohmann_baseline    nlohmann::json::parse(line) + the "Event" lookup: a naive DOM parser;
//   sparktrace_parse_correlate
//                        what the proxy's feed does with a log: parse in place, apply every event
//                        to one ApplicationModel per file, then compute the application's phases and,
//                        for each Spark Connect operation, its jobs and phases.
//   sparktrace_in_place_sql, sparktrace_parse_correlate_sql
//                        the same with the SQL operator metrics read (plans, task accumulables,
//                        EventParserOptions::sql_metrics), as the feeds (feed/feed_parser_options.h)
//                        and `sparktrace diagnose` read logs; the four above read without them, as
//                        the parser did before them (issue 31's budget compares the two).
// Prints one JSON object on stdout: medians over the runs of MB/s (1 MB = 10^6 bytes) and lines/s,
// by wall clock and by this thread's CPU time (the latter is steadier on a shared machine).
// Single thread, one core. The target, >= 300 MB/s on one core, is for parse + correlate.
//
// Usage: sparktrace-listener-parse-bench [--data-dir DIR] [--runs N] [--passes N] [--include-compressed]
//                                        [--only NAME[,NAME...]]
//   --only runs just the named contenders (to profile one of them, e.g. under `perf record`).
//   DIR defaults to $SPARKTRACE_DATA_DIR, else the shared/data directory next to the source tree.
//   --include-compressed adds the .zstd/.gz logs (decoded once, up front, by the zstd and gzip
//   programs): 325 MB dominated by task events, against 6 MB of plain logs.

#include <simdjson.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"
#include "listener/events/event_parser.h"

namespace {

namespace fs = std::filesystem;
using sparktrace::listener::events::EventParser;
using sparktrace::listener::events::kEventLinePadding;

struct Options {
  fs::path data_dir;
  int runs = 7;
  int passes = 20;
  bool include_compressed = false;
  std::vector<std::string> only;  // contender names; empty: all
};

// Every line of every log, in one buffer that ends with kEventLinePadding spare bytes.
struct Corpus {
  std::string buffer;
  std::vector<std::string_view> lines;
  std::vector<std::string> files;
  std::vector<std::size_t> file_line_ends;  // per file, the index one past its last line
  std::size_t line_bytes = 0;               // bytes of JSON, without the '\n's
};

bool IsCompressed(const fs::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".zstd" || extension == ".gz";
}

bool IsPlainEventLog(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return in.get() == '{';  // also skips the empty appstatus_* markers of rolling logs
}

// Decoded by the zstd/gzip programs: codecs are not what this benchmark measures.
std::string Decompress(const fs::path& path) {
  const std::string command =
      std::string(path.extension() == ".zstd" ? "zstd -dcq" : "gzip -dc") + " -- '" + path.string() + "'";
  std::string content;
  if (path.string().find('\'') != std::string::npos) return content;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return content;
  char chunk[1 << 16];
  std::size_t read = 0;
  while ((read = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) content.append(chunk, read);
  if (pclose(pipe) != 0) content.clear();
  return content;
}

Corpus LoadCorpus(const fs::path& data_dir, bool include_compressed) {
  Corpus corpus;
  std::vector<std::size_t> file_ends;  // buffer offset one past each file
  // The real logs (README.md, README-rapids.md); spark-events-derived holds generated copies.
  for (const char* subdir : {"spark-events", "spark-events-broken", "spark-events-problems"}) {
    const fs::path root = data_dir / subdir;
    if (!fs::is_directory(root)) continue;
    std::vector<fs::path> paths;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file()) continue;
      const bool wanted = IsCompressed(entry.path()) ? include_compressed : IsPlainEventLog(entry.path());
      if (wanted) paths.push_back(entry.path());
    }
    std::sort(paths.begin(), paths.end());
    for (const fs::path& path : paths) {
      std::string content;
      if (IsCompressed(path)) {
        content = Decompress(path);
      } else {
        std::ifstream in(path, std::ios::binary);
        content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
      if (content.empty()) {
        std::fprintf(stderr, "skipping %s: empty or not decodable\n", path.c_str());
        continue;
      }
      if (content.back() != '\n') content += '\n';
      corpus.buffer += content;
      corpus.files.push_back(fs::relative(path, data_dir).string());
      file_ends.push_back(corpus.buffer.size());
    }
  }
  const std::size_t content_size = corpus.buffer.size();
  corpus.buffer.append(kEventLinePadding, '\0');
  std::size_t start = 0;
  std::size_t file = 0;
  while (start < content_size) {
    std::size_t end = corpus.buffer.find('\n', start);
    if (end == std::string::npos || end > content_size) end = content_size;
    if (end > start) {
      corpus.lines.emplace_back(corpus.buffer.data() + start, end - start);
      corpus.line_bytes += end - start;
    }
    start = end + 1;
    // Every file ends with a '\n', so a file boundary is always a line boundary.
    while (file < file_ends.size() && start >= file_ends[file]) {
      corpus.file_line_ends.push_back(corpus.lines.size());
      ++file;
    }
  }
  return corpus;
}

double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

struct Sample {
  double wall_seconds = 0;
  double cpu_seconds = 0;
};

// What a contender saw, so the work cannot be optimised away and the contenders can be compared.
struct Outcomes {
  std::size_t parsed = 0;
  std::size_t ignored = 0;
  std::size_t errors = 0;
};

template <typename ParseAll>
Sample Measure(ParseAll&& parse_all) {
  const auto wall_start = std::chrono::steady_clock::now();
  const double cpu_start = ThreadCpuSeconds();
  parse_all();
  Sample sample;
  sample.cpu_seconds = ThreadCpuSeconds() - cpu_start;
  sample.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return sample;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

void Count(const sparktrace::Result<sparktrace::listener::events::SparkEvent>& result, Outcomes& outcomes) {
  if (!result.ok()) {
    ++outcomes.errors;
  } else if (std::holds_alternative<sparktrace::listener::events::IgnoredEvent>(*result)) {
    ++outcomes.ignored;
  } else {
    ++outcomes.parsed;
  }
}

// What the feed does with one log: every event into the application's model, then the joins and
// phases its spans need. Returns a figure of the results so the work cannot be optimised away.
std::size_t CorrelateLog(EventParser& parser, std::span<const std::string_view> lines, const char* buffer_end,
                         Outcomes& outcomes) {
  sparktrace::listener::correlate::ApplicationModel model;
  for (std::string_view line : lines) {
    auto event = parser.Parse(line, static_cast<std::size_t>(buffer_end - line.data()));
    Count(event, outcomes);
    if (event.ok()) model.Apply(std::move(*event));
  }
  std::size_t figure = model.jobs().size() + model.stages().size();
  if (const auto phases = sparktrace::listener::correlate::ApplicationPhases(model))
    figure += phases->intervals.size();
  for (const auto& [operation_id, operation] : model.operations()) {
    figure += model.JobsOfOperation(operation_id).size();
    if (const auto phases = sparktrace::listener::correlate::OperationPhases(model, operation)) {
      figure += phases->intervals.size();
    }
  }
  return figure;
}

fs::path DefaultDataDir() {
  if (const char* from_environment = std::getenv("SPARKTRACE_DATA_DIR")) return from_environment;
  return SPARKTRACE_DEFAULT_DATA_DIR;
}

bool ParseOptions(int argc, char** argv, Options& options) {
  options.data_dir = DefaultDataDir();
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--include-compressed") {
      options.include_compressed = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    if (flag == "--data-dir") {
      options.data_dir = value;
    } else if (flag == "--runs") {
      options.runs = std::atoi(value);
    } else if (flag == "--passes") {
      options.passes = std::atoi(value);
    } else if (flag == "--only") {
      for (std::string_view rest = value; !rest.empty();) {
        const std::size_t comma = std::min(rest.find(','), rest.size());
        options.only.emplace_back(rest.substr(0, comma));
        rest.remove_prefix(std::min(comma + 1, rest.size()));
      }
    } else {
      return false;
    }
  }
  return options.runs >= 1 && options.passes >= 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, options)) {
    std::fprintf(stderr, "usage: %s [--data-dir DIR] [--runs N] [--passes N] [--include-compressed] [--only NAME,...]\n",
                 argv[0]);
    return 2;
  }
  const Corpus corpus = LoadCorpus(options.data_dir, options.include_compressed);
  if (corpus.lines.empty()) {
    std::fprintf(stderr, "no plain event logs under %s (set --data-dir or SPARKTRACE_DATA_DIR)\n",
                 options.data_dir.c_str());
    return 1;
  }
  const char* const buffer_end = corpus.buffer.data() + corpus.buffer.size();

  struct Contender {
    const char* name;
    std::vector<double> wall_seconds;
    std::vector<double> cpu_seconds;
    Outcomes outcomes;  // of the last pass
  };
  std::vector<Contender> contenders = {{"sparktrace_in_place", {}, {}, {}},
                                       {"sparktrace_copy", {}, {}, {}},
                                       {"nlohmann_baseline", {}, {}, {}},
                                       {"sparktrace_parse_correlate", {}, {}, {}},
                                       {"sparktrace_in_place_sql", {}, {}, {}},
                                       {"sparktrace_parse_correlate_sql", {}, {}, {}}};
  // The parser without the SQL operator metrics (as before them) and with them (the feeds', diagnose's).
  sparktrace::listener::events::EventParserOptions without_sql_options;
  without_sql_options.sql_metrics = false;
  EventParser parser(without_sql_options);
  EventParser sql_parser;
  std::size_t checksum = 0;

  auto run_contender = [&](std::size_t index) {
    Outcomes outcomes;
    for (int pass = 0; pass < options.passes; ++pass) {
      outcomes = {};
      if (index == 3 || index == 5) {
        EventParser& correlating = index == 3 ? parser : sql_parser;
        std::size_t first = 0;
        for (std::size_t end : corpus.file_line_ends) {
          checksum += CorrelateLog(correlating, std::span(corpus.lines).subspan(first, end - first), buffer_end,
                                   outcomes);
          first = end;
        }
        continue;
      }
      for (std::string_view line : corpus.lines) {
        if (index == 0 || index == 4) {
          EventParser& in_place = index == 0 ? parser : sql_parser;
          Count(in_place.Parse(line, static_cast<std::size_t>(buffer_end - line.data())), outcomes);
        } else if (index == 1) {
          Count(parser.Parse(line), outcomes);
        } else {
          // The naive way: a DOM of the whole line, then the one lookup every reader needs.
          const nlohmann::json event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
          const auto type = event.is_object() ? event.find("Event") : event.end();
          if (event.is_discarded() || type == event.end() || !type->is_string()) {
            ++outcomes.errors;
          } else {
            ++outcomes.parsed;
            checksum += type->get_ref<const std::string&>().size();
          }
        }
      }
    }
    contenders[index].outcomes = outcomes;
  };

  if (!options.only.empty()) {
    for (const std::string& name : options.only) {
      if (std::none_of(contenders.begin(), contenders.end(),
                       [&](const Contender& contender) { return name == contender.name; })) {
        std::fprintf(stderr, "--only: no contender named %s\n", name.c_str());
        return 2;
      }
    }
  }
  auto selected = [&](std::size_t index) {
    return options.only.empty() || std::find(options.only.begin(), options.only.end(), contenders[index].name) !=
                                       options.only.end();
  };

  run_contender(0);  // warm-up: page in the corpus, grow the parser's buffers
  for (int run = 0; run < options.runs; ++run) {
    for (std::size_t index = 0; index < contenders.size(); ++index) {
      if (!selected(index)) continue;
      const Sample sample = Measure([&] { run_contender(index); });
      contenders[index].wall_seconds.push_back(sample.wall_seconds);
      contenders[index].cpu_seconds.push_back(sample.cpu_seconds);
    }
  }

  const double bytes_per_run = static_cast<double>(corpus.line_bytes) * options.passes;
  const double lines_per_run = static_cast<double>(corpus.lines.size()) * options.passes;
  nlohmann::ordered_json report;
  report["benchmark"] = "listener_parse";
  report["data_dir"] = options.data_dir.string();
  report["corpus"] = options.include_compressed ? "plain and compressed real logs" : "plain real logs";
  report["files"] = corpus.files.size();
  report["bytes"] = corpus.line_bytes;
  report["lines"] = corpus.lines.size();
  report["runs"] = options.runs;
  report["passes_per_run"] = options.passes;
  report["threads"] = 1;
  report["simdjson_implementation"] = simdjson::get_active_implementation()->name();
  std::map<std::string, double> cpu_mb_per_s;
  for (const Contender& contender : contenders) {
    if (contender.wall_seconds.empty()) continue;
    const double wall = Median(contender.wall_seconds);
    const double cpu = Median(contender.cpu_seconds);
    nlohmann::ordered_json entry;
    entry["mb_per_s_median"] = bytes_per_run / wall / 1e6;
    entry["events_per_s_median"] = lines_per_run / wall;
    entry["cpu_mb_per_s_median"] = bytes_per_run / cpu / 1e6;
    entry["cpu_events_per_s_median"] = lines_per_run / cpu;
    entry["wall_seconds_per_run"] = contender.wall_seconds;
    entry["lines_parsed"] = contender.outcomes.parsed;
    entry["lines_ignored"] = contender.outcomes.ignored;
    entry["lines_malformed"] = contender.outcomes.errors;
    report["results"][contender.name] = entry;
    cpu_mb_per_s[contender.name] = bytes_per_run / cpu / 1e6;
  }
  // A ratio of two contenders' CPU throughput, when both ran.
  auto ratio = [&](const char* key, const char* numerator, const char* denominator) {
    if (cpu_mb_per_s.contains(numerator) && cpu_mb_per_s.contains(denominator))
      report[key] = cpu_mb_per_s[numerator] / cpu_mb_per_s[denominator];
  };
  ratio("speedup_in_place_vs_nlohmann_cpu", "sparktrace_in_place", "nlohmann_baseline");
  ratio("speedup_copy_vs_nlohmann_cpu", "sparktrace_copy", "nlohmann_baseline");
  ratio("correlate_cost_vs_parse_in_place_cpu", "sparktrace_in_place", "sparktrace_parse_correlate");
  // The SQL operator metrics' price (issue 31: at most 10 %, i.e. these >= 0.9).
  ratio("sql_in_place_vs_in_place_cpu", "sparktrace_in_place_sql", "sparktrace_in_place");
  ratio("sql_parse_correlate_vs_parse_correlate_cpu", "sparktrace_parse_correlate_sql",
        "sparktrace_parse_correlate");
  report["target_parse_correlate_mb_per_s"] = 300;
  report["checksum"] = checksum;
  report["files_list"] = corpus.files;
  std::printf("%s\n", report.dump(2).c_str());
  return 0;
}
