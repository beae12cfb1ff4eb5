"""Writes Parquet landing files with pyarrow (a writer Inlet did not write) holding every type the bronze sink
maps, nested types, nulls and edge values, into the directory given as the first argument. The integration test
uploads them, runs the sink and compares what delta-rs reads back with what pyarrow reads from these files
(bronze_read.py --compare)."""
import datetime as dt
import decimal
import sys

import pyarrow as pa
import pyarrow.parquet as pq

out = sys.argv[1]
D = decimal.Decimal
UTC = dt.timezone.utc


N = 6  # rows per file; the last row is all null

basic = pa.table(
    {
        "id": pa.array(range(N), pa.int64()),
        "i8": pa.array([-128, 127, 0, -1, 5, None], pa.int8()),
        "i16": pa.array([-32768, 32767, 0, -1, 300, None], pa.int16()),
        "i32": pa.array([-(2**31), 2**31 - 1, 0, -1, 70000, None], pa.int32()),
        "i64": pa.array([-(2**63), 2**63 - 1, 0, -1, 9007199254740993, None], pa.int64()),
        "u8": pa.array([0, 255, 1, 2, 3, None], pa.uint8()),
        "u16": pa.array([0, 65535, 1, 2, 3, None], pa.uint16()),
        "u32": pa.array([0, 2**32 - 1, 1, 2, 3, None], pa.uint32()),
        "u64": pa.array([0, 2**64 - 1, 2**63, 1, 3, None], pa.uint64()),
        "f32": pa.array([float("nan"), float("inf"), float("-inf"), -0.0, 3.4028234663852886e38, None], pa.float32()),
        "f64": pa.array([float("nan"), float("-inf"), 5e-324, -0.0, 1.7976931348623157e308, None], pa.float64()),
        "dec9": pa.array([D("1234567.89"), D("-9999999.99"), D("0.01"), D("0.00"), D("-0.10"), None], pa.decimal128(9, 2)),
        "dec18": pa.array([D("99999999999999.9999"), D("-1.0000"), D("0"), D("12.3400"), D("-0.0001"), None], pa.decimal128(18, 4)),
        "dec38": pa.array([D("9" * 28 + "." + "9" * 10), D("-" + "9" * 28 + "." + "9" * 10), D("0E-10"), D("1.5"), D("-3.0000000001"), None], pa.decimal128(38, 10)),
        "flag": pa.array([True, False, True, False, True, None], pa.bool_()),
        "text": pa.array(["", "żółw 🐢 日本", "tab\there", 'quote " and \\', "x" * 300, None], pa.string()),
        "bytes": pa.array([b"", b"\x00\xff\x80", b"abc", bytes(range(256)), b"\n", None], pa.binary()),
        "day": pa.array([dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(2024, 2, 29), None], pa.date32()),
        "ts_us": pa.array(
            [
                dt.datetime(1, 1, 1, tzinfo=UTC),
                dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
                dt.datetime(1900, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
                None,
            ],
            pa.timestamp("us", tz="UTC"),
        ),
        "ts_ms": pa.array([-1, 0, 1704164645123, -62135596800000, 253402300799999, None], pa.timestamp("ms", tz="UTC")),
        "ts_ns_whole": pa.array([-1000, 0, 1704164645123456000, -9223372036854775000, 9223372036854775000, None], pa.timestamp("ns", tz="UTC")),
        "tod_us": pa.array([0, 86399999999, 1, 45296000001, 12, None], pa.time64("us")),
        "tod_ms": pa.array([0, 86399999, 1, 45296001, 12, None], pa.time32("ms")),
        "list_i64": pa.array([[], [1, None, 3], None, [2**63 - 1], [None], None], pa.list_(pa.int64())),
        "list_list": pa.array([[["a"], []], [], [None, ["b", None]], None, [["c"]], None], pa.list_(pa.list_(pa.string()))),
        "list_struct": pa.array(
            [[{"q": 1, "r": "x"}], [], [None, {"q": None, "r": None}], None, [{"q": -5, "r": "é"}], None],
            pa.list_(pa.struct([("q", pa.int32()), ("r", pa.string())])),
        ),
        "map_str": pa.array(
            [[("a", 1), ("__proto__", 2), ("constructor", 3)], [], None, [("x", None)], [("ü", -1)], None],
            pa.map_(pa.string(), pa.int64()),
        ),
        "map_int": pa.array(
            [[(1, ["one"]), (-2, [])], [], None, [(3, None)], [(2**31 - 1, ["m", None])], None],
            pa.map_(pa.int32(), pa.list_(pa.string())),
        ),
        "struct": pa.array(
            [
                {"a": 1, "b": {"c": "x"}, "d": [dt.date(2020, 1, 1)], "e": D("1.50")},
                {"a": None, "b": None, "d": [], "e": None},
                None,
                {"a": -1, "b": {"c": None}, "d": None, "e": D("-0.01")},
                {"a": 2**62, "b": {"c": "🙂"}, "d": [None], "e": D("999.99")},
                None,
            ],
            pa.struct([("a", pa.int64()), ("b", pa.struct([("c", pa.string())])), ("d", pa.list_(pa.date32())), ("e", pa.decimal128(5, 2))]),
        ),
    }
)
pq.write_table(basic, f"{out}/basic.parquet", row_group_size=4)
# Decimals the way Spark writes them (INT32 up to 9 digits, INT64 up to 18), not as fixed-length bytes.
pq.write_table(basic.select(["id", "dec9", "dec18", "dec38"]).rename_columns(["id", "idec9", "idec18", "idec38"]),
               f"{out}/decimal_ints.parquet", store_decimal_as_integer=True)

# timestamp_ntz first appears in this file's version: the protocol upgrades there, not before.
ntz = pa.table(
    {
        "id": pa.array(range(N), pa.int64()),
        "ntz_us": pa.array(
            [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999), dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(2024, 1, 2, 3, 4, 5, 123456), dt.datetime(1970, 1, 1), None],
            pa.timestamp("us"),
        ),
        "ntz_ms": pa.array([-1, 0, 1, 1704164645123, 2, None], pa.timestamp("ms")),
        "nested_ntz": pa.array([{"at": dt.datetime(2000, 1, 1, 0, 0, 0, 1)}, {"at": None}, None, {"at": dt.datetime(1960, 6, 6)}, {"at": dt.datetime(2100, 1, 1)}, None],
                               pa.struct([("at", pa.timestamp("us"))])),
    }
)
pq.write_table(ntz, f"{out}/ntz.parquet")

