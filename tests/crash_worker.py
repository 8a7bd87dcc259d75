"""A writer to be killed: ingests sessions (printing `ack <id>` once each ingest returned),
distills some and runs introspect now and then, until it is killed. argv: data dir, prefix."""

from __future__ import annotations

import json
import sys

from openclaw_alaya import Alaya
from openclaw_alaya.maintenance.introspect import run as introspect

data, prefix = sys.argv[1], sys.argv[2]
memory = Alaya(data)
memory.upgrade()  # finish what the last kill left (a read would refuse a cut-off checkpoint)
memory.recall("warm up")  # load kuzu, lancedb and the embedder before the kills start
print("ready", flush=True)
for i in range(1000):
    sid = f"{prefix}-{i}"
    turns = [{"role": "user" if k % 2 == 0 else "assistant",
              "content": f"{sid} turn {k}: we decided to move the {['billing', 'search', 'auth'][k % 3]} service "
                         f"to pgbouncer pool size {k * 10 + i} because connections ran out."} for k in range(6)]
    print("phase ingest", flush=True)
    memory.ingest(json.dumps({"session_id": sid, "turns": turns}).encode())
    print(f"ack {sid}", flush=True)
    if i % 2 == 0:
        print("phase distill", flush=True)
        memory.distill(sid)
    if i % 3 == 2:
        print("phase introspect", flush=True)
        introspect(memory)
