// The page: a header (worker, model, session menu, tools, notifications), the conversation
// (messages, tool cards, notices, cleared-history dividers, compactions), the message box with
// send and interrupt, and the status bar (tokens, cost, context fill, running workers, model
// switch). Dialogs (an approval, the tools palette, the session menu) open over it.
import { html, Component, useState, useRef, useEffect, num, usd, duration, preview, newId } from './view.js';
import { markdown } from './markdown.js';
import { ResultView, JsonTree } from './results.js';
import { ApprovalDialog } from './approval.js';
import { InputDialog } from './ask.js';
import { Palette } from './palette.js';
import { SessionMenu } from './session.js';

export function App({ store, send, ui }) {
  const s = store.state;
  const pending = store.pendingApproval();
  const form = !pending && s.inputRequired?.fields.length ? s.inputRequired : null;
  const respond = (response) => {
    if (send(response)) {
      store.markAnswered(response.requestId);
      ui.refresh();
      // Back to the message box, unless another approval took the dialog's place.
      if (!document.querySelector('[data-testid="approval"]')) ui.focusInput();
    }
  };
  return html`<div class="app" data-testid="app" data-busy=${s.busy ? 'true' : 'false'} data-last-turn=${s.lastTurn || undefined}>
    <${Header} store=${store} ui=${ui} />
    <main id="timeline" class="timeline" role="log" aria-label="Conversation" tabindex="-1">
      <div class="timeline-inner">
        ${s.items.length === 0 ? html`<p class="empty dim">${store.connected ? `Say something to ${s.worker || 'the worker'}.` : 'Connecting…'}</p>` : null}
        ${s.items.map((item) => html`<${Item} key=${item.id} item=${item} />`)}
      </div>
    </main>
    <${Composer} store=${store} send=${send} ui=${ui} />
    <${StatusBar} store=${store} send=${send} ui=${ui} />
    ${pending ? html`<${ApprovalDialog} key=${pending.requestId} req=${pending} waiting=${store.pendingCount()} respond=${respond} />` : null}
    ${form ? html`<${InputDialog} key=${form.requestId} q=${form} respond=${(a) => { if (send(a)) { s.inputRequired = null; ui.refresh(); ui.focusInput(); } }} />` : null}
    ${pending || form ? null : ui.panel === 'tools' ? html`<${Palette} tools=${s.manualTools} send=${send} onClose=${() => ui.close()} />`
      : ui.panel === 'session' ? html`<${SessionMenu} store=${store} send=${send} ui=${ui} />` : null}
  </div>`;
}

function Header({ store, ui }) {
  const s = store.state;
  return html`<header class="topbar">
    <span class="brand">golem-forge</span>
    <span class="worker" title="Worker">${s.worker}</span>
    <span class="model" data-testid="model" title="Model">${s.model}</span>
    <span class="spacer"></span>
    ${s.ended
      ? html`<span class="conn ended" role="status">session ended</span>`
      : html`<span class=${'conn ' + (store.connected ? 'on' : 'off')} role="status" aria-label=${store.connected ? 'Connected' : 'Not connected'}
          title=${store.connected ? 'Connected' : 'Reconnecting…'}>${store.connected ? '●' : '○ reconnecting…'}</span>`}
    <${Bell} />
    <button type="button" class="btn" data-testid="session-button" aria-haspopup="dialog" aria-expanded=${ui.panel === 'session' ? 'true' : 'false'}
      aria-controls="session-menu" onClick=${() => ui.toggle('session')}>Session</button>
    <button type="button" class="btn" data-testid="tools-button" aria-haspopup="dialog" aria-expanded=${ui.panel === 'tools' ? 'true' : 'false'}
      aria-controls="tool-palette" onClick=${() => ui.toggle('tools')}>Tools</button>
  </header>`;
}

