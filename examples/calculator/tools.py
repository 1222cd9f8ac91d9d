"""Custom tools for the calculator example.

Top-level functions are tools: the docstring's first paragraph is the description and the
type hints are the input schema. A function's own approval policy is its
`<name>_needs_approval`: a bool, or a function of the arguments (asked before each call).
`evaluate` is a tool object with its own dynamic approval. The module runs in the jail: it
sees /work (read-only) and nothing else of this machine, in one process that lives as long as
the session (module-level state persists between calls; it is restarted if it dies).
"""

import ast
import operator
from typing import Annotated, Literal, Optional


def calculate_fibonacci(n: Annotated[int, "Which Fibonacci number (0-based)"]) -> dict:
    """The nth Fibonacci number."""
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return {"n": n, "fibonacci": a}


def word_count(
    path: Annotated[str, "A file in the jail, such as /work/poem.txt"],
    unit: Literal["words", "lines", "chars"] = "words",
) -> str:
    """Counts the words, lines or characters of a file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    counts = {"words": len(text.split()), "lines": text.count("\n"), "chars": len(text)}
    return f"{counts[unit]} {unit} in {path}"


def stats(values: list[float], label: Optional[str] = None) -> dict:
    """Mean, minimum and maximum of some numbers, as a table."""
    mean = sum(values) / len(values) if values else 0.0
    return {
        "kind": "table",
        "data": {
            "columns": [{"key": "statistic"}, {"key": "value"}],
            "rows": [
                {"statistic": name, "value": value}
                for name, value in [("count", len(values)), ("mean", mean),
                                    ("min", min(values, default=0)),
                                    ("max", max(values, default=0))]
            ],
        },
        "summary": f"{label or 'values'}: mean {mean:g}",
    }


# Its own policy beats the configured default (`ask`): many numbers ask first, a few do not.
def stats_needs_approval(args):
    return len(args.get("values", [])) > 1000


_OPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Pow: operator.pow, ast.USub: operator.neg,
}


def _eval(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.operand))
    raise ValueError("only numbers and + - * / ** are allowed")


evaluate = {
    "name": "evaluate",
    "description": "Evaluates an arithmetic expression such as (2 + 3) * 4.",
    "input_schema": {
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
    "execute": lambda args: str(_eval(ast.parse(args["expression"], mode="eval").body)),
    # Its own policy beats the configured default: long expressions ask first.
    "needs_approval": lambda args: len(args["expression"]) > 40,
}
