// Tool results by kind (docs/tools.md, Rendering results). Each well-known kind has a view; other
// kinds follow the fallback chain: a renderer registered for the kind, then
// `display.preferredView`, then `mimeType`, then the data's shape (a string is text, an array of
// objects a table), then a JSON tree. Data that does not fit its kind's view is shown as JSON with
// a note. Every value becomes text nodes: nothing a tool returns is parsed as markup.
import { html, useState, useRef, useLayoutEffect, useMemo, preview, isObject, bytes, duration, num } from './view.js';
import { highlight, languageOf, languageOfPath } from './highlight.js';
import { markdown } from './markdown.js';
import { diffRows, countChanges } from './diff.js';

const registry = new Map();

/**
 * Registers a view for result kind `kind`: `render(data, ctx, value)` returns view nodes, or
 * null when the data does not fit (the result is then shown as JSON). `ctx` has `language`,
 * `mimeType`, `maxHeight` (pixels), `view` (the preferred view) and `summary`.
 */
export function registerRenderer(kind, render) {
  registry.set(kind, render);
}

/** The generic views of `display.preferredView`. */
const views = {
  text: textView,
  markdown: (data, ctx) => {
    const t = textOf(data);
    return t === null ? null : html`<div class="md">${markdown(t)}</div>`;
  },
  code: (data, ctx) => {
    const t = textOf(data);
    return t === null ? null : codeView(t, ctx.language || languageOfPath(data?.path), ctx);
  },
  diff: diffView,
  table: (data, ctx) => tableView(data, ctx) ?? rowsView(data, ctx),
  tree: (data) => html`<${JsonTree} value=${data} />`,
  image: imageView,
  raw: rawJson,
  hidden: () => html``,
};

/** The text of text-like data: a string, or an object's `content` or `text` string. */
function textOf(data) {
  if (typeof data === 'string') return data;
  if (isObject(data)) {
    if (typeof data.content === 'string') return data.content;
    if (typeof data.text === 'string') return data.text;
  }
  return null;
}

/** `display.maxHeight` in pixels: small numbers are lines (what a terminal means by them). */
function maxHeightPx(h, fallback) {
  if (typeof h !== 'number' || !(h > 0)) return fallback;
  return h <= 100 ? Math.round(h * 20) : h;
}

/** A one-line description of a result: its summary, else one made from its data. */
export function summaryLine(value) {
  if (!value) return '';
  if (typeof value.summary === 'string' && value.summary.trim()) return value.summary.trim().split('\n')[0];
  const d = value.data;
  switch (value.kind) {
    case 'text': return (textOf(d) || '').trim().split('\n')[0] || 'text';
    case 'diff': return d?.path ? String(d.path) : 'diff';
    case 'file_content': return d?.path ? String(d.path) : 'file';
    case 'file_list': return Array.isArray(d?.entries) ? `${d.entries.length} entries` : 'files';
    case 'table': return Array.isArray(d?.rows) ? `${d.rows.length} rows` : 'table';
    case 'code_result': return d ? runStatus(d) : 'run';
    case 'tool_error': return d ? `${d.code}: ${d.message}` : 'error';
    default: return `${value.kind} result`;
  }
}

/** A result value, honouring `display.preferredView: hidden` and `display.collapsed`. */
export function ResultView({ value }) {
  const hints = isObject(value?.display) ? value.display : {};
  const [open, setOpen] = useState(!hints.collapsed);
  if (!value || hints.preferredView === 'hidden') return null;
  if (!open) {
    return html`<button type="button" class="fold-toggle" aria-expanded="false" onClick=${() => setOpen(true)}>
      ▸ ${summaryLine(value)}</button>`;
  }
  return html`<div class=${'result kind-' + String(value.kind).replace(/[^a-z0-9_]/g, '-')}>
    ${hints.collapsed ? html`<button type="button" class="fold-toggle" aria-expanded="true" onClick=${() => setOpen(false)}>▾ ${summaryLine(value)}</button>` : null}
    ${renderValue(value)}
  </div>`;
}

