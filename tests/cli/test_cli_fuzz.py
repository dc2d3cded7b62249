"""Every registered ``memcore`` verb, run in-process with plausible arguments mixed with garbage
(lone surrogates and NUL, malformed numbers and instants, files not UTF-8, not JSON, nested past
any limit, missing or a folder, unwritable output paths). With ``--json`` the command prints one
JSON document on stdout, exits 0 with an answer or non-zero with ``{"error": {code, status,
message}}`` whose code is never ``INTERNAL``, and a refusal leaves the store (and SQL memory) as it was.
"""

from __future__ import annotations

import io
import itertools
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FixedClock, Identity, Memory
from memory_core.cli import VERBS, Call, Verb, main
from memory_core.wire import encode
from tests.cli.fuzz_byid import BYID_VALUES
from tests.cli.fuzz_categories import CATEGORY_VALUES
from tests.cli.fuzz_compounding import COMPOUNDING_VALUES
from tests.cli.fuzz_erasure import ERASURE_VALUES
from tests.cli.fuzz_files import GOOD_FILES, NEAR_FILES, NEAR_PATHS, File, Out
from tests.cli.fuzz_learnings import LEARNING_VALUES
from tests.cli.fuzz_models import MODEL_VALUES
from tests.cli.fuzz_observe import OBSERVE_VALUES
from tests.cli.fuzz_remember import DECISION, FRAME, REMEMBER_VALUES
from tests.cli.fuzz_scope import SCOPE_VALUES
from tests.cli.fuzz_service import SERVICE_VALUES, serve_returns  # noqa: F401 (an autouse fixture)
from tests.conftest import T0, store_snapshot
from tests.fuzz_values import BAD_TEXT, NEAR_TEXT

IDENTITY = ["--tenant", "acme", "--user", "ana", "--agent", "helper"]
# An answer of every type SQL memory returns that JSON has no spelling for.
SQL_TYPES = (
    "SELECT DATE '2024-01-01' AS d, TIME '10:00' AS t, 'abc'::BLOB AS b, 1.5::DECIMAL(10, 2) AS x, "
    "uuid() AS u, INTERVAL 1 DAY AS i, 'nan'::DOUBLE AS n, ['inf'::DOUBLE] AS l, {'a': 1} AS s"
)
TEXT = st.sampled_from(["ana", "berlin", "k1", "city", "likes tea", "é中文"])
CLI_NEAR = st.one_of(NEAR_TEXT, BAD_TEXT, st.sampled_from(["-x", "--", "1e400", "nan", "-1"]))
INSTANT = st.sampled_from(["2024-01-01T00:00:00Z", "2023-06-01T12:00:00+02:00"])
INSTANT_NEAR = st.sampled_from(
    ["2024-01-01T00:00:00", "soon", "2024-01-01T00:00:00Z\x00", "20240101T000000+0000", "9999-12-31T23:59:59-05:00"]
)


