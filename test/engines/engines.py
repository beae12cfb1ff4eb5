"""Reads bronze Delta tables with the reference engine (Apache Spark + Delta Lake, over s3a://) and with
delta-rs (`deltalake`, over its own S3 client), both against the emulator, for test/engines.

One process for the whole suite, so the JVM starts once: requests arrive as JSON lines on stdin, each
answer is one JSON line on file descriptor 3 (the JVM shares stdout and stderr with this process and logs
there). Values are answered in one canonical form per Delta type (`canon` below), so the test compares
both engines, and what it wrote, exactly: longs as decimal strings (no 2^53 rounding), timestamps with
their microseconds, decimals with their scale, -0.0 and non-finite doubles as Python prints them.

argv: <s3 endpoint> <region> <jars, comma-separated> <scratch dir>
"""
import datetime
import decimal
import json
import math
import os
import sys
import time
import traceback

import pyarrow as pa
from deltalake import DeltaTable

endpoint, region, jars, scratch = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
answers = os.fdopen(3, "w", encoding="utf-8")

DELTA_RS_OPTIONS = {
    "AWS_ENDPOINT_URL": endpoint,
    "AWS_REGION": region,
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_ALLOW_HTTP": "true",
}


# ---- one type notation for both engines: Delta's schema JSON (PROTOCOL.md "Schema Serialization Format",
# which is Spark's own StructType JSON), printed as e.g. long, decimal(10,2), struct<a:long>, array<string>.


def type_name(t):
    if isinstance(t, str):
        return t
    kind = t["type"]
    if kind == "struct":
        return "struct<" + ",".join(f"{f['name']}:{type_name(f['type'])}" for f in t["fields"]) + ">"
    if kind == "array":
        return f"array<{type_name(t['elementType'])}>"
    if kind == "map":
        return f"map<{type_name(t['keyType'])},{type_name(t['valueType'])}>"
    raise ValueError(f"unknown Delta type {t!r}")


def arrow_to_delta(t):
    """The Delta type of an Arrow column delta-rs returned (how delta-rs maps them, delta-rs kernel)."""
    simple = {
        pa.int8(): "byte",
        pa.int16(): "short",
        pa.int32(): "integer",
        pa.int64(): "long",
        pa.float32(): "float",
        pa.float64(): "double",
        pa.bool_(): "boolean",
        pa.date32(): "date",
    }
    if t in simple:
        return simple[t]
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "binary"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_struct(t):
        return {
            "type": "struct",
            "fields": [{"name": t.field(i).name, "type": arrow_to_delta(t.field(i).type)} for i in range(t.num_fields)],
        }
    if pa.types.is_map(t):
        return {"type": "map", "keyType": arrow_to_delta(t.key_type), "valueType": arrow_to_delta(t.item_type)}
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t):
        return {"type": "array", "elementType": arrow_to_delta(t.value_type)}
    raise ValueError(f"no Delta type for Arrow type {t}")


def canon(value, t):
    """One JSON value per Delta value, from the Python objects pyarrow's `to_pylist` makes of either engine's
    Arrow answer."""
    if value is None:
        return None
    if isinstance(t, dict):
        kind = t["type"]
        if kind == "struct":
            return {f["name"]: canon(value.get(f["name"]), f["type"]) for f in t["fields"]}
        if kind == "array":
            return [canon(v, t["elementType"]) for v in value]
        # A map as pyarrow gives it: (key, value) pairs in file order.
        return [[canon(k, t["keyType"]), canon(v, t["valueType"])] for k, v in value]
    if t in ("long", "integer", "short", "byte"):
        return str(value)
    if t in ("double", "float"):
        # What JSON (or JavaScript's parse of it) cannot carry as a number: NaN, the infinities and -0.
        negative_zero = value == 0 and math.copysign(1.0, value) < 0
        return value if math.isfinite(value) and not negative_zero else repr(value)
    if t in ("string", "boolean"):
        return value
    if t == "binary":
        return bytes(value).hex()
    if t == "date":
        return value.isoformat()
    if t == "timestamp":
        # An aware datetime (Spark's Arrow answer is in the session time zone, UTC here; delta-rs's in UTC).
        # isoformat, not strftime: glibc's %Y prints year 1 as "1", not "0001".
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.isoformat(timespec="microseconds") + "Z"
    if t == "timestamp_ntz":
        return value.isoformat(timespec="microseconds")
    if t.startswith("decimal("):
        return format(decimal.Decimal(value), "f")
    raise ValueError(f"no canonical form for Delta type {t}")


def answer_rows(fields, rows):
    """fields: [(name, Delta type, nullable)]; rows: dict-like per row."""
    return {
        "schema": [[name, type_name(t), nullable] for name, t, nullable in fields],
        "rows": [{name: canon(row[name], t) for name, t, _ in fields} for row in rows],
    }


