"""The recorded transcripts in protocol/ and the `verify` command on real files."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from p2pgotg.cli import main
from p2pgotg.games import replay
from p2pgotg.net.play.transcript_file import TranscriptFile
from p2pgotg.protocol import HOST, Finding, TranscriptError, parse
from p2pgotg.testing.pair import Pair
from protocol.scenarios import write_transcripts

ROOT = Path(__file__).parent.parent / "protocol" / "transcripts"
EXPECTED = json.loads((ROOT / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_recorded_transcript_gets_its_expected_verdict(name: str, capsys) -> None:
    expected = EXPECTED[name]
    assert main(["verify", str(ROOT / name)]) == expected["exit"]
    out = capsys.readouterr().out
    if expected["rule"]:
        assert re.search(rf"\b{expected['cheater']}\)? broke rule {expected['rule']}\b", out)
    else:
        assert ("verdict:" in out or "result:" in out) and "broke rule" not in out
    if expected["winner"] == "draw":
        assert "result:     draw (" in out
    elif expected["winner"] == "none":  # a table's game with no winner (SPEC 5.5, 5.2)
        assert "wins" not in out
        assert expected["exit"] == 1 or "result:     no winner" in out
    elif expected["winner"]:
        assert re.search(rf"result: .*\b{expected['winner']}\)? wins", out)
    if expected["termination"]:
        assert f"({expected['termination'].replace('_', ' ')})" in out
    if expected["exit"] == 4:
        assert "claimant's word" in out


def _conforms(value: object, schema: dict) -> bool:
    """The few JSON Schema keywords expected.schema.json uses (no dependency for more)."""
    if "enum" in schema and value not in schema["enum"]:
        return False
    if "const" in schema and value != schema["const"]:
        return False
    kinds = schema.get("type")
    if kinds is not None:
        names = {"string": str, "object": dict, "null": type(None)}
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if not any(isinstance(value, names[k]) for k in kinds):
            return False
    if isinstance(value, dict):
        if any(k not in value for k in schema.get("required", ())):
            return False
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is False and set(value) - set(props):
            return False
        if not all(_conforms(value[k], sub) for k, sub in props.items() if k in value):
            return False
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and not all(_conforms(v, extra) for v in value.values()):
            return False
        for rule in schema.get("allOf", ()):
            if _conforms(value, rule["if"]) and not _conforms(value, rule["then"]):
                return False
    return True


def test_the_recorded_files_are_what_the_scenarios_write(tmp_path: Path) -> None:
    """`python -m protocol.scenarios protocol/transcripts` rewrites the recorded games byte
    for byte: the files another implementation tests against are the scenarios' own."""
    write_transcripts(tmp_path)
    written = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    recorded = {p.name: p.read_bytes() for p in ROOT.iterdir()
                if p.name != "expected.schema.json"}
    assert sorted(written) == sorted(recorded)
    changed = [name for name in written if written[name] != recorded[name]]
    assert not changed, f"the scenarios now write these differently: {changed}"


def test_expected_json_follows_its_schema() -> None:
    """Every entry states its verdict in full: a winner wherever there is a verdict (a draw
    is "draw", never null), the cheater and rule exactly where a rule was broken."""
    schema = json.loads((ROOT / "expected.schema.json").read_text())
    for name, entry in EXPECTED.items():
        assert _conforms({name: entry}, schema), name
    assert not _conforms({"x.gtr": {**EXPECTED["honest-game.gtr"], "winner": None}}, schema)
    assert not _conforms({"x.gtr": {**EXPECTED["equivocate.gtr"], "cheater": None}}, schema)
    table = EXPECTED["table-joiner-equivocates-seat-0.gtr"]
    assert not _conforms({"x.gtr": {**table, "winner": "seat 1"}}, schema)
    assert not _conforms({"x.gtr": {**table, "cheater": "host"}}, schema)
    assert not _conforms({"x.gtr": {**EXPECTED["table-honest-3-seat-0.gtr"], "winner": None}},
                         schema)


