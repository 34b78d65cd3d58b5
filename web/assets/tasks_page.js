// The task list (`/`): one row per Airflow task attempt (or identity-less trace), with filters and
// search in the URL query, and paging by offset.

import { h } from './dom.js';
import { fetchJson } from './api.js';
import { renderError } from './error_view.js';
import { renderMiniBar, renderPhaseKey } from './breakdown_bar.js';
import { stateBadge, severityBadge } from './badges.js';
import { formatCount, formatDuration, parseUtcInput, toUtcInput, formatTimeUtc } from './format.js';
import { safeHref, tasksApiUrl, tasksPageUrl, TASK_STATES, TASKS_PAGE_SIZE } from './url_state.js';
import { costAriaSort, nextCostSort, sortDescription, taskCostCell } from './task_cost.js';

function field(label, input, hint) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), input, hint ? h('span', { class: 'field-hint' }, hint) : null);
}

function renderFilters(query, context) {
  const since = query.since ? toUtcInput(Number(query.since)) : '';
  const until = query.until ? toUtcInput(Number(query.until)) : '';
  const form = h('form', { id: 'task-filters', class: 'filters', role: 'search', 'aria-label': 'Filter task attempts' },
    field('DAG', h('input', { name: 'dag', type: 'text', value: query.dag ?? '', autocomplete: 'off', spellcheck: 'false' })),
    field('Task', h('input', { name: 'task', type: 'text', value: query.task ?? '', autocomplete: 'off', spellcheck: 'false' })),
    field('State', h('select', { name: 'state' },
      h('option', { value: '' }, 'any'),
      TASK_STATES.map((state) => h('option', { value: state, selected: query.state === state }, state)))),
    field('Started since (UTC)', h('input', { name: 'since', type: 'datetime-local', value: since })),
    field('until (UTC)', h('input', { name: 'until', type: 'datetime-local', value: until })),
    field('Trace, operation or Spark app id', h('input', {
      name: 'q', type: 'search', value: query.q ?? '', autocomplete: 'off', spellcheck: 'false',
      placeholder: 'exact id',
    })),
    h('div', { class: 'filter-actions' },
      h('button', { type: 'submit', class: 'button primary' }, 'Apply'),
      h('a', { href: '/', class: 'button' }, 'Clear')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const next = { offset: 0 };
    if (query.sort) next.sort = query.sort;  // filtering keeps the order
    for (const key of ['dag', 'task', 'state', 'q']) {
      const value = String(data.get(key) ?? '').trim();
      if (value) next[key] = value;
    }
    for (const key of ['since', 'until']) {
      const ms = parseUtcInput(String(data.get(key) ?? ''));
      if (ms !== null) next[key] = String(ms);
    }
    context.navigate(tasksPageUrl(next));
  });
  return form;
}

function identityCell(text, extraClass) {
  return h('td', { class: extraClass }, text === null || text === undefined || text === '' ? h('span', { class: 'muted' }, '\u2014') : String(text));
}

function topFindingCell(row) {
  const top = row.top_finding;
  if (!top) return h('td', { class: 'col-finding' }, h('span', { class: 'muted' }, 'none'));
  const more = row.finding_count > 1 ? h('span', { class: 'muted more' }, `+${row.finding_count - 1} more`) : null;
  return h('td', { class: 'col-finding' },
    h('div', { class: 'top-finding' },
      severityBadge(top.severity),
      h('span', { class: 'finding-impact' }, `\u2248 ${formatDuration(top.impact_seconds * 1000)}`),
      more),
    h('div', { class: 'finding-text', title: top.title }, top.title));
}

function costCell(row) {
  const cell = taskCostCell(row);
  return h('td', { class: 'num col-cost', title: cell.title },
    cell.settled ? cell.text : h('span', { class: 'muted' }, cell.text));
}

function renderRow(row, context) {
  const href = safeHref(row.href);
  const isTrace = row.kind === 'trace';
  const name = isTrace ? row.name : row.task_id;
  const sub = isTrace ? row.trace_ids?.[0] ?? '' : row.run_id;
  const taskCell = h('td', { class: 'col-task' },
    h('div', null, href ? h('a', { href, class: 'row-link' }, name) : name, isTrace ? h('span', { class: 'tag' }, 'trace') : null),
    h('div', { class: 'sub mono', title: sub }, sub));
  const tr = h('tr', { dataset: { href: href ?? '' } },
    identityCell(isTrace ? null : row.dag_id, 'col-dag'),
    taskCell,
    h('td', { class: 'num' }, row.try_number ?? '\u2014'),
    h('td', { class: 'num' }, row.map_index === -1 || row.map_index === null || row.map_index === undefined ? h('span', { class: 'muted' }, '\u2014') : String(row.map_index)),
    h('td', null, stateBadge(row.state)),
    h('td', { class: 'col-start mono', title: formatTimeUtc(row.start_ms) }, formatTimeUtc(row.start_ms).slice(0, 16)),
    h('td', { class: 'num col-wall' }, formatDuration(row.wall_ms)),
    h('td', { class: 'col-phases' }, renderMiniBar(row.phases, row.wall_ms)),
    costCell(row),
    topFindingCell(row));
  if (href) {
    tr.addEventListener('click', (event) => {
      if (event.target.closest('a') || window.getSelection()?.toString()) return;
      context.navigate(href);
    });
  }
  return tr;
}

