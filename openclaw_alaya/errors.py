"""Errors a user can act on. The CLI prints `str(error)` on one line and exits with `exit_code`."""

from __future__ import annotations

import errno


class AlayaError(Exception):
    """A problem with the user's input, data or environment (exit code 1, no traceback)."""

    exit_code = 1


class InputError(AlayaError, ValueError):
    """Input that cannot be ingested or understood: malformed JSON, unknown format, bad ids.

    Also a ValueError, so pydantic validators that raise it report it as a validation error."""


class ConfigError(AlayaError):
    """config.json has an unknown key or a bad value."""


class NotFoundError(AlayaError):
    """A card, session or file that was asked for does not exist."""


class LockTimeoutError(AlayaError):
    """The data directory lock could not be had in time."""


class NotInitializedError(AlayaError):
    """The data directory has no memory store yet."""


class DamagedStoreError(AlayaError):
    """The graph or the index is damaged or missing: `alaya rebuild` derives them again from L3."""


class StaleStoreError(AlayaError):
    """A read of a store that must be brought up to date first (an earlier version's schema, a
    dead writer's unfinished swap): reads write nothing, `alaya init` upgrades it."""


# What the operating system answers when a data directory cannot be written to (a read-only
# medium or mount, no permission, a full disk): reads go on without the lock where nobody can
# write (store/lock.py), and a write fails in one line instead of as an internal error.
UNWRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT})


class UnwritableError(AlayaError):
    """A write the data directory's disk refused part way (full, over quota, read-only): what
    the message says is stored is durable, the rest was not acknowledged."""


class DatabaseError(AlayaError):
    """The storage database could not be reached or refused the connection (the postgres
    backend, issue 34): one line naming the server, never the password."""
