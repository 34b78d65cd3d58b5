"""The Grafana dashboards (k8s/grafana) and the Prometheus rules (k8s/prometheus) must agree with the binary.

Every PromQL expression in them is parsed; each metric it names must be one the real proxy exposes on
/metrics (started here on loopback, fed a real event log so the spark_* phase gauges exist, and
`sparktrace demo`'s proxy, whose Airflow task's simulated application has every per-application
figure), and each label it selects on, groups by or prints in an annotation must be a label of that
metric. Also: each dashboard's structure, variables and links, the recipe links, `promtool check
rules`, `promtool test rules` and the kustomizations. That the queries return data from a real
Prometheus is tests/k8s/test_live_prometheus.py.

Run by CTest with SPARKTRACE_BIN; needs python3-yaml and python3-grpcio (the e2e harness), promtool and
kubectl when installed.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import yaml

sys.dont_write_bytecode = True  # the e2e harness is imported from the source tree
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
import harness  # noqa: E402  (proxy and upstream fixtures shared with the e2e tests)
from promtext import Metrics  # noqa: E402
from observability_lib import (  # noqa: E402
    DASHBOARDS, GRAFANA_DIR, GRAFANA_INTERVALS, RECIPE_PATH, RULES, RULES_DIR, RULES_TESTS, Catalogue, Demo,
    PromQLError, all_panels, alert_inputs, dashboard_expressions, documented_metrics, label_values_queries,
    load_dashboard, load_rules, missing_doc_link, parse_promql, recipe_table, render_finding_runbook, rules_of,
    selectors)

DATA = Path(os.environ.get("SPARKTRACE_DATA_DIR") or ROOT.parent / "shared" / "data")
LOG = DATA / "spark-events" / "local-1422981780767"
BIN = Path(os.environ.get("SPARKTRACE_BIN") or ROOT / "build" / "sparktrace")
GRAFANA_KUSTOMIZATION = GRAFANA_DIR
RULES_KUSTOMIZATION = RULES_DIR
URL_STATE_JS = ROOT / "web" / "assets" / "url_state.js"

# Metrics that may be missing from the binary's output, accepted when docs/tracing.md's metrics table
# lists them (with the labels listed there): sparktrace_findings_total is being added by the diagnosis
# work in parallel with these manifests, and a counter with labels only shows series once a finding
# was counted, which the log used here may never produce.
DOCUMENTED_ONLY_ALLOWED = {"sparktrace_findings_total"}
# `kubectl apply` (client side) keeps the whole object in an annotation, at most 256 KiB.
LAST_APPLIED_LIMIT = 262144
# Grafana's own variables, usable in any dashboard without being defined in it.
GRAFANA_BUILTIN_VARIABLES = {"__rate_interval", "__interval", "__interval_ms", "__range", "__range_s",
                             "__range_ms", "__from", "__to", "__data", "__value", "__field", "__series",
                             "__url_time_range", "__dashboard", "__user", "__org", "__name", "timeFilter"}
VARIABLE_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:[.:][^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)")

TROUBLESHOOTING_RECIPES = {str(Path(p).relative_to(ROOT)) for p in glob.glob(str(ROOT / "docs/recipes/troubleshoot/*.md"))}
# What each dashboard is checked for, besides what all of them share: the query of its `app`
# variable, its rows in order, the recipes its panels must link between them, and metrics its
# queries must use (so that an empty parse cannot pass the catalogue check).
DASHBOARD_SPECS = {
    "sparktrace-overview.json": {
        "uid": "sparktrace-overview",
        "app_query": "label_values(spark_phase_breakdown_ratio,app)",
        "rows": ["Where the time went", "Findings", "Spark Connect operations", "Proxy", "Pipeline"],
        "recipes": TROUBLESHOOTING_RECIPES,
        "metrics": {"spark_phase_breakdown_ratio", "sparktrace_findings_total",
                    "sparktrace_operation_duration_seconds_bucket", "sparktrace_rpc_calls_total",
                    "sparktrace_spans_dropped_total", "sparktrace_listener_malformed_lines_total"},
    },
    "spark-job-phase-timeline.json": {
        "uid": "sparktrace-phase-timeline",
        "title": "Spark Job Phase Timeline",
        "app_query": "label_values(spark_phase_active,app)",
        "rows": ["Phases", "Executors and throughput", "Airflow task and trace"],
        "recipes": {"docs/recipes/troubleshoot/resource-wait-long.md", "docs/recipes/troubleshoot/s3-write-slow.md",
                    "docs/recipes/troubleshoot/slow-spark-jobs.md", "docs/recipes/observability/airflow.md"},
        "metrics": {"spark_phase_active", "spark_application_running", "spark_phase_breakdown_ratio",
                    "spark_resource_wait_seconds", "spark_phase_compute_seconds", "spark_phase_io_write_seconds",
                    "spark_phase_idle_seconds", "spark_time_to_first_executor_seconds", "spark_executors",
                    "spark_executor_cores", "spark_task_cpu_ratio", "spark_write_throughput_bytes_per_second",
                    "spark_output_bytes", "spark_task_duration_p95_seconds", "spark_application_airflow_info"},
    },
    "spark-profiling.json": {
        "uid": "sparktrace-profiling",
        "title": "Spark Profiling",
        "app_query": "label_values(spark_phase_breakdown_ratio,app)",
        "rows": ["Where task time goes", "Data distribution and memory", "Tasks and failures"],
        "recipes": {"docs/recipes/troubleshoot/gc-pressure.md", "docs/recipes/troubleshoot/oom-and-spill.md",
                    "docs/recipes/troubleshoot/data-skew-diagnosis.md", "docs/recipes/troubleshoot/shuffle-bottleneck.md",
                    "docs/recipes/troubleshoot/slow-spark-jobs.md", "docs/recipes/observability/spark-profiling-guide.md"},
        "metrics": {"spark_gc_time_ratio", "spark_serialization_time_ratio", "spark_executor_utilization_ratio",
                    "spark_task_cpu_ratio", "spark_shuffle_skew_ratio", "spark_memory_spilled_bytes",
                    "spark_disk_spilled_bytes", "spark_executor_peak_jvm_heap_bytes",
                    "spark_executor_memory_limit_bytes", "spark_task_duration_seconds_bucket", "spark_jobs_total",
                    "spark_stages_total", "spark_tasks_failed_total", "spark_executors_lost_total"},
    },
}


def variable_references(text):
    return {a or b for a, b in VARIABLE_REFERENCE.findall(text)}


def dashboard_links(dashboard):
    """(where, link) for the dashboard's links, its panels' links and their fields' data links."""
    for link in dashboard.get("links", []):
        yield "dashboard", link
    for panel in all_panels(dashboard):
        for link in panel.get("links", []):
            yield f"panel {panel['title']!r}", link
        field_config = panel.get("fieldConfig", {})
        for link in field_config.get("defaults", {}).get("links", []):
            yield f"panel {panel['title']!r} field", link
        for override in field_config.get("overrides", []):
            for prop in override["properties"]:
                if prop["id"] == "links":
                    for link in prop["value"]:
                        yield f"panel {panel['title']!r} field {override['matcher']['options']}", link


