"""The delta-rs peer of the bronze sink: what a user writes instead of a sink, a job that reads the landing
JSON Lines files and appends them to a Delta table with `write_deltalake`, one commit per batch of files.

Arguments: endpoint, region, bucket, destination URI (s3://...); on stdin one JSON array of keys per commit
(`[["key", ...], ["key", ...]]`). Each file is parsed by pyarrow's JSON reader (the type inference a job gets
without writing a schema). pyarrow refuses a file whose column changes type (`"amount": "n/a"` among numbers)
and has no option to skip or keep such a value, so the job does what such jobs do (pandas' `errors="coerce"`):
it parses the lines itself, types each column by the kind most of its values have and nulls the others,
counting them.
Prints one JSON object: rows, commits, seconds for the whole job after start-up, readSeconds (fetching and
parsing), writeSeconds (`write_deltalake` alone), filesCoerced, valuesNulled and the first refusal.
"""
import io
import json
import os
import sys
import time

import boto3
import pyarrow as pa
import pyarrow.json as pj
from deltalake import write_deltalake

endpoint, region, bucket, uri = sys.argv[1:5]
batches = json.load(sys.stdin)

options = {
    "AWS_ENDPOINT_URL": endpoint,
    "AWS_REGION": region,
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_ALLOW_HTTP": "true",
}
s3 = boto3.client(
    "s3",
    endpoint_url=endpoint,
    region_name=region,
    aws_access_key_id="testing",
    aws_secret_access_key="testing",
)

coerced = {"files": 0, "values": 0, "first": None}


def kind(value):
    # bool before int: JSON true is a Python bool, which is also an int.
    return "bool" if isinstance(value, bool) else "number" if isinstance(value, (int, float)) else type(value)


def coerce(body):
    """Each column typed by the kind most of its values have; values of another kind become null."""
    records = [json.loads(line) for line in body.splitlines() if line.strip()]
    tally = {}
    for record in records:
        for name, value in record.items():
            if value is not None:
                counts = tally.setdefault(name, {})
                counts[kind(value)] = counts.get(kind(value), 0) + 1
    kinds = {name: max(counts, key=counts.get) for name, counts in tally.items()}
    for record in records:
        for name, value in record.items():
            if value is not None and kind(value) != kinds[name]:
                record[name] = None
                coerced["values"] += 1
    return pa.Table.from_pylist(records)


def read(key):
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    try:
        return pj.read_json(io.BytesIO(body))
    except pa.ArrowInvalid as error:
        coerced["files"] += 1
        coerced["first"] = coerced["first"] or f"{key}: {error}"
        return coerce(body)


started = time.perf_counter()
reading = writing = 0.0
rows = 0
for keys in batches:
    t0 = time.perf_counter()
    # A batch's files may differ (a column null in one, a float in another): promote as a job would.
    batch = pa.concat_tables([read(key) for key in keys], promote_options="permissive")
    t1 = time.perf_counter()
    write_deltalake(uri, batch, mode="append", storage_options=options)
    writing += time.perf_counter() - t1
    reading += t1 - t0
    rows += batch.num_rows
print(
    json.dumps(
        {
            "rows": rows,
            "commits": len(batches),
            "seconds": round(time.perf_counter() - started, 3),
            "readSeconds": round(reading, 3),
            "writeSeconds": round(writing, 3),
            "filesCoerced": coerced["files"],
            "valuesNulled": coerced["values"],
            "refusal": coerced["first"],
        }
    )
)
# delta-rs's native threads can abort the interpreter's teardown (delta-io/delta-rs#2184): the answer is
# printed and flushed; leave without the teardown.
sys.stdout.flush()
os._exit(0)