VALUES: dict[str, tuple[st.SearchStrategy, st.SearchStrategy]] = {
    "key": (st.sampled_from(["k1", "k2", "city", "doc:readme"]), CLI_NEAR),
    "value": (
        st.sampled_from(["Berlin", "42", '{"a": [1, 2]}', '"quoted"', "[1, 2"]),
        st.one_of(CLI_NEAR, st.just("[" * 3000)),
    ),
    "scope": (st.sampled_from(["user", "agent", "tenant"]), st.one_of(st.sampled_from(["global", "auto"]), CLI_NEAR)),
    "valid_at": (INSTANT, INSTANT_NEAR),
    "invalid_at": (INSTANT, INSTANT_NEAR),
    "observed_at": (INSTANT, INSTANT_NEAR),
    "as_of": (INSTANT, INSTANT_NEAR),
    "known_at": (INSTANT, INSTANT_NEAR),
    "observed_from": (INSTANT, INSTANT_NEAR),
    "observed_to": (INSTANT, INSTANT_NEAR),
    "to": (INSTANT, INSTANT_NEAR),
    "session_date": (INSTANT, INSTANT_NEAR),
    "memory_type": (st.sampled_from(["general", "residence"]), CLI_NEAR),
    "kind": (st.sampled_from(["fact", "note"]), st.one_of(st.just("rumour"), CLI_NEAR)),
    "subject": (TEXT, CLI_NEAR),
    "subject_type": (st.sampled_from(["person", "project"]), CLI_NEAR),
    "context": (TEXT, CLI_NEAR),
    "if_match_sha256": (st.just("0" * 64), CLI_NEAR),
    "ttl_seconds": (st.sampled_from(["60", "3600.5"]), st.sampled_from(["nan", "inf", "1e300", "-5", "0", "x"])),
    "on_expire": (st.sampled_from(["tombstone", "demote"]), st.just("explode")),
    "sensitivity": (st.sampled_from(["normal", "high"]), st.just("secret")),
    "source_class": (st.sampled_from(["derived", "imported"]), st.just("stated")),
    "confidence": (st.sampled_from(["0.5", "1"]), st.sampled_from(["nan", "inf", "1.5", "-1", "x"])),
    "relations": (
        st.sampled_from(["ana|lives_in|paris", '{"subject": "ana", "relation": "likes", "object": "tea"}']),
        st.one_of(
            st.sampled_from(
                ["a|b", '{"subject": 5}', "[[[[", '{"subject": "\\ud800", "relation": "r", "object": "o"}']
            ),
            CLI_NEAR,
        ),
    ),
    "query": (st.sampled_from(["where does ana live", "berlin"]), CLI_NEAR),
    "k": (st.sampled_from(["1", "5"]), st.sampled_from(["0", "-1", "1e3", "x", "100000"])),
    "recipe": (st.sampled_from(["hybrid_rrf", "bm25_only"]), st.just("magic")),
    "sources": (st.sampled_from(["fact,note", "document"]), st.sampled_from([",", "graph", "fact,\ud800"])),
    "token_budget": (st.just("100"), st.sampled_from(["0", "x"])),
    "version": (st.sampled_from(["1", "2"]), st.sampled_from(["0", "x", "99999999999999999999999"])),
    "version_id": (st.just("nope"), CLI_NEAR),
    "statement": (
        st.sampled_from(
            [
                "CREATE TABLE IF NOT EXISTS t (a INTEGER)",
                "INSERT INTO t VALUES (1)",
                "SELECT * FROM t",
                SQL_TYPES,
            ]
        ),
        st.sampled_from(["SELEKT", "ATTACH 'x'", "SELECT '\ud800'", "SELECT 1; SELECT 2", "PRAGMA version", ""]),
    ),
    "params": (st.sampled_from(["[1]", '{"a": 1}']), st.sampled_from(["[", "[[1]]", '["\\ud800"]', "5", "[1e999]"])),
    "metadata": (st.just('{"lang": "en"}'), st.sampled_from(["{", "[1]", '{"a": {"b": 1}}', '{"n": NaN}'])),
    "title": (TEXT, CLI_NEAR),
    "subject_pos": (TEXT, CLI_NEAR),
    "relation": (st.just("lives_in"), CLI_NEAR),
    "entity": (TEXT, CLI_NEAR),
    "hops": (st.sampled_from(["1", "2"]), st.sampled_from(["0", "4", "x"])),
    "session": (TEXT, CLI_NEAR),
    "steps": (st.just("noop_missing"), CLI_NEAR),
    "queue_ids": (st.lists(st.just("xq-1"), max_size=1), st.lists(CLI_NEAR, min_size=1, max_size=2)),
    "limit": (st.just("2"), st.sampled_from(["0", "-1", "x"])),
    "worker": (st.just("w1"), CLI_NEAR),
    "settings": (
        st.lists(st.sampled_from(["char_limit=4000", "bulk_check_cap=10", 'policy="newest_wins"']), max_size=2),
        st.lists(
            st.sampled_from(["nope=1", "char_limit=-1", "x", "blacklist=1e300", "char_limit=" + "[" * 3000]),
            min_size=1,
            max_size=2,
        ),
    ),
    "memory_type_pos": (st.just("residence"), CLI_NEAR),
    "subject_type_pos": (st.just("person"), CLI_NEAR),
    "known_types": (st.just("person,project"), CLI_NEAR),
    "profile_owner": (TEXT, CLI_NEAR),
    "action": (st.sampled_from(["verify", "status", "repair"]), CLI_NEAR),
    "suite": (st.just("no-such-suite"), CLI_NEAR),
    "data": (st.just("/nonexistent/corpus"), CLI_NEAR),
    "runs": (st.just("bm25_only"), CLI_NEAR),
    "eval_embedder": (st.just("hashing"), CLI_NEAR),
} | SERVICE_VALUES  # serve, keys, mcp
VALUES.update(MODEL_VALUES)  # ask, eval locomo-qa
VALUES.update(REMEMBER_VALUES)  # lenses, frames, captures, decisions, render, context, events, receipt
VALUES.update(ERASURE_VALUES)  # erase, erasures, erasure-recover
VALUES.update(COMPOUNDING_VALUES)  # consolidate, consolidation-runs, -undo, lineage
VALUES.update(BYID_VALUES)  # get-by-id, update-by-id, verify --id
VALUES.update(CATEGORY_VALUES)  # category-define, categories, assign-category, link, links
VALUES.update(OBSERVE_VALUES)  # observe-record, observe-crystallize, observe-status, observe-extract
VALUES.update(LEARNING_VALUES)  # learnings, learning-decide
VALUES.update(SCOPE_VALUES)  # clear-undo, promote --to-scope
SWITCHES = ("pin", "proposed", "dry_run", "string", "apply", "admin", "whole_tenant")


