"""Starts moto server on 127.0.0.1, prints the bound port, exits when its parent process dies.

Binding port 0 lets the OS pick a free port with no race; watching the parent means a test run that is
killed (even with SIGKILL) never leaves an emulator behind.
"""
import copy
import importlib
import inspect
import json
import logging
import os
import signal
import sys
import textwrap
import threading
import time

from moto import backends
from moto.events import models as events_models
from moto.sqs import models as sqs_models
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from waitress.server import create_server

import moto_dynamodb_scan  # Scan pages without re-sorting the table per page (local/moto_dynamodb_scan.py)
import moto_s3_listing  # ListObjectsV2 from a sorted index of each bucket's keys (local/moto_s3_listing.py)
import moto_stepfunctions  # Step Functions executions that run (local/moto_stepfunctions.py)

moto_s3_listing.install()
moto_dynamodb_scan.install()

# moto lists its own package directories (one stat per service) on every request to find the backend;
# the list cannot change while the server runs, and caching it halves the per-request cost.
_MODULES = tuple(backends.list_of_moto_modules())
backends.list_of_moto_modules = lambda: _MODULES  # type: ignore[assignment]

# SQS checks every message's visibility on each send and receive (O(queue length)), and each check builds
# datetimes twice. The same comparison on epoch milliseconds from time.time() is ~15x cheaper, which keeps
# 10,000-message queues usable. Semantics unchanged: moto's unix_time_millis() is epoch ms too.
_sqs_message = sqs_models.Message
_sqs_message.visible = property(lambda self: time.time() * 1000 > self.visible_at)  # type: ignore[method-assign]
_sqs_message.delayed = property(lambda self: time.time() * 1000 < self.delayed_until)  # type: ignore[method-assign]

# moto treats a schedule-only rule (no event pattern) as matching every PutEvents and then fails on its Lambda
# target, so any PutEvents on that bus errors. In AWS a scheduled rule never matches put events: skip them.
_send_to_targets = events_models.Rule.send_to_targets


def _send_unless_scheduled(self, *args, **kwargs):  # type: ignore[no-untyped-def]
    if self.scheduled_expression and not self.event_pattern.get_pattern():
        return None
    return _send_to_targets(self, *args, **kwargs)


events_models.Rule.send_to_targets = _send_unless_scheduled  # type: ignore[method-assign]

# moto's SQS delete rebuilds the message list without the lock that send holds, so a message sent while a
# delete runs is lost (a lost update). Deleting under the same lock makes the two serialize, as in SQS.
# moto's delete also walked the queue twice per message, building each message's list of receipt handles at
# every step (O(queue length) allocations per delete: deleting a 10,000-message backlog was O(n^2) and most of
# the full bench's cost benchmark): the same test, one walk, no lists built.
_DELETE_NEEDLE = "message.had_receipt_handle(receipt_handle)"
if _DELETE_NEEDLE not in inspect.getsource(sqs_models.Queue.delete_message):
    raise RuntimeError("moto's Queue.delete_message changed: revisit local/moto_launcher.py")


def _had_handle(message, receipt_handle):  # type: ignore[no-untyped-def]
    return message.receipt_handle == receipt_handle or receipt_handle in message._old_receipt_handles


def _delete_locked(self, receipt_handle):  # type: ignore[no-untyped-def]
    with self._messages_lock:
        if receipt_handle in self.deleted_messages:
            return  # already deleted: SQS accepts deleting it again
        deleted = [message for message in self._messages if _had_handle(message, receipt_handle)]
        if not deleted:
            raise sqs_models.ReceiptHandleIsInvalid()
        for message in deleted:
            self.pending_messages.discard(message)
            self.deleted_messages.update(message.all_receipt_handles)
        # A new list, as moto's own delete makes: a receive walking the old one is not disturbed.
        gone = {id(message) for message in deleted}
        self._messages = [message for message in self._messages if id(message) not in gone]


sqs_models.Queue.delete_message = _delete_locked  # type: ignore[method-assign]

# SendMessage reads one attribute through Queue.attributes, which builds every attribute, including three
# approximate counts that each scan the whole queue: every send was O(queue length), so S3 events into a queue
# holding thousands of messages slowed to tens per second. The same test, without building the rest.
_SEND_NEEDLE = 'queue.attributes.get("ContentBasedDeduplication") == "true"'
_send_source = textwrap.dedent(inspect.getsource(sqs_models.SQSBackend.send_message))
if _SEND_NEEDLE not in _send_source:
    raise RuntimeError("moto's SQSBackend.send_message changed: revisit local/moto_launcher.py")


