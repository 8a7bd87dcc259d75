-- The postgres backend's first schema (issue 34): L3, L2 and L1 of any number of memories in one
-- database. Every row names its store (`store_id`: one team's memory; several share a database)
-- and, where an agent may own it, its `scope` (an agent id or 'shared'), the column row-level
-- security will key on. Applied once, in one transaction, by store/postgres/schema.py, which
-- records it in schema_version; a later change is a new numbered file, never an edit of this one.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE stores (
    id          text PRIMARY KEY,
    generation  bigint NOT NULL DEFAULT 0,       -- bumped by every write hold: a reader's copy is checked against it
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- a purge recorded before it changes anything, carried out by the next write hold if its own
-- was cut off (store/ports/coordinator.py, `record_purge`)
CREATE TABLE purges (
    store_id     text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    name         text NOT NULL,
    doc          jsonb NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (store_id, name)
);

-- L3: the truth, append-only (a purge blanks a turn's text in place, and removes a session)

CREATE TABLE sessions (
    store_id       text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    id             text NOT NULL,
    scope          text NOT NULL,               -- the session's agent id, or 'shared'
    month          text NOT NULL,               -- YYYY-MM of its first write (raw.month_of): the listing order
    started_at     text,
    title          text,
    source_format  text NOT NULL,
    kind           text,
    channel        text,
    parent         text,
    metadata       jsonb,
    stored_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, id)
);
CREATE INDEX sessions_in_order ON sessions (store_id, month, id);

CREATE TABLE turns (
    store_id    text NOT NULL,
    session_id  text NOT NULL,
    seq         integer NOT NULL,                -- its place in the session, from 0
    id          text NOT NULL,
    scope       text NOT NULL,                   -- its session's
    role        text NOT NULL,
    name        text,
    content     text NOT NULL,
    "timestamp" text,
    origin      text,
    kind        text,
    sender      text,
    tokens      integer,
    tool_calls  jsonb,
    PRIMARY KEY (store_id, session_id, seq),
    UNIQUE (store_id, session_id, id),
    FOREIGN KEY (store_id, session_id) REFERENCES sessions (store_id, id) ON DELETE CASCADE
);

-- the turns each card was distilled from, per session (a copy: the card keeps them when the
-- session is purged of other turns)
CREATE TABLE card_contexts (
    store_id    text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    card_id     text NOT NULL,
    session_id  text NOT NULL,
    seq         bigint GENERATED ALWAYS AS IDENTITY,  -- the order the sessions were first recorded in
    turns       jsonb NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, card_id, session_id)
);

-- the append-only logs rebuild replays (links, curation, tombstones), one record a row, in order
CREATE TABLE l3_logs (
    store_id   text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    name       text NOT NULL,
    seq        bigint GENERATED ALWAYS AS IDENTITY,
    record     jsonb NOT NULL,
    logged_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, name, seq)
);
-- what was forgotten: capture, distill and rebuild ask "is this id forgotten?"
CREATE INDEX l3_tombstones_by_id ON l3_logs (store_id, (record ->> 'kind'), (record ->> 'id'))
    WHERE name = 'tombstones.jsonl';

-- L2: cards, sessions as the graph sees them, entities, edges

CREATE TABLE cards (
    store_id       text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    id             text NOT NULL,
    scope          text NOT NULL DEFAULT 'shared',
    title          text NOT NULL,
    content        text NOT NULL,
    type           text NOT NULL DEFAULT 'concept',
    tags           text[] NOT NULL DEFAULT '{}',
    entities       text[] NOT NULL DEFAULT '{}',
    importance     double precision NOT NULL DEFAULT 0.5,
    sources        jsonb NOT NULL DEFAULT '[]',
    created_at     text NOT NULL,
    updated_at     text NOT NULL,
    valid_from     text,
    valid_until    text,
    temperature    double precision NOT NULL DEFAULT 1.0,
    tier           text NOT NULL DEFAULT 'HOT',
    access_count   bigint NOT NULL DEFAULT 0,
    last_accessed  text,
    origin         text,
    session_kind   text,
    kind           text,
    confidence     double precision,
    occurred       text,
    PRIMARY KEY (store_id, id)
);