def test_both_files_of_one_game_give_one_verdict() -> None:
    """Where both sides' files of one game are recorded (`NAME-host.gtr`, `NAME-joiner.gtr`:
    games whose messages crossed), the two files give the same verdict (SPEC 2.4); the
    message a violation is in is named by its sender's `seq`, the same in both."""
    games: dict[str, list[str]] = {}
    for name in EXPECTED:
        stem = re.sub(r"-(host|joiner)\.gtr$", "", name)
        if stem != name:
            games.setdefault(stem, []).append(name)
    assert len(games) >= 3
    for stem, names in games.items():
        assert sorted(EXPECTED[n]["owner"] for n in names) == ["host", "joiner"], stem
        host, joiner = (replay(parse((ROOT / n).read_bytes())) for n in sorted(names))
        assert host.finding == joiner.finding and host.verdict == joiner.verdict, stem
        assert host.describe().split(" (message ")[0] == \
            joiner.describe().split(" (message ")[0], stem


def test_every_row_of_the_threat_table_has_a_transcript() -> None:
    spec = (Path(__file__).parent.parent / "SPEC.md").read_text()
    table = spec[spec.index("### 2.7"):spec.index("### 2.8")]
    rows = [line.split("|")[1:-1] for line in table.splitlines()
            if line.startswith("| ") and not line.startswith("| cheat")]
    assert len(rows) > 30
    named = {name for row in rows for name in re.findall(r"`([a-z_-]+)`", row[-2])}
    recorded = {e["rule"] for e in EXPECTED.values() if e["rule"]}
    never_convict = {
        "game-id", "sequence", "bad-key",  # prove nothing: files showing them are unreadable
        "bad-signature", "malformed-envelope",  # never recorded: not attributable
        "time_forfeit", "abandonment",  # the results of claims: recorded with exit 4
        # a 2.7 MB file, too big to keep here: built and verified by
        # tests/test_protocol_limits.py from scenarios.limit_filling_game
        "message-limit",
    }
    assert named - recorded - never_convict == set()
    exits = {int(code) for row in rows for code in re.findall(r"\b[0-4]\b", row[-1])}
    assert exits == {0, 1, 2, 4}
    assert exits <= {e["exit"] for e in EXPECTED.values()}


def test_every_row_of_the_towers_threat_table_has_a_transcript() -> None:
    """SPEC 4.11's table of Towers cheats: each rule it names is convicted in a recorded
    Towers game (`towers-*.gtr`), and the honest Towers games give exit 0."""
    spec = (Path(__file__).parent.parent / "SPEC.md").read_text()
    chapter = spec[spec.index("### 4.11"):spec.index("### 4.12")]
    table = chapter[chapter.index("| cheat |"):]
    rows = [line.split("|")[1:-1] for line in table.splitlines()
            if line.startswith("| ") and not line.startswith("| cheat")]
    assert len(rows) >= 5
    named = {name for row in rows for name in re.findall(r"`([a-z_-]+)`", row[-2])}
    towers = {n: e for n, e in EXPECTED.items() if n.startswith("towers-")}
    assert named - {e["rule"] for e in towers.values() if e["rule"]} == set()
    assert {e["exit"] for e in towers.values()} == {0, 1, 4}


def _table_games() -> dict[str, list[str]]:
    games: dict[str, list[str]] = {}
    for name, entry in EXPECTED.items():
        if name.startswith("table-"):
            games.setdefault(entry["game"], []).append(name)
    return games


