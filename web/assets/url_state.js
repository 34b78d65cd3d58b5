// Page state <-> URL (path + query), as docs/trace-view-api.md lists them. Pure: takes and returns
// strings and plain objects, so that every page can be restored from its URL and tested in Node.
//
// Path segments are percent-encoded one by one (encodeURIComponent), so run ids holding "+", ":",
// "/", "%" or any Unicode survive; the query goes through URLSearchParams both ways.

export const TASKS_PAGE_SIZE = 50;
const TASK_FILTER_KEYS = ['dag', 'task', 'state', 'since', 'until', 'q'];
export const TASK_STATES = ['running', 'success', 'failed'];

function decodeSegment(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;  // malformed percent-encoding: not a page we know
  }
}

function splitPath(pathname) {
  const raw = pathname.split('/').slice(1);
  if (raw.length && raw[raw.length - 1] === '') raw.pop();  // a trailing slash
  const segments = raw.map(decodeSegment);
  return segments.includes(null) ? null : segments;
}

function parseIntStrict(text) {
  return /^-?\d+$/.test(text) ? Number(text) : null;
}

function parseNumber(text) {
  if (text === null || text === '') return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

// The view of an attempt page that its URL carries.
function parseView(params) {
  const from = parseNumber(params.get('from'));
  const to = parseNumber(params.get('to'));
  const zoomed = from !== null && to !== null && to > from;
  return {
    span: params.get('span') || null,
    from: zoomed ? from : null,
    to: zoomed ? to : null,
    find: params.get('find') || '',
  };
}

// Which page a URL shows. `search` is location.search ("?a=b" or "").
export function parseRoute(pathname, search = '') {
  const params = new URLSearchParams(search);
  const segments = splitPath(pathname);
  if (segments === null) return { page: 'unknown' };
  if (segments.length === 0) return { page: 'tasks', query: parseTaskQuery(params) };
  const [head, ...rest] = segments;
  if (head === 'tasks' && rest.length === 4 && rest.every((s) => s !== '')) {
    const [dag_id, task_id, run_id, tryText] = rest;
    const try_number = parseIntStrict(tryText);
    const mapText = params.get('map_index');
    const map_index = mapText === null || mapText === '' ? -1 : parseIntStrict(mapText);
    if (try_number === null || map_index === null) return { page: 'unknown' };
    return {
      page: 'attempt', kind: 'airflow',
      identity: { dag_id, task_id, run_id, try_number, map_index },
      view: parseView(params),
    };
  }
  if (head === 'traces' && rest.length === 1 && rest[0] !== '') {
    return { page: 'attempt', kind: 'trace', traceId: rest[0], view: parseView(params) };
  }
  if (head === 'recipes' && rest.length >= 1) {
    const path = rest.join('/');
    if (isRecipePath(path)) return { page: 'recipe', path };
  }
  return { page: 'unknown' };
}

// A recipe path relative to docs/recipes: "troubleshoot/gc-pressure.md", never climbing out.
export function isRecipePath(path) {
  if (typeof path !== 'string' || !path.endsWith('.md')) return false;
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

function encodePath(segments) {
  return '/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
}

export function parseTaskQuery(params) {
  const query = {};
  for (const key of TASK_FILTER_KEYS) {
    const value = params.get(key);
    if (value !== null && value !== '') query[key] = value;
  }
  if (query.state && !TASK_STATES.includes(query.state)) delete query.state;
  for (const key of ['since', 'until']) {
    if (query[key] !== undefined && parseNumber(query[key]) === null) delete query[key];
  }
  const offset = parseIntStrict(params.get('offset') ?? '');
  query.offset = offset !== null && offset > 0 ? offset : 0;
  return query;
}

function taskQueryParams(query) {
  const params = new URLSearchParams();
  for (const key of TASK_FILTER_KEYS) {
    const value = query[key];
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  if (query.offset) params.set('offset', String(query.offset));
  return params;
}

function withQuery(path, params) {
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

// The task list page for a query: "/?dag=etl&offset=50".
export function tasksPageUrl(query) {
  return withQuery('/', taskQueryParams(query));
}

export function tasksApiUrl(query, limit = TASKS_PAGE_SIZE) {
  const params = taskQueryParams(query);
  params.set('limit', String(limit));
  if (!query.offset) params.set('offset', '0');
  return withQuery('/api/v1/tasks', params);
}

function attemptSegments(identity) {
  return ['tasks', identity.dag_id, identity.task_id, identity.run_id, identity.try_number];
}

function mapIndexParams(identity) {
  const params = new URLSearchParams();
  if (identity.map_index !== undefined && identity.map_index !== -1) {
    params.set('map_index', String(identity.map_index));
  }
  return params;
}

// "/tasks/etl/load/scheduled__2026-11-25T06%3A00%3A00%2B00%3A00/1?map_index=3".
export function attemptPath(identity) {
  return withQuery(encodePath(attemptSegments(identity)), mapIndexParams(identity));
}

export function tracePath(traceId) {
  return encodePath(['traces', traceId]);
}

// The JSON of the attempt a route shows.
export function attemptApiUrl(route) {
  if (route.kind === 'trace') return '/api/v1' + tracePath(route.traceId);
  return withQuery('/api/v1' + encodePath(attemptSegments(route.identity)), mapIndexParams(route.identity));
}

function roundMs(value) {
  return Math.round(value * 1000) / 1000;
}

// The URL of an attempt page with its view (selection, zoom, search).
export function attemptPageUrl(route, view = route.view) {
  const base = route.kind === 'trace' ? tracePath(route.traceId) : encodePath(attemptSegments(route.identity));
  const params = route.kind === 'trace' ? new URLSearchParams() : mapIndexParams(route.identity);
  if (view?.span) params.set('span', view.span);
  if (view && view.from !== null && view.to !== null && view.from !== undefined && view.to > view.from) {
    params.set('from', String(roundMs(view.from)));
    params.set('to', String(roundMs(view.to)));
  }
  if (view?.find) params.set('find', view.find);
  return withQuery(base, params);
}

export function recipePageUrl(path) {
  return encodePath(['recipes', ...path.split('/')]);
}

export function recipeApiUrl(path) {
  return '/api/v1' + recipePageUrl(path);
}

// Resolves a link found in the recipe at `fromPath` ("troubleshoot/a.md"). Answers
// {kind: 'recipe', href} for another recipe (or an anchor in this one), {kind: 'external', href} for
// http(s), and null for anything else (links out of docs/recipes, other schemes): shown as text.
export function resolveRecipeLink(fromPath, href) {
  if (typeof href !== 'string' || href === '') return null;
  if (/^https?:\/\//i.test(href)) return { kind: 'external', href };
  if (href.startsWith('#')) return { kind: 'anchor', href };
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('/')) return null;
  const hashAt = href.indexOf('#');
  const target = hashAt >= 0 ? href.slice(0, hashAt) : href;
  const hash = hashAt >= 0 ? href.slice(hashAt) : '';
  const stack = fromPath.split('/').slice(0, -1);
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (stack.length === 0) return null;  // climbs out of docs/recipes
      stack.pop();
    } else {
      stack.push(part);
    }
  }
  const path = stack.join('/');
  if (!isRecipePath(path)) return null;
  return { kind: 'recipe', href: recipePageUrl(path) + hash };
}

// Only links the page may follow: same-origin absolute paths, or http(s) URLs. Anything else
// (javascript:, data:, protocol-relative "//host") answers null.
export function safeHref(href) {
  if (typeof href !== 'string' || href === '') return null;
  // Browsers drop tabs and newlines from URLs and read a backslash as "/": "/<TAB>/evil" would be "//evil".
  if (/[\u0000-\u0020\u007f\\]/.test(href)) return null;
  if (href.startsWith('/') && !href.startsWith('//')) return href;
  if (/^https?:\/\/./i.test(href)) return href;
  return null;
}
