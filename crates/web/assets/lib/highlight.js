// A small syntax highlighter: keywords, strings, comments, numbers and literals for the
// languages a worker's files and answers mostly hold. It only splits text into classified
// pieces; the caller turns them into text nodes inside spans, so nothing here can inject markup.
import { html } from './view.js';

const words = (s) => new Set(s.split(' '));

const C_LIKE_LITERALS = words('true false null nullptr NULL this self super undefined NaN Infinity');

const SPECS = {
  rust: {
    kw: words('as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return static struct trait type unsafe use where while yield'),
    lit: words('true false self Self None Some Ok Err'),
    line: ['//'], block: [['/*', '*/']], str: ['"'], rustChars: true, macros: true, upperTypes: true,
    attr: /^#!?\[[^\]\n]*\]/,
  },
  python: {
    kw: words('and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case'),
    lit: words('True False None self cls'),
    line: ['#'], block: [], str: ['"', "'"], triple: true, upperTypes: true, attr: /^@[\w.]+/,
  },
  js: {
    kw: words('async await break case catch class const continue debugger default delete do else export extends finally for from function get if import in instanceof let new of return set static switch throw try typeof var void while with yield type interface enum implements declare readonly private public protected abstract namespace keyof as satisfies'),
    lit: C_LIKE_LITERALS,
    line: ['//'], block: [['/*', '*/']], str: ['"', "'", '`'], upperTypes: true,
  },
  go: {
    kw: words('break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var'),
    lit: words('true false nil iota'),
    line: ['//'], block: [['/*', '*/']], str: ['"', '`'], upperTypes: true,
  },
  c: {
    kw: words('auto break case char class const continue default delete do double else enum extern final float for goto if inline int long namespace new override private protected public register return short signed sizeof static struct switch template throw try catch typedef typename union unsigned using virtual void volatile while import package interface extends implements fun val var when object'),
    lit: C_LIKE_LITERALS,
    line: ['//'], block: [['/*', '*/']], str: ['"', "'"], upperTypes: true, attr: /^#\s*\w+/,
  },
  bash: {
    kw: words('if then else elif fi case esac for while until do done in function return local export readonly declare set unset shift exit break continue source alias'),
    lit: words('true false'),
    line: ['#'], block: [], str: ['"', "'"], shellVars: true, hashAtWord: true,
  },
  json: { kw: new Set(), lit: words('true false null'), line: [], block: [], str: ['"'], jsonKeys: true },
  yaml: {
    kw: new Set(), lit: words('true false null yes no on off ~ True False Null'),
    line: ['#'], block: [], str: ['"', "'"], yamlKeys: true, hashAtWord: true,
  },
  toml: {
    kw: new Set(), lit: words('true false'),
    line: ['#'], block: [], str: ['"', "'"], triple: true, tomlKeys: true,
  },
  sql: {
    kw: words('select from where and or not insert into values update set delete create table drop alter index join left right inner outer on group by order having limit offset as distinct union all case when then else end primary key foreign references null is in like between exists'),
    lit: words('true false null'),
    line: ['--'], block: [['/*', '*/']], str: ["'", '"'], caseless: true,
  },
};

const ALIASES = {
  rs: 'rust', rust: 'rust', py: 'python', python: 'python', python3: 'python', py3: 'python',
  js: 'js', javascript: 'js', jsx: 'js', mjs: 'js', cjs: 'js', ts: 'js', typescript: 'js',
  tsx: 'js', mts: 'js', node: 'js', go: 'go', golang: 'go',
  c: 'c', h: 'c', cpp: 'c', 'c++': 'c', cc: 'c', hpp: 'c', cxx: 'c', java: 'c', kt: 'c',
  kotlin: 'c', cs: 'c', csharp: 'c', swift: 'c', scala: 'c',
  sh: 'bash', bash: 'bash', shell: 'bash', zsh: 'bash', console: 'bash', shellsession: 'bash',
  json: 'json', jsonc: 'json', json5: 'json', jsonl: 'json', ndjson: 'json', geojson: 'json',
  yaml: 'yaml', yml: 'yaml', worker: 'yaml', toml: 'toml', ini: 'toml', cfg: 'toml',
  diff: 'diff', patch: 'diff', udiff: 'diff', sql: 'sql',
};

