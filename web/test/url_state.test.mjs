import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseRoute, parseAttemptQuery, attemptPath, attemptPageUrl, attemptApiUrl, encodeComponent, tasksPageUrl,
  tasksApiUrl, recipePageUrl, recipeApiUrl, resolveRecipeLink, safeHref, tracePath,
} from '../assets/url_state.js';

function split(url) {
  const at = url.indexOf('?');
  return at < 0 ? [url, ''] : [url.slice(0, at), url.slice(at)];
}

const RUN_IDS = [
  'manual__2026-11-25T06:00',
  'scheduled__2026-11-25T06:00:00+00:00',
  'backfill/with/slashes',
  '100% done',
  'run #1 ? & = +',
  'ünïcødé-運行-🚀',
];

// Ids that break paths: dot segments (valid Airflow task ids), escapes that parsers read as dots,
// slashes, the query and fragment marks, "%", "+", spaces, an empty id, Unicode.
const AWKWARD_IDS = [
  '.', '..', '...', '%2E', '%2E%2E', '.%2E', 'a/../b', '/', '//', '?', '#', '#x?y', '%', '%zz', '+', 'a+b c',
  '=&;', "~-_.!*'()", '\\', 'tab\there', '', ...RUN_IDS,
];

const BASE = 'http://127.0.0.1:9464';

test('attempt addresses round-trip every awkward id, through the URL parser browsers use', () => {
  for (const id of AWKWARD_IDS) {
    for (const map_index of [-1, 0, 7]) {
      const identities = [
        { dag_id: id, task_id: 'load', run_id: 'r', try_number: 2, map_index },
        { dag_id: 'etl', task_id: id, run_id: 'r', try_number: 2, map_index },
        { dag_id: 'etl', task_id: 'load', run_id: id, try_number: 2, map_index },
        { dag_id: id, task_id: id, run_id: id, try_number: 1, map_index },
      ];
      for (const identity of identities) {
        const href = attemptPath(identity);
        // What a click, a bookmark or fetch() does to the link: WHATWG URL parsing (dot segments,
        // backslashes, tabs, the fragment) must leave it as it is.
        const url = new URL(href, BASE);
        assert.equal(url.pathname + url.search, href, JSON.stringify(identity));
        assert.equal(url.hash, '');
        const route = parseRoute(url.pathname, url.search);
        assert.equal(route.page, 'attempt', href);
        assert.equal(route.legacy, undefined);
        assert.deepEqual(route.identity, identity, href);
        // The JSON the page asks for names the same attempt, and survives the parser too.
        const api = new URL(attemptApiUrl(route), BASE);
        assert.equal(api.pathname, '/api/v1/attempt');
        assert.equal(api.search, url.search);
        // The page's own URL with a view keeps naming it.
        const view = { span: 'ab', from: 1, to: 2, find: id };
        const withView = new URL(attemptPageUrl(route, view), BASE);
        assert.deepEqual(parseRoute(withView.pathname, withView.search).identity, identity);
      }
    }
  }
});

test('the earlier path shape cannot carry dot segments: why ids go in the query', () => {
  assert.equal(new URL('/tasks/../x/r/1', BASE).pathname, '/x/r/1');
  assert.equal(new URL('/tasks/d/%2E/r/1', BASE).pathname, '/tasks/d/r/1');
  assert.equal(new URL('/tasks/%2E%2E/t/r/1', BASE).pathname, '/t/r/1');
  assert.equal(new URL(attemptPath({ dag_id: '..', task_id: '.', run_id: '%2E%2E', try_number: 1, map_index: -1 }), BASE).search,
    '?dag=..&task=.&run=%252E%252E&try=1');
});

test('attempt addresses are written exactly as the C++ API writes them', () => {
  // The same strings as tests/unit/traceview/traceview_attempt_url_test.cc.
  assert.equal(attemptPath({ dag_id: '..', task_id: '.', run_id: 'manual__2024/01?a=1#b 100%+ü', try_number: 2, map_index: -1 }),
    '/attempt?dag=..&task=.&run=manual__2024%2F01%3Fa%3D1%23b%20100%25%2B%C3%BC&try=2');
  assert.equal(attemptPath({ dag_id: 'etl', task_id: 'load', run_id: '', try_number: 1, map_index: 3 }),
    '/attempt?dag=etl&task=load&run=&try=1&map=3');
  assert.equal(encodeComponent("!*'()~-_."), '%21%2A%27%28%29~-_.');
});

