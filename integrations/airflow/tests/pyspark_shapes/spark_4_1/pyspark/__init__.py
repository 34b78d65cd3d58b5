"""Stand-in for PySpark 4.1 (only pyspark.sql.connect's client; see tests/pyspark_shapes/__init__.py)."""

__sparktrace_shape__ = "4.1"
