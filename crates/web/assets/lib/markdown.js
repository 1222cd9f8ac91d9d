// A small markdown renderer for model text: headings, paragraphs, emphasis, strikethrough,
// inline code, fenced code (highlighted), lists (nested, ordered, tasks), links, block quotes,
// rules and tables. It builds view nodes, never HTML strings: every piece of text becomes a text
// node, so markup in the model's answer is shown as the characters it is. Links keep only
// http(s) and mailto targets; images are shown as links (the page loads nothing from outside).
// Linear: failed searches are remembered, brackets matched in one pass, spans nest 16 deep.
// A fenced block has a copy button (an icon only, outside the text a selection takes).
import { html, useState } from './view.js';
import { highlight, languageOf } from './highlight.js';

/** `text` rendered as markdown nodes. */
export function markdown(text) {
  const lines = String(text ?? '').replace(/\r\n?/g, '\n').split('\n');
  return blocks(lines, 0);
}

const FENCE = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,12})([-*+]|\d{1,9}[.)])([ \t]+|$)/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function blocks(lines, depth) {
  const out = [];
  let i = 0;
  let para = [];
  const flush = () => {
    if (para.length) {
      out.push(html`<p>${inline(para.join('\n'))}</p>`);
      para = [];
    }
  };
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      flush();
      i++;
      continue;
    }
    let m = FENCE.exec(line);
    if (m) {
      flush();
      const [, indent, marker, info] = m;
      const body = [];
      i++;
      while (i < lines.length) {
        const close = lines[i].trim();
        if (close.startsWith(marker[0].repeat(marker.length)) && /^([`~])\1*$/.test(close)) {
          i++;
          break;
        }
        body.push(indent ? lines[i].replace(new RegExp('^ {0,' + indent.length + '}'), '') : lines[i]);
        i++;
      }
      out.push(codeBlock(body.join('\n'), info));
      continue;
    }
    m = HEADING.exec(line);
    if (m) {
      flush();
      const level = Math.min(m[1].length + 1, 6);
      out.push(html`<${'h' + level} class="md-h">${inline(m[2] || '')}</${'h' + level}>`);
      i++;
      continue;
    }
    if (RULE.test(line) && !para.length) {
      out.push(html`<hr />`);
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      flush();
      const body = [];
      while (i < lines.length && (QUOTE.test(lines[i]) || (lines[i].trim() && body.length && !isBlockStart(lines[i])))) {
        body.push(lines[i].replace(QUOTE, ''));
        i++;
      }
      out.push(html`<blockquote>${depth < 8 ? blocks(body, depth + 1) : inline(body.join('\n'))}</blockquote>`);
      continue;
    }
    m = ITEM.exec(line);
    if (m && (!para.length || m[2] === '-' || m[2] === '*' || m[2] === '+' || m[2].startsWith('1'))) {
      flush();
      const [list, next] = parseList(lines, i, depth);
      out.push(list);
      i = next;
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      const header = cells(line);
      const aligns = cells(lines[i + 1]).map((c) => (c.endsWith(':') ? (c.startsWith(':') ? 'center' : 'right') : 'left'));
      if (header.length === aligns.length) {
        flush();
        const rows = [];
        i += 2;
        while (i < lines.length && lines[i].trim() && lines[i].includes('|')) {
          rows.push(cells(lines[i]));
          i++;
        }
        out.push(table(header, aligns, rows));
        continue;
      }
    }
    para.push(line);
    i++;
  }
  flush();
  return out;
}

function isBlockStart(line) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || ITEM.test(line);
}

function parseList(lines, start, depth) {
  const first = ITEM.exec(lines[start]);
  const ordered = /\d/.test(first[2]);
  const baseIndent = first[1].length;
  const items = [];
  let i = start;
  // Loose (paragraphs in items) when blank lines separate items or blocks inside one.
  let loose = false;
  let blankBefore = false;
  while (i < lines.length) {
    const m = ITEM.exec(lines[i]);
    if (!m || m[1].length !== baseIndent || /\d/.test(m[2]) !== ordered) break;
    if (blankBefore) loose = true;
    const contentIndent = m[0].length;
    const body = [lines[i].slice(m[0].length)];
    i++;
    let blank = false;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) {
        blank = true;
        body.push('');
        i++;
        continue;
      }
      const indent = line.match(/^ */)[0].length;
      if (indent >= Math.min(contentIndent, baseIndent + 2)) {
        if (blank) loose = loose || !ITEM.test(line);
        body.push(line.slice(Math.min(indent, contentIndent)));
        blank = false;
        i++;
        continue;
      }
      if (blank || ITEM.test(line) || isBlockStart(line)) break;
      body.push(line); // a lazy continuation line
      i++;
    }
    blankBefore = false;
    while (body.length && !body[body.length - 1].trim()) {
      body.pop();
      blankBefore = true;
    }
    items.push(body);
  }
  const start0 = ordered ? parseInt(first[2], 10) : 1;
  const children = items.map((body) => {
    let task = null;
    const t = /^\[([ xX])\][ \t]+/.exec(body[0]);
    if (t) {
      task = t[1] !== ' ';
      body[0] = body[0].slice(t[0].length);
    }
    let content;
    if (depth >= 8) content = inline(body.join('\n'));
    else if (loose) content = blocks(body, depth + 1);
    else {
      // Tight: the item's text inline, then any nested blocks.
      let k = 0;
      while (k < body.length && body[k].trim() && !(k > 0 && isBlockStart(body[k]))) k++;
      content = [inline(body.slice(0, k).join('\n')), blocks(body.slice(k), depth + 1)];
    }
    const box = task === null ? null : html`<span class=${'md-task' + (task ? ' done' : '')} aria-label=${task ? 'done' : 'to do'}>${task ? '☑' : '☐'} </span>`;
    return html`<li>${box}${content}</li>`;
  });
  const list = ordered
    ? html`<ol start=${start0 !== 1 ? start0 : undefined}>${children}</ol>`
    : html`<ul>${children}</ul>`;
  return [list, i];
}

function cells(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const out = [];
  let cur = '';
  let code = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && s[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (c === '`') {
      code = !code;
      cur += c;
    } else if (c === '|' && !code) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  out.push(cur.trim());
  return out;
}

function table(header, aligns, rows) {
  const cls = (k) => 'align-' + (aligns[k] || 'left');
  return html`<div class="md-table"><table>
    <thead><tr>${header.map((c, k) => html`<th class=${cls(k)}>${inline(c)}</th>`)}</tr></thead>
    <tbody>${rows.map((r) => html`<tr>${header.map((_, k) => html`<td class=${cls(k)}>${inline(r[k] ?? '')}</td>`)}</tr>`)}</tbody>
  </table></div>`;
}

/** A fenced code block, highlighted when the language is known, with its copy button. */
export function codeBlock(code, info) {
  const lang = languageOf(info);
  return html`<div class="code-block"><${Copy} text=${code} /><pre class="code" data-lang=${info || undefined}><code>${highlight(code, lang)}</code></pre></div>`;
}

/**
 * Copies `text` to the clipboard; where the page may not (plain http from another machine), it
 * selects the block instead, for the user's own copy.
 */
function Copy({ text }) {
  const [said, setSaid] = useState(null);
  const copy = (e) => {
    const pre = e.currentTarget.nextElementSibling;
    const tell = (what) => {
      setSaid(what);
      setTimeout(() => setSaid(null), 2000);
    };
    const select = () => {
      getSelection()?.selectAllChildren(pre);
      tell('Selected: copy it with your keyboard');
    };
    try {
      navigator.clipboard.writeText(text).then(() => tell('Copied'), select);
    } catch {
      select();
    }
  };
  return html`<button type="button" class="copy" data-testid="copy-code" aria-label=${said || 'Copy code'} title=${said || 'Copy code'}
    data-copied=${said ? 'true' : undefined} onClick=${copy}><svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">
    <path d=${said === 'Copied' ? 'M5 12l5 5 9-10' : 'M9 9h10v11H9zM5 15V4h10'} fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round" /></svg></button>`;
}

/** Whether `url` may be a link target: http(s) and mailto only. */
export function safeUrl(url) {
  const u = String(url || '').trim();
  if (/^(https?:\/\/|mailto:)[^\s]+$/i.test(u) && !/[\u0000-\u001f]/.test(u)) return u;
  return null;
}

const PUNCT = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/;
const BARE_URL = /^https?:\/\/[^\s<>"]*[^\s<>".,:;!?'")\]]/i;

/** Inline markdown in `text` as nodes, `depth` spans deep. */
export function inline(text, depth = 0) {
  const out = [];
  let buf = '';
  const push = (node) => {
    if (buf) {
      out.push(buf);
      buf = '';
    }
    out.push(node);
  };
  const s = String(text ?? '');
  const n = s.length;
  // A search that failed from a position fails from any later one: key -> position.
  const failed = new Map();
  const none = (key, at) => failed.get(key) <= at;
  // Odd or even backticks before each position.
  const ticks = [0];
  for (let k = 0; k < n; k++) ticks.push(ticks[k] ^ (s[k] === '`'));
  const closing = brackets(s);
  const deep = depth >= 16;
  let i = 0;
  while (i < n) {
    const c = s[i];
    if (c === '\\' && i + 1 < n && PUNCT.test(s[i + 1])) {
      buf += s[i + 1];
      i += 2;
      continue;
    }
    if (c === '\\' && s[i + 1] === '\n') {
      push(html`<br />`);
      i += 2;
      continue;
    }
    if (c === '\n') {
      push(html`<br />`);
      i++;
      continue;
    }
    if (c === '`') {
      let run = 1;
      while (s[i + run] === '`') run++;
      const fence = '`'.repeat(run);
      let j = none(fence, i) ? -1 : s.indexOf(fence, i + run);
      while (j !== -1 && s[j + run] === '`') {
        j = s.indexOf(fence, j + run + 1);
      }
      if (j === -1) failed.set(fence, i);
      else {
        let code = s.slice(i + run, j).replace(/\n/g, ' ');
        if (/^ .* $/.test(code) && code.trim()) code = code.slice(1, -1);
        push(html`<code class="md-code">${code}</code>`);
        i = j + run;
        continue;
      }
      buf += fence;
      i += run;
      continue;
    }
    if (!deep && (c === '[' || (c === '!' && s[i + 1] === '['))) {
      const link = parseLink(s, c === '!' ? i + 1 : i, closing);
      if (link) {
        const image = c === '!';
        const href = safeUrl(link.url);
        const label = image ? ['image: ' + (link.text || link.url)] : inline(link.text, depth + 1);
        if (href) push(html`<a href=${href} target="_blank" rel="noopener noreferrer" title=${link.title || undefined}>${label}</a>`);
        else push(html`<span class="md-badlink" title=${'link not followed: ' + link.url}>${label}</span>`);
        i = link.end;
        continue;
      }
    }
    if (c === '<' && /[hm]/i.test(s[i + 1])) {
      const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(s.slice(i, i + 2048));
      if (m && safeUrl(m[1])) {
        push(html`<a href=${m[1]} target="_blank" rel="noopener noreferrer">${m[1]}</a>`);
        i += m[0].length;
        continue;
      }
    }
    if (/^https?:/i.test(s.slice(i, i + 6)) && (i === 0 || /[\s(]/.test(s[i - 1]))) {
      const m = BARE_URL.exec(s.slice(i, i + 2048));
      if (m) {
        push(html`<a href=${m[0]} target="_blank" rel="noopener noreferrer">${m[0]}</a>`);
        i += m[0].length;
        continue;
      }
    }
    if (!deep && c === '~' && s[i + 1] === '~') {
      const j = none('~~', i) ? -1 : s.indexOf('~~', i + 2);
      if (j === -1) failed.set('~~', i);
      if (j > i + 2 && !/\s/.test(s[i + 2])) {
        push(html`<del>${inline(s.slice(i + 2, j), depth + 1)}</del>`);
        i = j + 2;
        continue;
      }
    }
    if (c === '*' || c === '_') {
      const em = deep ? null : emphasis(s, i, ticks, failed);
      if (em) {
        const body = inline(s.slice(em.start, em.stop), depth + 1);
        if (em.strong && em.em) push(html`<strong><em>${body}</em></strong>`);
        else if (em.strong) push(html`<strong>${body}</strong>`);
        else push(html`<em>${body}</em>`);
        i = em.end;
        continue;
      }
      let run = 1;
      while (s[i + run] === c) run++;
      buf += s.slice(i, i + run);
      i += run;
      continue;
    }
    buf += c;
    i++;
  }
  if (buf) out.push(buf);
  return out;
}

// A closer that suits one opener suits all with the same run and backtick parity.
function emphasis(s, i, ticks, failed) {
  const c = s[i];
  let run = 1;
  while (s[i + run] === c) run++;
  if (run > 3) return null;
  const open = i + run;
  if (open >= s.length || /\s/.test(s[open])) return null;
  // `_` only at word boundaries, so snake_case stays as it is.
  if (c === '_' && i > 0 && WORD.test(s[i - 1])) return null;
  const delim = c.repeat(run);
  const key = delim + ticks[open];
  if (failed.get(key) <= open) return null;
  let j = open;
  for (;;) {
    j = s.indexOf(delim, j + 1);
    if (j === -1) {
      failed.set(key, open);
      return null;
    }
    let k = j;
    while (s[k] === c) k++;
    const bad = k - j !== run || /\s/.test(s[j - 1]) || (c === '_' && k < s.length && WORD.test(s[k]))
      || ticks[j] !== ticks[open]; // a code span must close inside
    if (bad) {
      j = k - 1;
      continue;
    }
    return { start: open, stop: j, end: k, strong: run >= 2, em: run !== 2 };
  }
}

const WORD = /[\p{L}\p{N}]/u;

// Each `[`'s `]` (escapes and code skipped; a blank line ends open brackets).
function brackets(s) {
  const closing = new Map();
  const open = [];
  let lone = false;
  for (let j = 0; j < s.length; j++) {
    const c = s[j];
    if (c === '\\') j++;
    else if (c === '`') {
      const k = lone ? -1 : s.indexOf('`', j + 1);
      if (k === -1) lone = true;
      else j = k;
    } else if (c === '[') open.push(j);
    else if (c === ']' && open.length) closing.set(open.pop(), j);
    else if (c === '\n' && s[j + 1] === '\n') open.length = 0;
  }
  return closing;
}

function parseLink(s, i, closing) {
  // [text](url "title")
  const j = closing.get(i);
  if (j === undefined || s[j + 1] !== '(') return null;
  const m = /^\(\s*<?([^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)>?(?:\s+(?:"([^"]*)"|'([^']*)'))?\s*\)/.exec(s.slice(j + 1, j + 4096));
  if (!m) return null;
  return { text: s.slice(i + 1, j), url: m[1], title: m[2] || m[3] || '', end: j + 1 + m[0].length };
}
