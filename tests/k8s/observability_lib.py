"""What the observability tests share: the Grafana dashboards and Prometheus rules of k8s/, a PromQL
parser that knows which metrics and labels an expression uses, the catalogue of what the binary
exposes, and the doc links the panels and alerts point at.

Standard library and python3-yaml only: tests/k8s/test_observability.py (which also imports the e2e
harness, with grpcio) and tests/k8s/test_live_prometheus.py (which must not) both import it.
"""

import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

GRAFANA_DIR = ROOT / "k8s" / "grafana"
# Every dashboard the Grafana kustomization ships, in the order of its ConfigMap generator.
DASHBOARDS = [GRAFANA_DIR / name for name in
              ("sparktrace-overview.json", "spark-job-phase-timeline.json", "spark-profiling.json")]
RULES_DIR = ROOT / "k8s" / "prometheus"
RULES = RULES_DIR / "sparktrace-rules.yaml"
RULES_TESTS = RULES_DIR / "sparktrace-rules.test.yaml"
TRACING_DOC = ROOT / "docs" / "tracing.md"
RECIPES_INDEX = ROOT / "docs" / "recipes" / "README.md"

# Labels Prometheus itself attaches to every scraped series (the target's), not the binary.
TARGET_LABELS = {"job", "instance"}
# Grafana's interval variables, replaced by a duration before parsing.
GRAFANA_INTERVALS = re.compile(r"\$\{?(__rate_interval|__interval|__range)\b\}?")
RECIPE_PATH = re.compile(r"\bdocs/[A-Za-z0-9_./-]+\.md(?:#[a-z0-9-]+)?")


# --------------------------------------------------------------------------------------------------
# PromQL: just enough of a parser to know which metrics and labels an expression uses.
# --------------------------------------------------------------------------------------------------

AGGREGATORS = {"sum", "avg", "min", "max", "count", "stddev", "stdvar", "topk", "bottomk", "quantile",
               "count_values", "group", "limitk", "limit_ratio"}
BINARY_PRECEDENCE = {"or": 1, "and": 2, "unless": 2, "==": 3, "!=": 3, "<": 3, ">": 3, "<=": 3, ">=": 3,
                     "+": 4, "-": 4, "*": 5, "/": 5, "%": 5, "atan2": 5, "^": 6}
COMPARISONS = {"==", "!=", "<", ">", "<=", ">="}
SET_OPERATORS = {"and", "or", "unless"}
_TOKEN = re.compile(r"""
    (?P<space>\s+|\#[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<duration>(?:\d+(?:ms|s|m|h|d|w|y))+)(?![A-Za-z0-9_])
  | (?P<number>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_:]*)  # not from ":", which starts a subquery's resolution
  | (?P<op>==|!=|<=|>=|=~|!~|[-+*/%^=<>(){}\[\],:@])
""", re.VERBOSE)


class PromQLError(ValueError):
    pass


def tokenize(text):
    """(kind, value, start, end) per token, ending with ("end", "", len, len)."""
    tokens, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise PromQLError(f"cannot read {text[pos:pos + 20]!r} in {text!r}")
        pos = match.end()
        if match.lastgroup != "space":
            tokens.append((match.lastgroup, match.group(), match.start(), match.end()))
    tokens.append(("end", "", len(text), len(text)))
    return tokens


