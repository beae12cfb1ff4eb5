"""ListObjectsV2 on moto in O(log n + page) instead of O(bucket) per page (imported by moto_launcher.py).

moto 5.2.5's `list_objects_v2` builds every key of the bucket under the prefix, filters out delete markers,
sorts them, then scans for the continuation token: each page of 1,000 from a 100,000-object bucket cost
about 0.6 s of the emulator's one process, and a listing of the bucket O(n^2 / 1,000) (docs/emulator.md,
"S3 listings"). Here each bucket's key store keeps a sorted index of its key names, in step with every change
of the store (put, copy, multipart completion, delete, delete of a version: moto makes them all through the
store's `setlist`, `__setitem__` and `pop`), and a page is a binary search and a walk of the page.

What S3 answers, and moto with it:
- keys in UTF-8 binary order (S3: "List results are always returned in UTF-8 binary order", ListObjectsV2,
  API reference). Python compares strings by code point, which is the order of their UTF-8 bytes;
- a key whose latest version is a delete marker is not listed (S3 user guide, "Working with delete markers":
  a GET Bucket "does not return objects whose current version is a delete marker");
- with a delimiter, each key whose rest after the prefix holds it rolls up into one common prefix, up to and
  including the delimiter's first occurrence; keys and common prefixes share `MaxKeys` and come in one order;
- after StartAfter or a continuation token, only entries (keys and common prefixes, by their names) above it.
  The token is moto's own (the md5 of the last entry returned, kept by the backend), so a token from either
  path resumes on the other; a token moto does not know gets moto's own answer.

One difference from moto, on S3's side: moto rolls a key whose latest version is a delete marker up into a
common prefix (it filters the markers out after grouping), so a "folder" of deleted objects still showed in a
delimited listing of a versioned bucket; here a common prefix needs a key that would be listed, as on S3.

The response: moto's generic serializer turned each listed key into XML at about 0.3 ms (a third of it
parsing the key's LastModified text back into a datetime), 300 ms a page of 1,000 on a quiet core, which
was most of a page's cost once the listing itself was cheap. `Contents` is written here, the same bytes in
the same place, and the rest of the response by moto's serializer (the Python tests of the launcher compare
the two: test/integration/emulator_s3_listing.py).
"""
import bisect
import functools
import importlib
import threading
from xml.sax.saxutils import escape

_models = importlib.import_module("moto.s3.models")
_VersionedKeyStore = _models._VersionedKeyStore
_FakeKey = _models.FakeKey
_FakeTableStorageBucket = _models.FakeTableStorageBucket
_S3Backend = _models.S3Backend
_list_objects_v2 = _S3Backend.list_objects_v2


