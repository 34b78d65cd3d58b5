"""The module rules hold on the tree, and each rule rejects a small tree that breaks it."""

import os
import unittest

import module_arrows

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# A minimal tree that keeps every rule: tracing on common, the feed on tracing.
GOOD_SOURCES = {
    "common/result.h": "#pragma once\n#include <string>\n",
    "common/result.cc": '#include "common/result.h"\n',
    "tracing/span.h": '#pragma once\n#include "common/result.h"\n',
    "tracing/span.cc": '#include "tracing/span.h"\n',
    "feed/trace_emitter.h": '#pragma once\n#include "tracing/span.h"\n',
    "feed/trace_emitter.cc": '#include "feed/trace_emitter.h"\n#include "common/result.h"\n',
    "cli/main.cc": '#include "feed/trace_emitter.h"\n',
}
GOOD_CMAKE = [
    "target_link_libraries(sparktrace_common PUBLIC spdlog::spdlog Threads::Threads)",
    "target_link_libraries(sparktrace_tracing PUBLIC sparktrace_common)",
    "target_link_libraries(sparktrace_feed PUBLIC sparktrace_tracing PRIVATE sparktrace_common)",
    "target_link_libraries(sparktrace_cli PRIVATE sparktrace_feed)",
    "target_link_libraries(sparktrace PRIVATE sparktrace_cli)",
]


def with_changes(sources=None, cmake=None):
    tree = dict(GOOD_SOURCES)
    tree.update(sources or {})
    return module_arrows.breaches(tree, cmake if cmake is not None else GOOD_CMAKE)


class TheTreeTest(unittest.TestCase):
    def test_the_tree_keeps_the_module_rules(self):
        problems = module_arrows.breaches(*module_arrows.read_tree(ROOT))
        self.assertEqual(problems, [], "\n" + "\n".join(problems))

    def test_no_source_file_is_over_500_lines(self):
        problems = module_arrows.overlong(module_arrows.line_counts(ROOT))
        self.assertEqual(problems, [], "\n" + "\n".join(problems))

    def test_every_module_folder_exists_with_a_cmake_target(self):
        sources, cmake_texts = module_arrows.read_tree(ROOT)
        links = module_arrows.parse_links(cmake_texts)
        for folder, (targets, _floor) in module_arrows.MODULES.items():
            self.assertTrue(any(path.startswith(folder + "/") for path in sources), folder)
            for target in targets:
                self.assertIn(target, links, f"{folder}/: {target} links nothing")


