"""Just enough of a Prometheus text-format (0.0.4) parser to assert on /metrics values."""

import re

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


class Metrics:
    def __init__(self, text):
        self.types = {}  # family name -> counter/gauge/histogram/...
        self.samples = []  # (name, labels dict, float value)
        for line in text.splitlines():
            if line.startswith("# TYPE "):
                _, _, name, kind = line.split(None, 3)
                self.types[name] = kind.strip()
            elif line.strip() and not line.startswith("#"):
                match = _SAMPLE.match(line.strip())
                if not match:
                    raise ValueError(f"unparseable metrics line: {line!r}")
                name, labels, value = match.groups()
                self.samples.append((name, _labels(labels or ""), float(value)))

    def find(self, name, **labels):
        """Samples named `name` whose labels include `labels`."""
        return [(l, v) for n, l, v in self.samples
                if n == name and all(l.get(k) == want for k, want in labels.items())]

    def value(self, name, **labels):
        """The single sample matching, or 0.0 when absent (counters start unexported)."""
        found = self.find(name, **labels)
        if len(found) > 1:
            raise AssertionError(f"{name}{labels} matches {len(found)} series: {found}")
        return found[0][1] if found else 0.0

    def total(self, name, **labels):
        return sum(v for _, v in self.find(name, **labels))


def _labels(text):
    out, pos = {}, 0
    while pos < len(text):
        match = _LABEL.match(text, pos)
        if not match:
            raise ValueError(f"bad label set: {text!r}")
        out[match.group(1)] = re.sub(r"\\[\\\"n]", lambda m: _UNESCAPE[m.group(0)], match.group(2))
        pos = match.end()
    return out