# --------------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------------

class PromQLParserTest(unittest.TestCase):
    """The parser the other checks rely on: it must see every metric and label, or they check nothing."""

    def test_reads_selectors_aggregations_and_matching(self):
        tree = parse_promql('sum by (method, le) (rate(a_bucket{code!="OK", method=~".*"}[$__rate_interval])) '
                            '/ on (method) group_left (x) max without (y) (b offset 5m) > bool 0.5 '
                            'or vector(1) unless c[1h:5m] @ end()')
        found = {(s["name"], tuple(m[0] for m in s["matchers"])) for s in selectors(tree)}
        self.assertEqual(found, {("a_bucket", ("code", "method")), ("b", ()), ("c", ())})
        self.assertEqual(tree["op"], "or", "or binds loosest")
        self.assertEqual(tree["right"]["op"], "unless")

    def test_grouping_after_the_arguments_and_right_associative_power(self):
        tree = parse_promql("sum(x) by (a) ^ 2 ^ 3")
        self.assertEqual(tree["left"]["grouping"], ["a"])
        self.assertEqual(tree["right"]["op"], "^")

    def test_rejects_what_prometheus_rejects(self):
        for bad in ('sum by (method (x)', 'x{a=b}', 'rate(x[5m]', 'x +', 'x{a~"b"}'):
            with self.assertRaises(PromQLError, msg=bad):
                parse_promql(bad)

    def test_the_checker_reports_unknown_metrics_and_labels(self):
        metrics = Metrics('# TYPE m_total counter\nm_total{code="OK"} 1\n'
                          '# TYPE h_seconds histogram\nh_seconds_bucket{le="1"} 1\n'
                          'h_seconds_sum 1\nh_seconds_count 1\n')
        catalogue = Catalogue(metrics, {})
        self.assertEqual(catalogue.problems('sum by (code, job) (rate(m_total{code="OK"}[5m]))', "ok"), [])
        self.assertEqual(catalogue.problems("histogram_quantile(0.9, sum by (le) (rate(h_seconds_bucket[5m])))",
                                            "ok"), [])
        self.assertEqual(len(catalogue.problems("rate(missing_total[5m])", "x")), 1)
        self.assertEqual(len(catalogue.problems('m_total{method="x"}', "x")), 1)
        self.assertEqual(len(catalogue.problems("sum by (method) (m_total)", "x")), 1)
        self.assertEqual(len(catalogue.problems("sum by (le) (rate(h_seconds_count[5m]))", "x")), 1)
        self.assertEqual(len(catalogue.problems("h_seconds_total", "x")), 1)

    def test_spans_and_alert_inputs(self):
        text = 'max by (app) (x{a="1"}) > 0.9 and on (app) (max by (app) (y) == 1) or -rate(z[5m] offset 1h) < 2'
        tree = parse_promql(text)
        start, end = tree["left"]["left"]["left"]["span"]
        self.assertEqual(text[start:end], 'max by (app) (x{a="1"})')
        self.assertEqual(alert_inputs(text), ['max by (app) (x{a="1"})', "max by (app) (y)", "-rate(z[5m] offset 1h)"])
        self.assertEqual(alert_inputs("increase(c_total[$__rate_interval]) > 0"), ["increase(c_total[5m])"])
        self.assertEqual(alert_inputs("0.5 < r"), ["r"])
        self.assertEqual(alert_inputs("a > b"), ["a > b"], "a comparison of two vectors is one input")


