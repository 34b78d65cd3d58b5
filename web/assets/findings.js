// Findings, most impact first: severity (as text), title, impact, scope, the fix (config keys and
// values as code), what-if estimates that answer it, evidence, related findings and the recipe. Those a rules-file suppression muted
// come last (the API ranks them so), muted, labelled "Suppressed" with their reason and expiry.
// Clicking a finding selects its spans in the timeline.

import { h, link } from './dom.js';
import { severityBadge } from './badges.js';
import { splitConfigTokens } from './fix_text.js';
import { formatDuration } from './format.js';
import { findingsCountText, isSuppressed, suppressionText } from './suppression.js';
import { estimatesFor, estimateText } from './what_if_view.js';

function withCode(text) {
  return splitConfigTokens(text).map((part) => (part.code ? h('code', null, part.text) : part.text));
}

// "troubleshoot/slow-spark-jobs.md#idle-executors" -> "slow spark jobs \u203a idle executors".
function recipeName(finding) {
  if (!finding.recipe) return 'recipe';
  const [file, anchor] = finding.recipe.split('#');
  const words = (text) => text.replace(/^.*\//, '').replace(/\.md$/, '').replace(/-/g, ' ');
  return anchor ? `${words(file)} \u203a ${words(anchor)}` : words(file);
}

function renderFinding(finding, index, onSelect, estimates) {
  const spanCount = finding.span_ids?.length ?? 0;
  const show = h('button', { type: 'button', class: 'button small show-spans', 'aria-pressed': 'false', disabled: spanCount === 0 },
    spanCount === 1 ? 'Show its span in the timeline' : `Show its ${spanCount} spans in the timeline`);
  const evidence = finding.evidence?.length
    ? h('details', null,
      h('summary', null, `Evidence (${finding.evidence.length})`),
      h('ul', { class: 'evidence' }, finding.evidence.map((e) => h('li', null, e))))
    : null;
  const suppressed = isSuppressed(finding);
  const li = h('li', {
    class: ['finding', `sev-${finding.severity}`, suppressed ? 'suppressed' : null],
    dataset: { findingId: finding.id, findingKey: finding.key },
  },
  h('div', { class: 'finding-head' },
    severityBadge(finding.severity),
    suppressed ? h('span', { class: 'suppressed-badge' }, 'Suppressed') : null,
    h('h3', null, finding.title),
    h('span', { class: 'impact' }, h('span', { class: 'muted' }, 'impact \u2248 '), formatDuration(finding.impact_seconds * 1000))),
  suppressed ? h('p', { class: 'suppression' }, suppressionText(finding)) : null,
  finding.scope ? h('p', { class: 'scope' }, finding.scope) : null,
  finding.fix?.length ? h('div', { class: 'finding-fix' },
    h('h4', null, 'What to change'), h('ul', { class: 'fix' }, finding.fix.map((f) => h('li', null, withCode(f))))) : null,
  answered(finding, estimates),
  evidence,
  finding.related?.length ? h('p', { class: 'related' }, 'Related: ', finding.related.join('; ')) : null,
  h('div', { class: 'finding-actions' },
    show,
    finding.recipe_href ? link(finding.recipe_href, { class: 'recipe-link' }, `Recipe: ${recipeName(finding)} \u2192`) : null));
  const select = () => onSelect(finding, li);
  show.addEventListener('click', (event) => {
    event.stopPropagation();
    select();
  });
  li.addEventListener('click', (event) => {
    // Links, buttons and the evidence toggle keep their own behaviour; selecting text is not a click.
    if (event.target.closest('a, button, summary') || window.getSelection()?.toString()) return;
    select();
  });
  return li;
}

// What the server's what-if estimates say a change answering this finding would buy.
function answered(finding, estimates) {
  const mine = estimatesFor(finding, estimates);
  if (!mine.length) return null;
  return h('div', { class: 'finding-what-if' },
    h('h4', null, 'What it would buy'), h('ul', null, mine.map((estimate) => h('li', null, estimateText(estimate)))));
}

// A card with the list #findings. onSelect(finding) is called when one is chosen; `estimates` (the
// attempt's what_if) are shown under the findings they answer.
export function renderFindings(findings, onSelect, estimates = []) {
  const list = h('ol', { id: 'findings', class: 'findings' });
  let selected = null;
  const choose = (finding, li) => {
    if (selected) {
      selected.classList.remove('selected');
      selected.querySelector('.show-spans')?.setAttribute('aria-pressed', 'false');
    }
    selected = li;
    li.classList.add('selected');
    li.querySelector('.show-spans')?.setAttribute('aria-pressed', 'true');
    onSelect(finding);
  };
  findings.forEach((finding, i) => list.append(renderFinding(finding, i, choose, estimates)));
  const card = h('section', { class: 'card findings-card', 'aria-labelledby': 'findings-title' },
    h('div', { class: 'card-head' },
      h('h2', { id: 'findings-title' }, 'Why, and what to change'),
      h('span', { class: 'muted' }, findingsCountText(findings))),
    findings.length ? null : h('p', { class: 'no-findings' }, 'No diagnosis rule fired for this attempt: nothing crossed its thresholds.'),
    list);
  return {
    element: card,
    clearSelection() {
      if (!selected) return;
      selected.classList.remove('selected');
      selected.querySelector('.show-spans')?.setAttribute('aria-pressed', 'false');
      selected = null;
    },
  };
}
