"""Where a command's log goes (issue 35): `log.file` and `log.level` in config.json, or
ALAYA_LOG_FILE and ALAYA_LOG_LEVEL (which win), for the `openclaw_alaya` loggers.

Nothing set: nothing is configured, and Python's default stays (warnings and errors to stderr,
as the one-line messages of the commands already say). A file without a level logs INFO: who
points the log at a file wants to see what ran. The config file is read as plain JSON here,
not through `config.Config` (pydantic): a hook pays for no second parse of it; `alaya config
set log.level …` checks the value when it is set.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

LOGGER = "openclaw_alaya"
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


def configure(data_dir: Path) -> logging.Logger:
    """The package's logger, with a handler when a file or a level is set (once per process)."""
    logger = logging.getLogger(LOGGER)
    chosen = _chosen(data_dir)
    path = os.environ.get("ALAYA_LOG_FILE") or chosen.get("file")
    level = (os.environ.get("ALAYA_LOG_LEVEL") or chosen.get("level") or ("INFO" if path else "")).upper()
    if not (path or level) or getattr(logger, "_alaya_configured", False):
        return logger
    if level and level not in LEVELS:
        level = "WARNING"  # a bad ALAYA_LOG_LEVEL must not fail the command it came with
    target = Path(path).expanduser() if path else None
    if target is not None and not target.is_absolute():
        target = data_dir / target
    try:
        handler: logging.Handler = logging.FileHandler(target, encoding="utf-8") if target else logging.StreamHandler()
    except OSError:  # an unwritable log file: the log goes to stderr rather than the command failing
        handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(FORMAT))
    logger.addHandler(handler)
    logger.setLevel(level or "WARNING")
    logger._alaya_configured = True  # type: ignore[attr-defined]
    return logger


def _chosen(data_dir: Path) -> dict[str, str]:
    """config.json's `log` section, {} when it has none or cannot be read."""
    try:
        section = json.loads((data_dir / "config.json").read_text()).get("log")
    except (OSError, ValueError, AttributeError):
        return {}
    return {k: v for k, v in section.items() if isinstance(v, str)} if isinstance(section, dict) else {}
