// The trace Gantt: a collapsible span tree on the left, bars on a time axis on the right, the
// overview brush, the phase strip and the executor lane on top. Holds the view state (collapsed
// nodes, selection, highlight, search, zoom window, critical-path overlay) and keeps it across
// data updates of a running attempt.
//
// Layout work is done once per data update (gantt_tree.js); scrolling, zooming and selecting only
// redraw the rows on screen (gantt_rows.js), batched to one animation frame. The elements and their
// listeners are built in gantt_dom.js.

import { h } from './dom.js';
import {
  buildTree, visibleRows, ancestors, initialCollapsed, findMatches, nextMatch, hasChildren,
} from './gantt_tree.js';
import {
  makeScale, clampWindow, zoomWindow, isFullWindow, visibleRowRange, scrollTopToShow, niceTicks,
} from './gantt_layout.js';
import { drawRows, ROW_HEIGHT, rowElementId } from './gantt_rows.js';
import { drawOverview, drawBrush, drawAxis } from './gantt_head.js';
import { drawExecutorLane } from './executor_lane.js';
import { buildDom } from './gantt_dom.js';
import { SEVERITY_RANK } from './badges.js';
import { formatDuration, formatTick } from './format.js';


export class Gantt {
  // options: {view: {span, from, to, find}, onSelect(span|null), onViewChange(view), onOpenDetails()}
  constructor(attempt, options) {
    this.options = options;
    this.state = {
      spans: [], tree: null, rows: new Int32Array(0), rowOf: new Int32Array(0), startEpoch: 0,
      collapsed: new Set(), selected: -1, highlighted: new Set(), matches: [], matchSet: new Set(),
      hiddenMatchParents: new Set(), showCritical: true, findingSeverity: new Map(), findingCount: new Map(),
      criticalSegments: new Map(),
    };
    this.find = options.view?.find ?? '';
    this.searchCache = [];
    this.window = null;
    this.frame = 0;
    this.dirty = { head: true, overview: true, rows: true };
    this.width = 0;
    this.treeWidth = 320;
    buildDom(this);
    this.setData(attempt, true);
    const view = options.view ?? {};
    if (view.from !== null && view.from !== undefined && view.to > view.from) {
      this.window = clampWindow(view.from, view.to, this.total);
    }
    if (view.span) {
      const index = this.state.tree.indexById.get(view.span);
      if (index !== undefined) {
        this.select(index, { scroll: false, notify: true });
        this.pendingReveal = true;  // scrolled to once the chart has a size
      }
    }
  }

  // ---- data ----

  setData(attempt, first = false) {
    const st = this.state;
    const previousSelected = st.selected >= 0 ? st.spans[st.selected]?.id : null;
    const previousHighlighted = [...st.highlighted].map((i) => st.spans[i]?.id);
    const wasFull = !this.window || isFullWindow(this.window, this.total);
    this.attempt = attempt;
    this.total = Math.max(attempt.wall_ms, 1);
    st.spans = attempt.spans;
    st.startEpoch = attempt.start_ms;
    st.tree = buildTree(st.spans);
    this.searchCache = [];
    if (first) {
      st.collapsed = initialCollapsed(st.tree);
    } else {
      // Keep what was collapsed, by id; spans new since the last update start open.
      const known = new Set(st.spans.map((sp) => sp.id));
      for (const id of st.collapsed) if (!known.has(id)) st.collapsed.delete(id);
    }
    this.indexFindings(attempt);
    this.indexCriticalPath(attempt);
    st.selected = previousSelected ? st.tree.indexById.get(previousSelected) ?? -1 : -1;
    st.highlighted = new Set(previousHighlighted.map((id) => st.tree.indexById.get(id)).filter((i) => i !== undefined));
    this.window = wasFull ? { from: 0, to: this.total } : clampWindow(this.window.from, this.window.to, this.total);
    this.refreshRows();
    if (this.find) this.runSearch(false);
    this.spanHeader.replaceChildren(h('strong', null, 'Span'), ` ${st.spans.length.toLocaleString('en-US')} spans`);
    const ex = attempt.executors;
    this.executorLabel.replaceChildren(h('strong', null, 'Executors'), ex?.known ? ` max ${ex.max}` : ' unknown');
    this.invalidate('head', 'overview', 'rows');
  }

