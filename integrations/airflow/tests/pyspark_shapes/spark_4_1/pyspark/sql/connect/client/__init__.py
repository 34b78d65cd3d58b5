"""Stand-in for PySpark 4.1's ``pyspark/sql/connect/client/__init__.py``: re-exports core's classes.

No 4.1 source was read (see core.py): artifact.py, reattach.py and retries.py are taken to be 4.0's,
so this package's path goes on to the 4.0 stand-in's (and from there artifact.py to 3.5's).
"""

import os

_SHAPES = os.path.join(os.path.dirname(__file__), *[os.pardir] * 5)
__path__.extend(os.path.join(_SHAPES, tree, "pyspark", "sql", "connect", "client") for tree in ("spark_4_0", "spark_3_5"))

from pyspark.sql.connect.client.core import *  # noqa: F401,F403,E402
from pyspark.sql.connect.client.core import ChannelBuilder, DefaultChannelBuilder, SparkConnectClient  # noqa: F401,E402