// The Cost header is a link (the app keeps same-origin links in the page) that sorts the list by cost,
// most expensive first, then cheapest first.
function costHeader(query) {
  const sorted = costAriaSort(query.sort);
  const arrow = sorted === 'descending' ? ' \u2193' : sorted === 'ascending' ? ' \u2191' : '';
  const next = nextCostSort(query.sort);
  return h('th', { scope: 'col', class: 'num col-cost', 'aria-sort': sorted },
    h('a', {
      id: 'sort-cost', href: tasksPageUrl({ ...query, sort: next, offset: 0 }),
      title: next === '-cost' ? 'Most expensive first (unsettled attempts last)' : 'Cheapest first (unsettled attempts last)',
    }, `Cost${arrow}`));
}

function renderTable(list, query, context) {
  const head = ['DAG', 'Task and run', 'Try', 'Map', 'State', 'Start (UTC)', 'Wall', 'Where the time went', 'Cost', 'Top finding'];
  const numeric = new Set(['Try', 'Map', 'Wall']);
  const table = h('table', { id: 'tasks', class: 'data-table tasks-table' },
    h('caption', { class: 'sr-only' }, `Task attempts, ${sortDescription(query.sort)}`),
    h('thead', null, h('tr', null, head.map((text) => (text === 'Cost' ? costHeader(query)
      : h('th', { scope: 'col', class: numeric.has(text) ? 'num' : null }, text))))),
    h('tbody', null, list.tasks.map((row) => renderRow(row, context))));
  return h('div', { class: 'table-wrap' }, table);
}

function renderPager(list, query, context) {
  const first = list.total === 0 ? 0 : list.offset + 1;
  const last = Math.min(list.offset + list.tasks.length, list.total);
  const prev = h('button', { type: 'button', id: 'page-prev', class: 'button', disabled: list.offset <= 0 }, '\u2190 Newer');
  const next = h('button', { type: 'button', id: 'page-next', class: 'button', disabled: last >= list.total }, 'Older \u2192');
  prev.addEventListener('click', () => context.navigate(tasksPageUrl({ ...query, offset: Math.max(list.offset - list.limit, 0) })));
  next.addEventListener('click', () => context.navigate(tasksPageUrl({ ...query, offset: list.offset + list.limit })));
  return h('nav', { class: 'pager', 'aria-label': 'Pages of task attempts' },
    prev, h('span', { class: 'pager-status' }, `${formatCount(first)}\u2013${formatCount(last)} of ${formatCount(list.total)}`), next);
}

function filterSummary(query) {
  const parts = [];
  if (query.dag) parts.push(`DAG ${query.dag}`);
  if (query.task) parts.push(`task ${query.task}`);
  if (query.state) parts.push(query.state);
  if (query.q) parts.push(`id ${query.q}`);
  return parts.join(', ');
}

export async function renderTasksPage(route, context) {
  const { query } = route;
  const controller = new AbortController();
  const summary = filterSummary(query);
  context.setTitle(summary ? `Tasks: ${summary}` : 'Tasks');
  context.setBreadcrumb([{ text: 'Tasks' }]);
  const { main } = context;
  const status = h('p', { class: 'page-sub', 'aria-live': 'polite' }, 'Loading\u2026');
  main.append(
    h('div', { class: 'page-head' }, h('h1', null, 'Task attempts'), status),
    renderFilters(query, context));

  const load = async () => {
    let list;
    try {
      ({ data: list } = await fetchJson(tasksApiUrl(query, TASKS_PAGE_SIZE), { signal: controller.signal }));
    } catch (error) {
      if (error.name === 'AbortError' || !context.isCurrent()) return;
      status.textContent = '';
      renderError(context, error, { what: 'task list', retry: () => context.navigate(location.pathname + location.search, { replace: true }) });
      return;
    }
    if (!context.isCurrent()) return;
    status.textContent = `${formatCount(list.total)} attempts${summary ? ` matching ${summary}` : ''}, ${sortDescription(query.sort)}`;
    if (list.tasks.length === 0) {
      main.append(h('div', { class: 'empty-box' },
        h('p', null, list.total === 0 ? 'No task attempts match these filters.' : 'No attempts on this page.'),
        h('p', null, h('a', { href: '/' }, 'Show all task attempts'))));
    } else {
      main.append(h('div', { class: 'list-key' }, renderPhaseKey('Phase colours in \u201cwhere the time went\u201d')));
      main.append(renderTable(list, query, context));
    }
    main.append(renderPager(list, query, context));
    context.markReady();
  };
  await load();
  return () => controller.abort();
}