def error_of(e):
    """The engine's own words: for a raw Java exception (Py4JJavaError), its message and causes, not py4j's
    "An error occurred while calling o134.collectToPython"."""
    java = getattr(e, "java_exception", None)
    if java is not None:
        causes = []
        while java is not None and len(causes) < 4:
            causes.append(str(java.toString()).splitlines()[0])
            java = java.getCause()
        return f"{type(e).__name__}: {' <- '.join(causes)}"[:2000]
    text = str(e).strip()
    first = text.splitlines()[0] if text else type(e).__name__
    return f"{type(e).__name__}: {first[:2000]}"


# ---- delta-rs


def delta_rs_read(uri, version):
    table = DeltaTable(uri, storage_options=DELTA_RS_OPTIONS, version=version)
    data = table.to_pyarrow_table()
    fields = [(f.name, arrow_to_delta(f.type), f.nullable) for f in data.schema]
    out = answer_rows(fields, data.to_pylist())
    out["version"] = table.version()
    return out


def delta_rs_history(uri, limit=None):
    return [
        {
            "version": h.get("version"),
            "operation": h.get("operation"),
            "operationParameters": h.get("operationParameters"),
            "numOutputRows": (h.get("operationMetrics") or {}).get("numOutputRows"),
            "engineInfo": h.get("engineInfo"),
        }
        for h in DeltaTable(uri, storage_options=DELTA_RS_OPTIONS).history(limit)
    ]


def delta_rs_skipping(uri, predicate):
    """Files delta-rs keeps for `predicate` by the files' stats (`file_uris(file_pruning_predicate=...)`), of all
    the table's files."""
    table = DeltaTable(uri, storage_options=DELTA_RS_OPTIONS)
    return {"files": len(table.file_uris(file_pruning_predicate=predicate)), "of": len(table.file_uris())}


def delta_rs_stats(uri):
    """Each live file's stats as delta-rs parses them (`get_add_actions(flatten=True)`): `num_records`,
    `min.<col>`, `max.<col>`, `null_count.<col>` (nested fields joined by dots), values as text."""
    actions = pa.table(DeltaTable(uri, storage_options=DELTA_RS_OPTIONS).get_add_actions(flatten=True)).to_pylist()
    return [
        {k: (None if v is None else v.isoformat() if hasattr(v, "isoformat") else str(v)) for k, v in a.items()}
        for a in actions
    ]


def delta_rs_files(uri):
    """The latest version's live files, as delta-rs's own API lists its add actions."""
    return pa.table(DeltaTable(uri, storage_options=DELTA_RS_OPTIONS).get_add_actions()).num_rows


# ---- Spark + Delta Lake

_spark = None


def spark():
    global _spark
    if _spark is None:
        from pyspark.sql import SparkSession

        builder = (
            SparkSession.builder.master("local[1]")
            .appName("inlet-engines")
            # On the driver's class path, not `spark.jars`: local mode copies every `spark.jars` file into its
            # local dir at start (about 600 MB with the AWS SDK bundle), which a full disk refuses.
            .config("spark.driver.extraClassPath", jars.replace(",", os.pathsep))
            # Small tables on a small machine: the C1 compiler only (the JIT's CPU goes to reading, not to
            # optimising code that runs seconds), and a single-threaded collector.
            .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Duser.timezone=UTC")
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.warehouse.dir", os.path.join(scratch, "warehouse"))
            .config("spark.local.dir", os.path.join(scratch, "tmp"))
            # Tiny tables: one partition for Delta's log replay and shuffles instead of 50 / 200 tasks each.
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.databricks.delta.snapshotPartitions", "1")
            # s3a (hadoop-aws) against the emulator, as a user points it at S3.
            .config("spark.hadoop.fs.s3a.endpoint", endpoint)
            .config("spark.hadoop.fs.s3a.endpoint.region", region)
            .config("spark.hadoop.fs.s3a.path.style.access", "true")
            .config("spark.hadoop.fs.s3a.connection.ssl.enabled", "false")
            .config("spark.hadoop.fs.s3a.access.key", "testing")
            .config("spark.hadoop.fs.s3a.secret.key", "testing")
            .config(
                "spark.hadoop.fs.s3a.aws.credentials.provider",
                "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
            )
        )
        _spark = builder.getOrCreate()
        _spark.sparkContext.setLogLevel("ERROR")
    return _spark


def s3a(uri):
    return "s3a://" + uri[len("s3://") :] if uri.startswith("s3://") else uri


def spark_fields(schema):
    return [(f["name"], f["type"], f["nullable"]) for f in json.loads(schema.json())["fields"]]


def spark_collect(df):
    """The rows as Spark hands them over in Arrow (`toArrow`), not as `Row`s: PySpark's `Row` conversion makes
    each timestamp a local `datetime` by way of `fromtimestamp`, which fails on 0001-01-01 ("year 0 is out of
    range"), a value Spark itself reads."""
    return df.toArrow().to_pylist()


def spark_rows(df):
    return answer_rows(spark_fields(df.schema), spark_collect(df))


