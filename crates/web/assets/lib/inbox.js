// The approval inbox page (`golem-forge serve --inbox`, inbox.html): the calls parked by the
// `defer` approval mode, read from GET /api/inbox every 2 s and after each answer. Each shows
// its tool, description, risk, worker, where it waits (a session or a batch item), its age and
// its preview (a diff for a file write) with the session page's renderers; Approve (once, for
// the session, for the project) and Deny (with a note for the model) post
// /api/inbox/N/answer, after which the server continues the session in the background and the
// entry leaves the list once its call is settled. What was answered on this page stays above the
// list with how its session went on (continuing, then completed, waiting again, failed…), from
// the same reads (every 0.5 s while one continues). See PAGE.md (The inbox page).
import { html, render, useState } from './view.js';
import { ResultView, JsonTree } from './results.js';

const POLL_MS = 2000;
const POLL_CONTINUING_MS = 500;
const root = document.getElementById('root');
const state = { entries: null, answered: [], error: null, busy: new Set() };

/** Reads the inbox and draws it again. */
async function refresh() {
  try {
    const response = await fetch('/api/inbox', { cache: 'no-store' });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || `the server answered ${response.status}`);
    state.entries = Array.isArray(body.entries) ? body.entries : [];
    state.answered = Array.isArray(body.answered) ? body.answered : [];
    state.error = null;
  } catch (e) {
    state.error = `The inbox could not be read: ${e.message}`;
  }
  draw();
}

/** Posts the answer to entry `id`; a refusal (answered meanwhile, gone) is shown. */
async function answer(id, body) {
  state.busy.add(id);
  draw();
  try {
    const response = await fetch(`/api/inbox/${id}/answer`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      const refusal = await response.json().catch(() => ({}));
      state.error = refusal.error || `the answer was refused (${response.status})`;
    }
  } catch (e) {
    state.error = `The answer was not sent: ${e.message}`;
  }
  state.busy.delete(id);
  await refresh();
}

/** `42 s`, `5 min`, `3 h`, `2 d`: how long ago `rfc3339` was. */
function age(rfc3339) {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(rfc3339)) / 1000));
  if (!Number.isFinite(s)) return '?';
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

const STATES = {
  continuing: 'Answered: its session is continuing…',
  answered: 'Answered elsewhere: it runs when its session continues.',
};

/** How the session of an answer given here went on, in words. */
function outcome(a) {
  const what = a.batch ? 'the batch item' : 'the session';
  const waits = (a.waiting || []).map((n) => '#' + n).join(', ');
  switch (a.outcome) {
    case 'continuing': return `${what} is continuing…`;
    case 'completed': return `${what} continued and completed.`;
    case 'waiting': return `${what} continued and is waiting again${waits ? ` (${waits}, below)` : ''}.`;
    case 'failed': return a.problem ? `${what} could not continue: ${a.problem}` : `${what} continued and failed: see \`golem-forge sessions show ${a.session}\`.`;
    case 'interrupted': return `${what} continued and was interrupted.`;
    case 'budgetExceeded': return `${what} continued and ran out of budget.`;
    default: return `${what} went on, but how it ended is not recorded${a.problem ? `: ${a.problem}` : '.'}`;
  }
}

function Answered({ a }) {
  const level = a.outcome === 'failed' ? ' level-error' : a.outcome === 'completed' ? '' : ' level-warning';
  return html`<p class=${'notice answered' + level} data-testid="inbox-answered" data-id=${a.id} data-approved=${a.approved ? 'true' : 'false'}
    data-outcome=${a.outcome} role="status"><strong>${a.approved ? 'Approved' : 'Denied'}</strong> #${a.id} <code>${a.toolName}</code> (${a.worker}): ${outcome(a)}</p>`;
}

