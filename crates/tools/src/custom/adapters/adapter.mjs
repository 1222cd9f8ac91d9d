// Golem Forge's adapter for JavaScript tool modules. The binary prepends the request
// (GOLEM_MODULE_PATH, GOLEM_MODULE_SOURCE, GOLEM_OP, GOLEM_TOOL, GOLEM_ARGS) and runs this
// script with Node in the jail. It imports the user's module from its source and answers one
// request, as the Python adapter does: `describe`, `call NAME` or `policy NAME`.
// Errors go to stderr with exit 1.

function fail(message) {
  process.stderr.write(message + "\n");
  process.exit(1);
}

async function load() {
  const url = "data:text/javascript;base64," + Buffer.from(GOLEM_MODULE_SOURCE).toString("base64");
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
      if (key.endsWith("Schema") || key === "default") continue;
      const schema = module[key + "Schema"];
      const described = module[key + "Description"];
      if (schema === null || typeof schema !== "object") {
        found.set(key, { entry: { name: key, error: `no \`${key}Schema\` export holding a JSON Schema` } });
        continue;
      }
      const description = typeof described === "string" ? described : schema.description || "";
      found.set(key, {
        entry: { name: key, description: String(description), inputSchema: schema },
        execute: value,
      });
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

let module;
try {
  module = await load();
} catch (err) {
  fail(`the module could not be loaded: ${err && err.stack ? err.stack : err}`);
}
const all = tools(module);
if (GOLEM_OP === "describe") {
  process.stdout.write(JSON.stringify({ tools: [...all.values()].map((t) => t.entry) }) + "\n");
} else {
  const tool = all.get(GOLEM_TOOL);
  if (!tool) fail(`the module has no tool \`${GOLEM_TOOL}\``);
  if (tool.entry.error) fail(tool.entry.error);
  const args = JSON.parse(GOLEM_ARGS);
  if (GOLEM_OP === "policy") {
    const answer = typeof tool.policy === "function" ? await tool.policy(args) : Boolean(tool.policy);
    process.stdout.write(JSON.stringify(Boolean(answer)) + "\n");
  } else {
    let value;
    try {
      value = await tool.execute(args);
    } catch (err) {
      fail(err && err.stack ? err.stack : String(err));
    }
    process.stdout.write(JSON.stringify(result(value)) + "\n");
  }
}
