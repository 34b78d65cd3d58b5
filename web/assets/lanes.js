// The span lanes of the API (`lane`): a short badge for the tree and a name for people.

export const LANES = {
  task: { badge: 'TASK', name: 'Airflow task' },
  application: { badge: 'APP', name: 'Spark application' },
  operation: { badge: 'OP', name: 'Spark Connect operation' },
  rpc: { badge: 'RPC', name: 'gRPC call' },
  lifecycle: { badge: 'LIFE', name: 'driver lifecycle' },
  job: { badge: 'JOB', name: 'Spark job' },
  stage: { badge: 'STG', name: 'Spark stage' },
  phase: { badge: 'PH', name: 'driver phase' },
  other: { badge: '\u00b7', name: 'span' },
};

export function laneOf(span) {
  return Object.hasOwn(LANES, span.lane) ? span.lane : 'other';
}

// The breakdown phase a `spark.phase.*` span stands for, or null.
export function phaseOfSpan(span) {
  if (span.lane !== 'phase') return null;
  const name = span.attributes?.['spark.phase.name'] ?? span.name.replace(/^spark\.phase\./, '');
  return ['client', 'resource_wait', 'compute', 'io_write', 'idle', 'result_transfer'].includes(name) ? name : null;
}
