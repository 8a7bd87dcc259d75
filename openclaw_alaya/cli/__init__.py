"""The `alaya` command: the stdlib-only entry point and daemon client (`client.py`), the parser
and core commands (`main.py`), one module per command group, and the daemon (`daemon.py`)."""
