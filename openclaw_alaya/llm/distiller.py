"""The `openai` distiller: a chat model turns a session's new turns into cards, links and an
update of the integrated summary, in one call per chunk.

- prompts are jinja2 templates (`templates/distill_system.md.j2`, `distill_user.md.j2`);
  `distill.prompt_template` names a folder holding either of them, or one file that replaces
  the user prompt;
- turns are numbered 1…n in the prompt (short, whatever the real ids) and mapped back;
- the answer is parsed robustly (`<think>` blocks, code fences, text around the JSON),
  validated with pydantic, and on failure repaired once by showing the model its error;
- sessions shorter than `distill.min_session_tokens` are left to the heuristic distiller, and
  so is any session whose model call fails (endpoint down, bad output twice): nothing is lost;
- long sessions are split into chunks of about `distill.chunk_tokens`;
- tokens and calls are counted in `stats` (the engine adds them to `state/llm_usage.json`,
  shown by `alaya status`).
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel, Field, ValidationError, field_validator

from .. import clock
from ..errors import ConfigError, InputError
from ..models import CARD_TYPES, CardDraft, DistillResult, LinkDraft, Session, trust_class
from ..safety.invisible import strip_invisible
from ..store.fsutil import atomic_write
from ..text import estimate_tokens
from .client import LLMResponseError, LLMUnavailable, OpenAIClient, remaining
from .summaries import LLM_SUMMARY_FILE, read_llm_summaries

_TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
SYSTEM_TEMPLATE = "distill_system.md.j2"
USER_TEMPLATE = "distill_user.md.j2"
_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.S | re.I)
_OPEN_THINK = re.compile(r"^\s*<think(?:ing)?>.*?(?=\{)", re.S | re.I)  # never closed: drop up to the JSON
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_TYPE_NAME = re.compile(r"[a-z][a-z_]{0,23}")
_SUMMARY_CHARS = 600


# --- output schema ------------------------------------------------------------------------------


class LLMCard(BaseModel):
    title: str = Field(min_length=1, max_length=300)
    content: str = Field(min_length=1, max_length=8000)
    type: str = "fact"
    tags: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    importance: float = 0.5
    turns: list[int | str] = Field(default_factory=list)
    valid_from: str | None = None

    @field_validator("importance", mode="before")
    @classmethod
    def _clamp(cls, value: Any) -> float:
        try:
            return min(1.0, max(0.0, float(value)))
        except (TypeError, ValueError):
            return 0.5

    @field_validator("tags", "entities", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> list[str]:
        if isinstance(value, str):
            value = [value]
        return [str(v).strip()[:80] for v in value or [] if str(v).strip()][:12]


class LLMLink(BaseModel):
    src: int | str
    dst: int | str
    rel: str
    reason: str | None = None  # why the model links them; kept on the edge

    @field_validator("reason", mode="before")
    @classmethod
    def _line(cls, value: Any) -> str | None:
        return " ".join(str(value).split())[:300] or None if value is not None else None


class LLMSummary(BaseModel):
    active_areas: list[str] = Field(default_factory=list)
    key_topics: list[str] = Field(default_factory=list)
    recent: str = ""

    @field_validator("active_areas", "key_topics", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> list[str]:
        if isinstance(value, str):
            value = [value]
        return [str(v).strip()[:80] for v in value or [] if str(v).strip()][:8]


class LLMOutput(BaseModel):
    cards: list[LLMCard]  # required: an answer without it is not an answer with no cards
    links: list[LLMLink] = Field(default_factory=list)
    summary: LLMSummary | None = None
    session_summary: str | None = None  # one line about this session (the Session node's summary)


# --- parsing ------------------------------------------------------------------------------------


def extract_json(text: str) -> Any:
    """The JSON object of a model's answer: `<think>` blocks and code fences removed, text
    before and after ignored, the object with a `cards` key preferred. When no object with
    `cards` parses as it is, the JSON slips models make (a trailing comma, single quotes, a
    missing bracket) are repaired; without that, a trailing comma made an inner card the
    answer and the session was distilled into nothing. Raises ValueError when there is none."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the answer is empty")
    cleaned = _OPEN_THINK.sub("", _THINK.sub("", text))
    candidates = [m.group(1) for m in _FENCE.finditer(cleaned)] + [cleaned]
    decoder = json.JSONDecoder()
    first: dict[str, Any] | None = None
    for candidate in candidates:
        for match in re.finditer(r"\{", candidate):
            try:
                value, _end = decoder.raw_decode(candidate, match.start())
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                if "cards" in value:
                    return value
                first = first or value
    repaired = _repaired(candidates)
    if repaired is not None:
        return repaired
    if first is not None:
        return first  # validation then says what is missing, and the model is asked to repair
    raise ValueError("no JSON object found in the answer")


