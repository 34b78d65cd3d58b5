import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { parseMarkdown, parseInlines, slugify, plainText } from '../assets/markdown.js';

const text = (t) => ({ type: 'text', text: t });
const code = (t) => ({ type: 'code', text: t });

test('headings get GitHub-style anchors, repeats numbered', () => {
  const blocks = parseMarkdown('# Slow Spark jobs: where did the time go?\n\n## Symptom\n\n### Symptom\n\n## Idle executors ##\n');
  assert.deepEqual(blocks.map((b) => [b.type, b.level, b.id]), [
    ['heading', 1, 'slow-spark-jobs-where-did-the-time-go'], ['heading', 2, 'symptom'],
    ['heading', 3, 'symptom-1'], ['heading', 2, 'idle-executors']]);
  assert.equal(slugify('How to confirm in the Spark UI or History Server'), 'how-to-confirm-in-the-spark-ui-or-history-server');
});

test('paragraphs join their lines and stop at blocks', () => {
  const blocks = parseMarkdown('one\ntwo\n- item\n\nthree');
  assert.deepEqual(blocks, [
    { type: 'paragraph', children: [text('one\ntwo')] },
    { type: 'list', ordered: false, start: 1, items: [{ children: [{ type: 'paragraph', children: [text('item')] }] }] },
    { type: 'paragraph', children: [text('three')] },
  ]);
});

test('inline code, emphasis, links and escapes', () => {
  assert.deepEqual(parseInlines('**Finding:** `resource-wait-long`. See *the [recipe](gc-pressure.md#fixes)*.'), [
    { type: 'strong', children: [text('Finding:')] }, text(' '), code('resource-wait-long'), text('. See '),
    { type: 'em', children: [text('the '), { type: 'link', href: 'gc-pressure.md#fixes', children: [text('recipe')] }] },
    text('.'),
  ]);
  assert.deepEqual(parseInlines('snake_case_name and spark_phase_ratio stay text'), [text('snake_case_name and spark_phase_ratio stay text')]);
  assert.deepEqual(parseInlines('a \\*literal\\* star and `` code with ` tick ``'), [text('a *literal* star and '), code('code with ` tick')]);
  assert.deepEqual(parseInlines('2 * 3 * 4'), [text('2 * 3 * 4')]);
  assert.deepEqual(parseInlines('<https://example.org/x>'), [{ type: 'link', href: 'https://example.org/x', children: [text('https://example.org/x')] }]);
  assert.deepEqual(parseInlines('line  \nbreak'), [text('line'), { type: 'br' }, text('break')]);
  assert.deepEqual(parseInlines('<script>alert(1)</script>'), [text('<script>alert(1)</script>')]);
  assert.deepEqual(parseInlines('[x](javascript:alert(1))')[0].href, 'javascript:alert(1)', 'kept raw; the DOM side refuses it');
});

test('nested lists, paragraphs and fenced code inside items', () => {
  const source = [
    '- **Collector**: an OTLP receiver',
    '  and an exporter:',
    '',
    '  ```yaml',
    '  receivers:',
    '    otlp: {}',
    '  ```',
    '',
    '- On the `spark.stage` span:',
    '  - fetch wait against run time;',
    '  - bytes per task',
    '- last',
  ].join('\n');
  const [list] = parseMarkdown(source);
  assert.equal(list.type, 'list');
  assert.equal(list.items.length, 3);
  const first = list.items[0].children;
  assert.deepEqual(first.map((b) => b.type), ['paragraph', 'code']);
  assert.deepEqual(first[1], { type: 'code', lang: 'yaml', text: 'receivers:\n  otlp: {}' });
  assert.equal(plainText(first[0].children), 'Collector: an OTLP receiver\nand an exporter:');
  const second = list.items[1].children;
  assert.deepEqual(second.map((b) => b.type), ['paragraph', 'list']);
  assert.equal(second[1].items.length, 2);
  assert.equal(plainText(list.items[2].children[0].children), 'last');
});

test('ordered lists keep their start; a different marker starts a new list', () => {
  const blocks = parseMarkdown('3. three\n4. four\n\n- a\n+ b');
  assert.deepEqual(blocks.map((b) => [b.type, b.ordered, b.start, b.items.length]), [
    ['list', true, 3, 2], ['list', false, 1, 1], ['list', false, 1, 1]]);
});

test('fenced code keeps its text exactly, markup included', () => {
  const [block] = parseMarkdown('~~~sh\nkubectl get pods -l app=<x> | grep **y**\n\n# not a heading\n~~~');
  assert.deepEqual(block, { type: 'code', lang: 'sh', text: 'kubectl get pods -l app=<x> | grep **y**\n\n# not a heading' });
  const [open] = parseMarkdown('```\nnever closed');
  assert.deepEqual(open, { type: 'code', lang: '', text: 'never closed' });
});

test('pipe tables with alignment, escaped pipes and ragged rows', () => {
  const [table] = parseMarkdown([
    '| key | default | change |',
    '|:---|:---:|---:|',
    '| `spark.x` | 5 | 20\u201350 |',
    '| `a\\|b` | only two |',
  ].join('\n'));
  assert.equal(table.type, 'table');
  assert.deepEqual(table.align, ['left', 'center', 'right']);
  assert.deepEqual(table.header.map(plainText), ['key', 'default', 'change']);
  assert.deepEqual(table.rows[0][0], [code('spark.x')]);
  assert.deepEqual(table.rows[1][0], [code('a|b')]);
  assert.deepEqual(table.rows[1][2], []);
});

test('block quotes and thematic breaks', () => {
  const blocks = parseMarkdown('> quoted *text*\ncontinued\n\n---\n');
  assert.equal(blocks[0].type, 'blockquote');
  assert.equal(plainText(blocks[0].children[0].children), 'quoted text\ncontinued');
  assert.deepEqual(blocks[1], { type: 'hr' });
});

test('every recipe parses, with its title first and no stray markup in its text', () => {
  const root = new URL('../../docs/recipes/', import.meta.url);
  const files = ['README.md'];
  for (const dir of ['troubleshoot', 'observability']) {
    for (const name of readdirSync(new URL(`${dir}/`, root))) if (name.endsWith('.md')) files.push(`${dir}/${name}`);
  }
  assert.ok(files.length >= 10);
  for (const file of files) {
    const blocks = parseMarkdown(readFileSync(new URL(file, root), 'utf8'));
    assert.equal(blocks[0].type, 'heading', file);
    assert.equal(blocks[0].level, 1, file);
    assert.ok(blocks.some((b) => b.type === 'table' || b.type === 'list'), file);
    const walk = (nodes) => {
      for (const node of nodes) {
        if (node.type === 'text') assert.ok(!/\]\(|^#{1,6} /.test(node.text), `${file}: ${node.text}`);
        for (const key of ['children', 'items']) if (node[key]) walk(node[key]);
        if (node.type === 'table') [node.header, ...node.rows].flat().forEach(walk);
      }
    };
    walk(blocks);
  }
});
