// On paper (a reader's own Print, or src/course_site/print_edition.py): just before the page
// is printed, every folded box is opened (a lesson's answers, the oral exam's model answers:
// paper cannot be clicked) and every diagram is fitted to the width of the page (on screen a
// diagram keeps its natural size and scrolls sideways: mermaid-config.js). Just after, both are
// put back as the reader left them. The rest of the paper is course.css ("On paper").
(() => {
  let undo = [];
  window.addEventListener("beforeprint", () => {
    for (const box of document.querySelectorAll("details:not([open])")) {
      box.open = true;
      undo.push(() => { box.open = false; });
    }
    for (const host of document.querySelectorAll("div.mermaid")) {
      const svg = window.courseShadowRoot?.(host)?.querySelector("svg");
      if (!svg) continue;
      const style = svg.getAttribute("style");
      svg.style.maxWidth = "100%";
      svg.style.height = "auto";
      undo.push(() => (style === null ? svg.removeAttribute("style")
                                      : svg.setAttribute("style", style)));
    }
  });
  window.addEventListener("afterprint", () => {
    undo.forEach((step) => step());
    undo = [];
  });
})();
