"""The wheel's one build step beyond pyproject.toml (issue 33): the OpenClaw plugin
(hooks/openclaw-alaya), the skill (SKILL.md) and the cron example travel inside the package, under
openclaw_alaya/share/, so that `alaya openclaw install` links the plugin of this very version from
any install (cli/openclaw_host.py). In the checkout they live outside the package: the plugin is
a Node package of its own, with its own tests. The sdist carries them (MANIFEST.in), so a wheel
built from the sdist has them too."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SHARED = {"hooks/openclaw-alaya": "openclaw-alaya", "SKILL.md": "SKILL.md", "cron.example.json": "cron.example.json"}


class BuildWithPlugin(build_py):
    def run(self) -> None:
        super().run()
        share = Path(self.build_lib) / "openclaw_alaya" / "share"
        for src, name in SHARED.items():
            source, dest = HERE / src, share / name
            if source.is_dir():
                shutil.rmtree(dest, ignore_errors=True)
                shutil.copytree(source, dest, ignore=shutil.ignore_patterns("test", "node_modules"))
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest)


setup(cmdclass={"build_py": BuildWithPlugin})
