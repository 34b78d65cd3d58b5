// One task attempt (`/attempt?dag=…&task=…&run=…&try=…`) or trace (`/traces/<id>`): where the wall
// time went, why and what to change, how it compares with earlier runs, and the trace itself.
// While the attempt is in progress the page polls it every 2 s and redraws, keeping the view.

import { h, clear } from './dom.js';
import { fetchJson, poll } from './api.js';
import { renderError } from './error_view.js';
import { renderAttemptHeader, attemptTitle } from './attempt_header.js';
import { renderBreakdownBar, renderBreakdownLegend, renderOutsideSpark } from './breakdown_bar.js';
import { airflowTaskView, taskSpanFirst } from './airflow_task.js';
import { renderFindings } from './findings.js';
import { renderCost } from './cost_view.js';
import { renderWhatIf } from './what_if_view.js';
import { renderHistory } from './history_chart.js';
import { Gantt } from './gantt.js';
import { DetailPanel } from './detail_panel.js';
import { SqlExecutionsView } from './plan_view.js';
import { renderSpanGroups } from './span_groups.js';
import { formatDuration, formatPercent } from './format.js';
import { attemptApiUrl, attemptPageUrl, tasksPageUrl } from './url_state.js';

function breadcrumbFor(route, attempt) {
  if (route.kind === 'trace') return [{ text: 'Tasks', href: '/' }, { text: `Trace ${attempt?.name ?? route.traceId}` }];
  const { dag_id, task_id, run_id, try_number } = route.identity;
  return [
    { text: 'Tasks', href: '/' },
    { text: dag_id, href: tasksPageUrl({ dag: dag_id }) },
    { text: task_id, href: tasksPageUrl({ dag: dag_id, task: task_id }) },
    { text: run_id },
    { text: `try ${try_number}` },
  ];
}

// "2h 15m of wall time: resource wait took the most, 42 min (31%)." With Airflow's task, the wall
// time is the Airflow task's.
function leadSentence(attempt, task) {
  const phases = attempt.breakdown.phases;
  const top = phases.reduce((a, b) => (b.ms > a.ms ? b : a), phases[0]);
  const wall = h('strong', null, formatDuration(attempt.breakdown.wall_ms));
  const of = task ? ' of the Airflow task\u2019s wall time' : ' of wall time';
  if (!top || !(top.ms > 0)) return h('p', { class: 'lead' }, wall, `${of}.`);
  return h('p', { class: 'lead' }, wall, attempt.in_progress ? `${of} so far; ` : `${of}; `,
    h('strong', null, top.label), ` took the most: ${formatDuration(top.ms)} (${formatPercent(top.fraction ?? top.ms / attempt.breakdown.wall_ms)}).`);
}

function criticalNote(attempt) {
  const cp = attempt.critical_path;
  if (!cp || !cp.segments?.length) return null;
  return h('p', { class: 'muted critical-note' },
    `Critical path ${formatDuration(cp.ms)}`,
    cp.known ? ` (${cp.basis})` : ' (jobs and operations only: the stages carry no parent ids)', '.');
}

// The attempt as the page lays it out: the Airflow task's span (when there is one) first among the
// spans, so that it is the timeline's top row and the root of the tree.
function forView(attempt) {
  const spans = taskSpanFirst(attempt.spans, attempt.airflow_task?.span_id);
  return spans === attempt.spans ? attempt : { ...attempt, spans };
}

class AttemptView {
  constructor(route, context, attempt) {
    this.route = route;
    this.context = context;
    this.attempt = attempt;
    this.urlTimer = 0;
    this.parts = [];
    this.detail = new DetailPanel({
      onZoom: (span) => this.gantt.zoomToSpan(this.gantt.state.tree.indexById.get(span.id)),
      onFinding: (finding) => this.selectFinding(finding),
    });
    this.gantt = new Gantt(attempt, {
      view: route.view,
      onSelect: (span) => this.detail.show(span, this.attempt),
      onViewChange: (view) => this.saveView(view),
      onOpenDetails: () => this.detail.focus(),
      onClearFinding: () => this.findings?.clearSelection(),
    });
    this.summary = h('div');
    this.gantt.element.classList.add('timeline-body');
    this.timeline = h('div', { class: 'timeline-area' },
      h('section', { class: 'card timeline-card', 'aria-labelledby': 'timeline-title' },
        h('div', { class: 'card-head' }, h('h2', { id: 'timeline-title' }, 'Timeline'), h('span', { class: 'muted' }, 'every span of the attempt, in tree order')),
        this.gantt.element),
      this.detail.element);
    // Past the answer's bound (--view-max-spans), what the timeline does not list, per lane and name.
    this.groups = h('div');
    this.renderGroups();
    // Below the timeline, whose stage spans its operators highlight.
    this.sql = new SqlExecutionsView({
      onStages: (ids) => this.gantt.highlight(ids),
    });
    this.sql.update(attempt);
    this.renderSummary();
    context.main.append(this.summary, this.timeline, this.groups, this.sql.element);
    this.layout();
    const selected = this.gantt.state.selected;
    if (selected >= 0) this.detail.show(this.gantt.state.spans[selected], attempt);
  }

