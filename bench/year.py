"""A simulated year of use (issue 31, must-show 1 and 2): does what the owner said once stay findable?

    .venv/bin/python bench/year.py [--sessions 300] [--days 365] [--tick-days 1] [--seed 31] [--json] [--keep DIR]

A fresh data directory with the default, offline configuration (heuristic distiller, hash
embedder) lives through `--days` days of OpenClaw use, through the Python API in process, each
thing at its simulated time (`ALAYA_NOW`, so every memory "now" moves):

- **sessions** (`--sessions`, spread over the year, a few turns each), each ingested and
  distilled as `alaya hook session-end` does: in the first month the owner states the facts,
  preferences and decisions of `FACTS` once each, among chit-chat; the rest of the year is
  chit-chat, tool-ish agent sessions (test runs, deploys, log reads) and topics that come back
  (the same services, weeks apart);
- **the scheduled maintenance**, as the default `cron.jobs` says (`introspect` every 4 hours,
  maintenance/cron.py): `cron.run_once` is called at 09:00 every `--tick-days` days (1: a machine
  that is on each morning; a missed 4-hour tick is caught up once, as on a laptop that sleeps),
  so introspect runs once per tick. Measured on 2 shared cores: an introspect takes 2-3 s at
  ~100 cards, so the schedule's own six runs a day would be ~2 hours for a year and even a daily
  tick ~15-20 minutes: `--tick-days 7` keeps a run to minutes, and the report gives the time
  per step so what is slow can be seen. The nightly `backup` job is off here (it would only add
  tarballs to the disk figures);
- **the agent recalling** half of the facts (`recalled` ones) now and then between checkpoints,
  as a session about them would; the other half is never asked for until the probes;
- **probes** at +30, +90, +181 and +365 days: each fact's question, asked of a copy of the data
  directory (so probing is no use the store sees), top 5. A hit is a returned card citing the
  fact's session and turn (bench/ranking.py's `rank_of`).

Printed per checkpoint: the share of facts recalled within the top 5 (all, recalled in between,
never recalled), cards per tier, cards written and forgotten (by the forget step's reasons),
the bytes on disk per layer (L1 also once the LanceDB versions the simulated hours would
have let expire are gone) and a recall process's peak RSS (`tier_costs`: the one place that
measures what tiering saves), and what introspect cost. The knowledge-update section
(tests/fixtures/year/pool_size.json: the billing DB pool size changed three times) asks at the
end what the value is, what it was before, and what the session-start block says; then
`alaya metrics --json` on the final store (must-show 3) is printed with the report, and
`--keep DIR` keeps that store.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from ranking import rank_of  # noqa: E402

from openclaw_alaya import Alaya  # noqa: E402
from openclaw_alaya.bridge.inject import StartRequest, build  # noqa: E402
from openclaw_alaya.config import Config  # noqa: E402
from openclaw_alaya.maintenance import cron  # noqa: E402
from openclaw_alaya.maintenance.status import details  # noqa: E402
from openclaw_alaya.models import Session, Turn  # noqa: E402

START = datetime(2026, 1, 1, 8, tzinfo=timezone.utc)
CHECKPOINTS = (30, 90, 181, 365)
TICK_HOUR = 9  # the machine is on: cron ticks at this hour every --tick-days days
TOP_K = 5
AGENT = "main"
OWNER = "Dana"
POOL = json.loads((ROOT / "tests" / "fixtures" / "year" / "pool_size.json").read_text())

# (what the owner says once, in the first month; the question asked about it later)
FACTS: list[tuple[str, str]] = [
    ("My favourite editor is Helix, I switched from Vim last year.", "which editor do I like best?"),
    ("Our staging cluster runs in Frankfurt on three Hetzner machines.", "where does the staging cluster run?"),
    ("Decision: we use PostgreSQL 16 for the ledger service, not MySQL.", "which database did we pick for the ledger service?"),
    ("I prefer tabs over spaces in Go code, and gofmt settles the rest.", "tabs or spaces in Go code?"),
    ("My daughter Mira has her violin lessons every Tuesday at five.", "when are Mira's violin lessons?"),
    ("We release the mobile app every second Thursday, never on Fridays.", "when do we release the mobile app?"),
    ("The on-call rotation for payments is Ivo, then Sana, then me.", "who is on the payments on-call rotation?"),
    ("I am allergic to peanuts, keep that in mind for team lunches.", "what food allergy do I have?"),
    ("Decision: the design system moves from Sass to Tailwind this spring.", "what is the design system moving to?"),
    ("Our CI runs on GitHub Actions with self-hosted runners for the GPU jobs.", "where do the GPU CI jobs run?"),
    ("I like my code reviews short: three comments at most, the rest in a call.", "how do I like my code reviews?"),
    ("The company offsite is in Lisbon in the first week of June.", "where is the company offsite?"),
    ("Our error budget for the checkout API is 0.1 percent per month.", "what is the checkout API error budget?"),
    ("My manager is Priya Raman, we meet on Mondays at ten.", "who is my manager?"),
    ("Decision: feature flags live in Unleash, the homegrown flag table goes away.", "where do feature flags live?"),
    ("I never schedule meetings before 9:30, mornings are for deep work.", "when do I avoid meetings?"),
    ("The analytics warehouse is BigQuery in the europe-west3 region.", "which warehouse do we use for analytics?"),
    ("My laptop is a ThinkPad X1 Carbon running Fedora.", "what laptop do I use?"),
    ("We keep secrets in Vault, rotated every 90 days by a cron job.", "how often are secrets rotated?"),
    ("Decision: the public API stays on REST, GraphQL was rejected for now.", "did we choose REST or GraphQL for the public API?"),
]

CHAT = [
    ("user", "Good morning! Coffee first, then the backlog."),
    ("assistant", "Good morning. Enjoy the coffee, I'm here when you're ready."),
    ("user", "Thanks, that's great!"),
    ("assistant", "You're welcome."),
    ("user", "Long day, talk tomorrow."),
    ("assistant", "Sounds good, see you tomorrow."),
    ("user", "Haha, fair enough."),
    ("user", "The weather is awful today, it's raining again."),
    ("assistant", "Sorry to hear that. A good day to stay in and write code."),
]
SERVICES = ["checkout", "billing", "search", "notifications", "auth", "reporting", "inventory", "gateway"]
TOOLS = [
    "Ran `pytest -q` in {s}: {n} passed, {m} skipped in {t} seconds.",
    "Deployed {s} build {n} to staging; health checks are green after {t} seconds.",
    "The {s} logs show {n} timeouts in the last hour, all from the same upstream host.",
    "Opened a pull request for {s} that bumps the HTTP client to version {m}.{n}.",
    "Profiled {s}: the slowest endpoint spends {t} ms in JSON serialisation.",
]
TOPICS = [
    "The {s} service needs a retry budget before the next traffic peak.",
    "Can we split the {s} dashboard into latency and error panels?",
    "The {s} migration is blocked on the schema review.",
    "We should add a canary stage to the {s} pipeline.",
]


@dataclass
class Fact:
    text: str
    question: str
    session_id: str = ""
    turn_id: str = ""
    recalled: bool = False  # asked for now and then between checkpoints


@dataclass
class Year:
    memory: Alaya
    facts: list[Fact]
    written: int = 0  # cards distilled
    sessions: int = 0
    introspects: int = 0
    introspect_seconds: float = 0.0
    step_seconds: Counter = field(default_factory=Counter)
    forgotten: Counter = field(default_factory=Counter)
    interim_recalls: int = 0
    checkpoints: list[dict[str, Any]] = field(default_factory=list)


def at(day: float, hour: float = 0) -> datetime:
    return START + timedelta(days=day, hours=hour)


def use_clock(moment: datetime) -> None:
    os.environ["ALAYA_NOW"] = moment.isoformat()


def session(session_id: str, moment: datetime, title: str, turns: list[tuple[str, str]]) -> Session:
    return Session(id=session_id, agent_id=AGENT, started_at=moment.isoformat(), title=title,
                   turns=[Turn(id=f"t{i}", role=role, name=OWNER if role == "user" else None, content=text)
                          for i, (role, text) in enumerate(turns, 1)])


def plan(n_sessions: int, days: int, rng: random.Random) -> tuple[list[tuple[datetime, Session]], list[Fact]]:
    """The year's sessions, in time order, and the facts with where they were said."""
    facts = [Fact(text, question, recalled=i % 2 == 0) for i, (text, question) in enumerate(FACTS)]
    planned: list[tuple[datetime, Session]] = []
    first_month = min(30, days)
    for i, fact in enumerate(facts):  # one fact per session, among chit-chat, in the first month
        moment = at(1 + i * (first_month - 2) / len(facts), 10 + rng.random() * 8)
        turns = [rng.choice(CHAT[:2]), ("user", fact.text), ("assistant", "Noted, I'll keep that in mind."),
                 rng.choice(CHAT[2:])]
        fact.session_id, fact.turn_id = f"fact-{i:02d}", "t2"
        planned.append((moment, session(fact.session_id, moment, "Getting to know you", turns)))
    for i, spec in enumerate(POOL["sessions"], 1):  # the knowledge update: one setting, four values
        if spec["day"] < days:
            moment = at(spec["day"], 10)
            planned.append((moment, session(f"pool-{i}", moment, spec["title"], [tuple(t) for t in spec["turns"]])))
    for i in range(max(n_sessions - len(planned), 0)):
        moment = at(rng.random() * days, 8 + rng.random() * 12)
        service = rng.choice(SERVICES)
        kind = rng.choice(("chat", "tool", "tool", "topic"))
        numbers = {"s": service, "n": rng.randint(2, 400), "m": rng.randint(1, 9), "t": rng.randint(3, 90)}
        if kind == "chat":
            turns = rng.sample(CHAT, 3)
        elif kind == "tool":
            turns = [("user", f"Check on {service} for me."), ("assistant", rng.choice(TOOLS).format(**numbers)),
                     ("user", "Thanks."), ("assistant", rng.choice(TOOLS).format(**numbers))]
        else:
            turns = [("user", rng.choice(TOPICS).format(**numbers)), ("assistant", rng.choice(TOOLS).format(**numbers)),
                     rng.choice(CHAT)]
        planned.append((moment, session(f"s-{i:03d}", moment, f"{kind}: {service}", turns)))
    planned.sort(key=lambda p: p[0])
    return planned, facts


