"""No module of the package imports, even for types only or lazily, a module that imports it
back (issue 25): a cycle means two modules that are one, or a type that lives in the wrong
one. The agent and its tools were one (agents/_tools.py now types the agent it drives as a
Protocol, ToolAgent). The cycles still listed in STILL_CYCLIC are being removed by other
changes; an entry that is no longer a cycle fails this test too, so the list only shrinks."""

from __future__ import annotations

import grimp

STILL_CYCLIC: set[frozenset[str]] = set()


def cycles() -> set[frozenset[str]]:
    graph = grimp.build_graph("lineup_jupyter", include_external_packages=False)
    return {
        frozenset({module, imported})
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if graph.chain_exists(importer=imported, imported=module)
    }


def test_no_module_is_in_an_import_cycle() -> None:
    found = cycles()
    assert frozenset({"lineup_jupyter.agents._agent", "lineup_jupyter.agents._tools"}) not in found
    assert found - STILL_CYCLIC == set()
    assert STILL_CYCLIC - found == set(), "no longer a cycle: remove it from STILL_CYCLIC"
