// Golem Forge's adapter for JavaScript tool modules. The binary prepends the request
// (GOLEM_MODULE_PATH, GOLEM_MODULE_SOURCE, GOLEM_MODULE_SIBLINGS, GOLEM_OP, GOLEM_TOOL,
// GOLEM_ARGS) and runs this
// script with Node in the jail. It imports the user's module from its source and answers one
// request, as the Python adapter does: `describe`, `call NAME` or `policy NAME`.
// Errors go to stderr with exit 1.
// Or, with GOLEM_OP = "serve", it takes the jail's private channel (the connection waiting on
// the listening socket GOLEM_CHANNEL_FD; the listener is closed before the module is imported)
// and answers requests on it for as long as it lives, one JSON line each way, nonce echoed, as
// the Python adapter does (see there). Its stdout already goes to stderr.
// A function export's policy is its `<name>NeedsApproval` export: a function of the arguments
// returning a boolean (dynamic), or a boolean (static). A tool object's is its `needsApproval`.

function fail(message) {
  process.stderr.write(message + "\n");
  process.exit(1);
}

// With files next to the module (GOLEM_MODULE_SIBLINGS: name -> source), the module and
// they are written into a folder of the jail's private /tmp and the module is imported from
// there, so that its relative imports (`./helpers.mjs`) resolve.
async function loadWithSiblings() {
  const { mkdtempSync, writeFileSync } = await import("node:fs");
  const { join, basename } = await import("node:path");
  const { pathToFileURL } = await import("node:url");
  const folder = mkdtempSync("/tmp/golem_module_");
  for (const [name, source] of Object.entries(GOLEM_MODULE_SIBLINGS)) {
    writeFileSync(join(folder, basename(name)), source);
  }
  const own = join(folder, basename(GOLEM_MODULE_PATH));
  writeFileSync(own, GOLEM_MODULE_SOURCE);
  return await import(pathToFileURL(own).href);
}

async function load() {
  if (Object.keys(GOLEM_MODULE_SIBLINGS).length > 0) return await loadWithSiblings();
  const url = "data:text/javascript;base64," + Buffer.from(GOLEM_MODULE_SOURCE + "\n//# sourceURL=" + GOLEM_MODULE_PATH).toString(
    "base64",
  );
  try {
    return await import(url);
  } catch (err) {
    // A CommonJS `.js` module: evaluate it with `module.exports`.
    if (GOLEM_MODULE_PATH.endsWith(".js") && /\b(module|exports|require)\b/.test(String(err))) {
      const { createRequire } = await import("node:module");
      const module = { exports: {} };
      const require = createRequire(GOLEM_MODULE_PATH);
      new Function("module", "exports", "require", GOLEM_MODULE_SOURCE)(module, module.exports, require);
      return module.exports;
    }
    throw err;
  }
}