function renderValue(value) {
  const hints = isObject(value.display) ? value.display : {};
  const ctx = {
    language: hints.language || null,
    mimeType: typeof value.mimeType === 'string' ? value.mimeType.trim().toLowerCase() : null,
    maxHeight: hints.maxHeight,
    view: hints.preferredView || null,
    summary: value.summary || null,
  };
  const data = value.data;
  const own = registry.get(value.kind);
  if (own) {
    let out = null;
    try {
      out = own(data, ctx, value);
    } catch (e) {
      console.error('renderer of', value.kind, 'failed', e);
    }
    if (out != null) return out;
    return html`<p class="dim">(data does not match kind <code>${value.kind}</code>)</p>${rawJson(data)}`;
  }
  const body = (ctx.view && views[ctx.view] ? views[ctx.view](data, ctx) : null)
    ?? byMime(data, ctx)
    ?? byShape(data, ctx)
    ?? html`<${JsonTree} value=${data} />`;
  return html`${ctx.summary ? html`<p class="result-summary">${ctx.summary.split('\n')[0]}</p>` : null}${body}`;
}

function byMime(data, ctx) {
  const mime = ctx.mimeType;
  if (!mime) return null;
  if (mime === 'text/markdown') return views.markdown(data, ctx);
  if (mime.startsWith('text/')) return textView(data, ctx);
  if (mime === 'application/json' || mime.endsWith('+json')) return html`<${JsonTree} value=${data} />`;
  if (mime.startsWith('image/')) return imageView(data, ctx);
  return null;
}

function byShape(data, ctx) {
  if (typeof data === 'string') return textView(data, ctx);
  if (Array.isArray(data)) return rowsView(data, ctx);
  return null;
}

// -- folding ------------------------------------------------------------------------------------

/** Content cut at `maxHeight` pixels with a button to show it all. */
export function Fold({ maxHeight, lines, children }) {
  const [open, setOpen] = useState(false);
  const [overflows, setOverflows] = useState(false);
  const ref = useRef(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (el && !open) setOverflows(el.scrollHeight > el.clientHeight + 4);
  });
  const style = open ? {} : { maxHeight: maxHeight + 'px' };
  return html`<div class="fold">
    <div ref=${ref} class=${'fold-body' + (open || !overflows ? '' : ' folded')} style=${style}>${children}</div>
    ${overflows || open
      ? html`<button type="button" class="fold-more" aria-expanded=${open ? 'true' : 'false'} onClick=${() => setOpen(!open)}>
          ${open ? 'Show less' : 'Show all' + (lines ? ` (${num(lines)} lines)` : '')}</button>`
      : null}
  </div>`;
}

// -- text and code ------------------------------------------------------------------------------

function textView(data, ctx) {
  const t = textOf(data);
  if (t === null) return null;
  if (ctx.view === 'markdown' || ctx.mimeType === 'text/markdown') return views.markdown(data, ctx);
  if (ctx.view === 'code') return codeView(t, ctx.language, ctx);
  return html`<${Fold} maxHeight=${maxHeightPx(ctx.maxHeight, 360)} lines=${lineCount(t)}><pre class="text">${t}</pre><//>`;
}

function lineCount(t) {
  let n = 1;
  for (let i = 0; i < t.length; i++) if (t.charCodeAt(i) === 10) n++;
  return n;
}

function codeView(text, lang, ctx, firstLine = 1) {
  const lines = lineCount(text.endsWith('\n') ? text.slice(0, -1) : text);
  const gutter = [];
  for (let k = 0; k < lines; k++) gutter.push(firstLine + k);
  return html`<${Fold} maxHeight=${maxHeightPx(ctx.maxHeight, 360)} lines=${lines}>
    <div class="numbered">
      <pre class="gutter" aria-hidden="true">${gutter.join('\n')}</pre>
      <pre class="code"><code>${highlight(text, lang)}</code></pre>
    </div><//>`;
}

