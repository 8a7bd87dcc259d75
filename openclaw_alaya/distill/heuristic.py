"""The offline heuristic distiller: deterministic cards, entities and links from turns.

No network, no model. Per turn (or per paragraph group of a long turn):

1. split into sentences (English on ``.!?`` + space, Chinese on ``。！？；``) and drop filler
   sentences (greetings, thanks, "Wow, that's great!", 好的...);
2. skip what carries no information. A turn that ends with a question and is followed by
   another speaker's reply becomes a question/answer card citing both turns: the question
   (with what precedes it) plus the reply's opening sentences (about ``ANSWER_EXCERPT``
   chars, ``…`` when cut), so a memory keeps what was asked with what was answered; the reply
   keeps its own card too (recall skips it when the pair already covers it). A bare question
   with a short answer is one card and the answer gets no other;
3. the card keeps the text verbatim behind a ``Speaker (8 May 2023):`` header, with relative
   dates resolved (``[yesterday = 7 May 2023]``); the type comes from cue phrases (cues.py);
4. links: CAUSED_BY from cause phrases, DEPENDS_ON from dependency phrases, SIMILAR_TO between
   cards sharing entities or many keywords.

Cards cite only turns in ``session.turns[start:]`` (a question before ``start`` is never paired);
keys are ``{session}:{first turn}:{n}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime

from ..models import CARD_TYPES, CardDraft, DistillResult, LinkDraft, Session, Turn
from .cues import (
    CUES,
    FILLER_SENTENCE_RE,
    STOPWORDS,
    TITLE_PREFIX_RE,
    TYPE_CUES,
    TYPE_PRIORITY,
    YES_NO_RE,
)
from .actions import TODO_TAG, is_action_item
from .dates import ABS_DATE_RE, iso_of, parse_when, render_date, resolve_relative
from .entities import CJK_RE, extract_entities, keywords, mid_sentence_caps
from .titles import TitleJudge, content_words, negates

TITLE_MAX = 80
LONG_TURN = 600  # chars: above this a turn with several paragraphs may give several cards
SHORT_ANSWER = 80  # chars: an answer this short is merged with a held question
SHORT_YES_NO_ANSWER = 160
ANSWER_EXCERPT = 300  # chars: the opening of a reply appended to the question's card

_SENT_SPLIT_RE = re.compile(r"(?<=[.!?\u2026])[\"'\u201d\u2019)\]]*\s+|(?<=[。！？；!?])\s*")
_PARA_SPLIT_RE = re.compile(r"\n[ \t]*\n+")
_DIGIT_RE = re.compile(r"\d")
_QUESTION_END_RE = re.compile(r"[?？]\W*$|[吗呢么]\W*$")
# An ASCII comma, semicolon or colon ends a clause only before a space: not in "0.11,<0.12" or "15:32".
_CLAUSE_CUT_RE = re.compile(r"[,;:](?=\s)\s*|[\u2014，；：]\s*|\s+[-\u2013]\s+")
_SPACE_RE = re.compile(r"[ \t]+")
_FENCE = "```"
_CJK_STOPS = frozenset("。！？；")
_ROLE_ONLY = {"user", "assistant", "system", "tool", "agent", "human", "ai", "bot"}

_STANCE_TYPES = frozenset({"decision", "preference"})  # titles name the decision or preference
# "We decided:", "Recorded the decision:", "先说几个我的偏好：": a label before what it announces.
_LABEL_RE = re.compile(r"^([^:：]{1,30})(?::\s+|：\s*)(?=\S)")
_SCOPE_RE = re.compile(r"^[^:：]{1,80}(?::\s+|：\s*)(?=\S)")  # "For the session cache of …: " (issue 35)
_BASE_IMPORTANCE = {
    "decision": 0.7, "gotcha": 0.7, "preference": 0.65, "pattern": 0.6, "fact": 0.55, "concept": 0.45,
}


@dataclass
class _Piece:
    """The informative part of a turn (or of one paragraph group of a long turn)."""

    text: str  # kept sentences, verbatim
    sentences: list[str]
    question_only: bool
    informative: bool
    has_number: bool
    entities: list[str]
    notes: list[str]  # resolved relative dates
    cues: dict[str, int] = field(default_factory=dict)


@dataclass
class _Draft:
    key: str
    title: str
    content: str
    type: str
    tags: list[str]
    entities: list[str]
    importance: float
    turn_ids: list[str]
    valid_from: str | None
    body: str  # text used for links (no header)
    cues: dict[str, int] = field(default_factory=dict)
    ent_keys: set[str] = field(default_factory=set)
    kw_keys: set[str] = field(default_factory=set)


def _is_cjk(text: str) -> bool:
    return _CJK_RE_SEARCH(text) is not None


_CJK_RE_SEARCH = CJK_RE.search


def split_sentences(line: str) -> list[str]:
    return [s.strip() for s in _SENT_SPLIT_RE.split(line) if s and s.strip()]


def _is_filler(sentence: str, name_re: re.Pattern[str] | None = None) -> bool:
    if name_re is not None:
        sentence = name_re.sub("", sentence)
    if FILLER_SENTENCE_RE.match(sentence):
        return True
    # Emoji / punctuation only.
    return not any(ch.isalnum() for ch in sentence)


_STRONG_KEYS = [f"{t}.strong" for t in TYPE_CUES]


def classify(text: str, has_number: bool, has_date_note: bool, cues: dict[str, int] | None = None) -> str:
    """The card type: cue phrase scores (strong 2, weak 1), dates and numbers for "fact"."""
    if cues is None:
        cues = CUES.counts(text)
    scores: dict[str, int] = {t: 2 * cues[f"{t}.strong"] + cues[f"{t}.weak"] for t in TYPE_CUES}
    if ABS_DATE_RE.search(text):
        scores["fact"] = scores.get("fact", 0) + 2
    elif has_number:
        scores["fact"] = scores.get("fact", 0) + 1
    if has_date_note:
        scores["fact"] = scores.get("fact", 0) + 1
    best, best_score = "concept", 0
    for t in TYPE_PRIORITY:
        # One weak cue ("never", "love") is not enough to leave "concept", except for facts.
        if scores.get(t, 0) > best_score and (scores[t] >= 2 or t == "fact"):
            best, best_score = t, scores[t]
    return best if best in CARD_TYPES else "concept"


def trim_title(s: str, limit: int = TITLE_MAX) -> str:
    s = _SPACE_RE.sub(" ", s.replace("\n", " ")).strip()
    if len(s) <= limit:
        return s
    cut = s[: limit - 1]
    # Prefer a clause boundary that keeps a reasonable gist.
    best = -1
    for m in _CLAUSE_CUT_RE.finditer(cut):
        if m.start() >= min(25, limit // 2):
            best = m.start()
    if best > 0:
        return cut[:best].rstrip(" ,;:-") + "\u2026"
    if not _is_cjk(cut):
        sp = cut.rfind(" ")
        if sp >= min(30, limit // 2):
            cut = cut[:sp]
    return cut.rstrip(" ,;:-") + "\u2026"


def _joined(lead: str, rest: str) -> str:
    """``lead — rest`` as one title, each part cut on its own so that ``rest`` is never cut off."""
    lead = trim_title(lead, TITLE_MAX // 2).rstrip(".!。！")
    return f"{lead} \u2014 {trim_title(rest, TITLE_MAX - len(lead) - 3)}"


def _cut_words(s: str, limit: int) -> str:
    """``s`` cut to at most ``limit`` chars at a word boundary, ending with ``…``."""
    if len(s) <= limit:
        return s
    cut = s[: limit - 1]
    if not _is_cjk(cut):
        sp = cut.rfind(" ")
        if sp >= limit // 2:
            cut = cut[:sp]
    return cut.rstrip(" ,;:-") + "\u2026"


class HeuristicDistiller:
    """Deterministic, offline distiller (the default). See the module docstring."""

    name = "heuristic"

    def distill(self, session: Session, start: int = 0) -> DistillResult:
        turns = session.turns
        start = max(0, start)
        if start >= len(turns):
            return DistillResult()
        ctx = _Context(session)
        drafts: list[_Draft] = []
        per_first: dict[str, int] = {}
        todo = turns[start:]  # cards cite only these turns
        cache: dict[int, list[_Piece]] = {}

        def pieces_at(k: int) -> list[_Piece]:
            if k not in cache:
                cache[k] = ctx.pieces(todo[k])
            return cache[k]

        def emit(src: list[tuple[Turn, _Piece]], pair: bool = False) -> None:
            first = src[0][0].id
            n = per_first.get(first, 0)
            per_first[first] = n + 1
            drafts.append(ctx.make_draft(f"{session.id}:{first}:{n}", src, pair))

        consumed = -1  # a short answer merged into the previous question's card
        for k, turn in enumerate(todo):
            if k == consumed:
                continue
            pieces = pieces_at(k)
            last = len(pieces) - 1
            for i, piece in enumerate(pieces):
                reply = None
                if i == last and k + 1 < len(todo):
                    reply = self._reply(turn, piece, todo[k + 1], pieces_at(k + 1))
                if reply is not None:
                    a_turn, a_pieces = reply
                    if len(pieces) == 1 and self._short_answer(piece, a_turn, a_pieces):
                        # A bare question and its short answer: one card, the answer needs no other.
                        emit([(turn, piece), (a_turn, a_pieces[0])])
                        consumed = k + 1
                        continue
                    excerpt = ctx.excerpt(a_pieces)
                    if excerpt.text and (piece.informative or excerpt.informative):
                        # The question keeps its answer's opening as context; the answer keeps its own card.
                        emit([(turn, piece), (a_turn, excerpt)], pair=True)
                        continue
                if piece.informative:
                    emit([(turn, piece)])

        links = _links(drafts, ctx)
        cards = [
            CardDraft(
                key=d.key, title=d.title, content=d.content, type=d.type, tags=d.tags,
                entities=d.entities, importance=d.importance, turn_ids=d.turn_ids,
                valid_from=d.valid_from,
            )
            for d in drafts
        ]
        return DistillResult(cards=cards, links=links)

    @staticmethod
    def _reply(
        turn: Turn, piece: _Piece, nxt: Turn, nxt_pieces: list[_Piece]
    ) -> tuple[Turn, list[_Piece]] | None:
        """The next turn, when ``piece`` ends with a question and another speaker replies."""
        if not piece.sentences or not _QUESTION_END_RE.search(piece.sentences[-1]):
            return None
        if turn.name and nxt.name and turn.name == nxt.name:
            return None
        if not (turn.name and nxt.name) and turn.role == nxt.role:
            return None
        if not nxt.content.strip():
            return None
        return nxt, nxt_pieces

    @staticmethod
    def _short_answer(q_piece: _Piece, turn: Turn, pieces: list[_Piece]) -> bool:
        if not q_piece.question_only or len(pieces) != 1:
            return False
        piece = pieces[0]
        if piece.question_only:
            return False
        raw = turn.content.strip()
        if piece.informative and len(piece.text) <= SHORT_ANSWER:
            return True
        if YES_NO_RE.match(raw) and len(raw) <= SHORT_YES_NO_ANSWER:
            return True
        return False


def title_judge(session: Session) -> TitleJudge:
    """The contentless-title rule as the distiller applies it to ``session`` (its speakers left out)."""
    return _Context(session).judge


class _Context:
    """Per-session state: names, dates, and the helpers that build drafts."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.session_when = parse_when(session.started_at)
        names: dict[str, None] = {}
        caps: dict[str, None] = {}
        for t in session.turns:
            if t.name:
                names[t.name] = None
                for part in t.name.split():
                    caps[part] = None
            mid_sentence_caps(t.content, caps)
        self.names = names
        self.name_keys = {n.lower() for n in names} | {p.lower() for n in names for p in n.split()}
        self.known_caps = caps
        parts = sorted({p for n in names for p in n.split() if len(p) >= 2}, key=lambda x: (-len(x), x))
        self.name_re = re.compile(r"\b(?:" + "|".join(map(re.escape, parts)) + r")\b") if parts else None
        self._when_cache: dict[str, datetime | None] = {}
        self.judge = TitleJudge(self.name_keys, caps)
        self._position = {t.id: i for i, t in enumerate(session.turns)}

    def when(self, turn: Turn) -> datetime | None:
        if turn.timestamp:
            if turn.timestamp not in self._when_cache:
                self._when_cache[turn.timestamp] = parse_when(turn.timestamp)
            got = self._when_cache[turn.timestamp]
            if got is not None:
                return got
        return self.session_when

    def speaker(self, turn: Turn) -> str:
        return turn.name or turn.role or "user"

    # -- analysis -------------------------------------------------------------------------

    def _segments(self, text: str) -> list[str]:
        if len(text) <= LONG_TURN:
            return [text]
        paras = [p for p in _PARA_SPLIT_RE.split(text) if p.strip()]
        # Re-join paragraphs inside a code fence.
        joined: list[str] = []
        open_fence = False
        for p in paras:
            if open_fence and joined:
                joined[-1] += "\n\n" + p
            else:
                joined.append(p)
            if p.count(_FENCE) % 2 == 1:
                open_fence = not open_fence
        # A heading or a lead-in ending with ":" belongs with what follows; tiny ones merge.
        groups: list[str] = []
        carry = ""
        for p in joined:
            cur = (carry + "\n\n" + p) if carry else p
            stripped = cur.rstrip()
            if stripped.endswith((":", "：")) or stripped.lstrip().startswith("#") and "\n" not in stripped or len(stripped) < 120:
                carry = cur
                continue
            groups.append(cur)
            carry = ""
        if carry:
            if groups and len(carry) < 120:
                groups[-1] += "\n\n" + carry
            else:
                groups.append(carry)
        if len(groups) == 1 and len(groups[0]) > 2 * LONG_TURN and _FENCE not in groups[0]:
            groups = self._chunk_sentences(groups[0])
        return groups or [text]

    @staticmethod
    def _chunk_sentences(text: str) -> list[str]:
        out: list[str] = []
        cur = ""
        for line in text.split("\n"):
            for s in split_sentences(line):
                if cur and len(cur) + len(s) > 500:
                    out.append(cur)
                    cur = ""
                cur = f"{cur} {s}" if cur else s
        if cur:
            out.append(cur)
        return out

    def pieces(self, turn: Turn) -> list[_Piece]:
        when = self.when(turn)
        return [self._piece(seg, when) for seg in self._segments(turn.content.strip())]

    def _piece(self, text: str, when: datetime | None) -> _Piece:
        kept_lines: list[str] = []
        sentences: list[str] = []
        in_fence = False
        for line in text.split("\n"):
            if in_fence or line.lstrip().startswith(_FENCE):
                kept_lines.append(line)
                sentences.append(line)
                if line.count(_FENCE) % 2 == 1:
                    in_fence = not in_fence
                continue
            if not line.strip():
                continue
            parts = split_sentences(line)
            kept = [s for s in parts if not _is_filler(s, self.name_re)]
            if not kept:
                continue
            if len(kept) == len(parts):
                kept_lines.append(line.rstrip())  # verbatim
            else:
                joined = kept[0]
                for s in kept[1:]:
                    joined += s if joined[-1] in _CJK_STOPS else " " + s
                prefix = line[: len(line) - len(line.lstrip())]
                kept_lines.append(prefix + joined)
            sentences.extend(kept)
        body = "\n".join(kept_lines).strip()
        if not body:
            return _Piece("", [], False, False, False, [], [], {})
        has_number = _DIGIT_RE.search(body) is not None
        entities = extract_entities(body, self.known_caps)
        named = [e for e in entities if e.lower() not in self.name_keys]
        notes = resolve_relative(body, when.date() if when else None)
        cues = CUES.counts(body)
        question_only = all(_QUESTION_END_RE.search(s) for s in sentences)
        if question_only:
            informative = bool(named or has_number or notes)
        else:
            cw = content_words(body, self.name_keys)
            cue = any(cues[k] for k in _STRONG_KEYS)
            informative = bool(named or has_number or notes or cue or cw >= 1)
        return _Piece(body, sentences, question_only, informative, has_number, entities, notes, cues)

    def _without_lead(self, piece: _Piece, ctype: str) -> _Piece:
        """``piece`` from its first sentence that says something: a lead that says nothing ("Let's
        go with it.", "Good to hear.") would otherwise open a decision's content and its injected
        line. Kept when nothing follows it, when it states the stance and nothing after does ("I
        love it."; "Let's go with it. We decided: …" loses its lead), when it negates, asks or is code."""
        sentences = piece.sentences
        last_stance = max((i for i, s in enumerate(sentences) if self._states(s, ctype)), default=-1)
        start = next((i for i, s in enumerate(sentences) if not self.judge.contentless(self._clean_title(s))), 0)
        rest = piece.text
        for i, sent in enumerate(sentences[:start]):
            if _FENCE in sent or negates(sent) or _QUESTION_END_RE.search(sent) or i == last_stance \
                    or not rest.startswith(sent):
                start = i
                break
            rest = rest[len(sent):].lstrip()
        return replace(piece, text=rest, sentences=sentences[start:]) if start else piece

    @staticmethod
    def _states(sentence: str, ctype: str, strong: bool = False) -> bool:
        """Whether ``sentence`` has a cue phrase of type ``ctype`` ("I love it.", "我们决定了。")."""
        cues = CUES.counts(sentence)
        return cues[f"{ctype}.strong"] + (0 if strong else cues[f"{ctype}.weak"]) > 0

    def excerpt(self, pieces: list[_Piece]) -> _Piece:
        """The opening sentences of a reply (about ``ANSWER_EXCERPT`` chars, ``…`` when cut)."""
        sentences: list[str] = []
        skipped = False
        for p in pieces:
            in_fence = False
            for sent in p.sentences:
                if in_fence or sent.lstrip().startswith(_FENCE):  # code stays in the reply's own card
                    skipped = True
                    if sent.count(_FENCE) % 2 == 1:
                        in_fence = not in_fence
                    continue
                sentences.append(sent)
        out = ""
        cut = skipped
        for sent in sentences:
            sent = _SPACE_RE.sub(" ", sent.replace("\n", " ")).strip()
            if not sent:
                continue
            if out and len(out) + 1 + len(sent) > ANSWER_EXCERPT:
                cut = True
                break
            if len(sent) > ANSWER_EXCERPT:  # (only as the first sentence)
                out = _cut_words(sent, ANSWER_EXCERPT)
                break
            out = sent if not out else out + ("" if out[-1] in _CJK_STOPS else " ") + sent
        if not out:
            return _Piece("", [], False, False, False, [], [], {})
        if cut and not out.endswith("\u2026"):
            out += " \u2026"
        src = [p for p in pieces if p.text]
        has_number = _DIGIT_RE.search(out) is not None
        entities = [e for p in src for e in p.entities if e in out]
        notes = [n for p in src for n in p.notes if n.split(" = ")[0] in out]
        named = [e for e in entities if e.lower() not in self.name_keys]
        cues = CUES.counts(out)
        informative = bool(named or has_number or notes or content_words(out, self.name_keys) >= 1)
        return _Piece(out, [out], False, informative, has_number, entities, notes, cues)

    # -- drafts ---------------------------------------------------------------------------

    def _clean_title(self, sentence: str) -> str:
        """``sentence`` without leading interjections, a vocative or markup, capitalised."""
        t = TITLE_PREFIX_RE.sub("", sentence.strip())
        # A leading vocative ("Caroline, ...").
        head, sep, rest = t.partition(",")
        if sep and head.strip().lower() in self.name_keys and rest.strip():
            t = rest.strip()
        t = t.lstrip("#*->` ").strip()
        if not t:
            t = sentence.strip()
        if t and t[0].islower():
            t = t[0].upper() + t[1:]
        return trim_title(t)

    def _title(self, turn: Turn, piece: _Piece, ctype: str) -> str:
        """The piece's first statement; when that says nothing ("Let's go with it."), the card's
        next sentence that does, else one of the turn it answers (see titles.py). A decision or
        preference names itself (see `_stance_title`)."""
        pick = next((s for s in piece.sentences if not _QUESTION_END_RE.search(s)), None)
        if pick is None:
            pick = piece.sentences[0] if piece.sentences else piece.text
        title = self._stance_title(piece, pick, ctype) if ctype in _STANCE_TYPES else self._clean_title(pick)
        if not self.judge.contentless(title):
            return title
        own = self.judge.first(self._candidates(piece.sentences))
        if own is not None:
            return _joined(title, own) if negates(title) else own
        answered = self._answered(turn)
        if answered is None:
            return title
        other = self.judge.first(self._candidates([s for p in self.pieces(answered) for s in p.sentences]))
        return title if other is None else _joined(title, other)  # the stance stays: "Let's not — …"

    def _stance_title(self, piece: _Piece, pick: str, ctype: str) -> str:
        """The decision or preference itself: a "no" is extended through the sentence that states
        the stance ("No npm please. I prefer pnpm over npm, always."), a label is dropped ("We
        decided: Kuzu …" → "Kuzu …"; the card's type is shown beside its title). No words are
        added (the title is indexed) and it stays a span of the content, said once when injected.
        Only after a "no": picking a later stance sentence otherwise cost LoCoMo dev evidence."""
        stance = pick
        if negates(pick) and not self._states(pick, ctype, strong=True):
            later = next((s for s in piece.sentences if self._states(s, ctype, strong=True)), None)
            start = piece.text.find(pick)
            end = piece.text.find(later) + len(later) if later is not None else -1
            if 0 <= start < end and end - start <= TITLE_MAX:
                stance = piece.text[start:end]
        label = _LABEL_RE.match(stance)
        if label and self._states(label.group(1), ctype) and not self.judge.contentless(stance[label.end():]):
            stance = stance[label.end():]
        elif len(stance) > TITLE_MAX:
            stance = self._without_scope(stance, ctype)
        return self._clean_title(stance)

    def _without_scope(self, stance: str, ctype: str) -> str:
        """A stance too long for a title without the scope that opens it ("For the session cache
        of the checkout service: we decided NOT to use Redis; use Postgres instead." → "We
        decided NOT to use Redis; use Postgres instead.", issue 35): cut at the end, the title
        kept the scope and lost what was chosen, and session start shows titles first. The
        scope stays in the content."""
        scope = _SCOPE_RE.match(stance)
        rest = stance[scope.end():] if scope else ""
        return rest if rest and len(rest) <= TITLE_MAX and self._states(rest, ctype, strong=True) else stance

    def _candidates(self, sentences: list[str]) -> list[str]:
        """Titles that sentences outside code fences would give."""
        return [self._clean_title(s) for s in sentences if _FENCE not in s]

    def _answered(self, turn: Turn) -> Turn | None:
        """The turn just before ``turn`` when another speaker said it: what ``turn`` replies to."""
        at = self._position.get(turn.id, 0)
        if at == 0:
            return None
        prev = self.session.turns[at - 1]
        if self.speaker(prev) == self.speaker(turn) or not prev.content.strip():
            return None
        return prev

    def make_draft(self, key: str, src: list[tuple[Turn, _Piece]], pair: bool = False) -> _Draft:
        first_turn = src[0][0]
        when = self.when(first_turn)
        date_txt = render_date(when.date()) if when else None
        notes = list(dict.fromkeys(n for _, p in src for n in p.notes))
        has_number = any(p.has_number for _, p in src)
        body = "\n".join(p.text or t.content.strip() for t, p in src)
        cues = (src[0][1].cues if len(src) == 1 else None) or CUES.counts(body)
        ctype = classify(body, has_number, bool(notes), cues)
        if ctype == "decision":  # (not preferences: on LoCoMo dev their leads hold answer words)
            src = [(first_turn, self._without_lead(src[0][1], ctype)), *src[1:]]
            body = "\n".join(p.text or t.content.strip() for t, p in src)
        heads = [f"{self.speaker(t)} ({date_txt})" if i == 0 and date_txt else self.speaker(t) for i, (t, _) in enumerate(src)]
        content = "\n".join(f"{head}: {p.text or t.content.strip()}" for head, (t, p) in zip(heads, src))
        ents = [e for _, p in src for e in p.entities]
        if notes:
            content += " [" + "; ".join(notes) + "]"
        # Title: the question's gist + the answer for a merged pair, else the gist.
        if len(src) == 2 and not (pair and not src[0][1].question_only):
            q_piece, a_piece = src[0][1], src[1][1]
            q_raw = q_piece.sentences[-1] if q_piece.sentences else q_piece.text
            q = trim_title(TITLE_PREFIX_RE.sub("", q_raw) or q_raw, 44)
            a = a_piece.text or src[1][0].content.strip()
            a = TITLE_PREFIX_RE.sub("", a) or a
            a = a[:1].upper() + a[1:]
            title = f"{q} \u2014 {trim_title(a, TITLE_MAX - len(q) - 3)}"
        else:
            title = self._title(first_turn, src[0][1], ctype)
        # Entities: the speakers that are names, then what the text names.
        entities: list[str] = []
        seen: set[str] = set()
        for turn, _ in src:
            if turn.name and turn.name.lower() not in _ROLE_ONLY and turn.name.lower() not in seen:
                seen.add(turn.name.lower())
                entities.append(turn.name)
        named: list[str] = []
        for e in ents:
            if e.lower() not in seen:
                seen.add(e.lower())
                entities.append(e)
                if e.lower() not in self.name_keys:
                    named.append(e)
        kws = keywords(body)
        tags: list[str] = [ctype]
        for cand in [e.lower() for e in named if len(e) <= 30 and " " not in e and "/" not in e] + kws:
            if cand not in tags and cand not in self.name_keys and cand not in STOPWORDS:
                tags.append(cand)
            if len(tags) >= 6:
                break
        if is_action_item(body):  # beside the words it is filed under, not instead of one (issue 35)
            tags.insert(1, TODO_TAG)
        importance = _BASE_IMPORTANCE.get(ctype, 0.5)
        importance += min(0.15, 0.05 * len(named))
        if has_number:
            importance += 0.05
        if cues["important"]:
            importance += 0.15
        importance = round(min(1.0, max(0.0, importance)), 2)
        d = _Draft(
            key=key, title=title or trim_title(body), content=content, type=ctype, tags=tags,
            entities=entities, importance=importance, turn_ids=[t.id for t, _ in src],
            valid_from=iso_of(when), body=body, cues=cues,
        )
        d.ent_keys = {e.lower() for e in named}
        d.kw_keys = set(kws)
        return d


