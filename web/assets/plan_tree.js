// A SQL execution's plan (GET /api/v1/traces/<trace>/sql-plan, docs/trace-view-api.md) as a
// foldable operator tree: flattened once in pre-order, each node's share of the execution's
// operator time, the hottest path (from the root, into the child whose subtree spent the most),
// which rows are visible with some nodes open, search, and the stage spans a node ran in. Pure.
//
// A 2,000-operator plan stays usable: it opens folded below the hottest path, visiblePlanRows walks
// only what is open, and a search unfolds just the ancestors of what it finds.

// The plan document's tree, flattened: nodes[i] in pre-order, with parent, depth and subtree end.
export function buildPlanModel(document) {
  const nodes = [];
  const root = document?.root;
  if (root) {
    // Iterative: plans may be 1,500 operators deep.
    const stack = [{ node: root, parent: -1, depth: 0 }];
    while (stack.length) {
      const { node, parent, depth } = stack.pop();
      const index = nodes.length;
      nodes.push({
        index,
        id: node.id,
        name: node.name ?? '',
        detail: node.detail ?? '',
        codegenStage: node.codegen_stage ?? null,
        stageIds: node.stage_ids ?? [],
        timeMs: Number(node.time_ms) || 0,
        rows: node.rows ?? null,
        spillBytes: node.spill_bytes ?? null,
        peakMemoryBytes: node.peak_memory_bytes ?? null,
        metrics: node.metrics ?? null,
        childrenOmitted: node.children_omitted ?? 0,
        parent,
        depth,
        children: [],
        subtreeEnd: 0,
        subtreeMs: 0,
      });
      if (parent >= 0) nodes[parent].children.push(index);
      const children = node.children ?? [];
      for (let c = children.length - 1; c >= 0; c -= 1) stack.push({ node: children[c], parent: index, depth: depth + 1 });
    }
  }
  // Subtree ends and times, children before parents (reverse pre-order).
  for (let i = nodes.length - 1; i >= 0; i -= 1) {
    const node = nodes[i];
    node.subtreeEnd = node.children.length ? nodes[node.children[node.children.length - 1]].subtreeEnd : i + 1;
    node.subtreeMs = node.timeMs + node.children.reduce((sum, c) => sum + nodes[c].subtreeMs, 0);
  }
  const summed = nodes.reduce((sum, node) => sum + node.timeMs, 0);
  const totalMs = Number(document?.operator_time_ms) > 0 ? Number(document.operator_time_ms) : summed;
  for (const node of nodes) node.share = totalMs > 0 ? Math.min(node.timeMs / totalMs, 1) : 0;
  const model = {
    nodes,
    totalMs,
    nodesInPlan: document?.nodes ?? nodes.length,
    metricsDropped: Boolean(document?.metrics_dropped),
    droppedByParser: document?.dropped_by_parser ?? 0,
    hotPath: new Set(),
  };
  model.hotPath = hottestPath(model);
  return model;
}

// From the root, each step into the child whose subtree spent the most time; stops where no child
// spent any. Ties go to the first child.
export function hottestPath(model) {
  const path = new Set();
  if (!model.nodes.length) return path;
  let at = 0;
  path.add(at);
  for (;;) {
    let best = -1;
    for (const child of model.nodes[at].children) {
      if (model.nodes[child].subtreeMs > 0 && (best < 0 || model.nodes[child].subtreeMs > model.nodes[best].subtreeMs)) best = child;
    }
    if (best < 0) return path;
    path.add(best);
    at = best;
  }
}

// The hottest node: the one with the most time of its own (ties: the first in plan order).
export function hottestNode(model) {
  let best = -1;
  for (const node of model.nodes) if (node.timeMs > 0 && (best < 0 || node.timeMs > model.nodes[best].timeMs)) best = node.index;
  return best;
}

// Open to start with: small plans whole; larger ones along the hottest path (its nodes' children are
// shown) and down to the hottest node, everything else folded.
export function initialOpen(model, maxOpenNodes = 60) {
  if (model.nodes.length <= maxOpenNodes) return openAll(model);
  const open = new Set([...model.hotPath].filter((i) => model.nodes[i].children.length));
  // The operator that spent the most may sit beside the path (a hot scan under a cheap join side).
  const hottest = hottestNode(model);
  return hottest >= 0 ? openTo(model, open, hottest) : open;
}

export function openAll(model) {
  return new Set(model.nodes.filter((node) => node.children.length).map((node) => node.index));
}

// The rows shown: pre-order, skipping the subtree of every node that is not open.
export function visiblePlanRows(model, open) {
  const rows = [];
  const { nodes } = model;
  let i = 0;
  while (i < nodes.length) {
    rows.push(i);
    i = open.has(i) ? i + 1 : nodes[i].subtreeEnd;
  }
  return rows;
}

// Nodes whose name (or detail) holds `query`, case-insensitively, in plan order.
export function findPlanNodes(model, query) {
  const needle = String(query ?? '').trim().toLowerCase();
  if (!needle) return [];
  return model.nodes
    .filter((node) => node.name.toLowerCase().includes(needle) || node.detail.toLowerCase().includes(needle))
    .map((node) => node.index);
}

// `open` with every ancestor of `index` opened as well, so that the node is on a visible row.
export function openTo(model, open, index) {
  const next = new Set(open);
  for (let p = model.nodes[index]?.parent ?? -1; p >= 0; p = model.nodes[p].parent) next.add(p);
  return next;
}

// The stage spans of the attempt a node ran in: spark.stage spans whose stage id the node lists,
// within the operation the execution ran for (`operationSpanId`, the execution span's parent; empty:
// anywhere in the attempt). Returns their span ids.
export function stageSpanIds(spans, stageIds, operationSpanId) {
  if (!stageIds?.length) return [];
  const wanted = new Set(stageIds.map(Number));
  const parentOf = new Map(spans.map((span) => [span.id, span.parent_id]));
  const under = (id) => {
    if (!operationSpanId) return true;
    for (let at = parentOf.get(id), steps = 0; at && steps < 64; at = parentOf.get(at), steps += 1) {
      if (at === operationSpanId) return true;
    }
    return false;
  };
  return spans
    .filter((span) => span.lane === 'stage' && wanted.has(Number(span.attributes?.['spark.stage.id'])) && under(span.id))
    .map((span) => span.id);
}
