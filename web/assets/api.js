// Same-origin requests to /api/v1 and their errors, and polling of an attempt that is still running.
//
// Requests use cache: 'no-cache', so the browser revalidates its cached copy with If-None-Match
// and a 304 comes back as the cached 200: the ETag tells whether anything changed.

export class ApiError extends Error {
  // kind: 'auth' (401), 'not-found' (404), 'bad-request' (400), 'busy' (503), 'server', 'network'.
  constructor(kind, status, message) {
    super(message);
    this.kind = kind;
    this.status = status;
  }
}

function kindOf(status) {
  if (status === 401) return 'auth';
  if (status === 404) return 'not-found';
  if (status === 400) return 'bad-request';
  if (status === 503) return 'busy';
  return 'server';
}

async function errorMessage(response) {
  try {
    const body = await response.json();
    if (body && typeof body.error === 'string') return body.error;
  } catch {
    // not JSON: the status line says enough
  }
  return `${response.status} ${response.statusText}`.trim();
}

async function request(url, accept, signal) {
  let response;
  try {
    response = await fetch(url, {
      credentials: 'same-origin', cache: 'no-cache', headers: { Accept: accept }, signal,
    });
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new ApiError('network', 0, 'The server could not be reached.');
  }
  if (!response.ok) throw new ApiError(kindOf(response.status), response.status, await errorMessage(response));
  return response;
}

// {data, etag} of a JSON answer.
export async function fetchJson(url, { signal } = {}) {
  const response = await request(url, 'application/json', signal);
  let data;
  try {
    data = await response.json();
  } catch {
    throw new ApiError('server', response.status, 'The server answered something that is not JSON.');
  }
  return { data, etag: response.headers.get('ETag') };
}

export async function fetchText(url, { signal } = {}) {
  const response = await request(url, 'text/markdown, text/plain', signal);
  return response.text();
}

// Fetches `url` every `intervalMs` after the previous answer (never two at once), calls onData only
// when the ETag changed, and pauses while the tab is hidden. stop() ends it.
export function poll(url, { intervalMs = 2000, etag = null, onData, onError }) {
  let lastEtag = etag;
  let timer = null;
  let stopped = false;
  let controller = null;
  let inFlight = false;

  const schedule = () => {
    if (!stopped) timer = setTimeout(tick, intervalMs);
  };
  const tick = async () => {
    timer = null;
    if (document.hidden) return;  // visibilitychange restarts it
    controller = new AbortController();
    inFlight = true;
    try {
      const { data, etag: next } = await fetchJson(url, { signal: controller.signal });
      if (stopped) return;
      if (next === null || next !== lastEtag) {
        lastEtag = next;
        if (onData(data) === false) {
          stop();
          return;
        }
      }
    } catch (error) {
      if (stopped || error.name === 'AbortError') return;
      onError?.(error);
    } finally {
      inFlight = false;
    }
    schedule();
  };
  const onVisibility = () => {
    if (!document.hidden && timer === null && !inFlight && !stopped) tick();
  };
  function stop() {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    controller?.abort();
    document.removeEventListener('visibilitychange', onVisibility);
  }
  document.addEventListener('visibilitychange', onVisibility);
  schedule();
  return { stop };
}
