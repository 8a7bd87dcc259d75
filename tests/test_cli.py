"""The `alaya` command as users and agents run it: real subprocesses, real stores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import session_json, tree_digest

DEMO = Path(__file__).resolve().parents[1] / "openclaw_alaya" / "demo"


def alaya(data_dir: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data_dir), *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=120,
    )


def ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("cli") / "data"
    ok(alaya(data, "init"))
    for session in sorted(DEMO.iterdir()):
        ok(alaya(data, "ingest", str(session)))
    ok(alaya(data, "distill"))
    return data


def test_recall_json_and_trace(demo_dir):
    out = json.loads(ok(alaya(demo_dir, "recall", "billing service database connections", "--json")))
    assert set(out) == {"nodes", "explorable", "h_distance_avg", "forwarded"}
    node = out["nodes"][0]
    assert node["card_id"].startswith("card-") and node["sources"][0]["turn_ids"]
    for key in ("title", "content", "score", "h_distance", "matched_rel", "rel_similarity", "type", "tags", "tier"):
        assert key in node
    for item in out["explorable"]:
        assert set(item) == {"rel", "count", "rel_sim_to_query"}
    trace = ok(alaya(demo_dir, "trace", node["card_id"]))
    for turn_id in node["sources"][0]["turn_ids"]:
        assert f"[{turn_id}]" in trace
    traced = json.loads(ok(alaya(demo_dir, "trace", node["card_id"], "--json")))
    assert {t["id"] for s in traced["sessions"] for t in s["turns"]} == set(node["sources"][0]["turn_ids"])


def test_human_recall_output(demo_dir):
    out = ok(alaya(demo_dir, "recall", "pnpm"))
    assert out.startswith("1. [") and "h_distance_avg:" in out and "source:" in out


def test_recall_json_stdin_mode(demo_dir):
    request = {"query": "graph database choice", "concepts": ["Kuzu"], "relations": [], "depth": 1, "budget": 300}
    out = json.loads(ok(alaya(demo_dir, "recall", "--json", stdin=json.dumps(request).encode())))
    assert out["nodes"]
    bad = alaya(demo_dir, "recall", "--json", stdin=b'{"qeury": "x"}')
    assert bad.returncode == 1 and b"unknown key 'qeury'" in bad.stderr


def test_status_and_schema(demo_dir):
    status = json.loads(ok(alaya(demo_dir, "status", "--json")))
    assert status["sessions"] == 4 and status["cards"] > 0 and status["links"] > 0
    relations = json.loads(ok(alaya(demo_dir, "schema", "--relations", "--json")))["relations"]
    assert {"CAUSES", "CAUSED_BY", "DEPENDS_ON", "SIMILAR_TO", "CONTRADICTS", "TEMPORAL_NEXT", "EXTRACTED_FROM"} <= {
        r["name"] for r in relations
    }
    types = json.loads(ok(alaya(demo_dir, "schema", "--node-types", "--json")))
    assert set(types) == {"node_types"}


@pytest.mark.parametrize(
    "name, content, expected",
    [
        ("broken.json", b'{"session_id": "x", "turns": [', b"not valid JSON"),
        ("unknown.json", b'{"hello": "world"}', b"unknown format"),
        ("table.csv", b"role,content\nuser,hi\n", b""),
        ("missing.jsonl", None, b"no such file"),
    ],
)
def test_bad_input_exits_1_with_one_line_and_changes_nothing(tmp_path, name, content, expected):
    data = tmp_path / "data"
    ok(alaya(data, "init"))
    ok(alaya(data, "ingest", "--stdin", stdin=session_json("s-keep", [("user", "Keep this turn about Redis 7.2 safe.")])))
    before = tree_digest(data)
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    result = alaya(data, "ingest", str(path))
    err = result.stderr.decode()
    assert result.returncode == 1
    assert err.startswith("alaya: error:") and err.count("\n") == 1 and "Traceback" not in err
    assert expected.decode() in err
    assert tree_digest(data) == before


def test_bad_stdin_and_uninitialised_dir(tmp_path):
    data = tmp_path / "data"
    result = alaya(data, "recall", "anything")
    assert result.returncode == 1 and b"alaya init" in result.stderr
    ok(alaya(data, "init"))
    result = alaya(data, "ingest", "--stdin", stdin=b"\xff\xfe\x00garbage\x00")
    assert result.returncode == 1 and result.stderr.count(b"\n") == 1


def test_usage_errors_exit_2(tmp_path):
    assert alaya(tmp_path, "recall", "--depth", "deep").returncode == 2
    assert alaya(tmp_path, "no-such-command").returncode == 2


def test_a_command_line_builds_only_its_command_and_a_typo_builds_them_all():
    """A cold call builds the parser of the command it runs, not of all 30-odd; a mistyped
    command builds them all, to find the nearest names (the test below)."""
    from openclaw_alaya.cli.main import _command_named, _parser

    assert _command_named(["--data-dir", "/x", "recall", "q"]) == "recall"
    assert _command_named(["--data-dir=/x", "hook", "session-start"]) == "hook"
    assert _command_named(["--help"]) is _command_named(["--data-dir", "/x"]) is None
    assert set(_parser("recall")._subparsers._group_actions[0].choices) == {"recall"}
    assert {"recall", "status", "hook", "mcp"} <= set(_parser("recal")._subparsers._group_actions[0].choices)


def test_config_errors_name_the_key(tmp_path):
    data = tmp_path / "data"
    ok(alaya(data, "init"))
    config = json.loads((data / "config.json").read_text())
    config.setdefault("recall", {})["topk"] = 5
    (data / "config.json").write_text(json.dumps(config))
    result = alaya(data, "status")
    assert result.returncode == 1 and b"recall.topk: unknown key" in result.stderr
    config["recall"].pop("topk")
    config.setdefault("recall", {})["rrf_k"] = "sixty"
    (data / "config.json").write_text(json.dumps(config))
    result = alaya(data, "status")
    assert result.returncode == 1 and b"recall.rrf_k" in result.stderr


def test_data_dir_is_owner_only(tmp_path):
    data = tmp_path / "data"
    ok(alaya(data, "init"))
    ok(alaya(data, "ingest", "--stdin", stdin=session_json("s-perm", [("user", "Deploy keys live in 1Password vault Ops.")])))
    assert (data.stat().st_mode & 0o777) == 0o700
    for path in data.rglob("*"):
        if path.is_file() and path.name != ".lock":
            assert path.stat().st_mode & 0o077 == 0, path


def test_init_closes_a_loose_data_dir_and_commands_refuse_one_opened_again(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o777)  # made by hand before `alaya init`
    ok(alaya(data, "init"))
    assert (data.stat().st_mode & 0o777) == 0o700
    before = tree_digest(data)
    for path, mode in ((data, 0o777), (data / "config.json", 0o666), (data / "state", 0o775)):
        path.chmod(mode)
        for args in (("recall", "anything"), ("hook", "session-start"), ("serve", "start"), ("status",)):
            result = alaya(data, *args, stdin=b'{"prompt": "which database?"}')
            err = result.stderr.decode()
            assert result.returncode == 1 and err.startswith("alaya: error:") and err.count("\n") == 1, (args, err)
            assert f"{path} is writable by other users" in err and "Traceback" not in err
        path.chmod(0o700 if path.is_dir() else 0o600)
    assert tree_digest(data) == before
    ok(alaya(data, "recall", "anything"))


@pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="needs root to give a file away")
def test_commands_refuse_a_config_owned_by_another_user(tmp_path):
    data = tmp_path / "data"
    ok(alaya(data, "init"))
    os.chown(data / "config.json", 65534, 65534)
    result = alaya(data, "recall", "anything")
    assert result.returncode == 1 and b"belongs to uid 65534, not to you" in result.stderr
    assert alaya(data, "init").returncode == 1  # init does not take over another user's file


def test_schema_counts_provenance_edges(demo_dir):
    relations = {r["name"]: r for r in json.loads(ok(alaya(demo_dir, "schema", "--relations", "--json")))["relations"]}
    status = json.loads(ok(alaya(demo_dir, "status", "--json")))
    assert relations["EXTRACTED_FROM"]["count"] >= status["cards"] > 0  # one per card and source session


def test_status_reads_as_words_not_python(demo_dir):
    text = ok(alaya(demo_dir, "status"))
    assert "{" not in text and "'" not in text and "True" not in text
    assert "redaction: enabled yes, redact_raw yes" in text


def test_an_empty_store_status_says_none_not_python(tmp_path):
    data = tmp_path / "data"
    ok(alaya(data, "init"))
    text = ok(alaya(data, "status"))
    assert "sessions_span: oldest none, newest none" in text and "None" not in text


def test_recall_errors_and_empty_store_say_what_to_do(tmp_path):
    data = tmp_path / "data"
    ok(alaya(data, "init"))
    bad = alaya(data, "recall", "x", "--top-k", "0")
    assert bad.returncode == 1 and bad.stderr.decode().strip() == "alaya: error: recall: top_k must be 1 or more (got 0)"
    assert "alaya ingest FILE --distill" in ok(alaya(data, "recall", "anything"))
    ok(alaya(data, "ingest", str(DEMO / "prefs-pnpm.json")))
    assert "`alaya distill` turns the 1 stored sessions" in ok(alaya(data, "recall", "anything unrelated"))


def test_introspect_reports_each_step_as_it_ends(demo_dir):
    """`alaya introspect` on a terminal prints a step's line when the step ends, not all at the end."""
    from openclaw_alaya import Alaya
    from openclaw_alaya.hookspecs import hookimpl
    from openclaw_alaya.maintenance.introspect import run
    from openclaw_alaya.maintenance.steps import Step
    from openclaw_alaya.plugins import get_plugin_manager

    events: list[str] = []

    class Probe:
        @hookimpl
        def introspect(self, memory):
            return [Step("probe-early", lambda m: events.append("ran early") or {}, order=1),
                    Step("probe-late", lambda m: events.append("ran late") or {}, order=99)]

    pm = get_plugin_manager()
    pm.register(Probe(), name="probe")
    try:
        run(Alaya(demo_dir), steps=["probe-early", "probe-late"], on_step=lambda e: events.append(f"reported {e['step']}"))
    finally:
        pm.unregister(name="probe")
    assert events == ["ran early", "reported probe-early", "ran late", "reported probe-late"]


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_load_no_heavy_library(flag):
    code = ("import sys\nfrom openclaw_alaya.cli.main import main\ntry:\n    main([" + repr(flag) + "])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pydantic', 'kuzu', 'lancedb', 'numpy') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().strip().splitlines()[-1] == "[]"


def test_ingesting_a_folder_skips_a_bad_file_reports_it_and_keeps_the_rest(tmp_path):
    data, folder = tmp_path / "data", tmp_path / "mixdir"
    folder.mkdir()
    (folder / "a.json").write_bytes((DEMO / "prefs-pnpm.json").read_bytes())
    (folder / "b.json").write_bytes(b'{"session_id": "x", "turns": [')
    ok(alaya(data, "init"))
    proc = alaya(data, "ingest", str(folder), "--json")
    assert proc.returncode == 1  # something was not stored: scripts must notice
    report = json.loads(proc.stdout)
    assert len(report["sessions"]) == 1 and report["sessions"][0]["new_turns"] > 0
    assert report["skipped"] == [{"file": str(folder / "b.json"), "error": report["skipped"][0]["error"]}]
    assert "not valid JSON" in report["skipped"][0]["error"]
    assert proc.stderr.decode().count("\n") == 1 and "alaya: warning: skipped" in proc.stderr.decode()
    assert json.loads(ok(alaya(data, "status", "--json")))["sessions"] == 1


def test_config_get_and_set_by_dotted_key(tmp_path):
    data = tmp_path / "data"
    ok(alaya(data, "init"))
    assert ok(alaya(data, "config", "get", "hook.budget_tokens")).strip() == "1200"
    assert ok(alaya(data, "config", "set", "hook.budget_tokens", "800")).strip() == "hook.budget_tokens = 800"
    assert json.loads((data / "config.json").read_text())["hook"]["budget_tokens"] == 800
    assert json.loads(ok(alaya(data, "config", "get", "hook")))["budget_tokens"] == 800
    before = (data / "config.json").read_bytes()
    for key, value, message in [("hook.budgt", "5", "hook.budgt: unknown key"),
                                ("hook.budget_tokens", "lots", "hook.budget_tokens: Input should be a valid integer"),
                                ("storage.backend", "postgress", "storage.backend: no plugin registers 'postgress'"),
                                ("embedding.provider", "nope", "embedding.provider: no plugin registers 'nope'")]:
        proc = alaya(data, "config", "set", key, value)
        assert proc.returncode == 1 and message in proc.stderr.decode() and proc.stderr.decode().count("\n") == 1
    assert (data / "config.json").read_bytes() == before


def test_config_json_holds_what_was_chosen_so_retuned_defaults_reach_older_data_dirs(tmp_path):
    """config.json keeps the chosen settings (and the embedding the index was built with); a
    config.json from before, with every setting written out, follows today's defaults where it
    held the default of its day, keeps what differs, and `alaya init` rewrites it that way."""
    from openclaw_alaya.config import Config

    data = tmp_path / "data"
    ok(alaya(data, "init"))
    fresh = json.loads((data / "config.json").read_text())
    assert fresh == {"version": 2, "embedding": Config().embedding.model_dump(mode="json")}
    ok(alaya(data, "config", "set", "recall.rrf_k", "10"))  # chosen now: kept, though it once was the default
    assert ok(alaya(data, "config", "get", "recall.rrf_k")).strip() == "10"

    whole = Config().model_dump(mode="json")  # as `alaya init` wrote it before format 2
    whole["recall"]["rrf_k"] = 10  # a former default
    whole["recall"]["intent"]["entity"] = 0.5  # likewise
    whole["hook"]["budget_tokens"] = 900  # never a default: a choice
    whole["embedding"]["dimensions"] = 1024
    (data / "config.json").write_text(json.dumps(whole))
    got = {key: json.loads(ok(alaya(data, "config", "get", key))) for key in ("recall.rrf_k", "recall.intent.entity", "hook.budget_tokens")}
    assert got == {"recall.rrf_k": Config().recall.rrf_k, "recall.intent.entity": Config().recall.intent.entity, "hook.budget_tokens": 900}
    assert Config().recall.rrf_k != 10 and Config().recall.intent.entity != 0.5
    ok(alaya(data, "init"))
    assert json.loads((data / "config.json").read_text()) == {**fresh, "hook": {"budget_tokens": 900}}

    (data / "config.json").write_text(json.dumps({"version": 3}))
    proc = alaya(data, "status")
    assert proc.returncode == 1 and "written by a newer alaya" in proc.stderr.decode() and proc.stderr.decode().count("\n") == 1


def test_config_has_no_logging_section_and_an_old_one_still_loads(tmp_path):
    """`logging.level` / `logging.file` were written by init but never read: they are gone, and a
    data directory whose config.json still has them keeps working."""
    data = tmp_path / "data"
    ok(alaya(data, "init"))
    config = json.loads((data / "config.json").read_text())
    assert "logging" not in config
    proc = alaya(data, "config", "get", "logging.level")
    assert proc.returncode == 1 and "logging.level: unknown key" in proc.stderr.decode()
    config["logging"] = {"level": "WARNING", "file": None}
    (data / "config.json").write_text(json.dumps(config))
    ok(alaya(data, "status"))
    ok(alaya(data, "config", "set", "hook.budget_tokens", "800"))
    assert "logging" not in json.loads((data / "config.json").read_text())


def test_shell_completion_knows_the_commands_and_their_options(tmp_path):
    script = ok(alaya(tmp_path, "completion", "bash"))
    for word in ("recall", "introspect", "serve", "--from-nodes", "--top-k", "session-start"):
        assert word in script
    bash = subprocess.run(["bash", "-n"], input=script.encode(), capture_output=True)
    assert bash.returncode == 0, bash.stderr.decode()  # a script bash can load


def test_recall_warns_about_a_relation_no_link_has(demo_dir):
    proc = alaya(demo_dir, "recall", "--concepts", "pgbouncer", "--rel", "NOT_A_REL,caused by", "--top-k", "2")
    assert proc.returncode == 0 and proc.stdout.decode().startswith("1. ")
    warnings = proc.stderr.decode().splitlines()
    assert len(warnings) == 1 and "no link has the relation NOT_A_REL" in warnings[0] and "CAUSED_BY" in warnings[0]


def test_status_counts_cards_by_type_links_by_relation_and_the_session_span(demo_dir):
    status = json.loads(ok(alaya(demo_dir, "status", "--json")))
    assert sum(status["cards_by_type"].values()) == status["cards"]
    assert sum(status["links_by_relation"].values()) == status["links"]
    span = status["sessions_span"]
    assert span["oldest"] and span["newest"] and span["oldest"] <= span["newest"]


def test_schema_counts_cards_per_type(demo_dir):
    types = json.loads(ok(alaya(demo_dir, "schema", "--node-types", "--json")))["node_types"]
    status = json.loads(ok(alaya(demo_dir, "status", "--json")))
    assert sum(t["count"] for t in types) == status["cards"] > 0


def test_from_nodes_results_come_nearest_first(demo_dir):
    start = json.loads(ok(alaya(demo_dir, "recall", "--concepts", "pgbouncer", "--top-k", "1", "--json")))["nodes"][0]
    result = json.loads(ok(alaya(demo_dir, "recall", "--from-nodes", start["card_id"], "--depth", "2", "--json")))
    distances = [n["h_distance"] for n in result["nodes"]]
    assert len(distances) >= 3 and distances == sorted(distances)


def test_link_defaults_to_relates_to(tmp_path):
    data = tmp_path / "data"
    ok(alaya(data, "init"))
    ok(alaya(data, "ingest", str(DEMO / "prefs-pnpm.json"), "--distill"))
    ids = [n["card_id"] for n in json.loads(ok(alaya(data, "recall", "pnpm", "--top-k", "2", "--json")))["nodes"]]
    linked = json.loads(ok(alaya(data, "link", ids[0], ids[1], "--json")))
    assert linked["rel"] == "RELATES_TO" and linked["custom"] is True


def test_recall_into_a_closed_pipe_exits_quietly(demo_dir):
    """`alaya recall … | head -1`: stdout closes early; no traceback, no "internal error"."""
    proc = subprocess.Popen([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(demo_dir), "recall",
                             "billing service database connections"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err  # 128 + SIGPIPE, as `yes | head -1` reports
    assert err == ""


def test_data_dir_may_follow_the_command(demo_dir, tmp_path):
    """`alaya status --data-dir X` (and in nested commands, and on the daemon client's fast path)
    means X, not the default directory, which here does not exist."""
    env = {**os.environ, "ALAYA_HOME": str(tmp_path / "not-here")}

    def after(*args: str) -> str:
        run = subprocess.run([sys.executable, "-m", "openclaw_alaya", *args, "--data-dir", str(demo_dir)],
                             capture_output=True, timeout=120, env=env, input=b"")
        return ok(run)

    assert json.loads(after("status", "--json"))["cards"] > 0
    assert json.loads(after("recall", "pnpm", "--json"))["nodes"]
    assert "not running" in after("serve", "status")
    assert after("config", "get", "hook.budget_tokens").strip().isdigit()
    from openclaw_alaya.cli.client import fast_path

    data, argv, _stdin, _hook = fast_path(["recall", "pnpm", "--data-dir", str(demo_dir)])
    assert data == demo_dir.resolve() and argv == ["--data-dir", str(demo_dir.resolve()), "recall", "pnpm"]



def test_counts_read_as_written_and_a_second_ingest_says_nothing_was_new(tmp_path):
    """issue 35: "1 cards", and "ingested 2 sessions" for a re-run that added nothing."""
    data, one, two = tmp_path / "data", tmp_path / "one.json", tmp_path / "two.json"
    one.write_bytes(session_json("s-one", [("user", "We picked Caddy as the reverse proxy for staging.")]))
    two.write_bytes(session_json("s-two", [("user", "The ops pager rotates every Monday at nine.")]))
    ok(alaya(data, "init"))
    first = ok(alaya(data, "ingest", str(one), str(two)))
    assert first.strip() == "ingested 2 sessions (2 new or grown): 2 new turns", first
    again = ok(alaya(data, "ingest", str(one), str(two)))
    assert again.strip() == "ingested 2 sessions (0 new or grown): 0 new turns", again
    single = tmp_path / "three.json"
    single.write_bytes(session_json("s-three", [("user", "Our CI runners use Ubuntu 24.04 images.")]))
    assert ok(alaya(data, "ingest", str(single))).startswith("s-three: 1 new turn (1 in all) → ")
    distilled = ok(alaya(data, "distill", "--session", "s-three")).strip()
    assert distilled.startswith("distilled 1 session: 1 card, "), distilled


def test_a_mistyped_command_gets_the_nearest_names_and_a_mistyped_flag_the_commands_usage(tmp_path):
    """issue 35: argparse listed all the commands for a typo, and reported a wrong flag of
    `alaya recall` with the top-level usage."""
    typo = alaya(tmp_path / "data", "recal", "pnpm")
    assert typo.returncode == 2 and typo.stderr.decode().strip() == (
        "alaya: error: unknown command 'recal'; did you mean 'recall'? (`alaya --help` lists the commands)")
    nothing = alaya(tmp_path / "data", "xyzzy")
    assert nothing.returncode == 2 and "did you mean" not in nothing.stderr.decode()
    flag = alaya(tmp_path / "data", "recall", "pnpm", "--frobnicate")
    err = flag.stderr.decode()
    assert flag.returncode == 2 and err.startswith("usage: alaya recall ") and "--top-k" in err
    assert err.strip().endswith("alaya recall: error: unrecognized arguments: --frobnicate")


def test_an_empty_query_from_a_script_asks_for_a_query_not_for_json(tmp_path):
    """issue 35: `alaya recall ""` with stdin no terminal (a script, an agent's tool) said
    "<stdin>: recall request is not valid JSON"."""
    ok(alaya(tmp_path / "data", "init"))
    empty = alaya(tmp_path / "data", "recall", "")
    assert empty.returncode == 1, empty.stderr
    assert empty.stderr.decode().strip() == ("alaya: error: give a query, --concepts, --from-nodes, or a JSON "
                                             "request on stdin (stdin was empty)")
    bad = alaya(tmp_path / "data", "recall", stdin=b"{not json")
    assert bad.returncode == 1 and "not valid JSON" in bad.stderr.decode()


def test_config_unset_list_and_path(tmp_path):
    """issue 35: `config` had get and set only; unset returns a key to its default (the file no
    longer chooses it), list shows what the file chooses, path where it is."""
    data = tmp_path / "data"
    ok(alaya(data, "init"))
    assert ok(alaya(data, "config", "path")).strip() == str(data / "config.json")
    ok(alaya(data, "config", "set", "hook.budget_tokens", "900"))
    assert "hook.budget_tokens = 900" in ok(alaya(data, "config", "list")).splitlines()
    assert ok(alaya(data, "config", "unset", "hook.budget_tokens")).strip() == "hook.budget_tokens = 1200 (the default)"
    assert "hook" not in json.loads((data / "config.json").read_text())
    assert not any(line.startswith("hook.") for line in ok(alaya(data, "config", "list")).splitlines())
    assert "hook.budget_tokens = 1200" in ok(alaya(data, "config", "list", "--all")).splitlines()
    typo = alaya(data, "config", "unset", "hook.budget_token")
    assert typo.returncode == 1 and typo.stderr.decode().strip() == "alaya: error: hook.budget_token: unknown key"