# INT96, the legacy instant Spark and Hive write.
int96 = pa.table(
    {
        "id": pa.array(range(N), pa.int64()),
        "ts96": pa.array([0, -1000, 1704164645123456000, -9223372036854775000, 9223372036854775000, None], pa.timestamp("ns")),
    }
)
pq.write_table(int96, f"{out}/int96.parquet", use_deprecated_int96_timestamps=True)

# What no Delta type holds exactly: rescued with the exact text, never altered.
rescue = pa.table(
    {
        "id": pa.array(range(4), pa.int64()),
        "ts_ns": pa.array([1704164645123456789, 1704164645123456000, -1, None], pa.timestamp("ns", tz="UTC")),
        "wide": pa.array([D("123456789012345678901234567890123456789012345678.91"), D("-0.01"), None, D("1")], pa.decimal256(50, 2)),
        "pair": pa.array([{"k": 1, "K": 2}, None, {"k": None, "K": None}, {"k": 3, "K": None}], pa.struct([("k", pa.int64()), ("K", pa.int64())])),
        "Name": pa.array(["upper", None, "U", "u"], pa.string()),
        "name": pa.array(["lower", "l", None, "l2"], pa.string()),
        "_Source_File": pa.array(["mine", None, "x", "y"], pa.string()),
    }
)
pq.write_table(rescue, f"{out}/rescue.parquet")
