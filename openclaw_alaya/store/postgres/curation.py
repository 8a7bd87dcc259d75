"""The curation port on PostgreSQL (issue 34; store/ports/curation.py): entities and their
aliases, forget and purge matching, listing and buckets, as SQL with the embedded graph's
meaning. Mixed into `PostgresGraph` (graph.py), whose `_rows`/`_one` run the statements."""

from __future__ import annotations

from ...models import CardPage
from ..card_rows import listing_filters
from ..ports.curation import CardHeadline, Entity, EntityMentions, MentioningCard
from .rows import card_columns, card_from, low

# `card_page`'s filters, each reading the parameter of its name
_CARD_FILTERS = {
    "type": "c.type = %(type)s",
    # the tag or a child of it (`技术/前端` keeps `技术/前端/React`, issue 31)
    "tag": f"EXISTS (SELECT 1 FROM unnest(c.tags) AS t WHERE {low('t')} = %(tag)s"
           f" OR starts_with({low('t')}, %(tag)s || '/'))",
    "entities": "EXISTS (SELECT 1 FROM card_mentions m WHERE m.store_id = c.store_id AND m.card_id = c.id"
                f" AND {low('m.entity')} = ANY(%(entities)s))",
    "since": "c.created_at >= %(since)s",
    "before": "c.created_at < %(before)s",
    "tier": "c.tier = %(tier)s",
    "scopes": "c.scope = ANY(%(scopes)s)",
}


