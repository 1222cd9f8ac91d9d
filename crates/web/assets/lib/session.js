// The session menu: start a new session (`newSession`), clear the history (`clearHistory`),
// summarise it (`compact`), undo the last turn's file changes (`undo`; a conflict comes back as
// an error notice), and the approvals remembered for the session and the project
// (`listApprovals`, answered by `approvalsRemembered`), each with a button to forget it
// (`forgetApprovals {index}`; without an index, every approval of the session: project rules go
// one by one), and the approval mode (`setApprovalMode`): the mode on is pressed, as the store
// last heard it (the status, or a `setApprovalMode`'s answer from any tab).
import { html, useEffect, useRef, preview, newId } from './view.js';
import { dialogKeys } from './approval.js';

const SCOPES = [
  ['session', 'For this session'],
  ['project', 'Always in this project (.golem-forge/approvals.yaml)'],
];
const MODES = [['interactive', 'Ask'], ['approve_all', 'Approve all'], ['auto_deny', 'Deny all']];

export function SessionMenu({ store, send, ui }) {
  const box = useRef(null);
  useEffect(() => {
    store.forgotten = null;
    ui.listApprovals();
    box.current?.querySelector('button')?.focus();
  }, []);
  const act = (type) => send({ type, requestId: newId(type) }) && ui.close();
  const forget = (index) => {
    if (send({ type: 'forgetApprovals', requestId: newId('forget'), index })) {
      // Numbers change once one is forgotten: wait for the new list.
      store.remembered = null;
      ui.refresh();
      box.current?.focus();
    }
  };
  const onKeyDown = dialogKeys(box, () => ui.close());
  const list = store.remembered;
  const scope = (a) => a.scope || 'session';
  const done = store.forgotten;
  return html`<div class="overlay" onClick=${(e) => e.target === e.currentTarget && ui.close()}>
    <div class="palette" id="session-menu" data-testid="session-menu" role="dialog" aria-modal="true" aria-labelledby="session-title"
      tabindex="-1" ref=${box} onKeyDown=${onKeyDown}>
      <div class="dialog-head">
        <h2 id="session-title">Session</h2>
        <button type="button" class="btn" aria-label="Close the session menu" onClick=${() => ui.close()}>✕</button>
      </div>
      <div class="actions">
        <button type="button" class="btn" data-testid="new-session" onClick=${() => act('newSession')}
          title="This session is saved; the new one starts without history, remembered approvals or token counts">New session</button>
        <button type="button" class="btn" data-testid="clear-history" onClick=${() => act('clearHistory')}
          title="The model forgets the conversation; remembered approvals are kept">Clear history</button>
        <button type="button" class="btn" data-testid="compact" onClick=${() => act('compact')}
          title="The model summarises the conversation before its last turns, to free context">Compact</button>
        <button type="button" class="btn" onClick=${() => act('continueTurn')}
          title="Go on with a turn that waits for an approval given in the inbox">Continue</button>
        <button type="button" class="btn" data-testid="undo-turn" onClick=${() => act('undo')}
          title="Put back the files the last turn changed; files edited elsewhere since are not overwritten">Undo last turn</button>
      </div>
      <div class="actions modes" role="group" aria-label="Approval mode" title="How calls that need consent are decided">${MODES.map(([mode, label]) => html`<button
        type="button" class="btn mode" data-testid="approval-mode" data-mode=${mode} aria-pressed=${store.state.approvalMode === mode ? 'true' : 'false'}
        onClick=${() => send({ type: 'setApprovalMode', requestId: newId('mode'), mode })}>${label}</button>`)}
        ${store.state.approvalMode === 'defer' ? html`<span class="dim">Now: calls wait in the inbox</span>` : null}</div>
      <section data-testid="approvals-panel" aria-labelledby="approvals-title">
        <h3 id="approvals-title">Remembered approvals</h3>
        ${list === null ? html`<p class="dim">Loading…</p>` : list.length ? null : html`<p class="dim">None: every call that asks will ask.</p>`}
        ${SCOPES.map(([name, title]) => {
          const mine = (list || []).filter((a) => scope(a) === name);
          return mine.length ? html`<h4>${title}</h4><ul class="remembered">${mine.map((a) => html`<li key=${a.index}
            data-testid="remembered-approval" data-scope=${name} data-tool=${a.toolName} data-index=${a.index}>
            <code>${a.toolName}</code> <code class="dim">${preview(a.args, 120)}</code>
            <button type="button" class="btn" data-testid="forget-approval" onClick=${() => forget(a.index)}
              aria-label=${`Forget ${a.toolName} ${preview(a.args, 60)}`}>Forget</button></li>`)}</ul>` : null;
        })}
        ${list?.some((a) => scope(a) === 'session') ? html`<div class="actions">
          <button type="button" class="btn" data-testid="forget-session-approvals" onClick=${() => forget()}>Forget all of this session</button></div>` : null}
        ${done ? html`<p class=${done.ok ? 'dim' : 'field-error'} role="status">${done.message}</p>` : null}
      </section>
    </div>
  </div>`;
}
