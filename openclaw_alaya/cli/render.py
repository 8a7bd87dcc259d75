"""Human-readable output for the CLI (the `--json` forms are the models' own dumps)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..text import counted, one_line

if TYPE_CHECKING:  # `alaya --help` and `--version` need not load pydantic
    from ..models import RecallResult, TraceResult

_SNIPPET_CHARS = 300


def _snippet(text: str) -> str:
    return one_line(text, _SNIPPET_CHARS)


def render_recall(result: RecallResult) -> str:
    lines = [f"note: {old} was merged into {new}; navigating from {new}" for old, new in result.forwarded.items()]
    if not result.nodes:
        return "\n".join([*lines, "no matching memories"])
    for i, node in enumerate(result.nodes, 1):
        via = f" · via {node.matched_rel} (rel {node.rel_similarity:.2f})" if node.matched_rel else ""
        if node.matched_reason:
            via += f": {one_line(node.matched_reason, _SNIPPET_CHARS)}"
        lines.append(f"{i}. [{node.type}] {node.title}  ({node.card_id})")
        until = f" · superseded since {node.valid_until}" if node.superseded else ""
        origin = f" · {node.origin}" + (f" ({node.session_kind})" if node.session_kind not in (None, "interactive") else "") if node.origin else ""
        lines.append(f"   score {node.score:.3f} · h_distance {node.h_distance:.2f}{via} · {node.tier}{origin}{until}")
        lines.append(f"   {_snippet(node.content)}")
        if evidence := node.evidence():
            lines.append(f"   opinion: {evidence}")
        for earlier in node.replaces or []:
            lines.append(f"   replaces: {_snippet(earlier.content)} (until {earlier.valid_until})")
        for source in node.sources:
            lines.append(f"   source: {source.session_id} turns {', '.join(source.turn_ids)}")
    if result.explorable:
        parts = [f"{e.rel} ×{e.count} (sim {e.rel_sim_to_query:.2f})" for e in result.explorable]
        lines.append("explorable: " + " · ".join(parts))
    lines.append(f"h_distance_avg: {result.h_distance_avg:.2f}")
    return "\n".join(lines)


def render_trace(result: TraceResult) -> str:
    merged = f"  (merged from {result.forwarded_from})" if result.forwarded_from else ""
    lines = [f"[{result.type}] {result.title}  ({result.card_id}){merged}", _snippet(result.content), ""]
    for session in result.sessions:
        lines.append(f"session {session.session_id} ({session.started_at or 'undated'}) — {session.path}")
        sources = {turn.id for turn in session.turns}
        for turn in session.context:
            mark = ">>" if turn.id in sources else "  "
            speaker = turn.name or turn.role
            lines.append(f"{mark} [{turn.id}] {speaker}: {_snippet(turn.content)}")
        lines.append("")
    if not result.sessions:
        lines.append("(source session not found in raw/sessions)")
    return "\n".join(lines).rstrip()


def render_schema(schema: dict[str, Any]) -> str:
    lines: list[str] = []
    if "relations" in schema:
        lines.append("relations:")
        for rel in schema["relations"]:
            kind = "core" if rel["core"] else "custom"
            lines.append(f"  {rel['name']:<16} {kind:<6} {rel['count']:>6}  {rel['description']}")
    if "node_types" in schema:
        lines.append("card types:")
        for node_type in schema["node_types"]:
            lines.append(f"  {node_type['name']:<12} {node_type['count']:>6}  {node_type['description']}")
    return "\n".join(lines)


def render_status(status: dict[str, Any]) -> str:
    """Plain `key: value` lines; nested parts on one line each, in words, not Python reprs."""
    lines = []
    for key, value in status.items():
        if key == "temperature_histogram":
            bars = " ".join(f"{b['from']:.1f}:{b['cards']}" for b in value)
            lines.append(f"temperature: {bars}")
        elif key == "layers":
            for layer, info in value.items():
                lines.append(f"{layer}: " + ", ".join(f"{k} {_human(v) if k == 'bytes' else v}" for k, v in info.items()))
        elif key == "bytes_total":
            lines.append(f"size: {_human(value)}")
        else:
            lines.append(f"{key}: {_inline(value)}")
    return "\n".join(lines)


def render_summary(summary: dict[str, Any]) -> str:
    """A period's bucket: the counts on one line, then its tags and the titles of its top cards."""
    types = ", ".join(f"{t} {n}" for t, n in summary["types"].items())
    lines = [f"{summary['period']} {summary['bucket']} ({summary['first_day']} to {summary['last_day']}): "
             f"{counted(summary['sessions'], 'session')}, {counted(summary['cards'], 'card')}" + (f" ({types})" if types else "")]
    if summary["tags"]:
        lines.append(f"tags: {', '.join(summary['tags'])}")
    if summary["highlights"]:
        lines.append("highlights:")
        lines += [f"  - {_snippet(title)}" for title in summary["highlights"]]
    return "\n".join(lines)


