"""Stand-in for PySpark 4.1's ``python/pyspark/sql/connect/client/reattach.py``.

Mirrors apache/spark's 4.x ``ExecutePlanResponseReattachableIterator`` (not checked against 4.1) as read at commit
ca1d74cf1ade42ee23f72a05e87a191062ae318a (4.x: built as ``(request, stub, self._retrying,
self._builder.metadata())``, the retries from retries.py), in what decides its calls' metadata: the metadata given
once per execution is kept in ``self._metadata``; the first ExecutePlan uses the argument, every
ReattachExecute (a stream that ended without ``result_complete``) and ReleaseExecute uses
``self._metadata``, and ReleaseExecute is submitted to a class-wide ``ThreadPoolExecutor``, i.e. runs
on another thread. ``shutdown()`` (called by the client's ``close()``) waits for those releases.
"""

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, ClassVar, Iterable, Iterator, Optional, Tuple

import pyspark.sql.connect.proto as pb2


class ExecutePlanResponseReattachableIterator:
    _lock: ClassVar[threading.RLock] = threading.RLock()
    _release_thread_pool_instance: Optional[ThreadPoolExecutor] = None

    @classmethod
    def _get_or_create_release_thread_pool(cls) -> ThreadPoolExecutor:
        with cls._lock:
            if cls._release_thread_pool_instance is None:
                cls._release_thread_pool_instance = ThreadPoolExecutor(max_workers=4)
            return cls._release_thread_pool_instance

    @classmethod
    def shutdown(cls) -> None:
        with cls._lock:
            if cls._release_thread_pool_instance is not None:
                cls._release_thread_pool_instance.shutdown(wait=True)
                cls._release_thread_pool_instance = None

    def __init__(self, request: Any, stub: Any, retrying: Callable[[], Any], metadata: Iterable[Tuple[str, str]]):
        self._get_or_create_release_thread_pool()
        self._retrying = retrying
        self._operation_id = request.operation_id or str(uuid.uuid4())
        self._stub = stub
        request.request_options.append(
            pb2.ExecutePlanRequest.RequestOption(reattach_options=pb2.ReattachOptions(reattachable=True))
        )
        request.operation_id = self._operation_id
        self._initial_request = request
        self._last_returned_response_id: Optional[str] = None
        self._result_complete = False
        self._metadata = metadata
        self._iterator: Optional[Iterator[Any]] = iter(self._stub.ExecutePlan(self._initial_request, metadata=metadata))
        self._current: Optional[Any] = None

    def __iter__(self) -> "ExecutePlanResponseReattachableIterator":
        return self

    def __next__(self) -> Any:
        if not self._has_next():
            raise StopIteration()
        ret = self._current
        self._last_returned_response_id = ret.response_id
        if ret.HasField("result_complete"):
            self._release_all()
        else:
            self._release_until(self._last_returned_response_id)
        self._current = None
        return ret

    def _has_next(self) -> bool:
        if self._result_complete:
            return False
        while True:
            if self._iterator is None:
                # Graceful reattach: the stream ended without result_complete.
                self._iterator = iter(self._stub.ReattachExecute(self._create_reattach_execute_request(),
                                                                 metadata=self._metadata))
            try:
                self._current = next(self._iterator)
                return True
            except StopIteration:
                self._iterator = None

    def _submit_release(self, request: Any) -> None:
        def target() -> None:
            self._stub.ReleaseExecute(request, metadata=self._metadata)

        with self._lock:
            pool = self._release_thread_pool_instance
            if pool is not None:
                pool.submit(target)

    def _release_until(self, until_response_id: str) -> None:
        if self._result_complete:
            return
        self._submit_release(self._create_release_execute_request(until_response_id))

    def _release_all(self) -> None:
        if self._result_complete:
            return
        self._submit_release(self._create_release_execute_request(None))
        self._result_complete = True

    def _create_reattach_execute_request(self) -> Any:
        reattach = pb2.ReattachExecuteRequest(session_id=self._initial_request.session_id,
                                              user_context=self._initial_request.user_context,
                                              operation_id=self._initial_request.operation_id)
        if self._last_returned_response_id:
            reattach.last_response_id = self._last_returned_response_id
        return reattach

    def _create_release_execute_request(self, until_response_id: Optional[str]) -> Any:
        if not until_response_id:
            return pb2.ReleaseExecuteRequest(session_id=self._initial_request.session_id,
                                             user_context=self._initial_request.user_context,
                                             operation_id=self._initial_request.operation_id,
                                             release_all=pb2.ReleaseExecuteRequest.ReleaseAll())
        return pb2.ReleaseExecuteRequest(session_id=self._initial_request.session_id,
                                         user_context=self._initial_request.user_context,
                                         operation_id=self._initial_request.operation_id,
                                         release_until=pb2.ReleaseExecuteRequest.ReleaseUntil(
                                             response_id=until_response_id))