registerRenderer('text', textView);

registerRenderer('file_content', (data, ctx) => {
  if (!isObject(data) || typeof data.content !== 'string') return null;
  const path = String(data.path ?? '');
  const head = html`<div class="result-head"><span class="path">${path}</span>
    <span class="dim">${bytes(data.size)}${typeof data.totalLines === 'number' ? ` · ${num(data.totalLines)} lines` : ''}</span></div>`;
  if (data.encoding === 'base64') {
    const mime = ctx.mimeType || '';
    if (mime.startsWith('image/')) return html`${head}${imageView({ base64: data.content, alt: path }, ctx)}`;
    return html`${head}<p class="dim">binary content (${bytes(data.size)}, base64), not shown</p>`;
  }
  const lang = languageOf(ctx.language) || languageOfPath(path) || languageOf((ctx.mimeType || '').split('/')[1]);
  const first = typeof data.offset === 'number' ? data.offset + 1 : 1;
  return html`${head}${codeView(data.content, lang, ctx, first)}`;
});

// -- diff ---------------------------------------------------------------------------------------

function diffView(data, ctx) {
  if (!isObject(data) || typeof data.path !== 'string' || (typeof data.modified !== 'string' && !Array.isArray(data.hunks))) return null;
  return html`<${DiffView} data=${data} maxHeight=${maxHeightPx(ctx.maxHeight, 480)} />`;
}

