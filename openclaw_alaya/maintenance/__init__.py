"""Maintenance of a memory store (issue 5): the introspect steps (consolidate, fold the access
log, cool down, forget, optimize, time buckets) and the whole-store commands (status details,
verify, rebuild, export, memex import).

Every step computes outside the lock and takes the write lock only to apply
(docs/architecture.md, "The lock protocol"); time-dependent logic takes an injectable `now` so
tests can play out months in milliseconds.
"""
