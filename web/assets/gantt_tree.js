// The span tree behind the Gantt's rows: parent links, subtree extents, which rows are visible with
// some nodes collapsed, and search. Pure; built once per attempt (and per poll) in O(n), so that
// collapsing, expanding and scrolling through 20,000 spans never walks more than it must.
//
// `spans` arrive in tree order (parent before children, siblings by start), as the API promises.

export function buildTree(spans) {
  const n = spans.length;
  const indexById = new Map();
  for (let i = 0; i < n; i += 1) indexById.set(spans[i].id, i);
  const parent = new Int32Array(n);
  const subtreeEnd = new Int32Array(n);  // index after the last descendant
  const stack = [];
  for (let i = 0; i < n; i += 1) {
    const p = spans[i].parent_id ? indexById.get(spans[i].parent_id) : undefined;
    // A parent later in the list (out of tree order) or missing: treat the span as a root.
    parent[i] = p !== undefined && p < i ? p : -1;
    while (stack.length && stack[stack.length - 1] !== parent[i]) subtreeEnd[stack.pop()] = i;
    if (parent[i] !== -1 && !stack.length) parent[i] = -1;  // its parent is not an open ancestor
    stack.push(i);
  }
  while (stack.length) subtreeEnd[stack.pop()] = n;
  return { spans, n, indexById, parent, subtreeEnd };
}

export function hasChildren(tree, i) {
  return tree.subtreeEnd[i] > i + 1;
}

// Indices of the rows shown when the spans whose ids are in `collapsed` hide their descendants.
export function visibleRows(tree, collapsed) {
  const rows = [];
  let i = 0;
  while (i < tree.n) {
    rows.push(i);
    i = collapsed.has(tree.spans[i].id) ? tree.subtreeEnd[i] : i + 1;
  }
  return Int32Array.from(rows);
}

// Ancestors of span `i`, nearest first.
export function ancestors(tree, i) {
  const out = [];
  for (let p = tree.parent[i]; p !== -1; p = tree.parent[p]) out.push(p);
  return out;
}

// The collapsed set to start with: small traces fully open; large ones (beyond `maxOpenRows`) show
// the top levels with deeper parents (jobs over their stages) closed, so the page opens on an
// overview rather than on the first of thousands of stages.
export function initialCollapsed(tree, maxOpenRows = 400) {
  const collapsed = new Set();
  if (tree.n <= maxOpenRows) return collapsed;
  for (let i = 0; i < tree.n; i += 1) {
    if (hasChildren(tree, i) && tree.spans[i].depth >= 1) collapsed.add(tree.spans[i].id);
  }
  return collapsed;
}

function attributeText(value) {
  if (Array.isArray(value)) return value.map(attributeText).join(' ');
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

// The text a search looks in: label, name and every attribute value (what the search box says).
export function searchText(span) {
  const parts = [span.label, span.name];
  const attributes = span.attributes || {};
  for (const key of Object.keys(attributes)) parts.push(attributeText(attributes[key]));
  return parts.filter(Boolean).join('\n').toLowerCase();
}

// Indices (tree order) of spans whose text contains `query`, case-insensitively. `cache` (an
// array) keeps each span's text between searches: typing re-searches 20,000 spans per key.
export function findMatches(spans, query, cache = []) {
  const needle = query.trim().toLowerCase();
  if (!needle) return [];
  const out = [];
  for (let i = 0; i < spans.length; i += 1) {
    if (cache[i] === undefined) cache[i] = searchText(spans[i]);
    if (cache[i].includes(needle)) out.push(i);
  }
  return out;
}

// The match after (or before, with `backwards`) the span `current` in tree order, wrapping.
export function nextMatch(matches, current, backwards = false) {
  if (!matches.length) return -1;
  if (backwards) {
    for (let k = matches.length - 1; k >= 0; k -= 1) if (matches[k] < current) return matches[k];
    return matches[matches.length - 1];
  }
  for (const m of matches) if (m > current) return m;
  return matches[0];
}
