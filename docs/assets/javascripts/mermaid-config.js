// Mermaid draws a flowchart with `useMaxWidth: true` by default: the SVG is shrunk to the width
// of the text column, labels and all (a wide chain on a phone ends up with 4 px text). Here
// every diagram keeps its natural size (16 px labels); one wider than the column scrolls
// sideways instead (course.css, scroll-regions.js). The lessons keep their diagrams narrow
// enough to fit a desktop column, and tests/site/test_browser.py measures the rendered text.
//
// Material calls `mermaid.initialize` itself, once, with its own theme; this file loads right
// after mermaid.min.js and before Material looks for `mermaid`, so the wrapper below sees that
// call and adds one option to it.
(() => {
  const initialize = mermaid.initialize.bind(mermaid);
  mermaid.initialize = (config) =>
    initialize({ ...config, flowchart: { ...(config.flowchart || {}), useMaxWidth: false } });
})();

// Material draws each diagram into a closed shadow root. scroll-regions.js must look inside one
// (a diagram wider than the column opens scrolled to its first box), so the roots are kept
// here, where only the site's own scripts ask for them (`courseShadowRoot(host)`).
(() => {
  const roots = new WeakMap();
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    roots.set(this, root);
    return root;
  };
  window.courseShadowRoot = (host) => host.shadowRoot || roots.get(host) || null;
})();