@pytest.mark.parametrize("game", sorted(_table_games()))
def test_the_files_of_one_table_verified_together_give_its_verdict(game: str, capsys) -> None:
    """SPEC 5.9: every seat's file that held the table's messages to the end gives one
    verdict, and `verify` of them all at once gives it too; where two files each hold one
    version of a message (`together`), only the two at once convict its author."""
    names = sorted(_table_games()[game])
    entries = [EXPECTED[n] for n in names]
    own = [{k: e[k] for k in ("exit", "cheater", "rule", "winner", "termination")}
           for e in entries]
    together = entries[0].get("together", own[0])
    assert all(e.get("together", own[0]) == together for e in entries)
    results = set()
    for name in names:
        main(["verify", str(ROOT / name)])
        out = capsys.readouterr().out
        results.add("\n".join(line for line in out.splitlines()
                              if not line.startswith("transcript:")))
    if "together" not in entries[0]:
        assert len(set(map(str, own))) == 1 and len(results) == 1, game
    assert main(["verify", *(str(ROOT / n) for n in names)]) == together["exit"]
    out = capsys.readouterr().out
    if together["rule"]:
        assert re.search(rf"\b{together['cheater']}\)? broke rule {together['rule']}\b", out)
    else:
        assert "broke rule" not in out
        assert [line for line in out.splitlines() if line.startswith("result:")] == \
            [line for line in results.pop().splitlines() if line.startswith("result:")]


def test_every_row_of_the_table_threat_table_has_a_recorded_table() -> None:
    """SPEC 5.10: each row's cheat is recorded (`table-*.gtr`, its `cheat` starting with the
    row's words), convicting by the rules the row names (seen together where the files
    must be), with the exit the row gives; and the honest tables of three and four."""
    spec = (Path(__file__).parent.parent / "SPEC.md").read_text()
    chapter = spec[spec.index("### 5.10"):]
    table = chapter[chapter.index("| cheat |"):chapter.index("Test material")]
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in table.splitlines()
            if line.startswith("| ") and not line.startswith("| cheat")]
    assert len(rows) == 8
    tables = {n: e for n, e in EXPECTED.items() if n.startswith("table-")}
    for cheat, _, rule, exit_code in rows:
        entries = [e.get("together", e) for e in tables.values()
                   if e["cheat"].startswith(cheat)]
        assert entries, f"no recorded table for: {cheat}"
        assert {e["rule"] for e in entries} == (set(re.findall(r"`([a-z-]+)`", rule))
                                                or {None}), cheat
        if exit_code != "—":
            assert {e["exit"] for e in entries} == {int(exit_code)}, cheat
    honest = {e["game"] for e in tables.values() if e["cheat"].startswith("none: a whole")}
    assert {len(_table_games()[g]) for g in honest} == {3, 4}


def _played_game(tmp_path: Path, name: str, seed: int, moves: int, resign: bool) -> Path:
    """A real game's host transcript: the handshake, `moves` random moves, then the
    joiner's resignation and both audits if `resign`."""
    pair = Pair.new(seed=name)
    pair.handshake(rng=random.Random(seed))
    rng = random.Random(seed)
    for _ in range(moves):
        mover = pair.host if pair.host.my_turn else pair.joiner
        mover.move(rng.choice(mover.view.legal_moves))
        pair.deliver()
    if resign:
        pair.joiner.resign()
        pair.deliver()
    path = tmp_path / f"{name}.gtr"
    f = TranscriptFile.create(path, HOST, pair.host.public_key)
    f.append(pair.host.take_records())
    f.close()
    return path


def _short_game(tmp_path: Path) -> Path:
    return _played_game(tmp_path, "short", seed=11, moves=4, resign=True)


def test_a_transcript_file_is_owner_only_and_verifies(tmp_path: Path) -> None:
    path = _short_game(tmp_path)
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert replay(parse(path.read_bytes())).finding is Finding.CLEAN


@pytest.mark.slow
def test_flipping_any_byte_of_an_honest_transcript_fails_verify(tmp_path: Path) -> None:
    data = _short_game(tmp_path).read_bytes()
    rng = random.Random(1)
    for i in range(len(data)):
        flipped = bytearray(data)
        flipped[i] ^= 1 << rng.randrange(8)
        try:
            finding = replay(parse(bytes(flipped))).finding
        except TranscriptError:  # a clear "cannot read"; anything else fails the test
            continue
        assert finding is not Finding.CLEAN, f"flip at byte {i} went unnoticed"


