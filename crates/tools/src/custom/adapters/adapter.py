# Golem Forge's adapter for Python tool modules. The binary prepends the request
# (GOLEM_MODULE_PATH, GOLEM_MODULE_SOURCE, GOLEM_OP, GOLEM_TOOL, GOLEM_ARGS) and runs this
# script in the jail. It loads the user's module from its source and answers one request:
#   describe     -> {"tools": [{name, description, inputSchema, needsApproval?, manualExecution?}
#                   or {name, error}]}
#   call NAME    -> a tool result: {"kind": ..., "data": ...}
#   policy NAME  -> true or false (the tool's dynamic needs_approval)
# Errors go to stderr with exit 1.
import inspect
import json
import sys
import types
import typing


def _fail(message):
    sys.stderr.write(message + "\n")
    sys.exit(1)


def _load():
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
            found[attr] = (entry, value, None, True)
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


def _main():
    try:
        module = _load()
    except BaseException as err:
        _fail("the module could not be loaded: %s: %s" % (type(err).__name__, err))
    tools = _tools(module)
    if GOLEM_OP == "describe":
        print(json.dumps({"tools": [t[0] for t in tools.values()]}))
        return
    if GOLEM_TOOL not in tools:
        _fail("the module has no tool `%s`" % GOLEM_TOOL)
    entry, execute, policy, keywords = tools[GOLEM_TOOL]
    args = json.loads(GOLEM_ARGS)
    if GOLEM_OP == "policy":
        answer = policy(args) if callable(policy) else bool(policy)
        print(json.dumps(bool(answer)))
        return
    if "error" in entry:
        _fail(entry["error"])
    if keywords:
        value = execute(**args)
    else:
        value = execute(args)
    if inspect.isawaitable(value):
        import asyncio

        value = asyncio.run(value)
    try:
        print(json.dumps(_result(value)))
    except (TypeError, ValueError) as err:
        _fail("the result is not JSON: %s" % err)


_main()