class IndexedKeyStore(_VersionedKeyStore):
    """moto's key store (key name -> versions, oldest first) with its names kept sorted, for listings.

    Names added since the last listing wait in `_added` and are merged on the next one (a sort of a sorted
    list with a short unsorted tail is linear), so a bulk upload costs no sorting per put. Every change and
    every listing holds the store's lock, so a listing never sees a name half added or half removed.
    """

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._index_lock = threading.RLock()
        self._sorted: list[str] | None = None  # None: rebuild from the store's names on the next listing
        self._added: set[str] = set()
        self._removed: set[str] = set()

    # A copy (pickle, deepcopy) is the same names and versions; its index is rebuilt on its first listing
    # (a lock cannot be copied, and a dict subclass's items are restored before its state).
    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (_restored, (dict(self),))

    def _note_added(self, name: str) -> None:
        if self._removed and name in self._removed:
            self._removed.discard(name)  # still in the sorted list
        else:
            self._added.add(name)

    def _note_removed(self, name: str) -> None:
        if name in self._added:
            self._added.discard(name)
        else:
            self._removed.add(name)

    def __setitem__(self, key, value):  # type: ignore[no-untyped-def]
        with self._index_lock:
            new = not dict.__contains__(self, key)
            super().__setitem__(key, value)
            if new:
                self._note_added(key)

    def setlist(self, key, list_):  # type: ignore[no-untyped-def]
        with self._index_lock:
            new = not dict.__contains__(self, key)
            super().setlist(key, list_)
            if new:
                self._note_added(key)

    def pop(self, key):  # type: ignore[no-untyped-def]
        with self._index_lock:
            super().pop(key)  # KeyError when absent, as moto's delete expects
            self._note_removed(key)

    def __delitem__(self, key):  # type: ignore[no-untyped-def]
        with self._index_lock:
            super().__delitem__(key)
            self._note_removed(key)

    # Changes moto does not make today: correct, if slow, by rebuilding the index on the next listing.
    def _rebuilding(method):  # type: ignore[no-untyped-def]  # noqa: N805
        def changed(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            with self._index_lock:
                self._sorted, self._added, self._removed = None, set(), set()
                return method(self, *args, **kwargs)

        return changed

    clear = _rebuilding(dict.clear)
    popitem = _rebuilding(dict.popitem)
    setdefault = _rebuilding(dict.setdefault)
    update = _rebuilding(dict.update)
    __ior__ = _rebuilding(dict.__ior__)

    def sorted_names(self) -> list[str]:
        """The store's names in code point (UTF-8 binary) order. Call it, and read the list, under the lock."""
        if self._sorted is None:
            self._sorted = sorted(dict.keys(self))
        else:
            if self._removed:
                if len(self._removed) * 16 < len(self._sorted):
                    for name in self._removed:
                        at = bisect.bisect_left(self._sorted, name)
                        if at < len(self._sorted) and self._sorted[at] == name:
                            del self._sorted[at]
                else:
                    self._sorted = [name for name in self._sorted if name not in self._removed]
            if self._added:
                self._sorted.extend(self._added)
                self._sorted.sort()
        self._added, self._removed = set(), set()
        return self._sorted

    def latest(self, name: str):  # type: ignore[no-untyped-def]
        """The key's latest version as moto lists it (its versions list's last), or None."""
        versions = dict.get(self, name)
        return versions[-1] if versions else None


def _restored(versions: dict) -> IndexedKeyStore:
    store = IndexedKeyStore()
    dict.update(store, versions)  # names -> lists of versions, as stored; the index is built when listed
    return store


def _after(prefix: str) -> str | None:
    """The least string above every string that starts with `prefix` (None: no such string)."""
    while prefix:
        last = ord(prefix[-1])
        if last < 0x10FFFF:
            return prefix[:-1] + chr(last + 1)
        prefix = prefix[:-1]
    return None


def _listed(store: IndexedKeyStore, name: str) -> bool:
    return isinstance(store.latest(name), _FakeKey)


def _page(store: IndexedKeyStore, prefix: str, delimiter: str, above: str | None, wanted: int) -> list:
    """Up to `wanted` entries (FakeKeys and common prefix strings) under `prefix`, above `above`, in order."""
    names = store.sorted_names()
    end = _after(prefix) if prefix else None
    stop = bisect.bisect_left(names, end) if end is not None else len(names)
    at = bisect.bisect_right(names, above) if above is not None else bisect.bisect_left(names, prefix)
    at = max(at, bisect.bisect_left(names, prefix))
    entries: list = []
    while at < stop and len(entries) < wanted:
        name = names[at]
        cut = name.find(delimiter, len(prefix)) if delimiter else -1
        if cut < 0:
            key = store.latest(name)
            if isinstance(key, _FakeKey):
                entries.append(key)
            at += 1
            continue
        common = name[: cut + len(delimiter)]
        beyond = _after(common)
        group_end = min(stop, bisect.bisect_left(names, beyond)) if beyond is not None else stop
        # Listed once, if some key under it would be listed and it is above where the listing starts.
        if (above is None or common > above) and any(_listed(store, names[i]) for i in range(at, group_end)):
            entries.append(common)
        at = group_end
    return entries


def list_objects_v2(self, bucket, prefix, delimiter, continuation_token, start_after, max_keys):  # type: ignore[no-untyped-def]
    store = bucket.keys
    indexed = isinstance(store, IndexedKeyStore) and not isinstance(bucket, _FakeTableStorageBucket)
    if not indexed or max_keys < 0:
        return _list_objects_v2(self, bucket, prefix, delimiter, continuation_token, start_after, max_keys)
    if continuation_token:
        above = self._pagination_tokens.get(continuation_token)
        if above is None:
            return _list_objects_v2(self, bucket, prefix, delimiter, continuation_token, start_after, max_keys)
    else:
        above = start_after or None
    with store._index_lock:
        entries = _page(store, prefix or "", delimiter or "", above, max(max_keys, 0) + 1)
    # moto's own truncation: MaxKeys 0 lists nothing, more than MaxKeys makes a token of the last name.
    return self._truncate_result(entries, max_keys)


_responses = importlib.import_module("moto.s3.responses")
_serialize = importlib.import_module("moto.core.serialize")
_settings = importlib.import_module("moto.settings")
_ActionResult = importlib.import_module("moto.core.responses").ActionResult
_S3Response = _responses.S3Response
_response_list_objects_v2 = _S3Response.list_objects_v2
_serialized = _S3Response.serialized
_TIMESTAMPS = _serialize.TimestampSerializer(_serialize.S3Serializer.DEFAULT_TIMESTAMP_FORMAT)
# The fields moto's list_objects_v2 gives a listed key, in the order of the ListObjectsV2 output shape.
_FIELDS = ("Key", "LastModified", "ETag", "ChecksumAlgorithm", "Size", "StorageClass", "Owner")
_OWNER_FIELDS = ("DisplayName", "ID")
_AFTER = "</IsTruncated>"  # Contents follows IsTruncated in the output shape


@functools.lru_cache(maxsize=4096)
def _timestamp(value: str) -> str:
    # Keys written in the same second share the text: parsed once, not once per key and page.
    return _TIMESTAMPS._convert_timestamp_to_str(value, _serialize.S3Serializer.DEFAULT_TIMESTAMP_FORMAT)


def _element(name: str, text: str) -> str:
    # As xmltodict writes it for moto (short_empty_elements): text escaped as XMLGenerator does.
    return f"<{name}>{escape(text)}</{name}>" if text else f"<{name}/>"


def _contents(item: dict) -> str:
    parts = ["<Contents>"]
    for field in _FIELDS:
        value = item.get(field)
        if value is None:
            continue
        if field == "LastModified":
            parts.append(_element(field, _timestamp(value)))
        elif field == "ChecksumAlgorithm":
            parts.extend(_element(field, str(algorithm)) for algorithm in value)
        elif field == "Size":
            parts.append(_element(field, str(int(value))))
        elif field == "Owner":
            inner = "".join(_element(f, str(value[f])) for f in _OWNER_FIELDS if value.get(f) is not None)
            parts.append(f"<Owner>{inner}</Owner>" if inner else "<Owner/>")
        else:
            parts.append(_element(field, str(value)))
    parts.append("</Contents>")
    return "".join(parts)


def _plain(item: object) -> bool:
    """An item this writer writes exactly as moto's serializer would (anything else goes to moto's)."""
    if not isinstance(item, dict) or not set(item) <= set(_FIELDS) or not isinstance(item.get("LastModified"), str):
        return False
    owner = item.get("Owner")
    return owner is None or (isinstance(owner, dict) and set(owner) <= set(_OWNER_FIELDS))


def _serialized_listing(self, action_result):  # type: ignore[no-untyped-def]
    result = action_result.result
    contents = result.get("Contents") if isinstance(result, dict) else None
    if not contents or _settings.PRETTIFY_RESPONSES or not all(_plain(item) for item in contents):
        return _serialized(self, action_result)
    status, headers, body = _serialized(self, _ActionResult({k: v for k, v in result.items() if k != "Contents"}))
    at = body.find(_AFTER) if isinstance(body, str) else -1
    if at < 0:
        return _serialized(self, action_result)
    at += len(_AFTER)
    return status, headers, body[:at] + "".join(_contents(item) for item in contents) + body[at:]


def response_list_objects_v2(self):  # type: ignore[no-untyped-def]
    # moto's own handler builds the result; its last step, serialized(), writes Contents here.
    self.serialized = functools.partial(_serialized_listing, self)
    try:
        return _response_list_objects_v2(self)
    finally:
        del self.serialized


def install() -> None:
    """Every bucket created from now on indexes its keys; ListObjectsV2 reads the index and writes fast."""
    _models._VersionedKeyStore = IndexedKeyStore
    _S3Backend.list_objects_v2 = list_objects_v2
    _S3Response.list_objects_v2 = response_list_objects_v2