def _dest(flags: tuple[str, ...], options: dict[str, Any], verb: str) -> str:
    if options.get("dest"):
        return options["dest"]
    name = flags[0].lstrip("-").replace("-", "_")
    if not flags[0].startswith("-") and name in ("subject", "memory_type", "subject_type"):
        return name + "_pos"  # a positional of the same name as a set option
    return name


@st.composite
def command(draw, verb: Verb) -> list[Any]:
    """argv after the verb: KEY, positionals, and options, each plausible or (up to two) garbage."""
    slots: list[tuple[str, tuple[str, ...], dict[str, Any]]] = []
    if verb.key:
        slots.append(("key", ("key",), {}))
    if verb.scope:
        slots.append(("scope", ("--scope",), {}))
    slots += [(_dest(a.flags, dict(a.options), verb.name), a.flags, dict(a.options)) for a in verb.arguments]
    corrupt: set[str] = set()
    if draw(st.sampled_from(["clean", "clean", "corrupt"])) == "corrupt":
        corrupt = draw(st.sets(st.sampled_from([s[0] for s in slots] or ["none"]), min_size=1, max_size=2))
    positional: list[Any] = []
    optional: list[Any] = []
    for dest, flags, options in slots:
        bad = dest in corrupt
        if dest == "file":
            value: Any = File(verb.name if not bad else draw(st.sampled_from([*NEAR_FILES, *NEAR_PATHS])))
        elif dest == "out":
            value = Out(draw(st.sampled_from(["folder", "missing", "surrogate", "nul"])) if bad else "ok")
        elif options.get("action") == "store_true":
            if draw(st.booleans()):
                optional.append(flags[0])
            continue
        elif "choices" in options:
            value = draw(st.one_of(CLI_NEAR, st.just("bogus"))) if bad else draw(st.sampled_from(options["choices"]))
        else:
            good, near = VALUES[dest]
            value = draw(near if bad else good)
        if isinstance(value, list):  # nargs="*"
            (positional if not flags[0].startswith("-") else optional).extend(value)
        elif not flags[0].startswith("-"):
            positional.append(value)
        elif bad or options.get("required") or draw(st.booleans()):
            optional += [flags[0], value]
    if draw(st.sampled_from(["as is"] * 15 + ["unknown", "extra"])) == "unknown":
        optional += ["--no-such-option", "1"]
    elif draw(st.booleans()) and corrupt:
        positional.append(draw(CLI_NEAR))
    return positional + optional


@st.composite
def invocations(draw, verbs: list[str]) -> tuple[str, list[str], list[Any]]:
    name = draw(st.sampled_from(verbs))
    identity = list(IDENTITY)
    shape = draw(st.sampled_from(["as is"] * 8 + ["admin", "no tenant", "bad user"]))
    if shape == "admin":
        identity.append("--admin")
    elif shape == "no tenant":
        identity = identity[2:]
    elif shape == "bad user":
        identity[3] = draw(CLI_NEAR)
    return name, identity, draw(command(VERBS[name]))


