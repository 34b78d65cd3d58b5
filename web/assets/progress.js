// A running Spark Connect operation's progress (Spark 4's execution_progress, the attempt JSON's
// span `progress`: docs/trace-view-api.md) as the page shows it: a fraction for the bar and the
// figures in words. Pure: no DOM, tested in web/test/progress.test.mjs.

import { formatBytes, formatCount, formatPercent } from './format.js';

const isCount = (v) => Number.isInteger(v) && v >= 0;

// null when the span has no usable progress (Spark before 4.0, or not an operation).
export function progressSummary(progress) {
  if (!progress || !isCount(progress.tasks_total) || !isCount(progress.tasks_done)) return null;
  const total = progress.tasks_total;
  // Spark counts completed tasks per stage attempt: a retried stage can report more done than its
  // tasks. The bar stops at full.
  const fraction = total > 0 ? Math.min(1, progress.tasks_done / total) : 0;
  const stages = isCount(progress.stages_total) ? `${formatCount(progress.stages_done ?? 0)}/${formatCount(progress.stages_total)} stages` : null;
  const tasks = `${formatCount(progress.tasks_done)}/${formatCount(total)} tasks`;
  const bytes = isCount(progress.input_bytes_read) ? `${formatBytes(progress.input_bytes_read)} read` : null;
  const inflight = isCount(progress.inflight_tasks) && progress.inflight_tasks > 0 ? `${formatCount(progress.inflight_tasks)} running` : null;
  return {
    fraction,
    percent: formatPercent(fraction),
    text: [tasks, stages, bytes, inflight].filter(Boolean).join(' \u00b7 '),
  };
}
