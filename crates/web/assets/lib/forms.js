// Forms built from `FormField[]` (crates/protocol/src/form.rs): text, number (integer or not),
// boolean and select. A text field whose argument was not a string (an array or an object the
// schema could not give a better widget) is edited as JSON and parsed back. `validate` checks
// required fields, numbers, whole numbers and select choices before anything is sent.
import { html, isObject } from './view.js';

/** Whether two JSON values are equal. */
function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A select field's options (none when it has none). */
function optionsOf(f) {
  return Array.isArray(f.options) ? f.options : [];
}

/**
 * The form's starting values (strings, booleans, or a select's option index as a string) and
 * the names of the text fields edited as JSON. `args` are the proposed arguments of an approval
 * (absent for a manual tool: the schema defaults are used).
 */
export function initialForm(fields, args) {
  const values = {};
  const json = new Set();
  const source = isObject(args) ? args : {};
  for (const f of fields) {
    const has = Object.prototype.hasOwnProperty.call(source, f.name) && source[f.name] !== null;
    const v = has ? source[f.name] : f.default;
    switch (f.type) {
      case 'boolean':
        values[f.name] = v === true;
        break;
      case 'number':
        values[f.name] = typeof v === 'number' ? String(v) : '';
        break;
      case 'select': {
        const opts = optionsOf(f);
        const i = v === undefined ? -1 : opts.findIndex((o) => same(o.value, v));
        values[f.name] = i === -1 ? (f.required && opts.length && v === undefined ? '0' : '') : String(i);
        break;
      }
      default:
        if (v === undefined || v === null) values[f.name] = '';
        else if (typeof v === 'string') values[f.name] = v;
        else {
          values[f.name] = JSON.stringify(v, null, 2);
          json.add(f.name);
        }
    }
  }
  return { values, json };
}

/** Fields for arguments that came without any (every property as text, JSON when not a string). */
export function fieldsFromArgs(args) {
  if (!isObject(args)) return [];
  return Object.keys(args).map((name) => ({ name, type: 'text', required: false }));
}

/**
 * Checks `values` against `fields`; returns `{ args, errors }` where `errors` maps a field name to
 * its message (empty when the form is valid). `base` are arguments the form starts from (those
 * of an approval, so that properties without a field are kept).
 */
export function validate(fields, values, json, base) {
  const args = isObject(base) ? { ...base } : {};
  const errors = {};
  for (const f of fields) {
    const raw = values[f.name];
    const empty = raw === '' || raw === undefined;
    if (f.type === 'boolean') {
      args[f.name] = raw === true;
      continue;
    }
    if (empty) {
      if (f.required) errors[f.name] = 'Required.';
      else delete args[f.name];
      continue;
    }
    switch (f.type) {
      case 'number': {
        const text = String(raw).trim();
        const n = Number(text);
        if (!text || !Number.isFinite(n)) errors[f.name] = 'Enter a number.';
        else if (f.integer && !Number.isInteger(n)) errors[f.name] = 'Enter a whole number.';
        else args[f.name] = n;
        break;
      }
      case 'select': {
        const opts = optionsOf(f);
        const opt = /^\d+$/.test(String(raw)) ? opts[Number(raw)] : undefined;
        if (!opt) errors[f.name] = 'Choose one of the options.';
        else args[f.name] = opt.value;
        break;
      }
      default:
        if (json.has(f.name)) {
          try {
            args[f.name] = JSON.parse(raw);
          } catch (e) {
            errors[f.name] = 'Not valid JSON: ' + e.message;
          }
        } else args[f.name] = raw;
    }
  }
  return { args, errors };
}

/**
 * The values as the form's inputs hold them now. Read at submit time, so that a value set
 * without an `input` event (autofill, WebDriver's clear) still counts.
 */
export function readForm(form, fields, values) {
  const out = { ...values };
  if (!form) return out;
  for (const f of fields) {
    const el = form.querySelector(`[name="${CSS.escape(f.name)}"]`);
    if (!el) continue;
    out[f.name] = f.type === 'boolean' ? el.checked : el.value;
  }
  return out;
}

