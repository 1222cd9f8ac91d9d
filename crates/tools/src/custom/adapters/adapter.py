# Golem Forge's adapter for Python tool modules. The binary prepends the request
# (GOLEM_MODULE_PATH, GOLEM_MODULE_SOURCE, GOLEM_MODULE_SIBLINGS (the .py files next to the
# module, which it may import), GOLEM_OP, GOLEM_TOOL, GOLEM_ARGS) and runs this
# script in the jail. It loads the user's module from its source and answers one request:
#   describe     -> {"tools": [{name, description, inputSchema, needsApproval?, manualExecution?}
#                   or {name, error}]}
#   call NAME    -> a tool result: {"kind": ..., "data": ...}
#   policy NAME  -> true or false (the tool's dynamic needs_approval)
# Errors go to stderr with exit 1.
# Or, with GOLEM_OP = "serve", it loads the module once and answers requests for as long as
# it lives, over the jail's private channel: it accepts the one connection waiting on the
# listening socket GOLEM_CHANNEL_FD and closes the listener before the module is loaded (the
# accepted socket is close-on-exec, and a socket cannot be reopened through /proc), and makes
# itself non-dumpable, so nothing the module starts can read or write the channel. One JSON
# request per line,
#   {"id": N, "nonce": "...", "op": "call" | "policy", "tool": NAME, "args": {...}}
# and one JSON reply per line, {"id": N, "nonce": "...", "ok": <result or true/false>} or
# {"id": N, "nonce": "...", "error": "..."}. stdin is /dev/null and stdout goes to stderr.
# A plain function's policy is its `<name>_needs_approval`: a function of the arguments dict
# returning a bool (dynamic), or a bool (static). A tool object's is its `needs_approval`.
import inspect
import json
import os
import sys
import traceback
import types
import typing


def _fail(message):
    sys.stderr.write(message + "\n")
    sys.exit(1)


def _write_siblings():
    """Writes the files next to the module (GOLEM_MODULE_SIBLINGS: name -> source) into a
    folder of the jail's private /tmp and puts it first on the import path."""
    if not GOLEM_MODULE_SIBLINGS:
        return
    import os
    import tempfile

    folder = tempfile.mkdtemp(prefix="golem_module_")
    for name, source in GOLEM_MODULE_SIBLINGS.items():
        with open(os.path.join(folder, os.path.basename(name)), "w", encoding="utf-8") as out:
            out.write(source)
    sys.path.insert(0, folder)


def _load():
    _write_siblings()
    name = "golem_tool_module"
    module = types.ModuleType(name)
    module.__file__ = GOLEM_MODULE_PATH
    sys.modules[name] = module
    code = compile(GOLEM_MODULE_SOURCE, GOLEM_MODULE_PATH, "exec")
    exec(code, module.__dict__)
    return module


def _first_paragraph(doc):
    if not doc:
        return ""
    text = inspect.cleandoc(doc)
    return " ".join(text.split("\n\n", 1)[0].split())


def _type_schema(hint):
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        schema = _type_schema(args[0])
        for extra in args[1:]:
            if isinstance(extra, str):
                schema["description"] = extra
        return schema
    if origin is typing.Union or (
        hasattr(types, "UnionType") and isinstance(hint, getattr(types, "UnionType"))
    ):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return _type_schema(rest[0])
        return {"anyOf": [_type_schema(a) for a in rest]}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (list, typing.List):
        schema = {"type": "array"}
        if args:
            schema["items"] = _type_schema(args[0])
        return schema
    if origin in (dict, typing.Dict) or hint is dict:
        return {"type": "object"}
    if hint is list:
        return {"type": "array"}
    simple = {int: "integer", float: "number", str: "string", bool: "boolean"}
    if hint in simple:
        return {"type": simple[hint]}
    if hint is typing.Any:
        return {}
    raise ValueError("type %r has no JSON Schema" % (hint,))


def _optional(hint):
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    origin = typing.get_origin(hint)
    is_union = origin is typing.Union or (
        hasattr(types, "UnionType") and isinstance(hint, getattr(types, "UnionType"))
    )
    return is_union and type(None) in typing.get_args(hint)


def _function_schema(module, name, func):
    explicit = getattr(module, name + "_schema", None)
    if isinstance(explicit, dict):
        return explicit
    hints = typing.get_type_hints(func, include_extras=True)
    properties = {}
    required = []
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ValueError("*%s has no JSON Schema" % param.name)
        if param.name not in hints:
            raise ValueError(
                "parameter `%s` has no type hint (add one, or a `%s_schema` dict)"
                % (param.name, name)
            )
        try:
            properties[param.name] = _type_schema(hints[param.name])
        except ValueError as err:
            raise ValueError("parameter `%s`: %s" % (param.name, err))
        if param.default is param.empty and not _optional(hints[param.name]):
            required.append(param.name)
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _field(obj, *names):
    for name in names:
        if isinstance(obj, dict):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    return None


