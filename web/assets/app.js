// The single page's router: the path and query say which page to show (url_state.js), links within
// the app navigate with the History API, and back/forward restore the page from the URL.
//
// A page module exports render(route, context) and returns (or resolves to) a cleanup function
// that stops its polling and listeners. Pages set document.body.dataset.ready = "1" once their
// data is on screen; the router clears it when another page starts.

import { attemptPageUrl, parseRoute } from './url_state.js';
import { clear, h } from './dom.js';
import { installPatterns } from './patterns.js';
import { renderTasksPage } from './tasks_page.js';
import { renderAttemptPage } from './attempt_page.js';
import { renderRecipePage } from './recipe_page.js';
import { renderNotFound } from './error_view.js';

const main = document.getElementById('main');
const breadcrumb = document.getElementById('breadcrumb');
let cleanup = null;
let generation = 0;
let shownUrl = null;  // path + query of the page on screen: a change of hash alone is no new page

function setBreadcrumb(items) {
  clear(breadcrumb);
  const list = h('ol');
  items.forEach((item, i) => {
    const last = i === items.length - 1;
    list.append(h('li', null, item.href && !last
      ? h('a', { href: item.href }, item.text)
      : h('span', { 'aria-current': last ? 'page' : null }, item.text)));
  });
  breadcrumb.append(list);
}

function markReady() {
  document.body.dataset.ready = '1';
}

async function show({ focus = false } = {}) {
  generation += 1;
  const mine = generation;
  if (cleanup) {
    try {
      cleanup();
    } catch (error) {
      console.error(error);
    }
  }
  cleanup = null;
  delete document.body.dataset.ready;
  shownUrl = location.pathname + location.search;
  clear(main);
  const route = parseRoute(location.pathname, location.search);
  if (route.legacy) {
    // An attempt address of the earlier shape (/tasks/<dag>/…): shown under its current one, so that
    // what is bookmarked or shared from here on works whatever the ids.
    history.replaceState(null, '', attemptPageUrl(route) + location.hash);
    shownUrl = location.pathname + location.search;
  }
  const context = {
    main, navigate, setBreadcrumb, markReady,
    setTitle: (text) => { document.title = text ? `${text} \u00b7 sparktrace` : 'sparktrace'; },
    isCurrent: () => mine === generation,
    // The page's own view state (selection, zoom, search): same page, new query, no new entry.
    replaceUrl: (url) => {
      if (mine !== generation) return;
      history.replaceState(null, '', url);
      shownUrl = location.pathname + location.search;
    },
  };
  let result;
  if (route.page === 'tasks') result = renderTasksPage(route, context);
  else if (route.page === 'attempt') result = renderAttemptPage(route, context);
  else if (route.page === 'recipe') result = renderRecipePage(route, context);
  else result = renderNotFound(context, 'There is no page at this address.');
  if (focus) main.focus({ preventScroll: true });
  const done = await result;
  if (mine === generation) cleanup = typeof done === 'function' ? done : null;
  else if (typeof done === 'function') done();
}

// Goes to an in-app URL: a new history entry, or `replace` for the same page's state.
export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.scrollTo(0, 0);
  return show({ focus: true });
}

// Same-origin links to pages (not to /api/ downloads, not hash-only jumps) stay in the app.
function onClick(event) {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = event.target.closest?.('a[href]');
  if (!anchor || anchor.target || anchor.hasAttribute('download')) return;
  const url = new URL(anchor.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith('/api/') || url.pathname.startsWith('/assets/')) return;
  if (url.pathname === location.pathname && url.search === location.search && url.hash) return;  // in-page anchor
  event.preventDefault();
  navigate(url.pathname + url.search + url.hash);
}

installPatterns();
document.addEventListener('click', onClick);
window.addEventListener('popstate', () => {
  // In-page anchors fire popstate too; views that only replaceState their query are the same page.
  if (location.pathname + location.search === shownUrl) return;
  show({ focus: true });
});
show();