def spark_read(uri, version):
    reader = spark().read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    df = reader.load(s3a(uri))
    out = spark_rows(df)
    # COUNT(*) is answered from the files' stats.numRecords (Delta's metadata-only count), not by reading
    # the rows: a wrong count in the log shows here and nowhere else.
    out["count"] = df.count()
    out["version"] = (
        version
        if version is not None
        else spark().sql(f"DESCRIBE HISTORY delta.`{s3a(uri)}` LIMIT 1").collect()[0]["version"]
    )
    return out


def spark_skipping(uri, predicate):
    """Rows of a filtered read, and the files its scan read: the scan's `numFiles` metric, which counts the
    files Delta's data skipping left (PreparedDeltaFileIndex), of all the table's files."""
    df = spark().read.format("delta").load(s3a(uri)).where(predicate)
    rows = len(spark_collect(df))
    plan = df._jdf.queryExecution().executedPlan()
    if plan.nodeName() == "AdaptiveSparkPlan":
        plan = plan.executedPlan()
    leaves = plan.collectLeaves()
    files = 0
    for i in range(leaves.length()):
        metric = leaves.apply(i).metrics().get("numFiles")
        if metric.isDefined():
            files += metric.get().value()
    total = spark().read.format("delta").load(s3a(uri)).inputFiles()
    return {"files": files, "of": len(total), "rows": rows}


def spark_files(uri):
    """The latest version's live files, as Delta Lake counts them: `DESCRIBE DETAIL`'s `numFiles`."""
    return spark().sql(f"DESCRIBE DETAIL delta.`{s3a(uri)}`").collect()[0]["numFiles"]


def spark_history(uri, limit=None):
    # With a LIMIT, Delta reads only the newest commits (a long log's whole history is one GET a commit).
    rows = spark().sql(f"DESCRIBE HISTORY delta.`{s3a(uri)}`" + (f" LIMIT {int(limit)}" if limit else "")).collect()
    return [
        {
            "version": r["version"],
            "operation": r["operation"],
            "operationParameters": r["operationParameters"],
            "numOutputRows": (r["operationMetrics"] or {}).get("numOutputRows"),
            "engineInfo": r["engineInfo"],
        }
        for r in rows
    ]


def spark_generate_manifest(uri):
    """Delta's own symlink manifests of the table (GENERATE symlink_format_manifest), written over any there."""
    spark().sql(f"GENERATE symlink_format_manifest FOR TABLE delta.`{s3a(uri)}`")
    return None


def spark_stream(uri, checkpoint, starting_version):
    """One `trigger(availableNow=True)` run of a Delta streaming read: the rows this run read. A
    `foreachBatch` sink collects each micro-batch (the memory sink cannot resume from a checkpoint), so a run
    resumed from `checkpoint` answers only what was committed since the run before."""
    reader = spark().readStream.format("delta")
    if starting_version is not None:
        reader = reader.option("startingVersion", starting_version)
    stream = reader.load(s3a(uri))
    batches = []
    query = (
        stream.writeStream.foreachBatch(lambda df, _batch_id: batches.append(spark_collect(df)))
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))
    rows = [r for batch in batches for r in batch]
    return answer_rows(spark_fields(stream.schema), rows)


# ---- the request loop


def handle(request):
    """Answers one request; its time and outcome go to the log (an engine's refusal is an answer too)."""
    started = time.monotonic()
    try:
        reply = {"id": request["id"], "ok": True, "result": dispatch(request)}
    except Exception as e:
        reply = {"id": request["id"], "ok": False, "error": error_of(e), "trace": traceback.format_exc()[-4000:]}
    outcome = "ok" if reply["ok"] else reply["error"][:300]
    print(f"[engines] {time.monotonic() - started:6.2f}s {json.dumps(request)} -> {outcome}", file=sys.stderr, flush=True)
    return reply


def dispatch(request):
    op, engine, uri = request["op"], request.get("engine"), request.get("uri")
    if op == "start":
        spark()
        return {"spark": spark().version}
    if op == "read":
        return (spark_read if engine == "spark" else delta_rs_read)(uri, request.get("version"))
    if op == "history":
        return (spark_history if engine == "spark" else delta_rs_history)(uri, request.get("limit"))
    if op == "txn":
        return DeltaTable(uri, storage_options=DELTA_RS_OPTIONS).transaction_version(request["appId"])
    if op == "skipping":
        return (spark_skipping if engine == "spark" else delta_rs_skipping)(uri, request["predicate"])
    if op == "stats":
        return delta_rs_stats(uri)
    if op == "symlink":
        return spark_generate_manifest(uri)
    if op == "files":
        return (spark_files if engine == "spark" else delta_rs_files)(uri)
    if op == "stream":
        return spark_stream(uri, request["checkpoint"], request.get("startingVersion"))
    raise ValueError(f"unknown op {op}")


for line in sys.stdin:
    if not line.strip():
        continue
    answers.write(json.dumps(handle(json.loads(line))) + "\n")
    answers.flush()

if _spark is not None:
    _spark.stop()
answers.close()
# delta-rs's native threads can abort the interpreter's teardown (delta-io/delta-rs#2184): leave without it.
sys.stdout.flush()
os._exit(0)
