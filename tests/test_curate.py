"""Deliberate memory through the CLI: remember, correct, entities, forget --purge-raw, and the
one-line errors for bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ENV = {**os.environ, "ALAYA_NO_SERVE": "1"}
TRIPLETS = [{"subject": "Robert", "relation": "maintains", "object": "billing-api"},
            {"subject": "Bob", "relation": "owns", "object": "the pager rota"}]


def alaya(data, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args], input=stdin,
                          capture_output=True, text=True, env=ENV, timeout=300)


def test_remember_correct_and_forget_with_purge_raw(tmp_path):
    data = tmp_path / "data"
    assert alaya(data, "init").returncode == 0
    first = alaya(data, "remember", "The release train leaves every second Tuesday.", "--type", "decision",
                  "--tags", "release", "--json")
    assert first.returncode == 0, first.stderr
    card = json.loads(first.stdout)["card_id"]
    fixed = alaya(data, "correct", card, "The release train leaves every Thursday since November.", "--json")
    assert fixed.returncode == 0, fixed.stderr
    new = json.loads(fixed.stdout)
    assert new["superseded"] == [card]
    nodes = json.loads(alaya(data, "recall", "when does the release train leave", "--json").stdout)["nodes"]
    assert nodes[0]["card_id"] == new["card_id"]
    assert next(n for n in nodes if n["card_id"] == card)["superseded"]
    gone = alaya(data, "forget", card, "--purge-raw", "--reason", "outdated", "--json")
    assert gone.returncode == 0, gone.stderr
    assert json.loads(gone.stdout)["purged_turns"] == 1
    raw = "".join(p.read_text() for p in (data / "raw" / "sessions").rglob("*.json"))
    assert "second Tuesday" not in raw and "[forgotten]" in raw and "every Thursday" in raw
    tomb = json.loads((data / "raw" / "tombstones.jsonl").read_text().splitlines()[0])
    assert tomb["id"] == card and tomb["reason"] == "outdated" and tomb["digest"].startswith("sha256:")


def test_entities_alias_merge_and_concepts(tmp_path):
    data = tmp_path / "data"
    alaya(data, "init")
    commit = alaya(data, "commit", "--json", stdin=json.dumps({"triplets": TRIPLETS, "entity_types": ["person", "service"]}))
    assert commit.returncode == 0, commit.stderr
    merged = alaya(data, "entities", "merge", "Robert", "Bob", "--json")
    assert merged.returncode == 0, merged.stderr
    robert = json.loads(merged.stdout)
    assert robert["aliases"] == ["Bob"] and robert["mentions"] == 2 and robert["type"] == "person"
    nodes = json.loads(alaya(data, "recall", "--concepts", "bob", "--json").stdout)["nodes"]
    assert {n["title"] for n in nodes} >= {"Robert maintains billing-api", "Robert owns the pager rota"} or \
        {n["title"] for n in nodes} >= {"Robert maintains billing-api", "Bob owns the pager rota"}
    assert alaya(data, "rebuild").returncode == 0
    shown = json.loads(alaya(data, "entities", "show", "bob", "--json").stdout)
    assert shown["name"] == "Robert" and shown["mentions"] == 2


def test_entities_list_by_a_type_no_entity_has_lists_none(tmp_path):
    data = tmp_path / "data"
    alaya(data, "init")
    assert alaya(data, "commit", stdin=json.dumps({"triplets": TRIPLETS, "entity_types": ["person"]})).returncode == 0
    typed = json.loads(alaya(data, "entities", "list", "--type", "person", "--json").stdout)
    assert [e["name"] for e in typed["entities"]] == ["Robert"] and typed["total"] == 1
    none = json.loads(alaya(data, "entities", "list", "--type", "project", "--json").stdout)
    assert none["entities"] == [] and none["total"] == 0


def test_bad_input_is_one_line_and_changes_nothing(tmp_path):
    data = tmp_path / "data"
    alaya(data, "init")
    cases = [
        (("commit",), '{"triplets": [{"subject": "", "relation": "R", "object": "x"}]}', "subject"),
        (("commit",), '{"triplets": [{"subject": "a", "relation": "R", "object": "b", "confidence": 2}]}', "confidence"),
        (("commit",), "{not json", "not valid JSON"),
        (("purge",), None, "at least one criterion"),
        (("forget", "card-nope"), None, "no card"),
        (("forget", "--session", "nope"), None, "no session"),
        (("remember", "   "), None, "empty"),
        (("remember", "x", "--importance", "3"), None, "importance"),
        (("entities", "rename", "nobody", "x"), None, "no entity"),
    ]
    for args, stdin, expected in cases:
        out = alaya(data, *args, stdin=stdin)
        assert out.returncode == 1, (args, out.stdout, out.stderr)
        assert expected in out.stderr and len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    status = json.loads(alaya(data, "status", "--json").stdout)
    assert status["cards"] == 0 and status["sessions"] == 0 and status["entities"] == 0
