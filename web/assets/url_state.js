// Page state <-> URL (path + query), as docs/trace-view-api.md lists them. Pure: takes and returns
// strings and plain objects, so that every page can be restored from its URL and tested in Node.
//
// An Airflow task attempt's ids travel in the query, never in the path (traceview/attempt_url.h says
// why at length): /attempt?dag=..&task=.&run=<run>&try=2[&map=3], its JSON at /api/v1/attempt?<the
// same>. "." and ".." are valid Airflow task ids, and as path segments they would be dot segments
// that the browser removes before the request leaves; "%2E" and "%2E%2E" count as dot segments too,
// so no escaping inside a path keeps them, while a query is never rewritten. attemptPairs() is the
// one encoder and parseAttemptQuery() the one decoder; values are escaped as the C++ API escapes
// them (all but A-Z a-z 0-9 - _ . ~), so both write the same address for an attempt. The earlier
// /tasks/<dag>/<task>/<run>/<try>[?map_index=N] is still read (route.legacy), for links made before.
// Other path segments (trace ids, recipe paths) are percent-encoded one by one.

export const TASKS_PAGE_SIZE = 50;
const TASK_FILTER_KEYS = ['dag', 'task', 'state', 'since', 'until', 'q'];
export const TASK_STATES = ['running', 'success', 'failed'];
// The list's orders (`sort` of /api/v1/tasks); the first is the default and is left out of URLs.
export const TASK_SORTS = ['-start', 'start', '-cost', 'cost'];

export const ATTEMPT_PAGE_PATH = '/attempt';
export const ATTEMPT_API_PATH = '/api/v1/attempt';
// [identity field, query parameter] in the order they are written; then `map` unless it is -1.
const ATTEMPT_PARAMS = [['dag_id', 'dag'], ['task_id', 'task'], ['run_id', 'run'], ['try_number', 'try']];
const MAP_PARAM = 'map';
const LEGACY_MAP_PARAM = 'map_index';

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
  if (!/^-?\d+$/.test(text)) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : null;
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
  if ('/' + head === ATTEMPT_PAGE_PATH && rest.length === 0) {
    const identity = parseAttemptQuery(params);
    if (identity === null) return { page: 'unknown' };
    return { page: 'attempt', kind: 'airflow', identity, view: parseView(params) };
  }
  if (head === 'tasks' && rest.length === 4 && rest.every((s) => s !== '')) {
    // The earlier shape: its ids cannot be dot segments (the browser has removed those already).
    const [dag_id, task_id, run_id, tryText] = rest;
    const try_number = parseIntStrict(tryText);
    const map_index = parseMapIndex(lastParam(params, LEGACY_MAP_PARAM));
    if (try_number === null || map_index === null) return { page: 'unknown' };
    return {
      page: 'attempt', kind: 'airflow', legacy: true,
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

// The value of the last `name` in the query (as the C++ side reads a repeated name), or null.
function lastParam(params, name) {
  const values = params.getAll(name);
  return values.length ? values[values.length - 1] : null;
}

function parseMapIndex(text) {
  return text === null || text === '' ? -1 : parseIntStrict(text);
}

// The decoder: the attempt a query names, {dag_id, task_id, run_id, try_number, map_index}, or null
// when one of dag, task, run and try is missing or try or map is not an integer. Ids may be empty.
// Other parameters (the view's) are not its business.
export function parseAttemptQuery(params) {
  const identity = {};
  for (const [field, name] of ATTEMPT_PARAMS) {
    const value = lastParam(params, name);
    if (value === null) return null;
    identity[field] = value;
  }
  identity.try_number = parseIntStrict(identity.try_number);
  identity.map_index = parseMapIndex(lastParam(params, MAP_PARAM));
  if (identity.try_number === null || identity.map_index === null) return null;
  return identity;
}

// All but A-Z a-z 0-9 - _ . ~ percent-encoded as UTF-8: encodeURIComponent, plus its "!'()*". The C++
// API's EncodePathSegment writes the same, so an address from either side compares equal.
export function encodeComponent(value) {
  const text = String(value);
  // A lone surrogate (not text UTF-8 can carry) would make encodeURIComponent throw.
  return encodeURIComponent(text.toWellFormed ? text.toWellFormed() : text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

// "?a=1&b=x%20y" of [[name, value]], or "" for none.
function queryOf(pairs) {
  return pairs.length ? '?' + pairs.map(([name, value]) => `${name}=${encodeComponent(value)}`).join('&') : '';
}

// The encoder: the query parameters that name an attempt, [[name, value]].
function attemptPairs(identity) {
  const pairs = ATTEMPT_PARAMS.map(([field, name]) => [name, String(identity[field])]);
  if (identity.map_index !== undefined && identity.map_index !== -1) pairs.push([MAP_PARAM, String(identity.map_index)]);
  return pairs;
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
  const sort = params.get('sort');
  if (sort && sort !== TASK_SORTS[0] && TASK_SORTS.includes(sort)) query.sort = sort;
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
  if (query.sort && query.sort !== TASK_SORTS[0] && TASK_SORTS.includes(query.sort)) params.set('sort', query.sort);
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

// "/attempt?dag=etl&task=load&run=scheduled__2026-11-25T06%3A00%3A00%2B00%3A00&try=1&map=3".
export function attemptPath(identity) {
  return ATTEMPT_PAGE_PATH + queryOf(attemptPairs(identity));
}

export function tracePath(traceId) {
  return encodePath(['traces', traceId]);
}

// The JSON of the attempt a route shows: /api/v1/attempt with the page's ids, or /api/v1/traces/<id>.
export function attemptApiUrl(route) {
  if (route.kind === 'trace') return '/api/v1' + tracePath(route.traceId);
  return ATTEMPT_API_PATH + queryOf(attemptPairs(route.identity));
}

function roundMs(value) {
  return Math.round(value * 1000) / 1000;
}

// The URL of an attempt page with its view (selection, zoom, search): always the current shape, also
// for a route read from an earlier one.
export function attemptPageUrl(route, view = route.view) {
  const base = route.kind === 'trace' ? tracePath(route.traceId) : ATTEMPT_PAGE_PATH;
  const pairs = route.kind === 'trace' ? [] : attemptPairs(route.identity);
  if (view?.span) pairs.push(['span', view.span]);
  if (view && view.from !== null && view.to !== null && view.from !== undefined && view.to > view.from) {
    pairs.push(['from', String(roundMs(view.from))], ['to', String(roundMs(view.to))]);
  }
  if (view?.find) pairs.push(['find', view.find]);
  return base + queryOf(pairs);
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
