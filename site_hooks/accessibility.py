"""What Material's page template leaves out for a screen reader, added to every page.

axe-core (run on every page by tests/site/test_browser.py) reports Material's search dialog as
a dialog without a name: a screen reader announces "dialog" and nothing else. The dialog gets
the name of what it is for. The template's markup is matched exactly, so when a Material
upgrade changes it the build says so (a warning, a failure under --strict) instead of silently
dropping the name.

The rest of the site's accessibility lives where it acts: contrast and underlined links in
assets/stylesheets/course.css, checklists in assets/javascripts/checklists.js, scrollable
regions in assets/javascripts/scroll-regions.js.
"""

from __future__ import annotations

from mkdocs.plugins import get_plugin_logger

log = get_plugin_logger(__name__)

SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
NAMED_SEARCH_DIALOG = SEARCH_DIALOG.replace('role="dialog"', 'role="dialog" aria-label="Search"')


def name_search_dialog(html: str, where: str) -> str:
    """`html` with Material's search dialog named "Search"; a warning when it is not found."""
    if SEARCH_DIALOG not in html:
        log.warning(f"{where}: Material's search dialog markup has changed; update "
                    "site_hooks/accessibility.py so the dialog keeps its name")
        return html
    return html.replace(SEARCH_DIALOG, NAMED_SEARCH_DIALOG, 1)


def on_post_page(output: str, page, config) -> str:
    return name_search_dialog(output, page.file.src_uri)


def on_post_template(output_content: str, template_name: str, config) -> str:
    """Static templates (Material's 404.html) carry the same header and search dialog."""
    if template_name.endswith(".html"):
        return name_search_dialog(output_content, template_name)
    return output_content