def tick(year: Year, moment: datetime) -> None:
    """One `alaya cron run --once` at `moment`: introspect when the schedule says it is due."""
    use_clock(moment)
    result = cron.run_once(year.memory, now=moment)
    for entry in result["ran"]:
        year.introspects += 1
        year.introspect_seconds += entry["seconds"]
        if not entry["ok"]:
            print(f"year: introspect failed at {moment:%Y-%m-%d %H:%M}: {entry['error']}", file=sys.stderr)
            continue
        for step in entry["result"]["steps"]:
            year.step_seconds[step["step"]] += step["seconds"]
            if step["step"] == "forget" and step.get("ok"):
                count_forgotten(year.forgotten, step.get("result") or {})


def count_forgotten(counts: Counter, result: dict[str, Any]) -> None:
    """The forget step's cards by reason, whichever shape its report has (a count, a list of
    cards with a `reason`, or a {reason: n} map)."""
    by_reason = result.get("by_reason") or result.get("reasons")
    if isinstance(by_reason, dict):
        counts.update({str(k): int(v) for k, v in by_reason.items() if isinstance(v, (int, float))})
        return
    for key in ("forgotten", "cards", "removed"):
        value = result.get(key)
        if isinstance(value, list):
            counts.update(str(c.get("reason", "unstated")) if isinstance(c, dict) else "unstated" for c in value)
            return
        if isinstance(value, int) and value:
            counts["unstated"] += value
            return


