"""The integrated summary the LLM distiller keeps in `state/llm_summary.json`: its file and
its reader, apart from distiller.py so that the session hooks read it without importing the
LLM client, jinja2 or the prompt models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LLM_SUMMARY_FILE = "llm_summary.json"  # in state/, written by distiller.py


def read_llm_summaries(state_dir: Path | None) -> dict[str, Any]:
    """scope → {active_areas, key_topics, recent, updated_at} written by the LLM distiller."""
    if state_dir is None:
        return {}
    try:
        data = json.loads((state_dir / LLM_SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
