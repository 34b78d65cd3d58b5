// `#sql-executions`: the attempt's SQL executions by operation (attempt.sql_executions), each a
// <details> whose plan is fetched when it is first opened and drawn as a foldable operator tree
// (plan_tree.js): time share, rows and spill per node, the hottest path marked, a search box that
// unfolds to what it finds. Selecting a node highlights the stage spans it ran in on the timeline.
// Only unfolded rows are in the DOM. Fold state and fetched plans survive the attempt's updates.

import { h, clear, append } from './dom.js';
import { fetchJson } from './api.js';
import { formatBytes, formatCount, formatDuration, formatPercent } from './format.js';
import {
  buildPlanModel, initialOpen, openAll, visiblePlanRows, findPlanNodes, openTo, stageSpanIds,
} from './plan_tree.js';

function metricValue(metric) {
  const type = metric.type;
  const value = (v) => {
    if (v === null || v === undefined) return '';
    if (type === 'size') return formatBytes(v);
    if (type === 'timing') return formatDuration(v);
    if (type === 'nsTiming') return formatDuration(v / 1e6);
    return formatCount(v);
  };
  const spread = metric.max !== null && metric.max !== undefined
    ? ` (min ${value(metric.min)}, med ${value(metric.median)}, max ${value(metric.max)})` : '';
  return `${value(metric.total)}${spread}`;
}

// One execution's tree: rows, toolbar and the selected node's metrics.
class PlanTree {
  constructor(execution, model, { onStages }) {
    this.execution = execution;
    this.model = model;
    this.onStages = onStages;
    this.open = initialOpen(model);
    this.selected = -1;
    this.matches = [];
    this.matchAt = -1;
    // One listener for all rows (2,000 of them unfolded): the row and the toggle say which.
    this.rowsEl = h('div', {
      class: 'plan-rows', role: 'tree', 'aria-label': `Plan of SQL execution ${execution.execution_id}`,
      onclick: (event) => this.onRowEvent(event), onkeydown: (event) => this.onRowEvent(event),
    });
    this.nodeDetail = h('div', { class: 'plan-node-detail', 'aria-live': 'polite' });
    this.search = h('input', {
      type: 'search', class: 'plan-search', placeholder: 'Find an operator', 'aria-label': 'Find an operator by name',
      onkeydown: (event) => { if (event.key === 'Enter') { event.preventDefault(); this.findNext(); } },
      oninput: () => { this.matches = []; this.matchAt = -1; },
    });
    const note = [];
    if (model.nodes.length < model.nodesInPlan) note.push(`${model.nodes.length} of ${model.nodesInPlan} operators kept (--sql-plan-max-bytes)`);
    if (model.metricsDropped) note.push('metric lists left out to fit the bound');
    if (model.droppedByParser > 0) note.push(`${model.droppedByParser} operators not kept by the parser`);
    this.element = h('div', { class: 'plan-tree', dataset: { spanId: execution.span_id } },
      h('div', { class: 'plan-toolbar' },
        this.search,
        h('button', { type: 'button', class: 'button small plan-find', onclick: () => this.findNext() }, 'Find'),
        h('button', { type: 'button', class: 'button small plan-unfold', onclick: () => this.setOpen(openAll(model)) }, 'Unfold all'),
        h('button', { type: 'button', class: 'button small plan-fold', onclick: () => this.setOpen(initialOpen(model, 0)) }, 'Fold to hottest path'),
        h('span', { class: 'muted' }, `${model.nodes.length} operators \u00b7 operator time ${formatDuration(model.totalMs)} (task time, summed over tasks)`)),
      note.length ? h('p', { class: 'muted plan-note' }, `${note.join('; ')}.`) : null,
      h('div', { class: 'plan-head', 'aria-hidden': 'true' },
        h('span', null, 'operator'), h('span', null, 'share of time'), h('span', null, 'time'), h('span', null, 'rows'), h('span', null, 'spill')),
      this.rowsEl,
      this.nodeDetail);
    this.render();
  }

  setOpen(open) {
    this.open = open;
    this.render();
  }

  toggle(index) {
    const next = new Set(this.open);
    if (next.has(index)) next.delete(index); else next.add(index);
    this.setOpen(next);
    // The rows were rebuilt: keep the keyboard on this one.
    this.rowsEl.querySelector(`[data-index="${index}"]`)?.focus({ preventScroll: true });
  }

