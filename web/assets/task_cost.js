// The task list's Cost column: an attempt's settled cost (`cost` of a /api/v1/tasks row,
// docs/trace-view-api.md "Settled cost in the list") as a cell's text and title, and the sort the
// column header toggles. Pure.

import { formatMoney, formatResourceSeconds } from './cost_view.js';
import { formatPercent } from './format.js';

export const COST_SORTS = { descending: '-cost', ascending: 'cost' };

// { text, title, settled }: money when the server has prices, else core-hours; a dash, with the reason
// in the title, while the attempt runs or is not settled yet.
export function taskCostCell(row) {
  const cost = row.cost;
  if (!cost) {
    if (row.state === 'running') {
      return { text: '\u2014', title: 'Still running: its cost is settled once it has ended and no span of it arrived for a while', settled: false };
    }
    return { text: '\u2014', title: 'Not settled yet: its cost is computed once no span of it has arrived for the quiet period (--settle-quiet)', settled: false };
  }
  if (cost.core_seconds === null) {
    return { text: '?', title: 'Cost not known: the spans do not say how many cores the executors had', settled: true };
  }
  const parts = [formatResourceSeconds(cost.core_seconds, 'core')];
  if (cost.gib_seconds !== null) parts.push(formatResourceSeconds(cost.gib_seconds, 'GiB'));
  if (cost.idle_fraction !== null) parts.push(`executors idle ${formatPercent(cost.idle_fraction)}`);
  let title = `Allocated: ${parts.join(', ')}`;
  if (cost.regression) title += '; slower than its usual runs (regression)';
  if (!cost.current) title += '; a span arrived after it was settled: to be settled again';
  const text = cost.money !== null ? formatMoney(cost.money) : `${(cost.core_seconds / 3600).toFixed(2)} core-h`;
  return { text, title, settled: true };
}

// The sort the Cost header leads to from `sort`: most expensive first, then cheapest first.
export function nextCostSort(sort) {
  return sort === COST_SORTS.descending ? COST_SORTS.ascending : COST_SORTS.descending;
}

// The aria-sort of the Cost column under `sort`.
export function costAriaSort(sort) {
  if (sort === COST_SORTS.descending) return 'descending';
  if (sort === COST_SORTS.ascending) return 'ascending';
  return 'none';
}

// How the list is ordered, in words, for the page's status line.
export function sortDescription(sort) {
  switch (sort) {
    case 'start': return 'oldest first';
    case COST_SORTS.descending: return 'most expensive first';
    case COST_SORTS.ascending: return 'cheapest first';
    default: return 'newest first';
  }
}
