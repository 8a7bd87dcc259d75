"""The checked-in generated files (cli/recall-flags.json, the plugin's tool-schemas.json) are
what the Python models give now, and the check catches a model changed without regenerating."""

from __future__ import annotations

import json

import pytest
from pydantic import create_model

from openclaw_alaya.cli import generated
from openclaw_alaya.recall import request
from openclaw_alaya.tools import catalog, openclaw


def test_checked_in_files_are_what_the_models_give():
    assert generated.stale(generated.outputs()) == []
    assert generated.main(["--check"]) == 0


@pytest.fixture
def new_option(monkeypatch):
    """RecallOptions with one more option, as a change to recall/request.py would make it."""
    grown = create_model("Grown", __base__=request.RecallOptions,
                         min_score=(int | None, request._option("drop cards below this score", "--min-score")))
    monkeypatch.setattr(request, "fields", lambda model=grown: dict(model.model_fields))
    search = catalog.OPENCLAW_TOOLS["memory_search"]
    monkeypatch.setitem(catalog.OPENCLAW_TOOLS, "memory_search", search._replace(params=openclaw._search_params()))
    return "min_score"


def test_a_model_changed_without_regenerating_fails_the_check(new_option, capsys):
    wanted = generated.outputs()
    assert set(generated.stale(wanted)) == {generated.RECALL_FLAGS, generated.TOOL_SCHEMAS}
    flags = json.loads(wanted[generated.RECALL_FLAGS])["options"]
    assert {"name": new_option, "flag": "--min-score", "kind": "int", "repeat": False, "target": False,
            "help": "drop cards below this score"} in flags
    tools = {t["name"]: t for t in json.loads(wanted[generated.TOOL_SCHEMAS])["tools"]}
    assert tools["memory_search"]["parameters"]["properties"][new_option]["type"] == "integer"
    assert generated.main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().err
