// A recipe (`/recipes/<path>.md`): the Markdown from /api/v1/recipes/..., rendered as DOM.

import { h } from './dom.js';
import { fetchText } from './api.js';
import { parseMarkdown, plainText } from './markdown.js';
import { renderMarkdown } from './markdown_dom.js';
import { renderError } from './error_view.js';
import { recipeApiUrl } from './url_state.js';

function scrollToHash() {
  if (!location.hash) return;
  let id;
  try {
    id = decodeURIComponent(location.hash.slice(1));
  } catch {
    return;
  }
  document.getElementById(id)?.scrollIntoView({ block: 'start' });
}

export async function renderRecipePage(route, context) {
  const controller = new AbortController();
  const { main } = context;
  context.setTitle('Recipe');
  context.setBreadcrumb([{ text: 'Tasks', href: '/' }, { text: 'Recipes', href: '/recipes/README.md' }, { text: route.path }]);
  const load = async () => {
    let text;
    try {
      text = await fetchText(recipeApiUrl(route.path), { signal: controller.signal });
    } catch (error) {
      if (error.name === 'AbortError' || !context.isCurrent()) return;
      renderError(context, error, { what: 'recipe', retry: () => context.navigate(location.pathname, { replace: true }) });
      return;
    }
    if (!context.isCurrent()) return;
    const blocks = parseMarkdown(text);
    const title = blocks.find((b) => b.type === 'heading' && b.level === 1);
    context.setTitle(title ? plainText(title.children) : route.path);
    main.append(
      h('nav', { class: 'recipe-nav', 'aria-label': 'Recipes' },
        h('a', { href: '/' }, '\u2190 Task list'),
        route.path !== 'README.md' ? h('a', { href: '/recipes/README.md' }, 'All recipes') : null),
      h('article', { class: 'recipe' }, renderMarkdown(blocks, route.path)));
    scrollToHash();
    context.markReady();
  };
  await load();
  window.addEventListener('hashchange', scrollToHash);
  return () => {
    controller.abort();
    window.removeEventListener('hashchange', scrollToHash);
  };
}
