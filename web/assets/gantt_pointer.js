// Pointer input of the Gantt: dragging the overview brush, dragging a range on the time axis, and
// the wheel (Ctrl/⌘ + wheel zooms at the pointer, Shift + wheel or a sideways swipe pans).

import { s } from './dom.js';
import { clampWindow, panWindow, isFullWindow } from './gantt_layout.js';

// Dragging on the overview: inside the window pans it, on an edge resizes it, elsewhere draws a
// new one.
export function bindBrush(gantt) {
  let drag = null;
  const timeAt = (event) => {
    const rect = gantt.overview.getBoundingClientRect();
    return ((event.clientX - rect.left) / Math.max(rect.width, 1)) * gantt.total;
  };
  gantt.overview.addEventListener('pointerdown', (event) => {
    if (event.button !== 0) return;
    const t = timeAt(event);
    const part = event.target.dataset?.part ?? 'new';
    drag = { part, t0: t, window: { ...gantt.window } };
    gantt.overview.setPointerCapture(event.pointerId);
    event.preventDefault();
  });
  gantt.overview.addEventListener('pointermove', (event) => {
    if (!drag) return;
    const t = Math.min(Math.max(timeAt(event), 0), gantt.total);
    const w = drag.window;
    if (drag.part === 'window') gantt.setWindow(panWindow(w, t - drag.t0, gantt.total), false);
    else if (drag.part === 'left') gantt.setWindow(clampWindow(Math.min(t, w.to - 1e-3), w.to, gantt.total), false);
    else if (drag.part === 'right') gantt.setWindow(clampWindow(w.from, Math.max(t, w.from + 1e-3), gantt.total), false);
    else if (Math.abs(t - drag.t0) > 0) gantt.setWindow(clampWindow(Math.min(t, drag.t0), Math.max(t, drag.t0), gantt.total), false);
  });
  const end = (event) => {
    if (!drag) return;
    const rect = gantt.overview.getBoundingClientRect();
    const movedPx = Math.abs(timeAt(event) - drag.t0) / gantt.total * rect.width;
    if (drag.part === 'new' && movedPx < 3) {
      // A click: centre the current window there.
      const width = gantt.window.to - gantt.window.from;
      gantt.setWindow(clampWindow(drag.t0 - width / 2, drag.t0 + width / 2, gantt.total), false);
    }
    drag = null;
    gantt.notifyView();
  };
  gantt.overview.addEventListener('pointerup', end);
  gantt.overview.addEventListener('pointercancel', end);
}

// Dragging across the time axis zooms to the dragged range.
export function bindAxisDrag(gantt) {
  let drag = null;
  const timeAt = (event) => {
    const rect = gantt.axis.getBoundingClientRect();
    const scale = gantt.scale();
    return scale.t(Math.min(Math.max(event.clientX - rect.left, 0), rect.width));
  };
  gantt.axis.addEventListener('pointerdown', (event) => {
    if (event.button !== 0) return;
    drag = { t0: timeAt(event), x0: event.clientX };
    gantt.axis.setPointerCapture(event.pointerId);
  });
  gantt.axis.addEventListener('pointermove', (event) => {
    if (!drag) return;
    const layer = gantt.axis.querySelector('.axis-drag');
    if (!layer) return;
    const scale = gantt.scale();
    const t = timeAt(event);
    const x0 = scale.x(Math.min(t, drag.t0));
    const x1 = scale.x(Math.max(t, drag.t0));
    layer.replaceChildren(s('rect', { class: 'drag-range', x: x0, y: 0, width: Math.max(x1 - x0, 1), height: 30 }));
  });
  const end = (event) => {
    if (!drag) return;
    const t = timeAt(event);
    const moved = Math.abs(event.clientX - drag.x0);
    gantt.axis.querySelector('.axis-drag')?.replaceChildren();
    if (moved > 4) gantt.setWindow(clampWindow(Math.min(t, drag.t0), Math.max(t, drag.t0), gantt.total));
    drag = null;
  };
  gantt.axis.addEventListener('pointerup', end);
  gantt.axis.addEventListener('pointercancel', () => {
    drag = null;
  });
}


export function onWheel(gantt, event) {
  if (!gantt.width) return;
  const rect = gantt.scroller.getBoundingClientRect();
  const x = event.clientX - rect.left - gantt.treeWidth;
  if (event.ctrlKey || event.metaKey) {
    event.preventDefault();
    const anchor = x >= 0 ? gantt.scale().t(Math.min(x, gantt.width)) : gantt.zoomAnchor();
    gantt.zoomBy(Math.exp(-event.deltaY * 0.004), anchor);
  } else if (event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY)) {
    const delta = event.shiftKey && !event.deltaX ? event.deltaY : event.deltaX;
    if (isFullWindow(gantt.window, gantt.total)) return;
    event.preventDefault();
    gantt.setWindow(panWindow(gantt.window, (delta / gantt.width) * (gantt.window.to - gantt.window.from), gantt.total));
  }
}