def render_metrics(report: dict[str, Any]) -> str:
    """`alaya metrics`: a line per metric, in words (README, "Memory health")."""
    recall, sig = report["recall"], report["signal"]
    windows = ", ".join(f"last {k.split('_')[1]} days {_share(v['hits'], v['recalls'])}"
                        for k, v in recall.items() if k.startswith("last_"))
    lines = [f"cards: {report['cards']} (on {report['at']})",
             f"recall hit rate: {_share(recall['hits'], recall['recalls'])}; {windows}",
             f"write signal-to-noise: {_share(sig['returned'], sig['cards'])} of the cards at least "
             f"{sig['min_age_days']} days old were returned by recall"
             + "".join(f"\n  {o}: {_share(v['returned'], v['cards'])}" for o, v in sig["by_origin"].items())]
    for name, e in report["entropy"].items():
        untyped = f", {e['untyped']} untyped" if e.get("untyped") else ""
        lines.append(f"{name.replace('_types', ' type')} entropy: {e['bits']:.2f} bits over {e['types']} types "
                     f"(normalised {e['normalised']:.2f}{untyped}): {_inline(e['counts'])}")
    for key in ("cards_by_origin", "cards_by_session_kind", "tiers"):
        lines.append(f"{key.replace('_', ' ')}: {_inline(report[key])}")
    if "forgotten" in report:
        gone = report["forgotten"]
        restored = f"; {gone['restored']} restored" if gone.get("restored") else ""
        lines.append(f"forgotten: {gone['total']} ({_inline(gone['by_reason'])}){restored}")
    return "\n".join(lines)


def render_metrics_history(days: list[dict[str, Any]]) -> str:
    """`alaya metrics --history`: a row per day kept (a field a line lacks shows as -)."""
    if not days:
        return "no history yet: introspect's metrics step records one line a day"
    lines = [f"{'day':<10}  {'cards':>6}  {'recalls':>7}  {'hit':>5}  {'hit 7d':>6}  {'signal':>6}  {'H cards':>7}  {'H ents':>6}"]
    for d in days:
        lines.append(f"{d['day']:<10}  {_cell(d.get('cards')):>6}  {_cell(d.get('recalls')):>7}  "
                     f"{_pct(d.get('hit_rate')):>5}  {_pct(d.get('hit_rate_7d')):>6}  {_pct(d.get('signal')):>6}  "
                     f"{_cell(d.get('card_type_entropy')):>7}  {_cell(d.get('entity_type_entropy')):>6}")
    return "\n".join(lines)


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole * 100:.0f}%)" if whole else "none yet (0/0)"


def _pct(value: Any) -> str:
    return f"{value * 100:.0f}%" if isinstance(value, (int, float)) else "-"


def _cell(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def _inline(value: Any) -> str:
    """`{"enabled": True, "by_kind": {}, "oldest": None}` → `enabled yes, by_kind none, oldest none`."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_inline(v)}" for k, v in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(_inline(v) for v in value) or "none"
    return "none" if value is None else str(value)


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)
