// The session as the page shows it, rebuilt from display events: the timeline (messages, tool
// cards, notices, compactions), approvals waiting, manual tools, token counts, how full the root
// worker's context is, the running workers, the approval mode (`sessionStatus.approvalMode`, and
// each `setApprovalMode`'s answer, whichever tab sent it), the approvals remembered
// (`approvalsRemembered`, kept across connections). Tool cards carry the turn they ran in, counted
// as the host counts them (each `turnEnded` since `sessionStarted`), so that an `undo`'s answer
// (`undid turns 2, 3: …`) marks the cards whose file changes it put back. `apply` takes one event; items that change are replaced (never
// mutated), so a view can skip the ones that did not.

/** The tool kinds whose successful calls change files (what an undo puts back). */
const CHANGES = new Set(['edit', 'delete', 'move']);

/** Whether a tool card's call changed files: by its kind, a diff, or a program's changeset. */
function changedFiles(it) {
  const v = it.value;
  return it.status === 'success' && (CHANGES.has(it.toolKind) || v?.kind === 'diff'
    || (v?.kind === 'code_result' && !!v.data?.changes && typeof v.data.changes === 'object'));
}

/**
 * A `contextElided` as the line the terminal shows (golem_protocol::workers::elision_line, and
 * the `info` status an elision was before protocol 1.15).
 */
function elisionLine(ev) {
  const before = Number(ev.tokensBefore) || 0;
  const size = Number(ev.window) || 0;
  const n = Number(ev.results) || 0;
  const percent = size ? Math.floor((before * 100) / size) : 0;
  const [why, which] = ev.harder ? [' and too little to compact', 'more'] : ['', 'old'];
  const saved = Math.max(0, before - (Number(ev.tokensAfter) || 0));
  return `context ${percent} % full${why}: elided ${n} ${which} tool result${n === 1 ? '' : 's'} (about ${saved} tokens)`;
}

const ZERO = () => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });

function fresh(keep) {
  return {
    session: null,
    model: keep?.model ?? '',
    worker: keep?.worker ?? '',
    approvalMode: keep?.approvalMode ?? null,
    turns: 0,
    items: [],
    index: new Map(),
    calls: new Map(),
    approvals: [],
    answered: new Set(),
    manualTools: keep?.manualTools ?? null,
    usage: ZERO(),
    cost: null,
    context: null,
    workers: new Map(),
    busy: false,
    lastTurn: null,
    inputRequired: null,
    ended: null,
    modelNote: null,
    lastUserIndex: -1,
    seq: 0,
  };
}

export class Store {
  constructor() {
    this.state = fresh();
    this.connected = false;
    /** `setModel` requests of this tab: request id → model. */
    this.modelRequests = new Map();
    /** The last `approvalsRemembered` (null until it comes), and the last `forgetApprovals` answer. */
    this.remembered = null;
    this.forgotten = null;
  }

  /** Forgets everything (a new connection replays the session). */
  reset() {
    const s = this.state;
    this.state = fresh({ manualTools: s.manualTools });
  }

  // -- timeline -----------------------------------------------------------------------------

  push(item) {
    const s = this.state;
    s.index.set(item.id, s.items.length);
    s.items.push(item);
    return item;
  }

  get(id) {
    const i = this.state.index.get(id);
    return i === undefined ? undefined : this.state.items[i];
  }

  /** Replaces item `id` by `fn(old)`. */
  update(id, fn) {
    const s = this.state;
    const i = s.index.get(id);
    if (i === undefined) return undefined;
    const next = fn(s.items[i]);
    s.items[i] = next;
    return next;
  }

  notice(level, message) {
    const s = this.state;
    this.push({ type: 'notice', id: 'n' + ++s.seq, level, message: String(message ?? '') });
  }

