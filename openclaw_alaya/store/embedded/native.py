"""Workarounds for the native libraries underneath the stores, each measured to pay.

`release_freed_memory`: give freed memory back to the operating system after a big one-off
load. glibc keeps the chunks that LanceDB's and Kuzu's reader threads and numpy's temporaries
freed (hundreds of MB after loading 100k cards into memory); a long-lived process would carry
them as resident memory for the rest of its life.

`defer_rest_client`: make `import lancedb` cheaper for a process that starts per call. It costs
about 1.4 s here, of which about 0.8 s is the API classes of the REST namespace client
(`lance_namespace_urllib3_client/__init__.py` imports every `*Api` module,
../shared/research/library-behaviour.md §1). LanceDB imports the package only for its request
and response models (`lance_namespace` does `from lance_namespace_urllib3_client.models import
…`); a local database never calls the REST API. So the package is registered without running
its `__init__`: its submodules (`.models`, `.api.*`) import normally, and the first lookup of
anything else on the package (`lance_namespace_urllib3_client.TableApi`) runs the real
`__init__` then, so nothing that uses the REST client breaks.
"""

from __future__ import annotations

import ctypes
import importlib.util
import sys
import types


def release_freed_memory() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


_NAME = "lance_namespace_urllib3_client"


def defer_rest_client() -> None:
    if _NAME in sys.modules or "lancedb" in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(_NAME)
    except (ImportError, ValueError):
        return
    if spec is None or not spec.submodule_search_locations or spec.loader is None:
        return
    module = types.ModuleType(_NAME)
    module.__spec__ = spec
    module.__path__ = list(spec.submodule_search_locations)
    module.__file__ = spec.origin
    module.__package__ = _NAME
    state = {"loaded": False}

    def __getattr__(attr: str):  # PEP 562: only for names not set yet
        if attr.startswith("__") or state["loaded"]:
            raise AttributeError(attr)
        state["loaded"] = True
        spec.loader.exec_module(module)  # the real __init__, into this module
        return getattr(module, attr)

    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    sys.modules[_NAME] = module
