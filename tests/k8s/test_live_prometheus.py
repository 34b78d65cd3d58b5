"""The dashboards and rules of k8s/ against a real Prometheus scraping a real sparktrace.

`sparktrace demo` (its simulator and proxy on loopback, one Airflow task's Spark Connect calls, the
default scenario slow-executor-allocation,slow-writes) is scraped every second by Debian's
`prometheus` server, which also loads the PrometheusRule's groups as its rule file. Once the demo's
task has run and its spark_* series are in Prometheus, every panel query of every dashboard (Grafana's
variables replaced by what Grafana would put there), every variable query, every recording rule (its
expression and its recorded series) and the data-holding parts of every alert expression go through
/api/v1/query and must return data. Prometheus must have loaded every rule, healthy; the demo's
scenario puts the resource-wait alert into its pending state and leaves the failure and
out-of-memory alerts inactive. The phase timeline's trace-view link must lead to the demo's Airflow
task.

Run by CTest as k8s.live_prometheus with SPARKTRACE_BIN; standard library, python3-yaml and
/usr/bin/prometheus (Debian's `prometheus` package).
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest
import urllib.parse
from pathlib import Path

import yaml

sys.dont_write_bytecode = True
from observability_lib import (  # noqa: E402
    DASHBOARDS, GRAFANA_INTERVALS, ROOT, Demo, all_panels, alert_inputs, dashboard_targets, http_get,
    label_values_queries, load_dashboard, load_rules, rules_of, wait_until)

BIN = Path(os.environ.get("SPARKTRACE_BIN") or ROOT / "build" / "sparktrace")
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
SCRAPE_INTERVAL = "1s"
# What Grafana puts in for its interval variables: $__rate_interval is at least four scrape intervals
# (Grafana's default for a Prometheus data source is 15 s, so 1m); $__interval is the step.
GRAFANA_INTERVAL_VALUES = {"__rate_interval": "1m", "__interval": "15s", "__range": "5m"}
# Samples of the demo's series Prometheus must hold before the queries run: every [1m] range of
# rate() and increase() then has at least two.
MIN_SAMPLES = 5

# Queries allowed to return nothing on the demo, each with why: (dashboard file, panel title, refId).
# Empty: everything the demo exercises returns data, counters of what did not happen included (they
# are exported as 0 from the application's start, with every status and reason).
ALLOWED_EMPTY = {}
# The demo's scenario (slow executor allocation, slow writes; nothing fails, memory is ample): alerts
# that must be pending or firing, and alerts that must not.
# (SparktraceCriticalFinding cannot be among them: the demo counts its findings before Prometheus's
# first scrape, and a counter's value at its first scrape is no increase.)
EXPECTED_ACTIVE = {
    "SparktraceResourceWaitShareHigh": {"pending", "firing"},  # resource_wait ~80 % of the window, for: 15m
}
EXPECTED_INACTIVE = {"SparktraceUpstreamConnectFailures", "SparktraceUpstreamUnavailable", "SparktraceSpansDropped",
                     "SparktraceListenerMalformedLines", "SparkJobsFailed", "SparkStagesFailed",
                     "SparkExecutorHeapNearLimit", "SparkExecutorsLostOutOfMemory", "SparkTasksFailedOutOfMemory"}
AIRFLOW_TASK = re.compile(r"^Airflow task ([^.\s]+)\.([^,\s]+), run ", re.M)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def promql_string(value):
    return value.replace("\\", "\\\\").replace('"', '\\"')


def grafana_regex_escape(value):
    """What Grafana does to a multi-value variable's value inside =~ (then a PromQL string)."""
    return re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", value)


