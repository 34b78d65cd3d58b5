"""The house's module rules, checked against the source tree and its CMakeLists.txt files.

The rules (../shared/ARCHITECTURE.md, README "How it works"):
- each module is its own CMake library;
- every C++ file is in a module folder (MODULES below), or in a folder that is not a module
  (NOT_MODULES: tests, benchmarks, fuzzers, generated code);
- arrows point one way: a module includes only modules of a lower floor (MODULES below); `proxy/`
  includes nothing but `common/`; no circles between modules, nor between files;
- a project header is included by its quoted path, never with angle brackets (which would hide it
  from these rules as a system header);
- a module's CMake targets link only modules of a lower floor (the same direction as its includes),
  even where nothing includes them;
- a module links what it includes, directly (no leaning on a dependency's dependencies);
- a dependency is PUBLIC exactly when a header of the module that other modules see includes it, else
  PRIVATE, so that a user of a module carries nothing of what the module uses inside (e.g. whoever
  includes tracing/span.h carries no gRPC, libevent or SQLite);
- a few headers stay free of a library even through what they include (KEPT_FREE: the codec owns
  nghttp2, so a relayed call compiles without it);
- no C++ or trace-view JavaScript file is over MAX_LINES lines;
- the page's ES modules (web/assets) import one way too, by the layers web_imports.py states.

Run as a script it prints every breach, then the include graphs' figures (arrows back up, circles),
and exits 1 when there is a breach; test_module_arrows.py runs it on the tree and on small broken
trees, so that each rule is seen to fail.
"""

import os
import re
import sys
from dataclasses import dataclass, field

import web_imports
from circles import circles

# Folder -> (CMake targets of that module, floor). A module may include only modules on lower floors.
# The floors follow the data flow: the relay and the wire decoders at the bottom, the span model,
# its exporters and stores, the driver's inputs, the rules, the feed, the trace view, the commands.
MODULES = {
    "common": (("sparktrace_common",), 0),
    "proxy": (("sparktrace_proxy",), 1),
    "spark_connect": (("sparktrace_spark_connect",), 1),
    "admin": (("sparktrace_admin",), 1),
    "sim/eventlog": (("sparktrace_sim_eventlog",), 1),
    "diagnose/what_if": (("sparktrace_what_if",), 1),
    "diagnose/cost": (("sparktrace_cost",), 1),
    "sim": (("sparktrace_sim",), 2),
    "tracing": (("sparktrace_tracing",), 2),
    "tracing/otlp": (("sparktrace_tracing_otlp",), 3),
    "diagnose/regression": (("sparktrace_regression",), 3),
    "tracing/store": (("sparktrace_tracing_store",), 3),
    "tracing/store/spool": (("sparktrace_store_spool",), 3),
    "tracing/store/sqlite": (("sparktrace_store_sqlite",), 4),
    "tracing/store/postgres": (("sparktrace_store_postgres",), 4),
    "tracing/store/export": (("sparktrace_store_exporter",), 4),
    "tracing/store/open": (("sparktrace_store_open",), 5),
    "tracing/connect": (("sparktrace_connect_tracing",), 3),
    "tracing/airflow": (("sparktrace_airflow_route",), 3),
    "listener/events": (("sparktrace_listener_events",), 3),
    "listener/eventlog": (("sparktrace_eventlog",), 3),
    "listener/rest": (("sparktrace_listener_rest",), 4),
    "listener/correlate": (("sparktrace_listener_correlate",), 4),
    "diagnose": (("sparktrace_diagnose",), 5),
    "feed": (("sparktrace_feed",), 6),
    "traceview": (("sparktrace_traceview",), 6),
    "cli": (("sparktrace_cli", "sparktrace"), 7),
}
# proxy/ stands alone: the relay must build and run with nothing of the tracing above it.
ONLY_COMMON = {"proxy"}
# Folders that are not modules (tests, benchmarks, fuzzers and generated code include anything).
NOT_MODULES = ("tests/", "bench/", "fuzz/", "build", "proto/", "integrations/", "web/", "docs/", "k8s/")

