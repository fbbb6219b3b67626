"""What a submission tried that an honest one never does, counted by the grader from what it sees itself.

Two sources, neither of them the submission's word: its code, read here (`scan`: the syntax tree of
every cell, never run here), and the messages its process sent the grader that no honest process
sends (counted by `proxy.Student` as `FORGED`). A count is a signal for the instructor, shown in the
class report and grades.csv; it never changes a score (the checks alone do that).
"""

from __future__ import annotations

import ast
import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

IMPORTS = "imports"
PATCHES = "patches"
WRITES = "writes"
PROCESSES = "processes"
FAKE_RESULTS = "fake results"
HIDDEN_CODE = "hidden code"
FORGED = "forged messages"
# kind -> what it counts, in the instructor's words (the order of the class report's columns)
KINDS = {
    IMPORTS: "imports of the reference, the graders or the quiz key",
    PATCHES: "torch, builtins or other modules patched",
    WRITES: "files written outside its own folder",
    PROCESSES: "processes, signals, sockets or C calls",
    FAKE_RESULTS: "fake results: pass messages or report files written",
    HIDDEN_CODE: "code run from strings (exec, eval, compile)",
    FORGED: "forged messages to the grader (seen while grading)",
}
MAX_EXAMPLES = 8

SECRET_TEXT = re.compile(r"attention_ref|quiz_key|autograder[./\\]graders|autograder\.isolation")
SECRET_MODULES = ("attention_ref", "autograder")
IMPORTERS = {"import_module", "__import__", "find_spec", "spec_from_file_location", "SourceFileLoader", "reload"}
# modules whose attributes an honest submission reads but never replaces (settings under torch.backends are
# meant to be set: `torch.backends.cudnn.deterministic = True`)
PATCHABLE_ROOTS = {"torch", "builtins", "numpy", "math", "time", "timeit", "statistics", "random", "sys", "os",
                   "importlib", "inspect", "gc", "functools", "operator", "selfcheck", "quizcheck", "json", "io",
                   "pathlib", "shutil"}
SETTINGS = ("torch.backends.",)
PROCESS_MODULES = {"subprocess", "multiprocessing", "ctypes", "socket", "signal", "pty", "cffi", "mmap", "resource"}
PROCESS_CALLS = {"fork", "forkpty", "kill", "killpg", "system", "popen", "spawnv", "spawnl", "posix_spawn",
                 "execv", "execve", "execvp", "execl", "execlp", "pidfd_open", "setsid", "setpgid", "tgkill"}
WRITE_MODES = set("wax+")
FILE_CALLS = {"remove", "unlink", "rename", "replace", "rmdir", "removedirs", "mkdir", "makedirs", "chmod", "symlink",
              "link", "truncate", "rmtree", "copy", "copyfile", "copytree", "move", "save", "savez", "savetxt"}
FILE_MODULES = ("os.", "shutil.", "torch.", "numpy.")
PATH_CALLS = {"write_text", "write_bytes", "unlink", "touch", "mkdir", "rmdir", "symlink_to", "hardlink_to", "rename",
              "replace", "chmod"}
REPORT_NAMES = re.compile(r"(^|/)(results\.json|grades\.csv|feedback\.html|class_report\.html|grading\.json)$")
PASS_TEXT = re.compile(r"\ball (tests|checks)( have)? passed\b|\bfull marks\b|\b\d+\s*/\s*\d+ (tests|checks) passed\b",
                       re.IGNORECASE)
RUNNERS = {"exec", "eval", "compile"}
MODULE_NAME = re.compile(r"[\w.]{1,80}")
SUBTREE_NODES = 200  # a path is built in a few nodes; a chain of 10,000 `.touch()` calls must not cost 10,000 each