def _content_based_deduplication(queue):  # type: ignore[no-untyped-def]
    return bool(queue.fifo_queue) and str(getattr(queue, "content_based_deduplication", False)).lower() == "true"


sqs_models._content_based_deduplication = _content_based_deduplication  # type: ignore[attr-defined]
exec(  # noqa: S102 - moto's own source, one expression replaced, in its module's namespace
    _send_source.replace(_SEND_NEEDLE, "_content_based_deduplication(queue)"), sqs_models.__dict__, _patched := {}
)
sqs_models.SQSBackend.send_message = _patched["send_message"]  # type: ignore[method-assign]

# ReceiveMessage checks each message it returns against the queue's retention period, read through
# get_queue_attributes, which builds Queue.attributes three times, each time scanning the whole queue three
# times for the approximate counts: nine scans per message returned, so a receive of 10 from a 10,000-message
# queue took over a second and draining it was O(n^2) (the full bench's 10,000-file backlog never finished).
# The same comparison, on the one attribute it reads.
_RETENTION_SOURCE = textwrap.dedent(inspect.getsource(sqs_models.SQSBackend.is_message_valid_based_on_retention_period))
if '["MessageRetentionPeriod"]' not in _RETENTION_SOURCE:
    raise RuntimeError("moto's SQSBackend.is_message_valid_based_on_retention_period changed: revisit local/moto_launcher.py")


def _within_retention(self, queue_name, message):  # type: ignore[no-untyped-def]
    retention_period = self.get_queue(queue_name).message_retention_period
    return int(retention_period) + message.sent_timestamp / 1000 > time.time()


sqs_models.SQSBackend.is_message_valid_based_on_retention_period = _within_retention  # type: ignore[method-assign]

# moto's TransactWriteItems deep-copies every table it touches before it starts, and on any failed condition
# puts the copies back. The copy costs O(table size) per transaction (seconds for a 20,000-file ledger), and
# the put-back erases every write other requests made to those tables meanwhile: a claim written while a
# takeover transaction fails is lost (a lost update AWS never makes). Instead: transactions run one at a time
# (under the item lock below),
# the copy is skipped (moto's own put-back then restores the same objects, a no-op), and on failure only the
# items the transaction touched are restored from their snapshot.
_dynamodb_module = importlib.import_module("moto.dynamodb.models")
_DynamoDBBackend = _dynamodb_module.DynamoDBBackend
_Table = importlib.import_module("moto.dynamodb.models.table").Table
_DynamoType = importlib.import_module("moto.dynamodb.models.dynamo_type").DynamoType
_transact_write_items = _DynamoDBBackend.transact_write_items
# One lock for every item read and write: DynamoDB's conditional writes are atomic and its transactions
# serializable with single-item reads and writes (DynamoDB developer guide, "Isolation levels for DynamoDB
# transactions"). moto checks a condition, then writes, in the request's thread: two conditional updates of
# one item could both pass their check (both "won" a version). Serializing them costs nothing measurable,
# since moto holds the GIL for nearly all of each request anyway.
_item_lock = threading.RLock()


def _under(lock, method):  # type: ignore[no-untyped-def]
    def locked(*args, **kwargs):  # type: ignore[no-untyped-def]
        with lock:
            return method(*args, **kwargs)

    return locked


for _name in ("put_item", "update_item", "delete_item", "get_item", "query", "scan"):
    setattr(_DynamoDBBackend, _name, _under(_item_lock, getattr(_DynamoDBBackend, _name)))


class _NoTableCopy:
    """`copy` as moto's DynamoDB backend module sees it: tables are not copied, anything else is."""

    @staticmethod
    def deepcopy(value, memo=None):  # type: ignore[no-untyped-def]
        return value if isinstance(value, _Table) else copy.deepcopy(value, memo)


_dynamodb_module.copy = _NoTableCopy  # type: ignore[attr-defined]