function DiffView({ data, maxHeight }) {
  const rows = useMemo(() => diffRows(data), [data]);
  const { added, removed } = countChanges(rows);
  const lang = languageOfPath(data.path);
  return html`<div class="diff">
    <div class="result-head"><span class="path">${data.path}</span>
      ${data.isNew ? html`<span class="dim"> (new file)</span>` : null}
      <span class="count-add"> +${added}</span> <span class="count-del">−${removed}</span>
      ${data.truncated ? html`<span class="dim"> (truncated)</span>` : null}</div>
    ${rows.length === 0
      ? html`<p class="dim">(no changes)</p>`
      : html`<${Fold} maxHeight=${maxHeight} lines=${rows.length}>
          <div class="diff-rows" role="table" aria-label=${'Changes to ' + data.path}>
            ${rows.map((r) => (r.hunk
              ? html`<div class="drow hunk" role="row"><span role="cell" class="dhunk">@@ −${r.hunk[0]},${r.hunk[1]} +${r.hunk[2]},${r.hunk[3]} @@</span></div>`
              : html`<div class=${'drow ' + (r.tag === '+' ? 'add' : r.tag === '-' ? 'del' : r.tag === '\\' ? 'note' : 'ctx')} role="row">
                  <span class="ln" role="cell">${r.old ?? ''}</span><span class="ln" role="cell">${r.new ?? ''}</span>
                  <span class="sign" role="cell" aria-label=${r.tag === '+' ? 'added' : r.tag === '-' ? 'removed' : undefined}>${r.tag === ' ' ? '' : r.tag}</span>
                  <span class="dtext" role="cell">${r.text.length < 2000 && lang ? highlight(r.text, lang) : r.text}</span></div>`))}
          </div><//>`}
  </div>`;
}

registerRenderer('diff', diffView);

// -- file lists ---------------------------------------------------------------------------------

registerRenderer('file_list', (data) => {
  if (!isObject(data) || !Array.isArray(data.entries)) return null;
  return html`<${FileTree} data=${data} />`;
});

function FileTree({ data }) {
  const root = useMemo(() => buildTree(data.entries), [data]);
  return html`<div class="file-list">
    <div class="result-head"><span class="path">${String(data.path ?? '')}</span>
      <span class="dim"> ${num(data.entries.length)} ${data.entries.length === 1 ? 'entry' : 'entries'}${data.truncated ? ' (truncated)' : ''}</span></div>
    <ul class="tree" role="tree" aria-label=${'Files in ' + (data.path ?? '')}>${treeChildren(root, 0)}</ul>
  </div>`;
}

function buildTree(entries) {
  const root = { children: new Map() };
  for (const e of entries) {
    if (!isObject(e)) continue;
    const parts = String(e.name ?? '').split('/').filter(Boolean);
    let node = root;
    parts.forEach((part, k) => {
      if (!node.children.has(part)) node.children.set(part, { name: part, type: 'directory', children: new Map() });
      node = node.children.get(part);
      if (k === parts.length - 1) Object.assign(node, { type: e.type || 'file', size: e.size, modified: e.modified });
    });
  }
  return root;
}

function treeChildren(node, depth) {
  const isDir = (n) => (n.type === 'directory' ? 1 : 0);
  const kids = [...node.children.values()].sort((a, b) => isDir(b) - isDir(a) || a.name.localeCompare(b.name));
  return kids.map((k) => html`<${TreeNode} key=${k.name} node=${k} depth=${depth} />`);
}

function TreeNode({ node, depth }) {
  const dir = node.type === 'directory';
  const [open, setOpen] = useState(depth === 0 && node.children.size <= 30);
  const kind = node.type === 'symlink' ? ' (link)' : ['fifo', 'socket', 'device'].includes(node.type) ? ` (${node.type})` : '';
  const meta = html`<span class="dim">${node.size != null && !dir ? ' ' + bytes(node.size) : ''}${kind}</span>`;
  if (!dir || node.children.size === 0) {
    return html`<li role="treeitem" class=${'tree-leaf type-' + node.type}>${node.name}${dir ? '/' : ''}${meta}</li>`;
  }
  return html`<li role="treeitem" aria-expanded=${open ? 'true' : 'false'}>
    <button type="button" class="tree-toggle" onClick=${() => setOpen(!open)}><span aria-hidden="true">${open ? '▾' : '▸'}</span> ${node.name}/</button>
    <span class="dim"> ${node.children.size}</span>
    ${open ? html`<ul role="group">${treeChildren(node, depth + 1)}</ul>` : null}
  </li>`;
}

// -- tables -------------------------------------------------------------------------------------

function tableView(data, ctx) {
  if (!isObject(data) || !Array.isArray(data.columns) || !Array.isArray(data.rows)) return null;
  const columns = data.columns.filter((c) => isObject(c) && typeof c.key === 'string');
  return html`<${TableView} columns=${columns} rows=${data.rows.filter(isObject)} maxHeight=${maxHeightPx(ctx.maxHeight, 480)} />`;
}

/** An array of objects as a table (columns: every key, in order of appearance). */
function rowsView(data, ctx) {
  if (!Array.isArray(data) || data.length === 0 || !data.every(isObject)) return null;
  const keys = [];
  for (const row of data) for (const k of Object.keys(row)) if (!keys.includes(k)) keys.push(k);
  const columns = keys.map((key) => ({ key, type: data.every((r) => r[key] == null || typeof r[key] === 'number') ? 'number' : 'string' }));
  return html`<${TableView} columns=${columns} rows=${data} maxHeight=${maxHeightPx(ctx.maxHeight, 480)} />`;
}

registerRenderer('table', tableView);

function cellText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return preview(v, 200);
}

function compare(a, b, type) {
  if (a == null || a === '') return b == null || b === '' ? 0 : 1;
  if (b == null || b === '') return -1;
  if (type === 'number' || (typeof a === 'number' && typeof b === 'number')) return Number(a) - Number(b);
  if (type === 'date') return (Date.parse(a) || 0) - (Date.parse(b) || 0);
  if (type === 'boolean') return (a === true) - (b === true);
  return cellText(a).localeCompare(cellText(b), undefined, { numeric: true });
}

let tableIds = 0;

function TableView({ columns, rows, maxHeight }) {
  const [sort, setSort] = useState(null);
  const [filter, setFilter] = useState('');
  const [id] = useState(() => 'tbl' + ++tableIds);
  const shown = useMemo(() => {
    const f = filter.trim().toLowerCase();
    let out = f ? rows.filter((r) => columns.some((c) => cellText(r[c.key]).toLowerCase().includes(f))) : rows.slice();
    if (sort) {
      const col = columns.find((c) => c.key === sort.key);
      out.sort((a, b) => compare(a[sort.key], b[sort.key], col?.type) * sort.dir);
    }
    return out;
  }, [rows, columns, sort, filter]);
  const click = (key) => setSort(sort && sort.key === key ? (sort.dir === 1 ? { key, dir: -1 } : null) : { key, dir: 1 });
  const align = (c) => 'align-' + (['left', 'center', 'right'].includes(c.align) ? c.align : c.type === 'number' ? 'right' : 'left');
  return html`<div class="table-view">
    <div class="table-tools">
      <label for=${id + '-filter'} class="sr-only">Filter rows</label>
      <input id=${id + '-filter'} type="search" class="table-filter" placeholder="Filter rows" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} />
      <span class="dim">${shown.length === rows.length ? `${num(rows.length)} rows` : `${num(shown.length)} of ${num(rows.length)} rows`}</span>
    </div>
    <div class="table-scroll" style=${{ maxHeight: maxHeight + 'px' }}>
      <table>
        <thead><tr>${columns.map((c) => {
          const dir = sort && sort.key === c.key ? sort.dir : 0;
          return html`<th class=${align(c)} aria-sort=${dir === 1 ? 'ascending' : dir === -1 ? 'descending' : 'none'}>
            <button type="button" class="sort" onClick=${() => click(c.key)}>${c.label || c.key}<span aria-hidden="true">${dir === 1 ? ' ▲' : dir === -1 ? ' ▼' : ''}</span></button></th>`;
        })}</tr></thead>
        <tbody>${shown.slice(0, 2000).map((r) => html`<tr>${columns.map((c) => html`<td class=${align(c)}>${cellText(r[c.key])}</td>`)}</tr>`)}</tbody>
      </table>
      ${shown.length > 2000 ? html`<p class="dim">${num(shown.length - 2000)} more rows not shown; filter to narrow them.</p>` : null}
    </div>
  </div>`;
}

// -- images -------------------------------------------------------------------------------------

const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

function imageView(data, ctx) {
  if (!isObject(data)) return null;
  const mime = ctx.mimeType && /^image\/[\w.+-]+$/.test(ctx.mimeType) ? ctx.mimeType : 'image/png';
  let src = null;
  if (typeof data.base64 === 'string' && BASE64.test(data.base64)) src = `data:${mime};base64,${data.base64.replace(/\s/g, '')}`;
  else if (typeof data.url === 'string' && /^data:image\/[\w.+-]+;base64,[A-Za-z0-9+/=]*$/.test(data.url)) src = data.url;
  const alt = typeof data.alt === 'string' ? data.alt : (data.path ? String(data.path) : 'image');
  if (!src) {
    if (data.url || data.path) return html`<p class="dim">image not loaded (the page loads nothing from outside): ${String(data.url || data.path)}</p>`;
    return null;
  }
  const w = Number.isInteger(data.width) ? data.width : undefined;
  const h = Number.isInteger(data.height) ? data.height : undefined;
  return html`<figure class="image"><img src=${src} alt=${alt} width=${w} height=${h} />${data.alt ? html`<figcaption class="dim">${data.alt}</figcaption>` : null}</figure>`;
}

registerRenderer('image', imageView);

// -- structured data ----------------------------------------------------------------------------

function rawJson(data) {
  let text;
  try {
    text = JSON.stringify(data, null, 2);
  } catch {
    text = String(data);
  }
  return html`<${Fold} maxHeight=${360} lines=${lineCount(text ?? '')}><pre class="code"><code>${highlight(text ?? 'null', 'json')}</code></pre><//>`;
}

