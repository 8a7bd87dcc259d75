"""Kuzu's side of the curation port (store/ports/curation.py): the Cypher behind entities,
forget and purge matching, listing and buckets. Mixed into `GraphStore`."""

from __future__ import annotations


from ...models import CardPage
from ..card_rows import listing_filters
from ..ports.curation import CardHeadline, Entity, EntityMentions, MentioningCard
from .columns import CARD_FIELDS, CARD_RELATIONS, CUSTOM, card_from_row

# `card_page`'s filters, each reading the parameter of its name
_CARD_FILTERS = {
    "type": "c.type = $type",
    # the tag or a child of it (`技术/前端` keeps `技术/前端/React`, issue 31): Kuzu takes no
    # parameter inside a list lambda, so the tags are joined by a separator no tag holds
    "tag": "list_contains(list_transform(c.tags, t -> lower(t)), $tag)"
           " OR concat($tag_sep, lower(list_to_string($tag_sep, c.tags))) CONTAINS concat($tag_sep, $tag, '/')",
    "entities": "EXISTS { MATCH (c)-[:MENTIONS]->(e:Entity) WHERE lower(e.name) IN $entities }",
    "since": "c.created_at >= $since",
    "before": "c.created_at < $before",
    "tier": "c.tier = $tier",
    "scopes": "c.scope IN $scopes",
}
_TAG_SEP = "\x1f"  # the unit separator: in no tag a person or a distiller writes


