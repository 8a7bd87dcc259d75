"""One recall request: the options a caller may give `recall`, defined once.

Each field carries how the CLI spells it (`flag`, None for the positional query), whether a
value is a comma-separated list (`csv`, `repeat` for an option given more than once) and whether
it names what to look for (`target`: without one, `alaya recall` reads a JSON request on stdin).
From this model come the flags of `alaya recall` (cli/main.py), the JSON-on-stdin request, the
daemon client's forwarding table (cli/recall-flags.json, written by cli/generated.py) and the
agent tools' recall parameters (tools/). The keywords are engine.recall's own.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo


def _option(help: str, flag: str | None, *, csv: bool = False, repeat: bool = False,  # noqa: A002 - argparse's word
            target: bool = False) -> Any:
    return Field(None, description=help,
                 json_schema_extra={"flag": flag, "csv": csv, "repeat": repeat, "target": target})


class RecallOptions(BaseModel):
    """What `alaya recall` (flags or JSON on stdin) and the recall tools pass to engine.recall."""

    query: str | None = _option("what to look for", None, target=True)
    concepts: list[str] | None = _option("comma-separated concepts to start from", "--concepts", csv=True, target=True)
    relations: list[str] | None = _option("relation(s) to follow, comma-separated or repeated", "--rel",
                                          csv=True, repeat=True)
    depth: int | None = _option("hops to follow (default 1 with --rel/--concepts)", "--depth")
    from_nodes: list[str] | None = _option("comma-separated card ids to navigate from", "--from-nodes",
                                           csv=True, target=True)
    budget: int | None = _option("token budget for the returned cards", "--budget")
    scope: str | None = _option("agent id: its cards plus shared ones", "--scope")
    top_k: int | None = _option("at most this many cards", "--top-k")
    since: str | None = _option("only cards from then on: 2026-11-02, an ISO time, 7d, 2w, 3m, 1y, today, "
                                "last week, this month, 上周, … (a phrase in the query only ranks)", "--since")
    until: str | None = _option("only cards before the end of it: the same forms as --since", "--until")
    origins: list[str] | None = _option("only cards of these origins, comma-separated: manual, owner, agent, system, "
                                        "untrusted, unknown (stored before origins were recorded)", "--origin", csv=True)
    tags: list[str] | None = _option("only cards filed under these tags or their children (技术/前端 keeps 技术/前端/React), "
                                     "comma-separated or repeated", "--tag", csv=True, repeat=True)


def spec(info: FieldInfo) -> dict[str, Any]:
    """A field's CLI metadata (flag, csv, repeat, target)."""
    extra = info.json_schema_extra
    assert isinstance(extra, dict)
    return extra


def kind(info: FieldInfo) -> str:
    """`list`, `int` or `str`: how a value of the field is read and checked."""
    return "list" if spec(info)["csv"] else "int" if info.annotation == int | None else "str"


def fields(model: type[BaseModel] = RecallOptions) -> dict[str, FieldInfo]:
    return dict(model.model_fields)
