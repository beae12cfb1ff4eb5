"""`sink.filesScanned` (bench/sink-skipping.ts): the files delta-rs keeps for a filter by the `add` actions'
stats, `DeltaTable.file_uris(file_pruning_predicate=...)`, of all the table's files.

argv: <s3 endpoint> <region>; stdin: JSON [{"uri": ..., "predicate": ...}]; stdout: JSON [{"files", "of"}].
"""
import json
import sys

from deltalake import DeltaTable

endpoint, region = sys.argv[1], sys.argv[2]
options = {
    "AWS_ENDPOINT_URL": endpoint,
    "AWS_REGION": region,
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_ALLOW_HTTP": "true",
}
answers = []
for query in json.load(sys.stdin):
    table = DeltaTable(query["uri"], storage_options=options)
    answers.append(
        {"files": len(table.file_uris(file_pruning_predicate=query["predicate"])), "of": len(table.file_uris())}
    )
print(json.dumps(answers))