class Cli:
    def __init__(self, root: Path) -> None:
        self.root, self.home = root, root / "home"
        self.counter = itertools.count()
        self.seen: dict[tuple[str, str], int] = {}
        with Memory.open(self.home, clock=FixedClock(T0), embedder="hashing") as memory:
            tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
            tool.set("k1", "Berlin")
            tool.doc_put("readme", "# Readme\n\nAna lives in Berlin.\n")
            tool.sql_exec("CREATE TABLE t (a INTEGER)")
            admin = memory.for_run(Identity(tenant="acme", user="root", admin=True))
            admin.lens_define("dev", capabilities=["read", "capture", "decide"])
            admin.lens_assign("dev", "agent:helper")
            self.ids = {FRAME: tool.frame_open("fix", "fuzz").frame_id}
            self.ids[DECISION] = tool.decide("act", "fuzz", lens_id="dev").decision_id
            self.receipt = json.dumps({"receipt": encode(tool.render().receipt)})

    def path(self, value: Any) -> str:
        n = next(self.counter)
        if isinstance(value, Out):
            return {
                "ok": str(self.root / f"out-{n}.json"),
                "folder": str(self.root),
                "missing": str(self.root / "missing" / "out.json"),
                "surrogate": str(self.root / "out-\ud800.json"),
                "nul": str(self.root / "out\x00.json"),
            }[value.kind]
        if value.kind in NEAR_PATHS:
            return {
                "missing": str(self.root / "missing.json"),
                "folder": str(self.root),
                "surrogate": str(self.root / "in-\ud800.json"),
                "nul": str(self.root / "in\x00.json"),
            }[value.kind]
        path = self.root / f"in-{n}"
        if value.kind in NEAR_FILES:
            path.write_bytes(NEAR_FILES[value.kind])
        elif value.kind == "receipt":
            path.write_text(self.receipt, encoding="utf-8")
        elif GOOD_FILES.get(value.kind) == "SNAPSHOT":
            with Memory.open(self.home, read_only=True) as memory:
                payload = memory.for_run(Identity(tenant="acme", user="ana", agent="helper")).snapshot()
            path.write_text(json.dumps(payload), encoding="utf-8")
        else:
            path.write_text(GOOD_FILES.get(value.kind, "[]"), encoding="utf-8")
        return str(path)

    def state(self, sql: bool) -> tuple:
        with Memory.open(self.home, read_only=True) as memory:
            tables = store_snapshot(memory)
        dbs = {}
        for db in sorted((self.home / "sql").glob("*.duckdb")) if sql else ():
            with duckdb.connect(str(db), read_only=True) as con:
                names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
                if names:  # a refused first statement may leave its scope's database created, and empty
                    dbs[db.name] = {n: sorted(map(repr, con.execute(f'SELECT * FROM "{n}"').fetchall())) for n in names}
        return tables, dbs

    def run(self, name: str, identity: list[str], rest: list[Any]) -> None:
        argv = ["--home", str(self.home), "--embedder", "hashing", *identity, "--json", name]
        argv += [self.path(a) if isinstance(a, (File, Out)) else self.ids.get(a, a) for a in rest]
        before = self.state(sql=name == "sql-exec")
        lines: list[str] = []
        stdout = io.StringIO()
        with redirect_stdout(stdout):
            code = main(argv, out=lambda text: lines.append(text.encode("utf-8").decode("utf-8")))
        assert stdout.getvalue() == "", f"{argv!r}: wrote to stdout beside its answer"
        assert len(lines) == 1, f"{argv!r}: {len(lines)} documents"
        doc = json.loads(lines[0])
        if code == 0:
            self.seen[(name, "ok")] = self.seen.get((name, "ok"), 0) + 1
            return
        error = doc["error"]
        assert set(error) >= {"code", "status", "message"} and isinstance(error["status"], int), doc
        assert error["code"] != "INTERNAL", f"{argv!r:.500}: an untyped failure: {error['message']}"
        self.seen[(name, error["code"])] = self.seen.get((name, error["code"]), 0) + 1
        if error["code"] != "AUDIT_BROKEN":
            assert self.state(sql=name == "sql-exec") == before, (
                f"{argv!r:.500}: refused ({error['code']}) but changed the store"
            )


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    return Cli(tmp_path_factory.mktemp("cli-fuzz"))