function tools(module) {
  const found = new Map();
  for (const [key, value] of Object.entries(module)) {
    if (typeof value === "function") {
      if (key.endsWith("Schema") || key.endsWith("NeedsApproval") || key === "default") continue;
      const schema = module[key + "Schema"];
      const described = module[key + "Description"];
      if (schema === null || typeof schema !== "object") {
        found.set(key, { entry: { name: key, error: `no \`${key}Schema\` export holding a JSON Schema` } });
        continue;
      }
      const description = typeof described === "string" ? described : schema.description || "";
      const entry = { name: key, description: String(description), inputSchema: schema };
      const policy = module[key + "NeedsApproval"];
      if (typeof policy === "function") entry.needsApproval = "dynamic";
      else if (typeof policy === "boolean") entry.needsApproval = policy;
      found.set(key, { entry, execute: value, policy });
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (typeof value.name !== "string" || typeof value.execute !== "function") continue;
    const entry = { name: value.name, description: String(value.description || "") };
    const schema = value.inputSchema ?? value.input_schema;
    if (schema === null || typeof schema !== "object") {
      found.set(value.name, { entry: { name: value.name, error: "`inputSchema` must be an object holding a JSON Schema" } });
      continue;
    }
    entry.inputSchema = schema;
    const policy = value.needsApproval ?? value.needs_approval;
    if (typeof policy === "function") entry.needsApproval = "dynamic";
    else if (typeof policy === "boolean") entry.needsApproval = policy;
    const manual = value.manualExecution ?? value.manual_execution;
    if (manual && typeof manual === "object") entry.manualExecution = manual;
    found.set(value.name, { entry, execute: (args) => value.execute(args), policy });
  }
  return found;
}

function result(value) {
  if (typeof value === "string") return { kind: "text", data: { content: value } };
  if (value && typeof value === "object" && !Array.isArray(value) && "kind" in value) return value;
  return { kind: "structured", data: value === undefined ? null : value };
}

class Refused extends Error {}

// An error's stack without the adapter's own frames (or its message, or itself as text).
function trace(err) {
  if (err instanceof Refused) return err.message;
  if (!err || !err.stack) return String(err);
  const own = import.meta.url;
  return String(err.stack)
    .split("\n")
    .filter((line) => !line.includes(own) && !line.includes("node:internal"))
    .join("\n");
}

// The JSON text of what `op` for the tool `name` gives; a Refused error says why there is none.
// The tool's own errors propagate.
async function answer(op, name, args) {
  const tool = all.get(name);
  if (!tool) throw new Refused(`the module has no tool \`${name}\``);
  let value;
  if (op === "policy") {
    value = typeof tool.policy === "function" ? Boolean(await tool.policy(args)) : Boolean(tool.policy);
  } else if (op === "call") {
    if (tool.entry.error) throw new Refused(tool.entry.error);
    value = result(await tool.execute(args));
  } else {
    throw new Refused(`unknown request \`${op}\``);
  }
  try {
    return JSON.stringify(value);
  } catch (err) {
    throw new Refused(`the result is not JSON: ${err && err.message ? err.message : err}`);
  }
}

// The private channel: the one connection waiting on the inherited listener, which is closed.
async function channel() {
  const fd = Number(process.env.GOLEM_CHANNEL_FD);
  delete process.env.GOLEM_CHANNEL_FD;
  if (!Number.isInteger(fd)) fail("golem-forge adapter: no private channel (GOLEM_CHANNEL_FD) to serve on");
  const { createServer } = await import("node:net");
  return await new Promise((resolve, reject) => {
    // `close` shuts the listening socket at once (its callback would wait for this connection).
    const server = createServer((socket) => {
      server.close();
      resolve(socket);
    });
    server.on("error", reject);
    server.listen({ fd });
  });
}

async function serve(socket) {
  const { createInterface } = await import("node:readline");
  const lines = createInterface({ input: socket, crlfDelay: Infinity });
  for await (const line of lines) {
    let request;
    try {
      request = JSON.parse(line);
      if (request === null || typeof request !== "object" || !("id" in request) || !("nonce" in request)) {
        throw new Error("no id or nonce");
      }
    } catch (err) {
      process.stderr.write(`golem-forge adapter: bad request ${JSON.stringify(line.slice(0, 200))}: ${err}\n`);
      continue;
    }
    const head = `{"id":${JSON.stringify(request.id)},"nonce":${JSON.stringify(request.nonce)}`;
    let text;
    try {
      text = `${head},"ok":${await answer(request.op, request.tool, request.args ?? {})}}`;
    } catch (err) {
      text = `${head},"error":${JSON.stringify(trace(err))}}`;
    }
    socket.write(text + "\n");
  }
}

const socket = GOLEM_OP === "serve" ? await channel() : null;
let module;
try {
  module = await load();
} catch (err) {
  fail(`the module could not be loaded: ${err && err.stack ? err.stack : err}`);
}
const all = tools(module);
if (socket) {
  await serve(socket);
} else if (GOLEM_OP === "describe") {
  process.stdout.write(JSON.stringify({ tools: [...all.values()].map((t) => t.entry) }) + "\n");
} else {
  let text;
  try {
    text = await answer(GOLEM_OP, GOLEM_TOOL, JSON.parse(GOLEM_ARGS));
  } catch (err) {
    fail(trace(err));
  }
  process.stdout.write(text + "\n");
}
