"""Stand-in for PySpark's ``python/pyspark/sql/connect/client/artifact.py``, 3.5 through 4.1 (the 4.0
and 4.1 stand-ins find this module through their client package's ``__path__``).

Mirrors apache/spark's ``ArtifactManager`` (read at commit 0a90271bea0cc6221a6c1d722428f94398a01fce, a
4.x version; 3.5's and 4.0's core.py call the same constructor: ``ArtifactManager(user_id, session_id,
channel, metadata)``): it makes a stub of its own on the session's channel (``self._stub``) and keeps
the metadata it was given (``self._metadata``, the copy taken when the session was created). Every
AddArtifacts (a client stream of requests) and ArtifactStatus call passes ``metadata=self._metadata``.
Only local files in one batch and the in-memory cache path; chunking is left out.
"""

import hashlib
import os
import zlib
from typing import Any, Iterable, Iterator, List, Optional, Tuple

import grpc

import pyspark.sql.connect.proto as proto
import pyspark.sql.connect.proto.base_pb2_grpc as grpc_lib

CACHE_PREFIX = "cache"


class ArtifactManager:
    def __init__(
        self,
        user_id: Optional[str],
        session_id: str,
        channel: grpc.Channel,
        metadata: Iterable[Tuple[str, str]],
    ):
        self._user_context = proto.UserContext()
        if user_id is not None:
            self._user_context.user_id = user_id
        self._stub = grpc_lib.SparkConnectServiceStub(channel)
        self._session_id = session_id
        self._metadata = metadata

    def _batch_request(self, artifacts: List[Tuple[str, bytes]]) -> Any:
        chunks = [
            proto.AddArtifactsRequest.SingleChunkArtifact(
                name=name, data=proto.AddArtifactsRequest.ArtifactChunk(data=data, crc=zlib.crc32(data)))
            for name, data in artifacts
        ]
        return proto.AddArtifactsRequest(session_id=self._session_id, user_context=self._user_context,
                                         batch=proto.AddArtifactsRequest.Batch(artifacts=chunks))

    def _create_requests(self, *path: str, pyfile: bool, archive: bool, file: bool) -> Iterator[Any]:
        prefix = "pyfiles" if pyfile else "archives" if archive else "files" if file else "jars"
        artifacts = []
        for p in path:
            with open(p, "rb") as f:
                artifacts.append((f"{prefix}/{os.path.basename(p)}", f.read()))

        def generator() -> Iterator[Any]:
            yield self._batch_request(artifacts)

        return generator()

    def _retrieve_responses(self, requests: Iterator[Any]) -> Any:
        return self._stub.AddArtifacts(requests, metadata=self._metadata)

    def add_artifacts(self, *path: str, pyfile: bool, archive: bool, file: bool) -> None:
        self._retrieve_responses(self._create_requests(*path, pyfile=pyfile, archive=archive, file=file))

    def is_cached_artifact(self, hash: str) -> bool:
        name = CACHE_PREFIX + "/" + hash
        request = proto.ArtifactStatusesRequest(user_context=self._user_context, session_id=self._session_id,
                                                names=[name])
        resp = self._stub.ArtifactStatus(request, metadata=self._metadata)
        status = resp.statuses.get(name)
        return status.exists if status is not None else False

    def cache_artifact(self, blob: bytes) -> str:
        hash = hashlib.sha256(blob).hexdigest()
        if not self.is_cached_artifact(hash):
            self._retrieve_responses(iter([self._batch_request([(f"{CACHE_PREFIX}/{hash}", blob)])]))
        return hash
