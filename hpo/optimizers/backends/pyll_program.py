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
proposals over whole runs). A node that returns a graph has it evaluated by ``rec_eval`` at that
point, as ``rec_eval`` itself does; TPE's ``randint_via_categorical``, which returns the graph of
one ``categorical`` call, is that call. A graph with a lazy
``switch`` node is not compiled: :func:`compile_graph` returns ``None`` and the caller keeps
``rec_eval`` (no TPE graph of our spaces has one).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

_NOT_YET = object()  # the value of a node the program has not reached


class Program:
    """One pyll graph as the list of its calls in ``rec_eval``'s order (see the module).

    Every node has a slot in a list of values, its literals' filled in once; a call reads its
    inputs from their slots and writes its value to its own, so a run hashes no graph node and
    builds no dictionary of them (the memo ``rec_eval`` would fill)."""

    def __init__(self, top: Any, literals: dict[Any, Any], calls: list[tuple]) -> None:
        slots: dict[Any, int] = {node: i for i, node in enumerate(literals)}
        for node, _, positional, named in calls:  # inputs: literals, bound nodes, earlier calls
            for a in positional:
                slots.setdefault(a, len(slots))
            for _, a in named:
                slots.setdefault(a, len(slots))
            slots.setdefault(node, len(slots))
        slots.setdefault(top, len(slots))
        self._slots = slots
        self._values = [*literals.values()] + [_NOT_YET] * (len(slots) - len(literals))
        self._calls = [
            (
                slots[node],
                function,
                tuple(slots[a] for a in positional),
                tuple((k, slots[a]) for k, a in named),
            )
            for node, function, positional, named in calls
        ]
        self._top = slots[top]

    def __call__(self, given: Mapping[Any, Any]) -> Any:
        """The value of the graph's top node with ``given`` bound to their nodes."""
        from hyperopt.pyll import Apply

        values = self._values.copy()
        for node, value in given.items():
            if node in self._slots:
                values[self._slots[node]] = value
        for out, function, positional, named in self._calls:
            if named:
                value = function(
                    *[values[i] for i in positional], **{name: values[i] for name, i in named}
                )
            else:
                value = function(*[values[i] for i in positional])
            if isinstance(value, Apply):
                value = _evaluate_returned_graph(value, _Memo(self._slots, values))
            values[out] = value
        return values[self._top]


class _Memo(Mapping):
    """The memo ``rec_eval`` would have at a point of a program's run (every node with a value
    so far), read from the program's slots without copying them."""

    def __init__(self, slots: dict[Any, int], values: list[Any]) -> None:
        self._slots, self._values = slots, values

    def __getitem__(self, node: Any) -> Any:
        value = self._values[self._slots[node]] if node in self._slots else _NOT_YET
        if value is _NOT_YET:
            raise KeyError(node)
        return value

    def __iter__(self) -> Iterator[Any]:
        return (node for node in self._slots if node in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


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


def _randint_via_categorical(p: Any, rng: Any = None, size: Any = ()) -> Any:
    """hyperopt's ``randint_via_categorical`` returns the graph ``categorical(p, rng, size)`` of
    its arguments, which ``rec_eval`` then evaluates: the same call, without building the graph
    (about a tenth of TPE's time on seed 004's CASH tree)."""
    from hyperopt.pyll import scope

    return scope._impls["categorical"](p, rng, size)


_CALLED_DIRECTLY = {"randint_via_categorical": _randint_via_categorical}


def compile_graph(
    expr: Any, given: Iterable[Any], replacements: Mapping[str, Callable] | None = None
) -> Program | None:
    """``expr``'s program with the nodes of ``given`` bound at each call, or ``None`` when the
    graph has a node ``rec_eval`` evaluates lazily (``switch``). ``replacements``: functions
    called instead of the pyll functions of those names, which must return what they return."""
    from hyperopt.pyll import Literal, as_apply, dfs, scope

    top = as_apply(expr)
    inputs: dict[Any, Any] = {}
    nodes: list[Any] = []
    dfs(top, nodes, seqset=inputs)
    if any(node.name == "switch" for node in nodes):
        return None
    called = {**_CALLED_DIRECTLY, **(replacements or {})}
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
            function = called.get(node.name) or scope._impls[node.name]
            calls.append((node, function, tuple(node.pos_args), tuple(node.named_args)))
            done.add(node)
    return Program(top, literals, calls)
