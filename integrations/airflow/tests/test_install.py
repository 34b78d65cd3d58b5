"""Both ways of installing the plugin, found the way Airflow's plugins manager finds plugins.

* ``pip install ./integrations/airflow``: built and installed for real by Debian's pip (offline:
  ``--no-build-isolation --no-index``, into a temporary ``--target``), then discovered through the
  ``airflow.plugins`` entry point;
* the single file ``sparktrace_plugin.py`` copied alone into a plugins folder, loaded by file path.

There is no Airflow here: a stand-in ``airflow`` package (``plugins_manager.AirflowPlugin``,
``listeners.hookimpl``) is written into a temporary folder, and the discovery below follows
``airflow/plugins_manager.py`` (2.10 and 3.x): ``load_entrypoint_plugins`` loads each entry point of
the group, ``load_plugins_from_plugin_directory`` executes each ``*.py`` of the folder under its
stem's name; either keeps the attributes that are strict ``AirflowPlugin`` subclasses with a
``name``, and ``register_plugin`` keeps the first plugin of each name.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SINGLE_FILE = os.path.join(ROOT, "sparktrace_airflow", "sparktrace_plugin.py")

FAKE_AIRFLOW = {
    "airflow/__init__.py": '__version__ = "3.1.0"\n',
    "airflow/plugins_manager.py": (
        "class AirflowPluginException(Exception):\n"
        "    pass\n"
        "class AirflowPlugin:\n"
        "    name = None\n"
        "    macros = []\n"
        "    listeners = []\n"
        "    global_operator_extra_links = []\n"
        "    @classmethod\n"
        "    def validate(cls):\n"
        "        if not cls.name:\n"
        "            raise AirflowPluginException('Your plugin needs a name.')\n"
    ),
    # Airflow's marker is pluggy's HookimplMarker("airflow"); it tags the function the same way.
    "airflow/listeners/__init__.py": (
        "def hookimpl(function):\n"
        "    function.airflow_impl = {}\n"
        "    return function\n"
    ),
}

DISCOVERY = r"""
import importlib.machinery, importlib.metadata, importlib.util, inspect, json, pathlib, sys
from airflow.plugins_manager import AirflowPlugin

def is_valid_plugin(candidate):
    if inspect.isclass(candidate) and issubclass(candidate, AirflowPlugin) and candidate is not AirflowPlugin:
        candidate.validate()
        return True
    return False

found = []  # (source, plugin instance)
for entry_point in importlib.metadata.entry_points(group="airflow.plugins"):
    plugin = entry_point.load()
    if is_valid_plugin(plugin):
        found.append(("entry point " + entry_point.name + " of " + entry_point.dist.name, plugin()))
plugins_folder = sys.argv[1]
if plugins_folder:
    for path in sorted(pathlib.Path(plugins_folder).glob("*.py")):
        loader = importlib.machinery.SourceFileLoader(path.stem, str(path))
        spec = importlib.util.spec_from_loader(path.stem, loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        loader.exec_module(module)
        for value in list(module.__dict__.values()):
            if is_valid_plugin(value):
                found.append(("file " + path.name, value()))

registered = {}
for source, plugin in found:
    registered.setdefault(plugin.name, (source, plugin))
print(json.dumps({
    "found": [source for source, _ in found],
    "registered": {
        name: {
            "source": source,
            "listener_hooks": [
                hook for listener in plugin.listeners
                for hook in ("on_task_instance_running", "on_task_instance_success", "on_task_instance_failed",
                             "on_task_instance_skipped")
                if hasattr(getattr(listener, hook, None), "airflow_impl")
            ],
            "macros": [macro.__name__ for macro in plugin.macros],
            "links": [link.name for link in plugin.global_operator_extra_links],
        }
        for name, (source, plugin) in registered.items()
    },
}))
"""


class InstalledAsAirflowFindsIt(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="sparktrace-airflow-install-")
        cls.fake_airflow = os.path.join(cls.work, "fake")
        for relative, text in FAKE_AIRFLOW.items():
            path = os.path.join(cls.fake_airflow, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def pip_install(self):
        """``pip install ./integrations/airflow`` from a copy (setuptools builds in the source tree)."""
        source = os.path.join(self.work, "source")
        target = os.path.join(self.work, "site")
        if not os.path.isdir(target):
            shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
            result = subprocess.run(
                [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
                 "--no-cache-dir", "--disable-pip-version-check", "--quiet", "--target", target, source],
                capture_output=True, text=True, timeout=120,
            )
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return target

    def discover(self, site_dirs, plugins_folder=""):
        environment = dict(os.environ, PYTHONPATH=os.pathsep.join([*site_dirs, self.fake_airflow]))
        environment.pop("PYTHONSAFEPATH", None)
        result = subprocess.run(
            [sys.executable, "-c", DISCOVERY, plugins_folder],
            capture_output=True, text=True, timeout=60, env=environment, cwd=self.work,
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def assert_whole_plugin(self, registered):
        self.assertEqual(list(registered), ["sparktrace"])
        plugin = registered["sparktrace"]
        self.assertEqual(plugin["listener_hooks"], ["on_task_instance_running", "on_task_instance_success",
                                                    "on_task_instance_failed", "on_task_instance_skipped"])
        self.assertEqual(plugin["macros"], ["sparktrace_remote"])
        self.assertEqual(plugin["links"], ["Spark trace"])

    def test_pip_install_registers_the_entry_point(self):
        target = self.pip_install()
        self.assertTrue(os.path.isfile(os.path.join(target, "sparktrace_airflow", "sparktrace_plugin.py")))
        answer = self.discover([target])
        self.assertEqual(answer["found"], ["entry point sparktrace of sparktrace-airflow"])
        self.assert_whole_plugin(answer["registered"])

    def test_the_single_file_in_a_plugins_folder_is_a_plugin(self):
        plugins = os.path.join(self.work, "plugins")
        os.makedirs(plugins, exist_ok=True)
        shutil.copy(SINGLE_FILE, plugins)
        answer = self.discover([], plugins)
        self.assertEqual(answer["found"], ["file sparktrace_plugin.py"])
        self.assert_whole_plugin(answer["registered"])

    def test_both_at_once_register_one_plugin(self):
        """A deployment that has both keeps one plugin, so one listener wraps the metadata once."""
        target = self.pip_install()
        plugins = os.path.join(self.work, "plugins-both")
        os.makedirs(plugins, exist_ok=True)
        shutil.copy(SINGLE_FILE, plugins)
        answer = self.discover([target], plugins)
        self.assertEqual(len(answer["found"]), 2)
        self.assert_whole_plugin(answer["registered"])

    def test_no_airflow_means_no_plugin_class(self):
        """Without Airflow the entry point resolves to None, which Airflow would never see anyway."""
        target = self.pip_install()
        environment = dict(os.environ, PYTHONPATH=target)
        result = subprocess.run(
            [sys.executable, "-c",
             "import importlib.metadata as m\n"
             "(ep,) = [e for e in m.entry_points(group='airflow.plugins') if e.name == 'sparktrace']\n"
             "print(ep.value, ep.load())\n"],
            capture_output=True, text=True, timeout=60, env=environment, cwd=self.work,
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.split(), ["sparktrace_airflow.plugin:SparktracePlugin", "None"])


if __name__ == "__main__":
    unittest.main()
