// A tool's question (`inputRequired` with `fields`, such as an MCP server's elicitation): who
// asks and what, the form (validated before it is sent), then `inputResponse` — send (accept
// with the values), decline, or cancel (also Escape).
import { html, useState, useEffect, useRef } from './view.js';
import { FormFields, initialForm, checkForm } from './forms.js';
import { dialogKeys } from './approval.js';

export function InputDialog({ q, respond }) {
  const [form, setForm] = useState(() => initialForm(q.fields));
  const [errors, setErrors] = useState({});
  const box = useRef(null);
  useEffect(() => {
    box.current?.querySelector('input, textarea, select')?.focus();
  }, [q.requestId]);
  const answer = (action, values) => respond({ type: 'inputResponse', requestId: q.requestId, action, ...(values ? { values } : {}) });
  const submit = (e) => {
    e.preventDefault();
    const args = checkForm(box.current, q.fields, form, setForm, setErrors);
    if (args) answer('accept', args);
  };
  const change = (name, value) => setForm({ ...form, values: { ...form.values, [name]: value } });
  const onKeyDown = dialogKeys(box, () => answer('cancel'));
  const id = 'ask-' + q.requestId;
  return html`<div class="overlay">
    <form class="dialog" role="dialog" aria-modal="true" aria-labelledby=${id} data-testid="input-dialog" novalidate
      ref=${box} onSubmit=${submit} onKeyDown=${onKeyDown}>
      <div class="dialog-head"><h2 id=${id}>${q.source || 'The worker'} asks</h2></div>
      <p class="dialog-desc">${q.prompt}</p>
      <${FormFields} fields=${q.fields} values=${form.values} errors=${errors} json=${form.json} idPrefix=${id} onChange=${change} />
      <div class="actions">
        <button type="submit" class="btn primary" data-testid="input-submit">Send</button>
        <button type="button" class="btn danger" data-testid="input-decline" onClick=${() => answer('decline')}>Decline</button>
        <button type="button" class="btn" data-testid="input-cancel" onClick=${() => answer('cancel')}>Cancel</button>
      </div>
    </form>
  </div>`;
}
