"""Stand-in for PySpark 3.5's ``pyspark/sql/connect/client/__init__.py``: re-exports core's classes."""

from pyspark.sql.connect.client.core import *  # noqa: F401,F403
from pyspark.sql.connect.client.core import ChannelBuilder, SparkConnectClient  # noqa: F401
