-- Entity → entity relations (issue 35, distill/entity_links.py): "PgBouncer IS_A connection
-- pooler", the PART_OF steps of a tag path; the embedded graph's ENTITY_LINK. An edge is kept
-- once; it goes with either entity (a merge moves it to the kept one first: curation.py).

CREATE TABLE entity_links (
    store_id  text NOT NULL,
    src       text COLLATE "C" NOT NULL,
    rel       text COLLATE "C" NOT NULL,
    dst       text COLLATE "C" NOT NULL,
    PRIMARY KEY (store_id, src, rel, dst),
    FOREIGN KEY (store_id, src) REFERENCES entities (store_id, name) ON DELETE CASCADE,
    FOREIGN KEY (store_id, dst) REFERENCES entities (store_id, name) ON DELETE CASCADE
);
CREATE INDEX entity_links_dst ON entity_links (store_id, dst);