def test_verify_exit_codes_from_the_command_line(tmp_path: Path) -> None:
    path = _short_game(tmp_path)
    run = [sys.executable, "-m", "p2pgotg", "verify"]
    assert subprocess.run([*run, str(path)], capture_output=True).returncode == 0
    cheat = subprocess.run([*run, str(ROOT / "attacker-lies.gtr")], capture_output=True,
                           text=True)
    assert cheat.returncode == 1 and "false-opening" in cheat.stdout
    missing = subprocess.run([*run, str(tmp_path / "nope.gtr")], capture_output=True, text=True)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    assert "Traceback" not in missing.stderr
    (tmp_path / "junk.gtr").write_bytes(b"\x00\x00\x00\x05hello")
    junk = subprocess.run([*run, str(tmp_path / "junk.gtr")], capture_output=True, text=True)
    assert junk.returncode == 2 and "Traceback" not in junk.stderr
    data = path.read_bytes()
    (tmp_path / "torn.gtr").write_bytes(data[:-3])
    torn = subprocess.run([*run, str(tmp_path / "torn.gtr")], capture_output=True, text=True)
    assert torn.returncode == 2 and "cut short" in torn.stdout


def test_an_unfinished_game_exits_3(tmp_path: Path, capsys) -> None:
    pair = Pair.new(seed="unfinished")
    pair.handshake(rng=random.Random(2))
    path = tmp_path / "u.gtr"
    f = TranscriptFile.create(path, HOST, pair.host.public_key)
    f.append(pair.host.take_records())
    f.close()
    assert main(["verify", str(path)]) == 3
    assert "unfinished" in capsys.readouterr().out


def test_a_torn_tail_is_cut_when_the_owner_reopens(tmp_path: Path) -> None:
    path = _short_game(tmp_path)
    whole = path.read_bytes()
    path.write_bytes(whole + b"\x00\x00\x01\x00partial")
    f, transcript = TranscriptFile.open_existing(path)
    f.close()
    assert path.read_bytes() == whole and not transcript.torn_tail


# -- a torn last record (issue 13, finding 7) ----------------------------------------------


def _unfinished_game(tmp_path: Path) -> Path:
    """A real game in play: both sides' setups revealed and a few moves made."""
    return _played_game(tmp_path, "torn", seed=5, moves=6, resign=False)


def _tear(path: Path) -> None:
    """What a crash while writing leaves: the first part of one more record."""
    data = path.read_bytes()
    path.write_bytes(data + b"\x00\x00\x01\x10" + data[-40:])


def test_verify_of_a_torn_file_says_damaged_tail_and_convicts_no_one(tmp_path, capsys):
    path = _unfinished_game(tmp_path)
    _tear(path)
    assert main(["verify", str(path)]) == 2
    out = capsys.readouterr().out
    assert "damaged tail: the last record is cut short" in out
    assert "never sent" in out and "proves nothing" in out and "unfinished" in out
    assert "broke rule" not in out


def test_a_torn_finished_game_says_what_the_intact_records_show(tmp_path, capsys):
    path = _short_game(tmp_path)  # finished: White or Black resigned, audited
    _tear(path)
    assert main(["verify", str(path)]) == 2
    out = capsys.readouterr().out
    assert "damaged tail" in out and "the records before it show:" in out
    assert "resignation" in out and "broke rule" not in out


def test_a_torn_unfinished_game_is_listed_for_resuming(tmp_path) -> None:
    from p2pgotg.net.play.saved_games import unfinished_games
    from p2pgotg.ui.saved_games import describe_game

    path = _unfinished_game(tmp_path)
    _tear(path)
    pair_key = Pair.new(seed="torn").host  # the same seed: the same host key
    found = unfinished_games(tmp_path, HOST, pair_key._key)
    assert [g.path for g in found] == [path]
    assert describe_game(path, against_bot=False).unfinished
