// What a change would buy (`what_if` of the attempt's JSON, docs/trace-view-api.md "What-if
// estimates"): the attempt's own jobs, stages and tasks re-scheduled on another cluster by the
// server's simulator. A card lists every estimate; each finding shows the estimates that answer it
// (findings.js). `estimatesFor` and `estimateText` are pure; `renderWhatIf` lays the card out as #what-if.

import { h } from './dom.js';
import { formatDuration } from './format.js';

// The estimates that answer a finding, largest saving first.
export function estimatesFor(finding, estimates) {
  return (estimates ?? [])
    .filter((estimate) => estimate.answers?.includes(finding.id))
    .sort((a, b) => b.saving_ms - a.saving_ms);
}

// "with 8 executors from the start: ~1 min 52 s instead of 5 min 4 s (saves ~3 min 12 s)"; a change that would
// make it slower says so instead of a negative saving.
export function estimateText(estimate) {
  const delta = estimate.saving_ms;
  const change = Math.abs(delta) < 1000 ? 'about the same'
    : delta > 0 ? `saves ~${formatDuration(delta)}` : `~${formatDuration(-delta)} longer`;
  return `${estimate.label}: ~${formatDuration(estimate.estimated_ms)} instead of ${formatDuration(estimate.measured_ms)} (${change})`;
}

export function renderWhatIf(estimates) {
  if (!estimates?.length) return null;
  return h('section', { class: 'card what-if-card', id: 'what-if', 'aria-labelledby': 'what-if-title' },
    h('div', { class: 'card-head' }, h('h2', { id: 'what-if-title' }, 'What a change would buy'),
      h('span', { class: 'muted' }, 'this attempt\u2019s own tasks, re-scheduled on another cluster (estimates)')),
    h('ul', { class: 'what-if-list' },
      estimates.map((estimate) => h('li', { dataset: { estimate: estimate.name } }, estimateText(estimate)))));
}