/** Asks for notification permission on a click (never on its own). */
function Bell() {
  const supported = typeof Notification !== 'undefined' && window.isSecureContext;
  const [perm, setPerm] = useState(supported ? Notification.permission : 'unsupported');
  if (!supported || perm === 'denied') return null;
  const on = perm === 'granted';
  const ask = () => {
    if (on) return;
    Notification.requestPermission().then(setPerm, () => {});
  };
  return html`<button type="button" class=${'btn bell' + (on ? ' on' : '')} onClick=${ask}
    aria-label=${on ? 'Notifications are on for approvals' : 'Notify me when an approval waits'}
    title=${on ? 'You will be notified when an approval waits and this tab is hidden' : 'Notify me when an approval waits'}>${bellIcon(on)}</button>`;
}

function bellIcon(on) {
  return html`<svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
    <path d="M12 3a5 5 0 0 0-5 5v3.5L5 15v1h14v-1l-2-3.5V8a5 5 0 0 0-5-5zm-2 14a2 2 0 0 0 4 0z" fill=${on ? 'currentColor' : 'none'}
      stroke="currentColor" stroke-width="1.6" stroke-linejoin="round" />
    ${on ? null : html`<path d="M4 4l16 16" stroke="currentColor" stroke-width="1.6" />`}
  </svg>`;
}

/** One timeline item; re-rendered only when the item changed. */
class Item extends Component {
  shouldComponentUpdate(next) {
    return next.item !== this.props.item;
  }

  render({ item }) {
    if (item.type === 'message') return html`<${Message} item=${item} />`;
    if (item.type === 'tool') return html`<${ToolCard} item=${item} />`;
    if (item.type === 'notice') {
      return html`<div class=${'notice level-' + item.level} data-testid="notice" data-level=${item.level} role=${item.level === 'error' ? 'alert' : 'status'}>${item.message}</div>`;
    }
    if (item.type === 'divider') {
      return html`<p class="divider" data-testid="history-cleared" role="status">${item.message}: the model no longer sees what is above</p>`;
    }
    if (item.type === 'compacted') return html`<${Compacted} item=${item} />`;
    return null;
  }
}

/** A `contextCompacted`: the history of the root worker (or of the sub-worker named) became one summary. */
function Compacted({ item }) {
  const n = item.messagesReplaced;
  return html`<div class=${'msg-system' + depthClass(item.worker)} data-testid="context-compacted" role="status">${item.worker ? item.worker.name + ': ' : ''}⟲ context compacted (${item.reason}): ${num(n)} message${n === 1 ? '' : 's'} summarised, about ${num(item.tokensBefore)} → ${num(item.tokensAfter)} tokens</div>`;
}

function depthClass(worker) {
  return worker && worker.depth > 0 ? ' depth-' + Math.min(worker.depth, 4) : '';
}

function Message({ item }) {
  const role = item.role === 'user' || item.role === 'assistant' ? item.role : 'system';
  return html`<div class=${'msg msg-' + role + depthClass(item.worker)} data-testid="message" data-role=${role}
    data-streaming=${item.streaming ? 'true' : 'false'}>
    ${item.worker ? html`<div class="who">${item.worker.name}</div>` : null}
    ${role === 'assistant'
      ? html`<div class="md">${markdown(item.content)}</div>`
      : html`<div class="plain">${item.content}</div>`}
  </div>`;
}

const STATUS_LABEL = {
  running: 'running', success: 'done', error: 'error', denied: 'denied', blocked: 'blocked', interrupted: 'interrupted',
};

const DECIDED = {
  user: 'you', session_memory: 'session memory', mode: 'the approval mode', policy: 'policy', rule: 'a project rule',
};

function argLine(args) {
  if (args === undefined) return '';
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    for (const k of ['path', 'command', 'from', 'url', 'query', 'name']) {
      if (typeof args[k] === 'string') return args[k];
    }
  }
  return preview(args, 60);
}

