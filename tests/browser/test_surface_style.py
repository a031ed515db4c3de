"""What a surface and the host view look like before anyone styles them (issue 24, polish).

- A surface without css follows the notebook: the host's default stylesheet (frames.js
  SURFACE_DEFAULT_CSS) sets the theme's font and colours through the --lineup-* variables, not
  the browser's Times; a bundle's own css wins over it.
- The dev mode line ("Dev mode: any inline bundle ... opens") is said once a page, not under
  every host view.
"""

from __future__ import annotations

from playwright.sync_api import expect

from .conftest import OpenNotebook
from .test_surfaces import card, surface

OPEN = """
from lineup_jupyter import Host
host = Host(conversation_id="conv_style")
agent = host.connect_agent("agent_style")
agent.open("plain.1", html="<p id=p>plain</p><code id=c>x</code>")
agent.open("styled.1", html="<p id=p>styled</p>", css="p { font-family: monospace; }")
host
"""

FONT = "(node) => getComputedStyle(node).fontFamily"


def test_a_surface_without_css_gets_the_notebooks_font_and_its_own_css_wins(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_notebook([OPEN])
    page = notebook.page
    theme_font = page.evaluate(
        "() => getComputedStyle(document.body).getPropertyValue('--jp-ui-font-family').trim()"
    )
    assert theme_font  # JupyterLab's own
    plain = surface(page, "plain.1")
    expect(plain.locator("#p")).to_have_text("plain")
    # The theme message has arrived (the bridge sets data-theme), so the variable is set.
    expect(plain.locator(":root")).to_have_attribute("data-theme", "light")
    font = plain.locator("#p").evaluate(FONT)
    assert "serif" not in font.replace("sans-serif", ""), font  # never the browser's Times
    assert font.replace(" ", "") == theme_font.replace(" ", ""), (font, theme_font)
    code_font = plain.locator("#c").evaluate(FONT)
    assert code_font != font and "mono" in code_font.lower(), code_font
    styled = surface(page, "styled.1")
    expect(styled.locator("#p")).to_have_text("styled")
    assert styled.locator("#p").evaluate(FONT) == "monospace"  # the bundle's css wins


TWO_VIEWS = """
from lineup_jupyter import Host
first = Host(conversation_id="conv_dev_1")
second = Host(conversation_id="conv_dev_2")
first.connect_agent("agent_a").open("a.1", html="<p>a</p>")
second.connect_agent("agent_b").open("b.1", html="<p>b</p>")
display(first, second, first)
"""


def test_the_dev_mode_line_is_said_once_a_page(open_notebook: OpenNotebook) -> None:
    notebook = open_notebook([TWO_VIEWS])
    page = notebook.page
    expect(page.locator(".lineup-host")).to_have_count(3)
    expect(card(page, "b.1")).to_have_count(1)
    lines = page.locator(".lineup-host .lineup-trust")
    expect(lines).to_have_count(3)  # every view has the line...
    visible = page.locator(".lineup-host .lineup-trust:visible")
    expect(visible).to_have_count(1)  # ...and one page shows it
    expect(visible).to_have_text(
        "Dev mode: any inline bundle that passes the protocol's checks opens."
    )


INSPECTOR = """
from lineup_jupyter import Host
host = Host(conversation_id="conv_inspector_style")
host.connect_agent("agent_i").open("i.1", html="<p>i</p>")
host.inspector
"""

STYLE = """(node) => { const s = getComputedStyle(node); return {
  background: s.backgroundColor, borderTop: s.borderTopStyle, borderBottom: s.borderBottomStyle,
  radius: s.borderTopLeftRadius, font: s.fontFamily,
  parentFont: getComputedStyle(node.parentElement).fontFamily,
}; }"""


def test_the_inspectors_tabs_and_menus_are_styled_like_the_notebook(
    open_notebook: OpenNotebook,
) -> None:
    """Not the browser's default buttons and selects: flat tabs with the selected one
    underlined, menus and the export button in the theme's colours and font."""
    notebook = open_notebook([INSPECTOR])
    inspector = notebook.page.locator(".lineup-inspector")
    expect(inspector.locator(".lineup-inspector-row").first).to_be_visible()
    tab = inspector.locator(".lineup-inspector-tab", has_text="Calls").evaluate(STYLE)
    assert tab["background"] == "rgba(0, 0, 0, 0)" and tab["borderTop"] == "none", tab
    assert tab["font"] == tab["parentFont"], tab  # the inspector's font, not the system's
    selected = inspector.locator('.lineup-inspector-tab[aria-selected="true"]').evaluate(STYLE)
    assert selected["borderBottom"] == "solid", selected
    for control in (
        inspector.get_by_label("Filter by type"),
        inspector.locator(".lineup-inspector-export"),
    ):
        look = control.evaluate(STYLE)
        assert look["borderTop"] == "solid" and look["radius"] == "2px", look
        assert look["font"] == look["parentFont"], look
    health = inspector.get_by_label("health checks")
    expect(health).not_to_be_checked()  # health checks hidden unless asked
