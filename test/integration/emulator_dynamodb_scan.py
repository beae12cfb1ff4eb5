"""The launcher's DynamoDB Scan (local/moto_dynamodb_scan.py) against moto's own, page by page.

In one process: tables with a string or number partition key, with and without a number sort key, random
puts and deletes, then Scans with Limit (and a filter) walked with ExclusiveStartKey on both paths; every
page must hold the same items, Count, ScannedCount and LastEvaluatedKey. Exits 1 with each difference.

    .venv/bin/python test/integration/emulator_dynamodb_scan.py [--seed N]
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "local"))

import moto_dynamodb_scan  # noqa: E402
import moto_launcher  # noqa: E402, F401 - the launcher's patches, applied on import
from moto.dynamodb.models import dynamodb_backends  # noqa: E402

backend = dynamodb_backends["123456789012"]["us-east-1"]
problems: list[str] = []
# (name, hash type, sort key type or None)
SHAPES = [("s-hash", "S", None), ("n-hash", "N", None), ("s-hash-n-range", "S", "N")]


def create(name: str, hash_type: str, range_type: str | None) -> None:
    schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    attrs = [{"AttributeName": "pk", "AttributeType": hash_type}]
    if range_type:
        schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
        attrs.append({"AttributeName": "sk", "AttributeType": range_type})
    backend.create_table(
        name, schema=schema, throughput=None, attr=attrs, global_indexes=None, indexes=None, streams=None,
        billing_mode="PAY_PER_REQUEST", sse_specification=None, tags=[], deletion_protection_enabled=False,
        warm_throughput=None,
    )


def value(rng: random.Random, kind: str) -> dict:
    if kind == "N":
        return {"N": rng.choice(["-1", "0", "1.5", "2", "10", "100", str(rng.randint(-50, 50))])}
    return {"S": "".join(rng.choice(["a", "b", "/", "é", "\U0001f600", "\ufffd", "1", "10"]) for _ in range(rng.randint(1, 3)))}


def scan_pages(table: str, limit: int, fast: bool, filtered: bool) -> list:
    patched = (moto_dynamodb_scan._Table.scan, moto_dynamodb_scan._Table.all_items)
    if not fast:
        moto_dynamodb_scan._Table.scan = moto_dynamodb_scan._scan
        moto_dynamodb_scan._Table.all_items = moto_dynamodb_scan._all_items
    try:
        pages, start = [], None
        for _ in range(500):
            expression = "attribute_exists(flag)" if filtered else None
            items, scanned, last = backend.scan(
                table, filters={}, limit=limit, exclusive_start_key=start, filter_expression=expression,
                expr_names={}, expr_values={}, index_name=None, consistent_read=False, projection_expression=None,
                segments=(None, None),
            )
            pages.append(([item.to_json() for item in items], scanned, last))
            if not last:
                return pages
            start = last
        raise RuntimeError("more than 500 pages")
    finally:
        moto_dynamodb_scan._Table.scan, moto_dynamodb_scan._Table.all_items = patched


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=25)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    for name, hash_type, range_type in SHAPES:
        create(name, hash_type, range_type)
        for _ in range(6):
            for _ in range(rng.randint(10, 40)):
                key = {"pk": value(rng, hash_type), **({"sk": value(rng, range_type)} if range_type else {})}
                if rng.random() < 0.8:
                    backend.put_item(name, {**key, **({"flag": {"BOOL": True}} if rng.random() < 0.5 else {})})
                else:
                    try:
                        backend.delete_item(name, key)
                    except Exception:  # noqa: BLE001, S110 - deleting an absent item
                        pass
            for limit in (1, 3, 7, 1000):
                for filtered in (False, True):
                    fast, moto = scan_pages(name, limit, True, filtered), scan_pages(name, limit, False, filtered)
                    if fast != moto:
                        problems.append(f"{name} limit {limit} filtered {filtered}:\n  fast {fast}\n  moto {moto}")
    for problem in problems[:10]:
        print(problem[:2000])
    print(f"{len(problems)} difference(s)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
