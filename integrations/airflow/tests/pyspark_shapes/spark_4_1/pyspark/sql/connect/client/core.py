"""Stand-in for PySpark 4.1's ``python/pyspark/sql/connect/client/core.py`` (``pyspark`` and
``pyspark-client`` share it).

Not read: no 4.1 version of core.py, artifact.py or reattach.py could be found in the stored copies
of apache/spark searched for this work. This is the 4.0 stand-in (same builder, construction order,
ArtifactManager copy, reattachable iterator, FetchErrorDetails without metadata) plus the one RPC
this repository's proto marks as 4.1, ``CloneSession``, sent the way every other session RPC is
(``metadata=self._builder.metadata()``; an assumption). The plugin does not depend on any of it
being exact: its stub proxy refreshes whatever metadata a call carries, or adds it to a call that
carries none.
"""

import os
from typing import Any, Optional

import pyspark.sql.connect.proto as pb2

# 4.0's core.py, run as this module (its classes are this module's, as in a real 4.1 install).
_CORE_4_0 = os.path.join(os.path.dirname(__file__), *[os.pardir] * 5, "spark_4_0", "pyspark", "sql", "connect",
                         "client", "core.py")
with open(_CORE_4_0, encoding="utf-8") as _source:
    exec(compile(_source.read(), _CORE_4_0, "exec"))  # noqa: S102 - a test stand-in's own source


def _clone(self: Any, new_session_id: Optional[str] = None) -> Any:
    req = pb2.CloneSessionRequest(session_id=self._session_id, client_type=self._builder.userAgent,
                                  user_context=self._user_context(), new_session_id=new_session_id or "")
    for attempt in self._retrying():
        with attempt:
            return self._stub.CloneSession(req, metadata=self._builder.metadata())


SparkConnectClient.clone = _clone  # type: ignore[name-defined]  # noqa: F821
