// The six breakdown phases, in the API's order. Labels here are only for places where the API gives
// a bare `phases` object (task list, history); the attempt's breakdown carries its own labels.
// Each phase has a CSS class `phase-<name>` (colour and pattern in app.css) and a one-letter key
// drawn on the pattern legend, so that colour is never the only cue.

export const PHASES = [
  { phase: 'client', label: 'outside Spark', hint: 'nothing of Spark in flight: the task\u2019s own code before, between and after its Spark calls' },
  { phase: 'resource_wait', label: 'resource wait', hint: 'work waiting for executors' },
  { phase: 'compute', label: 'compute', hint: 'stages running' },
  { phase: 'io_write', label: 'I/O write', hint: 'stages writing output' },
  { phase: 'idle', label: 'driver idle', hint: 'operation in flight, no stage running' },
  { phase: 'result_transfer', label: 'result transfer', hint: 'streaming results to the client' },
];

export function phaseLabel(phase) {
  return PHASES.find((p) => p.phase === phase)?.label ?? phase;
}

// The six phases of a bare `{client: ms, ...}` object, in order, missing ones as 0.
export function phaseList(phases) {
  return PHASES.map(({ phase, label }) => {
    const ms = Number(phases?.[phase]);
    return { phase, label, ms: Number.isFinite(ms) && ms > 0 ? ms : 0 };
  });
}
