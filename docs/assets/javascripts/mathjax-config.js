// MathJax 3 configuration for pymdownx.arithmatex (generic mode), served from this site.
// Arithmatex wraps math in `.arithmatex` elements with \( \) and \[ \] delimiters; notebook
// markdown cells (`.jp-RenderedMarkdown`) use $ and $$. Everything else on the page is ignored,
// so a dollar sign in prose or in a completion is never turned into math: every element with a
// class is ignored unless the class is one of those two, and an element without a class
// inherits its parent's state (".+" rather than Material's ".*|", which also ignores the
// unclassed <p> inside a notebook cell).
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"], ["$", "$"]],
    displayMath: [["\\[", "\\]"], ["$$", "$$"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".+",
    processHtmlClass: "arithmatex|jp-RenderedMarkdown",
  },
  startup: {
    typeset: false, // the document$ subscription below typesets every page, the first included
  },
};

// Material swaps pages without reloading (navigation.instant) and emits on `document$` for
// each page, including the first. Typeset once MathJax is ready, after forgetting the old page.
document$.subscribe(() => {
  MathJax.startup.promise = MathJax.startup.promise.then(() => {
    MathJax.startup.output.clearCache();
    MathJax.typesetClear();
    MathJax.texReset();
    return MathJax.typesetPromise();
  });
});
