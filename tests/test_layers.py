"""The layers of GUIDE section 2, checked on the source: data flows one way, and each
layer imports only the layers below it (function-level imports included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "p2pgotg"

# layer -> what it must never import (its own package and the layers below it are fine)
FORBIDDEN = {
    "rules": {"crypto", "protocol", "reach", "net", "players", "ui", "cli", "trio",
              "prompt_toolkit"},
    "crypto": {"protocol", "reach", "net", "players", "ui", "cli", "trio", "prompt_toolkit"},
    "protocol": {"reach", "net", "players", "ui", "cli", "trio", "prompt_toolkit"},
    "reach": {"protocol", "players", "net", "ui", "cli", "trio", "prompt_toolkit"},
    "players": {"reach", "net", "ui", "cli", "trio", "prompt_toolkit"},
    "net": {"ui", "cli", "prompt_toolkit"},
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
    parts = module.split(".")
    if parts[0] == "p2pgotg":
        return parts[1] if len(parts) > 1 else ""
    return parts[0]


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    wrong = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for module in imported_modules(path):
            if layer_of(module) in FORBIDDEN[layer]:
                wrong.append(f"{path.relative_to(PACKAGE.parent)} imports {module}")
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The checker itself finds an import buried in a function."""
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from p2pgotg.net.session import GameSession\n")
    assert "p2pgotg.net.session" in imported_modules(source)
    assert layer_of("p2pgotg.net.session") == "net"
