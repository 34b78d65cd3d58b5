// Turns the tree of markdown.js into DOM nodes. Every piece of text is a text node; links go
// through resolveRecipeLink: another recipe becomes /recipes/..., http(s) opens as a plain external
// link (rel=noopener), anything else (links out of docs/recipes, other schemes) is left as text.

import { h } from './dom.js';
import { resolveRecipeLink } from './url_state.js';

function inlines(nodes, path) {
  return nodes.map((node) => {
    switch (node.type) {
      case 'text': return document.createTextNode(node.text);
      case 'code': return h('code', null, node.text);
      case 'em': return h('em', null, inlines(node.children, path));
      case 'strong': return h('strong', null, inlines(node.children, path));
      case 'br': return h('br');
      case 'link': {
        const target = resolveRecipeLink(path, node.href);
        const children = inlines(node.children, path);
        if (!target) return h('span', { class: 'dead-link' }, children);
        if (target.kind === 'external') return h('a', { href: target.href, rel: 'noopener noreferrer', target: '_blank' }, children);
        if (target.kind === 'anchor') return anchorLink(target.href, children);
        return h('a', { href: target.href }, children);
      }
      default: return document.createTextNode('');
    }
  });
}

// "#section" links: href is not a URL attribute we can pass through safeHref (it is relative), so
// set it directly after checking it is a plain fragment.
function anchorLink(fragment, children) {
  const a = h('a', null, children);
  if (/^#[^\s]*$/.test(fragment)) a.setAttribute('href', fragment);
  return a;
}

function tight(item) {
  // A list item of one paragraph (and maybe a nested list) shows without paragraph margins.
  return item.children.length && item.children[0].type === 'paragraph' && item.children.slice(1).every((b) => b.type === 'list');
}

function block(node, path) {
  switch (node.type) {
    case 'heading': return h(`h${node.level}`, { id: node.id }, inlines(node.children, path));
    case 'paragraph': return h('p', null, inlines(node.children, path));
    case 'code': return h('pre', { tabindex: '0' }, h('code', { class: node.lang ? `language-${node.lang}` : null }, node.text));
    case 'hr': return h('hr');
    case 'blockquote': return h('blockquote', null, node.children.map((b) => block(b, path)));
    case 'list': {
      const items = node.items.map((item) => h('li', null, tight(item)
        ? [inlines(item.children[0].children, path), item.children.slice(1).map((b) => block(b, path))]
        : item.children.map((b) => block(b, path))));
      return node.ordered ? h('ol', { start: node.start !== 1 ? node.start : null }, items) : h('ul', null, items);
    }
    case 'table': {
      const cell = (tag, content, i) => h(tag, { class: node.align[i] ? `align-${node.align[i]}` : null, scope: tag === 'th' ? 'col' : null }, inlines(content, path));
      return h('table', { tabindex: '0' },
        h('thead', null, h('tr', null, node.header.map((c, i) => cell('th', c, i)))),
        h('tbody', null, node.rows.map((row) => h('tr', null, row.map((c, i) => cell('td', c, i))))));
    }
    default: return null;
  }
}

export function renderMarkdown(blocks, path) {
  return blocks.map((b) => block(b, path)).filter(Boolean);
}
