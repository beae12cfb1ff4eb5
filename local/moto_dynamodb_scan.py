"""DynamoDB Scan pages on moto without re-sorting the table in Python per page (imported by moto_launcher.py).

moto 5.2.5's `Table.scan` sorts every item of the table for each page (`all_items`, comparing key objects
whose every comparison rebuilds their value: 4 s for 100,000 items at a load of 8 on 2 cores), then walks
from the first item comparing each with ExclusiveStartKey until it passes it (2.4 s to reach the 75,000th).
The bench's naive loader scans a 100,000-item control table in pages of about 26,000 (DynamoDB's 1 MB).
Here the same order is sorted on each item's key values, computed once (0.75 s), and the page starts at a
binary search for ExclusiveStartKey. The order is moto's: its key objects compare by those same values (one
table's keys share their types); DynamoDB itself documents no order for Scan, only that each item is
returned once across the pages.

Index scans (moto sorts them in `sorted_items`) are left to moto.
"""
import bisect
import importlib
import threading

_Table = importlib.import_module("moto.dynamodb.models.table").Table
_DynamoType = importlib.import_module("moto.dynamodb.models.dynamo_type").DynamoType
_scan = _Table.scan
_all_items = _Table.all_items
_start = threading.local()  # (table, key values of ExclusiveStartKey) while one scan of that table runs


def _order(item):  # type: ignore[no-untyped-def]
    # moto sorts on (hash_key, range_key) DynamoTypes, whose comparisons compare cast_value.
    hash_value = item.hash_key.cast_value
    return (hash_value, item.range_key.cast_value) if item.range_key else (hash_value,)


def all_items(self):  # type: ignore[no-untyped-def]
    items = []
    for hash_set in self.items.values():
        if self.range_key_attr:
            items.extend(hash_set.values())
        else:
            items.append(hash_set)
    keyed = sorted(((_order(item), item) for item in items), key=lambda pair: pair[0])
    start = getattr(_start, "key", None)
    at = 0
    if start is not None and start[0] is self:
        # moto skips items that come before or at ExclusiveStartKey: those up to it, inclusive.
        at = bisect.bisect_right([key for key, _ in keyed], start[1])
    return [item for _, item in keyed[at:]]


def _start_values(table, exclusive_start_key):  # type: ignore[no-untyped-def]
    try:
        hash_value = _DynamoType(exclusive_start_key[table.hash_key_attr]).cast_value
        if not table.range_key_attr:
            return (hash_value,)
        return (hash_value, _DynamoType(exclusive_start_key[table.range_key_attr]).cast_value)
    except (KeyError, TypeError, AttributeError):
        return None  # not a key of this table: moto's own scan answers it


def scan(self, filters, limit, exclusive_start_key, filter_expression=None, index_name=None, *args, **kwargs):  # type: ignore[no-untyped-def]
    start = None if exclusive_start_key is None or index_name else _start_values(self, exclusive_start_key)
    if start is None:
        return _scan(self, filters, limit, exclusive_start_key, filter_expression, index_name, *args, **kwargs)
    _start.key = (self, start)
    try:
        # The items before the start key are not in all_items' answer, so moto has none to skip.
        return _scan(self, filters, limit, None, filter_expression, index_name, *args, **kwargs)
    finally:
        _start.key = None


def install() -> None:
    _Table.all_items = all_items
    _Table.scan = scan
