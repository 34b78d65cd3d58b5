// What the attempt cost (`cost` of the attempt's JSON, docs/trace-view-api.md "Cost"): the cores and
// memory its Spark application had allocated over the attempt, the part its tasks used, and money
// when the server has prices. `costRows` is pure; `renderCost` lays it out as `#cost`.

import { h } from './dom.js';
import { formatPercent } from './format.js';

// "660 core-s (0.18 core-h)": seconds for short attempts, hours beside them for long ones.
export function formatResourceSeconds(seconds, unit) {
  const rounded = seconds >= 100 ? Math.round(seconds).toLocaleString('en-US') : Number(seconds.toPrecision(3)).toString();
  const text = `${rounded} ${unit}-s`;
  return seconds >= 3600 ? `${text} (${(seconds / 3600).toFixed(1)} ${unit}-h)` : text;
}

// Money in whatever currency the prices are in: no symbol, enough digits for cents of small attempts.
export function formatMoney(amount) {
  if (amount >= 100) return Math.round(amount).toLocaleString('en-US');
  if (amount >= 1) return amount.toFixed(2);
  return Number(amount.toPrecision(2)).toString();
}

// The rows of the cost section, as [label, value] text; null when the attempt has no cost.
export function costRows(cost) {
  if (!cost) return null;
  const rows = [
    ['Cores allocated', formatResourceSeconds(cost.core_seconds, 'core') +
      (cost.driver_core_seconds > 0 ? ` (driver ${formatResourceSeconds(cost.driver_core_seconds, 'core')})` : '')],
    ['Memory allocated', cost.gib_seconds === null ? 'not known (no configuration in the log)' : formatResourceSeconds(cost.gib_seconds, 'GiB')],
    ['Used by tasks', formatResourceSeconds(cost.used_core_seconds, 'core') +
      (cost.idle_fraction === null ? '' : ` \u00b7 executors idle ${formatPercent(cost.idle_fraction)}`)],
  ];
  if (cost.money) rows.push(['Cost', formatMoney(cost.money.total)]);
  return rows;
}

export function renderCost(cost) {
  const rows = costRows(cost);
  if (!rows) return null;
  return h('section', { class: 'card cost-card', id: 'cost', 'aria-labelledby': 'cost-title' },
    h('div', { class: 'card-head' }, h('h2', { id: 'cost-title' }, 'What it cost'),
      h('span', { class: 'muted' }, 'resources the Spark application had allocated while the attempt ran')),
    h('dl', { class: 'cost-figures' },
      ...rows.flatMap(([label, value]) => [h('dt', null, label), h('dd', null, value)])),
    h('p', { class: 'muted cost-basis' }, `Charged: ${cost.basis}.`));
}
