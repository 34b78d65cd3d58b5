// Tiny helpers to build DOM and SVG. Text is only ever set as text (textContent / text nodes), URLs
// only through safeHref, and there is no way to pass HTML or a style attribute (the page runs under
// a strict CSP: style-src 'self').

import { safeHref } from './url_state.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'formaction', 'xlink:href']);

function applyAttributes(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') {
      el.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
    } else if (key === 'text') {
      el.textContent = String(value);
    } else if (key === 'dataset') {
      for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) el.dataset[k] = String(v);
    } else if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === 'style' || key.startsWith('on')) {
      throw new Error(`dom: refusing attribute ${key}`);  // CSP: no inline style or handlers
    } else if (URL_ATTRIBUTES.has(key)) {
      const safe = safeHref(String(value));
      if (safe !== null) el.setAttribute(key, safe);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
}

// Appends nodes, text and (nested) arrays of them; null, undefined and false are skipped.
export function append(el, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// h('a', {href: '/x', class: 'link'}, 'text', otherNode)
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  applyAttributes(el, attrs);
  append(el, children);
  return el;
}

export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  applyAttributes(el, attrs);
  append(el, children);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

// A link when the URL is safe to follow, else its text alone.
export function link(href, attrs, ...children) {
  return safeHref(href) !== null ? h('a', { ...attrs, href }, ...children) : h('span', { class: attrs?.class }, ...children);
}

// Text for screen readers only.
export function srOnly(text) {
  return h('span', { class: 'sr-only' }, text);
}