# moto parses a ConditionExpression (or FilterExpression) in Python twice per request, once to validate it
# and once to evaluate it: about 0.5 ms of its one process per conditional write on a quiet core, a third of
# a plain PutItem's whole cost, where DynamoDB serves and bills a conditional write like a plain one. A parse
# is a function of the expression, its names and its values, and the tree it returns is only read (each node
# is set up in its constructor and evaluated against an item), so the same request's parse is reused. A parse
# that fails is not kept: the request gets moto's own error, every time.
_comparisons = importlib.import_module("moto.dynamodb.comparisons")
_Parser = _comparisons.ConditionExpressionParser
_parse = _Parser.parse
_parsed: dict = {}
_PARSED_MAX = 4096


def _parse_once(self):  # type: ignore[no-untyped-def]
    key = (
        self.condition_expression,
        json.dumps(self.expression_attribute_names, sort_keys=True, default=str),
        json.dumps(self.expression_attribute_values, sort_keys=True, default=str),
    )
    hit = _parsed.get(key)
    if hit is None:
        tree = _parse(self)
        hit = (tree, tuple(self.expr_attr_names_found), tuple(self.expr_attr_values_found))
        if len(_parsed) >= _PARSED_MAX:
            _parsed.clear()
        _parsed[key] = hit
    tree, names, values = hit
    # What moto's validation reads after parsing: the placeholders the expression used.
    self.expr_attr_names_found = list(names)
    self.expr_attr_values_found = list(values)
    return tree


_Parser.parse = _parse_once  # type: ignore[method-assign]


def _item_key(backend, op_type, op):  # type: ignore[no-untyped-def]
    table = backend.get_table(op["TableName"])
    attrs = op["Item"] if op_type == "Put" else op["Key"]
    hash_value = _DynamoType(attrs[table.hash_key_attr])
    range_value = _DynamoType(attrs[table.range_key_attr]) if table.range_key_attr else None
    return table, hash_value, range_value


def _transact_write_items_isolated(self, transact_items):  # type: ignore[no-untyped-def]
    with _item_lock:
        snapshots = []
        for item in transact_items:
            try:
                op_type, op = next(iter(item.items()))
                table, hash_value, range_value = _item_key(self, op_type, op)
            except Exception:  # noqa: BLE001 - malformed: moto's own validation reports it
                continue
            snapshots.append((table, hash_value, range_value, copy.deepcopy(table.get_item(hash_value, range_value))))
        try:
            return _transact_write_items(self, transact_items)
        except Exception:
            for table, hash_value, range_value, old in reversed(snapshots):
                if old is None:
                    table.delete_item(hash_value, range_value)
                elif range_value is not None:
                    table.items[hash_value][range_value] = old
                else:
                    table.items[hash_value] = old
            raise


_DynamoDBBackend.transact_write_items = _transact_write_items_isolated  # type: ignore[method-assign]


# S3 conditional writes (If-None-Match, If-Match on PutObject, CompleteMultipartUpload, DeleteObject, and
# CopyObject's source conditions) are atomic in S3: of racing writers one wins, the others get 412 (or 409
# ConditionalRequestConflict). moto checks the condition, then writes, without a lock, so two racing puts of
# one Delta log entry could both succeed (a forked table). Every object write runs under one lock.
_s3_responses = importlib.import_module("moto.s3.responses")
_object_write_lock = threading.RLock()

for _name in ("put_object", "copy_object", "delete_object", "_key_response_post"):
    setattr(_s3_responses.S3Response, _name, _under(_object_write_lock, getattr(_s3_responses.S3Response, _name)))


# Request logs (werkzeug's, if it serves anything; waitress's queue-depth notices) are noise at INFO.
logging.getLogger("werkzeug").setLevel(logging.WARNING)
logging.getLogger("waitress.queue").setLevel(logging.ERROR)


# ReceiveRequestAttemptId (FIFO queues), which moto ignores. SQS: "If a networking issue occurs after a
# ReceiveMessage action, and instead of a response you receive a generic error, it is possible to retry the
# same action with an identical ReceiveRequestAttemptId to retrieve the same set of messages, even if their
# visibility timeout has not yet expired", for 5 minutes, "if none of the messages have been modified
# (deleted or had their visibility changes)"; the retry "returns the same messages and receipt handles" and
# resets their visibility timeout (ReceiveMessage, API reference). Local mode uses it to give back what a
# killed run's pollers were receiving when the kill landed (local/held-messages.ts).
_ATTEMPT_SECONDS = 300
_attempts: dict = {}  # (account, region, queue, attempt id) -> (time, [(message, visible_at, receipt handle)])
_attempts_lock = threading.Lock()
_attempt = threading.local()
_sqs_responses = importlib.import_module("moto.sqs.responses")
_backend_receive = sqs_models.SQSBackend.receive_message
_response_receive = _sqs_responses.SQSResponse.receive_message