def probe(year: Year, day: int, workdir: Path) -> dict[str, Any]:
    """The checkpoint's figures, the questions asked of a copy (probing is no use of the store)."""
    copy = workdir / f"probe-{day}"
    shutil.copytree(year.memory.dirs.root, copy)
    moment = at(day, 12)
    use_clock(moment)
    memory = Alaya(copy)
    ranks = {}
    for fact in year.facts:
        nodes = memory.recall(fact.question, top_k=TOP_K, scope=AGENT, now=moment).nodes
        ranks[fact.question] = rank_of(nodes, fact.session_id, {fact.turn_id})
    found = details(memory)
    costs = tier_costs(memory, copy, found["layers"])
    shutil.rmtree(copy)

    def share(group: list[Fact]) -> float:
        return sum(ranks[f.question] is not None for f in group) / len(group) if group else 0.0

    tiers = found["tiers"]
    return {
        "day": day,
        "top5_all": share(year.facts),
        "top5_recalled_between": share([f for f in year.facts if f.recalled]),
        "top5_never_recalled": share([f for f in year.facts if not f.recalled]),
        "missed": [q for q, r in ranks.items() if r is None],
        "tiers": tiers,
        "cards": sum(tiers.values()),
        "written": year.written,
        "forgotten_by_reason": dict(year.forgotten),
        **costs,
    }