  // Draws what needs the page's sizes at once, so that everything is on screen when the page says
  // it is ready (observers alone would draw it just before the next paint).
  layout() {
    for (const part of this.parts) part.layout?.();
    this.gantt.renderNow();
  }

  // Everything above the timeline: header, breakdown, cost, findings, history. Rebuilt on each update
  // (it is small); the timeline keeps its state and is updated in place.
  renderSummary() {
    for (const part of this.parts) part.disconnect?.();
    clear(this.summary);
    const attempt = this.attempt;
    const task = airflowTaskView(attempt);
    const bar = renderBreakdownBar(attempt.breakdown, task);
    const history = renderHistory(attempt.history, attempt);
    this.findings = renderFindings(attempt.findings ?? [], (finding) => this.selectFinding(finding, false),
      attempt.what_if?.estimates ?? []);
    this.parts = [bar, history];
    const breakdownCard = h('section', { class: 'card breakdown-card', 'aria-labelledby': 'breakdown-title' },
      h('div', { class: 'card-head' }, h('h2', { id: 'breakdown-title' }, 'Where the time went'),
        h('span', { class: 'muted' }, 'each millisecond of the wall time in exactly one phase')),
      leadSentence(attempt, task),
      bar.element,
      renderBreakdownLegend(attempt.breakdown),
      task ? renderOutsideSpark(task) : null,
      criticalNote(attempt));
    this.summary.append(
      renderAttemptHeader(attempt),
      h('div', { class: 'attempt-grid' },
        h('div', { class: 'stack' }, breakdownCard, renderCost(attempt.cost), renderWhatIf(attempt.what_if?.estimates),
          this.findings.element),
        history.element));
  }

  renderGroups() {
    clear(this.groups);
    const card = renderSpanGroups(this.attempt);
    if (card) this.groups.append(card);
  }

  selectFinding(finding, fromDetail = true) {
    this.gantt.highlight(finding.span_ids ?? []);
    if (fromDetail) {
      const li = this.summary.querySelector(`[data-finding-key="${CSS.escape(finding.key ?? '')}"]`);
      li?.scrollIntoView({ block: 'nearest' });
    }
  }

  update(attempt) {
    this.attempt = attempt;
    const scrollY = window.scrollY;
    this.renderSummary();
    this.renderGroups();
    this.gantt.update(attempt);
    this.sql.update(attempt);
    this.layout();
    const selected = this.gantt.state.selected;
    this.detail.show(selected >= 0 ? this.gantt.state.spans[selected] : null, attempt);
    window.scrollTo(window.scrollX, scrollY);  // the summary was rebuilt: keep the reader's place
  }

  // The view goes into the URL (replaceState), a moment after the last change.
  saveView(view) {
    clearTimeout(this.urlTimer);
    this.urlTimer = setTimeout(() => {
      if (!this.context.isCurrent()) return;
      const url = attemptPageUrl(this.route, view);
      if (url !== location.pathname + location.search) this.context.replaceUrl(url);
    }, 150);
  }

  destroy() {
    clearTimeout(this.urlTimer);
    for (const part of this.parts) part.disconnect?.();
    this.gantt.destroy();
  }
}

export async function renderAttemptPage(route, context) {
  const controller = new AbortController();
  const url = attemptApiUrl(route);
  context.setBreadcrumb(breadcrumbFor(route, null));
  context.setTitle(route.kind === 'trace' ? `Trace ${route.traceId}` : `${route.identity.dag_id}.${route.identity.task_id}`);
  const loading = h('p', { class: 'loading' }, 'Loading the attempt\u2026');
  context.main.append(loading);
  let view = null;
  let poller = null;

  let result;
  try {
    result = await fetchJson(url, { signal: controller.signal });
  } catch (error) {
    if (error.name === 'AbortError' || !context.isCurrent()) return () => {};
    loading.remove();
    renderError(context, error, {
      what: route.kind === 'trace' ? 'trace' : 'task attempt',
      retry: () => context.navigate(location.pathname + location.search, { replace: true }),
    });
    return () => {};
  }
  if (!context.isCurrent()) return () => {};
  loading.remove();
  performance.mark('sparktrace:attempt-data');
  const attempt = result.data;
  const title = attemptTitle(attempt);
  context.setTitle(route.kind === 'trace' ? `${title} (trace)` : `${title} \u00b7 try ${route.identity.try_number}`);
  context.setBreadcrumb(breadcrumbFor(route, attempt));
  view = new AttemptView(route, context, forView(attempt));
  context.markReady();
  // How long laying out the attempt took, for performance checks (see web/dev/browser_check.mjs).
  performance.measure('sparktrace:attempt-render', 'sparktrace:attempt-data');

  if (attempt.in_progress) {
    poller = poll(url, {
      intervalMs: 2000,
      etag: result.etag,
      onData: (next) => {
        if (!context.isCurrent()) return false;
        view.update(forView(next));
        return next.in_progress;  // false stops polling once the attempt has ended
      },
      onError: () => {},  // a failed poll is retried at the next tick
    });
  }
  return () => {
    controller.abort();
    poller?.stop();
    view?.destroy();
  };
}
