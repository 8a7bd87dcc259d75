"""The postgres backend (issue 34): a memory's layers in one PostgreSQL database with pgvector,
shared by any number of hosts, behind the same ports as the embedded backend (store/ports/).
Built so far: the connection (connect.py), the versioned schema (schema.py, migrations/), L3
(raw.py) and the coordinator (coordinator.py); the graph and the index come next."""
