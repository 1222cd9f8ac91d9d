// The approval dialog: what the call will do, how risky it is, its arguments and preview (a
// diff for file writes); approve once, for the session, always in this project (a rule in
// `.golem-forge/approvals.yaml`, as the terminal's `p`), deny with a note, or edit the
// arguments in a form (validated before anything is sent). Focus moves into the dialog when a
// request opens it; Escape backs out of the note or the form.
import { html, useState, useEffect, useRef } from './view.js';
import { ResultView, JsonTree } from './results.js';
import { FormFields, initialForm, fieldsFromArgs, checkForm, fieldChange } from './forms.js';

export function ApprovalDialog({ req, waiting, respond }) {
  const [mode, setMode] = useState('main');
  const [note, setNote] = useState('');
  const fields = req.editable === false ? [] // a call's effects: nothing to edit
    : Array.isArray(req.fields) && req.fields.length ? req.fields : fieldsFromArgs(req.args);
  const [form, setForm] = useState(() => initialForm(fields, req.args));
  const [errors, setErrors] = useState({});
  const box = useRef(null);
  const noteRef = useRef(null);
  const formRef = useRef(null);

  useEffect(() => {
    box.current?.focus();
  }, [req.requestId]);
  useEffect(() => {
    if (mode === 'deny') noteRef.current?.focus();
    if (mode === 'edit') formRef.current?.querySelector('input, textarea, select')?.focus();
    if (mode === 'main' && box.current && !box.current.contains(document.activeElement)) box.current.focus();
  }, [mode]);

  const answer = (response) => respond({ type: 'approvalResponse', requestId: req.requestId, ...response });
  const approve = (remember) => () => answer({ approved: true, remember });
  const deny = () => {
    const text = (noteRef.current ? noteRef.current.value : note).trim();
    answer({ approved: false, remember: 'none', ...(text ? { note: text } : {}) });
  };
  const submit = (e) => {
    e.preventDefault();
    const args = checkForm(formRef.current, fields, form, setForm, setErrors, req.args);
    if (args) answer({ approved: true, remember: 'none', modifiedArgs: args });
  };
  const change = fieldChange(form, setForm, errors, setErrors);
  // Escape backs out of the note or the form, and never interrupts the turn from the dialog.
  const onKeyDown = dialogKeys(box, () => setMode('main'));

  const risk = ['low', 'medium', 'high'].includes(req.risk) ? req.risk : 'medium';
  const titleId = 'approval-title-' + req.requestId;
  const descId = 'approval-desc-' + req.requestId;
  const who = req.worker ? `${req.worker.name} (depth ${req.worker.depth})` : null;
  return html`<div class="overlay">
    <div class=${'dialog risk-' + risk} role="dialog" aria-modal="true" aria-labelledby=${titleId} aria-describedby=${descId}
      data-testid="approval" data-tool=${req.toolName} tabindex="-1" ref=${box} onKeyDown=${onKeyDown}>
      <div class="dialog-head">
        <h2 id=${titleId}>Approve <code>${req.toolName}</code>?</h2>
        <span class=${'risk-badge risk-' + risk}>${risk} risk</span>
        ${waiting > 1 ? html`<span class="dim">${waiting - 1} more waiting</span>` : null}
      </div>
      <p id=${descId} class="dialog-desc">${req.description || 'No description.'}</p>
      <p class="dim small">${req.invokedBy === 'user' ? 'You invoked this tool.' : who ? `Asked by worker ${who}.` : 'Asked by the model.'}</p>
      ${req.preview ? html`<section class="preview" aria-label="Preview"><${ResultView} value=${req.preview} /></section>` : null}
      ${mode !== 'edit' && req.args !== undefined ? html`<details class="args" open=${!req.preview}>
        <summary>Arguments</summary><${JsonTree} value=${req.args} /></details>` : null}

      ${mode === 'main' ? html`<div class="actions">
        <button type="button" class="btn primary" data-testid="approve" onClick=${approve('none')}>Approve</button>
        <button type="button" class="btn" data-testid="approve-session" onClick=${approve('session')}
          title="Approve identical calls for the rest of the session">Approve for session</button>
        <button type="button" class="btn" data-testid="approve-project" onClick=${approve('project')}
          title="Approve matching calls in this project from now on: a rule in .golem-forge/approvals.yaml for this path (else these exact arguments)">Always in this project</button>
        <button type="button" class="btn" data-testid="edit" onClick=${() => setMode('edit')} disabled=${!fields.length}>Edit…</button>
        <button type="button" class="btn danger" data-testid="deny" onClick=${() => setMode('deny')}>Deny…</button>
      </div>` : null}

      ${mode === 'deny' ? html`<div class="deny-box">
        <label for=${'deny-note-' + req.requestId}>Note for the model (optional): why, or what to do instead</label>
        <textarea id=${'deny-note-' + req.requestId} data-testid="deny-note" rows="3" ref=${noteRef} value=${note}
          onInput=${(e) => setNote(e.currentTarget.value)} onChange=${(e) => setNote(e.currentTarget.value)}
          onKeyDown=${(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); deny(); } }}></textarea>
        <div class="actions">
          <button type="button" class="btn danger" data-testid="deny-confirm" onClick=${deny}>Deny</button>
          <button type="button" class="btn" onClick=${() => setMode('main')}>Back</button>
        </div>
      </div>` : null}

      ${mode === 'edit' ? html`<form class="approval-form" data-testid="approval-form" novalidate ref=${formRef} onSubmit=${submit}>
        <${FormFields} fields=${fields} values=${form.values} errors=${errors} json=${form.json} idPrefix=${'af-' + req.requestId} onChange=${change} />
        <div class="actions">
          <button type="submit" class="btn primary" data-testid="approval-submit">Approve with these arguments</button>
          <button type="button" class="btn" onClick=${() => { setErrors({}); setMode('main'); }}>Back</button>
        </div>
      </form>` : null}
    </div>
  </div>`;
}

// A dialog's keys: Escape calls `close` and stops there (it would interrupt the turn), Tab stays
// in `box`.
export const dialogKeys = (box, close) => (e) => {
  if (e.key === 'Escape') {
    e.preventDefault();
    e.stopPropagation();
    close();
  } else if (e.key === 'Tab') trapTab(e, box.current);
};

/** Keeps Tab inside `box`. */
function trapTab(e, box) {
  if (!box) return;
  const focusable = [...box.querySelectorAll('button, [href], input, select, textarea, summary, [tabindex]:not([tabindex="-1"])')]
    .filter((el) => !el.disabled && el.offsetParent !== null);
  if (!focusable.length) return;
  const first = focusable[0];
  const last = focusable[focusable.length - 1];
  if (e.shiftKey && (document.activeElement === first || document.activeElement === box)) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && document.activeElement === last) {
    e.preventDefault();
    first.focus();
  }
}

