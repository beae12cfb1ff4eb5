"""How long the emulator takes to list a big bucket, page by page (docs/emulator.md, "S3 listings").

Runs the launcher's patched moto (local/moto_launcher.py) in this process behind waitress, as the launcher
serves it, fills a bucket straight through moto's backend (100,000 HTTP puts would measure the puts), then
times ListObjectsV2 over HTTP, each page a plain GET read whole (no SDK: the time is the emulator's):
a walk of the bucket under a prefix with continuation tokens, a walk of one day's prefix, a page after a
StartAfter in the middle, a delimiter listing of the day prefixes, and, with --profile, cProfile of moto
answering pages of the walk (the WSGI app called directly, top functions by own and cumulative time).

    .venv/bin/python bench/moto_list_probe.py --objects 100000 [--profile] [--pages 20]
"""
import argparse
import cProfile
import http.client
import os
import pstats
import re
import statistics
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "local"))

import moto_launcher  # noqa: E402 - the launcher's patches, applied on import
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app  # noqa: E402
from moto.s3.models import s3_backends  # noqa: E402
from waitress.server import create_server  # noqa: E402

ACCOUNT = "123456789012"
DAYS = 97
BUCKET = "probe-bucket"
HEADERS = {"Authorization": "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=x"}


def key(i: int) -> str:
    # The incremental benchmark's shape: hist/dt=YYYY-MM-DD/obj-NNNNNNN.json over 97 days.
    return f"hist/dt=2026-{1 + (i % DAYS) // 28:02d}-{1 + (i % DAYS) % 28:02d}/obj-{i:07d}.json"


def fill(objects: int) -> None:
    backend = s3_backends[ACCOUNT]["aws"]
    backend.create_bucket(BUCKET, "us-east-1")
    for i in range(objects):
        backend.put_object(BUCKET, key(i), b"{}", disable_notification=True)


def serve() -> int:
    moto_app = DomainDispatcherApplication(create_backend_app)

    def app(environ, start_response):  # type: ignore[no-untyped-def]
        environ.setdefault("RAW_URI", environ.get("REQUEST_URI", ""))
        return moto_app(environ, start_response)

    server = create_server(app, host="127.0.0.1", port=0, threads=4)
    threading.Thread(target=server.run, daemon=True).start()
    return server.effective_port


def list_page(conn: http.client.HTTPConnection, **params: str) -> tuple[float, int, int, str | None]:
    query = urllib.parse.urlencode({"list-type": "2", **params})
    started = time.perf_counter()
    conn.request("GET", f"/{BUCKET}?{query}", headers=HEADERS)
    body = conn.getresponse().read().decode()
    took = time.perf_counter() - started
    token = re.search(r"<NextContinuationToken>([^<]*)</NextContinuationToken>", body)
    return took, body.count("<Key>"), body.count("<CommonPrefixes>"), token.group(1) if token else None


def walk(conn: http.client.HTTPConnection, **params: str) -> None:
    times, keys, token = [], 0, None
    while True:
        extra = {"continuation-token": token} if token else {}
        took, count, _, token = list_page(conn, **params, **extra)
        times.append(took)
        keys += count
        if not token:
            break
    print(
        f"walk {params}: {keys} keys, {len(times)} pages, {sum(times):.2f} s; per page ms: first {times[0] * 1000:.1f}, "
        f"median {statistics.median(times) * 1000:.1f}, last {times[-1] * 1000:.1f}, max {max(times) * 1000:.1f}"
    )


def profile(pages: int) -> None:
    from werkzeug.test import EnvironBuilder

    app = DomainDispatcherApplication(create_backend_app)
    profiler = cProfile.Profile()
    token = None
    for _ in range(pages):
        args = {"list-type": "2", "prefix": "hist/", **({"continuation-token": token} if token else {})}
        environ = EnvironBuilder(
            method="GET", path=f"/{BUCKET}", query_string=args, headers=HEADERS, base_url="http://127.0.0.1:5000"
        ).get_environ()
        environ["RAW_URI"] = f"/{BUCKET}?{urllib.parse.urlencode(args)}"
        profiler.enable()
        body = b"".join(app(environ, lambda *a, **k: None)).decode()
        profiler.disable()
        found = re.search(r"<NextContinuationToken>([^<]*)</NextContinuationToken>", body)
        token = found.group(1) if found else None
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(12)
    stats.sort_stats("cumulative").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--pages", type=int, default=10, help="pages profiled")
    parser.add_argument("--skip-walk", action="store_true")
    options = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.2f}; launcher patches from {moto_launcher.__file__}")
    started = time.perf_counter()
    fill(options.objects)
    print(f"filled {options.objects} objects in {time.perf_counter() - started:.1f} s")
    conn = http.client.HTTPConnection("127.0.0.1", serve())
    if not options.skip_walk:
        walk(conn, prefix="hist/")
        walk(conn, prefix=key(5)[: len("hist/dt=2026-01-06/")])
    middle = sorted(key(i) for i in range(options.objects))[options.objects // 2]
    took, count, _, _ = list_page(conn, prefix="hist/", **{"start-after": middle})
    print(f"start-after the middle key: {count} keys in {took * 1000:.1f} ms")
    took, count, prefixes, _ = list_page(conn, prefix="hist/", delimiter="/")
    print(f"delimiter '/' under hist/: {count} keys, {prefixes} common prefixes in {took * 1000:.1f} ms")
    took, count, prefixes, _ = list_page(conn, prefix="hist/", delimiter="/", **{"max-keys": "10"})
    print(f"delimiter '/' under hist/, 10 a page: {count} keys, {prefixes} common prefixes in {took * 1000:.1f} ms")
    if options.profile:
        profile(options.pages)
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
