"""Stand-in for PySpark 4.1's ``pyspark/sql/connect/client/__init__.py``: re-exports core's classes."""

from pyspark.sql.connect.client.core import *  # noqa: F401,F403
from pyspark.sql.connect.client.core import ChannelBuilder, DefaultChannelBuilder, SparkConnectClient  # noqa: F401
