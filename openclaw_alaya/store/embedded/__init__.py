"""The embedded backend: Kuzu (L2), LanceDB (L1) and file locks on one data directory
(docs/architecture.md, "Storage backends"). Nothing outside this folder names Kuzu, LanceDB or
Cypher."""
