"""The module rules hold on the tree, and each rule rejects a small tree that breaks it."""

import os
import unittest

import module_arrows
import web_imports

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

    def test_the_page_modules_import_by_their_layers(self):
        scripts = module_arrows.read_scripts(ROOT)
        self.assertIn("web/assets/app.js", scripts)
        problems = web_imports.breaches(scripts)
        self.assertEqual(problems, [], "\n" + "\n".join(problems))

    def test_the_store_keeps_its_rooms_small(self):
        # tracing/store/ in rooms (issue 33): no folder of it holds more than 10 C++ files.
        for folder, _dirs, files in os.walk(os.path.join(ROOT, "tracing", "store")):
            cxx = [name for name in files if name.endswith((".h", ".cc"))]
            self.assertLessEqual(len(cxx), 10, os.path.relpath(folder, ROOT))

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

    def test_the_store_rooms_point_one_way(self):
        # The common store room stands under both backends, and one backend never on the other.
        store = {"tracing/store/span_store.h": '#pragma once\n#include "tracing/span.h"\n',
                 "tracing/store/sqlite/sqlite_span_store.h": '#pragma once\n#include "tracing/store/span_store.h"\n',
                 "tracing/store/postgres/postgres_span_store.h":
                     '#pragma once\n#include "tracing/store/span_store.h"\n',
                 "tracing/store/open/open_span_store.cc": '#include "tracing/store/sqlite/sqlite_span_store.h"\n'
                                                          '#include "tracing/store/postgres/postgres_span_store.h"\n'}
        cmake = GOOD_CMAKE + [
            "target_link_libraries(sparktrace_store_open PRIVATE sparktrace_store_sqlite sparktrace_store_postgres)",
            "target_link_libraries(sparktrace_tracing_store PUBLIC sparktrace_tracing)",
            "target_link_libraries(sparktrace_store_sqlite PUBLIC sparktrace_tracing_store)",
            "target_link_libraries(sparktrace_store_postgres PUBLIC sparktrace_tracing_store)"]
        self.assertEqual(with_changes(store, cmake), [])
        back_up = dict(store)
        back_up["tracing/store/span_store.h"] += '#include "tracing/store/sqlite/sqlite_span_store.h"\n'
        problems = with_changes(back_up, cmake)
        self.assertTrue(any("includes tracing/store/sqlite/sqlite_span_store.h, which is not below tracing/store/"
                            in p for p in problems), problems)
        across = dict(store)
        across["tracing/store/postgres/postgres_span_store.h"] += (
            '#include "tracing/store/sqlite/sqlite_span_store.h"\n')
        problems = with_changes(across, cmake)
        self.assertTrue(any("which is not below tracing/store/postgres/" in p for p in problems), problems)

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
        counts = {"tracing/store/spool/span_spool.cc": 501, "tests/unit/proxy/relay_test.cc": 900,
                  "web/assets/gantt.js": 500, "bench/proxy_bench.py": 1400, "bench/store_bench.cc": 900,
                  "common/result.h": 20}
        self.assertEqual(module_arrows.overlong(counts),
                         ["bench/store_bench.cc: 900 lines (at most 500)",
                          "tests/unit/proxy/relay_test.cc: 900 lines (at most 500)",
                          "tracing/store/spool/span_spool.cc: 501 lines (at most 500)"])

    def test_a_project_header_in_angle_brackets_is_refused(self):
        # <…> would pass for a system header and skip the floors: both are named.
        problems = with_changes({"tracing/span.cc": '#include "tracing/span.h"\n#include <feed/trace_emitter.h>\n'})
        self.assertIn("tracing/span.cc: includes the project header <feed/trace_emitter.h> with angle brackets; "
                      "quote it", problems)
        self.assertTrue(any("tracing/span.cc: includes feed/trace_emitter.h, which is not below tracing/" in p
                            for p in problems), problems)
        # Even down a floor, within the rules otherwise.
        problems = with_changes({"feed/trace_emitter.cc": '#include "feed/trace_emitter.h"\n#include <common/result.h>\n'})
        self.assertEqual(problems, ["feed/trace_emitter.cc: includes the project header <common/result.h> with "
                                    "angle brackets; quote it"])
        # And in a test, which is no module.
        problems = with_changes({"tests/unit/feed/emitter_test.cc": "#include <feed/trace_emitter.h>\n"})
        self.assertEqual(problems, ["tests/unit/feed/emitter_test.cc: includes the project header "
                                    "<feed/trace_emitter.h> with angle brackets; quote it"])

    def test_a_file_outside_every_module_folder_is_refused(self):
        problems = with_changes({"helpers/strings.cc": '#include "common/result.h"\n', "main.cc": "int main() {}\n"})
        self.assertEqual(problems, [
            "helpers/strings.cc: outside every module folder; put it in the module whose job it does",
            "main.cc: outside every module folder; put it in the module whose job it does"])
        # Tests, benchmarks and fuzzers are not modules and include anything (by quoted path).
        self.assertEqual(with_changes({"tests/unit/feed/emitter_test.cc": '#include "feed/trace_emitter.h"\n',
                                       "bench/span_bench.cc": '#include "tracing/span.h"\n'}), [])

    def test_a_link_up_a_floor_is_refused_even_where_nothing_includes_it(self):
        problems = with_changes(cmake=GOOD_CMAKE + ["target_link_libraries(sparktrace_tracing PRIVATE sparktrace_feed)"])
        self.assertEqual(problems, ["sparktrace_tracing: links sparktrace_feed, which is not below tracing/ "
                                    "(floor 6 vs 2)"])
        problems = with_changes(cmake=GOOD_CMAKE + [
            "target_link_libraries(sparktrace_proxy PRIVATE sparktrace_common sparktrace_spark_connect)"])
        self.assertEqual(problems, ["sparktrace_proxy: proxy/ links sparktrace_spark_connect; it may link only common/"])
        # Within one module (the executable on its library) is no arrow.
        self.assertEqual(with_changes(), [])

    def test_files_that_include_each_other_are_refused(self):
        problems = with_changes({"tracing/span.h": '#pragma once\n#include "common/result.h"\n#include "tracing/span_kind.h"\n',
                                 "tracing/span_kind.h": '#pragma once\n#include "tracing/span.h"\n'})
        self.assertEqual(problems, ["files that include each other in a circle: tracing/span.h, tracing/span_kind.h"])

    def test_a_relayed_call_that_reaches_nghttp2_is_refused(self):
        sources = {"proxy/http2_stream.h": "#pragma once\n#include <cstdint>\n",
                   "proxy/relayed_call.h": '#pragma once\n#include "proxy/http2_stream.h"\n',
                   "proxy/relayed_call.cc": '#include "proxy/relayed_call.h"\n'}
        cmake = GOOD_CMAKE + ["target_link_libraries(sparktrace_proxy PRIVATE sparktrace_common PkgConfig::NGHTTP2)"]
        self.assertEqual(with_changes(sources, cmake), [])
        # Through the connection's header, two steps away.
        sources["proxy/http2_connection.h"] = "#pragma once\n#include <nghttp2/nghttp2.h>\n"
        sources["proxy/http2_connection.cc"] = '#include "proxy/http2_connection.h"\n'
        sources["proxy/http2_stream.h"] = '#pragma once\n#include "proxy/http2_connection.h"\n'
        problems = with_changes(sources, cmake)
        self.assertIn("proxy/relayed_call.h reaches <nghttp2/nghttp2.h> (through proxy/http2_connection.h); "
                      "keep it to the codec", problems)
        self.assertIn("proxy/http2_stream.h reaches <nghttp2/nghttp2.h> (through proxy/http2_connection.h); "
                      "keep it to the codec", problems)

    def test_the_keywordless_signature_counts_as_public(self):
        links = module_arrows.parse_links(["target_link_libraries(sparktrace_x sparktrace_common)  # why"])
        self.assertEqual(links["sparktrace_x"].public, {"sparktrace_common"})


