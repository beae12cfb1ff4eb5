"""Another writer on a bronze Delta table, as docs/bronze.md "Other writers on the table" allows: delta-rs
with conditional put (`aws_conditional_put: etag`, the `If-None-Match` the sink uses too). Compacts the
table's small files (OPTIMIZE) and sets a table property; prints the versions it created as JSON."""
import json
import os
import sys

from deltalake import DeltaTable

from delta_options import emulator_options

uri, endpoint, region = sys.argv[1], sys.argv[2], sys.argv[3]
options = emulator_options(endpoint, region, aws_conditional_put="etag")
table = DeltaTable(uri, storage_options=options)
before = table.version()
metrics = table.optimize.compact()
table.alter.set_table_properties({"delta.logRetentionDuration": "interval 60 days"})
table = DeltaTable(uri, storage_options=options)
print(json.dumps({"before": before, "after": table.version(), "optimize": metrics}, default=str))
sys.stdout.flush()
os._exit(0)
