"""The built-in store filter: secret redaction (redact.py), on by default.

Named second by the package top (`openclaw_alaya.builtin_plugins`), so the plugin manager
registers it before third-party plugins and their filters see redacted text. `redaction.enabled: false` in config.json turns it off; `alaya status` shows how many
secrets were redacted (`state/redactions.json`, counted by `redact.record`).
"""

from __future__ import annotations

from typing import Any

from .hookspecs import hookimpl


@hookimpl
def store_filter(session: Any, memory: Any) -> Any:
    from .redact import (  # the patterns compile on first use, not at plugin load
        from_config,
        redact_session,
    )

    redactor = from_config(memory.config)
    if redactor is None:
        return None
    redacted, counts = redact_session(session, redactor)
    return redacted if counts else None