# Third-party headers -> the imported CMake target that provides them. spdlog (and its fmt) come with
# common/, which every module links.
THIRD_PARTY = [
    (re.compile(r"grpcpp/|grpc/"), "gRPC::grpc++"),
    (re.compile(r"event2/"), "PkgConfig::LIBEVENT"),
    (re.compile(r"nghttp2/"), "PkgConfig::NGHTTP2"),
    (re.compile(r"openssl/"), "OpenSSL::SSL"),
    (re.compile(r"zlib\.h$"), "ZLIB"),
    (re.compile(r"sqlite3\.h$"), "PkgConfig::SQLITE3"),
    (re.compile(r"libpq-fe\.h$"), "PkgConfig::LIBPQ"),
    (re.compile(r"simdjson\.h$"), "simdjson::simdjson"),
    (re.compile(r"yaml\.h$"), "PkgConfig::LIBYAML"),
    (re.compile(r"prometheus/"), "prometheus-cpp::core"),
    (re.compile(r"zstd\.h$"), "PkgConfig::ZSTD"),
    (re.compile(r"lz4(frame)?\.h$"), "PkgConfig::LZ4"),
    (re.compile(r"snappy"), "SNAPPY"),
]
# Spellings of one library under several target names (pkg-config module names differ per CMakeLists).
ALIASES = {
    "PkgConfig::ZLIB": "ZLIB",
    "ZLIB::ZLIB": "ZLIB",
    "${SPARKTRACE_SNAPPY_LIBRARY}": "SNAPPY",
}

# spdlog (fmt included) and threads come with common/, PUBLIC, for every module: the house's logging
# and the standard library's threads are not a dependency a module chooses.
PLATFORM = {"spdlog::spdlog", "Threads::Threads"}
# Header -> the third-party header prefixes it must not reach, directly or through the headers it
# includes. The codec owns nghttp2 (proxy/http2_connection): a relayed call speaks in stream verbs and
# RFC 9113 codes, and builds, and is tested, without the library.
KEPT_FREE = {
    "proxy/relayed_call.h": ("nghttp2/",),
    "proxy/http2_stream.h": ("nghttp2/",),
    "proxy/call_connection.h": ("nghttp2/",),
}

# Generated code included by quoted path -> its target (the simulator's Spark Connect stubs).
GENERATED = {"spark/": "sparktrace_sim_protos"}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
LINK = re.compile(r"target_link_libraries\(\s*([\w-]+)(.*?)\)", re.S)


@dataclass
class Links:
    public: set = field(default_factory=set)
    private: set = field(default_factory=set)

    def all(self):
        return self.public | self.private


def module_of(path):
    """The module (a MODULES key) a repository path belongs to, or None outside the modules."""
    if path.startswith(NOT_MODULES):
        return None
    best = None
    for folder in MODULES:
        if path.startswith(folder + "/") and (best is None or len(folder) > len(best)):
            best = folder
    return best


def target_of(name):
    return ALIASES.get(name, name)


# CMake target -> the module (a MODULES key) it builds.
MODULE_OF_TARGET = {target: folder for folder, (targets, _floor) in MODULES.items() for target in targets}


def arrow_breach(where, module, other, verb, what):
    """Why an arrow from module to other goes against the floors, or None; where verb ("includes",
    "links") what, e.g. "tracing/span.cc includes feed/trace_emitter.h"."""
    if other == module:
        return None
    if module in ONLY_COMMON and other != "common":
        return f"{where}: {module}/ {verb} {what}; it may {verb[:-1]} only common/"
    if MODULES[other][1] >= MODULES[module][1]:
        return (f"{where}: {verb} {what}, which is not below {module}/ "
                f"(floor {MODULES[other][1]} vs {MODULES[module][1]})")
    return None


def link_breaches(links):
    """Every link of a module's targets to a module that is not below it: a link points the way an
    include does, whether or not anything includes the linked module yet."""
    found = set()
    for module, (targets, _floor) in MODULES.items():
        for target in targets:
            for linked in sorted(links[target].all() if target in links else ()):
                if linked in MODULE_OF_TARGET and (
                        why := arrow_breach(target, module, MODULE_OF_TARGET[linked], "links", linked)):
                    found.add(why)
    return found


def parse_links(cmake_texts):
    """{target: Links} from the target_link_libraries calls of every CMakeLists.txt text given."""
    links = {}
    for text in cmake_texts:
        text = re.sub(r"#[^\n]*", "", text)
        for target, body in LINK.findall(text):
            entry = links.setdefault(target, Links())
            keyword = "public"  # the keyword-less signature is PUBLIC for a library
            for word in body.split():
                if word in ("PUBLIC", "INTERFACE"):
                    keyword = "public"
                elif word == "PRIVATE":
                    keyword = "private"
                else:
                    getattr(entry, keyword).add(target_of(word))
    return links