const structured = (data, ctx) => (ctx.view === 'raw' ? rawJson(data) : html`<${JsonTree} value=${data} />`);
registerRenderer('structured', structured);
registerRenderer('json', structured);

/** Any JSON value as a collapsible tree. */
export function JsonTree({ value }) {
  return html`<div class="json-tree">${jsonNode(null, value, 0)}</div>`;
}

function jsonNode(key, v, depth) {
  if (v === null || typeof v !== 'object') {
    return html`<div class="jt-row">${jsonKey(key)}${prim(v)}</div>`;
  }
  return html`<${JsonBranch} key=${key} k=${key} v=${v} depth=${depth} />`;
}

/** The key of a JSON tree row (none at the root). */
function jsonKey(k) {
  return k !== null ? html`<span class="jt-key">${k}: </span>` : null;
}

function prim(v) {
  if (typeof v === 'string') {
    return v.includes('\n') ? html`<span class="jt-str jt-multi">${v}</span>` : html`<span class="jt-str">${JSON.stringify(v)}</span>`;
  }
  if (typeof v === 'number') return html`<span class="jt-num">${String(v)}</span>`;
  if (typeof v === 'boolean' || v === null) return html`<span class="jt-lit">${String(v)}</span>`;
  return html`<span>${String(v)}</span>`;
}

