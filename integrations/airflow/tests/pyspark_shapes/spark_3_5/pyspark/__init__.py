"""Stand-in for PySpark 3.5 (only pyspark.sql.connect's client; see tests/pyspark_shapes/__init__.py)."""

__sparktrace_shape__ = "3.5"