function ToolCard({ item }) {
  const status = STATUS_LABEL[item.status] ? item.status : 'error';
  const label = item.awaiting ? 'waiting for approval' : STATUS_LABEL[status];
  const d = item.decision;
  const decision = d && !(d.approved && (d.decidedBy === 'policy' || d.decidedBy === 'mode') && !d.note)
    ? `${d.approved ? 'Approved' : 'Denied'} by ${DECIDED[d.decidedBy] || d.decidedBy}${d.modifiedArgs !== undefined ? ' with edited arguments' : ''}${d.note ? ': ' + d.note : ''}`
    : null;
  const hidden = item.value?.display?.preferredView === 'hidden';
  return html`<article class=${'card status-' + status + (item.awaiting ? ' awaiting' : '') + (item.undone ? ' undone' : '') + depthClass(item.worker)}
    data-testid="tool-card" data-tool=${item.name} data-status=${status} data-call-id=${item.callId} data-undone=${item.undone ? 'true' : undefined}
    aria-label=${`${item.name}: ${label}${item.undone ? ', undone' : ''}`}>
    <header class="card-head">
      <span class=${'badge badge-' + (item.awaiting ? 'awaiting' : status)}>${label}</span>
      ${item.undone ? html`<span class="badge badge-undone" data-testid="undone">undone</span>` : null}
      <code class="tool-name">${item.name}</code>
      <span class="arg-line">${argLine(item.args)}</span>
      <span class="card-meta dim">${[item.invokedBy === 'user' ? 'by you' : '', item.worker ? item.worker.name : '', item.durationMs != null ? duration(item.durationMs) : ''].filter(Boolean).join(' · ')}</span>
    </header>
    ${decision ? html`<p class=${'decision ' + (d.approved ? 'ok' : 'no')}>${decision}</p>` : null}
    ${item.undone ? html`<p class="decision">Undone: what this call changed was put back.</p>` : null}
    ${item.args !== undefined ? html`<details class="args"><summary>Arguments</summary><${JsonTree} value=${item.args} /></details>` : null}
    ${item.value && !hidden ? html`<${ResultView} value=${item.value} />` : null}
  </article>`;
}

function Composer({ store, send, ui }) {
  const s = store.state;
  const [text, setText] = useState('');
  const ref = useRef(null);
  useEffect(() => {
    ui.focusInput = () => ref.current?.focus();
  }, []);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = Math.min(el.scrollHeight + 2, 200) + 'px';
  }, [text]);
  const submit = (e) => {
    e?.preventDefault();
    const content = (ref.current ? ref.current.value : text).trim();
    if (!content) return;
    const asked = s.inputRequired?.fields.length ? null : s.inputRequired;
    const action = asked ? { type: 'userInput', requestId: asked.requestId, content } : { type: 'userInput', content };
    if (!send(action)) return;
    if (asked) s.inputRequired = null;
    store.addLocalUserMessage(content);
    setText('');
    if (ref.current) ref.current.value = '';
    ui.refresh(true);
  };
  const onKeyDown = (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && !e.altKey && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      submit();
    }
  };
  return html`<form class="composer" onSubmit=${submit}>
    ${s.inputRequired && !s.inputRequired.fields.length ? html`<p class="asked" role="status"><strong>${s.worker || 'The worker'} asks:</strong> ${s.inputRequired.prompt}</p>` : null}
    <div class="composer-row">
      <label for="input" class="sr-only">Message</label>
      <textarea id="input" data-testid="input" ref=${ref} rows="1" value=${text} placeholder=${`Message ${s.worker || 'the worker'}…`}
        aria-describedby="input-hint" onInput=${(e) => setText(e.currentTarget.value)} onChange=${(e) => setText(e.currentTarget.value)} onKeyDown=${onKeyDown}></textarea>
      <button type="submit" class="btn primary" data-testid="send">Send</button>
      <button type="button" class=${'btn stop' + (s.busy ? ' busy' : '')} data-testid="interrupt" aria-keyshortcuts="Escape"
        title="Interrupt the turn (Esc)" onClick=${() => ui.interrupt()}>Stop</button>
    </div>
    <span id="input-hint" class="sr-only">Enter sends, Shift+Enter starts a new line, Escape interrupts.</span>
  </form>`;
}