class Parser:
    """Recursive descent into a tree of dicts: selector, aggregation, call, binary, unary, number,
    string. Every node has `span`, its (start, end) in the parsed text."""

    def __init__(self, text):
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0

    def parse(self):
        node = self.expression(0)
        if self.peek()[0] != "end":
            raise PromQLError(f"unexpected {self.peek()[1]!r} in {self.text!r}")
        return node

    def peek(self, ahead=0):
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def take(self, value=None):
        token = self.peek()
        if value is not None and token[1] != value:
            raise PromQLError(f"expected {value!r}, got {token[1]!r} in {self.text!r}")
        self.pos += 1
        return token

    def mark(self, node, first_token):
        node["span"] = (self.tokens[first_token][2], self.tokens[self.pos - 1][3])
        return node

    def binary_operator(self):
        kind, value = self.peek()[:2]
        if kind in ("op", "ident") and value in BINARY_PRECEDENCE:
            return value
        return None

    def expression(self, min_precedence):
        first = self.pos
        left = self.unary()
        while True:
            op = self.binary_operator()
            if op is None or BINARY_PRECEDENCE[op] < min_precedence:
                return left
            self.take()
            matching = {"on": None, "labels": [], "group": None, "group_labels": [], "bool": False}
            if self.peek()[1] == "bool":
                self.take()
                matching["bool"] = True
            if self.peek()[1] in ("on", "ignoring"):
                matching["on"] = self.take()[1]
                matching["labels"] = self.label_list()
            if self.peek()[1] in ("group_left", "group_right"):
                matching["group"] = self.take()[1]
                if self.peek()[1] == "(":
                    matching["group_labels"] = self.label_list()
            # ^ is right-associative, every other operator left-associative.
            next_min = BINARY_PRECEDENCE[op] + (0 if op == "^" else 1)
            right = self.expression(next_min)
            left = self.mark({"type": "binary", "op": op, "left": left, "right": right, "matching": matching},
                             first)

    def unary(self):
        first = self.pos
        if self.peek()[1] in ("-", "+"):
            self.take()
            return self.mark({"type": "unary", "arg": self.unary()}, first)
        return self.mark(self.postfix(self.primary()), first)

    def postfix(self, node):
        while True:
            value = self.peek()[1]
            if value == "[":
                self.take()
                self.take_duration()
                if self.peek()[1] == ":":  # subquery [range:resolution]
                    self.take()
                    if self.peek()[1] != "]":
                        self.take_duration()
                self.take("]")
            elif value == "offset":
                self.take()
                if self.peek()[1] == "-":
                    self.take()
                self.take_duration()
            elif value == "@":
                self.take()
                if self.peek()[1] in ("start", "end"):
                    self.take()
                    self.take("(")
                    self.take(")")
                else:
                    self.take()
            else:
                return node

    def take_duration(self):
        kind, value = self.take()[:2]
        if kind not in ("duration", "number"):
            raise PromQLError(f"expected a duration, got {value!r} in {self.text!r}")

    def primary(self):
        kind, value = self.peek()[:2]
        if kind == "number" or (kind == "ident" and value.lower() in ("inf", "nan")):
            self.take()
            numeric = kind == "number" and not value.lower().startswith("0x")
            return {"type": "number", "value": float(value) if numeric else None}
        if kind == "string":
            self.take()
            return {"type": "string"}
        if value == "(":
            self.take()
            node = self.expression(0)
            self.take(")")
            return node
        if value == "{":
            return {"type": "selector", "name": None, "matchers": self.matchers()}
        if kind != "ident":
            raise PromQLError(f"unexpected {value!r} in {self.text!r}")
        self.take()
        if value in AGGREGATORS and self.peek()[1] in ("(", "by", "without"):
            return self.aggregation(value)
        if self.peek()[1] == "(":
            return {"type": "call", "func": value, "args": self.arguments()}
        matchers = self.matchers() if self.peek()[1] == "{" else []
        return {"type": "selector", "name": value, "matchers": matchers}

    def aggregation(self, op):
        grouping, without = None, False
        if self.peek()[1] in ("by", "without"):
            without = self.take()[1] == "without"
            grouping = self.label_list()
        args = self.arguments()
        if self.peek()[1] in ("by", "without"):
            without = self.take()[1] == "without"
            grouping = self.label_list()
        return {"type": "aggregation", "op": op, "grouping": grouping, "without": without, "args": args}

    def arguments(self):
        self.take("(")
        args = []
        while self.peek()[1] != ")":
            args.append(self.expression(0))
            if self.peek()[1] == ",":
                self.take()
        self.take(")")
        return args

    def label_list(self):
        self.take("(")
        labels = []
        while self.peek()[1] != ")":
            kind, value = self.take()[:2]
            if kind != "ident":
                raise PromQLError(f"expected a label name, got {value!r} in {self.text!r}")
            labels.append(value)
            if self.peek()[1] == ",":
                self.take()
        self.take(")")
        return labels

    def matchers(self):
        self.take("{")
        matchers = []
        while self.peek()[1] != "}":
            label = self.take()
            if label[0] != "ident":
                raise PromQLError(f"expected a label name, got {label[1]!r} in {self.text!r}")
            op = self.take()[1]
            if op not in ("=", "!=", "=~", "!~"):
                raise PromQLError(f"bad matcher operator {op!r} in {self.text!r}")
            value = self.take()
            if value[0] != "string":
                raise PromQLError(f"matcher value must be a string in {self.text!r}")
            matchers.append((label[1], op, value[1][1:-1]))
            if self.peek()[1] == ",":
                self.take()
        self.take("}")
        return matchers