test('the api address mirrors the page address, map index only when set', () => {
  const identity = { dag_id: 'etl', task_id: 'load', run_id: 'scheduled__2026-11-25T06:00:00+00:00', try_number: 1, map_index: -1 };
  assert.equal(attemptPath(identity), '/attempt?dag=etl&task=load&run=scheduled__2026-11-25T06%3A00%3A00%2B00%3A00&try=1');
  const route = { kind: 'airflow', identity };
  assert.equal(attemptApiUrl(route), '/api/v1/attempt?dag=etl&task=load&run=scheduled__2026-11-25T06%3A00%3A00%2B00%3A00&try=1');
  assert.equal(attemptApiUrl({ kind: 'airflow', identity: { ...identity, map_index: 3 } }),
    '/api/v1/attempt?dag=etl&task=load&run=scheduled__2026-11-25T06%3A00%3A00%2B00%3A00&try=1&map=3');
  assert.equal(attemptApiUrl({ kind: 'trace', traceId: 'abc' }), '/api/v1/traces/abc');
});

test('attempt queries other clients write are read too', () => {
  // URLSearchParams writes a space as "+"; Grafana and Python's quote write %20; any order; a later
  // repeat wins, as on the C++ side; an empty map is -1.
  assert.deepEqual(parseRoute('/attempt', '?try=3&run=x+y%20z&task=%2E&dag=a&map=').identity,
    { dag_id: 'a', task_id: '.', run_id: 'x y z', try_number: 3, map_index: -1 });
  assert.deepEqual(parseAttemptQuery(new URLSearchParams('dag=a&dag=b&task=t&run=&try=1&map=4')),
    { dag_id: 'b', task_id: 't', run_id: '', try_number: 1, map_index: 4 });
});

test('an attempt address of the earlier shape is read, and rewritten in the current one', () => {
  const route = parseRoute('/tasks/etl/load/scheduled__2026-11-25T06%3A00%3A00%2B00%3A00/2', '?map_index=3&span=ab');
  assert.equal(route.legacy, true);
  assert.deepEqual(route.identity,
    { dag_id: 'etl', task_id: 'load', run_id: 'scheduled__2026-11-25T06:00:00+00:00', try_number: 2, map_index: 3 });
  assert.equal(attemptPageUrl(route),
    '/attempt?dag=etl&task=load&run=scheduled__2026-11-25T06%3A00%3A00%2B00%3A00&try=2&map=3&span=ab');
  assert.equal(attemptApiUrl(route), '/api/v1/attempt?dag=etl&task=load&run=scheduled__2026-11-25T06%3A00%3A00%2B00%3A00&try=2&map=3');
});

test('the view (span, zoom, search) round-trips through the query', () => {
  const identity = { dag_id: 'etl', task_id: 'load', run_id: 'r+1', try_number: 1, map_index: 4 };
  const view = { span: '00f067aa0ba902b7', from: 1234.5678, to: 98765, find: 'stage 3 + "x" & y%' };
  const url = attemptPageUrl({ kind: 'airflow', identity }, view);
  const [path, search] = split(url);
  const route = parseRoute(path, search);
  assert.deepEqual(route.identity, identity);
  assert.deepEqual(route.view, { ...view, from: 1234.568 });
  const trace = parseRoute(...split(attemptPageUrl({ kind: 'trace', traceId: '4bf9' }, { span: null, from: null, to: null, find: 'ü' })));
  assert.deepEqual(trace, { page: 'attempt', kind: 'trace', traceId: '4bf9', view: { span: null, from: null, to: null, find: 'ü' } });
});

test('a zoom window that is empty or reversed is dropped', () => {
  const route = parseRoute('/traces/x', '?from=50&to=10');
  assert.equal(route.view.from, null);
  assert.equal(route.view.to, null);
  assert.equal(parseRoute('/traces/x', '?from=a&to=10').view.from, null);
});