class DashboardTest(unittest.TestCase):
    """Each dashboard of DASHBOARDS: the checks they share, with DASHBOARD_SPECS for what differs."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.dashboards = {path.name: load_dashboard(path) for path in DASHBOARDS}

    def each(self):
        for name, dashboard in self.dashboards.items():
            with self.subTest(dashboard=name):
                yield name, dashboard, DASHBOARD_SPECS[name]

    def test_every_dashboard_file_is_specified_and_shipped(self):
        on_disk = {Path(p).name for p in glob.glob(str(GRAFANA_DIR / "*.json"))}
        self.assertEqual(on_disk, set(DASHBOARD_SPECS))
        self.assertEqual(set(self.dashboards), set(DASHBOARD_SPECS))

    def test_is_a_grafana_dashboard_with_datasource_and_app_variables(self):
        uids = [d["uid"] for d in self.dashboards.values()]
        self.assertEqual(len(uids), len(set(uids)), f"dashboard uids must differ: {uids}")
        for _, d, spec in self.each():
            self.assertGreaterEqual(d["schemaVersion"], 36)
            self.assertTrue(d["uid"] and d["title"] and d.get("description"))
            self.assertEqual(d["uid"], spec["uid"])
            if "title" in spec:
                self.assertEqual(d["title"], spec["title"])
            variables = {v["name"]: v for v in d["templating"]["list"]}
            self.assertEqual(variables["datasource"]["type"], "datasource")
            self.assertEqual(variables["datasource"]["query"], "prometheus")
            queries = {name: query for name, query, _ in label_values_queries(d)}
            for variable in [v for v in d["templating"]["list"] if v["type"] == "query"]:
                # Grafana shows `definition` in the editor; it must say what `query` runs.
                self.assertEqual(variable.get("definition"), queries[variable["name"]], variable["name"])
                self.assertEqual(variable["datasource"]["uid"], "${datasource}", variable["name"])
            self.assertEqual(queries["app"].replace(" ", ""), spec["app_query"])

    def test_panels_have_unique_ids_a_datasource_and_targets(self):
        for _, d, _ in self.each():
            panels = list(all_panels(d))
            ids = [p["id"] for p in panels]
            self.assertEqual(len(ids), len(set(ids)), f"duplicate panel ids in {ids}")
            for panel in panels:
                where = f"panel {panel['id']} {panel.get('title')!r}"
                self.assertTrue(panel.get("title"), where)
                grid = panel["gridPos"]
                self.assertLessEqual(grid["x"] + grid["w"], 24, where)
                if panel["type"] == "row":
                    continue
                self.assertEqual(panel.get("datasource"), {"type": "prometheus", "uid": "${datasource}"}, where)
                targets = panel.get("targets", [])
                self.assertTrue(targets, f"{where} has no target")
                ref_ids = [t["refId"] for t in targets]
                self.assertEqual(len(ref_ids), len(set(ref_ids)), where)
                for target in targets:
                    self.assertTrue(target.get("expr", "").strip(), f"{where} target {target['refId']} has no expr")
                    self.assertEqual(target.get("datasource", panel["datasource"]), panel["datasource"], where)

    def test_panels_do_not_overlap(self):
        for _, d, _ in self.each():
            cells = {}
            for panel in d["panels"]:  # top level: what an expanded dashboard lays out
                grid = panel["gridPos"]
                for x in range(grid["x"], grid["x"] + grid["w"]):
                    for y in range(grid["y"], grid["y"] + grid["h"]):
                        self.assertNotIn((x, y), cells, f"{panel['title']!r} overlaps {cells.get((x, y))!r}")
                        cells[(x, y)] = panel["title"]

    def test_rows_in_order(self):
        for _, d, spec in self.each():
            self.assertEqual([p["title"] for p in d["panels"] if p["type"] == "row"], spec["rows"])

    def test_panels_say_what_to_do_and_link_their_recipes(self):
        for _, d, spec in self.each():
            linked = set()
            for panel in all_panels(d):
                if panel["type"] == "row":
                    continue
                description = panel.get("description", "")
                links = RECIPE_PATH.findall(description)
                self.assertTrue(links, f"panel {panel['title']!r} links no recipe or doc")
                for link in links:
                    self.assertIsNone(missing_doc_link(link), f"panel {panel['title']!r}: {link}")
                    linked.add(link.partition("#")[0])
            self.assertEqual(spec["recipes"] - linked, set(), "recipes no panel links")
            for link in RECIPE_PATH.findall(d["description"]):
                self.assertIsNone(missing_doc_link(link), f"dashboard description: {link}")

    def test_every_variable_used_is_defined(self):
        for _, d, _ in self.each():
            defined = {v["name"] for v in d["templating"]["list"]} | GRAFANA_BUILTIN_VARIABLES
            texts = [("expression " + where, expr) for where, expr in dashboard_expressions(d)]
            texts += [(f"variable {name}", query) for name, query, _ in label_values_queries(d)]
            texts += [(f"{where} link {link.get('title')!r}", link["url"] + " " + link.get("title", ""))
                      for where, link in dashboard_links(d)]
            for where, text in texts:
                self.assertEqual(variable_references(text) - defined, set(), where)

    def test_phase_timeline_links_the_trace_view_of_the_airflow_task(self):
        """The trace view's task list (web/assets/url_state.js: `/?dag=…&task=…`) for the selected
        Airflow task, from the dashboard, the Airflow panel and each row of it."""
        d = self.dashboards["spark-job-phase-timeline.json"]
        variables = {v["name"]: v for v in d["templating"]["list"]}
        self.assertEqual(variables["traceview"]["type"], "textbox")
        self.assertRegex(variables["traceview"]["query"], r"^https?://[^/]+$", "an origin, no trailing slash")
        for name, label in (("dag_id", "dag_id"), ("task_id", "task_id")):
            query = [q for n, q, _ in label_values_queries(d) if n == name][0]
            self.assertRegex(query, rf"^label_values\(spark_application_airflow_info\{{.*app=\"\$app\".*\}}, {label}\)$")
        filter_keys = re.search(r"TASK_FILTER_KEYS = \[([^\]]*)\]", URL_STATE_JS.read_text()).group(1)
        self.assertIn("'dag'", filter_keys)
        self.assertIn("'task'", filter_keys)
        trace_links = [(where, link) for where, link in dashboard_links(d) if "${traceview}" in link["url"]]
        wheres = {where.split(" field")[0] for where, _ in trace_links}
        self.assertIn("dashboard", wheres)
        self.assertIn("panel 'Airflow task'", wheres)
        for where, link in trace_links:
            self.assertRegex(link["url"], r"^\$\{traceview\}/\?dag=\$\{[^}]*dag_id[^}]*:percentencode\}"
                                          r"&task=\$\{[^}]*task_id[^}]*:percentencode\}$", where)
            self.assertTrue(link.get("targetBlank"), where)

    def test_queries_select_the_app_variable(self):
        """Per-application panels follow the `app` picker: `=` in the single-value timeline, `=~` where
        several may be chosen."""
        for name, d, _ in self.each():
            multi = {v["name"]: v.get("multi") for v in d["templating"]["list"]}["app"]
            for where, expr in dashboard_expressions(d):
                for selector in selectors(parse_promql(expr)):
                    if not selector["name"].startswith("spark_"):
                        continue
                    app = [(op, value) for label, op, value in selector["matchers"] if label == "app"]
                    self.assertEqual(app, [("=~" if multi else "=", "$app")], f"{where}: {selector['name']}")

    def test_trace_link_note(self):
        dashboard = self.dashboards["sparktrace-overview.json"]
        text = json.dumps(dashboard)
        self.assertIn("sparktrace traces", text)
        self.assertIn("Tempo", text)
        self.assertIn("--otlp-endpoint", text)
        self.assertTrue(dashboard["links"], "no dashboard link to the traces")

    def test_kustomization_generates_the_sidecar_configmap(self):
        with open(GRAFANA_KUSTOMIZATION / "kustomization.yaml") as handle:
            kustomization = yaml.safe_load(handle)
        self.assertTrue(kustomization["generatorOptions"]["disableNameSuffixHash"])
        self.assertEqual(kustomization["generatorOptions"]["labels"]["grafana_dashboard"], "1")
        files = [f for g in kustomization["configMapGenerator"] for f in g["files"]]
        self.assertEqual(files, [path.name for path in DASHBOARDS])

    @unittest.skipUnless(shutil.which("kubectl"), "kubectl not installed")
    def test_kustomize_renders_the_dashboards_unchanged(self):
        rendered = subprocess.run(["kubectl", "kustomize", str(GRAFANA_KUSTOMIZATION)], capture_output=True,
                                  text=True, timeout=60, check=True).stdout
        (config_map,) = list(yaml.safe_load_all(rendered))
        self.assertEqual(config_map["kind"], "ConfigMap")
        self.assertEqual(config_map["metadata"]["labels"]["grafana_dashboard"], "1")
        self.assertEqual(config_map["metadata"]["name"], "sparktrace-grafana-dashboard", "no hash suffix")
        self.assertEqual(set(config_map["data"]), set(self.dashboards))
        for name, dashboard in self.dashboards.items():
            self.assertEqual(json.loads(config_map["data"][name]), dashboard, name)
        self.assertLess(len(json.dumps(config_map)), LAST_APPLIED_LIMIT, "too large for kubectl apply")


class RulesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rule_file = load_rules()
        cls.alerts = {r["alert"]: r for r in rules_of(cls.rule_file) if "alert" in r}
        cls.records = {r["record"]: r for r in rules_of(cls.rule_file) if "record" in r}

    def test_is_a_prometheus_rule(self):
        self.assertEqual(self.rule_file["apiVersion"], "monitoring.coreos.com/v1")
        self.assertEqual(self.rule_file["kind"], "PrometheusRule")
        self.assertTrue(self.rule_file["metadata"]["name"])
        self.assertTrue(self.records, "no recording rules")

    def test_alerts_have_severity_annotations_and_an_existing_runbook(self):
        self.assertGreaterEqual(len(self.alerts), 5)
        for name, alert in self.alerts.items():
            self.assertIn(alert["labels"]["severity"], ("info", "warning", "critical"), name)
            for key in ("summary", "description", "runbook_url"):
                self.assertTrue(alert["annotations"].get(key, "").strip(), f"{name} has no {key}")
            runbook = alert["annotations"]["runbook_url"]
            if "{{" not in runbook:
                self.assertIsNone(missing_doc_link(runbook), f"{name}: {runbook}")

    def test_critical_finding_runbook_leads_to_each_findings_recipe(self):
        template = self.alerts["SparktraceCriticalFinding"]["annotations"]["runbook_url"]
        table = recipe_table()
        self.assertGreaterEqual(len(table), 9, "docs/recipes/README.md's table of finding ids")
        for finding_id, recipe in table.items():
            rendered = render_finding_runbook(template, finding_id)
            self.assertEqual(rendered, recipe, finding_id)
            self.assertIsNone(missing_doc_link(rendered), finding_id)

    def expanded_selectors(self, expression):
        """Selectors of an expression, recorded series replaced by the selectors of their rule."""
        for selector in selectors(parse_promql(expression)):
            if selector["name"] in self.records:
                for inner in self.expanded_selectors(self.records[selector["name"]]["expr"]):
                    yield inner
                    if selector["matchers"]:
                        yield {"name": inner["name"], "matchers": selector["matchers"]}
            else:
                yield selector

    def test_the_asked_for_conditions_are_alerted_on(self):
        covered = set()
        for alert in self.alerts.values():
            for selector in self.expanded_selectors(alert["expr"]):
                covered.add(selector["name"])
                covered.update(f"{selector['name']}{{{label}{op}\"{value}\"}}"
                               for label, op, value in selector["matchers"])
        for wanted in ("sparktrace_upstream_connect_failures_total",
                       'sparktrace_rpc_calls_total{code="UNAVAILABLE"}',
                       "sparktrace_spans_dropped_total",
                       "sparktrace_listener_malformed_lines_total",
                       'sparktrace_findings_total{severity="critical"}',
                       "sparktrace_task_regressions_total",  # issue 22: a task slower than its usual
                       'spark_phase_breakdown_ratio{phase="resource_wait"}',
                       # issue 13: resource wait, failures, out-of-memory risk, write throughput
                       'spark_phase_active{phase="resource_wait"}',
                       "spark_time_to_first_executor_seconds",
                       'spark_jobs_total{status="failed"}',
                       'spark_stages_total{status="failed"}',
                       "spark_executor_peak_jvm_heap_bytes",
                       "spark_executor_memory_limit_bytes",
                       'spark_executors_lost_total{reason="out_of_memory"}',
                       'spark_tasks_failed_total{reason="out_of_memory"}',
                       "spark_write_throughput_bytes_per_second",
                       "spark_phase_io_write_seconds"):
            self.assertIn(wanted, covered)

    def test_alerts_on_a_runs_high_water_marks_end_with_the_run(self):
        """Peak heap, time to first executor and write throughput keep the latest run's figure after it
        ended: their alerts hold only while spark_application_running says it runs."""
        for name in ("SparkSlowFirstExecutor", "SparkExecutorHeapNearLimit", "SparkWriteThroughputLow"):
            inputs = alert_inputs(self.alerts[name]["expr"])
            self.assertIn("max by (job, instance, app) (spark_application_running)", inputs, name)

    @unittest.skipUnless(shutil.which("promtool"), "promtool not installed (apt-get install prometheus)")
    def test_promtool_accepts_the_rules(self):
        self.promtool_check({"groups": self.rule_file["spec"]["groups"]})

    @unittest.skipUnless(shutil.which("promtool"), "promtool not installed (apt-get install prometheus)")
    def test_every_alert_fires_as_its_unit_tests_say(self):
        """`promtool test rules` on RULES_TESTS: each alert fires on its series with its labels and
        rendered annotations, not before its `for:`, not on what it leaves out."""
        tests = yaml.safe_load(RULES_TESTS.read_text())
        tested = {case["alertname"] for test in tests["tests"] for case in test.get("alert_rule_test", [])}
        self.assertEqual(tested, set(self.alerts), "every alert has a unit test, and no test names a gone alert")
        with tempfile.TemporaryDirectory(prefix="sparktrace-rule-tests-") as work:
            groups = Path(work) / tests["rule_files"][0]
            with open(groups, "w") as handle:
                yaml.safe_dump({"groups": self.rule_file["spec"]["groups"]}, handle)
            shutil.copy(RULES_TESTS, work)
            result = subprocess.run(["promtool", "test", "rules", RULES_TESTS.name], cwd=work, capture_output=True,
                                    text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    @unittest.skipUnless(shutil.which("promtool"), "promtool not installed (apt-get install prometheus)")
    def test_promtool_accepts_the_dashboard_queries(self):
        # Each panel query of every dashboard as a recording rule: promtool then parses it with Prometheus' own parser.
        expressions = [expr for path in DASHBOARDS for _, expr in dashboard_expressions(load_dashboard(path))]
        rules = [{"record": f"sparktrace_dashboard:query_{i}", "expr": GRAFANA_INTERVALS.sub("5m", expr)}
                 for i, expr in enumerate(expressions)]
        self.assertTrue(rules)
        self.promtool_check({"groups": [{"name": "dashboard", "rules": rules}]})

    def promtool_check(self, content):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix="sparktrace-rules-") as handle:
            yaml.safe_dump(content, handle)
            handle.flush()
            result = subprocess.run(["promtool", "check", "rules", handle.name], capture_output=True, text=True,
                                    timeout=60)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_kustomization_lists_the_rules(self):
        with open(RULES_KUSTOMIZATION / "kustomization.yaml") as handle:
            self.assertIn(RULES.name, yaml.safe_load(handle)["resources"])

    @unittest.skipUnless(shutil.which("kubectl"), "kubectl not installed")
    def test_kustomize_renders_the_rule(self):
        rendered = subprocess.run(["kubectl", "kustomize", str(RULES_KUSTOMIZATION)], capture_output=True,
                                  text=True, timeout=60, check=True).stdout
        (rule,) = list(yaml.safe_load_all(rendered))
        self.assertEqual(rule["kind"], "PrometheusRule")
        self.assertEqual(rule["spec"], self.rule_file["spec"])


@harness.proxy_only
@unittest.skipUnless(LOG.is_file(), f"no event log {LOG} (set SPARKTRACE_DATA_DIR)")
class MetricsAgreeWithTheBinaryTest(unittest.TestCase):
    """Every metric and label of the dashboards and the rules, against running proxies' /metrics: one
    following a real event log (a 2015 application, read whole), and `sparktrace demo`'s (an Airflow
    task's calls and the simulated application behind them, with executor memory, writes and tasks)."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        upstream = harness.start_upstream(cls)
        logs = Path(tempfile.mkdtemp(prefix="sparktrace-obs-logs-"))
        cls.addClassCleanup(shutil.rmtree, logs, True)
        shutil.copy(LOG, logs / LOG.name)
        # The log is from 2015: the store's age limit must not delete its trace at once.
        proxy = harness.start_proxy(cls, upstream.address, "--event-log-dir", str(logs), "--event-log-poll",
                                    "100ms", "--store-max-age", "20000d")
        # One call through the proxy, so the per-method RPC series (and their labels) exist.
        stub = harness.open_channel(cls, proxy.grpc_address).unary_unary("/sparktrace.test.Observability/Unary")
        stub(b"ping", timeout=10, metadata=[("x-test-id", harness.new_id("obs"))])

        demo_dir = Path(tempfile.mkdtemp(prefix="sparktrace-obs-demo-"))
        cls.addClassCleanup(shutil.rmtree, demo_dir, True)
        demo = Demo(BIN, demo_dir)
        cls.addClassCleanup(demo.stop)
        demo.wait_until_served()

        def scraped():
            status, _, body = proxy.admin("/metrics")
            if status != 200:
                return None
            metrics = Metrics(body)
            ready = metrics.find("spark_phase_breakdown_ratio") and metrics.find("sparktrace_rpc_calls_total")
            return body if ready else None

        text = harness.wait_until(scraped, 20, interval=0.1, message="phase gauges and RPC series on /metrics")
        # The demo's operations carry an Airflow identity, so its application gets the Airflow series too.
        # Its attempt is settled (the demo's short --settle-quiet), so the per-task counters exist too.
        demo_series = ("spark_phase_breakdown_ratio{", "spark_application_airflow_info{",
                       "sparktrace_task_regressions_total{")
        demo_text = harness.wait_until(lambda: (lambda t: t if all(name in t for name in demo_series) else None)(
            demo.metrics_text()), 20, interval=0.1, message="the demo's phase and Airflow gauges on /metrics")
        cls.catalogue = Catalogue(Metrics(text + "\n" + demo_text), documented_metrics(), DOCUMENTED_ONLY_ALLOWED)
        rule_file = load_rules()
        for rule in rules_of(rule_file):
            if "record" in rule:
                cls.catalogue.recorded[rule["record"]] = cls.catalogue.output_labels(parse_promql(rule["expr"]))
        cls.rules = list(rules_of(rule_file))

    def test_dashboard_queries_use_exposed_metrics_and_labels(self):
        for path in DASHBOARDS:
            with self.subTest(dashboard=path.name):
                dashboard = load_dashboard(path)
                problems, names = [], set()
                for where, expression in dashboard_expressions(dashboard):
                    problems += self.catalogue.problems(expression, where)
                    names.update(s["name"] for s in selectors(parse_promql(expression)))
                for name, query, match in label_values_queries(dashboard):
                    self.assertIsNotNone(match, f"variable {name}: {query}")
                    metric, label = match.groups()
                    problems += self.catalogue.problems(f"group by ({label}) ({metric})", f"variable {name}")
                self.assertEqual(problems, [])
                # The parser saw the metrics of every row (an empty parse would pass the loop above).
                self.assertEqual(DASHBOARD_SPECS[path.name]["metrics"] - names, set())

    def test_rules_use_exposed_metrics_and_labels(self):
        problems = []
        for rule in self.rules:
            problems += self.catalogue.problems(rule["expr"], rule.get("alert") or rule.get("record"))
        self.assertEqual(problems, [])

    def test_alert_annotations_print_labels_the_expression_keeps(self):
        for rule in [r for r in self.rules if "alert" in r]:
            available = self.catalogue.output_labels(parse_promql(rule["expr"]))
            text = " ".join(rule["annotations"].values())
            for label in re.findall(r"\$labels\.([A-Za-z_][A-Za-z0-9_]*)", text):
                self.assertIn(label, available, f"{rule['alert']} prints $labels.{label}")

    def test_findings_counter_is_exposed_or_documented(self):
        # Accepted from docs/tracing.md's table until the binary shows it (see DOCUMENTED_ONLY_ALLOWED).
        labels = self.catalogue.lookup("sparktrace_findings_total")
        self.assertIsNotNone(labels, "sparktrace_findings_total is neither on /metrics nor in docs/tracing.md")
        self.assertLessEqual({"id", "severity"}, set(labels))


if __name__ == "__main__":
    unittest.main()
