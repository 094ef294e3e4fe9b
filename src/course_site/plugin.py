"""The build, event by event: the one place that knows which part of the site runs when.

MkDocs calls a plugin's `on_<event>` methods (https://www.mkdocs.org/dev-guide/plugins/). This
plugin is listed last in mkdocs.yml's `plugins`, so at equal priority its events run after
Material's search, mkdocs-jupyter and mkdocstrings. Within an event the parts run in the order
written here; the order matters where one part reads what another wrote (the student edition
drops teacher blocks before any other part reads the page; Try-it boxes and fence options are
rewritten before the blocks are run; prediction boxes read their keys from the blocks' output).

Three events need another priority than the other plugins', given with `event_priority`:
generated pages are compared with the last build's after every plugin has added its files
(`serve`); the cache of executed labs is kept from mkdocs-jupyter's own post-build clean-up
(`serve`); the search index is rewritten after Material has written it.
"""

from __future__ import annotations

from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from course_site import (
    editions,
    fences,
    figures,
    notebooks,
    outputs,
    predictions,
    run_pages,
    search_index,
    serve,
    try_it,
    vendor_assets,
)


class CourseSite(BasePlugin):
    """The `course-site` plugin of mkdocs.yml."""

    def on_startup(self, *, command: str, dirty: bool) -> None:
        for part in (notebooks, serve):
            part.on_startup(command, dirty)

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        config = editions.on_config(config)
        vendor_assets.check_installed(config)         # node_modules/ as pinned, or fail now
        for part in (run_pages, serve):
            config = part.on_config(config)
        return config

    def on_pre_build(self, *, config: MkDocsConfig) -> None:
        outputs.on_pre_build(config)
        serve.on_pre_build(config)

    def _add_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        for part in (editions, vendor_assets, try_it, run_pages, figures):
            files = part.on_files(files, config)
        return files

    @event_priority(-100)
    def _keep_unchanged_pages(self, files: Files, *, config: MkDocsConfig) -> Files:
        return serve.on_files(files, config)

    on_files = CombinedEvent(_add_files, _keep_unchanged_pages)

    def on_page_markdown(self, markdown: str, *, page: Page, config: MkDocsConfig,
                         files: Files) -> str:
        markdown = editions.on_page_markdown(markdown, page, config, files)
        markdown = try_it.expand(markdown, page.file.src_uri)
        markdown = fences.warned(*fences.rewrite_fences(markdown, page.file.src_uri))
        markdown = predictions.on_page_markdown(markdown, page, config, files)
        for part in (outputs, search_index):
            markdown = part.on_page_markdown(markdown, page, config, files)
        predictions.after_blocks_ran(page, outputs.results(f"docs/{page.file.src_uri}"))
        return markdown

    def on_page_content(self, html: str, *, page: Page, config: MkDocsConfig,
                        files: Files) -> str:
        for part in (outputs, predictions, notebooks, figures):
            html = part.on_page_content(html, page, config, files)
        return html

    def on_page_context(self, context: Any, *, page: Page, config: MkDocsConfig,
                        nav: Any) -> Any:
        return search_index.on_page_context(context, page, config, nav)

    @event_priority(100)
    def _clean_lab_cache(self, *, config: MkDocsConfig) -> None:
        serve.on_post_build(config)

    @event_priority(-100)
    def _finish(self, *, config: MkDocsConfig) -> None:
        outputs.on_post_build(config)
        predictions.on_post_build(config)
        search_index.on_post_build(config)

    on_post_build = CombinedEvent(_clean_lab_cache, _finish)
