"""``heavy.in_child`` keeps a bench's cost off the server: the function's module is imported in the child
only (torch would hold the server's interpreter for seconds), and the child runs below the server in the
scheduler's order from its first instruction (its imports included), not only once it has started."""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))
from parts import heavy  # noqa: E402

PROBE = '''import os
AT_IMPORT = (os.getpid(), os.nice(0))  # this process and its niceness while the module is imported


def at_import():
    return AT_IMPORT
'''


def test_a_named_function_is_imported_in_the_child_only_and_below_the_server(tmp_path, monkeypatch):
    (tmp_path / "heavy_probe_module.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))  # the spawned child gets this process's sys.path
    pid, nice = heavy.in_child("heavy_probe_module:at_import")
    assert pid != os.getpid() and "heavy_probe_module" not in sys.modules
    assert nice == min(19, os.nice(0) + heavy.CHILD_NICE)


def test_a_name_that_does_not_import_is_one_line():
    with pytest.raises(RuntimeError) as e:
        heavy.in_child("specsim_no_such_module:f")
    assert str(e.value) == "ModuleNotFoundError: No module named 'specsim_no_such_module'"


class NiceWhenUnpickled:
    """An argument that becomes, in the child, the child's niceness at the moment it is unpickled."""

    def __reduce__(self):
        return os.nice, (0,)


def test_the_call_reaches_the_child_only_once_it_is_below_the_server():
    assert heavy.in_child(abs, NiceWhenUnpickled()) == min(19, os.nice(0) + heavy.CHILD_NICE)


def test_every_heavy_call_of_the_app_names_its_function_so_the_server_never_imports_torch():
    """Each ``heavy.in_child`` call in app/ passes a "module:function" string: a function object would have
    been imported in the server (its module pulls in torch: seconds of every session's interpreter)."""
    import ast
    from pathlib import Path
    calls = []
    for path in (Path(__file__).resolve().parent.parent / "app").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "in_child":
                calls.append((path.name, node.args[0]))
    assert len(calls) >= 2  # the Trees scheme bench and the drafter gallery
    for name, first in calls:
        assert isinstance(first, ast.Constant) and isinstance(first.value, str) and ":" in first.value, name
