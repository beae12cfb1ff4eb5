"""Starts moto server on 127.0.0.1, prints the bound port, exits when its parent process dies.

Binding port 0 lets the OS pick a free port with no race; watching the parent means a test run that is
killed (even with SIGKILL) never leaves an emulator behind.
"""
import copy
import importlib
import json
import logging
import os
import signal
import sys
import threading
import time

from moto import backends
from moto.events import models as events_models
from moto.sqs import models as sqs_models
from moto.moto_server.threaded_moto_server import ThreadedMotoServer

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
_delete_message = sqs_models.Queue.delete_message


def _delete_locked(self, receipt_handle):  # type: ignore[no-untyped-def]
    with self._messages_lock:
        return _delete_message(self, receipt_handle)


sqs_models.Queue.delete_message = _delete_locked  # type: ignore[method-assign]

# moto's TransactWriteItems deep-copies every table it touches before it starts, and on any failed condition
# puts the copies back. The copy costs O(table size) per transaction (seconds for a 20,000-file ledger), and
# the put-back erases every write other requests made to those tables meanwhile: a claim written while a
# takeover transaction fails is lost (a lost update AWS never makes). Instead: transactions run one at a time,
# the copy is skipped (moto's own put-back then restores the same objects, a no-op), and on failure only the
# items the transaction touched are restored from their snapshot.
_dynamodb_module = importlib.import_module("moto.dynamodb.models")
_DynamoDBBackend = _dynamodb_module.DynamoDBBackend
_Table = importlib.import_module("moto.dynamodb.models.table").Table
_DynamoType = importlib.import_module("moto.dynamodb.models.dynamo_type").DynamoType
_transact_write_items = _DynamoDBBackend.transact_write_items
_transaction_lock = threading.RLock()


class _NoTableCopy:
    """`copy` as moto's DynamoDB backend module sees it: tables are not copied, anything else is."""

    @staticmethod
    def deepcopy(value, memo=None):  # type: ignore[no-untyped-def]
        return value if isinstance(value, _Table) else copy.deepcopy(value, memo)


_dynamodb_module.copy = _NoTableCopy  # type: ignore[attr-defined]


def _item_key(backend, op_type, op):  # type: ignore[no-untyped-def]
    table = backend.get_table(op["TableName"])
    attrs = op["Item"] if op_type == "Put" else op["Key"]
    hash_value = _DynamoType(attrs[table.hash_key_attr])
    range_value = _DynamoType(attrs[table.range_key_attr]) if table.range_key_attr else None
    return table, hash_value, range_value


def _transact_write_items_isolated(self, transact_items):  # type: ignore[no-untyped-def]
    with _transaction_lock:
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


# werkzeug logs every request at INFO (formatted, then discarded: stderr is ignored or a file): a tenth of the
# server's time under load. Warnings and errors still go out.
logging.getLogger("werkzeug").setLevel(logging.WARNING)


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    # --detach: a background emulator for local mode that outlives `npm start` (stopped by `inlet down`).
    detached = "--detach" in sys.argv[2:]
    parent = os.getppid()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    host, bound = server.get_host_and_port()
    print(json.dumps({"host": host, "port": bound, "pid": os.getpid()}), flush=True)

    stopping = False

    def stop(*_args: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not stopping and (detached or os.getppid() == parent):
        time.sleep(0.5)
    server.stop()


if __name__ == "__main__":
    main()