  /**
   * The tool card of call `id`, created when it is not there yet, or when its card is finished
   * (ids repeat across turns with some models: a finished call's id starts a new card).
   */
  tool(id, name, patch) {
    const s = this.state;
    let key = s.calls.get(id);
    const card = key && this.get(key);
    if (!card || card.value) {
      key = 'tool:' + id + (card ? '#' + ++s.seq : '');
      s.calls.set(id, key);
      // A call the user made between turns belongs to the turn before, as the undo journal has it.
      const turn = patch.invokedBy === 'user' && !s.busy ? s.turns : s.turns + 1;
      this.push({
        type: 'tool', id: key, callId: id, name, args: undefined, status: 'running', toolKind: null, turn,
        awaiting: false, value: null, durationMs: null, invokedBy: 'model', worker: null, decision: null, undone: false,
      });
    }
    return this.update(key, (old) => ({ ...old, ...patch }));
  }

  /** A message typed in this tab, shown at once (the server may echo it as a `message`). */
  addLocalUserMessage(content) {
    const s = this.state;
    s.lastUserIndex = s.items.length;
    s.busy = true;
    this.push({ type: 'message', id: 'local' + ++s.seq, role: 'user', content, streaming: false, worker: null, local: true });
  }

  // -- approvals ------------------------------------------------------------------------------

  /** The approval the dialog shows: the oldest one not answered from this tab. */
  pendingApproval() {
    const s = this.state;
    return s.approvals.find((a) => !s.answered.has(a.requestId)) || null;
  }

  pendingCount() {
    const s = this.state;
    return s.approvals.filter((a) => !s.answered.has(a.requestId)).length;
  }

  markAnswered(requestId) {
    this.state.answered.add(requestId);
  }

  dropApproval(match) {
    const s = this.state;
    s.approvals = s.approvals.filter((a) => !match(a));
  }

  /** Marks the cards of the turns an undo names (`undid turn 3: …`, `undid turns 2, 3: …`) that changed files. */
  undone(message) {
    const m = /^undid turns? ([\d, ]+)/.exec(message || '');
    if (!m) return;
    const turns = new Set(m[1].split(',').map((n) => Number(n.trim())));
    for (const it of this.state.items) {
      if (it.type === 'tool' && !it.undone && turns.has(it.turn) && changedFiles(it)) this.update(it.id, (o) => ({ ...o, undone: true }));
    }
  }

  // -- events ---------------------------------------------------------------------------------