function StatusBar({ store, send, ui }) {
  const s = store.state;
  const u = s.usage;
  const input = u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens;
  const total = input + u.outputTokens;
  const cache = [[u.cacheWriteTokens, 'written'], [u.cacheReadTokens, 'read']].filter(([n]) => n > 0).map(([n, what]) => `${num(n)} ${what}`);
  return html`<footer class="status-bar" data-testid="status-bar">
    <span class="tokens" data-testid="tokens" title=${`input ${num(input)} (${num(u.cacheWriteTokens)} written to the cache, ${num(u.cacheReadTokens)} read from it), output ${num(u.outputTokens)}`}>
      ${num(total)} tokens <span class="dim detail">(${num(u.inputTokens)} in · ${num(u.outputTokens)} out)</span>${cache.length ? html` · <span class="cache" data-testid="cache">cache ${cache.join(', ')}</span>` : null}${s.cost != null ? html` · <span class="cost">${usd(s.cost)}</span>` : null}${s.context ? html` · <${ContextFill} fill=${s.context} />` : null}
    </span>
    <${Workers} workers=${s.workers} />
    <${ModelForm} store=${store} send=${send} ui=${ui} />
  </footer>`;
}

/** How full the root worker's context is: `ctx 63 %`, the tokens in its title. */
function ContextFill({ fill }) {
  const percent = fill.window > 0 ? Math.floor((fill.used * 100) / fill.window) : 0;
  return html`<span data-testid="context" title=${`${num(fill.used)} of ${num(fill.window)} tokens`}>ctx ${percent} %</span>`;
}

function Workers({ workers }) {
  const list = [...workers.values()];
  const ids = new Set(list.map((w) => w.id));
  const children = (parent) => list.filter((w) => (parent === null ? !w.parentId || !ids.has(w.parentId) : w.parentId === parent));
  const node = (w) => html`<li key=${w.id} class=${w.awaitingApproval ? 'awaiting' : ''} data-depth=${w.depth}>
    <span class="w-name">${w.name}</span>
    ${w.currentTool ? html` <code class="w-tool">${w.currentTool}</code>` : null}
    ${w.awaitingApproval ? html` <span class="w-wait">waiting on approval</span>` : null}
    ${w.usage ? html` <span class="dim">${num((w.usage.inputTokens || 0) + (w.usage.outputTokens || 0) + (w.usage.cacheReadTokens || 0) + (w.usage.cacheWriteTokens || 0))} tok</span>` : null}
    ${children(w.id).length ? html`<ul>${children(w.id).map(node)}</ul>` : null}
  </li>`;
  return html`<div class=${'workers' + (list.length ? '' : ' idle')} data-testid="workers" aria-label="Running workers">
    ${list.length ? html`<ul class="worker-tree">${children(null).map(node)}</ul>` : html`<span class="dim">idle</span>`}
  </div>`;
}

function ModelForm({ store, send }) {
  const s = store.state;
  const [value, setValue] = useState('');
  const submit = (e) => {
    e.preventDefault();
    const model = (e.currentTarget.querySelector('input')?.value ?? value).trim();
    if (!model) return;
    const requestId = newId('model');
    store.modelRequests.set(requestId, model);
    s.modelNote = null;
    const input = e.currentTarget.querySelector('input');
    if (send({ type: 'setModel', requestId, model })) {
      setValue('');
      if (input) input.value = '';
    }
  };
  return html`<form class="model-form" onSubmit=${submit}>
    <label for="model-input" class="sr-only">Switch the model</label>
    <input id="model-input" data-testid="model-input" type="text" autocomplete="off" spellcheck="false" value=${value}
      placeholder=${s.model || 'provider:model'} onInput=${(e) => setValue(e.currentTarget.value)} onChange=${(e) => setValue(e.currentTarget.value)} />
    <button type="submit" class="btn" data-testid="set-model">Switch</button>
  </form>
  ${s.modelNote ? html`<span class="model-error" role="alert">${s.modelNote}</span>` : null}`;
}
