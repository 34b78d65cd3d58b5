// A small Markdown parser for the recipes: Markdown text -> a plain tree of blocks and inlines,
// with no DOM and no HTML strings (markdown_dom.js turns the tree into DOM nodes, as text).
//
// What it reads (what docs/recipes uses): ATX headings, paragraphs, bullet and ordered lists
// (nested, with paragraphs and fenced code inside items), fenced code (``` and ~~~), GFM pipe
// tables (with "\|" in cells), block quotes, thematic breaks; inline code, *em*, **strong**,
// [links](url), <autolinks>, backslash escapes and hard breaks. Raw HTML is kept as text.
//
// Blocks:  {type:'heading', level, id, children} {type:'paragraph', children}
//          {type:'list', ordered, start, items:[{children:[blocks]}]} {type:'code', lang, text}
//          {type:'table', align:[...], header:[cells], rows:[[cells]]} (a cell: [inlines])
//          {type:'blockquote', children} {type:'hr'}
// Inlines: {type:'text', text} {type:'code', text} {type:'em'|'strong', children}
//          {type:'link', href, children} {type:'br'}

const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
const TABLE_DELIMITER = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

function isBlank(line) {
  return /^[ \t]*$/.test(line);
}

function indentOf(line) {
  let width = 0;
  for (const ch of line) {
    if (ch === ' ') width += 1;
    else if (ch === '\t') width += 4 - (width % 4);
    else break;
  }
  return width;
}

// Removes up to `count` columns of leading indentation.
function dedent(line, count) {
  let width = 0;
  let i = 0;
  while (i < line.length && width < count) {
    if (line[i] === ' ') width += 1;
    else if (line[i] === '\t') width += 4 - (width % 4);
    else break;
    i += 1;
  }
  return line.slice(i);
}

function splitTableRow(line) {
  let text = line.trim();
  if (text.startsWith('|')) text = text.slice(1);
  if (text.endsWith('|') && !text.endsWith('\\|')) text = text.slice(0, -1);
  const cells = [];
  let current = '';
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '\\' && text[i + 1] === '|') {
      current += '|';  // GFM: an escaped pipe belongs to the cell, even inside a code span
      i += 1;
    } else if (text[i] === '|') {
      cells.push(current.trim());
      current = '';
    } else {
      current += text[i];
    }
  }
  cells.push(current.trim());
  return cells;
}

function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || LIST_ITEM.test(line);
}

function listMarkerKind(marker) {
  return /\d/.test(marker) ? `ordered${marker.slice(-1)}` : `bullet${marker}`;
}

class BlockParser {
  constructor(slugs) {
    this.slugs = slugs;
  }

