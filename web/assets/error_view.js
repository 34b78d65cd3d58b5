// What a page shows when its data cannot be had: 401 (the token is missing: open the URL with
// ?token=...), 404 (no such task attempt / recipe), or a network or server error (with Retry).

import { h } from './dom.js';

export function renderError(context, error, { what = 'task attempt', retry } = {}) {
  const { main } = context;
  let box;
  if (error.kind === 'auth') {
    const example = `${location.pathname}${location.search ? `${location.search}&` : '?'}token=\u2026`;
    context.setTitle('Token required');
    box = h('section', { class: 'error-box', role: 'alert' },
      h('h1', null, 'This server needs its admin token'),
      h('p', null, 'Open this page once with the token added to its address, for example ',
        h('code', null, example), '. The server then keeps it in a cookie for this browser.'),
      h('p', { class: 'muted' }, 'The token is the value of sparktrace\u2019s --admin-token flag.'));
  } else if (error.kind === 'not-found') {
    context.setTitle(`No such ${what}`);
    box = h('section', { class: 'error-box', role: 'alert' },
      h('h1', null, `No such ${what}`),
      h('p', null, error.message && !/^404\b/.test(error.message) ? error.message : `The server has no ${what} at this address.`),
      h('p', null, h('a', { href: '/' }, '\u2190 Back to the task list')));
  } else {
    context.setTitle('Could not load');
    const detail = error.kind === 'busy'
      ? 'The store is busy or cannot be read right now.'
      : error.kind === 'network' ? 'The server could not be reached.' : error.message;
    box = h('section', { class: 'error-box', role: 'alert' },
      h('h1', null, `Could not load this ${what}`),
      h('p', null, detail),
      retry ? h('p', null, h('button', { type: 'button', class: 'button primary', id: 'retry', onclick: retry }, 'Retry')) : null);
  }
  main.append(box);
  context.markReady();
}

export function renderNotFound(context, message) {
  context.setBreadcrumb([{ text: 'Tasks', href: '/' }, { text: 'Not found' }]);
  renderError(context, { kind: 'not-found', message }, { what: 'page' });
}
