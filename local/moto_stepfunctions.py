"""Step Functions executions that run, with their state kept by moto.

moto records StartExecution and leaves the execution RUNNING for ever (its own interpreter would run Lambda
tasks in Docker), with a placeholder history. Local mode's executor (local/step-functions/) runs each
execution in an ASL interpreter; this module keeps what it reports on moto's own execution objects, so that
moto's DescribeExecution, ListExecutions, GetExecutionHistory and StopExecution answer any client (the AWS
CLI, an SDK, the console's calls) as Step Functions does:

- StartExecution records the ExecutionStarted event, whoever calls it and whether or not an executor runs;
- an executor claims the RUNNING executions of its state machines (POST /_inlet/stepfunctions/claim), then
  records their history events and their end (POST /_inlet/stepfunctions/record). One owner at a time: an
  execution claimed by a process that is gone is handed to the next claimant marked as interrupted, and that
  executor fails it instead of running it a second time;
- StopExecution sets ABORTED (with the caller's error and cause) only on a RUNNING execution and records
  ExecutionAborted; the owner learns it from its next claim or record and stops its interpreter;
- GetExecutionHistory pages (maxResults, nextToken), reverses (reverseOrder) and leaves out input and output
  (includeExecutionData=false) as the API reference documents.
"""
from __future__ import annotations

import base64
import json
import os
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable

from moto.core.responses import ActionResult
from moto.stepfunctions import models, responses
from moto.stepfunctions.exceptions import InvalidToken, ValidationException

PREFIX = "/_inlet/stepfunctions/"
# A claim is kept while its process lives (same machine: the emulator binds 127.0.0.1 only) and has claimed
# within this long; past it, a live but silent process (hung, or stopped without releasing) loses it.
SILENT_OWNER_SECONDS = 60.0

_lock = threading.RLock()
_owners: dict[str, dict[str, Any]] = {}


def _utc(epoch_ms: float) -> datetime:
    # moto's own dates (start_date, stop_date) are naive UTC: the same here, so they compare and serialize alike.
    return datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc).replace(tzinfo=None)


def _events(execution: Any) -> list[dict[str, Any]]:
    return execution.__dict__.setdefault("inlet_events", [])


def _append(execution: Any, event: dict[str, Any]) -> None:
    events = _events(execution)
    event["id"] = len(events) + 1
    event["previousEventId"] = len(events)
    events.append(event)


