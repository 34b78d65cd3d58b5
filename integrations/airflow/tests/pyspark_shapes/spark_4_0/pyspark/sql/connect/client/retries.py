"""Stand-in for PySpark 4.0's ``python/pyspark/sql/connect/client/retries.py``: ``Retrying(policies)``
and ``DefaultPolicy`` by name; exactly one attempt (retries do not change a call's metadata)."""

from typing import Any, Iterable, Iterator


class RetryPolicy:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


class DefaultPolicy(RetryPolicy):
    pass


class _Attempt:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


class Retrying:
    def __init__(self, policies: "RetryPolicy | Iterable[RetryPolicy]", **_: Any) -> None:
        self._policies = policies

    def __iter__(self) -> Iterator[_Attempt]:
        yield _Attempt()