def tier_costs(memory: Alaya, root: Path, layers: dict[str, Any]) -> dict[str, Any]:
    """What the store costs now: bytes per layer, a recall process's peak RSS, and tiering's own
    account (`maintenance.temperature.footprint`: cards per tier, L1 rows, cards without one)."""
    from openclaw_alaya.maintenance import temperature

    with memory.reading("bench (index rows)"):
        indexed = memory.index.card_count()
    out: dict[str, Any] = {"disk_L1": layers["L1"]["bytes"], "disk_L2": layers["L2"]["bytes"],
                           "disk_L3": layers["L3"]["bytes"], "indexed_cards": indexed}
    out["tiering"] = temperature.footprint(memory)
    env = {**os.environ, "ALAYA_NO_SERVE": "1"}  # PYTHONPATH as given: the tree being measured
    env.pop("ALAYA_HOME", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(root), "recall", "billing pool size",
                    "--json"], capture_output=True, env=env, timeout=120, check=False)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux; the max over children so far
    out["recall_rss_mib"] = round(peak / 1024, 1) if peak > before else None
    # introspect's optimize keeps LanceDB versions younger than an hour of real time, and the
    # bench's year passes in minutes: on this private copy, what L1 holds once they are gone
    with warnings.catch_warnings(), memory.reading("bench (compact L1)"):
        warnings.simplefilter("ignore")  # "removes every version except the latest": no one else reads the copy
        memory.index.optimize(cleanup_older_than=timedelta(0))
    out["disk_L1_compacted"] = memory.storage.footprint().l1
    return out


def knowledge_update(memory: Alaya, day: int) -> dict[str, Any]:
    """Must-show 2: the current value first, what it replaced when asked about history, and the
    session-start block."""
    moment = at(day, 12)
    use_clock(moment)
    current = memory.recall(POOL["question"], top_k=TOP_K, scope=AGENT, now=moment).nodes
    history = memory.recall(POOL["history_question"], top_k=TOP_K, scope=AGENT, now=moment).nodes
    block = build(memory, StartRequest(agent_id=AGENT, prompt=POOL["question"], now=moment))

    def value(text: str) -> str | None:
        """The newest pool size `text` states: a whole number (not the "20" of "2026" or of a card id)."""
        said = set(re.findall(r"(?<![\w.])\d+(?!\w|\.\d)", text)) if "pool size" in text else set()
        return next((v for v in reversed(POOL["values"]) if v in said), None)

    first = current[0] if current else None
    replaced = list(dict.fromkeys(v for r in (getattr(history[0], "replaces", None) or []) if (v := value(r.content)))) if history else []
    shown = [v for line in block.splitlines() if (v := value(line))]
    return {
        "first_value": value(first.content) if first else None,
        "first_superseded": first.superseded if first else None,
        "replaces": replaced,
        "session_start_values": shown,
    }