def third_party_target(header):
    for pattern, target in THIRD_PARTY:
        if pattern.search(header):
            return target
    return None


def public_headers(sources):
    """The headers other modules may see: those another module includes, and what they include of
    their own module, transitively. The rest are a module's own (e.g. tracing/store's SQLite
    statement wrapper), and what they include is the module's own business."""
    seen = set()
    todo = [header for path, text in sources.items() for bracket, header in INCLUDE.findall(text)
            if bracket == '"' and header in sources and module_of(path) not in (None, module_of(header))]
    while todo:
        header = todo.pop()
        if header in seen:
            continue
        seen.add(header)
        todo += [included for bracket, included in INCLUDE.findall(sources[header])
                 if bracket == '"' and included in sources and module_of(included) == module_of(header)]
    return seen


def header_only(path, sources):
    return path.endswith(".h") and path[:-2] + ".cc" not in sources


def third_party_of(header, sources):
    """The third-party targets a header-only header of ours stands on: whoever includes it links them
    (common/'s libevent handles and metric builders have no code of their own to link)."""
    if header not in sources or not header_only(header, sources):
        return []
    return [target for bracket, included in INCLUDE.findall(sources[header])
            if bracket == "<" and (target := third_party_target(included))]


def include_graphs(sources):
    """({module: modules it includes}, {file: files of ours it includes}) of the C++ sources."""
    modules, files = {}, {}
    for path, text in sources.items():
        included = {header for _bracket, header in INCLUDE.findall(text) if header in sources}
        files[path] = included
        if (module := module_of(path)) is not None:
            modules.setdefault(module, set()).update(
                other for header in included if (other := module_of(header)) not in (None, module))
    return modules, files


def circle_breaches(sources):
    modules, files = include_graphs(sources)
    return ({"modules that include each other in a circle: " + ", ".join(circle) for circle in circles(modules)}
            | {"files that include each other in a circle: " + ", ".join(circle) for circle in circles(files)})


def kept_free_breaches(sources):
    """Each KEPT_FREE header that reaches a library it must not, naming the header of ours that
    includes it."""
    found = set()
    for kept, prefixes in KEPT_FREE.items():
        seen, todo = set(), [kept]
        while todo:
            header = todo.pop()
            if header in seen or header not in sources:
                continue
            seen.add(header)
            for _bracket, included in INCLUDE.findall(sources[header]):
                if included.startswith(prefixes):
                    found.add(f"{kept} reaches <{included}> (through {header}); keep it to the codec")
                todo.append(included)
    return found


def summary(sources):
    """(modules, arrows between them, arrows back up, circles between modules, circles between files)."""
    modules, files = include_graphs(sources)
    back_up = sum(1 for module, others in modules.items() for other in others
                  if arrow_breach(module, module, other, "includes", other))
    return (len(modules), sum(len(others) for others in modules.values()), back_up,
            len(circles(modules)), len(circles(files)))


