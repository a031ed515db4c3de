"""The containment of issue 13 in Notebook 7: the same attacks as in JupyterLab, against the
same host in a Notebook 7 page (the widget, shell and bridge are the same code; the page
around them is not): fresh realms and unhashed scripts (S3, U6), sibling forgery through
top.frames (S4), huge clones at the gate, a refusal flood and a surface's own file input.
Each test is the JupyterLab one, run here with this module's Notebook 7 session. The controls
that prove the detectors are frame-level pages and run once, in test_containment_scripts.py
and test_containment_gate.py. The copy-hijack test is left to JupyterLab: it seeds the
clipboard from the page, which Notebook 7's page refuses while unfocused (the guard is the
bridge's, the same code in both). Focus in Notebook 7: test_containment_focus.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

from .canary import Canary, CanaryServer
from .containment import Lab, lab_session
from .jupyter import JupyterServer
from .test_containment_gate import BUNDLES as GATE_BUNDLES
from .test_containment_gate import (
    test_a_refusal_flood_is_bounded_by_the_event_rate,
    test_a_surface_cannot_open_its_own_file_input,
    test_huge_structured_clones_never_reach_the_page,
    test_sibling_forgery_through_top_frames_is_not_taken,
)
from .test_containment_scripts import BUNDLES as SCRIPT_BUNDLES
from .test_containment_scripts import test_no_script_but_the_hosts_runs_in_any_frame

__all__ = [
    "test_a_refusal_flood_is_bounded_by_the_event_rate",
    "test_a_surface_cannot_open_its_own_file_input",
    "test_huge_structured_clones_never_reach_the_page",
    "test_no_script_but_the_hosts_runs_in_any_frame",
    "test_sibling_forgery_through_top_frames_is_not_taken",
]


@pytest.fixture(scope="module")
def canary() -> Iterator[Canary]:
    server = CanaryServer()
    yield server.canary
    server.stop()


@pytest.fixture(scope="module")
def lab(browser: Browser, jupyter: JupyterServer, canary: Canary) -> Iterator[Lab]:
    bundles = {b["id"]: b for b in [*SCRIPT_BUNDLES, *GATE_BUNDLES]}
    yield from lab_session(
        browser, jupyter, canary, list(bundles.values()), "containment-nb7", ui="notebook"
    )