const LONG_TEXT = /content|text|body|code|string|script|patch|message|query|prompt|description/i;

/** The inputs of a form: one per field, each `name=FIELD`, with its label, hint and error. */
export function FormFields({ fields, values, errors, json, idPrefix, onChange }) {
  return fields.map((f) => {
    const id = `${idPrefix}-${f.name}`;
    const err = errors[f.name];
    const describedBy = [f.description ? id + '-desc' : null, err ? id + '-err' : null].filter(Boolean).join(' ') || undefined;
    const common = {
      id, name: f.name, 'aria-invalid': err ? 'true' : undefined, 'aria-describedby': describedBy,
    };
    const text = (e) => onChange(f.name, e.currentTarget.value);
    let input;
    if (f.type === 'boolean') {
      input = html`<input ...${common} type="checkbox" checked=${values[f.name] === true}
        onChange=${(e) => onChange(f.name, e.currentTarget.checked)} />`;
    } else if (f.type === 'number') {
      input = html`<input ...${common} type="text" inputmode=${f.integer ? 'numeric' : 'decimal'} value=${values[f.name]}
        aria-required=${f.required ? 'true' : undefined} onInput=${text} onChange=${text} />`;
    } else if (f.type === 'select') {
      const opts = optionsOf(f);
      input = html`<select ...${common} value=${values[f.name]} aria-required=${f.required ? 'true' : undefined}
        onChange=${(e) => onChange(f.name, e.currentTarget.value)}>
        ${f.required && values[f.name] !== '' ? null : html`<option value="">${f.required ? 'Choose…' : '(none)'}</option>`}
        ${opts.map((o, i) => html`<option value=${String(i)}>${o.label ?? String(o.value)}</option>`)}
      </select>`;
    } else {
      const v = values[f.name] ?? '';
      const multi = json.has(f.name) || v.includes('\n') || v.length > 60 || LONG_TEXT.test(f.name);
      input = multi
        ? html`<textarea ...${common} rows=${Math.min(12, Math.max(3, v.split('\n').length))} value=${v} aria-required=${f.required ? 'true' : undefined}
            spellcheck="false" onInput=${text} onChange=${text}></textarea>`
        : html`<input ...${common} type="text" value=${v} aria-required=${f.required ? 'true' : undefined} autocomplete="off" spellcheck="false"
            onInput=${text} onChange=${text} />`;
    }
    const label = html`<label for=${id}>${f.name}${f.required ? html`<span class="req" aria-hidden="true"> *</span>` : null}
      ${json.has(f.name) ? html`<span class="dim"> (JSON)</span>` : null}</label>`;
    return html`<div class=${'field field-' + f.type} key=${f.name}>
      ${f.type === 'boolean' ? html`<div class="check">${input}${label}</div>` : html`${label}${input}`}
      ${f.description ? html`<small id=${id + '-desc'} class="hint">${f.description}</small>` : null}
      ${err ? html`<div data-testid="field-error" id=${id + '-err'} class="field-error" role="alert">${err}</div>` : null}
    </div>`;
  });
}

// A form field's change: the new value, and its error cleared.
export const fieldChange = (form, setForm, errors, setErrors) => (name, value) => {
  setForm({ ...form, values: { ...form.values, [name]: value } });
  if (errors[name]) {
    const rest = { ...errors };
    delete rest[name];
    setErrors(rest);
  }
};

// Reads and checks the form in `box` (a submit): its arguments, or null with the errors shown and
// the first wrong field focused.
export function checkForm(box, fields, form, setForm, setErrors, original) {
  const values = readForm(box, fields, form.values);
  setForm({ ...form, values });
  const { args, errors } = validate(fields, values, form.json, original);
  setErrors(errors);
  const first = fields.find((f) => errors[f.name]);
  if (!first) return args;
  box?.querySelector(`[name="${CSS.escape(first.name)}"]`)?.focus();
  return null;
}