  parse(lines) {
    const blocks = [];
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (isBlank(line)) {
        i += 1;
        continue;
      }
      const next = this.fence(lines, i, blocks) ?? this.heading(lines, i, blocks) ??
        this.thematicBreak(lines, i, blocks) ?? this.table(lines, i, blocks) ??
        this.quote(lines, i, blocks) ?? this.list(lines, i, blocks) ?? this.paragraph(lines, i, blocks);
      i = next;
    }
    return blocks;
  }

  fence(lines, i, blocks) {
    const open = FENCE.exec(lines[i]);
    if (!open) return null;
    const [, indent, marker, lang] = open;
    const body = [];
    let j = i + 1;
    for (; j < lines.length; j += 1) {
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(lines[j]);
      if (close && close[1][0] === marker[0] && close[1].length >= marker.length) break;
      body.push(dedent(lines[j], indent.length));
    }
    blocks.push({ type: 'code', lang: lang || '', text: body.join('\n') });
    return j + 1;
  }

  heading(lines, i, blocks) {
    const match = HEADING.exec(lines[i]);
    if (!match) return null;
    const children = parseInlines(match[2] ?? '');
    blocks.push({ type: 'heading', level: match[1].length, id: this.slugs.add(plainText(children)), children });
    return i + 1;
  }

  thematicBreak(lines, i, blocks) {
    if (!HR.test(lines[i])) return null;
    blocks.push({ type: 'hr' });
    return i + 1;
  }

  table(lines, i, blocks) {
    if (!lines[i].includes('|') || i + 1 >= lines.length || !TABLE_DELIMITER.test(lines[i + 1])) return null;
    const header = splitTableRow(lines[i]);
    const align = splitTableRow(lines[i + 1]).map((cell) => {
      const left = cell.startsWith(':');
      const right = cell.endsWith(':');
      return left && right ? 'center' : right ? 'right' : left ? 'left' : null;
    });
    if (align.length !== header.length) return null;
    const rows = [];
    let j = i + 2;
    for (; j < lines.length && !isBlank(lines[j]) && lines[j].includes('|'); j += 1) {
      const cells = splitTableRow(lines[j]);
      // GFM: rows are cut or padded to the header's width.
      rows.push(header.map((_, k) => parseInlines(cells[k] ?? '')));
    }
    blocks.push({ type: 'table', align, header: header.map((cell) => parseInlines(cell)), rows });
    return j;
  }

  quote(lines, i, blocks) {
    if (!QUOTE.test(lines[i])) return null;
    const inner = [];
    let j = i;
    for (; j < lines.length; j += 1) {
      const match = QUOTE.exec(lines[j]);
      if (match) inner.push(match[1]);
      else if (!isBlank(lines[j]) && !startsBlock(lines[j]) && inner.length && !isBlank(inner[inner.length - 1])) {
        inner.push(lines[j]);  // lazy continuation of the quoted paragraph
      } else break;
    }
    blocks.push({ type: 'blockquote', children: this.parse(inner) });
    return j;
  }

  list(lines, i, blocks) {
    const first = LIST_ITEM.exec(lines[i]);
    if (!first) return null;
    const kind = listMarkerKind(first[2]);
    const ordered = kind.startsWith('ordered');
    const list = { type: 'list', ordered, start: ordered ? parseInt(first[2], 10) : 1, items: [] };
    let j = i;
    while (j < lines.length) {
      const match = LIST_ITEM.exec(lines[j]);
      if (!match || listMarkerKind(match[2]) !== kind) break;
      const [, indent, marker, spacing, rest] = match;
      // Content starts after the marker and its spaces (one space if the item starts with code).
      const gap = spacing.length >= 5 || rest === '' ? 1 : spacing.length;
      const contentIndent = indent.length + marker.length + gap;
      const itemLines = [rest];
      j += 1;
      while (j < lines.length) {
        const line = lines[j];
        if (isBlank(line)) {
          let k = j + 1;
          while (k < lines.length && isBlank(lines[k])) k += 1;
          if (k < lines.length && indentOf(lines[k]) >= contentIndent) {
            for (; j < k; j += 1) itemLines.push('');
            continue;
          }
          break;
        }
        if (indentOf(line) >= contentIndent) {
          itemLines.push(dedent(line, contentIndent));
        } else if (!startsBlock(line) && !isBlank(itemLines[itemLines.length - 1])) {
          itemLines.push(line.trimStart());  // lazy continuation of the item's paragraph
        } else {
          break;
        }
        j += 1;
      }
      list.items.push({ children: this.parse(itemLines) });
      // Blank lines between items keep the list going when the next line is another item.
      let k = j;
      while (k < lines.length && isBlank(lines[k])) k += 1;
      const nextItem = k < lines.length ? LIST_ITEM.exec(lines[k]) : null;
      if (!nextItem || listMarkerKind(nextItem[2]) !== kind) break;
      j = k;
    }
    blocks.push(list);
    return j;
  }

  paragraph(lines, i, blocks) {
    const text = [lines[i].trim()];
    let j = i + 1;
    for (; j < lines.length; j += 1) {
      const line = lines[j];
      if (isBlank(line) || startsBlock(line)) break;
      if (line.includes('|') && j + 1 < lines.length && TABLE_DELIMITER.test(lines[j + 1])) break;
      text.push(line.trim() === '' ? '' : lines[j].replace(/^[ \t]+/, ''));
    }
    blocks.push({ type: 'paragraph', children: parseInlines(text.join('\n')) });
    return j;
  }
}

