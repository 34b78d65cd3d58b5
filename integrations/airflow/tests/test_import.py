"""The plugin imports with no Airflow and no PySpark: as the package and as the single file
copied into a plugins folder. Each check runs in a fresh interpreter whose import system refuses
``airflow`` and ``pyspark`` even if they were installed."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SINGLE_FILE = os.path.join(ROOT, "sparktrace_airflow", "sparktrace_plugin.py")

BLOCK = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('airflow', 'pyspark', 'opentelemetry'):
            raise ModuleNotFoundError(name)
        return None
sys.meta_path.insert(0, _Block())
"""


def run(code, cwd):
    return subprocess.run([sys.executable, "-c", BLOCK + code], cwd=cwd, capture_output=True, text=True, timeout=60)


class ImportWithoutAirflow(unittest.TestCase):
    def test_every_file_compiles(self):
        for directory, _, files in os.walk(ROOT):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(directory, name)
                    with open(path, encoding="utf-8") as f:
                        compile(f.read(), path, "exec")

    def test_package_imports(self):
        result = run(
            "import sparktrace_airflow, sparktrace_airflow.headers, sparktrace_airflow.ids, sparktrace_airflow.plugin\n"
            "assert sparktrace_airflow.SparktracePlugin is None\n"
            "assert not [m for m in sys.modules if m.split('.')[0] in ('airflow', 'pyspark')]\n"
            "print(sparktrace_airflow.headers.connect_metadata(sparktrace_airflow.TaskIdentity('d', 't'), None))\n",
            ROOT,
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("x-airflow-dag-id", result.stdout)

    def test_single_file_in_a_plugins_folder_imports(self):
        with tempfile.TemporaryDirectory() as plugins:
            shutil.copy(SINGLE_FILE, os.path.join(plugins, "sparktrace_plugin.py"))
            result = run(
                "import sparktrace_plugin as p\n"
                "assert p.SparktracePlugin is None\n"
                "p.SparktraceListener().on_task_instance_running(None, object())\n"
                "print(p.trace_view_url('http://x', p.TaskIdentity('d', 't', 'r')))\n",
                plugins,
            )
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("http://x/attempt?dag=d&task=t&run=r&try=1", result.stdout)


if __name__ == "__main__":
    unittest.main()
