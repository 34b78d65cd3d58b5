"""Messages shaped like the ones protoc generates from Spark Connect's base.proto, for unit tests that
run the PySpark stand-ins against a recording channel (no protoc, no server).

Only what the stand-ins touch: keyword construction, attribute access with proto3-like defaults,
``HasField`` / ``WhichOneof`` and the nested types and enum values by the generated names. The
end-to-end tests use the real generated modules instead (tests/e2e/test_sim.py ``load_stubs``).
"""

from __future__ import annotations

import copy
from typing import Any, Dict, Tuple


class Message:
    """A protobuf-like message: fields given as keywords, the rest read as their defaults."""

    _defaults: Dict[str, Any] = {}
    _oneofs: Dict[str, Tuple[str, ...]] = {}

    def __init__(self, **fields: Any) -> None:
        for name, default in self._defaults.items():
            setattr(self, name, copy.copy(default))
        for name, value in fields.items():
            setattr(self, name, list(value) if isinstance(value, tuple) else value)

    def __getattr__(self, name: str) -> Any:  # unset message fields read as None
        if name.startswith("_"):
            raise AttributeError(name)
        return None

    def HasField(self, name: str) -> bool:  # noqa: N802 (protobuf's name)
        return self.__dict__.get(name) is not None

    def WhichOneof(self, group: str) -> Any:  # noqa: N802
        for name in self._oneofs.get(group, ()):
            if self.__dict__.get(name) is not None:
                return name
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__dict__})"


def _message(name: str, defaults: Dict[str, Any] = None, oneofs: Dict[str, Tuple[str, ...]] = None, **nested: Any) -> type:
    cls = type(name, (Message,), {"_defaults": dict(defaults or {}), "_oneofs": dict(oneofs or {})})
    for nested_name, nested_type in nested.items():
        setattr(cls, nested_name, nested_type)
    return cls


UserContext = _message("UserContext", {"user_id": ""})
Plan = _message("Plan")
KeyValue = _message("KeyValue", {"key": "", "value": None})
ReattachOptions = _message("ReattachOptions", {"reattachable": False})

ExecutePlanRequest = _message(
    "ExecutePlanRequest",
    {"session_id": "", "client_type": "", "operation_id": "", "tags": [], "request_options": [],
     "client_observed_server_side_session_id": ""},
    RequestOption=_message("RequestOption"),
)
ExecutePlanResponse = _message(
    "ExecutePlanResponse", {"session_id": "", "operation_id": "", "response_id": ""},
    {"response_type": ("arrow_batch", "result_complete")},
    ArrowBatch=_message("ArrowBatch", {"row_count": 0, "data": b""}),
    ResultComplete=_message("ResultComplete"),
)
AnalyzePlanRequest = _message(
    "AnalyzePlanRequest", {"session_id": "", "client_type": ""}, {"analyze": ("schema", "explain")},
    Schema=_message("Schema"), Explain=_message("Explain"),
)
AnalyzePlanResponse = _message("AnalyzePlanResponse", {"session_id": ""})
ConfigRequest = _message(
    "ConfigRequest", {"session_id": "", "client_type": ""},
    Operation=_message("Operation"), Get=_message("Get", {"keys": []}),
    GetWithDefault=_message("GetWithDefault", {"pairs": []}),
)
ConfigResponse = _message("ConfigResponse", {"session_id": "", "pairs": [], "warnings": []})


class _InterruptType:
    INTERRUPT_TYPE_UNSPECIFIED = 0
    INTERRUPT_TYPE_ALL = 1
    INTERRUPT_TYPE_TAG = 2
    INTERRUPT_TYPE_OPERATION_ID = 3


InterruptRequest = _message("InterruptRequest", {"session_id": "", "client_type": "", "interrupt_type": 0,
                                                 "operation_tag": "", "operation_id": ""},
                            InterruptType=_InterruptType)
InterruptResponse = _message("InterruptResponse", {"session_id": "", "interrupted_ids": []})
ReattachExecuteRequest = _message("ReattachExecuteRequest", {"session_id": "", "operation_id": "", "client_type": "",
                                                             "last_response_id": ""})
ReleaseExecuteRequest = _message(
    "ReleaseExecuteRequest", {"session_id": "", "operation_id": "", "client_type": ""},
    {"release": ("release_all", "release_until")},
    ReleaseAll=_message("ReleaseAll"), ReleaseUntil=_message("ReleaseUntil", {"response_id": ""}),
)
ReleaseExecuteResponse = _message("ReleaseExecuteResponse", {"session_id": "", "operation_id": ""})
AddArtifactsRequest = _message(
    "AddArtifactsRequest", {"session_id": ""}, {"payload": ("batch", "begin_chunk", "chunk")},
    ArtifactChunk=_message("ArtifactChunk", {"data": b"", "crc": 0}),
    SingleChunkArtifact=_message("SingleChunkArtifact", {"name": ""}),
    Batch=_message("Batch", {"artifacts": []}),
    BeginChunkedArtifact=_message("BeginChunkedArtifact", {"name": "", "total_bytes": 0, "num_chunks": 0}),
)
AddArtifactsResponse = _message("AddArtifactsResponse", {"artifacts": []})
ArtifactStatusesRequest = _message("ArtifactStatusesRequest", {"session_id": "", "names": []})
ArtifactStatusesResponse = _message("ArtifactStatusesResponse", {"statuses": {}},
                                    ArtifactStatus=_message("ArtifactStatus", {"exists": False}))
ReleaseSessionRequest = _message("ReleaseSessionRequest", {"session_id": "", "client_type": ""})
ReleaseSessionResponse = _message("ReleaseSessionResponse", {"session_id": ""})
FetchErrorDetailsRequest = _message("FetchErrorDetailsRequest", {"session_id": "", "error_id": "", "client_type": ""})
FetchErrorDetailsResponse = _message("FetchErrorDetailsResponse", {"errors": []})
CloneSessionRequest = _message("CloneSessionRequest", {"session_id": "", "new_session_id": "", "client_type": ""})
CloneSessionResponse = _message("CloneSessionResponse", {"session_id": "", "new_session_id": ""})
