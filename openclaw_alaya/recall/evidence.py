"""What reflect counted as each opinion's evidence, read back from its records in
`raw/curation.jsonl` (maintenance/reflect.py): reflect needs it so a re-run counts nothing
twice, and recall shows it with the opinion ("what does Peter prefer?" → the opinion, its
confidence and the cards for and against it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..store.raw import CURATION_LOG

if TYPE_CHECKING:
    from ..store.ports.raw import RawSessions

STRONG, WEAK = 2, 1  # contradiction weight of a strong (the resolver's fact rules) and a weak one


@dataclass
class Counted:
    """What the curation log says reflect already did to one opinion."""

    supporting: list[str] = field(default_factory=list)
    contradicting: list[str] = field(default_factory=list)
    met: int = 0  # contradiction weight counted
    last: dict[str, Any] | None = None  # the last record

    @property
    def ids(self) -> set[str]:
        return set(self.supporting) | set(self.contradicting)


def counted(raw: "RawSessions") -> dict[str, Counted]:
    """Opinion card id → the evidence reflect's `confidence` records counted for it."""
    found: dict[str, Counted] = {}
    for r in raw.read_log(CURATION_LOG):
        if r.get("op") != "confidence" or not r.get("card"):
            continue
        entry = found.setdefault(r["card"], Counted())
        entry.supporting += list(r.get("supporting") or [])
        contra = list(r.get("contradicting") or [])
        entry.contradicting += contra
        strong = set(r.get("strong") or [])
        entry.met += sum(STRONG if i in strong else WEAK for i in contra)
        entry.last = r
    return found
