"""Synthetic data for the benchmarks: sessions and cards shaped like real ones, and a fast
builder for big stores.

Cards look like the heuristic distiller's (speaker + date header, one or two turns of
conversation, tags, entities, `sources`), with text drawn from the LoCoMo dev split (or a
built-in topic list when the dataset is missing), recombined so that 100k cards do not repeat.

`build_store(n)` writes a data directory of n cards without going through distill: Kuzu with
`COPY` from Arrow tables (cards, sessions, entities and every edge table), LanceDB with one
bulk add followed by `optimize()` (the state introspect leaves a store in: FTS index folded
in). Built stores are cached under `$ALAYA_BENCH_CACHE` (default ~/.cache/alaya-bench) and
reused between runs.
"""

from __future__ import annotations

import importlib.util  # noqa: F401  (kuzu scans Python objects through importlib.util)
import json
import os
import random
import re
import shutil
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

DATASET = ROOT.parent / "shared" / "datasets" / "locomo-dev.json"
STORE_VERSION = "v3"  # v3: every column of the current schema (provenance, workspace, edge reasons)
TOPICS = ["pnpm", "kuzu", "lancedb", "docker", "postgres", "redis", "nginx", "terraform", "grafana", "kafka",
          "react", "vite", "pytest", "celery", "traefik", "minio", "argo", "helm", "sentry", "vault"]
SPEAKERS = ["Caroline", "Melanie", "Jon", "Gina", "Audrey", "Andrew", "Deborah", "Jolene", "Evan", "Sam"]
TYPES = ["fact", "concept", "decision", "preference", "pattern", "gotcha"]
_WORD = re.compile(r"[A-Za-z][a-z]{3,}")


def cache_dir() -> Path:
    return Path(os.environ.get("ALAYA_BENCH_CACHE") or Path.home() / ".cache" / "alaya-bench")


