#!/usr/bin/env python3
"""Each test file's seconds in a pytest JUnit XML report (setup, call and teardown of its
tests), as tests/file_seconds.json: the order tests/conftest.py hands files to the workers in,
longest first (issue 35). scripts/test.sh writes the report to .venv-test/junit.xml.

Usage: scripts/file-seconds.py .venv-test/junit.xml > tests/file_seconds.json"""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict


def file_seconds(report: str) -> dict[str, float]:
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).iter("testcase"):
        parts = case.get("classname", "").split(".")  # tests.e2e.test_x[.TestClass] -> tests/e2e/test_x.py
        while parts and parts[-1].startswith("Test"):
            parts.pop()
        path = "/".join(parts) + ".py"
        seconds[path] += float(case.get("time") or 0)
    return {path: round(s, 1) for path, s in sorted(seconds.items(), key=lambda kv: -kv[1])}


if __name__ == "__main__":
    json.dump(file_seconds(sys.argv[1]), sys.stdout, indent=1)
    print()