def with_intervals(text, duration="5m"):
    """Grafana's $__rate_interval, $__interval and $__range replaced by `duration`."""
    return GRAFANA_INTERVALS.sub(duration, text)


def parse_promql(text):
    return Parser(with_intervals(text)).parse()


def children(node):
    if node["type"] in ("aggregation", "call"):
        return node["args"]
    if node["type"] == "binary":
        return [node["left"], node["right"]]
    if node["type"] == "unary":
        return [node["arg"]]
    return []


def selectors(node):
    if node["type"] == "selector":
        yield node
    for child in children(node):
        yield from selectors(child)


def alert_inputs(text):
    """The parts of an alert expression that hold data, as PromQL text: the threshold comparisons
    (`x > 0.9`) taken off, and the sides of `and`/`or`/`unless` each on its own. `x > 0.9 and on (app)
    y == 1` gives `x` and `y`."""
    text = with_intervals(text)
    found = []

    def walk(node):
        if node["type"] == "binary" and node["op"] in SET_OPERATORS:
            walk(node["left"])
            walk(node["right"])
        elif node["type"] == "binary" and node["op"] in COMPARISONS and node["right"]["type"] == "number":
            walk(node["left"])
        elif node["type"] == "binary" and node["op"] in COMPARISONS and node["left"]["type"] == "number":
            walk(node["right"])
        else:
            start, end = node["span"]
            found.append(text[start:end])

    walk(Parser(text).parse())
    return found


class Catalogue:
    """Metric name → label names: what the binary exposes, the documented-only exceptions, and what
    recording rules produce."""

    def __init__(self, metrics, documented, documented_only_allowed=()):
        # Queryable series names: what has samples, plus each declared family's own names (a histogram's
        # family_bucket with le, family_sum and family_count; never the bare histogram name).
        self.labels = {}
        self.sampled = set()
        for name, labels, _ in metrics.samples:
            self.labels.setdefault(name, set()).update(labels)
            self.sampled.add(name)
        for family, kind in metrics.types.items():
            if kind == "histogram":
                for suffix in ("_bucket", "_sum", "_count"):
                    self.labels.setdefault(family + suffix, set())
                self.labels[family + "_bucket"].add("le")
            else:
                self.labels.setdefault(family, set())
        self.documented = documented
        self.documented_only_allowed = set(documented_only_allowed)
        self.recorded = {}

    def lookup(self, name):
        """Label names of `name`, or None when the binary does not expose it (nor, for the allowed
        exceptions, the docs)."""
        if name in self.recorded:
            return self.recorded[name]
        if name in self.documented_only_allowed and name not in self.sampled and name in self.documented:
            return self.documented[name]
        return self.labels.get(name)

    def output_labels(self, node):
        """Labels a (vector) expression's result carries, as far as the checks need them."""
        kind = node["type"]
        if kind == "selector":
            return set(self.lookup(node["name"]) or ()) | TARGET_LABELS
        if kind == "aggregation":
            inner = set().union(*(self.output_labels(a) for a in node["args"]))
            if node["grouping"] is None:
                return set()
            return inner - set(node["grouping"]) if node["without"] else set(node["grouping"])
        if kind == "call":
            vectors = [a for a in node["args"] if a["type"] not in ("number", "string")]
            out = self.output_labels(vectors[0]) if vectors else set()
            if node["func"] == "histogram_quantile":
                out = out - {"le"}
            return out
        if kind == "binary":
            left, right = node["left"], node["right"]
            if left["type"] == "number":
                return self.output_labels(right)
            matching = node["matching"]
            if matching["group"] == "group_right":
                return self.output_labels(right) | set(matching["group_labels"])
            return self.output_labels(left) | set(matching["group_labels"])
        if kind == "unary":
            return self.output_labels(node["arg"])
        return set()

    def problems(self, expression, where):
        """What in `expression` the binary does not have: unknown metrics or labels."""
        try:
            tree = parse_promql(expression)
        except PromQLError as error:
            return [f"{where}: {error}"]
        found = []
        for node in selectors(tree):
            if node["name"] is None:
                found.append(f"{where}: selector without a metric name")
                continue
            labels = self.lookup(node["name"])
            if labels is None:
                found.append(f"{where}: {node['name']} is not exposed by the binary")
                continue
            for label, _, _ in node["matchers"]:
                if label not in labels | TARGET_LABELS:
                    found.append(f"{where}: {node['name']} has no label {label!r} (has {sorted(labels)})")
        self.check_grouping(tree, where, found)
        return found

    def check_grouping(self, node, where, found):
        if node["type"] == "aggregation" and node["grouping"]:
            available = set().union(*(self.output_labels(a) for a in node["args"]))
            for label in node["grouping"]:
                if label not in available:
                    found.append(f"{where}: by/without label {label!r} is on none of {sorted(available)}")
        if node["type"] == "binary" and node["matching"]["labels"]:
            available = self.output_labels(node["left"]) | self.output_labels(node["right"])
            for label in node["matching"]["labels"]:
                if label not in available:
                    found.append(f"{where}: on/ignoring label {label!r} is on neither side")
        for child in children(node):
            self.check_grouping(child, where, found)


