"""Deliberate memory: what a user or an agent stores, corrects and forgets on purpose
(`alaya remember`, `commit`, `correct`, `forget`, `purge`, `entities`), as opposed to what
capture and introspect do on their own. Every change is written to L3 first (a note or a
commit is a session; a forget a tombstone; an entity change a curation record), so
`alaya rebuild` derives the same memory again.
"""
