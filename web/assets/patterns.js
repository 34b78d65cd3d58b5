// SVG fill patterns, one per phase, drawn over the phase colour so that phases differ by texture
// too (colour is never the only cue): stripes for resource wait, hatching for I/O write, dots for
// idle, lines for result transfer; client and compute stay plain. Defined once in a hidden SVG
// and referenced as url(#pat-<phase>) from every chart. app.css has the same textures for HTML.

import { s } from './dom.js';

function pattern(id, size, ...shapes) {
  return s('pattern', { id, width: size, height: size, patternUnits: 'userSpaceOnUse' }, ...shapes);
}

export const PATTERNED_PHASES = ['resource_wait', 'io_write', 'idle', 'result_transfer'];

export function installPatterns() {
  if (document.getElementById('pattern-defs')) return;
  const defs = s('defs', null,
    pattern('pat-resource_wait', 6,
      s('path', { d: 'M-1,1 l2,-2 M0,6 l6,-6 M5,7 l2,-2', class: 'pat-stroke', 'stroke-width': 1.6 })),
    pattern('pat-io_write', 6,
      s('path', { d: 'M0,0 L6,6 M6,0 L0,6', class: 'pat-stroke', 'stroke-width': 0.9 })),
    pattern('pat-idle', 5,
      s('circle', { cx: 2.5, cy: 2.5, r: 0.9, class: 'pat-dot' })),
    pattern('pat-result_transfer', 5,
      s('path', { d: 'M0,2.5 H5', class: 'pat-stroke-light', 'stroke-width': 1.4 })),
  );
  const holder = s('svg', { id: 'pattern-defs', class: 'pattern-defs', 'aria-hidden': 'true', focusable: 'false', width: 0, height: 0 }, defs);
  document.body.prepend(holder);
}
