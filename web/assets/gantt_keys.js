// Keyboard of the Gantt: the tree's keys (arrows, Home/End, Page Up/Down, Enter, Escape) and the
// page-wide ones while the timeline is shown (/ search, n/N matches, +/- zoom, 0 reset).

import { hasChildren } from './gantt_tree.js';
import { ROW_HEIGHT } from './gantt_rows.js';
import { ZOOM_STEP } from './gantt_layout.js';

function isEditable(target) {
  return target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

export function onTreeKey(gantt, event) {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const st = gantt.state;
  const position = st.selected >= 0 ? st.rowOf[st.selected] : -1;
  const rows = st.rows;
  const pageRows = Math.max(Math.floor(gantt.scroller.clientHeight / ROW_HEIGHT) - 1, 1);
  const go = (p) => {
    if (!rows.length) return;
    gantt.select(rows[Math.min(Math.max(p, 0), rows.length - 1)]);
  };
  switch (event.key) {
    case 'ArrowDown': go(position + 1); break;
    case 'ArrowUp': go(position < 0 ? 0 : position - 1); break;
    case 'PageDown': go(position + pageRows); break;
    case 'PageUp': go(position - pageRows); break;
    case 'Home': go(0); break;
    case 'End': go(rows.length - 1); break;
    case 'ArrowRight':
      if (st.selected < 0) go(0);
      else if (hasChildren(st.tree, st.selected) && st.collapsed.has(st.spans[st.selected].id)) gantt.toggle(st.selected, true);
      else if (hasChildren(st.tree, st.selected)) go(position + 1);
      break;
    case 'ArrowLeft':
      if (st.selected < 0) break;
      if (hasChildren(st.tree, st.selected) && !st.collapsed.has(st.spans[st.selected].id)) gantt.toggle(st.selected, false);
      else if (st.tree.parent[st.selected] >= 0) gantt.select(st.tree.parent[st.selected]);
      break;
    case 'Enter':
      if (st.selected >= 0) gantt.options.onOpenDetails?.();
      break;
    case 'Escape':
      st.highlighted = new Set();
      gantt.select(-1);
      gantt.options.onClearFinding?.();
      break;
    default:
      return;
  }
  event.preventDefault();
}

export function onGlobalKey(gantt, event) {
  if (!gantt.root.isConnected || event.altKey || event.ctrlKey || event.metaKey || isEditable(event.target)) return;
  switch (event.key) {
    case '/': gantt.findInput.focus(); gantt.findInput.select(); break;
    case 'n': gantt.jumpToMatch(false); break;
    case 'N': gantt.jumpToMatch(true); break;
    case '+': case '=': gantt.zoomBy(ZOOM_STEP); break;
    case '-': case '_': gantt.zoomBy(1 / ZOOM_STEP); break;
    case '0': gantt.setWindow({ from: 0, to: gantt.total }); break;
    default: return;
  }
  event.preventDefault();
}