CREATE TABLE graph_sessions (
    store_id         text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    id               text NOT NULL,
    scope            text NOT NULL,
    started_at       text,
    ingested_at      text,
    title            text,
    source_format    text,
    turn_count       bigint NOT NULL DEFAULT 0,
    distilled_turns  bigint NOT NULL DEFAULT 0,
    last_card        text,
    kind             text,
    parent           text,
    channel          text,
    summary          text,
    PRIMARY KEY (store_id, id)
);

CREATE TABLE entities (
    store_id  text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    name      text NOT NULL,
    type      text NOT NULL DEFAULT '',
    PRIMARY KEY (store_id, name)
);

CREATE TABLE entity_aliases (
    store_id  text NOT NULL,
    alias     text NOT NULL,
    name      text NOT NULL,
    PRIMARY KEY (store_id, alias),
    FOREIGN KEY (store_id, name) REFERENCES entities (store_id, name) ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE TABLE card_mentions (
    store_id  text NOT NULL,
    card_id   text NOT NULL,
    entity    text NOT NULL,
    PRIMARY KEY (store_id, card_id, entity),
    FOREIGN KEY (store_id, card_id) REFERENCES cards (store_id, id) ON DELETE CASCADE,
    FOREIGN KEY (store_id, entity) REFERENCES entities (store_id, name) ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX card_mentions_by_entity ON card_mentions (store_id, entity);

-- every card→card relation, core or custom, in one table: a walk is a join on (store_id, src)
CREATE TABLE edges (
    store_id    text NOT NULL,
    src         text NOT NULL,
    dst         text NOT NULL,
    rel         text NOT NULL,
    weight      double precision NOT NULL DEFAULT 1.0,
    created_at  text,
    reason      text,
    PRIMARY KEY (store_id, src, rel, dst),
    FOREIGN KEY (store_id, src) REFERENCES cards (store_id, id) ON DELETE CASCADE,
    FOREIGN KEY (store_id, dst) REFERENCES cards (store_id, id) ON DELETE CASCADE
);
CREATE INDEX edges_by_dst ON edges (store_id, dst, rel);

CREATE TABLE card_sessions (                     -- EXTRACTED_FROM
    store_id    text NOT NULL,
    card_id     text NOT NULL,
    session_id  text NOT NULL,
    turn_ids    text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (store_id, card_id, session_id),
    FOREIGN KEY (store_id, card_id) REFERENCES cards (store_id, id) ON DELETE CASCADE,
    FOREIGN KEY (store_id, session_id) REFERENCES graph_sessions (store_id, id) ON DELETE CASCADE
);
CREATE INDEX card_sessions_by_session ON card_sessions (store_id, session_id);

CREATE TABLE forwards (                          -- a merged card's id → the card it went into
    store_id  text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    id        text NOT NULL,
    target    text NOT NULL,
    PRIMARY KEY (store_id, id)
);

-- L1: a vector and the words of every card, and a vector per relation name. A vector's length
-- is the store's embedder's (index_meta); HNSW needs a fixed one, so its cosine index is a partial
-- expression index per length, made for the embedder in use (schema.ensure_vector_index).

CREATE TABLE index_meta (
    store_id  text PRIMARY KEY REFERENCES stores (id) ON DELETE CASCADE,
    embedder  text NOT NULL,
    dim       integer NOT NULL CHECK (dim > 0)
);

CREATE TABLE card_vectors (
    store_id   text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    card_id    text NOT NULL,
    scope      text NOT NULL,
    type       text NOT NULL,
    text       text NOT NULL,
    words      tsvector NOT NULL,                -- written by the index code (CJK as bigram tokens)
    dim        integer NOT NULL,
    embedding  vector NOT NULL CHECK (vector_dims(embedding) = dim),
    PRIMARY KEY (store_id, card_id)
);
CREATE INDEX card_vectors_words ON card_vectors USING gin (words);
CREATE INDEX card_vectors_trigrams ON card_vectors USING gin (text gin_trgm_ops);

CREATE TABLE relation_vectors (
    store_id     text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    name         text NOT NULL,
    description  text NOT NULL,
    dim          integer NOT NULL,
    embedding    vector NOT NULL CHECK (vector_dims(embedding) = dim),
    PRIMARY KEY (store_id, name)
);