def _receive(self, queue_name, count, wait_seconds_timeout, visibility_timeout, *args, **kwargs):  # type: ignore[no-untyped-def]
    replay = getattr(_attempt, "replay", None)
    if replay is not None:
        timeout = visibility_timeout or self.get_queue(queue_name).visibility_timeout
        copies = []
        for message, _, _ in replay:
            message.change_visibility(int(timeout))
            copies.append(copy.deepcopy(message))
        with _attempts_lock:
            _attempts[_attempt.key] = (_attempts[_attempt.key][0], [(m, m.visible_at, m.receipt_handle) for m, _, _ in replay])
        return copies
    result = _backend_receive(self, queue_name, count, wait_seconds_timeout, visibility_timeout, *args, **kwargs)
    key = getattr(_attempt, "key", None)
    if key is not None and result:
        queue = self.get_queue(queue_name)
        live = {m.id: m for m in queue._messages}
        received = [live[c.id] for c in result if c.id in live]
        now = time.time()
        with _attempts_lock:
            for old in [k for k, (at, _) in _attempts.items() if now - at > _ATTEMPT_SECONDS]:
                del _attempts[old]
            _attempts[key] = (now, [(m, m.visible_at, m.receipt_handle) for m in received])
    return result


def _receive_with_attempt(self):  # type: ignore[no-untyped-def]
    attempt_id = self._get_param("ReceiveRequestAttemptId")
    queue_name = self._get_queue_name()
    queue = self.sqs_backend.get_queue(queue_name)
    if not attempt_id or not queue.fifo_queue:
        return _response_receive(self)
    key = (self.current_account, self.region, queue_name, attempt_id)
    with _attempts_lock:
        cached = _attempts.get(key)
    fresh = cached is not None and time.time() - cached[0] <= _ATTEMPT_SECONDS
    unchanged = fresh and all(
        message in queue._messages and message.visible_at == visible_at and message.receipt_handle == handle
        for message, visible_at, handle in cached[1]
    )
    _attempt.key = key
    _attempt.replay = cached[1] if unchanged and cached[1] else None
    try:
        return _response_receive(self)
    finally:
        _attempt.key = None
        _attempt.replay = None


sqs_models.SQSBackend.receive_message = _receive  # type: ignore[method-assign]
_sqs_responses.SQSResponse.receive_message = _receive_with_attempt  # type: ignore[method-assign]


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    # --detach: a background emulator for local mode that outlives `npm start` (stopped by `inlet down`).
    detached = "--detach" in sys.argv[2:]
    parent = os.getppid()
    # moto's own server is werkzeug's development server: a new thread and a new connection for every
    # request ("Connection: close"). waitress serves the same WSGI app with a thread pool and keep-alive:
    # about 1.5x the requests per second on the same CPU, which is what bounds every test here.
    moto_app = DomainDispatcherApplication(create_backend_app)

    def app(environ, start_response):  # type: ignore[no-untyped-def]
        # moto reads the undecoded path from werkzeug's RAW_URI (a key '%2B' must not become '+');
        # waitress passes the same as REQUEST_URI.
        environ.setdefault("RAW_URI", environ.get("REQUEST_URI", ""))
        if moto_stepfunctions.handles(environ):
            return moto_stepfunctions.app(environ, start_response)
        return moto_app(environ, start_response)

    server = create_server(app, host="127.0.0.1", port=port, threads=32, connection_limit=500, channel_timeout=300)
    print(json.dumps({"host": "127.0.0.1", "port": server.effective_port, "pid": os.getpid()}), flush=True)

    def watch_parent() -> None:
        while detached or os.getppid() == parent:
            time.sleep(0.5)
        server.close()
        os._exit(0)

    def stop(*_args: object) -> None:
        server.close()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threading.Thread(target=watch_parent, daemon=True).start()
    server.run()


if __name__ == "__main__":
    main()
