// The manual tools palette (from `manualToolsAvailable`): tools grouped by category, each with
// its form; running one sends `manualToolInvoke {requestId, toolName, args}`.
import { html, useState, useEffect, useRef, newId } from './view.js';
import { FormFields, initialForm, checkForm, fieldChange } from './forms.js';
import { dialogKeys } from './approval.js';

export function Palette({ tools, send, onClose }) {
  const [selected, setSelected] = useState(null);
  const panel = useRef(null);
  useEffect(() => {
    panel.current?.querySelector('button[data-testid="manual-tool"], .palette-close')?.focus();
  }, []);
  const groups = new Map();
  for (const t of tools || []) {
    const cat = t.category || 'Other';
    if (!groups.has(cat)) groups.set(cat, []);
    groups.get(cat).push(t);
  }
  const onKeyDown = dialogKeys(panel, onClose);
  return html`<div class="overlay palette-overlay" onClick=${(e) => { if (e.target === e.currentTarget) onClose(); }}>
    <div class="palette" id="tool-palette" data-testid="tool-palette" role="dialog" aria-modal="true" aria-labelledby="palette-title"
      ref=${panel} onKeyDown=${onKeyDown}>
      <div class="dialog-head">
        <h2 id="palette-title">Tools</h2>
        <button type="button" class="btn palette-close" aria-label="Close the tools" onClick=${onClose}>✕</button>
      </div>
      ${tools === null ? html`<p class="dim">Loading…</p>` : null}
      ${tools && !tools.length ? html`<p class="dim">This worker has no tools you can run by hand.</p>` : null}
      ${[...groups].map(([cat, list]) => html`<section class="tool-group" key=${cat} aria-label=${cat}>
        <h3>${cat}</h3>
        ${list.map((t) => html`<div class="manual-tool-row" key=${t.name}>
          <button type="button" class="manual-tool" data-testid="manual-tool" data-tool=${t.name}
            aria-expanded=${selected === t.name ? 'true' : 'false'} onClick=${() => setSelected(selected === t.name ? null : t.name)}>
            <strong>${t.label || t.name}</strong> <code class="dim">${t.name}</code>
            ${t.description ? html`<span class="tool-desc">${t.description}</span>` : null}
          </button>
          ${selected === t.name ? html`<${ToolForm} tool=${t} send=${send} onDone=${onClose} />` : null}
        </div>`)}
      </section>`)}
    </div>
  </div>`;
}

function ToolForm({ tool, send, onDone }) {
  const fields = Array.isArray(tool.fields) ? tool.fields : [];
  const [form, setForm] = useState(() => initialForm(fields, undefined));
  const [errors, setErrors] = useState({});
  const ref = useRef(null);
  useEffect(() => {
    ref.current?.querySelector('input, textarea, select, button')?.focus();
  }, []);
  const submit = (e) => {
    e.preventDefault();
    const args = checkForm(ref.current, fields, form, setForm, setErrors);
    if (args && send({ type: 'manualToolInvoke', requestId: newId('manual'), toolName: tool.name, args })) onDone();
  };
  const change = fieldChange(form, setForm, errors, setErrors);
  return html`<form class="tool-form" data-testid="tool-form" data-tool=${tool.name} novalidate ref=${ref} onSubmit=${submit}>
    ${fields.length ? null : html`<p class="dim">No arguments.</p>`}
    <${FormFields} fields=${fields} values=${form.values} errors=${errors} json=${form.json} idPrefix=${'tf-' + tool.name} onChange=${change} />
    <div class="actions"><button type="submit" class="btn primary" data-testid="run-tool">Run ${tool.label || tool.name}</button></div>
  </form>`;
}
