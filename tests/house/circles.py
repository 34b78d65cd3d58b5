"""Circles in a directed graph: the house's include graphs (C++ modules and files, the page's ES modules)."""


def circles(graph):
    """Each circle of graph ({node: iterable of nodes it points at}) as a sorted list of its nodes, the
    circles sorted: the strongly connected components of more than one node, and a node pointing at itself.

    Tarjan's algorithm, iterative so that a long chain of includes does not reach Python's recursion limit.
    """
    nodes = set(graph) | {target for targets in graph.values() for target in targets}
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(sorted(component))
    return sorted(found)