def _alive(owner: str) -> bool:
    known = _owners.get(owner)
    if not known or time.monotonic() - known["seen"] > SILENT_OWNER_SECONDS:
        return False
    try:
        os.kill(known["pid"], 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


# --- moto patches: the API as clients call it -------------------------------------------------------------

_start_execution = models.StateMachine.start_execution


def _start_recorded(self, region_name, account_id, execution_name, execution_input):  # type: ignore[no-untyped-def]
    with _lock:
        before = len(self.executions)
        execution = _start_execution(self, region_name, account_id, execution_name, execution_input)
        # Same name and input as a RUNNING execution returns that one (StartExecution is idempotent): no event.
        if len(self.executions) > before:
            _append(
                execution,
                {
                    "timestamp": execution.start_date,
                    "type": "ExecutionStarted",
                    "executionStartedEventDetails": {
                        "input": execution_input,
                        "inputDetails": {"truncated": False},
                        "roleArn": self.roleArn,
                    },
                },
            )
        return execution


models.StateMachine.start_execution = _start_recorded  # type: ignore[method-assign]
models.Execution.get_execution_history = lambda self, _role_arn: list(_events(self))  # type: ignore[method-assign]


def _stop(self, stop_date=None, error=None, cause=None, **_kwargs):  # type: ignore[no-untyped-def]
    # moto sets ABORTED whatever the status, so a SUCCEEDED execution could be turned into an aborted one.
    # Step Functions stops only what runs; stopping a closed execution changes nothing.
    with _lock:
        if self.status != "RUNNING":
            return
        self.status = "ABORTED"
        self.stop_date = stop_date or models.utcnow()
        self.error = error
        self.cause = cause
        details = {k: v for k, v in (("error", error), ("cause", cause)) if v is not None}
        _append(
            self,
            {"timestamp": self.stop_date, "type": "ExecutionAborted", "executionAbortedEventDetails": details},
        )


models.Execution.stop = _stop  # type: ignore[method-assign]


def _stop_execution_backend(self, execution_arn, error=None, cause=None):  # type: ignore[no-untyped-def]
    execution = self.describe_execution(execution_arn)
    execution.stop(error=error, cause=cause)
    return execution


models.StepFunctionBackend.stop_execution = _stop_execution_backend  # type: ignore[method-assign]


def _stop_execution_response(self):  # type: ignore[no-untyped-def]
    execution = self.stepfunction_backend.stop_execution(
        self._get_param("executionArn"), error=self._get_param("error"), cause=self._get_param("cause")
    )
    return ActionResult({"stopDate": execution.stop_date or models.utcnow()})


responses.StepFunctionResponse.stop_execution = _stop_execution_response  # type: ignore[method-assign]

_REDRIVE_REASON = {"RUNNING": "Execution is RUNNING and cannot be redriven",
                   "SUCCEEDED": "Execution is SUCCEEDED and cannot be redriven"}


def _with_result(method: Callable[..., ActionResult], change: Callable[[Any, dict[str, Any]], None]):  # type: ignore[no-untyped-def]
    def patched(self):  # type: ignore[no-untyped-def]
        result = method(self)
        change(self, result.result)  # type: ignore[arg-type]
        return result

    return patched


def _describe_fields(self, response: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    # Fields DescribeExecution always carries on AWS. Redrive itself is not served locally (docs/emulator.md).
    response["inputDetails"] = {"included": True}
    if response["status"] == "TIMED_OUT":  # moto gives a stop date to SUCCEEDED, FAILED and ABORTED only
        response["stopDate"] = self.stepfunction_backend.describe_execution(response["executionArn"]).stop_date
    if "output" in response:
        response["outputDetails"] = {"included": True}
    response["redriveCount"] = 0
    status = response["status"]
    response["redriveStatus"] = "NOT_REDRIVABLE" if status in _REDRIVE_REASON else "REDRIVABLE"
    if status in _REDRIVE_REASON:
        response["redriveStatusReason"] = _REDRIVE_REASON[status]


def _list_fields(_self, response: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    for execution in response["executions"]:
        execution["redriveCount"] = 0


responses.StepFunctionResponse.describe_execution = _with_result(  # type: ignore[method-assign]
    responses.StepFunctionResponse.describe_execution, _describe_fields
)
responses.StepFunctionResponse.list_executions = _with_result(  # type: ignore[method-assign]
    responses.StepFunctionResponse.list_executions, _list_fields
)

_DATA_KEYS = ("input", "output")


def _without_data(event: dict[str, Any]) -> dict[str, Any]:
    copy = dict(event)
    for key, value in event.items():
        if key.endswith("EventDetails") and isinstance(value, dict):
            copy[key] = {k: v for k, v in value.items() if k not in _DATA_KEYS}
    return copy


def _token(arn: str, reverse: bool, offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps([arn, reverse, offset]).encode()).decode()


def _offset(token: str | None, arn: str, reverse: bool) -> int:
    if not token:
        return 0
    try:
        token_arn, token_reverse, offset = json.loads(base64.urlsafe_b64decode(token.encode()))
    except Exception:  # noqa: BLE001 - anything unreadable is an invalid token, as on AWS
        raise InvalidToken()
    # "Keep all other arguments unchanged" between pages (GetExecutionHistory, nextToken).
    if token_arn != arn or token_reverse != reverse or not isinstance(offset, int):
        raise InvalidToken()
    return offset


def _get_execution_history(self):  # type: ignore[no-untyped-def]
    arn = self._get_param("executionArn")
    max_results = self._get_int_param("maxResults") or 100  # 0 or absent: the default, 100
    if max_results > 1000 or max_results < 0:
        raise ValidationException(
            f"1 validation error detected: Value '{max_results}' at 'maxResults' failed to satisfy constraint: "
            "Member must have value less than or equal to 1000"
        )
    reverse = bool(self._get_bool_param("reverseOrder", False))
    include_data = self._get_bool_param("includeExecutionData", True) is not False
    events = self.stepfunction_backend.get_execution_history(arn)["events"]
    ordered = list(reversed(events)) if reverse else events
    start = _offset(self._get_param("nextToken"), arn, reverse)
    page = ordered[start : start + max_results]
    result: dict[str, Any] = {"events": page if include_data else [_without_data(e) for e in page]}
    if start + max_results < len(ordered):
        result["nextToken"] = _token(arn, reverse, start + max_results)
    return ActionResult(result)


responses.StepFunctionResponse.get_execution_history = _get_execution_history  # type: ignore[method-assign]


# --- the executor's side: claim, record -------------------------------------------------------------------


def _backend_for(arn: str) -> Any:
    parts = arn.split(":")
    return models.stepfunctions_backends[parts[4]][parts[3]]


def _execution(arn: str) -> Any:
    return _backend_for(arn).describe_execution(arn)


def _claim(body: dict[str, Any]) -> dict[str, Any]:
    owner, pid = str(body["owner"]), int(body["pid"])
    with _lock:
        _owners[owner] = {"pid": pid, "seen": time.monotonic(), "stateMachineArns": list(body["stateMachineArns"])}
        claimed = []
        for sm_arn in body["stateMachineArns"]:
            try:
                state_machine = _backend_for(sm_arn).describe_state_machine(sm_arn)
            except Exception:  # noqa: BLE001 - deleted meanwhile: nothing to run
                continue
            for execution in state_machine.executions:
                held_by = execution.__dict__.get("inlet_owner")
                if execution.status != "RUNNING" or held_by == owner or (held_by and _alive(held_by)):
                    continue
                execution.inlet_owner = owner
                claimed.append(
                    {
                        "executionArn": execution.execution_arn,
                        "stateMachineArn": state_machine.arn,
                        "name": execution.name,
                        "input": execution.execution_input,
                        "startDate": execution.start_date.replace(tzinfo=timezone.utc).timestamp() * 1000,
                        "roleArn": state_machine.roleArn,
                        # Claimed before by a process that is gone: it ran (partly) once and is not run again.
                        "interruptedOwner": held_by,
                    }
                )
        # What this owner runs that is no longer its to run: stopped (StopExecution) or taken over.
        stopped = []
        for arn in body.get("running", []):
            try:
                execution = _execution(arn)
            except Exception:  # noqa: BLE001
                stopped.append(arn)
                continue
            if execution.status != "RUNNING" or execution.__dict__.get("inlet_owner") != owner:
                stopped.append(arn)
        return {"claimed": claimed, "stopped": stopped}


def _record(body: dict[str, Any]) -> dict[str, Any]:
    owner, arn = str(body["owner"]), str(body["executionArn"])
    with _lock:
        execution = _execution(arn)
        if execution.status != "RUNNING" or execution.__dict__.get("inlet_owner") != owner:
            return {"accepted": False, "status": execution.status}
        if owner in _owners:
            _owners[owner]["seen"] = time.monotonic()
        for event in body.get("events", []):
            _append(execution, {**event, "timestamp": _utc(event["timestamp"])})
        close = body.get("close")
        if close:
            execution.status = close["status"]
            execution.stop_date = _utc(close["stopDate"])
            execution.output = close.get("output")
            execution.output_details = {"included": True} if close.get("output") is not None else None
            execution.error = close.get("error")
            execution.cause = close.get("cause")
        return {"accepted": True, "status": execution.status}


def _release(body: dict[str, Any]) -> dict[str, Any]:
    with _lock:
        _owners.pop(str(body["owner"]), None)
    return {}


def _executors(body: dict[str, Any]) -> dict[str, Any]:
    """The executors alive for a state machine: the CLI says when nothing will run what it starts."""
    arn = body.get("stateMachineArn")
    with _lock:
        live = [
            {"owner": owner, "pid": known["pid"]}
            for owner, known in _owners.items()
            if _alive(owner) and (arn is None or arn in known["stateMachineArns"])
        ]
    return {"executors": live}


_ROUTES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "claim": _claim,
    "record": _record,
    "release": _release,
    "executors": _executors,
}


def handles(environ: dict[str, Any]) -> bool:
    return str(environ.get("PATH_INFO", "")).startswith(PREFIX)


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """The executor's API: JSON in, JSON out, POST only."""
    route = _ROUTES.get(str(environ.get("PATH_INFO", ""))[len(PREFIX) :])
    if route is None or environ.get("REQUEST_METHOD") != "POST":
        start_response("404 Not Found", [("Content-Type", "application/json")])
        return [b'{"message":"no such local Step Functions route"}']
    length = int(environ.get("CONTENT_LENGTH") or 0)
    try:
        body = json.loads(environ["wsgi.input"].read(length) or b"{}")
        payload, status = route(body), "200 OK"
    except Exception as error:  # noqa: BLE001 - reported to the executor, which fails loudly
        payload, status = {"message": f"{type(error).__name__}: {error}"}, "400 Bad Request"
    data = json.dumps(payload).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]
