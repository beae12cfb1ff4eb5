"""The launcher's ListObjectsV2 (local/moto_s3_listing.py) against moto's own and against S3's rules.

In one process, through moto's WSGI app (the launcher's patches applied, as the emulator runs them): random
puts, overwrites, copies, multipart completions, deletes and versioned deletes of awkward keys, then every
listing asked of both paths. Where moto and S3 agree, the launcher's answer must be moto's byte for byte;
everywhere it must be S3's (`expected`, a plain model of S3's rules: code point = UTF-8 binary order, latest
versions that are delete markers not listed, one common prefix per group of listed keys, entries above
StartAfter or the token, MaxKeys shared by keys and common prefixes). Exits 1 with each difference printed.

    .venv/bin/python test/integration/emulator_s3_listing.py [--seed N] [--rounds N]
"""
import argparse
import os
import random
import re
import sys
import urllib.parse
from xml.etree import ElementTree

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "local"))

import moto_launcher  # noqa: E402, F401 - the launcher's patches, applied on import
import moto_s3_listing  # noqa: E402
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app  # noqa: E402
from moto.s3.models import FakeKey, s3_backends  # noqa: E402
from werkzeug.test import Client  # noqa: E402

HEADERS = {"Authorization": "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=x"}
NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
# Awkward pieces: delimiters, XML specials, percent and plus, non-ASCII, U+FFFD against an astral-plane
# character (UTF-16 orders them the other way), a character just above '/' and one just below.
PIECES = ["a", "b", "a/", "b/", "/", "//", "&", "<x>", "%2B", "+", " ", "é", "\ufffd", "\U0001f600", ".", "0", "z~", "日/"]
client = Client(DomainDispatcherApplication(create_backend_app))
backend = s3_backends["123456789012"]["aws"]
problems: list[str] = []
compared = {"pages": 0, "same as moto": 0, "moto differs from S3 (a deleted folder)": 0}


def path(bucket: str, key: str = "") -> str:
    return f"/{bucket}/{urllib.parse.quote(key, safe='')}" if key else f"/{bucket}"


def request(method: str, url: str, **kwargs) -> bytes:  # type: ignore[no-untyped-def]
    response = client.open(url, method=method, headers={**HEADERS, **kwargs.pop("headers", {})}, **kwargs)
    if response.status_code >= 300 and not (method == "DELETE" and response.status_code == 404):
        raise RuntimeError(f"{method} {url}: {response.status_code} {response.get_data(as_text=True)[:300]}")
    return response.get_data()


def random_key(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 4)))


def mutate(rng: random.Random, bucket: str, versioned: bool) -> None:
    store = backend.get_bucket(bucket).keys
    names = list(store)
    live = [n for n in names if isinstance(store.getlist(n)[-1], FakeKey)]
    op = rng.random()
    if op < 0.45 or not names:
        request("PUT", path(bucket, random_key(rng)), data=rng.randbytes(rng.randint(0, 3)))
    elif op < 0.55:
        request("PUT", path(bucket, rng.choice(names)), data=b"overwritten")
    elif op < 0.62 and live:
        source = urllib.parse.quote(f"{bucket}/{rng.choice(live)}", safe="/")
        request("PUT", path(bucket, random_key(rng)), headers={"x-amz-copy-source": source})
    elif op < 0.67:
        multipart(bucket, random_key(rng))
    elif op < 0.9:
        request("DELETE", path(bucket, rng.choice(names)))
    elif versioned:
        name = rng.choice(names)
        versions = backend.get_bucket(bucket).keys.getlist(name, [])
        if versions:
            version = rng.choice(versions).version_id
            request("DELETE", f"{path(bucket, name)}?versionId={version}")


def multipart(bucket: str, key: str) -> None:
    body = request("POST", f"{path(bucket, key)}?uploads")
    upload = re.search(rb"<UploadId>([^<]+)</UploadId>", body).group(1).decode()  # type: ignore[union-attr]
    response = client.open(f"{path(bucket, key)}?partNumber=1&uploadId={upload}", method="PUT", headers=HEADERS, data=b"part")
    etag = response.headers["ETag"]
    done = f"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>{etag}</ETag></Part></CompleteMultipartUpload>"
    request("POST", f"{path(bucket, key)}?uploadId={upload}", data=done.encode())


def expected(bucket: str, prefix: str, delimiter: str, above: str | None, max_keys: int) -> tuple[list[str], bool]:
    """S3's entries (key names, and common prefixes ending in the delimiter) and IsTruncated."""
    store = backend.get_bucket(bucket).keys
    live = sorted(n for n in dict.keys(store) if n.startswith(prefix) and isinstance(store.getlist(n)[-1], FakeKey))
    entries: list[str] = []
    for name in live:
        cut = name.find(delimiter, len(prefix)) if delimiter else -1
        entry = name if cut < 0 else name[: cut + len(delimiter)]
        if (above is None or entry > above) and (not entries or entries[-1] != entry):
            entries.append(entry)
    return entries[:max_keys], len(entries) > max_keys


