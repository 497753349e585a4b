"""The layers of the README's layout, checked on the source: data flows one way, and each
layer imports only the layers below it (function-level imports included). The protocol
kernel knows no game; the net layer's parts are layers of their own (transport, below
reaching a peer, below play), and transport imports no protocol; the test tools
(`p2pgotg.testing`) are imported by nothing in the program."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "p2pgotg"

# layer -> what it must never import (its own package and the layers below it are fine).
# A name forbids that module and everything under it ("net" forbids p2pgotg.net.play.x);
# a file obeys the row of every layer it is in (net/transport/ obeys "net" too).
FORBIDDEN = {
    "rules": {"crypto", "protocol", "games", "reach", "net", "players", "ui", "cli", "trio",
              "prompt_toolkit", "testing"},
    "crypto": {"protocol", "games", "reach", "net", "players", "ui", "cli", "trio",
               "prompt_toolkit", "testing"},
    "protocol": {"games", "reach", "net", "players", "ui", "cli", "trio", "prompt_toolkit",
                 "testing"},
    # a game module may name its bot (GotG's lives in players), never a driver
    "games": {"reach", "net", "ui", "cli", "trio", "prompt_toolkit", "testing"},
    "reach": {"protocol", "games", "players", "net", "ui", "cli", "trio", "prompt_toolkit",
              "testing"},
    "players": {"reach", "net", "ui", "cli", "trio", "prompt_toolkit", "testing"},
    "net": {"ui", "cli", "prompt_toolkit", "testing"},
    # bytes between two ends: opaque frames, nothing of the game or how a peer is reached
    "net.transport": {"net.reaching", "net.play", "protocol", "games", "rules", "players",
                      "reach", "ui", "cli", "prompt_toolkit", "testing"},
    # reaching a peer: the transport, the reach codecs and the control frames; no game
    "net.reaching": {"net.play", "games", "rules", "players", "ui", "cli", "prompt_toolkit",
                     "testing"},
    # the play session: the transport, reaching, the protocol and the games
    "net.play": {"ui", "cli", "prompt_toolkit", "testing"},
    "ui": {"cli", "testing"},
    # the test tools may use the game and its players, never the program's drivers
    "testing": {"reach", "net", "ui", "cli", "prompt_toolkit"},
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def layer_of(module: str) -> str:
    """The top-level layer of `module`: `net` for p2pgotg.net.play.session, `trio` for
    trio.lowlevel."""
    parts = module.split(".")
    if parts[0] == "p2pgotg":
        return parts[1] if len(parts) > 1 else ""
    return parts[0]


def is_forbidden(module: str, forbidden: set[str]) -> bool:
    """Whether `module` is, or is inside, a layer of `forbidden` (names as in FORBIDDEN)."""
    parts = module.split(".")
    place = ".".join(parts[1:]) if parts[0] == "p2pgotg" else parts[0]
    return any(place == name or place.startswith(name + ".") for name in forbidden)


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    wrong = []
    for path in sorted(PACKAGE.joinpath(*layer.split(".")).rglob("*.py")):
        for module in imported_modules(path):
            if is_forbidden(module, FORBIDDEN[layer]):
                wrong.append(f"{path.relative_to(PACKAGE.parent)} imports {module}")
    assert not wrong, "\n".join(wrong)


def test_nothing_in_the_program_imports_the_test_tools() -> None:
    """The wheel ships `p2pgotg.testing` for tests, benchmarks and the conformance runner;
    no other module of the package (the top-level ones included) may depend on it."""
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "testing":
            continue
        for module in imported_modules(path):
            if layer_of(module) == "testing":
                wrong.append(f"{path.relative_to(PACKAGE.parent)} imports {module}")
    assert not wrong, "\n".join(wrong)


def signing_keys(path: Path) -> list[str]:
    """The key of every signing call in `path`, as source text: the first argument of
    `seal(key, body)` and `sign(key, body)`, the object of `key.sign(data)`."""
    keys = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name not in ("seal", "sign"):
            continue
        if isinstance(func, ast.Attribute) and name == "sign" and len(node.args) == 1:
            keys.append(ast.unparse(func.value))  # key.sign(data)
        elif node.args:
            keys.append(ast.unparse(node.args[0]))  # seal(key, body), sign(key, body)
    return keys


def test_the_test_tools_sign_only_with_the_peers_own_key() -> None:
    """A cheater's forged message is signed with its own key; nothing in the package can
    sign as another peer (such messages are made outside it: protocol/scenarios.py)."""
    wrong = [f"{path.relative_to(PACKAGE.parent)} signs with {key}"
             for path in sorted((PACKAGE / "testing").rglob("*.py"))
             for key in signing_keys(path) if key != "peer._key"]
    assert not wrong, "\n".join(wrong)


def test_the_signing_check_sees_another_key(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f(peer, key, body):\n    a = seal(peer._key, body)\n"
                      "    b = seal(key or peer._key, body)\n    return key.sign(body)\n")
    assert signing_keys(source) == ["peer._key", "key or peer._key", "key"]


def packages_in(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}


def test_every_package_has_a_row() -> None:
    """A new package of p2pgotg, or a new part of the net layer, must say what it may not
    import."""
    packages = packages_in(PACKAGE) | {f"net.{part}" for part in packages_in(PACKAGE / "net")}
    assert packages == set(FORBIDDEN)


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The checker itself finds an import buried in a function, and places it in its layer
    and its part."""
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from p2pgotg.net.play.session import GameSession\n")
    assert "p2pgotg.net.play.session" in imported_modules(source)
    assert layer_of("p2pgotg.net.play.session") == "net"
    assert is_forbidden("p2pgotg.net.play.session", FORBIDDEN["rules"])
    assert is_forbidden("p2pgotg.net.play.session", FORBIDDEN["net.reaching"])
    assert not is_forbidden("p2pgotg.net.transport.tls", FORBIDDEN["net.reaching"])
    assert is_forbidden("p2pgotg.protocol.control", FORBIDDEN["net.transport"])
    assert is_forbidden("p2pgotg.protocol", FORBIDDEN["net.transport"])
    assert not is_forbidden("p2pgotg.protocolx", FORBIDDEN["net.transport"])
    assert is_forbidden("p2pgotg.games.gotg.peer", FORBIDDEN["protocol"])


def test_a_games_rules_engine_and_bot_import_no_protocol() -> None:
    """A game's rules engine is pure (it imports only itself), and its bot only the rules
    and itself: both run without the protocol, the network or a screen."""
    wrong = []
    for game in sorted(p for p in (PACKAGE / "games").iterdir() if p.is_dir()):
        for part, allowed in (("rules", {"rules"}), ("players", {"rules", "players"})):
            for path in sorted((game / part).rglob("*.py")):
                for module in imported_modules(path):
                    parts = module.split(".")
                    if parts[0] != "p2pgotg":
                        continue
                    if parts[1:3] != ["games", game.name] or parts[3] not in allowed:
                        wrong.append(f"{path.relative_to(PACKAGE.parent)} imports {module}")
    assert not wrong, "\n".join(wrong)
