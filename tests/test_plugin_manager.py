"""The plugin manager handed down (docs/architecture.md, "Plugins and hooks"): the package top
names the built-in plugins, `Alaya(dir)` gets the process's manager, and an `Alaya` handed a
manager of its own calls that one for its providers and hooks, not the process's."""

from __future__ import annotations

import subprocess
import sys

import pytest

from openclaw_alaya import Alaya, builtin_plugins, plugins
from openclaw_alaya.bridge.inject import Item, Section, StartRequest, build
from openclaw_alaya.errors import ConfigError
from openclaw_alaya.hookspecs import hookimpl
from openclaw_alaya.providers import make_distiller


class Private:
    """A plugin registered only in a manager of the test's own."""

    @hookimpl
    def session_start(self, memory, request):
        return Section("private", "From a private plugin", [Item("only the private manager says this")], order=30)

    @hookimpl
    def register_distillers(self, register):
        register("private", lambda config: "the private distiller")


def test_the_process_manager_registers_the_builtins_first(tmp_path):
    names = [name for name, _plugin in plugins.get_plugin_manager().list_name_plugin()]
    assert names[:2] == ["default", "redaction"]
    assert Alaya(tmp_path / "data").hooks is plugins.get_plugin_manager()


def test_an_alaya_handed_a_manager_calls_that_one(tmp_path):
    manager = plugins.build(builtin_plugins())
    manager.register(Private(), name="private")
    own = Alaya(tmp_path / "data", hooks=manager)
    own.init()
    own.config.distill.llm_provider = "private"
    assert "only the private manager says this" in build(own, StartRequest(prompt=""))
    assert make_distiller(own) == "the private distiller"

    shared = Alaya(tmp_path / "data")  # the process's manager has no such plugin
    assert "only the private manager says this" not in build(shared, StartRequest(prompt=""))
    shared.config.distill.llm_provider = "private"
    with pytest.raises(ConfigError, match="unknown provider 'private'"):
        make_distiller(shared)


def test_importing_the_package_builds_no_manager():
    """Naming the built-ins costs nothing: pluggy and the plugins load with the first manager."""
    code = ("import sys, openclaw_alaya\n"
            "print(sorted(m for m in ('pluggy', 'openclaw_alaya.default_plugin', 'openclaw_alaya.hookspecs')"
            " if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().strip() == "[]"