/** The language name the highlighter knows for `name` (a fence's info string, a hint or a
 * file extension), or null. */
export function languageOf(name) {
  if (!name) return null;
  const key = String(name).trim().toLowerCase().split(/[\s,{]/)[0];
  return ALIASES[key] || null;
}

/** The language of a file by its extension. */
export function languageOfPath(path) {
  const m = /\.([A-Za-z0-9+]+)$/.exec(String(path || ''));
  if (m) return languageOf(m[1]);
  if (/(^|\/)(Dockerfile|Makefile)$/.test(path || '')) return 'bash';
  return null;
}

const IDENT = /[A-Za-z_$][\w$]*/y;
const NUMBER = /(?:0x[\da-fA-F_]+|0b[01_]+|0o[0-7_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)[A-Za-z\d_]*/y;
const RUST_CHAR = /'(?:\\(?:x[\da-fA-F]{2}|u\{[\da-fA-F]{1,6}\}|.)|[^\\'\n])'/y;

/** `code` split into `[class, text]` pieces; class is null for plain text. */
export function tokenize(code, lang) {
  const name = languageOf(lang);
  if (name === 'diff') return diffTokens(code);
  const spec = name && SPECS[name];
  if (!spec) return [[null, code]];
  const out = [];
  let plain = '';
  const push = (cls, text) => {
    if (!text) return;
    if (cls === null) {
      plain += text;
      return;
    }
    if (plain) {
      out.push([null, plain]);
      plain = '';
    }
    out.push([cls, text]);
  };
  const n = code.length;
  let i = 0;
  let lineStart = true;
  while (i < n) {
    const ch = code[i];
    if (ch === '\n') {
      push(null, ch);
      i++;
      lineStart = true;
      continue;
    }
    if (lineStart) {
      lineStart = false;
      // Keys at the start of a line (YAML `key:`, TOML `key =` and `[table]`).
      const rest = code.slice(i, code.indexOf('\n', i) === -1 ? n : code.indexOf('\n', i));
      let m = null;
      if (spec.yamlKeys) m = /^(\s*(?:-\s+)?)((?:"[^"\n]*"|'[^'\n]*'|[^\s:#"'][^:#\n]*?))(\s*:)(?=\s|$)/.exec(rest);
      if (spec.tomlKeys) m = /^(\s*)(\[\[?[^\]\n]*\]\]?|[\w.\-"']+)(\s*=?)/.exec(rest);
      if (m && m[2]) {
        push(null, m[1]);
        push('key', m[2]);
        push(null, m[3]);
        i += m[0].length;
        continue;
      }
    }
    // Comments: to the end of the line, or to the block's close.
    let stop = -1;
    for (const p of spec.line) {
      if (code.startsWith(p, i) && (!spec.hashAtWord || i === 0 || /\s/.test(code[i - 1]))) {
        stop = code.indexOf('\n', i);
        if (stop === -1) stop = n;
        break;
      }
    }
    for (const [open, close] of stop < 0 ? spec.block : []) {
      if (code.startsWith(open, i)) {
        stop = code.indexOf(close, i + open.length);
        stop = stop === -1 ? n : stop + close.length;
        break;
      }
    }
    if (stop >= 0) {
      push('com', code.slice(i, stop));
      i = stop;
      continue;
    }
    if (spec.attr && (ch === '#' || ch === '@')) {
      spec.attr.lastIndex = 0;
      const m = spec.attr.exec(code.slice(i, i + 200));
      if (m) {
        push('meta', m[0]);
        i += m[0].length;
        continue;
      }
    }
    // Strings.
    if (spec.triple && (code.startsWith('"""', i) || code.startsWith("'''", i))) {
      const q = code.slice(i, i + 3);
      let end = code.indexOf(q, i + 3);
      end = end === -1 ? n : end + 3;
      push('str', code.slice(i, end));
      i = end;
      continue;
    }
    if (ch === "'" && spec.rustChars) {
      RUST_CHAR.lastIndex = i;
      const m = RUST_CHAR.exec(code);
      if (m) {
        push('str', m[0]);
        i += m[0].length;
      } else {
        IDENT.lastIndex = i + 1;
        const lt = IDENT.exec(code);
        const len = lt ? lt[0].length + 1 : 1;
        push(lt ? 'meta' : null, code.slice(i, i + len));
        i += len;
      }
      continue;
    }
    if (spec.str.includes(ch)) {
      const end = stringEnd(code, i, ch, spec);
      const text = code.slice(i, end);
      if (spec.jsonKeys && /^\s*:/.test(code.slice(end, end + 20))) push('key', text);
      else push('str', text);
      i = end;
      continue;
    }
    if (spec.shellVars && ch === '$') {
      const m = /^\$(?:\{[^}\n]*\}|[A-Za-z_]\w*|[0-9@#?$!*-])/.exec(code.slice(i, i + 200));
      if (m) {
        push('var', m[0]);
        i += m[0].length;
        continue;
      }
    }
    // Numbers (not the digits inside a name).
    if (/\d/.test(ch) && (i === 0 || !/[\w$]/.test(code[i - 1]))) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(code);
      if (m) {
        push('num', m[0]);
        i += m[0].length;
        continue;
      }
    }
    if (/[A-Za-z_]/.test(ch) || (ch === '$' && !spec.shellVars)) {
      IDENT.lastIndex = i;
      const word = IDENT.exec(code)[0];
      const key = spec.caseless ? word.toLowerCase() : word;
      let cls = null;
      if (spec.kw.has(key)) cls = 'kw';
      else if (spec.lit.has(key)) cls = 'lit';
      else if (spec.macros && code[i + word.length] === '!' && code[i + word.length + 1] !== '=') cls = 'meta';
      else if (code[i + word.length] === '(') cls = 'fn';
      else if (spec.upperTypes && /^[A-Z][a-z]/.test(word)) cls = 'type';
      push(cls, word);
      i += word.length;
      if (cls === 'meta') {
        push('meta', '!');
        i++;
      }
      continue;
    }
    push(null, ch);
    i++;
  }
  if (plain) out.push([null, plain]);
  return out;
}

/** Where the string opened by `q` at `i` ends (past its closing quote). */
function stringEnd(code, i, q, spec) {
  const n = code.length;
  const escapes = !(spec.shellVars && q === "'") && !(spec.tomlKeys && q === "'");
  const multiline = q === '`' || spec.shellVars;
  let j = i + 1;
  while (j < n) {
    const c = code[j];
    if (escapes && c === '\\') {
      j += 2;
      continue;
    }
    if (c === q) return j + 1;
    if (c === '\n' && !multiline) return j;
    j++;
  }
  return n;
}

function diffTokens(code) {
  const out = [];
  for (const line of code.split(/(?<=\n)/)) {
    let cls = null;
    if (/^(\+\+\+|---|diff |index )/.test(line)) cls = 'meta';
    else if (line.startsWith('@@')) cls = 'hunk';
    else if (line.startsWith('+')) cls = 'add';
    else if (line.startsWith('-')) cls = 'del';
    out.push([cls, line]);
  }
  return out;
}

/** The largest text highlighted; longer code is shown plain (still escaped). */
const MAX_HIGHLIGHT = 200_000;

/** `code` as highlighted nodes for a `<code>` element. */
export function highlight(code, lang) {
  const text = String(code ?? '');
  if (text.length > MAX_HIGHLIGHT) return text;
  return tokenize(text, lang).map(([cls, t]) => (cls ? html`<span class=${'t-' + cls}>${t}</span>` : t));
}
