"""hyperopt's pyll graphs evaluated as a straight-line program, in ``rec_eval``'s own order.

hyperopt 0.3.0 evaluates a graph (TPE's posterior, the prior sampler of ``rand.suggest``) with
``pyll.rec_eval``, an interpreter that re-discovers the graph's order on every call: a
depth-first walk of every node, a stack of nodes waiting on their inputs, and a garbage
collector that checks every input's clients after each node. On seed 004's CASH tree the
posterior has 11,644 nodes and that bookkeeping is about 80 % of TPE's time, while the graph and
its order never change between proposals (only the values bound to its placeholders do).

:class:`Program` runs that bookkeeping once, without calling any node, and records the order in
which ``rec_eval`` would call the nodes; each later call binds the placeholders and calls the
nodes in that order. The same functions are called with the same inputs in the same order, so
the random draws and every value are those of ``rec_eval`` (``tests/test_tpe.py`` compares
proposals over whole runs). A node that returns a graph (TPE's ``randint_via_categorical``) has it
evaluated by ``rec_eval`` at that point, as ``rec_eval`` itself does. A graph with a lazy
``switch`` node is not compiled: :func:`compile_graph` returns ``None`` and the caller keeps
``rec_eval`` (no TPE graph of our spaces has one).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any


class Program:
    """One pyll graph as the list of its calls in ``rec_eval``'s order (see the module)."""

    def __init__(self, top: Any, literals: dict[Any, Any], calls: list[tuple]) -> None:
        self.top = top
        self.literals = literals  # node -> its constant
        self.calls = calls  # (node, function, positional input nodes, named input nodes)

    def __call__(self, given: Mapping[Any, Any]) -> Any:
        """The value of the graph's top node with ``given`` bound to their nodes."""
        from hyperopt.pyll import Apply

        memo = dict(self.literals)
        memo.update(given)
        for node, function, positional, named in self.calls:
            value = function(*[memo[a] for a in positional], **{k: memo[v] for k, v in named})
            if isinstance(value, Apply):
                value = _evaluate_returned_graph(value, memo)
            memo[node] = value
        return memo[self.top]


def _evaluate_returned_graph(graph: Any, memo: Mapping[Any, Any]) -> Any:
    """A graph a node returned, evaluated as ``rec_eval`` does (it recurses with its memo):
    TPE's ``randint_via_categorical`` returns ``categorical`` of its arguments. Only the memo's
    entries for the graph's own nodes are passed (``rec_eval`` would copy all 11,644). A graph of
    one call on constants (``categorical``'s) is that call, as ``rec_eval`` would make it."""
    from hyperopt.pyll import Literal, dfs, scope
    from hyperopt.pyll.base import rec_eval

    if graph.name != "switch" and all(
        isinstance(a, Literal) and a not in memo for a in graph.inputs()
    ):
        return scope._impls[graph.name](
            *[a.obj for a in graph.pos_args], **{k: v.obj for k, v in graph.named_args}
        )
    nodes: list[Any] = []
    dfs(graph, nodes, seqset={})
    return rec_eval(graph, memo={node: memo[node] for node in nodes if node in memo})


def compile_graph(expr: Any, given: Iterable[Any]) -> Program | None:
    """``expr``'s program with the nodes of ``given`` bound at each call, or ``None`` when the
    graph has a node ``rec_eval`` evaluates lazily (``switch``)."""
    from hyperopt.pyll import Literal, as_apply, dfs, scope

    top = as_apply(expr)
    inputs: dict[Any, Any] = {}
    nodes: list[Any] = []
    dfs(top, nodes, seqset=inputs)
    if any(node.name == "switch" for node in nodes):
        return None
    done = set(given)
    literals: dict[Any, Any] = {}
    calls: list[tuple] = []
    todo = deque([top])  # rec_eval's loop (hyperopt 0.3.0, pyll/base.py), without the calls
    while todo:
        node = todo.pop()
        if node in done:
            continue
        if isinstance(node, Literal):
            literals[node] = node.obj
            done.add(node)
            continue
        waiting_on = [v for v in inputs[node] if v not in done]
        if waiting_on:
            todo.append(node)
            todo.extend(waiting_on)
        else:
            function = scope._impls[node.name]
            calls.append((node, function, tuple(node.pos_args), tuple(node.named_args)))
            done.add(node)
    return Program(top, literals, calls)