// GitHub-style heading anchors: "Idle executors" -> "idle-executors"; repeats get "-1", "-2".
export function slugify(text) {
  return text.toLowerCase().trim().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

class SlugSet {
  constructor() {
    this.seen = new Map();
  }

  add(text) {
    const base = slugify(text);
    const count = this.seen.get(base) ?? 0;
    this.seen.set(base, count + 1);
    return count === 0 ? base : `${base}-${count}`;
  }
}

export function parseMarkdown(source) {
  const lines = String(source).replace(/\r\n?/g, '\n').split('\n');
  return new BlockParser(new SlugSet()).parse(lines);
}

// ---- inlines ----

const PUNCTUATION = /[!-/:-@[-`{-~]/;

function isWordChar(ch) {
  return ch !== undefined && /[\p{L}\p{N}]/u.test(ch);
}

function isSpace(ch) {
  return ch === undefined || /\s/.test(ch);
}

// Where the code span opening at `start` (a run of backticks) closes: [contentStart, contentEnd,
// after] or null when no run of the same length follows.
function codeSpanAt(text, start) {
  let n = 0;
  while (text[start + n] === '`') n += 1;
  let i = start + n;
  while (i < text.length) {
    const close = text.indexOf('`', i);
    if (close < 0) return null;
    let m = 0;
    while (text[close + m] === '`') m += 1;
    if (m === n) return [start + n, close, close + m, n];
    i = close + m;
  }
  return null;
}

// The index of the "]" closing the "[" at `start`, skipping code spans and nested brackets.
function closingBracket(text, start) {
  let depth = 0;
  for (let i = start; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === '\\') {
      i += 1;
    } else if (ch === '`') {
      const span = codeSpanAt(text, i);
      if (span) i = span[2] - 1;
      else while (text[i + 1] === '`') i += 1;
    } else if (ch === '[') {
      depth += 1;
    } else if (ch === ']') {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}

// "(url "title")" right after a link's text: [href, indexAfter] or null.
function linkDestination(text, open) {
  if (text[open] !== '(') return null;
  const match = /^\(\s*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()<>]*\)[^\s()<>]*)*)(?:\s+("[^"]*"|'[^']*'))?\s*\)/.exec(text.slice(open));
  if (!match) return null;
  let href = match[1];
  if (href.startsWith('<')) href = href.slice(1, -1);
  return [href.replace(/\\([!-/:-@[-`{-~])/g, '$1'), open + match[0].length];
}

// The closing delimiter run for emphasis opened by `run` (e.g. "**") at `start`.
function closingEmphasis(text, start, run) {
  const ch = run[0];
  for (let i = start; i < text.length; i += 1) {
    if (text[i] === '\\') {
      i += 1;
      continue;
    }
    if (text[i] === '`') {
      const span = codeSpanAt(text, i);
      if (span) i = span[2] - 1;
      continue;
    }
    if (text[i] === '[') {
      const close = closingBracket(text, i);
      if (close > 0) {
        const dest = linkDestination(text, close + 1);
        if (dest) {
          i = dest[1] - 1;
          continue;
        }
      }
    }
    if (text.startsWith(run, i) && text[i + run.length] !== ch && text[i - 1] !== ch) {
      const before = text[i - 1];
      const after = text[i + run.length];
      const rightFlanking = !isSpace(before);
      if (rightFlanking && (ch !== '_' || !isWordChar(after))) return i;
    }
  }
  return -1;
}

export function parseInlines(text) {
  const out = [];
  let buffer = '';
  const flush = () => {
    if (buffer) out.push({ type: 'text', text: buffer });
    buffer = '';
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '\\' && text[i + 1] === '\n') {
      flush();
      out.push({ type: 'br' });
      i += 2;
      continue;
    }
    if (ch === '\\' && PUNCTUATION.test(text[i + 1] ?? '')) {
      buffer += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === ' ' && text.startsWith('  \n', i)) {
      while (buffer.endsWith(' ')) buffer = buffer.slice(0, -1);
      flush();
      out.push({ type: 'br' });
      i += 3;
      continue;
    }
    if (ch === '`') {
      const span = codeSpanAt(text, i);
      if (span) {
        flush();
        let code = text.slice(span[0], span[1]).replace(/\n/g, ' ');
        if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ') && code.trim() !== '') {
          code = code.slice(1, -1);
        }
        out.push({ type: 'code', text: code });
        i = span[2];
      } else {
        let n = 0;
        while (text[i + n] === '`') n += 1;
        buffer += text.slice(i, i + n);
        i += n;
      }
      continue;
    }
    if (ch === '[') {
      const close = closingBracket(text, i);
      const dest = close > 0 ? linkDestination(text, close + 1) : null;
      if (dest) {
        flush();
        out.push({ type: 'link', href: dest[0], children: parseInlines(text.slice(i + 1, close)) });
        i = dest[1];
        continue;
      }
    }
    if (ch === '<') {
      const auto = /^<(https?:\/\/[^\s<>]+)>/i.exec(text.slice(i));
      if (auto) {
        flush();
        out.push({ type: 'link', href: auto[1], children: [{ type: 'text', text: auto[1] }] });
        i += auto[0].length;
        continue;
      }
    }
    if (ch === '*' || ch === '_') {
      let n = 0;
      while (text[i + n] === ch) n += 1;
      const after = text[i + n];
      const before = text[i - 1];
      const leftFlanking = !isSpace(after);
      const canOpen = leftFlanking && (ch !== '_' || !isWordChar(before));
      if (canOpen && n <= 3) {
        const run = ch.repeat(n);
        const close = closingEmphasis(text, i + n + 1, run);
        if (close > 0) {
          flush();
          const inner = parseInlines(text.slice(i + n, close));
          if (n === 1) out.push({ type: 'em', children: inner });
          else if (n === 2) out.push({ type: 'strong', children: inner });
          else out.push({ type: 'strong', children: [{ type: 'em', children: inner }] });
          i = close + n;
          continue;
        }
      }
      buffer += ch.repeat(n);
      i += n;
      continue;
    }
    buffer += ch;
    i += 1;
  }
  flush();
  return out;
}

// The text of inline nodes, without markup (for heading anchors and titles).
export function plainText(nodes) {
  return nodes.map((node) => {
    if (node.type === 'text' || node.type === 'code') return node.text;
    if (node.type === 'br') return ' ';
    return plainText(node.children ?? []);
  }).join('');
}