class CurationQueries:
    """Curation operations on an open Kuzu connection (`self._rows`, `self.optional`)."""

    # --- entities ---------------------------------------------------------------------------

    def entities_named(self, name: str) -> list[Entity]:
        rows = self.optional(
            "MATCH (e:Entity) WHERE lower(e.name) = $low OR list_contains(e.aliases, $name)"
            " OR list_contains(list_transform(e.aliases, a -> lower(a)), $low) RETURN e.name, e.type, e.aliases",
            {"low": name.lower(), "name": name},
        ) or self._rows("MATCH (e:Entity) WHERE lower(e.name) = $low RETURN e.name, '', []", {"low": name.lower()})
        return [Entity(n, t or None, list(a or [])) for n, t, a in rows]

    def entity_count(self, kind: str | None = None) -> int:
        if kind:  # a store not migrated yet has no types: no entity of any
            found = self.optional("MATCH (e:Entity) WHERE e.type = $type RETURN count(e)", {"type": kind})
        else:
            found = self._rows("MATCH (e:Entity) RETURN count(e)")
        return found[0][0] if found else 0

    def entity_type_counts(self) -> dict[str | None, int]:
        counts: dict[str | None, int] = {}
        rows = self.optional("MATCH (e:Entity) RETURN e.type, count(*)") or [
            [None, n] for (n,) in self._rows("MATCH (e:Entity) RETURN count(e)") if n]
        for kind, n in rows:
            counts[kind or None] = counts.get(kind or None, 0) + int(n)
        return counts

    def entities_by_mentions(self, kind: str | None = None, *, limit: int, offset: int) -> list[EntityMentions]:
        where = "WHERE e.type = $type" if kind else ""
        page = {"limit": limit, "offset": offset}
        rows = self.optional(
            f"MATCH (e:Entity) {where} OPTIONAL MATCH (c:Card)-[:MENTIONS]->(e)"
            " RETURN e.name, e.type, e.aliases, count(c) AS n ORDER BY n DESC, e.name SKIP $offset LIMIT $limit",
            {**({"type": kind} if kind else {}), **page},
        )
        if not rows and not kind:  # maybe a store without types and aliases yet: the names alone
            rows = self._rows(
                "MATCH (e:Entity) OPTIONAL MATCH (c:Card)-[:MENTIONS]->(e)"
                " RETURN e.name, '', [], count(c) AS n ORDER BY n DESC, e.name SKIP $offset LIMIT $limit", page)
        return [EntityMentions(n, t or None, list(a or []), m) for n, t, a, m in rows]

    def entity_cards(self, name: str) -> list[MentioningCard]:
        rows = self._rows(
            "MATCH (c:Card)-[:MENTIONS]->(e:Entity {name: $name}) RETURN c.id, c.title, c.type, c.created_at, c.valid_until"
            " ORDER BY c.created_at DESC, c.id", {"name": name})
        return [MentioningCard(*row) for row in rows]

    def set_entity_type(self, name: str, kind: str) -> None:
        self._rows("MERGE (e:Entity {name: $name}) ON CREATE SET e.aliases = CAST([] AS STRING[]) SET e.type = $type",
                   {"name": name, "type": kind})

    def add_entity_alias(self, name: str, alias: str) -> None:
        self._rows("MATCH (e:Entity {name: $name}) SET e.aliases = list_distinct(list_append(e.aliases, $alias))",
                   {"name": name, "alias": alias})

    def merge_entities(self, keep: str, drop: str) -> list[str]:
        found = self._rows("MATCH (d:Entity {name: $drop}), (k:Entity {name: $keep}) RETURN d.type, d.aliases, k.type",
                           {"drop": drop, "keep": keep})
        if not found or keep == drop:
            return []
        drop_type, drop_aliases, keep_type = found[0]
        self._rows("MATCH (k:Entity {name: $keep}) SET k.aliases = list_distinct(list_concat(k.aliases, $more)),"
                   " k.type = $type", {"keep": keep, "more": [drop, *(drop_aliases or [])],
                                       "type": keep_type or drop_type or ""})
        rows = self._rows("MATCH (c:Card)-[:MENTIONS]->(d:Entity {name: $drop}) RETURN c.id, c.entities", {"drop": drop})
        updates = [{"id": cid, "entities": list(dict.fromkeys(keep if e.lower() == drop.lower() else e
                                                              for e in entities or []))}
                   for cid, entities in rows]
        if updates:
            self._rows("UNWIND $rows AS r MATCH (c:Card {id: r.id}), (k:Entity {name: $keep})"
                       " SET c.entities = r.entities MERGE (c)-[:MENTIONS]->(k)", {"rows": updates, "keep": keep})
        # its relations to other entities go to the kept one (drop is its alias now: issue 35)
        links = self._rows("MATCH (a:Entity)-[r:ENTITY_LINK]->(b:Entity) WHERE a.name = $drop OR b.name = $drop"
                           " RETURN a.name, r.type, b.name", {"drop": drop})
        self.link_entities([(a, rel, b) for a, rel, b in links if {a, b} != {drop, keep}])
        self._rows("MATCH (d:Entity {name: $drop}) DETACH DELETE d", {"drop": drop})
        return [u["id"] for u in updates]

    def rename_entity(self, name: str, new: str) -> list[str]:
        if not self._rows("MATCH (e:Entity {name: $name}) RETURN e.name", {"name": name}):
            return []
        self._rows("MERGE (n:Entity {name: $new}) ON CREATE SET n.type = '', n.aliases = CAST([] AS STRING[])",
                   {"new": new})
        return self.merge_entities(new, name)

    # --- sessions and supersedes -------------------------------------------------------------

    def session_card_ids(self, session_id: str) -> list[str]:
        return [r[0] for r in self._rows(
            "MATCH (c:Card)-[:EXTRACTED_FROM]->(s:Session {id: $id}) RETURN c.id", {"id": session_id})]

    def newest_session_id(self) -> str | None:
        rows = self._rows("MATCH (s:Session) RETURN s.id ORDER BY s.ingested_at DESC, s.id LIMIT 1")
        return rows[0][0] if rows else None

    def superseded_by(self, ids: list[str]) -> list[str]:
        return [r[0] for r in self._rows(
            "MATCH (a:Card)-[:CONTRADICTS]->(b:Card) WHERE a.id IN $ids AND NOT b.id IN $ids AND b.valid_until <> ''"
            " RETURN DISTINCT b.id ORDER BY b.id", {"ids": ids})]

    # --- forget and purge --------------------------------------------------------------------

    def cards_matching_purge(self, *, subject: str | None = None, before: str | None = None,
                             relation: str | None = None) -> list[str]:
        ids: set[str] | None = None  # None: no criterion applied yet
        if subject:
            s = {"s": subject}
            ids = {r[0] for r in self._rows("MATCH (c:Card) WHERE lower(c.title) CONTAINS $s RETURN c.id", s)}
            ids |= {r[0] for r in self._rows(
                "MATCH (c:Card)-[:MENTIONS]->(e:Entity) WHERE lower(e.name) CONTAINS $s RETURN DISTINCT c.id", s)}
        if before:
            dated = {r[0] for r in self._rows(
                "MATCH (c:Card) WHERE (CASE WHEN c.valid_from <> '' THEN c.valid_from ELSE c.created_at END) < $before"
                " RETURN c.id", {"before": before})}
            ids = dated if ids is None else ids & dated
        if relation:
            table = relation if relation in CARD_RELATIONS else CUSTOM
            typed, extra = (" WHERE e.type = $rel", {"rel": relation}) if table == CUSTOM else ("", {})
            linked = {r[0] for r in self._rows(f"MATCH (c:Card)-[e:{table}]-(:Card){typed} RETURN DISTINCT c.id", extra)}
            tagged = {r[0] for r in self._rows(
                "MATCH (c:Card) WHERE list_contains(c.tags, $tag) RETURN c.id", {"tag": f"rel:{relation}"})}
            ids = (linked | tagged) if ids is None else ids & (linked | tagged)
        return sorted(ids or [])

    # --- listing and buckets -----------------------------------------------------------------

    def card_page(self, *, type: str | None = None, tag: str | None = None, entities: list[str] | None = None,
                  since: str | None = None, before: str | None = None, tier: str | None = None,
                  scopes: list[str] | None = None, limit: int, offset: int) -> CardPage:
        params = listing_filters(type=type, tag=tag, entities=entities, since=since, before=before, tier=tier,
                                 scopes=scopes)
        where = ("WHERE " + " AND ".join(f"({_CARD_FILTERS[key]})" for key in params)) if params else ""
        if tag:
            params["tag_sep"] = _TAG_SEP
        fields = ", ".join(f"c.{f}" for f in CARD_FIELDS)
        total = self._rows(f"MATCH (c:Card) {where} RETURN count(c)", params)[0][0]
        rows = self._rows(
            f"MATCH (c:Card) {where} RETURN {fields} ORDER BY c.created_at DESC, c.id SKIP $offset LIMIT $limit",
            {**params, "offset": offset, "limit": limit},
        ) if limit else []
        cards = [card_from_row(dict(zip(CARD_FIELDS, row))) for row in rows]
        return CardPage(cards=cards, total=total, offset=offset, limit=limit)

    def card_headlines(self) -> list[CardHeadline]:
        return [CardHeadline(*row) for row in self._rows("MATCH (c:Card) RETURN c.id, c.title, c.type, c.importance, c.tags, c.origin")]
