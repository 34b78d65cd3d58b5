// Geometry of a stacked phase bar: each phase's share of the bar, proportional to its ms. Pure.
//
// Shares are taken from the ms themselves (not the API's rounded `fraction`) so that the segments
// always fill the bar exactly; `fraction` is for the legend text.

// [{phase, ms}] -> [{phase, ms, share, start}] with shares summing to 1 (all 0 when nothing is > 0).
export function phaseShares(phases) {
  const values = phases.map((p) => (Number.isFinite(p.ms) && p.ms > 0 ? p.ms : 0));
  const total = values.reduce((a, b) => a + b, 0);
  let start = 0;
  return phases.map((p, i) => {
    const share = total > 0 ? values[i] / total : 0;
    const segment = { ...p, ms: values[i], share, start };
    start += share;
    return segment;
  });
}

// Pixel widths for a bar `width` px wide: rounded to whole pixels by largest remainder, so they add
// up to the width exactly and each is within 1 px of its exact share.
export function segmentPixels(phases, width) {
  const shares = phaseShares(phases);
  const exact = shares.map((s) => s.share * width);
  const floors = exact.map(Math.floor);
  let left = (shares.some((s) => s.share > 0) ? Math.round(width) : 0) - floors.reduce((a, b) => a + b, 0);
  const order = exact
    .map((value, i) => ({ i, remainder: value - floors[i] }))
    .sort((a, b) => b.remainder - a.remainder || a.i - b.i);
  const widths = floors.slice();
  for (const { i } of order) {
    if (left <= 0) break;
    if (exact[i] === 0) continue;
    widths[i] += 1;
    left -= 1;
  }
  let x = 0;
  return shares.map((s, i) => {
    const segment = { ...s, x, width: widths[i] };
    x += widths[i];
    return segment;
  });
}

// Whether a label of about `chars` characters fits a segment `width` px wide.
export function labelFits(width, chars, charPx = 7, paddingPx = 8) {
  return width >= chars * charPx + paddingPx;
}
