// Unified diff rows: from a producer's hunks, or computed here from the two texts (Myers'
// algorithm, bounded: past the bound the change is shown as everything removed then added).

/** Lines of context around each change when the diff is computed here. */
const CONTEXT = 3;
/** The most edits the line diff searches for before giving up on a minimal script. */
const MAX_EDITS = 1000;

/** Rows `{hunk:[a,b,c,d]}` and `{tag:' '|'+'|'-'|'\\', old, new, text}` for diff data. */
export function diffRows(data) {
  if (Array.isArray(data.hunks)) return rowsFromHunks(data.hunks);
  return rowsFromTexts(typeof data.original === 'string' ? data.original : '', String(data.modified ?? ''));
}

/** How many lines were added and removed. */
export function countChanges(rows) {
  let added = 0;
  let removed = 0;
  for (const r of rows) {
    if (r.tag === '+') added++;
    else if (r.tag === '-') removed++;
  }
  return { added, removed };
}

function rowsFromHunks(hunks) {
  const rows = [];
  for (const h of hunks) {
    if (!h || !Array.isArray(h.lines)) continue;
    rows.push({ hunk: [h.oldStart, h.oldLines, h.newStart, h.newLines] });
    let o = Number(h.oldStart) || 0;
    let n = Number(h.newStart) || 0;
    for (const raw of h.lines) {
      const line = String(raw).replace(/\r?\n$/, '');
      let tag = line[0] || ' ';
      const text = line.slice(1);
      if (!'+-\\'.includes(tag)) tag = ' ';
      const row = { tag, text, old: null, new: null };
      if (tag === '-' || tag === ' ') row.old = o++;
      if (tag === '+' || tag === ' ') row.new = n++;
      rows.push(row);
    }
  }
  return rows;
}

function splitLines(text) {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function rowsFromTexts(original, modified) {
  const a = splitLines(original);
  const b = splitLines(modified);
  // Common head and tail first: most edits touch a small part of a file.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const ops = [];
  for (let k = 0; k < head; k++) ops.push([' ', a[k]]);
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  for (const op of myers(midA, midB)) ops.push(op);
  for (let k = a.length - tail; k < a.length; k++) ops.push([' ', a[k]]);
  return toHunks(ops);
}

/** The edit script from `a` to `b` as `[tag, line]` pairs. */
function myers(a, b) {
  const n = a.length;
  const m = b.length;
  if (n === 0) return b.map((l) => ['+', l]);
  if (m === 0) return a.map((l) => ['-', l]);
  const max = Math.min(n + m, MAX_EDITS);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace = [];
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x;
      if (k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1])) x = v[offset + k + 1];
      else x = v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  if (!found) return [...a.map((l) => ['-', l]), ...b.map((l) => ['+', l])];
  // Walk back through the saved frontiers.
  const ops = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d];
    const k = x - y;
    let prevK;
    if (k === -d || (k !== d && vd[offset + k - 1] < vd[offset + k + 1])) prevK = k + 1;
    else prevK = k - 1;
    const prevX = d === 0 ? 0 : vd[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push([' ', a[x - 1]]);
      x--;
      y--;
    }
    if (d > 0) {
      if (x === prevX) ops.push(['+', b[y - 1]]);
      else ops.push(['-', a[x - 1]]);
    }
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

/** Groups an edit script into hunks with context. */
function toHunks(ops) {
  const rows = [];
  let o = 1;
  let n = 1;
  const numbered = ops.map(([tag, text]) => {
    const row = { tag, text, old: null, new: null };
    if (tag !== '+') row.old = o++;
    if (tag !== '-') row.new = n++;
    return row;
  });
  const changed = numbered.map((r) => r.tag !== ' ');
  let i = 0;
  while (i < numbered.length) {
    if (!changed[i]) {
      i++;
      continue;
    }
    let start = Math.max(0, i - CONTEXT);
    let end = i;
    // Extend while the next change is within twice the context.
    for (;;) {
      while (end < numbered.length && changed[end]) end++;
      let next = end;
      while (next < numbered.length && !changed[next] && next - end < 2 * CONTEXT) next++;
      if (next < numbered.length && changed[next]) end = next;
      else break;
    }
    const stop = Math.min(numbered.length, end + CONTEXT);
    const slice = numbered.slice(start, stop);
    const olds = slice.filter((r) => r.old !== null);
    const news = slice.filter((r) => r.new !== null);
    const oldStart = olds.length ? olds[0].old : Math.max(0, (slice[0].new ?? 1) - 1);
    const newStart = news.length ? news[0].new : 0;
    rows.push({ hunk: [oldStart, olds.length, newStart, news.length] });
    for (const r of slice) rows.push(r);
    i = stop;
  }
  return rows;
}