  update(attempt) {
    this.setData(attempt, false);
  }

  indexFindings(attempt) {
    const st = this.state;
    st.findingSeverity = new Map();
    st.findingCount = new Map();
    const add = (index, severity) => {
      st.findingCount.set(index, (st.findingCount.get(index) ?? 0) + 1);
      const old = st.findingSeverity.get(index);
      if (!old || SEVERITY_RANK[severity] > SEVERITY_RANK[old]) st.findingSeverity.set(index, severity);
    };
    const attached = new Set();
    for (const finding of attempt.findings ?? []) {
      for (const id of finding.span_ids ?? []) {
        const index = st.tree.indexById.get(id);
        if (index !== undefined) {
          add(index, finding.severity);
          attached.add(index);
        }
      }
    }
    // Spans that name findings (finding_ids) not already attached through span_ids.
    const byId = new Map((attempt.findings ?? []).map((f) => [f.id, f]));
    st.spans.forEach((span, index) => {
      if (attached.has(index)) return;
      for (const id of span.finding_ids ?? []) add(index, byId.get(id)?.severity ?? 'info');
    });
  }

  indexCriticalPath(attempt) {
    const st = this.state;
    st.criticalSegments = new Map();
    for (const segment of attempt.critical_path?.segments ?? []) {
      const index = st.tree.indexById.get(segment.span_id);
      if (index === undefined) continue;
      if (!st.criticalSegments.has(index)) st.criticalSegments.set(index, []);
      st.criticalSegments.get(index).push({ start: segment.start_ms - attempt.start_ms, end: segment.end_ms - attempt.start_ms });
    }
  }

  refreshRows() {
    const st = this.state;
    st.rows = visibleRows(st.tree, st.collapsed);
    st.rowOf = new Int32Array(st.spans.length).fill(-1);
    st.rows.forEach((index, position) => {
      st.rowOf[index] = position;
    });
    this.canvas.style.height = `${st.rows.length * ROW_HEIGHT}px`;
    this.invalidate('rows');
  }

  // ---- rendering ----

  invalidate(...parts) {
    for (const part of parts) this.dirty[part] = true;
    if (!this.frame) this.frame = requestAnimationFrame(() => this.render());
  }

  // The window maps onto the whole chart width (the axis, the executor lane and the bars alike).
  scale() {
    return makeScale(this.window.from, this.window.to, this.width);
  }

  measure() {
    const total = this.scroller.clientWidth;
    const tree = Math.round(Math.min(Math.max(total * 0.3, 240), 400));
    if (tree !== this.treeWidth) {
      this.treeWidth = tree;
      this.root.style.setProperty('--tree-w', `${tree}px`);
    }
    const width = Math.max(total - tree, 50);
    if (width !== this.width) {
      this.width = width;
      this.dirty.overview = true;
      this.dirty.head = true;
      this.dirty.rows = true;
    }
  }

