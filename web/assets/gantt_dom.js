// The Gantt's elements and their listeners: the toolbar (search, critical-path toggle, zoom,
// expand/collapse), the head rows (overview, axis, executor lane), the tree and bars, and the legend,
// wired to the Gantt's methods. Apart from gantt.js, which holds the view state and what changes it;
// built once per Gantt, on construction.

import { h } from './dom.js';
import { ZOOM_STEP } from './gantt_layout.js';
import { createOverview, createAxis } from './gantt_head.js';
import { createExecutorLane } from './executor_lane.js';
import { bindBrush, bindAxisDrag, onWheel } from './gantt_pointer.js';
import { onTreeKey, onGlobalKey } from './gantt_keys.js';

// Builds the Gantt's elements onto `gantt` (gantt.element is the whole widget) and binds their events.
export function buildDom(gantt) {
  gantt.findInput = h('input', {
    id: 'find', type: 'search', value: gantt.find, placeholder: 'Find spans (press /)',
    autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'find-count',
  });
  gantt.findCount = h('output', { id: 'find-count', class: 'find-count', 'aria-live': 'polite', for: 'find' }, '');
  gantt.criticalToggle = h('input', { id: 'toggle-critical', type: 'checkbox', checked: true });
  gantt.zoomLabel = h('span', { class: 'zoom-label', 'aria-live': 'off' });
  gantt.resetButton = h('button', { type: 'button', id: 'zoom-reset', class: 'button small' }, 'Reset zoom');
  const toolbar = h('div', { class: 'gantt-toolbar', role: 'group', 'aria-label': 'Timeline controls' },
    h('span', { class: 'find-box' },
      h('label', { for: 'find', class: 'sr-only' }, 'Find spans by name, label or attribute value'),
      gantt.findInput,
      h('button', { type: 'button', class: 'button small', id: 'find-prev', 'aria-label': 'Previous match (N)', onclick: () => gantt.jumpToMatch(true) }, '\u2191'),
      h('button', { type: 'button', class: 'button small', id: 'find-next', 'aria-label': 'Next match (n)', onclick: () => gantt.jumpToMatch(false) }, '\u2193'),
      gantt.findCount),
    h('label', { class: 'toggle', for: 'toggle-critical' }, gantt.criticalToggle, h('span', { class: 'crit-key', 'aria-hidden': 'true' }), 'Critical path'),
    h('span', { class: 'zoom-controls' },
      h('button', { type: 'button', class: 'button small', id: 'zoom-out', 'aria-label': 'Zoom out (-)', onclick: () => gantt.zoomBy(1 / ZOOM_STEP) }, '\u2212'),
      h('button', { type: 'button', class: 'button small', id: 'zoom-in', 'aria-label': 'Zoom in (+)', onclick: () => gantt.zoomBy(ZOOM_STEP) }, '+'),
      gantt.resetButton, gantt.zoomLabel),
    h('button', { type: 'button', class: 'button small', id: 'expand-all', onclick: () => gantt.setAllCollapsed(false) }, 'Expand all'),
    h('button', { type: 'button', class: 'button small', id: 'collapse-all', onclick: () => gantt.setAllCollapsed(true) }, 'Collapse all'),
    h('span', { class: 'toolbar-spacer' }),
    h('span', { class: 'keys-hint' }, h('kbd', null, '\u2191'), h('kbd', null, '\u2193'), ' move ', h('kbd', null, '\u2190'), h('kbd', null, '\u2192'), ' fold ',
      h('kbd', null, 'Ctrl'), '+wheel zoom'));

  gantt.overview = createOverview();
  gantt.axis = createAxis();
  gantt.executorLane = createExecutorLane();
  gantt.executorLabel = h('span', null, 'Executors');
  gantt.spanHeader = h('span', null, 'Span');
  gantt.head = h('div', { class: 'gantt-head' },
    h('div', { class: 'gantt-head-row' }, h('div', { class: 'gantt-head-label' }, 'Overview'), h('div', null, gantt.overview)),
    h('div', { class: 'gantt-head-row' }, h('div', { class: 'gantt-head-label' }, gantt.spanHeader), h('div', null, gantt.axis)),
    h('div', { class: 'gantt-head-row' }, h('div', { class: 'gantt-head-label' }, gantt.executorLabel), h('div', null, gantt.executorLane)));

  gantt.tree = h('div', { class: 'tree', role: 'tree', tabindex: '0', 'aria-label': 'Spans, in tree order' });
  gantt.bars = h('div', { class: 'bars-host' });
  gantt.barsSvg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  gantt.barsSvg.setAttribute('class', 'bars');
  gantt.barsSvg.setAttribute('aria-hidden', 'true');
  gantt.bars.append(gantt.barsSvg);
  gantt.windowEl = h('div', { class: 'gantt-window' }, gantt.tree, gantt.bars);
  gantt.canvas = h('div', { class: 'gantt-canvas' }, gantt.windowEl);
  gantt.scroller = h('div', { class: 'gantt-scroll' }, gantt.canvas);
  gantt.root = h('div', { id: 'gantt', class: 'gantt' }, gantt.head, gantt.scroller);
  gantt.legend = h('div', { class: 'gantt-legend', 'aria-label': 'Timeline legend', role: 'note' },
    h('span', null, h('span', { class: 'crit-key', 'aria-hidden': 'true' }), h('span', { class: 'legend-diamond', 'aria-hidden': 'true' }, '\u25c6'), 'critical path (outline, underline and \u25c6)'),
    h('span', null, h('span', { class: 'legend-bar open', 'aria-hidden': 'true' }), 'still running (dashed, \u25b8)'),
    h('span', null, h('span', { class: 'mark-finding severity-warning', 'aria-hidden': 'true' }, '!'), 'has findings'),
    h('span', null, 'bars: grey-blue by lane; phase spans in their phase colour'));
  gantt.element = h('div', { class: 'gantt-wrap' }, toolbar, gantt.root, gantt.legend);
  bindEvents(gantt);
}