  findNext() {
    if (!this.matches.length) {
      this.matches = findPlanNodes(this.model, this.search.value);
      this.matchAt = -1;
    }
    if (!this.matches.length) {
      this.search.setCustomValidity('No operator of that name');
      this.search.reportValidity();
      return;
    }
    this.search.setCustomValidity('');
    this.matchAt = (this.matchAt + 1) % this.matches.length;
    const index = this.matches[this.matchAt];
    this.open = openTo(this.model, this.open, index);
    this.select(index);
  }

  select(index) {
    this.selected = index;
    this.render();
    this.rowsEl.querySelector(`[data-index="${index}"]`)?.scrollIntoView({ block: 'nearest' });
    const node = this.model.nodes[index];
    this.onStages(node.stageIds, this.execution.parent_id);
    clear(this.nodeDetail);
    append(this.nodeDetail,
      h('h4', null, `#${node.id} ${node.name}`),
      node.detail ? h('p', { class: 'plan-detail-text' }, node.detail) : null,
      h('p', { class: 'muted' }, node.stageIds.length ? `Ran in stage${node.stageIds.length > 1 ? 's' : ''} ${node.stageIds.join(', ')} (highlighted on the timeline)` : 'No stage reported its metrics.',
        node.codegenStage !== null ? ` \u00b7 WholeStageCodegen (${node.codegenStage})` : ''),
      node.metrics?.length ? h('table', { class: 'attr-table plan-metrics' }, h('tbody', null, node.metrics.map((metric) =>
        h('tr', null, h('th', { scope: 'row' }, metric.name), h('td', null, metricValue(metric)))))) : null);
  }

  onRowEvent(event) {
    const row = event.target.closest('.plan-row');
    if (!row) return;
    const index = Number(row.dataset.index);
    const node = this.model.nodes[index];
    const hasChildren = node.children.length > 0;
    const isOpen = this.open.has(index);
    if (event.type === 'click') {
      if (event.target.closest('.plan-toggle')) this.toggle(index); else this.select(index);
      return;
    }
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      this.select(index);
    } else if ((event.key === 'ArrowRight' && hasChildren && !isOpen) || (event.key === 'ArrowLeft' && isOpen)) {
      event.preventDefault();
      this.toggle(index);
    }
  }

  // Only the visible rows are built: a folded subtree costs nothing.
  render() {
    const { nodes, hotPath } = this.model;
    const rows = visiblePlanRows(this.model, this.open);
    clear(this.rowsEl);
    const fragment = document.createDocumentFragment();
    for (const index of rows) {
      const node = nodes[index];
      const hasChildren = node.children.length > 0;
      const isOpen = this.open.has(index);
      const bar = h('span', { class: 'plan-share-bar' });
      bar.style.width = `${(node.share * 100).toFixed(1)}%`;
      // Not a button: a tree item holds no control of its own (the keyboard folds with the arrows).
      const toggle = hasChildren
        ? h('span', { class: 'plan-toggle', 'aria-hidden': 'true', title: isOpen ? 'Fold' : 'Unfold' }, isOpen ? '\u25be' : '\u25b8')
        : h('span', { class: 'plan-toggle-space', 'aria-hidden': 'true' });
      const row = h('div', {
        class: ['plan-row', hotPath.has(index) && 'hot', index === this.selected && 'selected'],
        role: 'treeitem', tabindex: '0', 'aria-level': String(node.depth + 1), 'aria-expanded': hasChildren ? String(isOpen) : null,
        'aria-selected': String(index === this.selected), title: node.detail || node.name,
        dataset: { index, nodeId: node.id, hot: hotPath.has(index) ? 'true' : null, timeMs: node.timeMs, rows: node.rows, spillBytes: node.spillBytes },
      },
      h('span', { class: 'plan-name' }, h('span', { class: 'plan-indent' }), toggle,
        h('span', { class: 'plan-label' }, node.name), node.childrenOmitted ? h('span', { class: 'muted' }, ` (+${node.childrenOmitted} not kept)`) : null),
      h('span', { class: 'plan-share' }, h('span', { class: 'plan-share-track' }, bar), h('span', { class: 'plan-share-text' }, node.timeMs > 0 ? formatPercent(node.share) : '')),
      h('span', { class: 'plan-time' }, node.timeMs > 0 ? formatDuration(node.timeMs) : ''),
      h('span', { class: 'plan-rows-out' }, node.rows !== null ? formatCount(node.rows) : ''),
      h('span', { class: 'plan-spill' }, node.spillBytes ? formatBytes(node.spillBytes) : ''));
      // Indentation by depth without an inline style attribute (CSP): a CSS variable set from script.
      row.style.setProperty('--depth', String(Math.min(node.depth, 60)));
      fragment.append(row);
    }
    this.rowsEl.append(fragment);
  }
}