class CurationSql:
    """Curation operations for a graph with `_rows(sql, params)` and `_one` (graph.py)."""

    # --- entities ---------------------------------------------------------------------------

    def entities_named(self, name: str) -> list[Entity]:
        rows = self._rows(
            f"SELECT name, type, aliases FROM entities WHERE store_id = %(s)s AND ({low('name')} = %(low)s"
            f" OR %(name)s = ANY(aliases) OR EXISTS (SELECT 1 FROM unnest(aliases) a WHERE {low('a')} = %(low)s))"
            " ORDER BY name", {"low": name.lower(), "name": name})
        return [Entity(n, t or None, list(a or [])) for n, t, a in rows]

    def entity_count(self, kind: str | None = None) -> int:
        typed = " AND type = %(type)s" if kind else ""
        return self._one(f"SELECT count(*) FROM entities WHERE store_id = %(s)s{typed}", {"type": kind})

    def entity_type_counts(self) -> dict[str | None, int]:
        rows = self._rows("SELECT nullif(type, ''), count(*) FROM entities WHERE store_id = %(s)s GROUP BY 1")
        return {kind: int(n) for kind, n in rows}

    def entities_by_mentions(self, kind: str | None = None, *, limit: int, offset: int) -> list[EntityMentions]:
        typed = " AND e.type = %(type)s" if kind else ""
        rows = self._rows(
            "SELECT e.name, e.type, e.aliases, count(m.card_id) AS n FROM entities e LEFT JOIN card_mentions m"
            f" ON m.store_id = e.store_id AND m.entity = e.name WHERE e.store_id = %(s)s{typed}"
            " GROUP BY e.name, e.type, e.aliases ORDER BY n DESC, e.name OFFSET %(offset)s LIMIT %(limit)s",
            {"type": kind, "limit": limit, "offset": offset})
        return [EntityMentions(n, t or None, list(a or []), m) for n, t, a, m in rows]

    def entity_cards(self, name: str) -> list[MentioningCard]:
        rows = self._rows(
            "SELECT c.id, c.title, c.type, c.created_at, c.valid_until FROM card_mentions m JOIN cards c"
            " ON c.store_id = m.store_id AND c.id = m.card_id WHERE m.store_id = %(s)s AND m.entity = %(name)s"
            " ORDER BY c.created_at DESC, c.id", {"name": name})
        return [MentioningCard(*row) for row in rows]

    def set_entity_type(self, name: str, kind: str) -> None:
        self._rows("INSERT INTO entities (store_id, name, type) VALUES (%(s)s, %(name)s, %(type)s)"
                   " ON CONFLICT (store_id, name) DO UPDATE SET type = EXCLUDED.type", {"name": name, "type": kind})

    def add_entity_alias(self, name: str, alias: str) -> None:
        self._rows("UPDATE entities SET aliases = aliases || %(alias)s::text WHERE store_id = %(s)s AND name = %(name)s"
                   " AND NOT %(alias)s = ANY(aliases)", {"name": name, "alias": alias})

    def merge_entities(self, keep: str, drop: str) -> list[str]:
        found = self._rows("SELECT d.type, d.aliases, k.type FROM entities d, entities k WHERE d.store_id = %(s)s"
                           " AND k.store_id = %(s)s AND d.name = %(drop)s AND k.name = %(keep)s",
                           {"drop": drop, "keep": keep})
        if not found or keep == drop:
            return []
        drop_type, drop_aliases, keep_type = found[0]
        more = [drop, *(drop_aliases or [])]
        self._rows("UPDATE entities SET type = %(type)s, aliases = aliases || ARRAY(SELECT a FROM unnest(%(more)s::text[])"
                   " WITH ORDINALITY AS m(a, n) WHERE NOT a = ANY(entities.aliases) GROUP BY a ORDER BY min(n))"
                   " WHERE store_id = %(s)s AND name = %(keep)s",
                   {"keep": keep, "more": more, "type": keep_type or drop_type or ""})
        rows = self._rows("SELECT c.id, c.entities FROM card_mentions m JOIN cards c ON c.store_id = m.store_id"
                          " AND c.id = m.card_id WHERE m.store_id = %(s)s AND m.entity = %(drop)s ORDER BY c.id",
                          {"drop": drop})
        for cid, entities in rows:
            named = list(dict.fromkeys(keep if e.lower() == drop.lower() else e for e in entities or []))
            self._rows("UPDATE cards SET entities = %(entities)s WHERE store_id = %(s)s AND id = %(id)s",
                       {"id": cid, "entities": named})
            self._rows("INSERT INTO card_mentions (store_id, card_id, entity) VALUES (%(s)s, %(id)s, %(keep)s)"
                       " ON CONFLICT DO NOTHING", {"id": cid, "keep": keep})
        # its relations to other entities go to the kept one (drop is its alias now: issue 35)
        links = self._rows("SELECT src, rel, dst FROM entity_links WHERE store_id = %(s)s"
                           " AND (src = %(drop)s OR dst = %(drop)s)", {"drop": drop})
        self.link_entities([(a, rel, b) for a, rel, b in links if {a, b} != {drop, keep}])
        self._rows("DELETE FROM entities WHERE store_id = %(s)s AND name = %(drop)s", {"drop": drop})
        return [cid for cid, _ in rows]

    def rename_entity(self, name: str, new: str) -> list[str]:
        if not self._rows("SELECT 1 FROM entities WHERE store_id = %(s)s AND name = %(name)s", {"name": name}):
            return []
        self._rows("INSERT INTO entities (store_id, name) VALUES (%(s)s, %(new)s) ON CONFLICT DO NOTHING", {"new": new})
        return self.merge_entities(new, name)

    # --- sessions and supersedes -------------------------------------------------------------

    def session_card_ids(self, session_id: str) -> list[str]:
        return [r[0] for r in self._rows("SELECT card_id FROM card_sessions WHERE store_id = %(s)s"
                                         " AND session_id = %(id)s ORDER BY card_id", {"id": session_id})]

    def newest_session_id(self) -> str | None:
        rows = self._rows("SELECT id FROM graph_sessions WHERE store_id = %(s)s"
                          " ORDER BY coalesce(ingested_at, '') DESC, id LIMIT 1")
        return rows[0][0] if rows else None

    def superseded_by(self, ids: list[str]) -> list[str]:
        return [r[0] for r in self._rows(
            "SELECT DISTINCT b.id FROM edges e JOIN cards b ON b.store_id = e.store_id AND b.id = e.dst"
            " WHERE e.store_id = %(s)s AND e.rel = 'CONTRADICTS' AND e.src = ANY(%(ids)s) AND NOT b.id = ANY(%(ids)s)"
            " AND coalesce(b.valid_until, '') <> '' ORDER BY b.id", {"ids": ids})]

    # --- forget and purge --------------------------------------------------------------------

    def cards_matching_purge(self, *, subject: str | None = None, before: str | None = None,
                             relation: str | None = None) -> list[str]:
        ids: set[str] | None = None  # None: no criterion applied yet
        if subject:
            ids = {r[0] for r in self._rows(
                f"SELECT id FROM cards WHERE store_id = %(s)s AND strpos({low('title')}, %(x)s) > 0"
                " UNION SELECT card_id FROM card_mentions WHERE store_id = %(s)s"
                f" AND strpos({low('entity')}, %(x)s) > 0", {"x": subject})}
        if before:
            dated = {r[0] for r in self._rows(
                "SELECT id FROM cards WHERE store_id = %(s)s AND coalesce(nullif(valid_from, ''), created_at) < %(before)s",
                {"before": before})}
            ids = dated if ids is None else ids & dated
        if relation:
            linked = {r[0] for r in self._rows(
                "SELECT src FROM edges WHERE store_id = %(s)s AND rel = %(rel)s UNION"
                " SELECT dst FROM edges WHERE store_id = %(s)s AND rel = %(rel)s UNION"
                " SELECT id FROM cards WHERE store_id = %(s)s AND %(tag)s = ANY(tags)",
                {"rel": relation, "tag": f"rel:{relation}"})}
            ids = linked if ids is None else ids & linked
        return sorted(ids or [])

    # --- listing and buckets -----------------------------------------------------------------

    def card_page(self, *, type: str | None = None, tag: str | None = None, entities: list[str] | None = None,
                  since: str | None = None, before: str | None = None, tier: str | None = None,
                  scopes: list[str] | None = None, limit: int, offset: int) -> CardPage:
        params = listing_filters(type=type, tag=tag, entities=entities, since=since, before=before, tier=tier,
                                 scopes=scopes)
        where = "".join(f" AND ({_CARD_FILTERS[key]})" for key in params)
        total = self._one(f"SELECT count(*) FROM cards c WHERE c.store_id = %(s)s{where}", params)
        rows = self._rows(
            f"SELECT {card_columns()} FROM cards c WHERE c.store_id = %(s)s{where}"
            " ORDER BY c.created_at DESC, c.id OFFSET %(offset)s LIMIT %(limit)s",
            {**params, "offset": offset, "limit": limit}) if limit else []
        return CardPage(cards=[card_from(row) for row in rows], total=total, offset=offset, limit=limit)

    def card_headlines(self) -> list[CardHeadline]:
        return [CardHeadline(cid, title, type_, importance, list(tags or []), origin) for cid, title, type_, importance,
                tags, origin in self._rows("SELECT id, title, type, importance, tags, origin FROM cards"
                                           " WHERE store_id = %(s)s ORDER BY id")]