function bindEvents(gantt) {
  gantt.scroller.addEventListener('scroll', () => gantt.invalidate('rows'), { passive: true });
  gantt.resizeObserver = new ResizeObserver(() => gantt.invalidate('head', 'overview', 'rows'));
  gantt.resizeObserver.observe(gantt.scroller);

  gantt.tree.addEventListener('click', (event) => {
    const row = event.target.closest('[data-index]');
    if (!row) return;
    const index = Number(row.dataset.index);
    if (event.target.closest('[data-toggle]')) gantt.toggle(index);
    gantt.select(index);
    gantt.tree.focus({ preventScroll: true });
  });
  gantt.tree.addEventListener('dblclick', (event) => {
    const row = event.target.closest('[data-index]');
    if (row && !event.target.closest('[data-toggle]')) gantt.toggle(Number(row.dataset.index));
  });
  gantt.tree.addEventListener('keydown', (event) => onTreeKey(gantt, event));
  gantt.barsSvg.addEventListener('click', (event) => {
    const row = event.target.closest('[data-index]');
    if (row) {
      gantt.select(Number(row.dataset.index));
      gantt.tree.focus({ preventScroll: true });
    }
  });
  gantt.barsSvg.addEventListener('dblclick', (event) => {
    const row = event.target.closest('[data-index]');
    if (row) gantt.zoomToSpan(Number(row.dataset.index));
  });

  const wheel = (event) => onWheel(gantt, event);
  gantt.scroller.addEventListener('wheel', wheel, { passive: false });
  gantt.head.addEventListener('wheel', wheel, { passive: false });

  let searchTimer = 0;
  gantt.findInput.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      gantt.find = gantt.findInput.value;
      gantt.runSearch(true);
    }, 120);
  });
  gantt.findInput.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      clearTimeout(searchTimer);
      if (gantt.find !== gantt.findInput.value) {
        gantt.find = gantt.findInput.value;
        gantt.runSearch(true);
      }
      gantt.jumpToMatch(event.shiftKey);
    } else if (event.key === 'Escape') {
      gantt.findInput.value = '';
      gantt.find = '';
      gantt.runSearch(true);
      gantt.tree.focus();
    }
  });
  gantt.criticalToggle.addEventListener('change', () => {
    gantt.state.showCritical = gantt.criticalToggle.checked;
    gantt.invalidate('rows');
  });
  gantt.resetButton.addEventListener('click', () => gantt.setWindow({ from: 0, to: gantt.total }));

  gantt.onDocumentKey = (event) => onGlobalKey(gantt, event);
  document.addEventListener('keydown', gantt.onDocumentKey);
  bindBrush(gantt);
  bindAxisDrag(gantt);
}