# -- links --------------------------------------------------------------------------------

_WINDOW = 60  # how far back a cause / dependency target is looked for
_SIMILAR_PER_CARD = 3


def _relatedness(a: _Draft, b: _Draft) -> int:
    return 2 * len(a.ent_keys & b.ent_keys) + len(a.kw_keys & b.kw_keys)


def _most_related_earlier(drafts: list[_Draft], i: int) -> int | None:
    if i == 0:
        return None
    best, best_score = i - 1, 0
    for j in range(i - 1, max(-1, i - 1 - _WINDOW), -1):
        s = _relatedness(drafts[i], drafts[j])
        if s > best_score:
            best, best_score = j, s
    return best


def _links(drafts: list[_Draft], ctx: _Context) -> list[LinkDraft]:
    links: list[LinkDraft] = []
    seen: set[tuple[str, str, str]] = set()

    def add(src: str, dst: str, rel: str, weight: float = 1.0) -> None:
        if src == dst:
            return
        k = (src, dst, rel)
        if k in seen or (rel == "SIMILAR_TO" and (dst, src, rel) in seen):
            return
        seen.add(k)
        links.append(LinkDraft(src=src, dst=dst, rel=rel, weight=round(weight, 3)))

    for i, d in enumerate(drafts):
        cause_fwd = d.cues["cause_fwd"] > 0
        cause_is = d.cues["cause_is"] > 0
        cause_rev = d.cues["cause_rev"] > 0
        depends = d.cues["depends"] > d.cues["depends_neg"]
        if cause_fwd or cause_is or cause_rev or depends:
            j = _most_related_earlier(drafts, i)
            if j is not None:
                other = drafts[j].key
                if cause_fwd:
                    add(d.key, other, "CAUSED_BY")
                elif cause_is or cause_rev:
                    add(other, d.key, "CAUSED_BY")
                if depends:
                    add(d.key, other, "DEPENDS_ON")

    # SIMILAR_TO: shared entities (>= 2) or strong keyword overlap, via inverted indexes.
    ent_index: dict[str, list[int]] = {}
    kw_index: dict[str, list[int]] = {}
    for i, d in enumerate(drafts):
        ent_counts: dict[int, int] = {}
        for e in d.ent_keys:
            for j in ent_index.get(e, ()):
                ent_counts[j] = ent_counts.get(j, 0) + 1
        kw_counts: dict[int, int] = {}
        for w in d.kw_keys:
            posting = kw_index.get(w, ())
            if len(posting) > 50:  # too common to mean anything
                continue
            for j in posting:
                kw_counts[j] = kw_counts.get(j, 0) + 1
        cands: list[tuple[float, int]] = []
        for j, c in ent_counts.items():
            if c >= 2:
                cands.append((c + 0.5 * kw_counts.get(j, 0), j))
        for j, c in kw_counts.items():
            if ent_counts.get(j, 0) >= 2 or c < 4:
                continue
            union = len(d.kw_keys | drafts[j].kw_keys) or 1
            if c / union >= 0.5:
                cands.append((c * 0.5, j))
        cands.sort(key=lambda x: (-x[0], -x[1]))
        for score, j in cands[:_SIMILAR_PER_CARD]:
            add(d.key, drafts[j].key, "SIMILAR_TO", min(1.0, score / 4))
        for e in sorted(d.ent_keys):
            ent_index.setdefault(e, []).append(i)
        for w in sorted(d.kw_keys):
            kw_index.setdefault(w, []).append(i)
    return links
