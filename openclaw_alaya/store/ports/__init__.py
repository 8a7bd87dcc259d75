"""The storage ports: what the engine and everything above it may ask of a storage backend
(docs/architecture.md, "Storage backends"). A backend (store/embedded/ today) implements them;
nothing above `store/` names Kuzu, LanceDB, Cypher or a backend's files.

Split by domain, as graphiti splits its drivers' operations: `graph` (L2 cards, sessions,
links, walks), `curation` (entities, matching for forget and purge), `upkeep` (what maintenance
reads and rewrites in bulk), `index` (L1 words and vectors), `raw` (L3), `coordinator`
(read/write exclusion, journal, generation), `scratch` (space to build new stores beside the
live ones), and `backend`, the whole of one backend as `Alaya.storage` holds it."""
