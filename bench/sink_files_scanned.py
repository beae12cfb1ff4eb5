"""`sink.filesScanned` (bench/sink-skipping.ts): the files delta-rs keeps for a filter by the `add` actions'
stats, `DeltaTable.file_uris(file_pruning_predicate=...)`, of all the table's files.

stdin: JSON {"options": delta-rs storage options, "queries": [{"uri", "predicate"}]}; stdout: JSON
[{"files", "of"}], one per query.
"""
import json
import os
import sys

from deltalake import DeltaTable

request = json.load(sys.stdin)
options = request["options"]
answers = []
for query in request["queries"]:
    table = DeltaTable(query["uri"], storage_options=options)
    answers.append(
        {"files": len(table.file_uris(file_pruning_predicate=query["predicate"])), "of": len(table.file_uris())}
    )
print(json.dumps(answers))
# delta-rs's native threads can abort the interpreter's teardown (delta-io/delta-rs#2184): the answer is
# printed and flushed; leave without the teardown.
sys.stdout.flush()
os._exit(0)