def _tools(module):
    """Every tool: name -> (describe entry, execute, needs_approval, called with keywords)."""
    found = {}
    for attr, value in list(vars(module).items()):
        if attr.startswith("_"):
            continue
        if inspect.isfunction(value) and value.__module__ == module.__name__:
            if attr.endswith("_schema") or attr.endswith("_needs_approval"):
                continue
            entry = {"name": attr, "description": _first_paragraph(value.__doc__)}
            try:
                entry["inputSchema"] = _function_schema(module, attr, value)
            except (ValueError, TypeError, NameError) as err:
                entry = {"name": attr, "error": str(err)}
            policy = getattr(module, attr + "_needs_approval", None)
            if callable(policy):
                entry["needsApproval"] = "dynamic"
            elif isinstance(policy, bool):
                entry["needsApproval"] = policy
            else:
                policy = None
            found[attr] = (entry, value, policy, True)
            continue
        if inspect.isclass(value) or inspect.ismodule(value):
            continue
        name = _field(value, "name")
        execute = _field(value, "execute")
        if not isinstance(name, str) or not callable(execute):
            continue
        schema = _field(value, "input_schema", "inputSchema")
        entry = {"name": name, "description": str(_field(value, "description") or "")}
        if not isinstance(schema, dict):
            entry = {"name": name, "error": "`input_schema` must be a dict holding a JSON Schema"}
        else:
            entry["inputSchema"] = schema
        policy = _field(value, "needs_approval", "needsApproval")
        if callable(policy):
            entry["needsApproval"] = "dynamic"
        elif isinstance(policy, bool):
            entry["needsApproval"] = policy
        manual = _field(value, "manual_execution", "manualExecution")
        if isinstance(manual, dict):
            entry["manualExecution"] = manual
        found[name] = (entry, execute, policy, False)
    return found


def _result(value):
    if isinstance(value, str):
        return {"kind": "text", "data": {"content": value}}
    if isinstance(value, dict) and "kind" in value:
        return value
    return {"kind": "structured", "data": value}


class _Refused(Exception):
    """A request the module cannot answer (no such tool, no usable schema, a bad result)."""


def _settle(value):
    if inspect.isawaitable(value):
        import asyncio

        value = asyncio.run(value)
    return value


def _answer(tools, op, name, args):
    """The JSON text of what `op` for the tool `name` gives; _Refused says why there is none.
    The tool's own exceptions propagate."""
    if name not in tools:
        raise _Refused("the module has no tool `%s`" % name)
    entry, execute, policy, keywords = tools[name]
    if op == "policy":
        answer = bool(_settle(policy(args)) if callable(policy) else policy)
    elif op == "call":
        if "error" in entry:
            raise _Refused(entry["error"])
        answer = _result(_settle(execute(**args) if keywords else execute(args)))
    else:
        raise _Refused("unknown request `%s`" % op)
    try:
        return json.dumps(answer, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise _Refused("the result is not JSON: %s" % err)


def _channel():
    """Takes the private channel: the connection waiting on the inherited listener, which is
    closed. Then nothing the module starts can open the adapter's /proc files (its memory
    holds the nonces)."""
    import socket

    fd = os.environ.pop("GOLEM_CHANNEL_FD", None)
    if fd is None:
        _fail("golem-forge adapter: no private channel (GOLEM_CHANNEL_FD) to serve on")
    listener = socket.socket(fileno=int(fd))
    connection, _ = listener.accept()
    listener.close()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (ImportError, OSError, AttributeError):
        pass
    return connection.makefile("r", encoding="utf-8"), connection.makefile("w", encoding="utf-8")


def _serve(requests, replies, tools):
    sys.stdout = sys.stderr
    while True:
        line = requests.readline()
        if not line:
            return
        try:
            request = json.loads(line)
            rid = request["id"]
            nonce = request["nonce"]
        except (ValueError, KeyError, TypeError) as err:
            sys.stderr.write("golem-forge adapter: bad request %r: %s\n" % (line[:200], err))
            continue
        try:
            answer = _answer(tools, request.get("op"), request.get("tool"), request.get("args") or {})
            text = '{"id": %s, "nonce": %s, "ok": %s}' % (json.dumps(rid), json.dumps(nonce), answer)
        except _Refused as err:
            text = json.dumps({"id": rid, "nonce": nonce, "error": str(err)})
        except Exception:
            text = json.dumps({"id": rid, "nonce": nonce, "error": _trace()})
        sys.stderr.flush()
        replies.write(text + "\n")
        replies.flush()


def _trace():
    """The current exception's traceback, from the first frame that is not the adapter's."""
    kind, err, tb = sys.exc_info()
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(kind, err, tb)).rstrip()


def _main():
    channel = _channel() if GOLEM_OP == "serve" else None
    try:
        module = _load()
    except BaseException as err:
        _fail("the module could not be loaded: %s: %s" % (type(err).__name__, err))
    tools = _tools(module)
    if channel is not None:
        _serve(*channel, tools)
        return
    if GOLEM_OP == "describe":
        print(json.dumps({"tools": [t[0] for t in tools.values()]}))
        return
    try:
        print(_answer(tools, GOLEM_OP, GOLEM_TOOL, json.loads(GOLEM_ARGS)))
    except _Refused as err:
        _fail(str(err))


_main()