def metrics_json(root: Path, day: int) -> dict[str, Any] | None:
    """Must-show 3: `alaya metrics --json` on the year's store, as the owner would run it on its
    last day (a real subprocess; None, with the error on stderr, if it fails)."""
    env = {**os.environ, "ALAYA_NO_SERVE": "1", "ALAYA_NOW": at(day, 12).isoformat()}
    env.pop("ALAYA_HOME", None)
    proc = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(root), "metrics", "--json"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    if proc.returncode != 0:
        print(f"year: alaya metrics failed ({proc.returncode}): {proc.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(proc.stdout)


def run(n_sessions: int, days: int, seed: int, tick_days: int = 1, keep: Path | None = None) -> dict[str, Any]:
    rng = random.Random(seed)
    planned, facts = plan(n_sessions, days, rng)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="alaya-year-") as tmp:
        jobs = {name: job.model_dump() for name, job in Config().cron.jobs.items()}  # the default schedule
        jobs["backup"]["enabled"] = False
        config = Config.model_validate({"cron": {"jobs": jobs}})
        memory = Alaya(Path(tmp) / "home", config=config)
        use_clock(START)
        memory.init()
        year = Year(memory, facts)
        recalled = [f for f in facts if f.recalled]
        # the agent asks about a recalled fact every ~3 weeks, at random (from the second month)
        asks = sorted((at(rng.uniform(31, days), 15), rng.choice(recalled)) for _ in range(days // 21)) if recalled else []
        events: list[tuple[datetime, int, Any]] = [(m, 1, s) for m, s in planned]
        events += [(at(d, TICK_HOUR), 0, None) for d in range(0, days + 1, tick_days)]
        events += [(m, 2, f) for m, f in asks]
        events += [(at(d, 12), 3, d) for d in CHECKPOINTS if d <= days]
        for moment, kind, what in sorted(events, key=lambda e: (e[0], e[1])):
            if kind == 0:
                tick(year, moment)
            elif kind == 1:  # session end: ingest and distill, as the hook does
                use_clock(moment)
                memory.ingest(what)
                year.written += memory.distill(what.id).cards
                year.sessions += 1
            elif kind == 2:
                use_clock(moment)
                memory.recall(what.question, top_k=TOP_K, scope=AGENT, now=moment)
                year.interim_recalls += 1
            else:
                year.checkpoints.append(probe(year, what, Path(tmp)))
                print(f"year: day {what}: {year.checkpoints[-1]['top5_all']:.0%} of facts in the top {TOP_K}"
                      f" ({time.monotonic() - started:.0f} s)", file=sys.stderr)
        update = knowledge_update(memory, days)
        health = metrics_json(memory.dirs.root, days)
        if keep is not None:  # the year's store, for `alaya --data-dir KEEP metrics`, recall, trace…
            shutil.copytree(memory.dirs.root, keep)
    os.environ.pop("ALAYA_NOW", None)
    return {
        "sessions": year.sessions, "days": days, "facts": len(facts), "seed": seed, "tick_days": tick_days,
        "interim_recalls": year.interim_recalls, "introspects": year.introspects,
        "introspect_seconds": round(year.introspect_seconds, 1),
        "introspect_step_seconds": {k: round(v, 1) for k, v in year.step_seconds.most_common()},
        "wall_seconds": round(time.monotonic() - started, 1),
        "checkpoints": year.checkpoints,
        "knowledge_update": update,
        "metrics": health,
    }


def markdown(r: dict[str, Any]) -> str:
    lines = [f"{r['sessions']} sessions over {r['days']} days, {r['facts']} owner facts stated once in the first month,"
             f" {r['interim_recalls']} recalls in between; {r['introspects']} scheduled introspects"
             f" (a cron tick every {r['tick_days']} days)"
             f" ({r['introspect_seconds']} s), {r['wall_seconds']} s in all", "",
             f"| day | top-{TOP_K} all | recalled between | never recalled | HOT/WARM/COLD | cards (written) |"
             " forgotten | L1 bytes (compacted) | L2 bytes | indexed | recall RSS MiB |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in r["checkpoints"]:
        t = c["tiers"]
        forgotten = ", ".join(f"{k} {v}" for k, v in c["forgotten_by_reason"].items()) or "0"
        lines.append(f"| +{c['day']} | {c['top5_all']:.0%} | {c['top5_recalled_between']:.0%} | {c['top5_never_recalled']:.0%}"
                     f" | {t['HOT']}/{t['WARM']}/{t['COLD']} | {c['cards']} ({c['written']}) | {forgotten}"
                     f" | {c['disk_L1']:,} ({c.get('disk_L1_compacted', 0):,}) | {c['disk_L2']:,} | {c['indexed_cards']} | {c['recall_rss_mib']} |")
        if c.get("tiering"):
            lines.append(f"|  | tiering: {json.dumps(c['tiering'])} |")
    last = r["checkpoints"][-1] if r["checkpoints"] else None
    if last and last["missed"]:
        lines += ["", f"missed at +{last['day']}: " + "; ".join(last["missed"])]
    lines += ["", "introspect time by step (s): " + ", ".join(f"{k} {v}" for k, v in r["introspect_step_seconds"].items())]
    u = r["knowledge_update"]
    lines += ["", f"knowledge update (pool size {' → '.join(POOL['values'])}): first answer {u['first_value']}"
              f" (superseded: {u['first_superseded']}); asked about history it replaced {u['replaces'] or 'nothing said'};"
              f" the session-start block shows {u['session_start_values'] or 'no value'}"]
    if r.get("metrics"):
        lines += ["", f"`alaya metrics --json` at +{r['days']}:", "", "```json", json.dumps(r["metrics"], indent=1), "```"]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--tick-days", type=int, default=1, help="days between cron ticks (at 09:00)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="copy the final store to DIR (which must not exist)")
    args = parser.parse_args()
    if args.sessions < len(FACTS) or args.days < 31:
        parser.error(f"a year needs at least {len(FACTS)} sessions and 31 days")
    if args.keep is not None and args.keep.exists():
        parser.error(f"--keep {args.keep}: already exists")
    r = run(args.sessions, args.days, args.seed, max(args.tick_days, 1), args.keep)
    print(json.dumps(r, indent=1) if args.json else markdown(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
