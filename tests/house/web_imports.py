"""The page's module rules: ES module imports between web/assets files follow its layers, one way.

The layers, bottom to top, as the code stands (web/README.md describes each file):
- pure: figures, text and URLs, no element, no fetch (url_state, format, phases, airflow_task, the
  breakdown's geometry, fix text, the timeline's tree and layout, the plan tree, attribute groups,
  markdown, suppression, lanes, progress); unit-tested under node alone. They import only each other.
- tools: what every view builds with: element builders (dom), same-origin fetch and polling (api), the
  phase fill patterns (patterns). They import pure modules and each other.
- views: every other file (a new file is a view until it is listed below it): one part of a page
  (badges, bars, findings, the timeline's pieces, the detail panel, plan view, error view...). They import
  views, tools and pure modules.
- pages: `*_page.js`, one per route; they import views and below, never another page.
- app: app.js, the router; nothing imports it.

An import points to a lower layer, or into its own layer where that layer allows it; no circles; only
relative imports of files under web/assets (no packages: the page has no build step and no npm
dependency). Tests and dev tools (web/test, web/dev) import anything.
"""

import posixpath
import re

from circles import circles

ASSETS = "web/assets/"

PURE = {"url_state.js", "format.js", "phases.js", "airflow_task.js", "breakdown_geometry.js", "fix_text.js",
        "gantt_tree.js", "gantt_layout.js", "plan_tree.js", "attribute_groups.js", "markdown.js",
        "suppression.js", "lanes.js", "progress.js"}
TOOLS = {"dom.js", "api.js", "patterns.js"}
# (name, whether a file of the layer may import another of the same layer), bottom to top.
LAYERS = (("pure", True), ("tools", True), ("views", True), ("pages", False), ("app", False))
LAYER_INDEX = {name: floor for floor, (name, _) in enumerate(LAYERS)}

# `import … from '…'`, `export … from '…'`, `import '…'` (over several lines), and `import('…')`.
STATIC_IMPORT = re.compile(r"""(?:^|[;\s])(?:import|export)\s*(?:[\w*{}\s,$]*?\bfrom\s*)?(['"])([^'"\n]+)\1""",
                           re.M)
DYNAMIC_IMPORT = re.compile(r"""\bimport\s*\(\s*(['"])([^'"\n]+)\1""")
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
LINE_COMMENT = re.compile(r"^\s*//[^\n]*", re.M)


def layer_of(path):
    """The layer of a web/assets file (repository path)."""
    name = path[len(ASSETS):]
    if name == "app.js":
        return "app"
    if name.endswith("_page.js"):
        return "pages"
    if name in PURE:
        return "pure"
    if name in TOOLS:
        return "tools"
    return "views"


def imports_of(text):
    """The module specifiers a script imports, in order."""
    text = LINE_COMMENT.sub("", BLOCK_COMMENT.sub("", text))
    return [spec for _, spec in STATIC_IMPORT.findall(text)] + [spec for _, spec in DYNAMIC_IMPORT.findall(text)]


def resolve(importer, spec):
    """The repository path an import names, or None when it names no file of ours (a package)."""
    if spec.startswith("/assets/"):
        return ASSETS + spec[len("/assets/"):]
    if spec.startswith(("./", "../")):
        return posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
    return None


def import_graph(scripts):
    """{web/assets path: set of web/assets paths it imports} and the breaches met on the way."""
    graph, found = {}, set()
    for path, text in sorted(scripts.items()):
        targets = graph.setdefault(path, set())
        for spec in imports_of(text):
            target = resolve(path, spec)
            if target is None:
                found.add(f"{path}: imports '{spec}', not a file under web/assets (no packages: no build step)")
            elif not target.startswith(ASSETS):
                found.add(f"{path}: imports '{spec}', outside web/assets")
            elif target not in scripts:
                found.add(f"{path}: imports '{spec}', which is not there")
            else:
                targets.add(target)
    return graph, found


def against_the_layers(path, target):
    """Why an import from path to target goes against the layers, or None when it does not."""
    layer, other = layer_of(path), layer_of(target)
    if LAYER_INDEX[other] > LAYER_INDEX[layer]:
        return f"{path}: imports {target}, of the {other} layer, above the {layer} layer"
    if other == layer and not LAYERS[LAYER_INDEX[layer]][1]:
        return f"{path}: imports {target}; a {layer} module imports none of its own layer"
    return None


def breaches(scripts):
    """Every breach of the page's module rules, one line each, sorted.

    scripts: {repository path: text} of the web/assets JavaScript files.
    """
    graph, found = import_graph(scripts)
    found |= {why for path, targets in graph.items() for target in targets
              if (why := against_the_layers(path, target))}
    for circle in circles(graph):
        found.add("web/assets: modules that import each other in a circle: " + ", ".join(circle))
    return sorted(found)


def summary(scripts):
    """(modules, imports, imports against the layers, circles) of the page's import graph."""
    graph, _ = import_graph(scripts)
    against = sum(1 for path, targets in graph.items() for target in targets if against_the_layers(path, target))
    return len(graph), sum(len(targets) for targets in graph.values()), against, len(circles(graph))


def is_script(path):
    return path.startswith(ASSETS) and path.endswith((".js", ".mjs"))