def documented_metrics():
    """Metric → labels from the "Metrics" table of docs/tracing.md (`name`, `name2` | `label` (values), …)."""
    documented = {}
    for line in TRACING_DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        names = re.findall(r"`([a-z_:][a-z0-9_:]*)`", cells[0])
        label_text = re.sub(r"\([^)]*\)", "", cells[1])  # drop the listed values: (`ok`, `error`)
        if label_text.lstrip().startswith("histogram"):
            label_text = ""
        labels = set(re.findall(r"`([a-z_][a-z0-9_]*)`", label_text))
        for name in names:
            if name.startswith(("sparktrace_", "spark_")):
                documented[name] = labels
    return documented


# --------------------------------------------------------------------------------------------------
# The manifests
# --------------------------------------------------------------------------------------------------

def load_dashboard(path=DASHBOARDS[0]):
    with open(path) as handle:
        return json.load(handle)


def all_panels(dashboard):
    for panel in dashboard["panels"]:
        yield panel
        yield from panel.get("panels", [])  # collapsed rows hold their panels


def dashboard_targets(dashboard):
    """(panel, target) for every query of every panel."""
    for panel in all_panels(dashboard):
        for target in panel.get("targets", []):
            yield panel, target


def dashboard_expressions(dashboard):
    """(where, PromQL) for every target of every panel."""
    for panel, target in dashboard_targets(dashboard):
        yield f"panel {panel['id']} {panel['title']!r} {target.get('refId')}", target.get("expr", "")


LABEL_VALUES = re.compile(r"\s*label_values\(\s*(.+?)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*")


def label_values_queries(dashboard):
    """(variable name, query, match of `label_values(selector, label)`) for every query variable."""
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            query = query["query"] if isinstance(query, dict) else query
            yield variable["name"], query, LABEL_VALUES.fullmatch(query)


def load_rules():
    with open(RULES) as handle:
        return yaml.safe_load(handle)


def rules_of(rule_file):
    for group in rule_file["spec"]["groups"]:
        yield from group["rules"]