export class SqlExecutionsView {
  // onStages(stageSpanIds): highlight those spans on the timeline.
  constructor({ onStages }) {
    this.onStages = onStages;
    this.trees = new Map();  // span id -> {tree, endMs}
    this.loading = new Set();  // span ids whose plan is being fetched
    this.bodies = new Map();  // span id -> its <details>' body now on the page (rebuilt by each update)
    this.openIds = new Set();
    this.attempt = null;
    this.list = h('div', { class: 'sql-list' });
    this.element = h('section', { id: 'sql-executions', class: 'card sql-card', 'aria-labelledby': 'sql-title' },
      h('div', { class: 'card-head' }, h('h2', { id: 'sql-title' }, 'SQL executions'),
        h('span', { class: 'muted' }, 'per operation: each execution\u2019s operators, where their task time went')),
      this.list);
  }

  update(attempt) {
    this.attempt = attempt;
    const executions = attempt.sql_executions ?? [];
    this.element.hidden = executions.length === 0;
    clear(this.list);
    const labels = new Map(attempt.spans.map((span) => [span.id, span.label || span.name]));
    const byOperation = new Map();
    for (const execution of executions) {
      const key = execution.parent_id ?? '';
      if (!byOperation.has(key)) byOperation.set(key, []);
      byOperation.get(key).push(execution);
    }
    for (const [operation, list] of byOperation) {
      append(this.list, h('h3', { class: 'sql-operation' }, labels.get(operation) ?? 'application'),
        list.map((execution) => this.executionElement(execution)));
    }
  }

  executionElement(execution) {
    const top = execution.top_operators?.[0];
    const summary = h('summary', null,
      h('strong', null, `SQL ${execution.execution_id ?? '?'}`), ' ',
      h('span', { class: 'sql-description' }, execution.description || '(no description)'),
      h('span', { class: 'muted' }, ` \u00b7 ${formatDuration(execution.end_ms - execution.start_ms)}`,
        execution.status === 'error' ? ' \u00b7 failed' : '',
        top ? ` \u00b7 hottest: ${top.name} ${formatDuration(top.time_ms)}` : ''));
    const body = h('div', { class: 'sql-body' });
    this.bodies.set(execution.span_id, body);
    const details = h('details', { class: 'sql-execution', dataset: { spanId: execution.span_id, executionId: execution.execution_id } }, summary, body);
    details.open = this.openIds.has(execution.span_id);
    const show = () => this.showPlan(execution);
    // Also fires for one created open (an update while it was open), once it is in the document.
    details.addEventListener('toggle', () => {
      if (details.open) { this.openIds.add(execution.span_id); show(); } else this.openIds.delete(execution.span_id);
    });
    return details;
  }

  async showPlan(execution) {
    // The body on the page when the answer comes: an update may have rebuilt it meanwhile.
    const bodyNow = () => this.bodies.get(execution.span_id);
    const body = bodyNow();
    const cached = this.trees.get(execution.span_id);
    if (cached && cached.endMs === execution.end_ms) {
      clear(body);
      body.append(cached.tree.element);
      return;
    }
    if (!execution.plan_href) {
      clear(body);
      append(body, h('p', { class: 'muted' }, 'No plan was kept for this execution (see --sql-plan-max-bytes).'));
      return;
    }
    if (this.loading.has(execution.span_id)) return;
    this.loading.add(execution.span_id);
    if (!cached) append(body, h('p', { class: 'loading' }, 'Loading the plan\u2026'));
    try {
      const { data } = await fetchJson(execution.plan_href);
      const model = buildPlanModel(data.plan);
      const tree = new PlanTree(execution, model, {
        onStages: (stageIds, operationSpanId) => this.onStages(stageSpanIds(this.attempt.spans, stageIds, operationSpanId)),
      });
      // A running execution's plan, fetched again: keep what the reader had unfolded.
      if (cached) tree.setOpen(new Set([...cached.tree.open].filter((i) => i < model.nodes.length)));
      this.trees.set(execution.span_id, { tree, endMs: execution.end_ms });
      clear(bodyNow());
      bodyNow().append(tree.element);
    } catch (error) {
      clear(bodyNow());
      append(bodyNow(), h('p', { class: 'error' }, `The plan could not be loaded: ${error.message}`));
    } finally {
      this.loading.delete(execution.span_id);
    }
  }
}
