// A number as a person writes it, for the prediction boxes (predictions.js). Loaded before
// predictions.js; tests/site/test_read_number.py runs it under Node on a table of cases.
//
// readNumber(text, percentKey) is { value, read } or null. `read` says, in a few words, how the
// text was read, for the box to echo ("0,52 (read as 0.52)"). What it accepts:
//   "0.75", ".75", "-3", "+2", "1e-3", "−0.5" (a minus sign), "3/4" (a fraction);
//   "75%" or "75 %": a share of 100, so 0.75, unless the box's key is itself in percent
//   (`percentKey`: "the share ..., in %"), where it is 75;
//   "0,75": a decimal comma; "1,200", "1 200", "1.200.000": thousands separators (three digits
//   after each); "1.200,5" and "1,200.5": both, the last mark being the decimal one.
//   A lone comma followed by exactly three digits is read as thousands ("1,200" is 1200)
//   unless what comes before it is 0 ("0,125" is 0.125): the echo says which.
(() => {
  const PLAIN = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

  // `text` with its decimal mark made a point and its thousands marks removed, or null.
  const normalised = (text) => {
    const sign = /^[-+]/.test(text) ? text[0] : "";
    const body = sign ? text.slice(1) : text;
    if (/e/i.test(body)) return PLAIN.test(text) ? text : null;
    const commas = (body.match(/,/g) || []).length;
    const points = (body.match(/\./g) || []).length;
    let decimal = null;                        // the decimal mark, if there is one
    if (commas && points) decimal = body.lastIndexOf(",") > body.lastIndexOf(".") ? "," : ".";
    else if (commas === 1) {
      const [before, after] = body.split(",");
      decimal = after.length === 3 && !/^0*$/.test(before) ? null : ",";
    } else if (points === 1) decimal = ".";
    const at = decimal === null ? body.length : body.lastIndexOf(decimal);
    const groups = body.slice(0, at).split(/[.,]/);
    if (groups.length > 1 && (!/^\d{1,3}$/.test(groups[0]) ||
                              groups.slice(1).some((group) => !/^\d{3}$/.test(group)))) {
      return null;                             // thousands marks come every three digits
    }
    const result = sign + groups.join("") + (decimal === null ? "" : "." + body.slice(at + 1));
    return PLAIN.test(result) ? result : null;
  };

  const readNumber = (text, percentKey) => {
    let typed = String(text).trim().replace(/\u2212/g, "-")
      .replace(/(\d)[\s\u00a0\u202f]+(?=\d)/g, "$1");   // spaces between digits: thousands
    const percent = /%$/.test(typed);
    if (percent) typed = typed.replace(/\s*%$/, "");
    let value;
    const fraction = typed.match(/^([-+]?[\d.,]+)\s*\/\s*([\d.,]+)$/);
    if (fraction) {
      const [top, bottom] = [normalised(fraction[1]), normalised(fraction[2])];
      if (top === null || bottom === null || Number(bottom) === 0) return null;
      value = Number(top) / Number(bottom);
    } else {
      const plain = normalised(typed);
      if (plain === null) return null;
      value = Number(plain);
    }
    if (!Number.isFinite(value)) return null;
    if (percent && !percentKey) value /= 100;
    const shown = String(Number(value.toPrecision(12)));
    const typedText = String(text).trim();
    const read = typedText === shown ? shown : `${typedText} (read as ${shown})`;
    return { value, read };
  };

  globalThis.courseReadNumber = readNumber;
})();
