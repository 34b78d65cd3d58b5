// State and severity as text with an icon: colour is never the only cue.

import { h } from './dom.js';
import { airflowState } from './airflow_task.js';

const STATE_ICONS = { success: '\u2713', failed: '\u2715', running: '\u25b6' };
const SEVERITY_ICONS = { critical: '\u25b2', warning: '\u25c6', info: '\u25cf' };

export function stateBadge(state) {
  const known = Object.hasOwn(STATE_ICONS, state) ? state : 'unknown';
  return h('span', { class: ['state', `state-${known}`] },
    h('span', { class: 'icon', 'aria-hidden': 'true' }, STATE_ICONS[known] ?? '?'), String(state ?? 'unknown'));
}

// Airflow's task state (success, failed, up_for_retry, …): its words, an icon and a tone.
export function airflowStateBadge(state) {
  const info = airflowState(state);
  return h('span', { class: ['state', 'airflow-state', `tone-${info.tone}`], dataset: { state: info.state } },
    h('span', { class: 'icon', 'aria-hidden': 'true' }, info.icon), info.text);
}

export function severityBadge(severity) {
  const known = Object.hasOwn(SEVERITY_ICONS, severity) ? severity : 'info';
  return h('span', { class: ['severity', `severity-${known}`] },
    h('span', { class: 'icon', 'aria-hidden': 'true' }, SEVERITY_ICONS[known]), String(severity ?? 'info'));
}

export const SEVERITY_RANK = { critical: 3, warning: 2, info: 1 };