if __name__ == "__main__":
    unittest.main()


# A minimal page that keeps every layer: app on a page, the page on a view, the view on a tool and a pure
# module, the tool on a pure module.
GOOD_SCRIPTS = {
    "web/assets/app.js": "import { renderTasksPage } from './tasks_page.js';\n",
    "web/assets/tasks_page.js": "import {\n  renderMiniBar,\n} from './breakdown_bar.js';\n",
    "web/assets/breakdown_bar.js": "import { h } from './dom.js';\nimport { formatDuration } from './format.js';\n",
    "web/assets/badges.js": "export { h as element } from './dom.js';\n",
    "web/assets/dom.js": "import { safeHref } from './url_state.js';\n",
    "web/assets/url_state.js": "// import { h } from './dom.js' would be a breach, but not in a comment\n",
    "web/assets/format.js": "export function formatDuration(ms) { return `${ms} ms`; }\n",
}


def web_with_changes(scripts):
    tree = dict(GOOD_SCRIPTS)
    tree.update(scripts)
    return web_imports.breaches(tree)


class EachPageRuleFailsTest(unittest.TestCase):
    def test_the_minimal_page_is_clean_and_every_import_is_seen(self):
        self.assertEqual(web_with_changes({}), [])
        self.assertEqual(web_imports.summary(GOOD_SCRIPTS), (7, 6, 0, 0))

    def test_a_pure_module_importing_a_tool_is_refused(self):
        problems = web_with_changes({"web/assets/format.js": "import { h } from './dom.js';\n"})
        self.assertEqual(problems, ["web/assets/format.js: imports web/assets/dom.js, of the tools layer, above "
                                    "the pure layer"])

    def test_a_view_importing_a_page_is_refused(self):
        problems = web_with_changes({"web/assets/badges.js": "import { renderTasksPage } from './tasks_page.js';\n"})
        self.assertEqual(problems, ["web/assets/badges.js: imports web/assets/tasks_page.js, of the pages layer, "
                                    "above the views layer"])

    def test_a_page_importing_another_page_or_the_router_is_refused(self):
        problems = web_with_changes({"web/assets/recipe_page.js": "import './tasks_page.js';\nimport('./app.js');\n"})
        self.assertEqual(problems, [
            "web/assets/recipe_page.js: imports web/assets/app.js, of the app layer, above the pages layer",
            "web/assets/recipe_page.js: imports web/assets/tasks_page.js; a pages module imports none of its own layer"])

    def test_modules_importing_each_other_are_refused(self):
        problems = web_with_changes({"web/assets/dom.js": "import { safeHref } from './url_state.js';\n"
                                                          "import { element } from './badges.js';\n"})
        self.assertIn("web/assets/dom.js: imports web/assets/badges.js, of the views layer, above the tools layer",
                      problems)
        self.assertIn("web/assets: modules that import each other in a circle: web/assets/badges.js, web/assets/dom.js",
                      problems)

    def test_a_package_or_a_file_outside_the_assets_is_refused(self):
        problems = web_with_changes({"web/assets/format.js": "import dayjs from 'dayjs';\n"
                                                             "import { x } from '../dev/cdp.mjs';\n"
                                                             "import { y } from './missing.js';\n"})
        self.assertEqual(problems, [
            "web/assets/format.js: imports '../dev/cdp.mjs', outside web/assets",
            "web/assets/format.js: imports './missing.js', which is not there",
            "web/assets/format.js: imports 'dayjs', not a file under web/assets (no packages: no build step)"])
