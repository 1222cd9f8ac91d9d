// golem-forge in the browser: one more client of the session host. Display events come in over
// the WebSocket at /ws (the session so far first, then live); action events go out the same
// way. Each (re)connection rebuilds the view from what the server replays. See PAGE.md.
import { html, render, newId } from './lib/view.js';
import { Store } from './lib/store.js';
import { App } from './lib/ui.js';

const BASE_TITLE = 'golem-forge';
const ATTENTION_TITLE = '(!) approval needed — golem-forge';
const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];
/** How long a connection must last for the next reconnection to start the backoff afresh. */
const STABLE_MS = 3000;
/** How long after the socket opens the page counts as connected if the status never comes. */
const CONNECTED_FALLBACK_MS = 1500;

const store = new Store();
const root = document.getElementById('root');
let socket = null;
let attempts = 0;
let statusRequest = null;
let fallbackTimer = null;
let freshConnection = false;
let scheduled = false;
const notified = new Map();

const ui = {
  /** The panel open over the page: 'tools' (the palette), 'session' (the session menu) or null. */
  panel: null,
  focusInput: () => {},
  refresh(stick) {
    flush(stick);
  },
  toggle(panel) {
    this.panel = this.panel === panel ? null : panel;
    if (this.panel === 'tools' && store.state.manualTools === null) send({ type: 'listManualTools', requestId: newId('tools') });
    flush();
  },
  /** Closes the panel; focus goes back to the button that opened it. */
  close() {
    const was = this.panel;
    this.panel = null;
    flush();
    document.querySelector(`[data-testid="${was}-button"]`)?.focus();
  },
  listApprovals() {
    send({ type: 'listApprovals', requestId: newId('approvals') });
  },
  interrupt() {
    send({ type: 'interrupt', reason: 'interrupted from the browser' });
  },
};

/** Sends an action; false (with a notice) when the socket is not open. */
function send(action) {
  if (!socket || socket.readyState !== WebSocket.OPEN) {
    store.notice('error', 'Not connected: nothing was sent. The page reconnects by itself.');
    schedule();
    return false;
  }
  socket.send(JSON.stringify(action));
  return true;
}

function connect() {
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws';
  let ws;
  try {
    ws = new WebSocket(url);
  } catch (e) {
    console.error(e);
    retry();
    return;
  }
  socket = ws;
  let openedAt = 0;
  ws.onopen = () => {
    openedAt = Date.now();
    freshConnection = true;
    store.connected = true;
    statusRequest = newId('status');
    ws.send(JSON.stringify({ type: 'listManualTools', requestId: newId('tools') }));
    ws.send(JSON.stringify({ type: 'getStatus', requestId: statusRequest }));
    clearTimeout(fallbackTimer);
    fallbackTimer = setTimeout(markConnected, CONNECTED_FALLBACK_MS);
  };
  ws.onmessage = (e) => {
    let event;
    try {
      event = JSON.parse(e.data);
    } catch {
      console.warn('a frame that is not JSON', e.data);
      return;
    }
    if (freshConnection) {
      // The server replays the session first: start from nothing.
      freshConnection = false;
      store.reset();
    }
    store.apply(event);
    // The session menu's list of remembered approvals follows what changes it.
    if (ui.panel === 'session' && (event.type === 'sessionStarted' || event.action === 'forgetApprovals')) ui.listApprovals();
    if (event.type === 'sessionStatus' && event.requestId === statusRequest) markConnected();
    else schedule();
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    socket = null;
    store.connected = false;
    clearTimeout(fallbackTimer);
    document.body.dataset.connected = 'false';
    flush();
    // A connection that lasted starts the backoff afresh; one closed right after the replay (the
    // session is over, say) does not, and an ended session is only looked at now and then.
    if (store.state.ended) attempts = Math.max(attempts, BACKOFF_MS.length - 1);
    else if (openedAt && Date.now() - openedAt > STABLE_MS) attempts = 0;
    retry();
  };
  ws.onerror = () => {};
}

function retry() {
  const base = BACKOFF_MS[Math.min(attempts, BACKOFF_MS.length - 1)];
  attempts++;
  setTimeout(connect, base + Math.random() * base * 0.3);
}

/** The session so far is in: the view shows it, and the tests may go on. */
function markConnected() {
  clearTimeout(fallbackTimer);
  if (freshConnection) {
    freshConnection = false;
    store.reset();
  }
  flush(true);
  if (socket && socket.readyState === WebSocket.OPEN) document.body.dataset.connected = 'true';
}

/** Renders on the next frame (or soon, when the tab is hidden and frames do not come). */
function schedule() {
  if (scheduled) return;
  scheduled = true;
  const run = () => {
    if (scheduled) flush();
  };
  requestAnimationFrame(run);
  setTimeout(run, 100);
}

/** Renders now, keeping the conversation scrolled to the end when it was there. */
function flush(forceBottom) {
  scheduled = false;
  const timeline = document.getElementById('timeline');
  const atBottom = !timeline || timeline.scrollHeight - timeline.scrollTop - timeline.clientHeight < 120;
  render(html`<${App} store=${store} send=${send} ui=${ui} />`, root);
  attention();
  const after = document.getElementById('timeline');
  if (after && (atBottom || forceBottom)) after.scrollTop = after.scrollHeight;
}

/** The tab title and a notification say when an approval waits (and the tab is hidden). */
function attention() {
  const pending = store.pendingApproval();
  document.title = pending ? ATTENTION_TITLE : (store.state.worker ? `${store.state.worker} — ${BASE_TITLE}` : BASE_TITLE);
  for (const [id, n] of notified) {
    if (!store.state.approvals.some((a) => a.requestId === id) || store.state.answered.has(id)) {
      n?.close();
      notified.delete(id);
    }
  }
  if (pending && document.hidden && !notified.has(pending.requestId)) {
    let n = null;
    if (typeof Notification !== 'undefined' && Notification.permission === 'granted') {
      try {
        n = new Notification('Approval needed — golem-forge', {
          body: `${pending.toolName}: ${pending.description || ''}`.slice(0, 200),
          tag: pending.requestId,
          requireInteraction: true,
        });
        n.onclick = () => {
          window.focus();
          n.close();
        };
      } catch (e) {
        console.warn('notification failed', e);
      }
    }
    notified.set(pending.requestId, n);
  }
}

document.addEventListener('visibilitychange', () => {
  attention();
  if (!document.hidden) flush();
});

// Escape interrupts the turn, unless a dialog handled it first (or is open: it closes).
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || e.defaultPrevented || e.isComposing) return;
  if (document.querySelector('[data-testid="approval"], [data-testid="input-dialog"]')) return;
  e.preventDefault();
  if (ui.panel) ui.close();
  else ui.interrupt();
});

document.body.dataset.connected = 'false';
flush();
connect();