def substitute(expression, values):
    """A dashboard query as Grafana sends it: interval variables by durations, `$var` / `${var}` by
    `values[var]`, regex-escaped inside `=~"…"` (Grafana escapes multi-value variables there)."""
    text = GRAFANA_INTERVALS.sub(lambda m: GRAFANA_INTERVAL_VALUES[m.group(1)], expression)
    for name, value in values.items():
        for reference in (f"${{{name}}}", f"${name}"):
            text = text.replace(f'=~"{reference}"', f'=~"{promql_string(grafana_regex_escape(value))}"')
            text = text.replace(f'"{reference}"', f'"{promql_string(value)}"')
    leftover = re.findall(r"\$\{?\w+", text)
    if leftover:
        raise AssertionError(f"variables {leftover} left in {text!r}")
    return text


class Prometheus:
    """Debian's Prometheus server on a free loopback port, scraping `target` every second, with
    `rules` (a plain rule file's content) loaded."""

    def __init__(self, workdir, target, rules):
        workdir = Path(workdir)
        (workdir / "rules.yaml").write_text(yaml.safe_dump(rules))
        config = {
            "global": {"scrape_interval": SCRAPE_INTERVAL, "scrape_timeout": SCRAPE_INTERVAL,
                       "evaluation_interval": SCRAPE_INTERVAL},
            "rule_files": [str(workdir / "rules.yaml")],
            "scrape_configs": [{"job_name": "sparktrace", "static_configs": [{"targets": [target]}]}],
        }
        (workdir / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.url = f"http://127.0.0.1:{free_port()}"
        self.log = open(workdir / "prometheus.log", "w")
        self.process = subprocess.Popen(
            [PROMETHEUS, f"--config.file={workdir / 'prometheus.yml'}", f"--storage.tsdb.path={workdir / 'data'}",
             f"--web.listen-address={self.url[len('http://'):]}", "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def wait_ready(self, timeout=60):
        def ready():
            if self.process.poll() is not None:
                raise AssertionError(f"prometheus exited with {self.process.returncode}:\n" + self.log_tail())
            try:
                return http_get(self.url + "/-/ready", timeout=2)[0] == 200
            except OSError:
                return False

        wait_until(ready, timeout, message="prometheus to be ready")

    def log_tail(self):
        self.log.flush()
        return Path(self.log.name).read_text()[-4000:]

    def api(self, path, **params):
        status, body = http_get(f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}")
        answer = json.loads(body)
        if status != 200 or answer.get("status") != "success":
            raise AssertionError(f"/api/v1/{path} {params}: {status} {body[:2000]}")
        return answer["data"]

    def query(self, expression):
        """The instant query's result list ([] when it returns nothing)."""
        data = self.api("query", query=expression)
        if data["resultType"] in ("scalar", "string"):
            return [data["result"]]
        return data["result"]

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()


class LivePrometheusTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        if not os.access(PROMETHEUS, os.X_OK):
            raise AssertionError(f"{PROMETHEUS} is missing: apt-get install prometheus")
        work = Path(tempfile.mkdtemp(prefix="sparktrace-live-prometheus-"))
        cls.addClassCleanup(shutil.rmtree, work, True)
        (work / "demo").mkdir()
        (work / "prometheus").mkdir()

        cls.demo = Demo(BIN, work / "demo")
        cls.addClassCleanup(cls.demo.stop)
        admin = cls.demo.wait_until_served()
        cls.admin_url = admin
        cls.exposed = cls.demo.metrics_text()
        airflow = AIRFLOW_TASK.search(cls.demo.output())
        if not airflow:
            raise AssertionError("the demo printed no Airflow task:\n" + cls.demo.output())
        cls.dag_id, cls.task_id = airflow.groups()

        cls.rule_file = load_rules()
        cls.prometheus = Prometheus(work / "prometheus", admin[len("http://"):],
                                    {"groups": cls.rule_file["spec"]["groups"]})
        cls.addClassCleanup(cls.prometheus.stop)
        cls.prometheus.wait_ready()

        # The demo's task has run; wait until Prometheus holds enough samples of its application's
        # series, and of the proxy's own, for every range of the queries.
        def scraped():
            result = cls.prometheus.query(
                f"min(count_over_time(spark_phase_breakdown_ratio[1m])) >= {MIN_SAMPLES} "
                f"and min(count_over_time(sparktrace_rpc_calls_total[1m])) >= {MIN_SAMPLES}")
            return bool(result)

        try:
            wait_until(scraped, 60, interval=0.5, message=f"{MIN_SAMPLES} scrapes of the demo's series")
        except AssertionError as error:
            raise AssertionError(f"{error}\nprometheus log:\n{cls.prometheus.log_tail()}") from None

    def exposed_family(self, name):
        return re.search(rf"^# TYPE {re.escape(name)} ", self.exposed, re.M) is not None

    def allowed_empty(self, key, expression):
        """Why `expression` may return nothing, or None when it must return data."""
        if key in ALLOWED_EMPTY:
            return ALLOWED_EMPTY[key]
        return None

    def resolve_variables(self, dashboard):
        """Each query variable's values, resolved in order as Grafana does (a later query may use an
        earlier variable), and the value picked: the demo's application, the first of the others."""
        picked, problems = {}, []
        for name, query, match in label_values_queries(dashboard):
            selector, label = match.groups()
            expression = f"group by ({label}) ({substitute(selector, picked)})"
            values = sorted({r["metric"].get(label) for r in self.prometheus.query(expression)} - {None})
            if not values:
                reason = self.allowed_empty((dashboard["uid"], f"variable {name}", ""), expression)
                if reason is None:
                    problems.append(f"variable {name}: {expression} returned nothing")
                picked[name] = ""
                continue
            picked[name] = values[0]
        return picked, problems

    def test_every_panel_query_returns_data(self):
        ran, problems = 0, []
        for path in DASHBOARDS:
            dashboard = load_dashboard(path)
            picked, variable_problems = self.resolve_variables(dashboard)
            problems += [f"{path.name}: {p}" for p in variable_problems]
            if picked.get("app") != self.demo_app():
                problems.append(f"{path.name}: variable app is {picked.get('app')!r}, not the demo's application")
            values = dict(picked)
            values.update({v["name"]: v.get("query", "") for v in dashboard["templating"]["list"]
                           if v["type"] in ("textbox", "constant")})
            values["datasource"] = "prometheus"
            for panel, target in dashboard_targets(dashboard):
                expression = substitute(target["expr"], values)
                key = (path.name, panel["title"], target["refId"])
                result = self.prometheus.query(expression)
                ran += 1
                if not result and self.allowed_empty(key, target["expr"]) is None:
                    problems.append(f"{path.name}: panel {panel['title']!r} {target['refId']}: {expression}")
        self.assertGreaterEqual(ran, sum(len(p.get("targets", [])) for d in DASHBOARDS
                                         for p in all_panels(load_dashboard(d))))
        self.assertEqual(problems, [], "queries that returned nothing on the demo")

    def demo_app(self):
        apps = sorted({r["metric"]["app"] for r in self.prometheus.query("group by (app) (spark_phase_breakdown_ratio)")})
        self.assertEqual(len(apps), 1, f"the demo runs one application: {apps}")
        return apps[0]

    def test_the_trace_view_link_lists_the_demos_airflow_task(self):
        """The phase timeline's link, with the DAG and task its variables find from
        spark_application_airflow_info: they must be the demo's task."""
        dashboard = load_dashboard(DASHBOARDS[1])
        picked, problems = self.resolve_variables(dashboard)
        self.assertEqual(problems, [])
        self.assertTrue(self.exposed_family("spark_application_airflow_info"))
        self.assertEqual((picked["dag_id"], picked["task_id"]), (self.dag_id, self.task_id))
        (link,) = [link for link in dashboard["links"] if "${traceview}" in link["url"]]
        url = link["url"].replace("${traceview}", self.admin_url)
        for name in ("dag_id", "task_id"):
            url = url.replace(f"${{{name}:percentencode}}", urllib.parse.quote(picked[name], safe=""))
        self.assertNotIn("$", url)
        status, page = http_get(url)
        self.assertEqual(status, 200, url)
        self.assertIn("<title>sparktrace</title>", page)
        # What that page shows: the task list with its query, from the JSON API.
        query = urllib.parse.urlsplit(url).query
        status, body = http_get(f"{self.admin_url}/api/v1/tasks?{query}")
        self.assertEqual(status, 200, body)
        tasks = json.loads(body)["tasks"]
        self.assertTrue(tasks, f"{url} lists no attempt")
        self.assertEqual({(t["dag_id"], t["task_id"]) for t in tasks}, {(self.dag_id, self.task_id)})

    def test_every_recording_rule_returns_data(self):
        records = [r for r in rules_of(self.rule_file) if "record" in r]
        self.assertTrue(records)
        problems = [f"{r['record']} expression: {r['expr']}" for r in records if not self.prometheus.query(r["expr"])]
        self.assertEqual(problems, [], "recording rules whose expression returned nothing on the demo")

        def recorded():
            return all(self.prometheus.query(r["record"]) for r in records)

        # Prometheus writes a recorded series at its next evaluation (every second here).
        try:
            wait_until(recorded, 20, interval=0.5, message="every recorded series")
        except AssertionError:
            missing = [r["record"] for r in records if not self.prometheus.query(r["record"])]
            self.fail(f"recorded series missing: {missing}")

    def test_every_alert_input_returns_data(self):
        problems, checked = [], 0
        for rule in [r for r in rules_of(self.rule_file) if "alert" in r]:
            inputs = alert_inputs(rule["expr"])
            self.assertTrue(inputs, rule["alert"])
            for expression in inputs:
                checked += 1
                if not self.prometheus.query(expression) and self.allowed_empty(
                        ("rules", rule["alert"], expression), expression) is None:
                    problems.append(f"{rule['alert']}: {expression}")
        self.assertGreaterEqual(checked, len([r for r in rules_of(self.rule_file) if "alert" in r]))
        self.assertEqual(problems, [], "alert inputs that returned nothing on the demo")

    def test_prometheus_loaded_every_rule_healthy(self):
        wanted = {(g["name"], r.get("alert") or r.get("record")) for g in self.rule_file["spec"]["groups"]
                  for r in g["rules"]}

        def evaluated():
            groups = self.prometheus.api("rules")["groups"]
            rules = [(g["name"], r) for g in groups for r in g["rules"]]
            done = all(r.get("lastEvaluation", "").startswith("20") and r.get("evaluationTime", 0) > 0
                       for _, r in rules)
            return rules if done and rules else None

        rules = wait_until(evaluated, 20, interval=0.5, message="every rule evaluated once")
        self.assertEqual({(group, r["name"]) for group, r in rules}, wanted)
        unhealthy = [(r["name"], r["health"], r.get("lastError")) for _, r in rules if r["health"] != "ok"]
        self.assertEqual(unhealthy, [])

    def test_the_demos_scenario_sets_off_its_alerts_and_no_others_of_failure(self):
        def states():
            alerts = {r["name"]: r for g in self.prometheus.api("rules", type="alert")["groups"] for r in g["rules"]}
            ready = all(alerts.get(name, {}).get("state") in wanted for name, wanted in EXPECTED_ACTIVE.items())
            return alerts if ready else None

        try:
            alerts = wait_until(states, 30, interval=0.5, message="the demo's alerts to become active")
        except AssertionError:
            alerts = {r["name"]: r for g in self.prometheus.api("rules", type="alert")["groups"] for r in g["rules"]}
            self.fail({name: alerts.get(name, {}).get("state") for name in EXPECTED_ACTIVE})
        self.assertLessEqual(EXPECTED_INACTIVE | set(EXPECTED_ACTIVE), set(alerts))
        active = {name: alerts[name]["state"] for name in EXPECTED_INACTIVE if alerts[name]["state"] != "inactive"}
        self.assertEqual(active, {})
        firing = [a for a in alerts["SparktraceResourceWaitShareHigh"]["alerts"]]
        self.assertEqual({a["labels"].get("app") for a in firing}, {self.demo_app()})


if __name__ == "__main__":
    unittest.main()
