"""Stand-in for PySpark 4.0's ``pyspark/sql/connect/client/__init__.py``: re-exports core's classes.

artifact.py is the one 3.5 has (same ``ArtifactManager`` in what decides its calls' metadata): this
package's path goes on to the 3.5 stand-in's, after its own modules.
"""

import os

__path__.append(os.path.join(os.path.dirname(__file__), *[os.pardir] * 5, "spark_3_5", "pyspark", "sql", "connect", "client"))

from pyspark.sql.connect.client.core import *  # noqa: F401,F403,E402
from pyspark.sql.connect.client.core import ChannelBuilder, DefaultChannelBuilder, SparkConnectClient  # noqa: F401,E402