function Entry({ entry }) {
  const [denying, setDenying] = useState(false);
  const [note, setNote] = useState('');
  const req = entry.request || {};
  const risk = ['low', 'medium', 'high'].includes(req.risk) ? req.risk : 'medium';
  const where = entry.batch ? `batch ${entry.batch.batch}, item ${entry.batch.item}` : `session ${entry.session}`;
  const waiting = entry.state === 'waiting' && !state.busy.has(entry.id);
  const approve = (remember) => () => answer(entry.id, { approved: true, remember });
  const deny = () => answer(entry.id, { approved: false, ...(note.trim() ? { note: note.trim() } : {}) });
  return html`<article class=${'card entry risk-' + risk} data-testid="inbox-entry" data-id=${entry.id}
      data-tool=${req.toolName} data-state=${entry.state}>
    <div class="entry-head">
      <span class="dim">#${entry.id}</span>
      <code class="tool-name">${req.toolName}</code>
      <span class=${'risk-badge risk-' + risk}>${risk} risk</span>
      <span class="card-meta dim">${age(entry.created)} ago</span>
    </div>
    <p class="entry-desc">${req.description || 'No description.'}</p>
    <p class="entry-where">worker ${entry.worker}, ${where}</p>
    ${req.preview ? html`<section class="preview" aria-label="Preview"><${ResultView} value=${req.preview} /></section>` : null}
    ${req.args !== undefined ? html`<details class="args" open=${!req.preview}>
      <summary>Arguments</summary><${JsonTree} value=${req.args} /></details>` : null}
    ${entry.state !== 'waiting' ? html`<p class="entry-state" data-testid="inbox-state">${STATES[entry.state] || ''}</p>` : null}
    ${entry.problem ? html`<p class="notice level-error" data-testid="inbox-problem">${entry.problem}</p>` : null}
    ${waiting && !denying ? html`<div class="actions">
      <button type="button" class="btn primary" data-testid="inbox-approve" onClick=${approve('none')}>Approve</button>
      <button type="button" class="btn" data-testid="inbox-approve-session" onClick=${approve('session')}
        title="Approve identical calls for the rest of the session">Approve for the session</button>
      <button type="button" class="btn" data-testid="inbox-approve-project" onClick=${approve('project')}
        title="Approve matching calls in this project from now on (a rule in .golem-forge/approvals.yaml)">Approve for the project</button>
      <button type="button" class="btn danger" data-testid="inbox-deny" onClick=${() => setDenying(true)}>Deny…</button>
    </div>` : null}
    ${waiting && denying ? html`<div class="deny-box">
      <label for=${'note-' + entry.id}>Note for the model (optional): why, or what to do instead</label>
      <textarea id=${'note-' + entry.id} data-testid="inbox-deny-note" rows="3" value=${note}
        onInput=${(e) => setNote(e.currentTarget.value)}></textarea>
      <div class="actions">
        <button type="button" class="btn danger" data-testid="inbox-deny-confirm" onClick=${deny}>Deny</button>
        <button type="button" class="btn" onClick=${() => setDenying(false)}>Back</button>
      </div>
    </div>` : null}
  </article>`;
}

function Inbox() {
  const entries = state.entries;
  return html`<div class="inbox-page">
    <header class="topbar"><span class="brand">golem-forge</span><span>approval inbox</span></header>
    <main class="inbox" data-testid="inbox" data-loaded=${entries === null ? 'false' : 'true'}>
      ${state.error ? html`<p class="notice level-error" data-testid="inbox-error" role="alert">${state.error}</p>` : null}
      ${state.answered.map((a) => html`<${Answered} key=${'a' + a.id} a=${a} />`)}
      ${entries === null ? html`<p class="dim">Loading…</p>`
        : entries.length === 0 ? html`<p class="empty dim" data-testid="inbox-empty">Nothing waits for an approval.</p>`
        : entries.map((entry) => html`<${Entry} key=${entry.id} entry=${entry} />`)}
    </main>
  </div>`;
}

function draw() {
  render(html`<${Inbox} />`, root);
}

/** Reads the inbox now and then: more often while a session continues. */
async function poll() {
  await refresh();
  setTimeout(poll, state.answered.some((a) => a.outcome === 'continuing') ? POLL_CONTINUING_MS : POLL_MS);
}

draw();
poll();