  /** Takes one display event. Unknown events are ignored. */
  apply(ev) {
    if (!ev || typeof ev !== 'object') return;
    const s = this.state;
    switch (ev.type) {
      case 'sessionStarted': {
        // A session's first event (also of one `newSession` started): a new story starts, as
        // the server's replay does.
        const t = (this.state = fresh(s));
        t.session = { sessionId: ev.sessionId, worker: ev.worker, model: ev.model, protocolVersion: ev.protocolVersion };
        t.worker = ev.worker || t.worker;
        t.model = ev.model || t.model;
        break;
      }
      case 'message': {
        const m = ev.message || {};
        const role = m.role || 'system';
        const content = String(m.content ?? '');
        if (role === 'user' && !ev.worker) {
          s.busy = true;
          // The echo of a message this tab sent replaces the local copy.
          const local = s.items.findIndex((it) => it.type === 'message' && it.local && it.content === content);
          if (local !== -1) {
            s.items[local] = { ...s.items[local], local: false };
            break;
          }
          s.lastUserIndex = s.items.length;
        }
        this.push({ type: 'message', id: 'm' + ++s.seq, role, content, streaming: false, worker: ev.worker || null });
        break;
      }
      case 'streaming': {
        const key = 'stream:' + ev.requestId;
        const delta = String(ev.delta ?? '');
        if (this.get(key)) {
          this.update(key, (old) => ({ ...old, content: old.content + delta, streaming: !ev.done }));
        } else {
          this.push({ type: 'message', id: key, role: 'assistant', content: delta, streaming: !ev.done, worker: ev.worker || null });
        }
        break;
      }
      case 'toolStarted': {
        this.tool(ev.toolCallId, ev.toolName, {
          args: ev.args, status: 'running', awaiting: false, invokedBy: ev.invokedBy || 'model', worker: ev.worker || null,
          toolKind: ev.toolKind ?? null,
        });
        this.dropApproval((a) => a.toolCallId === ev.toolCallId);
        break;
      }
      case 'toolResult': {
        const known = s.calls.get(ev.toolCallId);
        const old = known && this.get(known);
        this.tool(ev.toolCallId, ev.toolName, {
          status: ev.status || 'error', awaiting: false, value: ev.value || null, durationMs: ev.durationMs ?? null,
          invokedBy: ev.invokedBy || old?.invokedBy || 'model', worker: ev.worker || old?.worker || null,
          toolKind: ev.toolKind ?? old?.toolKind ?? null,
        });
        this.dropApproval((a) => a.toolCallId === ev.toolCallId);
        break;
      }
      case 'approvalRequired': {
        this.tool(ev.toolCallId, ev.toolName, {
          args: ev.args, awaiting: true, invokedBy: ev.invokedBy || 'model', worker: ev.worker || null,
        });
        if (!s.approvals.some((a) => a.requestId === ev.requestId)) s.approvals = [...s.approvals, ev];
        break;
      }
      case 'approvalResolved': {
        this.dropApproval((a) => (ev.requestId && a.requestId === ev.requestId) || a.toolCallId === ev.toolCallId);
        const decision = {
          approved: !!ev.approved, decidedBy: ev.decidedBy, note: ev.note ?? null, modifiedArgs: ev.modifiedArgs,
        };
        const patch = { awaiting: false, decision, worker: ev.worker || null };
        if (ev.modifiedArgs !== undefined) patch.args = ev.modifiedArgs;
        this.tool(ev.toolCallId, ev.toolName, patch);
        break;
      }
      case 'approvalDeferred':
        this.notice('warning', `${ev.request?.toolName} waits in the inbox (${ev.inboxId})`);
        break;
      case 'inputRequired':
        s.inputRequired = {
          requestId: ev.requestId, prompt: String(ev.prompt ?? ''), source: ev.source ? String(ev.source) : null,
          fields: Array.isArray(ev.fields) ? ev.fields : [],
        };
        break;
      case 'inputResolved':
        if (s.inputRequired?.requestId === ev.requestId) s.inputRequired = null;
        break;
      case 'status':
        this.notice(ev.level || 'info', ev.message);
        break;
      case 'manualToolsAvailable':
        s.manualTools = Array.isArray(ev.tools) ? ev.tools : [];
        break;
      case 'workerStarted': {
        const id = workerKey(ev);
        s.workers = new Map(s.workers);
        s.workers.set(id, {
          id, parentId: ev.parentId ?? null, name: ev.workerName, depth: ev.depth ?? 0, model: ev.model ?? null,
          currentTool: null, awaitingApproval: false, usage: null, cost: null,
        });
        break;
      }
      case 'workerProgress': {
        const id = workerKey(ev);
        const old = s.workers.get(id) || { id, parentId: ev.parentId ?? null, name: ev.workerName, depth: ev.depth ?? 0 };
        s.workers = new Map(s.workers);
        s.workers.set(id, {
          ...old, model: ev.model ?? old.model ?? null, usage: ev.usage ?? null, cost: ev.cost ?? null,
          currentTool: ev.currentTool ?? null, awaitingApproval: !!ev.awaitingApproval,
        });
        break;
      }
      case 'workerFinished': {
        s.workers = new Map(s.workers);
        s.workers.delete(workerKey(ev));
        break;
      }
      case 'usage': {
        const u = ev.usage || {};
        const t = { ...s.usage };
        for (const k of Object.keys(t)) t[k] += Number(u[k]) || 0;
        s.usage = t;
        if (typeof ev.cost === 'number') s.cost = (s.cost ?? 0) + ev.cost;
        if (!ev.worker && ev.context) s.context = ev.context;
        break;
      }
      case 'contextElided':
        this.notice('info', elisionLine(ev));
        break;
      case 'contextCompacted': {
        if (!ev.worker && s.context) s.context = { ...s.context, used: ev.tokensAfter };
        this.push({ ...ev, type: 'compacted', id: 'n' + ++s.seq, worker: ev.worker || null });
        break;
      }
      case 'turnEnded': {
        s.turns++;
        s.busy = false;
        s.lastTurn = ev.status || 'completed';
        s.inputRequired = null;
        s.workers = new Map();
        const answered = s.items.slice(s.lastUserIndex + 1).some((it) => it.type === 'message' && it.role === 'assistant' && !it.worker);
        if (!answered && ev.status === 'completed' && ev.response) {
          this.push({ type: 'message', id: 'm' + ++s.seq, role: 'assistant', content: String(ev.response), streaming: false, worker: null });
        }
        // Streams cut short by an interrupt are over.
        for (const it of s.items) if (it.type === 'message' && it.streaming) this.update(it.id, (o) => ({ ...o, streaming: false }));
        if (ev.status === 'failed') this.notice('error', 'The turn failed: ' + (ev.error || 'unknown error'));
        else if (ev.status === 'budgetExceeded') this.notice('error', 'Budget exceeded: ' + (ev.error || ''));
        else if (ev.status === 'interrupted') this.notice('warning', 'Interrupted.');
        else if (ev.status === 'waitingApproval') this.notice('warning', ev.error);
        break;
      }
      case 'actionResult': {
        if (ev.action === 'setModel') {
          const wanted = ev.requestId ? this.modelRequests.get(ev.requestId) : undefined;
          if (ev.ok) {
            const m = /^model:\s*(.+)$/.exec(ev.message || '');
            s.model = wanted || (m ? m[1].trim() : s.model);
            s.modelNote = null;
          } else if (wanted !== undefined) {
            s.modelNote = ev.message;
          }
        }
        if (ev.action === 'forgetApprovals') this.forgotten = ev;
        if (ev.ok && ev.action === 'setApprovalMode') {
          const m = /^approval mode: (\w+)$/.exec(ev.message || '');
          if (m) s.approvalMode = m[1];
        }
        if (ev.ok && ev.action === 'undo') this.undone(ev.message);
        if (!ev.ok) this.notice('error', ev.message);
        else if (ev.action === 'clearHistory') {
          s.context = null;
          this.push({ type: 'divider', id: 'n' + ++s.seq, message: String(ev.message ?? '') });
        } else if (ev.action !== 'setModel') this.notice('info', ev.message);
        break;
      }
      case 'approvalsRemembered':
        this.remembered = Array.isArray(ev.approvals) ? ev.approvals : [];
        break;
      case 'sessionStatus': {
        s.model = ev.model || s.model;
        s.worker = ev.worker || s.worker;
        s.approvalMode = ev.approvalMode || s.approvalMode;
        if (ev.usage) s.usage = { ...ZERO(), ...ev.usage };
        s.cost = typeof ev.cost === 'number' ? ev.cost : s.cost;
        s.context = ev.context || null;
        s.busy = !!ev.busy;
        break;
      }
      case 'sessionEnded': {
        s.busy = false;
        s.ended = { reason: ev.reason, message: ev.message ?? null };
        s.approvals = [];
        s.workers = new Map();
        if (ev.usage) s.usage = { ...ZERO(), ...ev.usage };
        if (typeof ev.cost === 'number') s.cost = ev.cost;
        this.notice(ev.reason === 'completed' ? 'info' : 'warning', `The session ended (${ev.reason}).`);
        break;
      }
      default:
        break;
    }
  }
}

function workerKey(ev) {
  return ev.workerId || `${ev.workerName}@${ev.depth ?? 0}`;
}