class EachRuleFailsTest(unittest.TestCase):
    def test_the_minimal_tree_is_clean(self):
        self.assertEqual(with_changes(), [])

    def test_an_include_up_a_floor_is_refused(self):
        problems = with_changes({"tracing/span.cc": '#include "tracing/span.h"\n#include "feed/trace_emitter.h"\n'})
        self.assertTrue(any("tracing/span.cc: includes feed/trace_emitter.h, which is not below tracing/" in p
                            for p in problems), problems)

    def test_an_include_across_one_floor_is_refused(self):
        # diagnose/what_if and admin share a floor: neither stands on the other.
        problems = with_changes({"admin/routes.cc": '#include "diagnose/what_if/what_if.h"\n'},
                                GOOD_CMAKE + ["target_link_libraries(sparktrace_admin PRIVATE sparktrace_what_if)"])
        self.assertTrue(any("not below admin/" in p for p in problems), problems)

    def test_the_proxy_may_include_only_common(self):
        problems = with_changes({"proxy/relay.cc": '#include "spark_connect/method.h"\n'},
                                GOOD_CMAKE + ["target_link_libraries(sparktrace_proxy PRIVATE sparktrace_spark_connect)"])
        self.assertIn("proxy/relay.cc: proxy/ includes spark_connect/method.h; it may include only common/", problems)

    def test_an_include_without_its_link_is_refused(self):
        cmake = [c.replace(" PRIVATE sparktrace_common", "") for c in GOOD_CMAKE]
        problems = with_changes(cmake=cmake)
        self.assertIn("feed/ includes sparktrace_common's headers but does not link it", problems)

    def test_a_third_party_include_without_its_link_is_refused(self):
        problems = with_changes({"tracing/exporter.cc": "#include <grpcpp/grpcpp.h>\n"})
        self.assertIn("tracing/ includes gRPC::grpc++'s headers but does not link it", problems)

    def test_a_public_dependency_no_header_needs_is_refused(self):
        cmake = GOOD_CMAKE + ["target_link_libraries(sparktrace_tracing PUBLIC gRPC::grpc++)"]
        problems = with_changes({"tracing/exporter.cc": "#include <grpcpp/grpcpp.h>\n"}, cmake)
        self.assertIn("tracing/ links gRPC::grpc++ PUBLIC but no header other modules see includes it: make it PRIVATE",
                      problems)

    def test_a_private_dependency_a_visible_header_needs_is_refused(self):
        cmake = [c.replace("sparktrace_feed PUBLIC sparktrace_tracing PRIVATE", "sparktrace_feed PRIVATE sparktrace_tracing")
                 for c in GOOD_CMAKE]
        problems = with_changes(cmake=cmake)
        self.assertIn("feed/: a header other modules see includes sparktrace_tracing, so it must be PUBLIC", problems)

    def test_a_header_only_the_module_sees_may_include_a_private_dependency(self):
        # tracing/store's SQLite statement wrapper: <sqlite3.h> in a header no other module includes.
        sources = {"tracing/sqlite_statement.h": "#pragma once\n#include <sqlite3.h>\n",
                   "tracing/sqlite_statement.cc": '#include "tracing/sqlite_statement.h"\n'}
        cmake = GOOD_CMAKE + ["target_link_libraries(sparktrace_tracing PRIVATE PkgConfig::SQLITE3)"]
        self.assertEqual(with_changes(sources, cmake), [])
        # Once another module's file includes it, the dependency is the module's users' too.
        sources["feed/trace_emitter.cc"] = '#include "tracing/sqlite_statement.h"\n#include "common/result.h"\n'
        self.assertIn("tracing/: a header other modules see includes PkgConfig::SQLITE3, so it must be PUBLIC",
                      with_changes(sources, cmake))

    def test_a_header_only_helper_charges_its_includer(self):
        # common/libevent_handles.h has no code to link: whoever includes it links libevent.
        sources = {"common/libevent_handles.h": "#pragma once\n#include <event2/event.h>\n",
                   "tracing/span.cc": '#include "tracing/span.h"\n#include "common/libevent_handles.h"\n'}
        self.assertIn("tracing/ includes PkgConfig::LIBEVENT's headers but does not link it", with_changes(sources))
        cmake = GOOD_CMAKE + ["target_link_libraries(sparktrace_tracing PRIVATE PkgConfig::LIBEVENT)"]
        self.assertEqual(with_changes(sources, cmake), [])

    def test_a_long_file_is_named_and_only_checked_files_count(self):
        counts = {"tracing/store/span_spool.cc": 501, "tests/unit/proxy/relay_test.cc": 900,
                  "web/assets/gantt.js": 500, "bench/proxy_bench.py": 1400, "bench/store_bench.cc": 900,
                  "common/result.h": 20}
        self.assertEqual(module_arrows.overlong(counts),
                         ["bench/store_bench.cc: 900 lines (at most 500)",
                          "tests/unit/proxy/relay_test.cc: 900 lines (at most 500)",
                          "tracing/store/span_spool.cc: 501 lines (at most 500)"])

    def test_the_keywordless_signature_counts_as_public(self):
        links = module_arrows.parse_links(["target_link_libraries(sparktrace_x sparktrace_common)  # why"])
        self.assertEqual(links["sparktrace_x"].public, {"sparktrace_common"})


if __name__ == "__main__":
    unittest.main()