def peak_rss_mb(pid: int | str = "self") -> float:
    """A process's peak resident set (VmHWM), in MiB: this one's by default."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def daemon_rss_mb(data_dir: Path) -> float:
    """The peak resident set of the `alaya serve` daemon of a data directory, in MiB."""
    return peak_rss_mb(json.loads((data_dir / "state" / "serve.pid").read_text())["pid"])


def sentences() -> list[tuple[str, str]]:
    """(speaker, text) pairs: LoCoMo turns when the dataset is here, else templated lines."""
    if DATASET.exists():
        data = json.loads(DATASET.read_text())
        out = []
        for conv in data:
            for key, turns in conv["conversation"].items():
                if re.fullmatch(r"session_\d+", key):
                    out += [(t["speaker"], t["text"]) for t in turns if t.get("text")]
        return out
    rng = random.Random(1)
    lines = ["We decided to use {a} instead of {b} because the {c} setup was too slow.",
             "The {a} deploy failed again with a timeout error; the cause was {b} holding the lock.",
             "I prefer {a} over {b} for {c}, please remember that.", "Fix: restart {b} before {a} migrations."]
    return [(rng.choice(SPEAKERS), rng.choice(lines).format(**dict(zip("abc", rng.sample(TOPICS, 3)))))
            for _ in range(2000)]


# --- synthetic sessions (ingest + distill throughput) -----------------------------------------


def synthetic_sessions(count: int, turns_per_session: int = 20, seed: int = 7):
    """`count` sessions of `turns_per_session` turns each (Session models)."""
    from openclaw_alaya.models import Session, Turn

    rng = random.Random(seed)
    pool = sentences()
    out = []
    for n in range(1, count + 1):
        speakers = rng.sample(SPEAKERS, 2)
        turns = []
        for i in range(1, turns_per_session + 1):
            speaker, text = rng.choice(pool)
            extra = f" Session {n}: {rng.choice(TOPICS)} on port {rng.randint(1000, 9999)}." if i % 4 == 0 else ""
            turns.append(Turn(id=f"t{i:04d}", role="user" if i % 2 else "assistant", name=speakers[i % 2],
                              content=text + extra, timestamp=f"2026-0{1 + n % 9}-{1 + n % 27:02d}T10:{i % 60:02d}:00Z"))
        out.append(Session(id=f"synth-{n:05d}", agent_id="main" if n % 3 else "shared",
                           started_at=f"2026-0{1 + n % 9}-{1 + n % 27:02d}T10:00:00Z", title=f"synthetic session {n}",
                           turns=turns))
    return out


# --- synthetic cards (recall at scale) --------------------------------------------------------


def synthetic_cards(n: int, seed: int = 11) -> tuple[list[dict], list[dict], dict[str, list[dict]]]:
    """(cards, sessions, edges by table) for a store of n cards, 20 cards per session."""
    rng = random.Random(seed)
    pool = sentences()
    stamp = "2026-03-01T10:00:00+00:00"
    cards, sessions = [], []
    edges: dict[str, list[dict]] = {k: [] for k in ("TEMPORAL_NEXT", "SIMILAR_TO", "CAUSES", "CAUSED_BY",
                                                      "DEPENDS_ON", "EXTRACTED_FROM", "MENTIONS")}
    per_session = 20
    for s in range((n + per_session - 1) // per_session):
        sid = f"synth-{s:06d}"
        scope = "main" if s % 3 else "shared"
        day = f"2025-{1 + s % 12:02d}-{1 + s % 28:02d}"
        sessions.append({"id": sid, "agent_id": scope, "started_at": f"{day}T09:00:00", "ingested_at": stamp,
                         "path": "", "title": f"synthetic session {s}", "source_format": "session-json",
                         "turn_count": per_session * 2, "distilled_turns": per_session * 2, "last_card": ""})
        prev = None
        for k in range(min(per_session, n - len(cards))):
            (sp1, t1), (sp2, t2) = rng.choice(pool), rng.choice(pool)
            topic = rng.choice(TOPICS)
            body = f"{sp1} ({day}): {t1}\n{sp2}: {t2} ({topic} #{rng.randint(1, 9999)})"
            words = list(dict.fromkeys(w.lower() for w in _WORD.findall(t1 + " " + t2)))[:5]
            ctype = rng.choice(TYPES)
            cid = "card-" + str(uuid.UUID(int=rng.getrandbits(128)))
            turn_ids = [f"t{2 * k + 1:04d}", f"t{2 * k + 2:04d}"]
            cards.append({
                "id": cid, "title": t1[:80], "content": body, "type": ctype, "tags": [ctype, topic, *words[:3]],
                "entities": list(dict.fromkeys([sp1, sp2])), "importance": round(rng.uniform(0.3, 0.9), 2),
                "scope": scope, "sources": json.dumps([{"session_id": sid, "turn_ids": turn_ids}]),
                "created_at": stamp, "updated_at": stamp, "valid_from": f"{day}T09:00:00", "valid_until": "",
                "temperature": round(rng.uniform(0.2, 0.9), 3), "tier": "WARM", "access_count": 0,
                "last_accessed": "",
            })
            edges["EXTRACTED_FROM"].append({"from": cid, "to": sid, "turn_ids": turn_ids})
            for entity in cards[-1]["entities"]:
                edges["MENTIONS"].append({"from": cid, "to": entity})
            if prev is not None:
                edges["TEMPORAL_NEXT"].append({"from": prev, "to": cid, "weight": 1.0, "created_at": stamp})
            prev = cid
        sessions[-1]["last_card"] = prev or ""
    ids = [c["id"] for c in cards]
    for rel, share in (("SIMILAR_TO", 0.15), ("CAUSES", 0.04), ("DEPENDS_ON", 0.02)):
        for _ in range(int(n * share)):
            a, b = rng.sample(ids, 2) if len(ids) > 1 else (ids[0], ids[0])
            if a == b:
                continue
            edges[rel].append({"from": a, "to": b, "weight": 1.0, "created_at": stamp})
            if rel == "SIMILAR_TO":
                edges[rel].append({"from": b, "to": a, "weight": 1.0, "created_at": stamp})
            if rel == "CAUSES":
                edges["CAUSED_BY"].append({"from": b, "to": a, "weight": 1.0, "created_at": stamp})
    return cards, sessions, edges


def _table(rows: list[dict], types: dict[str, str]):
    """Rows as an Arrow table with every column of the graph's node table, in its order and
    types (a column the generator leaves out is empty), so COPY matches the current schema."""
    import pyarrow as pa

    arrow = {"STRING": pa.string(), "DOUBLE": pa.float64(), "INT64": pa.int64(), "STRING[]": pa.list_(pa.string())}
    empty = {"STRING": "", "DOUBLE": None, "INT64": 0, "STRING[]": []}
    schema = pa.schema([(name, arrow[kind]) for name, kind in types.items()])
    return pa.Table.from_pylist([{k: row.get(k, empty[t]) for k, t in types.items()} for row in rows], schema=schema)


def build_store(n: int, *, rebuild: bool = False, quiet: bool = False) -> Path:
    """A data directory of n synthetic cards, built once and cached."""
    target = cache_dir() / f"store-{n}-{STORE_VERSION}"
    if (target / ".complete").exists() and not rebuild:
        return target
    shutil.rmtree(target, ignore_errors=True)
    started = time.perf_counter()
    import pyarrow as pa

    from openclaw_alaya import Alaya
    from openclaw_alaya.models import Card, index_text
    from openclaw_alaya.store.embedded.graph import _CARD_TYPES, _SESSION_TYPES, GraphStore

    memory = Alaya(target)
    memory.init()
    cards, sessions, edges = synthetic_cards(n)
    t_gen = time.perf_counter()
    with memory.lock.write("bench build"):
        graph = GraphStore(memory.dirs.graph, read_only=False)
        try:
            conn = graph._conn
            card_tbl = _table(cards, _CARD_TYPES)  # noqa: F841 - scanned by name below
            conn.execute("COPY Card FROM card_tbl")
            session_tbl = _table(sessions, _SESSION_TYPES)  # noqa: F841
            conn.execute("COPY Session FROM session_tbl")
            names = sorted({e for c in cards for e in c["entities"]})
            entity_tbl = pa.table({"name": names, "type": [""] * len(names),  # noqa: F841
                                   "aliases": pa.array([[] for _ in names], type=pa.list_(pa.string()))})
            conn.execute("COPY Entity FROM entity_tbl")
            for table, rows in edges.items():
                if rows:
                    edge_tbl = pa.Table.from_pylist([{**r, "reason": ""} if "weight" in r else r for r in rows])  # noqa: F841
                    conn.execute(f"COPY {table} FROM edge_tbl")
        finally:
            graph.close()
        t_graph = time.perf_counter()
        texts = [index_text(Card(**{**c, "sources": json.loads(c["sources"]), "valid_until": None,
                                    "last_accessed": None})) for c in cards]
        vectors = memory.embedder.embed(texts)
        t_embed = time.perf_counter()
        table = memory.index._table("cards")
        arrow = pa.table({
            "id": [c["id"] for c in cards], "text": texts, "scope": [c["scope"] for c in cards],
            "type": [c["type"] for c in cards],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), memory.embedder.dim),
        })
        table.add(arrow)  # one commit
        memory.index.optimize()  # what introspect does: fold the rows into the FTS index
        t_index = time.perf_counter()
    (target / ".complete").write_text(str(n))
    if not quiet:
        print(f"built {target}: {n} cards in {time.perf_counter() - started:.1f}s (generate {t_gen - started:.1f}s, "
              f"kuzu COPY {t_graph - t_gen:.1f}s, embed {t_embed - t_graph:.1f}s, lancedb add+optimize "
              f"{t_index - t_embed:.1f}s)", file=sys.stderr)
    return target


def queries(count: int, seed: int = 3) -> list[str]:
    """Questions shaped like the ones agents ask, built from the same text pool."""
    rng = random.Random(seed)
    pool = sentences()
    shapes = ["what did {s} say about {w}?", "when did {s} go to the {w}?", "{w} {v}", "why {w} and {v}",
              "how does {s} feel about {w}", "remind me about the {w} {t} issue"]
    out = []
    for _ in range(count):
        speaker, text = rng.choice(pool)
        words = _WORD.findall(text) or ["memory"]
        out.append(rng.choice(shapes).format(s=speaker, w=rng.choice(words).lower(), v=rng.choice(words).lower(),
                                             t=rng.choice(TOPICS)))
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)
