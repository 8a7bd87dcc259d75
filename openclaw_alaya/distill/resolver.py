"""The resolver shared by every distiller: each new card against the cards already stored
(and the earlier cards of the same batch).

- **duplicate** (the same statement again) → merged into the existing card: its sources gain
  the new card's session and turns, tags and entities are united, importance is the higher;
- **contradicts** (a newer statement makes the older one untrue: a new home, employer, tool
  or favourite) → the new card is added, linked `CONTRADICTS`, and the old card's
  `valid_until` set to when the new one became valid; nothing is deleted, recall ranks the
  valid card first and marks the old one superseded;
- otherwise → added.

Offline the decision is deterministic: duplicates by content-word overlap (Jaccard on the
words after the `Speaker (date):` header), contradictions by fact patterns: the same subject
(the speaker for I/we, or a named person) with the same predicate family (lives in / moved
to, works at / joined, favourite X is, uses X for Y, switched from A to B, and their Chinese
forms) and a different object. With an LLM distiller configured, the pairs the rules flag, or
that overlap a lot, are judged by the model in one call per batch, and the model's verdict
wins; if it cannot answer, the rules stand.

Candidates come from the index (vector search, and full-text search for cards that state a
fact) under the read lock; deciding happens outside any lock; applying rechecks the targets
under the write lock (pipeline.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from ..models import Card, SourceRef, may_supersede, trust_class
from ..text import STOPWORDS, stem

DUPLICATE_JACCARD = 0.85  # content-word overlap at which two cards say the same thing
JUDGE_JACCARD = 0.5  # overlap at which the model is asked (when one is configured)
MIN_WORDS = 4  # shorter cards are never merged: too little to be sure
MAX_JUDGED_PAIRS = 40
PROFILES_KEPT = 32768  # card profiles cached (a few KB each)

_HEADER = re.compile(r"^\s*([^\n():]{1,60}?)\s*\(([^()\n]{0,40})\):\s*")
_NOTE = re.compile(r"\[[^\]]*=[^\]]*\]")  # `[yesterday = 7 May 2023]` notes of the heuristic distiller
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*|[\u3400-\u9fff]")
_SENTENCE = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")

_NAME = r"[A-Z][\w'’-]*(?:\s+(?:[A-Z][\w'’-]*|de|da|do|del|van|von|upon|on))*?(?:\s+[A-Z][\w'’-]*)?"
_SUBJ = r"(?P<subj>\b(?:I|we|We|[A-Z][a-z]+))"
_ADV = r"(?:\s+(?:now|currently|still|just|recently|finally|actually|also|already))*"
# A setting's value (issue 31's knowledge update: "our billing DB pool size is 20", months later
# "we raised the billing DB pool size to 40"): a value with a digit or a capitalised word (a
# day, a product), so that "our plan is good" / "our plan is ready" is no change of a setting.
_VALUE = (r"(?P<obj>\d[\d.,:]*(?:\s?(?:%|(?!(?:now|this|that|the|and|or|after|since|for|to|in|on|at|by|which|"
          r"again|today|because|until|as|from|instead)\b)[a-zA-Z]{1,12}\b))?"
          r"|[A-Z][\w.+#-]*(?=\s*(?:[.,;!?)]|$)|\s+(?:now|again|today|too|also|since|because|after|until|as|from|instead)\b))")
_SETTING = r"(?P<what>[a-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,4}?)"
_FACTS: list[tuple[str, re.Pattern[str]]] = [
    ("residence", re.compile(
        _SUBJ + r"(?:'ve|'m|\s+have|\s+has|\s+am|\s+are|\s+is)?" + _ADV +
        r"\s+(?:live|lives|living|reside|resides|residing|based|moved|relocated)" +
        r"(?:\s+(?:back|over|here|there))?(?:\s+from\s+(?P<old>" + _NAME + r"))?\s+(?:in|to)\s+(?P<obj>" + _NAME + r")\b")),
    ("employer", re.compile(
        _SUBJ + r"(?:'m|\s+am|\s+are|\s+is)?" + _ADV +
        r"\s+(?:work|works|working)\s+(?:at|for)\s+(?P<obj>" + _NAME + r")\b")),
    ("employer", re.compile(
        _SUBJ + _ADV + r"\s+(?:joined|started (?:a )?(?:new )?job at|got (?:a )?(?:new )?job at)\s+(?P<obj>" + _NAME + r")\b")),
    ("use", re.compile(
        _SUBJ + r"(?:'ve|\s+have)?" + _ADV +
        r"\s+(?:switched|migrated)\s+from\s+(?P<old>[\w.+#-]+(?:\s[\w.+#-]+)?)\s+to\s+(?P<obj>[\w.+#-]+)", re.I)),
    ("use", re.compile(
        _SUBJ + r"(?:'re|'m|\s+are|\s+am)?" + _ADV + r"\s+(?:use|uses|using)\s+(?P<obj>[\w.+#-]+)\s+(?:for|as)\s+"
        r"(?:our\s+|the\s+|my\s+|all\s+)?(?P<what>[a-z]+(?:\s[a-z]+)?)")),
    ("favourite", re.compile(
        r"(?P<subj>\b(?:my|My|our|Our|[A-Z][a-z]+'s))\s+(?:favou?rite|preferred)\s+(?P<what>[a-z]+(?:\s[a-z]+)?)\s+is\s+(?:now\s+)?(?P<obj>[\w'’ -]{2,40}?)(?=[.,;!?]|$)")),
    ("value", re.compile(
        r"(?P<subj>\b(?:my|My|our|Our))\s+" + _SETTING + r"\s+(?:is|are)\s+(?:now\s+|currently\s+|still\s+)?"
        r"(?:set\s+to\s+|at\s+)?" + _VALUE)),
    ("value", re.compile(
        _SUBJ + r"(?:'ve|\s+have)?" + _ADV + r"\s+(?:set|raised|bumped|increased|lowered|reduced|changed|upped|"
        r"dropped|decreased|cut|moved)\s+(?:the|our|my)\s+" + _SETTING + r"\s+(?:from\s+(?P<old>\d[\d.,:]*)\s+)?to\s+"
        + _VALUE)),
    ("value", re.compile(
        r"(?P<subj>我们的|我的)(?P<what>[\u4e00-\u9fffA-Za-z ]{2,16}?)(?:现在|目前)?(?:是|为|改成了?|调到了?|调整为|改为)"
        r"(?P<obj>\d[\d.]*\s*[%a-zA-Z\u4e00-\u9fff]?)")),
    ("residence", re.compile(r"(?P<subj>我|我们)(?:现在|目前|已经)?(?:住在|搬到了?|搬去了?)(?P<obj>[\u4e00-\u9fff]{2,6}?)(?=[，。！？；,.!?\s]|$|了|啦)")),
    ("employer", re.compile(r"(?P<subj>我|我们)(?:现在|目前)?在(?P<obj>[\u4e00-\u9fffA-Za-z]{2,10}?)(?:工作|上班)")),
]
_FIRST_PERSON = {"i", "we", "my", "our", "我", "我们", "我的", "我们的"}
_NOT_NAMES = {"the", "this", "that", "it", "he", "she", "they", "you", "there", "here", "then", "so", "and", "but"}


@dataclass
class Decision:
    card_id: str
    action: str = "add"  # add | merge | contradict
    target: str | None = None


@dataclass
class Profile:
    """What the rules compare: content words and (subject, family) → (object, old object)."""

    words: frozenset[str]
    facts: dict[tuple[str, str], tuple[str, str | None]] = field(default_factory=dict)


def body_and_speaker(content: str) -> tuple[str, str | None]:
    match = _HEADER.match(content)
    if match:
        return content[match.end():], match.group(1).strip().lower()
    return content, None


def profile(card: Card) -> Profile:
    return _profile(card.content, card.scope)


@lru_cache(maxsize=PROFILES_KEPT)
def _profile(content: str, scope: str) -> Profile:
    """Kept per text: a stored card is a candidate for batch after batch of a backlog, and
    its content never changes on a merge (recomputing was a tenth of a backlog's distill)."""
    body, speaker = body_and_speaker(content)
    body = _NOTE.sub(" ", body)
    words = frozenset(stem(w) for w in _WORD.findall(body.lower()) if w not in STOPWORDS)
    facts: dict[tuple[str, str], tuple[str, str | None]] = {}
    for sentence, speaker in _said(body, speaker):
        for family, pattern in _FACTS:
            for m in pattern.finditer(sentence):
                subj = m.group("subj").strip().lower()
                if subj.endswith("'s"):
                    subj = subj[:-2]
                if subj in _NOT_NAMES:
                    continue
                if subj in _FIRST_PERSON:
                    subj = speaker or scope or "user"
                name = family + (":" + _norm(m.group("what")) if "what" in pattern.groupindex else "")
                old = m.groupdict().get("old")
                facts[(subj, name)] = (_norm(m.group("obj")), _norm(old) if old else None)
    return Profile(words, facts)


_LINE_SPEAKER = re.compile(r"^\s*([^\s():][^\n():]{0,40}?):\s+")  # `user: …`, the reply's line of a question/answer card


def _said(body: str, speaker: str | None) -> list[tuple[str, str | None]]:
    """(sentence, who said it): a question/answer card's later lines name their own speaker
    (distill/heuristic.py: `Name (date): question` then `Name: reply`)."""
    said = []
    for n, line in enumerate(body.split("\n")):
        head = _LINE_SPEAKER.match(line) if n else None
        if head and len(head.group(1).split()) <= 3:
            speaker, line = head.group(1).strip().lower(), line[head.end():]
        said += [(sentence, speaker) for sentence in _SENTENCE.split(line)]
    return said


def states_fact(card: Card) -> bool:
    """Whether the card says something (where someone lives, works, what they use…) that a
    stored card may contradict in quite other words: only such cards need a full-text search
    beside the vector one (pipeline.find_candidates)."""
    return bool(profile(card).facts)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def contradiction(older: Profile, newer: Profile) -> str | None:
    """Why `newer` makes `older` untrue, or None."""
    for key, (obj, old) in newer.facts.items():
        subj, family = key
        before = older.facts.get(key)
        if before is not None and not _same_value(before[0], obj):
            return f"{subj} {family}: {before[0]} → {obj}"
        if old and family == "use":
            for (s2, f2), (o2, _) in older.facts.items():
                if s2 == subj and f2.startswith("use") and o2 == old:
                    return f"{subj} switched from {old} to {obj}"
    return None


class Resolver:
    """Decides, for cards in the order they were said, what each one is to the stored ones."""

    def __init__(self, judge: Callable[[list[tuple[str, str]]], list[str] | None] | None = None) -> None:
        self.judge = judge

    def decide(self, new_cards: list[Card], candidates: dict[str, list[Card]]) -> dict[str, Decision]:
        """`new_cards` in the order they were said; `candidates[card.id]`: stored cards that
        may be the same or in conflict. Earlier new cards from other sessions are candidates
        too. A card is compared only with cards of its own scope."""
        profiles: dict[str, Profile] = {}
        decisions: dict[str, Decision] = {}
        flagged: list[tuple[Card, Card]] = []  # (older card, newer card) for the judge
        earlier: list[Card] = []
        # stored cards a new card of this batch already supersedes: a value said twice in one
        # session (a question/answer card and the reply's own) retires both cards of the old
        # one, and with one old card both new ones link to it (recall/history.py walks them)
        superseded: set[str] = set()
        # earlier new cards by content word and by fact subject: only those sharing a word can
        # reach JUDGE_JACCARD, only those sharing a subject can contradict, so a batch costs
        # about n·(postings) dict lookups instead of n² comparisons (bench/ingest.py)
        by_word: dict[str, list[int]] = {}
        by_subject: dict[str, list[int]] = {}
        for card in new_cards:
            mine = profiles.get(card.id) or profiles.setdefault(card.id, profile(card))
            decision = Decision(card.id)
            pool = [c for c in candidates.get(card.id, []) if c.id != card.id]
            shared: dict[int, int] = {}
            for w in mine.words:
                for i in by_word.get(w, ()):
                    shared[i] = shared.get(i, 0) + 1
            n = len(mine.words)  # jaccard = shared / (n + theirs - shared): skip the hopeless
            near = {i for i, c in shared.items() if c / (n + len(profiles[earlier[i].id].words) - c) >= JUDGE_JACCARD}
            near.update(i for subj, _ in mine.facts for i in by_subject.get(subj, ()))
            pool += [earlier[i] for i in sorted(near)
                     if earlier[i].sources and card.sources and earlier[i].sources[0].session_id != card.sources[0].session_id]
            best_dup: tuple[float, Card] | None = None
            conflict: tuple[Card, str] | None = None
            for other in pool:
                if other.scope != card.scope:
                    continue
                theirs = profiles.get(other.id) or profiles.setdefault(other.id, profile(other))
                if trust_class(other.origin) != trust_class(card.origin):  # models.trust_class
                    if other.valid_until is None and conflict is None and may_supersede(other.origin, card.origin):
                        why = contradiction(theirs, mine)
                        conflict = (other, why) if why else None
                    continue
                if other.valid_until is None and (conflict is None or conflict[0].id in superseded):
                    why = contradiction(theirs, mine)
                    if why and (conflict is None or other.id not in superseded):
                        conflict = (other, why)
                overlap = jaccard(mine.words, theirs.words)
                small = min(len(mine.words), len(theirs.words)) < MIN_WORDS
                if not small and overlap >= JUDGE_JACCARD and (best_dup is None or overlap > best_dup[0]):
                    best_dup = (overlap, other)
            if conflict is not None:
                superseded.add(conflict[0].id)
                decision = Decision(card.id, "contradict", conflict[0].id)
                flagged.append((conflict[0], card))
            elif best_dup is not None:
                if best_dup[0] >= DUPLICATE_JACCARD:
                    decision = Decision(card.id, "merge", best_dup[1].id)
                flagged.append((best_dup[1], card))
            decisions[card.id] = decision
            if decision.action != "merge":
                for w in mine.words:
                    by_word.setdefault(w, []).append(len(earlier))
                for subj in {subj for subj, _ in mine.facts}:
                    by_subject.setdefault(subj, []).append(len(earlier))
                earlier.append(card)
        if self.judge is not None and flagged:
            self._judged(flagged[:MAX_JUDGED_PAIRS], decisions)
        merged_into = {d.card_id: d.target for d in decisions.values() if d.action == "merge"}
        for d in decisions.values():  # a target merged away itself: follow to where it went
            seen = set()
            while d.target in merged_into and d.target not in seen:
                seen.add(d.target)
                d.target = merged_into[d.target]
        return decisions

    def _judged(self, flagged: list[tuple[Card, Card]], decisions: dict[str, Decision]) -> None:
        verdicts = self.judge([(old.content, new.content) for old, new in flagged])
        if verdicts is None:
            return
        for (old, new), verdict in zip(flagged, verdicts):
            if trust_class(old.origin) != trust_class(new.origin) and verdict == "duplicate":
                verdict = "unrelated"  # merged only within a trust class
            if verdict == "contradicts" and not may_supersede(old.origin, new.origin):
                verdict = "unrelated"
            if verdict == "duplicate":
                decisions[new.id] = Decision(new.id, "merge", old.id)
            elif verdict == "contradicts":
                decisions[new.id] = Decision(new.id, "contradict", old.id)
            elif decisions[new.id].target == old.id:
                decisions[new.id] = Decision(new.id, "add", None)


def merged_card(keep: Card, drops: list[Card], stamp: str) -> Card:
    """The kept card with the provenance (sources per session united), tags and entities of the
    ones merged into it, and the highest importance: a resolver merge (pipeline.py) and a
    consolidate or replayed merge (maintenance/) alike."""
    turns: dict[str, list[str]] = {}
    for card in [keep, *drops]:
        for source in card.sources:
            bucket = turns.setdefault(source.session_id, [])
            bucket.extend(t for t in source.turn_ids if t not in bucket)
    return keep.model_copy(update={
        "sources": [SourceRef(session_id=s, turn_ids=t) for s, t in turns.items()],
        "tags": list(dict.fromkeys(t for c in [keep, *drops] for t in c.tags)),
        "entities": list(dict.fromkeys(e for c in [keep, *drops] for e in c.entities)),
        "importance": max(c.importance for c in [keep, *drops]),
        "updated_at": stamp,
    })


def _same_value(a: str, b: str) -> bool:
    """"20" and "20 connections" are one value said twice; "2 GB" and "2 TB" are not."""
    if a == b:
        return True
    first_a, first_b = a.split()[:1], b.split()[:1]
    return first_a == first_b and bool(first_a) and first_a[0][0].isdigit() and min(len(a.split()), len(b.split())) == 1


def _norm(text: str | None) -> str:
    text = re.sub(r"^(?:the|a|an)\s+", "", (text or "").strip().lower())
    return re.sub(r"\s+", " ", text).strip(" .,'’")