test('unknown and malformed paths', () => {
  assert.equal(parseRoute('/tasks/a/b/c').page, 'unknown');
  assert.equal(parseRoute('/tasks/a/b/c/x').page, 'unknown');
  assert.equal(parseRoute('/tasks/a/b/c/1', '?map_index=x').page, 'unknown');
  assert.equal(parseRoute('/attempt').page, 'unknown');
  assert.equal(parseRoute('/attempt', '?dag=a&task=b&try=1').page, 'unknown');  // no run
  assert.equal(parseRoute('/attempt', '?dag=a&task=b&run=c&try=x').page, 'unknown');
  assert.equal(parseRoute('/attempt', '?dag=a&task=b&run=c&try=1&map=x').page, 'unknown');
  assert.equal(parseRoute('/attempt', '?dag=a&task=b&run=c&try=99999999999999999999').page, 'unknown');
  assert.equal(parseRoute('/attempt/x', '?dag=a&task=b&run=c&try=1').page, 'unknown');
  assert.equal(parseRoute('/tasks/a/b/%E0%A4%A/1').page, 'unknown');
  assert.equal(parseRoute('/nope').page, 'unknown');
  assert.equal(parseRoute('/recipes/../secret.md').page, 'unknown');
  assert.equal(parseRoute('/recipes/troubleshoot/x.txt').page, 'unknown');
});

test('task list filters round-trip and paging', () => {
  const query = { dag: 'etl daily', task: 'a+b', state: 'failed', since: '1764050400000', q: '4bf9/x', offset: 100 };
  const [path, search] = split(tasksPageUrl(query));
  assert.equal(path, '/');
  assert.deepEqual(parseRoute(path, search), { page: 'tasks', query });
  assert.deepEqual(parseRoute('/', '?state=bogus&offset=-5&since=abc'), { page: 'tasks', query: { offset: 0 } });
  assert.equal(tasksApiUrl({ offset: 0 }), '/api/v1/tasks?limit=50&offset=0');
  assert.equal(tasksApiUrl({ dag: 'etl', offset: 50 }, 20), '/api/v1/tasks?dag=etl&offset=50&limit=20');
});

test('recipe urls and links between recipes', () => {
  assert.deepEqual(parseRoute('/recipes/troubleshoot/gc-pressure.md'), { page: 'recipe', path: 'troubleshoot/gc-pressure.md' });
  assert.equal(recipePageUrl('troubleshoot/gc-pressure.md'), '/recipes/troubleshoot/gc-pressure.md');
  assert.equal(recipeApiUrl('a b/c.md'), '/api/v1/recipes/a%20b/c.md');
  const from = 'troubleshoot/resource-wait-long.md';
  assert.deepEqual(resolveRecipeLink(from, 'slow-spark-jobs.md#idle-executors'),
    { kind: 'recipe', href: '/recipes/troubleshoot/slow-spark-jobs.md#idle-executors' });
  assert.deepEqual(resolveRecipeLink(from, '../observability/sparktrace-proxy.md'),
    { kind: 'recipe', href: '/recipes/observability/sparktrace-proxy.md' });
  assert.deepEqual(resolveRecipeLink('README.md', 'troubleshoot/x.md'), { kind: 'recipe', href: '/recipes/troubleshoot/x.md' });
  assert.equal(resolveRecipeLink(from, '../../docs/tracing.md'), null);
  assert.equal(resolveRecipeLink('README.md', '../tracing.md'), null);
  assert.equal(resolveRecipeLink(from, 'javascript:alert(1)'), null);
  assert.equal(resolveRecipeLink(from, '/etc/passwd'), null);
  assert.deepEqual(resolveRecipeLink(from, '#causes'), { kind: 'anchor', href: '#causes' });
  assert.deepEqual(resolveRecipeLink(from, 'https://spark.apache.org/docs'), { kind: 'external', href: 'https://spark.apache.org/docs' });
});

test('only relative paths and http(s) links are followed', () => {
  assert.equal(safeHref('/tasks/a/b/c/1'), '/tasks/a/b/c/1');
  assert.equal(safeHref('http://driver:4040/jobs/'), 'http://driver:4040/jobs/');
  assert.equal(safeHref('javascript:alert(1)'), null);
  assert.equal(safeHref('JaVaScRiPt:alert(1)'), null);
  assert.equal(safeHref('data:text/html,x'), null);
  assert.equal(safeHref('//evil.example/x'), null);
  assert.equal(safeHref('/\t/evil.example'), null);
  assert.equal(safeHref('/\\evil.example'), null);
  assert.equal(safeHref('relative/path'), null);
  assert.equal(safeHref(null), null);
  assert.equal(tracePath('a/b'), '/traces/a%2Fb');
});