def github_anchor(heading):
    """GitHub's heading anchor: lower case, punctuation but - and _ removed, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def missing_doc_link(link):
    """None when `docs/….md#anchor` names a file of the repository (and a heading of it), else why not."""
    path, _, anchor = link.partition("#")
    if not (ROOT / path).is_file():
        return f"{path} does not exist"
    if anchor:
        headings = [github_anchor(h) for h in re.findall(r"^#+\s+(.*)$", (ROOT / path).read_text(), re.M)]
        if anchor not in headings:
            return f"{path} has no heading #{anchor}"
    return None


def render_finding_runbook(template, finding_id):
    """The runbook_url template's `if eq $labels.id "…"` chain for one id, as Go's text/template renders it."""
    text = " ".join(template.split())
    for wanted, result in re.findall(r'eq \$labels\.id "([^"]+)" \}\}(.*?)\{\{', text):
        if wanted == finding_id:
            return result
    default = re.search(r"\{\{ else \}\}(.*?)\{\{ end \}\}", text)
    if not default:
        raise AssertionError(f"no else branch in {template!r}")
    return default.group(1).replace("{{ $labels.id }}", finding_id)


def recipe_table():
    """finding id → recipe path, from docs/recipes/README.md's table."""
    table = {}
    # A row may name several ids: "| `a`, `b` | [recipe](link) |".
    rows = re.findall(r"^\| ((?:`[a-z0-9-]+`(?:, )?)+) \| \[[^\]]*\]\(([^)]+)\)", RECIPES_INDEX.read_text(), re.M)
    for ids, link in rows:
        for finding_id in re.findall(r"`([a-z0-9-]+)`", ids):
            table[finding_id] = "docs/recipes/" + link
    return table


# --------------------------------------------------------------------------------------------------
# `sparktrace demo`: a proxy whose /metrics has an Airflow task's Spark application on it
# --------------------------------------------------------------------------------------------------

def wait_until(probe, timeout, interval=0.2, message="condition"):
    """Poll `probe` until it returns something true; that value, or AssertionError after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message}")
        time.sleep(interval)


def http_get(url, timeout=10):
    """(status, body text) of a GET; HTTP errors are answers too."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


class Demo:
    """`sparktrace demo` on loopback: the simulator and a proxy whose admin port it prints, one Airflow
    task's Spark Connect calls through it, then serving until stopped. Its files go under `workdir`."""

    ADMIN = re.compile(r"\badmin (http://127\.0\.0\.1:(\d+))\b")
    SERVING = "serving until Ctrl-C"

    def __init__(self, binary, workdir, *flags):
        workdir = Path(workdir)
        self.stderr = open(workdir / "demo.stderr", "w")
        self.lines = []
        self.lock = threading.Lock()
        # Its own session: the simulator and the proxy it starts are stopped with it, and only they.
        self.process = subprocess.Popen(
            [str(binary), "demo", "--listen", "127.0.0.1:0", "--store", str(workdir / "demo.db"),
             "--event-log-dir", str(workdir / "events"), *flags],
            stdout=subprocess.PIPE, stderr=self.stderr, stdin=subprocess.DEVNULL, text=True,
            start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.admin_url = None

    def _read(self):
        for line in self.process.stdout:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def output(self):
        with self.lock:
            return "\n".join(self.lines)

    def wait_until_served(self, timeout=60):
        """Wait until the demo's Airflow task has run and its trace was printed; the admin URL."""
        def served():
            if self.process.poll() is not None:
                raise AssertionError(f"sparktrace demo exited with {self.process.returncode}:\n{self.output()}\n"
                                     + Path(self.stderr.name).read_text()[-4000:])
            text = self.output()
            return self.SERVING in text and self.ADMIN.search(text)

        match = wait_until(served, timeout, message="sparktrace demo to run its task")
        self.admin_url = match.group(1)
        return self.admin_url

    def metrics_text(self):
        status, body = http_get(self.admin_url + "/metrics")
        if status != 200:
            raise AssertionError(f"GET {self.admin_url}/metrics answered {status}")
        return body

    def stop(self):
        """Ctrl-C, as the demo says; its whole session is killed when it does not exit in 15 s."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # the simulator and proxy, should they remain
        except (ProcessLookupError, PermissionError):
            pass
        if self.process.poll() is None:
            self.process.wait(timeout=10)
        self.reader.join(timeout=5)
        self.process.stdout.close()
        self.stderr.close()