function JsonBranch({ k, v, depth }) {
  const isArray = Array.isArray(v);
  const entries = isArray ? v.map((x, i) => [i, x]) : Object.entries(v);
  const [open, setOpen] = useState(depth < 2 && entries.length <= 40);
  const [limit, setLimit] = useState(200);
  const label = isArray ? `[${entries.length}]` : `{${entries.length}}`;
  if (entries.length === 0) {
    return html`<div class="jt-row">${jsonKey(k)}<span class="jt-lit">${isArray ? '[]' : '{}'}</span></div>`;
  }
  return html`<div class="jt-node">
    <button type="button" class="jt-toggle" aria-expanded=${open ? 'true' : 'false'} onClick=${() => setOpen(!open)}>
      ${open ? '▾' : '▸'} ${jsonKey(k)}<span class="dim">${label}</span>
      ${open ? null : html`<span class="jt-preview">${preview(v, 60)}</span>`}</button>
    ${open ? html`<div class="jt-children">
      ${entries.slice(0, limit).map(([kk, vv]) => jsonNode(kk, vv, depth + 1))}
      ${entries.length > limit ? html`<button type="button" class="fold-more" onClick=${() => setLimit(limit + 500)}>${num(entries.length - limit)} more…</button>` : null}
    </div>` : null}
  </div>`;
}

// -- runs and errors ----------------------------------------------------------------------------

function runStatus(d) {
  const took = duration(d.durationMs);
  if (d.timedOut) return `timed out after ${took}`;
  if (d.signal != null) return `killed by signal ${d.signal} in ${took}`;
  if (d.exitCode != null) return `exit ${d.exitCode} in ${took}`;
  return `ended without an exit status in ${took}`;
}

