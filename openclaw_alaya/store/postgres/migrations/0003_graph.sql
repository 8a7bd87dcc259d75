-- L2 on PostgreSQL (issue 34): cards, sessions as the graph sees them, entities with their
-- aliases, typed card→card edges, EXTRACTED_FROM and MENTIONS, and forwards of merged ids, as
-- store/postgres/graph.py reads and writes them. 0001's first sketch of these tables was never
-- written by any code, so they are made again here as the graph needs them:
-- - text the graph orders or compares (ids, ISO times, names) is COLLATE "C": code-point order,
--   as the embedded graph and Python order, whatever the database's default locale;
--   case-insensitive matches lower() under the default collation (graph.py, `low`);
-- - columns are nullable where the embedded graph may hold no value (a card's reads give the
--   defaults, store/ports/upkeep.py `CardRow`); `sources` is the card's sources as JSON text;
-- - an entity's aliases are an array in the order given (two entities may share an alias);
-- - every row names its store, and cards and sessions their scope, for row-level security
--   (0002, which comes later).
-- 0002 is left for row-level security; store/postgres/schema.py applies each missing number.

DROP TABLE IF EXISTS card_sessions, edges, card_mentions, entity_aliases, entities, forwards, cards, graph_sessions;

CREATE TABLE cards (
    store_id       text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    id             text COLLATE "C" NOT NULL,
    scope          text COLLATE "C" NOT NULL DEFAULT 'shared',
    title          text COLLATE "C",
    content        text COLLATE "C",
    type           text COLLATE "C",
    tags           text[] COLLATE "C" NOT NULL DEFAULT '{}',
    entities       text[] COLLATE "C" NOT NULL DEFAULT '{}',
    importance     double precision,
    sources        text,
    created_at     text COLLATE "C",
    updated_at     text COLLATE "C",
    valid_from     text COLLATE "C",
    valid_until    text COLLATE "C",
    temperature    double precision,
    tier           text COLLATE "C",
    access_count   bigint,
    last_accessed  text COLLATE "C",
    origin         text COLLATE "C",
    session_kind   text COLLATE "C",
    kind           text COLLATE "C",
    confidence     double precision,
    occurred       text COLLATE "C",
    PRIMARY KEY (store_id, id)
);
CREATE INDEX cards_newest ON cards (store_id, created_at DESC, id);

CREATE TABLE graph_sessions (
    store_id         text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    id               text COLLATE "C" NOT NULL,
    agent_id         text COLLATE "C",
    scope            text COLLATE "C" GENERATED ALWAYS AS (coalesce(agent_id, 'shared')) STORED,
    started_at       text COLLATE "C",
    ingested_at      text COLLATE "C",
    path             text,
    title            text,
    source_format    text COLLATE "C",
    turn_count       bigint,
    distilled_turns  bigint,
    last_card        text COLLATE "C",
    kind             text COLLATE "C",
    parent           text COLLATE "C",
    channel          text,
    summary          text,
    PRIMARY KEY (store_id, id)
);

CREATE TABLE entities (
    store_id  text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    name      text COLLATE "C" NOT NULL,
    type      text COLLATE "C" NOT NULL DEFAULT '',
    aliases   text[] COLLATE "C" NOT NULL DEFAULT '{}',
    PRIMARY KEY (store_id, name)
);

CREATE TABLE card_mentions (                     -- MENTIONS
    store_id  text NOT NULL,
    card_id   text COLLATE "C" NOT NULL,
    entity    text COLLATE "C" NOT NULL,
    PRIMARY KEY (store_id, card_id, entity),
    FOREIGN KEY (store_id, card_id) REFERENCES cards (store_id, id) ON DELETE CASCADE,
    FOREIGN KEY (store_id, entity) REFERENCES entities (store_id, name) ON DELETE CASCADE
);
CREATE INDEX card_mentions_by_entity ON card_mentions (store_id, entity);

-- every card→card relation, core or custom, in one table: a hop is a join on (store_id, src)
-- one way and (store_id, dst) the other
CREATE TABLE edges (
    store_id    text NOT NULL,
    src         text COLLATE "C" NOT NULL,
    rel         text COLLATE "C" NOT NULL,
    dst         text COLLATE "C" NOT NULL,
    weight      double precision,
    created_at  text COLLATE "C",
    reason      text NOT NULL DEFAULT '',
    PRIMARY KEY (store_id, src, rel, dst),
    FOREIGN KEY (store_id, src) REFERENCES cards (store_id, id) ON DELETE CASCADE,
    FOREIGN KEY (store_id, dst) REFERENCES cards (store_id, id) ON DELETE CASCADE
);
CREATE INDEX edges_by_dst ON edges (store_id, dst, rel);

CREATE TABLE card_sessions (                     -- EXTRACTED_FROM
    store_id    text NOT NULL,
    card_id     text COLLATE "C" NOT NULL,
    session_id  text COLLATE "C" NOT NULL,
    turn_ids    text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (store_id, card_id, session_id),
    FOREIGN KEY (store_id, card_id) REFERENCES cards (store_id, id) ON DELETE CASCADE,
    FOREIGN KEY (store_id, session_id) REFERENCES graph_sessions (store_id, id) ON DELETE CASCADE
);
CREATE INDEX card_sessions_by_session ON card_sessions (store_id, session_id);

CREATE TABLE forwards (                          -- a merged card's id → the card it went into
    store_id  text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    id        text COLLATE "C" NOT NULL,
    target    text COLLATE "C" NOT NULL,
    PRIMARY KEY (store_id, id)
);
CREATE INDEX forwards_by_target ON forwards (store_id, target);