def listing(bucket: str, params: dict[str, str], fast: bool) -> bytes:
    if fast:
        return request("GET", f"{path(bucket)}?{urllib.parse.urlencode({'list-type': '2', **params})}")
    patched = (moto_s3_listing._S3Backend.list_objects_v2, moto_s3_listing._S3Response.list_objects_v2)
    moto_s3_listing._S3Backend.list_objects_v2 = moto_s3_listing._list_objects_v2
    moto_s3_listing._S3Response.list_objects_v2 = moto_s3_listing._response_list_objects_v2
    try:
        return request("GET", f"{path(bucket)}?{urllib.parse.urlencode({'list-type': '2', **params})}")
    finally:
        moto_s3_listing._S3Backend.list_objects_v2, moto_s3_listing._S3Response.list_objects_v2 = patched


def entries_of(body: bytes, encoded: bool) -> tuple[list[str], bool, str | None]:
    root = ElementTree.fromstring(body)
    decode = urllib.parse.unquote if encoded else (lambda s: s)
    found = [(decode(e.findtext(f"{NS}Key") or ""), "key") for e in root.iter(f"{NS}Contents")]
    if found != sorted(found):
        problems.append(f"Contents out of order: {found}")
    found += [(decode(e.findtext(f"{NS}Prefix") or ""), "prefix") for e in root.iter(f"{NS}CommonPrefixes")]
    found.sort()
    count = int(root.findtext(f"{NS}KeyCount") or "-1")
    if count != len(found):
        problems.append(f"KeyCount {count} for {len(found)} entries")
    return [name for name, _ in found], root.findtext(f"{NS}IsTruncated") == "true", root.findtext(f"{NS}NextContinuationToken")


def has_hidden_prefix(bucket: str, prefix: str, delimiter: str) -> bool:
    """A common prefix whose keys are all delete markers: moto lists it, S3 does not."""
    if not delimiter:
        return False
    store = backend.get_bucket(bucket).keys
    groups: dict[str, bool] = {}
    for name in dict.keys(store):
        cut = name.find(delimiter, len(prefix)) if name.startswith(prefix) else -1
        if cut >= 0:
            group = name[: cut + len(delimiter)]
            groups[group] = groups.get(group, False) or isinstance(store.getlist(name)[-1], FakeKey)
    return not all(groups.values())


def check(bucket: str, params: dict[str, str], token_above: str | None = None) -> tuple[list[str], str | None]:
    """Both paths, one page; returns the launcher's entries and its next token."""
    encoded = params.get("encoding-type") == "url"
    fast_body = listing(bucket, params, fast=True)
    what = f"{bucket} {params}"
    compared["pages"] += 1
    if has_hidden_prefix(bucket, params.get("prefix", ""), params.get("delimiter", "")):
        compared["moto differs from S3 (a deleted folder)"] += 1
    else:
        compared["same as moto"] += 1
        moto_body = listing(bucket, params, fast=False)
        if fast_body != moto_body:
            problems.append(f"{what}: bodies differ\n  fast {fast_body[:600]!r}\n  moto {moto_body[:600]!r}")
    names, truncated, token = entries_of(fast_body, encoded)
    above = token_above if "continuation-token" in params else params.get("start-after") or None
    want, want_truncated = expected(
        bucket, params.get("prefix", ""), params.get("delimiter", ""), above, int(params.get("max-keys", "1000"))
    )
    if (names, truncated) != (want, want_truncated):
        problems.append(f"{what}: listed {names} truncated {truncated}, S3 lists {want} truncated {want_truncated}")
    if truncated != (token is not None):
        problems.append(f"{what}: IsTruncated {truncated} with token {token}")
    return names, token if truncated else None


def walk(bucket: str, params: dict[str, str]) -> None:
    """Every page of one listing, continuing with the fast path's tokens (both paths read them)."""
    token, above = None, None
    for _ in range(200):
        page = dict(params, **({"continuation-token": token} if token else {}))
        names, token = check(bucket, page, above)
        if token is None:
            return
        above = names[-1] if names else above
    problems.append(f"{bucket} {params}: more than 200 pages")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    for versioned in (False, True):
        bucket = f"listing-{'versioned' if versioned else 'plain'}"
        request("PUT", path(bucket))
        if versioned:
            body = b"<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>"
            request("PUT", f"{path(bucket)}?versioning", data=body)
        for _ in range(options.rounds):
            for _ in range(rng.randint(5, 25)):
                mutate(rng, bucket, versioned)
            for prefix in ("", "a", "a/", rng.choice(PIECES)):
                for delimiter in ("", "/", "a"):
                    params = {k: v for k, v in (("prefix", prefix), ("delimiter", delimiter)) if v}
                    walk(bucket, {**params, "max-keys": str(rng.randint(1, 4))})
                    check(bucket, {**params, "start-after": random_key(rng), "max-keys": str(rng.randint(1, 5))})
                    check(bucket, {**params, "encoding-type": "url", "fetch-owner": "true"})
    for problem in problems[:20]:
        print(problem)
    print(f"{compared}; {len(problems)} difference(s)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