@dataclass
class Tampering:
    """Counts per kind (KINDS), and a few examples of what was seen, in the grader's words."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)

    def add(self, kind: str, example: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(example)

    def merged(self, other: "Tampering") -> "Tampering":
        counts = Counter(self.counts) + Counter(other.counts)
        return Tampering(dict(counts), (self.examples + other.examples)[:MAX_EXAMPLES])

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> str:
        """One cell of grades.csv: "patches 2; forged messages 1", or "" for none."""
        return "; ".join(f"{kind} {self.counts[kind]}" for kind in KINDS if self.counts.get(kind))

    def to_json(self) -> dict:
        return {"counts": dict(self.counts), "examples": list(self.examples)}

    @classmethod
    def from_json(cls, data: object) -> "Tampering":
        if type(data) is not dict:
            return cls()
        counts = data.get("counts")
        counts = counts if type(counts) is dict else {}
        return cls({k: int(v) for k, v in counts.items() if k in KINDS and type(v) is int and v > 0},
                   [str(e)[:300] for e in data.get("examples", [])][:MAX_EXAMPLES] if type(data.get("examples")) is list else [])


def scan(cells: dict[str, list[tuple[str, str]]]) -> Tampering:
    """What the code of every notebook's cells tries (a cell that does not parse adds nothing: loading
    it reports the error; one nested too deeply for `ast` to build counts as hidden code)."""
    found, seen = Tampering(), set()
    for notebook, notebook_cells in cells.items():
        modules: dict[str, str] = {}  # shared by a notebook's cells, which run in order in one namespace
        for cell, source in notebook_cells:
            if source in seen:  # a module answers both notebooks: its code is counted once
                continue
            seen.add(source)
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError, MemoryError):
                continue
            except RecursionError:  # the interpreter compiles what its ast module cannot give back as objects
                found.add(HIDDEN_CODE, f"{notebook} {cell}: code nested too deeply to be read by the grader")
                continue
            _Scanner(found, f"{notebook} {cell}", modules).walk(tree)
    return found


class _Scanner:
    """One cell's syntax tree, walked once, in source order, with a stack of its own: a student sets the
    depth of the tree (a sum of 600 terms nests 600 deep), never the depth of the grader's recursion."""

    def __init__(self, found: Tampering, where: str, modules: dict[str, str]):
        self.found, self.where = found, where
        self.modules = modules  # a name bound by an import -> the dotted name it stands for

    def walk(self, tree: ast.AST) -> None:
        stack = [tree]
        while stack:
            node = stack.pop()
            visit = getattr(self, f"visit_{type(node).__name__}", None)
            if visit is not None:
                visit(node)
            stack.extend(reversed(list(ast.iter_child_nodes(node))))

    def _add(self, kind: str, node: ast.AST, what: str) -> None:
        # in the grader's words: the names of modules and the grader's own lists, never the submission's text
        self.found.add(kind, f"{self.where}, line {getattr(node, 'lineno', '?')}: {what}"[:300])

    # ---- imports

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._imported(node, alias.name)
            self.modules[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        self._imported(node, module)
        for alias in node.names:
            self._imported(node, f"{module}.{alias.name}")
            self.modules[alias.asname or alias.name] = f"{module}.{alias.name}" if module else alias.name

    def _imported(self, node: ast.AST, module: str) -> None:
        top = module.split(".")[0]
        if top in SECRET_MODULES:
            self._add(IMPORTS, node, f"import of {module}")
        elif top in PROCESS_MODULES:
            self._add(PROCESSES, node, f"import of {module}")

    # ---- names that stand for modules

    def _dotted(self, node: ast.AST) -> str:
        """`torch.nn.functional.softmax` for an attribute chain rooted at a module this cell imported
        (or at builtins' own names), else ""."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            root = self.modules.get(node.id) or ("builtins" if node.id == "__builtins__" else
                                                 node.id if node.id in PATCHABLE_ROOTS else "")
            return ".".join([root, *reversed(parts)]) if root else ""
        return ""

    # ---- patches and writes

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._assigned(target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._assigned(node.target)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._assigned(target)

    def _assigned(self, target: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._assigned(element)
            return
        if isinstance(target, ast.Subscript):  # sys.modules[...] = ..., __builtins__["print"] = ...
            name = self._dotted(target.value)
            if name in ("sys.modules", "builtins", "builtins.__dict__") or name.endswith(".__dict__"):
                self._add(PATCHES, target, f"{name}[...] replaced")
            return
        if isinstance(target, ast.Attribute):
            name = self._dotted(target)
            if name and name.split(".")[0] in PATCHABLE_ROOTS and not name.startswith(SETTINGS):
                self._add(PATCHES, target, f"{name} replaced")

    def visit_Call(self, node: ast.Call) -> None:
        function = node.func
        name = self._dotted(function) if isinstance(function, (ast.Attribute, ast.Name)) else ""
        last = function.attr if isinstance(function, ast.Attribute) else function.id if isinstance(function, ast.Name) else ""
        arguments = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if last in ("setattr", "delattr") and node.args:
            owner = self._dotted(node.args[0])
            if owner and owner.split(".")[0] in PATCHABLE_ROOTS and not owner.startswith(SETTINGS):
                self._add(PATCHES, node, f"{last}({owner}, ...)")
        if last in IMPORTERS and any(a.split(".")[0] in SECRET_MODULES for a in arguments):
            module = next(a for a in arguments if a.split(".")[0] in SECRET_MODULES)
            named = MODULE_NAME.match(module)
            assert named is not None  # `module` starts with one of SECRET_MODULES, a name MODULE_NAME matches
            self._add(IMPORTS, node, f"{last}() of {named.group()}")
        if last in RUNNERS and isinstance(function, ast.Name) and node.args and not isinstance(node.args[0], ast.Constant):
            self._add(HIDDEN_CODE, node, f"{last}() of a string built at run time")
        if name.startswith("os.") and last in PROCESS_CALLS or name.startswith(("signal.", "subprocess.", "ctypes.")):
            self._add(PROCESSES, node, f"{name}()")
        self._writes(node, last, name, arguments)

    def _writes(self, node: ast.Call, last: str, name: str, arguments: list[str]) -> None:
        mode = next((a.value for a in node.args[1:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)), "")
        mode = next((k.value.value for k in node.keywords if k.arg == "mode" and isinstance(k.value, ast.Constant)
                     and isinstance(k.value.value, str)), mode)
        if last == "open" and name in ("", "builtins.open", "io.open") and WRITE_MODES & set(mode):
            first = node.args[0] if node.args else None
            paths = [first.value] if isinstance(first, ast.Constant) and isinstance(first.value, str) else []
        elif last in FILE_CALLS and name.startswith(FILE_MODULES):
            paths = arguments
        elif last in PATH_CALLS and isinstance(node.func, ast.Attribute) and self._builds_a_path(node.func.value):
            paths = self._paths_of(node.func)
        else:
            return
        for path in paths:
            report = REPORT_NAMES.search(path.replace("\\", "/"))
            if report:
                self._add(FAKE_RESULTS, node, f"writes a file named {report.group(2)}")
            elif path.startswith(("/", "~")):
                self._add(WRITES, node, "writes at an absolute path")
            elif ".." in path.replace("\\", "/").split("/"):
                self._add(WRITES, node, "writes above its own folder ('..')")

    def _builds_a_path(self, node: ast.AST) -> bool:
        """Whether `node` is built from a call of pathlib's Path: `Path("/x") / "y"`."""
        return any(isinstance(n, ast.Call) and self._dotted(n.func).startswith("pathlib.") for n in _within(node))

    @staticmethod
    def _paths_of(function: ast.Attribute) -> list[str]:
        """The constant path in `Path("...") / "..."` before `.write_text(...)`."""
        found = [n.value for n in _within(function.value) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        return ["/".join(found)] if found else []

    # ---- text

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            if SECRET_TEXT.search(node.value):
                self._add(IMPORTS, node, "names the reference, the graders or the quiz key")
            elif PASS_TEXT.search(node.value):
                self._add(FAKE_RESULTS, node, "a message that claims the checks passed")


def _within(node: ast.AST) -> Iterator[ast.AST]:
    """The first SUBTREE_NODES nodes of `node`'s subtree."""
    return itertools.islice(ast.walk(node), SUBTREE_NODES)