def _repaired(candidates: list[str]) -> dict[str, Any] | None:
    """The first candidate that json-repair turns into an object with a `cards` key."""
    import json_repair  # only an answer that does not parse pays for it

    for candidate in candidates:
        start = candidate.find("{")
        if start < 0:
            continue
        value = json_repair.loads(candidate[start:])
        if isinstance(value, dict) and "cards" in value:
            return value
    return None


def parse_output(text: str) -> LLMOutput:
    """Validated model output; ValueError (with the reason) when it is not usable."""
    data = extract_json(text)
    try:
        return LLMOutput.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise ValueError(f"{where}: {error['msg']}") from None


def message_text(body: dict[str, Any]) -> str:
    """The assistant's text from a chat completion; LLMResponseError when there is none."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices:
        raise LLMResponseError("chat: the answer has no choices")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str) or not content.strip():
        raise LLMResponseError("chat: the answer has no text")
    return content


# --- the distiller ------------------------------------------------------------------------------


class LLMDistiller:
    name = "openai"

    def __init__(self, config: Any, *, transport: Any = None) -> None:
        cfg = config.distill
        self.config = cfg
        self.model = cfg.model
        self.client = OpenAIClient(
            cfg.base_url, api_key_env=cfg.api_key_env, timeout=cfg.timeout_seconds,
            max_retries=cfg.max_retries, max_concurrency=cfg.max_concurrency, transport=transport, what="distill",
        )
        self.env = _environment(cfg.prompt_template)
        self.state_dir: Path | None = None
        self.stats: dict[str, int] = {
            "sessions": 0, "llm_sessions": 0, "chunks": 0, "repairs": 0, "fallbacks": 0, "short_sessions": 0,
            "prompt_tokens_est": 0,
        }
        self._lock = threading.Lock()
        self._fallback = None

    def bind(self, state_dir: Path) -> None:
        """The integrated summary is kept in, and the endpoint-down marker shared through, `state/`."""
        self.state_dir = state_dir
        self.client.bind(state_dir)

    # --- distill --------------------------------------------------------------------------

    def distill(self, session: Session, start: int = 0) -> DistillResult:
        turns = session.turns[start:]
        self._count("sessions")
        if not turns:
            return DistillResult()
        if sum(estimate_tokens(t.content) for t in turns) < self.config.min_session_tokens:
            self._count("short_sessions")
            return self.heuristic().distill(session, start)
        try:
            result = self._distill_llm(session, start)
        except (LLMUnavailable, LLMResponseError, ValueError) as exc:
            left = remaining()
            if isinstance(exc, LLMUnavailable) and left is not None and left <= 0.5:
                raise  # out of time on a hook's path, not down: leave the session for introspect
            self._count("fallbacks")
            return self.heuristic().distill(session, start)
        self._count("llm_sessions")
        return result

    def heuristic(self):
        if self._fallback is None:
            from ..distill import HeuristicDistiller

            self._fallback = HeuristicDistiller()
        return self._fallback

    def _distill_llm(self, session: Session, start: int) -> DistillResult:
        chunks = self._chunks(session, start)
        summary = self._summary(session.agent_id)
        cards: list[CardDraft] = []
        links: list[LinkDraft] = []
        new_summary: LLMSummary | None = None
        session_line: str | None = None
        for part, chunk in enumerate(chunks, 1):
            last = part == len(chunks)
            output = self._call(session, chunk, part if len(chunks) > 1 else None, summary if last else None, last)
            offset = len(cards)
            numbered = {n: turn.id for n, turn in chunk}
            for i, card in enumerate(output.cards[: self.config.max_cards_per_session]):
                turn_ids = [numbered[n] for n in _turn_numbers(card.turns) if n in numbered]
                turn_ids = list(dict.fromkeys(turn_ids)) or [turn.id for _, turn in chunk]
                kind = card.type.strip().lower()
                cards.append(CardDraft(
                    key=f"llm:{turn_ids[0]}:{offset + i}",
                    title=" ".join(card.title.split())[:160],
                    content=card.content.strip(),
                    type=kind if kind in CARD_TYPES or _TYPE_NAME.fullmatch(kind) else "fact",
                    tags=card.tags,
                    entities=card.entities,
                    importance=card.importance,
                    turn_ids=turn_ids,
                    valid_from=_date(card.valid_from) or _date(session.started_at),
                ))
            count = len(output.cards[: self.config.max_cards_per_session])
            for link in output.links:
                src, dst = _index(link.src, count), _index(link.dst, count)
                rel = _relation(link.rel)
                if src is not None and dst is not None and src != dst and rel:
                    links.append(LinkDraft(src=cards[offset + src].key, dst=cards[offset + dst].key, rel=rel,
                                           reason=link.reason))
            if isinstance(output.session_summary, str) and output.session_summary.strip():
                session_line = _one_line(output.session_summary)[:300]  # the last chunk's, having read it all
            if last and output.summary is not None:
                new_summary = output.summary
        # the summary is injected on its own: never rewritten from what an untrusted sender said
        trusted = all(trust_class(turn.origin) == "injectable" for chunk in chunks for _, turn in chunk)
        if new_summary is not None and trusted:
            self._store_summary(session.agent_id, new_summary)
        return DistillResult(cards=cards[: self.config.max_cards_per_session], links=links, summary=session_line)

    def _call(self, session: Session, chunk: list[tuple[int, Any]], part: int | None, summary: str | None, want_summary: bool) -> LLMOutput:
        messages = self.messages(session, chunk, part, summary, want_summary)
        self._count("chunks")
        text = self._chat(messages)
        try:
            return parse_output(text)
        except ValueError as exc:
            self._count("repairs")
            repair = messages + [
                {"role": "assistant", "content": text[:4000]},
                {"role": "user", "content": f"That was not valid ({exc}). Reply with the corrected JSON object only."},
            ]
            return parse_output(self._chat(repair))

    def _chat(self, messages: list[dict[str, str]]) -> str:
        with self._lock:
            self.stats["prompt_tokens_est"] += sum(estimate_tokens(m["content"]) for m in messages)
        body = self.client.post(
            "chat/completions",
            {"model": self.model, "messages": messages, "temperature": 0, "response_format": {"type": "json_object"}},
        )
        return message_text(body)

    def messages(self, session: Session, chunk, part, summary, want_summary) -> list[dict[str, str]]:
        system = self.env.get_template(SYSTEM_TEMPLATE).render(
            max_cards=self.config.max_cards_per_session, want_summary=want_summary)
        user = self.env.get_template(USER_TEMPLATE).render(
            session_id=session.id, date=_date(session.started_at), part=part, summary=summary,
            turns=[{"n": n, "speaker": _speaker(t), "text": _one_line(t.content)} for n, t in chunk],
        )
        return [{"role": "system", "content": system.strip()}, {"role": "user", "content": user.strip()}]

    def _chunks(self, session: Session, start: int) -> list[list[tuple[int, Any]]]:
        chunks: list[list[tuple[int, Any]]] = [[]]
        size = 0
        for n, turn in enumerate(session.turns[start:], 1):
            cost = estimate_tokens(turn.content) + 3
            if chunks[-1] and size + cost > self.config.chunk_tokens:
                chunks.append([])
                size = 0
            chunks[-1].append((n, turn))
            size += cost
        return chunks

    # --- judging (resolver) -----------------------------------------------------------------

    def judge(self, pairs: list[tuple[str, str]]) -> list[str] | None:
        """Verdicts ("duplicate" | "contradicts" | "unrelated") for (older, newer) card texts;
        None when the model cannot be asked or answers badly (the rules decide then)."""
        if not pairs:
            return []
        system = self.env.get_template("resolve_system.md.j2").render().strip()
        lines = [f"{i} A: {_clip(a)}\n{i} B: {_clip(b)}" for i, (a, b) in enumerate(pairs, 1)]
        messages = [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]
        try:
            data = extract_json(self._chat(messages))
        except (LLMUnavailable, LLMResponseError, ValueError):
            return None
        verdicts = data.get("verdicts") if isinstance(data, dict) else None
        if not isinstance(verdicts, list) or len(verdicts) != len(pairs):
            return None
        allowed = {"duplicate", "contradicts", "unrelated"}
        return [v if isinstance(v, str) and v in allowed else "unrelated" for v in (str(x).lower().strip() for x in verdicts)]

    # --- integrated summary ---------------------------------------------------------------

    def _summary_path(self) -> Path | None:
        return self.state_dir / LLM_SUMMARY_FILE if self.state_dir else None

    def _summary(self, scope: str) -> str | None:
        data = read_llm_summaries(self.state_dir).get(scope) if self.state_dir else None
        if not data:
            return None
        return json.dumps({k: data.get(k) for k in ("active_areas", "key_topics", "recent")}, ensure_ascii=False)[:_SUMMARY_CHARS]

    def _store_summary(self, scope: str, summary: LLMSummary) -> None:
        path = self._summary_path()
        if path is None:
            return
        data = read_llm_summaries(self.state_dir)
        data[scope] = {**summary.model_dump(), "updated_at": clock.now().astimezone().isoformat(timespec="seconds")}
        try:
            atomic_write(path, json.dumps(data, ensure_ascii=False))
        except OSError:
            pass

    def _count(self, key: str) -> None:
        with self._lock:
            self.stats[key] = self.stats.get(key, 0) + 1


def _environment(override: str | None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = []
    if override:
        path = Path(override).expanduser()
        if path.is_dir():
            loaders.append(jinja2.FileSystemLoader(str(path)))
        elif path.is_file():
            loaders.append(jinja2.DictLoader({USER_TEMPLATE: path.read_text(encoding="utf-8")}))
        else:
            raise ConfigError(f"distill.prompt_template: {path} is neither a template file nor a folder")
    loaders.append(jinja2.FileSystemLoader(str(_TEMPLATES)))
    return jinja2.Environment(loader=jinja2.ChoiceLoader(loaders), autoescape=False, keep_trailing_newline=False)


def _speaker(turn: Any) -> str:
    return (turn.name or turn.role or "user").strip()[:40]


def _date(value: str | None) -> str | None:
    if not value:
        return None
    match = re.match(r"\d{4}-\d{2}-\d{2}", str(value).strip())
    return match.group(0) if match else None


def _turn_numbers(values: list[int | str]) -> list[int]:
    out = []
    for value in values:
        try:
            out.append(int(str(value).strip().lstrip("#t")))
        except ValueError:
            continue
    return out


def _index(value: int | str, count: int) -> int | None:
    try:
        i = int(value)
    except (TypeError, ValueError):
        return None
    return i if 0 <= i < count else None


def _relation(name: str) -> str | None:
    from ..models import normalise_relation

    try:
        return normalise_relation(name)
    except InputError:
        return None


def _one_line(text: str) -> str:
    """Text for a prompt: one line, without the characters that display as nothing (they can
    hide instructions to the model)."""
    return " ".join(strip_invisible(text).split())


def _clip(text: str, limit: int = 400) -> str:
    text = _one_line(text)
    return text if len(text) <= limit else text[:limit] + "…"