def fuzz(cli: Cli, verbs: list[str], examples: int) -> None:
    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(invocations(verbs))
    def property_(invocation):
        cli.run(*invocation)

    property_()


def test_every_registered_verb_is_fuzzed_with_every_argument():
    # The verbs are enumerated from the registry: a new verb is fuzzed as soon as it is registered,
    # and each of its arguments needs a plausible value here.
    assert len(VERBS) >= 40
    dests = {
        _dest(a.flags, dict(a.options), v.name)
        for v in VERBS.values()
        for a in v.arguments
        if "choices" not in a.options and a.options.get("action") != "store_true"
    }
    assert dests - set(VALUES) <= {"file", "out"}


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_each_verb_answers_one_json_document_typed_and_a_refusal_changes_nothing(cli, verb):
    fuzz(cli, [verb], 2)


@pytest.mark.slow
def test_cli_fuzz_at_scale(cli):
    fuzz(cli, sorted(VERBS), 1500)
    refused = sum(n for (_, code), n in cli.seen.items() if code != "ok")
    print(f"cli fuzz: {sum(cli.seen.values())} commands, {refused} refused (typed JSON, store unchanged), 0 INTERNAL")
    print("cli fuzz: codes:", sorted({code for _, code in cli.seen}))


def _boom(call: Call) -> Any:
    raise RuntimeError("secret value 'diagnosis' in an unexpected place")


def test_an_unexpected_failure_is_an_internal_json_error_never_a_traceback(home, monkeypatch, capsys):
    monkeypatch.setitem(VERBS, "boom", Verb("boom", "fails on purpose", _boom, scope=False, writes=True))
    lines: list[str] = []
    code = main(["--home", str(home), *IDENTITY, "--json", "boom"], out=lines.append)
    assert code != 0 and len(lines) == 1
    error = json.loads(lines[0])["error"]
    assert error["code"] == "INTERNAL" and error["status"] == 500 and "RuntimeError" in error["message"]
    assert "diagnosis" not in error["message"]  # the exception's text may quote stored data
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out and "Traceback" not in captured.err
    assert not home.exists()  # the home a failed write created is gone, as after a refusal
    main(["--home", str(home), *IDENTITY, "--debug", "--json", "boom"], out=lines.append)
    assert "Traceback" in capsys.readouterr().err and len(lines) == 2  # the traceback only with --debug, on stderr
    monkeypatch.setenv("MEMCORE_DEBUG", "1")
    assert main(["--home", str(home), *IDENTITY, "boom"], out=lines.append) != 0 and len(lines) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "[INTERNAL]" in err


@pytest.mark.parametrize(
    "content,code",
    [
        (b"\xff\xfe not utf-8", "NOT_UTF8"),
        (("[" * 5000 + "]" * 5000).encode(), "VALUE_TOO_DEEP"),
        (b'[{"key": "k\\ud800", "value": 1}]', "NOT_UTF8"),
    ],
)
def test_a_file_that_cannot_be_read_is_a_typed_json_error(home, tmp_path, content, code):
    path = tmp_path / "entries.json"
    path.write_bytes(content)
    lines: list[str] = []
    assert main(["--home", str(home), *IDENTITY, "--json", "bulk-set", str(path)], out=lines.append) == 1
    assert json.loads(lines[0])["error"]["code"] == code


def test_an_argument_that_is_not_utf8_is_answered_in_json(home):
    # What a shell passes for undecodable bytes: a lone surrogate (surrogateescape).
    lines: list[str] = []
    assert main(["--home", str(home), *IDENTITY, "--json", "set", "k\udcff", "v"], out=lines.append) == 1
    assert json.loads(lines[0])["error"]["code"] == "NOT_UTF8"


def test_sql_answers_of_every_type_are_one_json_document(home):
    lines: list[str] = []
    assert main(["--home", str(home), *IDENTITY, "--json", "sql-exec", SQL_TYPES], out=lines.append) == 0
    row = json.loads(lines[0])["rows"][0]
    assert row[:5] == ["2024-01-01", "10:00:00", "616263", "1.50", row[4]] and len(row[4]) == 36
    assert row[5:] == [86400.0, None, [None], {"a": 1}]  # NaN and infinities are null: JSON has no spelling