def breaches(sources, cmake_texts):
    """Every breach of the module rules, as one line each, sorted.

    sources: {repository path: text} of the C++ files; cmake_texts: the CMakeLists.txt texts.
    """
    links = parse_links(cmake_texts)
    visible = public_headers(sources)
    found = link_breaches(links) | circle_breaches(sources) | kept_free_breaches(sources)
    # module -> {dependency target: True when a header other modules see includes it}
    used = {}

    def use(module, dependency, from_public_header):
        uses = used.setdefault(module, {})
        uses[dependency] = uses.get(dependency, False) or from_public_header

    for path, text in sources.items():
        # Tests, benchmarks and fuzzers too: <…> would take a header of ours for a system one.
        found |= {f"{path}: includes the project header <{header}> with angle brackets; quote it"
                  for bracket, header in INCLUDE.findall(text)
                  if bracket == "<" and (header in sources or module_of(header) is not None)}
        module = module_of(path)
        if module is None:
            if not path.startswith(NOT_MODULES):
                found.add(f"{path}: outside every module folder; put it in the module whose job it does")
            continue
        public = path in visible
        for bracket, header in INCLUDE.findall(text):
            if bracket == "<" and module_of(header) is None:
                if not header_only(path, sources) and (dependency := third_party_target(header)):
                    use(module, dependency, public)
                continue
            for dependency in third_party_of(header, sources):
                use(module, dependency, public)
            if header.startswith(tuple(GENERATED)):
                use(module, GENERATED[header.split("/")[0] + "/"], public)
            other = module_of(header)
            if other is None or other == module:
                continue
            if why := arrow_breach(path, module, other, "includes", header):
                found.add(why)
            use(module, MODULES[other][0][0], public)
    for module, uses in sorted(used.items()):
        targets = MODULES[module][0]
        declared = Links()
        for target in targets:
            if target not in links:
                found.add(f"{module}/: no target_link_libraries for {target}")
                continue
            declared.public |= links[target].public
            declared.private |= links[target].private
        declared.public -= PLATFORM
        declared.private -= PLATFORM
        for dependency, from_public_header in sorted(uses.items()):
            if dependency not in declared.all():
                found.add(f"{module}/ includes {dependency}'s headers but does not link it")
            elif from_public_header and dependency not in declared.public:
                found.add(f"{module}/: a header other modules see includes {dependency}, so it must be PUBLIC")
        for dependency in sorted(declared.public):
            if not uses.get(dependency, False):
                found.add(f"{module}/ links {dependency} PUBLIC but no header other modules see includes "
                          "it: make it PRIVATE")
    return sorted(found)


# No source file is over this many lines: a file that long does more than one job (README "How it
# works"). Counted over all C++ (modules, tests, benchmarks, fuzzers) and the trace view's JavaScript;
# not over the Python harnesses and tests, nor the Airflow plugin, which is one file on purpose (it can
# be dropped alone into Airflow's plugins folder).
MAX_LINES = 500
LENGTH_CHECKED = re.compile(r"\.(cc|h)$|^web/.*\.m?js$")


def overlong(line_counts):
    """'path: N lines' for each checked file over MAX_LINES; line_counts: {repository path: lines}."""
    return sorted(f"{path}: {lines} lines (at most {MAX_LINES})" for path, lines in line_counts.items()
                  if LENGTH_CHECKED.search(path) and lines > MAX_LINES)


def tree_files(root):
    """(repository path, file path) of every file in the tree, outside dot folders, build folders and
    node_modules."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build", "node_modules"))]
        for name in files:
            path = os.path.join(folder, name)
            yield os.path.relpath(path, root), path


def line_counts(root):
    counts = {}
    for rel, path in tree_files(root):
        if LENGTH_CHECKED.search(rel):
            with open(path, "rb") as f:
                counts[rel] = f.read().count(b"\n")
    return counts


def read_tree(root):
    sources, cmake_texts = {}, []
    for rel, path in tree_files(root):
        if os.path.basename(rel) == "CMakeLists.txt" and not rel.startswith(NOT_MODULES):
            with open(path, encoding="utf-8") as f:
                cmake_texts.append(f.read())
        elif rel.endswith((".cc", ".h")):
            with open(path, encoding="utf-8", errors="replace") as f:
                sources[rel] = f.read()
    return sources, cmake_texts


def read_scripts(root):
    """{repository path: text} of the page's ES modules (web/assets)."""
    scripts = {}
    for rel, path in tree_files(root):
        rel = rel.replace(os.sep, "/")
        if web_imports.is_script(rel):
            with open(path, encoding="utf-8") as f:
                scripts[rel] = f.read()
    return scripts


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    sources, cmake_texts = read_tree(root)
    scripts = read_scripts(root)
    problems = breaches(sources, cmake_texts) + overlong(line_counts(root)) + web_imports.breaches(scripts)
    for line in problems:
        print(line)
    modules, arrows, back_up, module_circles, file_circles = summary(sources)
    print(f"C++ include graph: {modules} modules, {arrows} arrows between them, {back_up} back up, "
          f"{module_circles} circles between modules, {file_circles} between files", file=sys.stderr)
    scripts_count, imports, against, script_circles = web_imports.summary(scripts)
    print(f"web/assets import graph: {scripts_count} modules, {imports} imports, {against} against the layers, "
          f"{script_circles} circles", file=sys.stderr)
    print(f"{len(problems)} breach(es) of the module rules", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
