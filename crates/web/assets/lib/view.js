// The view library in one place: Preact, its hooks and htm bound to Preact's `h`.
import { h, render, Component, Fragment } from '../vendor/preact.module.js';
import {
  useState, useEffect, useLayoutEffect, useRef, useMemo, useCallback,
} from '../vendor/hooks.module.js';
import htm from '../vendor/htm.module.js';

export const html = htm.bind(h);
export {
  h, render, Component, Fragment,
  useState, useEffect, useLayoutEffect, useRef, useMemo, useCallback,
};

/** A fresh id for a request (crypto.randomUUID needs a secure context; a phone on plain http
 * over the local network is not one). */
export function newId(prefix) {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return prefix + '-' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `n` with thousands separators. */
export function num(n) {
  return typeof n === 'number' && Number.isFinite(n) ? n.toLocaleString('en-US') : String(n ?? '');
}

/** US dollars for costs: more digits for small amounts. */
export function usd(cost) {
  if (typeof cost !== 'number' || !Number.isFinite(cost)) return '';
  if (cost === 0) return '$0';
  if (cost < 0.01) return '$' + cost.toFixed(4);
  return '$' + cost.toFixed(2);
}

/** A duration in milliseconds for people: `41 ms`, `2.0 s`, `3 min 5 s`. */
export function duration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** Bytes for people. */
export function bytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Any JSON value as one short line. */
export function preview(value, max = 80) {
  let text;
  if (typeof value === 'string') text = value;
  else {
    try {
      text = JSON.stringify(value);
    } catch {
      text = String(value);
    }
  }
  text = String(text ?? '').replace(/\s+/g, ' ');
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

/** Whether `v` is a plain JSON object. */
export function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
