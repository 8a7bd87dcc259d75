"""The checked-in files made from the Python models, and reading them back without pydantic.

`cli/recall-flags.json` is recall's options (recall/request.py: RecallOptions) as the CLI
spells them: `alaya recall`'s parser, its JSON-on-stdin request and the daemon client's
forwarding (client.py) read it, so that `alaya --help` and a served call never load pydantic.
`hooks/openclaw-alaya/lib/tool-schemas.json` is the OpenClaw tools' parameters (tools/catalog.py)
for the plugin's JS. `python -m openclaw_alaya.cli.generated` writes both; `--check` exits 1
when a checked-in file differs from what the models give now (CI runs it, and so does
tests/test_generated.py).
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any

RECALL_FLAGS = Path(__file__).with_name("recall-flags.json")
TOOL_SCHEMAS = Path(__file__).resolve().parents[2] / "hooks" / "openclaw-alaya" / "lib" / "tool-schemas.json"


@functools.cache
def recall_options() -> tuple[dict[str, Any], ...]:
    """Recall's options, in order: name, flag (None: the positional query), kind (str, int,
    list), repeat, target, help."""
    return tuple(json.loads(RECALL_FLAGS.read_text(encoding="utf-8"))["options"])


def recall_flags_data() -> dict[str, Any]:
    """What recall-flags.json holds, from the model."""
    from ..recall.request import fields, kind, spec

    return {"options": [{"name": name, "flag": spec(info)["flag"], "kind": kind(info), "repeat": spec(info)["repeat"],
                         "target": spec(info)["target"], "help": info.description}
                        for name, info in fields().items()]}


def tool_schemas_data() -> dict[str, Any]:
    """What tool-schemas.json holds, from the OpenClaw tools' parameter models."""
    from ..tools.catalog import schemas

    return schemas()


def outputs() -> dict[Path, str]:
    """Each generated file and the text it should have."""
    return {path: json.dumps(data, indent=2, ensure_ascii=False) + "\n"
            for path, data in ((RECALL_FLAGS, recall_flags_data()), (TOOL_SCHEMAS, tool_schemas_data()))}


def stale(wanted: dict[Path, str]) -> list[Path]:
    """The files whose text on disk is not `wanted`'s."""
    return [path for path, text in wanted.items()
            if not path.exists() or path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    wanted = outputs()
    if args == ["--check"]:
        for path in stale(wanted):
            print(f"{path} is out of date: run python -m openclaw_alaya.cli.generated", file=sys.stderr)
        return 1 if stale(wanted) else 0
    for path, text in wanted.items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