registerRenderer('code_result', (data, ctx) => {
  if (!isObject(data) || typeof data.command !== 'string') return null;
  const ok = data.exitCode === 0 && !data.timedOut && data.signal == null;
  const stream = (name, text) => (typeof text === 'string' && text.length
    ? html`<div class=${'stream stream-' + name}><div class="stream-name">${name}</div>
        <${Fold} maxHeight=${maxHeightPx(ctx.maxHeight, 320)} lines=${lineCount(text)}><pre class="text">${text}</pre><//></div>`
    : null);
  return html`<div class="code-result">
    <div class="result-head"><code class="cmd">$ ${data.command}</code>
      <span class=${ok ? 'exit ok' : 'exit bad'}>${runStatus(data)}</span></div>
    ${Array.isArray(data.weakened) && data.weakened.length
      ? html`<ul class="weakened">${data.weakened.map((w) => html`<li>sandbox weakened: ${String(w)}</li>`)}</ul>` : null}
    ${stream('stdout', data.stdout)}${stream('stderr', data.stderr)}
    ${!data.stdout && !data.stderr ? html`<p class="dim">no output</p>` : null}
    ${isObject(data.changes) ? html`<div class="stream changes"><div class="stream-name">changes applied</div>${renderValue(data.changes)}</div>` : null}
  </div>`;
});

registerRenderer('tool_error', (data) => {
  if (!isObject(data) || typeof data.message !== 'string') return null;
  return html`<div class="tool-error" role="note"><span class="err-code">${String(data.code ?? 'ERROR')}</span> <span class="err-msg">${data.message}</span>
    ${data.details !== undefined && data.details !== null ? html`<details class="err-details"><summary>details</summary><${JsonTree} value=${data.details} /></details>` : null}
  </div>`;
});

// -- git.status (a custom kind) ------------------------------------------------------------------

const GIT_GROUPS = [['conflicts', 'Conflicts'], ['staged', 'Staged'], ['modified', 'Not staged'], ['untracked', 'Untracked']];
const GIT_LETTER = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', copied: 'C', 'type changed': 'T' };

/** The branch line, then each group of paths (a path, or `{path, change, from}`); anything else as JSON. */
registerRenderer('git.status', (d) => {
  if (!isObject(d) || !GIT_GROUPS.every(([k]) => d[k] == null || Array.isArray(d[k]))) {
    return html`<div class="git-status"><p class="dim">(unexpected git.status data)</p><${JsonTree} value=${d} /></div>`;
  }
  const count = (n) => (Number.isInteger(n) && n > 0 ? n : 0);
  const entry = (group, e) => {
    if (typeof e === 'string') e = { path: e };
    if (!isObject(e) || typeof e.path !== 'string') return html`<li><${JsonTree} value=${e} /></li>`;
    const change = typeof e.change === 'string' ? e.change : '';
    const tag = group === 'untracked' ? '?' : group === 'conflicts' ? 'U' : GIT_LETTER[change] || '•';
    return html`<li><span class="gs-tag" title=${change || group}>${tag}</span> ${e.path}${typeof e.from === 'string' ? html`<span class="dim"> ← ${e.from}</span>` : null}${group === 'conflicts' && change ? html`<span class="dim"> (${change})</span>` : null}</li>`;
  };
  const groups = GIT_GROUPS.filter(([k]) => d[k]?.length);
  const ahead = count(d.ahead);
  const behind = count(d.behind);
  return html`<div class="git-status">
    <div class="result-head"><span class="path">⎇ ${typeof d.branch === 'string' ? d.branch : 'detached HEAD'}</span>
      ${typeof d.commit === 'string' ? html`<code class="dim">${d.commit}</code>` : null}
      ${typeof d.upstream === 'string' ? html`<span class="dim">→ ${d.upstream}</span>` : null}
      ${ahead ? html`<span class="count-add">↑${ahead} ahead</span>` : null}${behind ? html`<span class="count-del">↓${behind} behind</span>` : null}
      ${typeof d.upstream === 'string' && !ahead && !behind ? html`<span class="dim">up to date</span>` : null}</div>
    ${groups.length ? groups.map(([k, label]) => html`<details open class=${'gs gs-' + k}><summary>${label} <span class="dim">${d[k].length}</span></summary>
      <ul class="tree">${d[k].map((e) => entry(k, e))}</ul></details>`) : html`<p class="dim">nothing to commit, working tree clean</p>`}
  </div>`;
});