  renderNow() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.render();
  }

  render() {
    this.frame = 0;
    if (!this.root.isConnected) return;
    this.measure();
    const scale = this.scale();
    if (this.dirty.overview) drawOverview(this.overview, this.attempt, this.width);
    if (this.dirty.overview || this.dirty.head) {
      drawBrush(this.overview, this.window, this.total, this.width);
      this.ticks = drawAxis(this.axis, this.attempt, scale);
      drawExecutorLane(this.executorLane, this.attempt.executors, this.attempt.start_ms, this.total, scale);
      const { step } = niceTicks(this.window.from, this.window.to, 8);
      this.zoomLabel.textContent = isFullWindow(this.window, this.total)
        ? `all ${formatDuration(this.total)}`
        : `${formatTick(this.window.from, step / 10)} \u2013 ${formatTick(this.window.to, step / 10)}`;
      this.resetButton.disabled = isFullWindow(this.window, this.total);
    }
    if (this.pendingReveal && this.scroller.clientHeight > 0) {
      this.pendingReveal = false;
      if (this.state.selected >= 0) this.scrollToRow(this.state.rowOf[this.state.selected], 'center', false);
    }
    if (this.dirty.rows || this.dirty.head) {
      const { first, last } = visibleRowRange(this.scroller.scrollTop, this.scroller.clientHeight, ROW_HEIGHT, this.state.rows.length);
      this.windowEl.style.transform = `translateY(${first * ROW_HEIGHT}px)`;
      drawRows(this.state, this.tree, this.barsSvg, first, last, scale, this.ticks ?? []);
      this.updateActiveDescendant();
    }
    this.dirty = { head: false, overview: false, rows: false };
  }

  updateActiveDescendant() {
    const st = this.state;
    const id = st.selected >= 0 ? rowElementId(st.selected) : null;
    if (id && document.getElementById(id)) this.tree.setAttribute('aria-activedescendant', id);
    else this.tree.removeAttribute('aria-activedescendant');
  }

  // ---- view changes ----

  setWindow(window, notify = true) {
    this.window = clampWindow(window.from, window.to, this.total);
    this.invalidate('head', 'rows');
    if (notify) this.notifyView();
  }

  zoomBy(factor, anchor) {
    const center = anchor ?? this.zoomAnchor();
    this.setWindow(zoomWindow(this.window, factor, center, this.total));
  }

  // Zooming by keys or buttons keeps the selected span in view when it is, else the centre.
  zoomAnchor() {
    const st = this.state;
    if (st.selected >= 0) {
      const span = st.spans[st.selected];
      const mid = (span.start_ms + span.end_ms) / 2 - st.startEpoch;
      if (mid >= this.window.from && mid <= this.window.to) return mid;
    }
    return (this.window.from + this.window.to) / 2;
  }

  zoomToSpan(index) {
    const span = this.state.spans[index];
    const start = span.start_ms - this.state.startEpoch;
    const end = span.end_ms - this.state.startEpoch;
    const pad = Math.max((end - start) * 0.08, 0.5);
    this.setWindow({ from: start - pad, to: end + pad });
  }

  toggle(index, open) {
    const st = this.state;
    if (!hasChildren(st.tree, index)) return;
    const id = st.spans[index].id;
    const collapse = open === undefined ? !st.collapsed.has(id) : !open;
    if (collapse === st.collapsed.has(id)) return;
    if (collapse) st.collapsed.add(id);
    else st.collapsed.delete(id);
    this.refreshRows();
    if (this.find) this.computeHiddenMatches();
  }

  setAllCollapsed(collapse) {
    const st = this.state;
    st.collapsed = new Set();
    if (collapse) {
      for (let i = 0; i < st.spans.length; i += 1) if (hasChildren(st.tree, i)) st.collapsed.add(st.spans[i].id);
    }
    this.expandTo(st.selected);
    this.refreshRows();
    if (this.find) this.computeHiddenMatches();
  }

  // Opens the ancestors of span `index` so that its row is visible.
  expandTo(index) {
    if (index < 0) return false;
    let changed = false;
    for (const a of ancestors(this.state.tree, index)) {
      if (this.state.collapsed.delete(this.state.spans[a].id)) changed = true;
    }
    return changed;
  }

  // Selects span `index` (-1 clears). scroll: 'nearest' | 'center' | false.
  select(index, { scroll = 'nearest', notify = true } = {}) {
    const st = this.state;
    if (index >= 0 && this.expandTo(index)) this.refreshRows();
    st.selected = index;
    if (index >= 0 && scroll) this.scrollToRow(st.rowOf[index], scroll);
    this.invalidate('rows');
    if (notify) {
      this.options.onSelect?.(index >= 0 ? st.spans[index] : null);
      this.notifyView();
    }
  }

  selectById(id, options) {
    const index = this.state.tree.indexById.get(id);
    if (index !== undefined) this.select(index, options);
  }

  // Highlights the spans of a finding and selects the first, bringing it into the window.
  highlight(ids) {
    const st = this.state;
    const indices = ids.map((id) => st.tree.indexById.get(id)).filter((i) => i !== undefined);
    st.highlighted = new Set(indices);
    let changed = false;
    for (const i of indices) changed = this.expandTo(i) || changed;
    if (changed) this.refreshRows();
    if (indices.length) {
      const first = indices[0];
      const span = st.spans[first];
      const start = span.start_ms - st.startEpoch;
      const end = span.end_ms - st.startEpoch;
      if (end < this.window.from || start > this.window.to) {
        const width = this.window.to - this.window.from;
        this.setWindow(clampWindow(start - width * 0.1, start + width * 0.9, this.total));
      }
      this.select(first, { scroll: 'center' });
    }
    this.invalidate('rows');
  }

  scrollToRow(position, mode, revealPage = true) {
    if (position < 0) return;
    const viewport = this.scroller.clientHeight || 400;
    let top;
    if (mode === 'center') top = Math.max(position * ROW_HEIGHT - viewport / 2 + ROW_HEIGHT, 0);
    else top = scrollTopToShow(position, this.scroller.scrollTop, viewport, ROW_HEIGHT);
    if (top !== this.scroller.scrollTop) this.scroller.scrollTop = top;
    // The gantt may be below the fold: bring the scroller itself into view too.
    const rect = this.scroller.getBoundingClientRect();
    if (revealPage && mode === 'center' && (rect.top > window.innerHeight - 60 || rect.bottom < 60)) (this.element.closest('.timeline-card') ?? this.element).scrollIntoView({ block: 'start' });
  }

  // ---- search ----

  runSearch(notify) {
    const st = this.state;
    st.matches = findMatches(st.spans, this.find, this.searchCache);
    st.matchSet = new Set(st.matches);
    this.computeHiddenMatches();
    const n = st.matches.length;
    this.findCount.textContent = this.find.trim() ? `${n} match${n === 1 ? '' : 'es'}` : '';
    if (this.findInput.value !== this.find) this.findInput.value = this.find;
    this.invalidate('rows');
    if (notify) this.notifyView();
  }

  // Collapsed rows whose hidden descendants match get a mark.
  computeHiddenMatches() {
    const st = this.state;
    st.hiddenMatchParents = new Set();
    if (st.matches.length > 5000) return;  // too many to be useful as marks
    for (const m of st.matches) {
      if (st.rowOf[m] >= 0) continue;
      for (const a of ancestors(st.tree, m)) {
        if (st.rowOf[a] >= 0) {
          st.hiddenMatchParents.add(a);
          break;
        }
      }
    }
  }

  jumpToMatch(backwards) {
    const st = this.state;
    if (this.find !== this.findInput.value) {
      this.find = this.findInput.value;
      this.runSearch(true);
    }
    const target = nextMatch(st.matches, st.selected, backwards);
    if (target >= 0) this.select(target, { scroll: 'center' });
  }

  // ---- URL ----

  view() {
    const st = this.state;
    const full = isFullWindow(this.window, this.total);
    return {
      span: st.selected >= 0 ? st.spans[st.selected].id : null,
      from: full ? null : this.window.from,
      to: full ? null : this.window.to,
      find: this.find.trim() ? this.find : '',
    };
  }

  notifyView() {
    this.options.onViewChange?.(this.view());
  }

  destroy() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.resizeObserver.disconnect();
    document.removeEventListener('keydown', this.onDocumentKey);
  }
}
