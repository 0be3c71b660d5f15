"""AST mutation testing for the parse-run aggregate, run against the shipped state machines.

mutmut 3 copies the source tree and cannot follow our editable mapping (ragline.domain ->
/work/main/domain), so this script does the small part we need itself: it builds a real
`ragline/` package tree in a temp dir, applies ONE mutant at a time to a target module, and
runs the checks with PYTHONPATH pointing at that tree (a regular `ragline/__init__.py` makes
the temp tree win over the editable finder).

    .venv/bin/python mutation/run_mutants.py                     # state machines only
    .venv/bin/python mutation/run_mutants.py --driver pytest     # all of tests/domain
    .venv/bin/python mutation/run_mutants.py --jobs 2 --json mutation/last_run.json
    .venv/bin/python mutation/run_mutants.py --named all --json mutation/named_run.json

Named mutants (`--named`, see NAMED) are hand-written: one function's body replaced by a
leaky one, each with the test that must fail under it and the message it must fail with
(a failure for another reason does not count as a kill: "failed-otherwise").

Mutation operators: comparison flips (is/is not, ==/!=, in/not in, < <= > >=), and/or swap,
`not` removal, if-condition negation, enum member replacement (StageStatus.X -> next member,
etc.), +/- swap, integer +1, True/False swap, `return x` -> `return None`, and deletion of a
statement (assignment, call, raise, append) by replacing it with `pass`.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("domain", "application", "adapters", "bootstrap", "contracts")
DEFAULT_TARGETS = ("domain/parse_run/run.py", "domain/parse_run/retry.py")
ENUMS = {
    "StageStatus": ["PENDING", "PROCESSING", "SUCCESS", "FAILED"],
    "PipelineStatus": ["PENDING", "PROCESSING", "SUCCESS", "FAILED"],
    "FailurePoint": ["CLEANING", "CHUNKING", "TASK_VALIDATION", "RETRY_VALIDATION"],
    "FailureCode": ["INTERRUPTED_TASK", "RETRY_VALIDATION_FAILED", "INTERNAL_UNKNOWN_ERROR"],
    "Stage": [
        "CLEANING",
        "CHUNKING",
        "VECTORIZING",
        "PRETOKENIZE",
        "KEYWORD_INDEXING",
        "SPARSE_VECTORIZING",
    ],
    "RetryRefusal": ["PREVIOUS_NOT_FOUND", "PREVIOUS_NOT_FAILED", "ALREADY_SUPERSEDED"],
}
COMPARE_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
}
MACHINE_DRIVER = """
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from ragline.testing.parse_run import ChunkStatusMachine, ParseRunMachine
import ragline.domain.parse_run as pkg
assert pkg.__file__.startswith({tree!r}), pkg.__file__
ci = settings(max_examples={examples}, derandomize=True, deadline=None, database=None,
              stateful_step_count=30, print_blob=False,
              phases=(Phase.explicit, Phase.generate))  # no shrinking: a kill is a kill
run_state_machine_as_test(ParseRunMachine, settings=ci)
run_state_machine_as_test(ChunkStatusMachine, settings=settings(ci, stateful_step_count=20))
"""


@dataclass
class Mutant:
    target: str
    index: int
    line: int
    operator: str
    before: str
    after: str
    status: str = "pending"
    seconds: float = 0.0
    evidence: str = ""


@dataclass(frozen=True)
class NamedMutant:
    """A hand-written mutant: `function`'s body (its docstring kept) becomes `body`; `also`:
    more (target, function, body) changes made with it (a rule held in two places)."""

    name: str
    target: str
    function: str  # "Class.method" or "function"
    body: str
    tests: str  # the pytest node that must fail under it
    expect: str  # a regex the failure output must match (which property caught it)
    why: str
    also: tuple[tuple[str, str, str], ...] = ()


CAMPAIGN = "tests/tenancy/test_tenant_property.py::test_no_tenant_sees_or_touches_another"
NAMED = (
    NamedMutant(
        name="leaky-reference-check",
        target="application/access/references.py",
        function="ReferencePolicy._check_owned",
        body="return None",
        tests=CAMPAIGN,
        expect=r"Violation: (read|written|deleted|learned): ",
        why="every caller may name any bucket/key: a tenant's task, parse request or "
        "extract reads, writes and deletes another tenant's objects",
    ),
    NamedMutant(
        name="leaky-write-check",
        target="application/access/references.py",
        function="ReferencePolicy.check_write",
        body="self._check_not_reserved(field, bucket, key)",
        tests=CAMPAIGN,
        expect=r"Violation: (written|deleted): ",
        why="a Markdown target is checked only against the cache's area: a tenant's task "
        "overwrites another tenant's Markdown or source, or plants objects in its prefix",
    ),
    NamedMutant(
        name="delete-across-tenants",
        target="application/documents/use_cases.py",
        function="_markdown_written",
        body="""
query = RunQuery(user_id=None, dataset_id=scope.dataset_id, doc_id=scope.doc_id)
found = await uow.runs.list_page(query, limit=RUNS_READ)
return list(dict.fromkeys(
    run.markdown for run in found.runs
    if run.markdown is not None
    and run.identity.file_type.lower() not in MARKDOWN_PASSTHROUGH_TYPES
))
""",
        tests=CAMPAIGN,
        expect=r"Violation: deleted: ",
        why="a delete lists the Markdown to remove by dataset and doc id only, and keeps "
        "nothing another live document names: deleting a document removes every tenant's "
        "Markdown of that doc id",
        also=(
            (
                "adapters/persistence/sql/repositories/documents.py",
                "SqlDocumentRepository.objects_in_use",
                "return set()",
            ),
        ),
    ),
    NamedMutant(
        name="leaky-cache-read",
        target="application/access/parse_cache.py",
        function="visible_sha256s",
        body="return set(sha256s)",
        tests=CAMPAIGN,
        expect=r"Violation: (read|learned): ",
        why="the holder filter returns everything: a tenant sees every batch, its sha256 "
        "and its Markdown",
    ),
)


def _is_docstring(node: ast.AST, parent: ast.AST | None) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and isinstance(parent, ast.Module | ast.ClassDef | ast.FunctionDef)
    )


class _Sites(ast.NodeVisitor):
    """Collect (node path, operator, replacement builder) for every mutation site."""

    def __init__(self) -> None:
        self.sites: list[tuple[ast.AST, str, ast.AST]] = []
        self.parent: ast.AST | None = None

    def add(self, node: ast.AST, operator: str, replacement: ast.AST) -> None:
        self.sites.append((node, operator, replacement))

    def generic_visit(self, node: ast.AST) -> None:
        previous = self.parent
        self.parent = node
        for field, value in ast.iter_fields(node):
            if field in ("annotation", "returns", "decorator_list", "type_comment"):
                continue
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, ast.AST):
                    self.visit(item)
        self.parent = previous

    def visit_Import(self, node: ast.Import) -> None:
        return

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        return

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            swap = COMPARE_SWAP.get(type(op))
            if swap is not None:
                new = copy.deepcopy(node)
                new.ops[i] = swap()
                self.add(node, f"compare {type(op).__name__}->{swap.__name__}", new)
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        new = copy.deepcopy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self.add(node, "and/or swap", new)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self.add(node, "drop not", copy.deepcopy(node.operand))
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        new = copy.deepcopy(node)
        new.test = ast.UnaryOp(op=ast.Not(), operand=new.test)
        self.add(node, "negate if", new)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        new = copy.deepcopy(node)
        new.test = ast.UnaryOp(op=ast.Not(), operand=new.test)
        self.add(node, "negate conditional", new)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Add | ast.Sub):
            new = copy.deepcopy(node)
            new.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            self.add(node, "+/- swap", new)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.op, ast.Add | ast.Sub):
            new = copy.deepcopy(node)
            new.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            self.add(node, "+=/-= swap", new)
        self.add(node, "delete statement", ast.Pass())
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            self.add(node, "bool flip", ast.Constant(not value))
        elif isinstance(value, int):
            self.add(node, "int +1", ast.Constant(value + 1))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in ENUMS:
            members = ENUMS[node.value.id]
            if node.attr in members:
                other = members[(members.index(node.attr) + 1) % len(members)]
                new = ast.Attribute(value=ast.Name(node.value.id, ast.Load()), attr=other)
                self.add(node, f"enum {node.value.id}.{node.attr}->{other}", new)
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None
        ):
            self.add(node, "return None", ast.Return(ast.Constant(None)))
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if isinstance(self.parent, ast.FunctionDef):
            self.add(node, "delete statement", ast.Pass())
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if not _is_docstring(node, self.parent) and isinstance(node.value, ast.Call):
            self.add(node, "delete statement", ast.Pass())
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        self.add(node, "delete statement", ast.Pass())
        self.generic_visit(node)


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST) -> None:
        self.target, self.replacement = target, replacement

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return ast.copy_location(self.replacement, node)
        return super().visit(node)


def _record(
    target: str,
    index: int,
    node: ast.AST,
    operator: str,
    replacement: ast.AST,
    mutated_tree: ast.Module,
) -> tuple[Mutant, str]:
    ast.fix_missing_locations(mutated_tree)
    mutant = Mutant(
        target,
        index,
        getattr(node, "lineno", 0),
        operator,
        ast.unparse(node).splitlines()[0][:120],
        ast.unparse(replacement).splitlines()[0][:120],
    )
    return mutant, ast.unparse(mutated_tree)


def build_tree(root: Path) -> Path:
    """A real `ragline/` package tree (copies of the layers) under `root`."""
    package = root / "ragline"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""ragline (mutation tree)."""\n')
    for layer in LAYERS:
        shutil.copytree(ROOT / layer, package / layer, ignore=shutil.ignore_patterns("__pycache__"))
    return package


def run_checks(
    tree_root: Path,
    driver: str,
    tests: str,
    timeout: float,
    examples: int = 200,
    expect: str | None = None,
) -> tuple[str, float]:
    """'killed' if the checks fail, 'survived' if they pass, 'timeout' past `timeout`;
    with `expect`, a failure whose output does not match it is 'failed-otherwise'."""
    status, seconds, _ = run_checks_with_output(tree_root, driver, tests, timeout, examples, expect)
    return status, seconds


def run_checks_with_output(
    tree_root: Path,
    driver: str,
    tests: str,
    timeout: float,
    examples: int = 200,
    expect: str | None = None,
) -> tuple[str, float, str]:
    """run_checks, and the line of the output that shows why it failed ('' if none)."""
    env = dict(os.environ, PYTHONPATH=str(tree_root), PYTHONDONTWRITEBYTECODE="1")
    if driver == "machine":
        code = MACHINE_DRIVER.format(tree=str(tree_root), examples=examples)
        command = [sys.executable, "-c", code]
    else:
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", tests]
    started = time.monotonic()
    try:
        result = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - started, ""
    seconds = time.monotonic() - started
    if result.returncode == 0:
        return "survived", seconds, ""
    output = (result.stdout + result.stderr).decode("utf-8", "replace")
    if expect is None:
        return "killed", seconds, ""
    found = re.search(f"^E +.*(?:{expect}).*$", output, re.MULTILINE)
    if found is None:
        errors = [line for line in output.splitlines() if line.startswith("E ")]
        return "failed-otherwise", seconds, (errors[0] if errors else output[-300:]).strip()
    return "killed", seconds, found.group(0)[1:].strip()[:300]


def replace_body(source: str, function: str, body: str) -> tuple[str, int, str]:
    """`source` with `function`'s body (docstring kept) replaced; its line and first line."""
    tree = ast.parse(source)
    scope: list[ast.stmt] = tree.body
    node: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for part in function.split("."):
        node = None
        for item in scope:
            named = isinstance(item, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            if named and item.name == part:
                found = item
                break
        else:
            raise SystemExit(f"no {function}")
        scope = found.body
        if isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef):
            node = found
    if node is None:
        raise SystemExit(f"{function} is not a function")
    before = ast.unparse(node).splitlines()[0]
    kept = node.body[:1] if _is_docstring(node.body[0], node) else []
    node.body = kept + ast.parse(body).body
    ast.fix_missing_locations(tree)
    return ast.unparse(tree), node.lineno, before


def named_mutant(mutant: NamedMutant, index: int) -> tuple[Mutant, dict[str, str]]:
    """The record of `mutant` and the mutated source of each file it changes."""
    sources: dict[str, str] = {}
    first: tuple[int, str] | None = None
    for target, function, body in ((mutant.target, mutant.function, mutant.body), *mutant.also):
        source = sources.get(target) or (ROOT / target).read_text()
        try:
            sources[target], line, before = replace_body(source, function, body)
        except SystemExit as missing:
            raise SystemExit(f"{mutant.name}: {missing} in {target}") from None
        first = first or (line, before)
    assert first is not None
    record = Mutant(mutant.target, index, first[0], f"named {mutant.name}", first[1], mutant.body)
    return record, sources


def run_named(names: list[str], timeout: float, jobs: int, report: Path | None) -> int:
    """Each named mutant once, under its own test; every one must be killed as it expects."""
    chosen = [m for m in NAMED if "all" in names or m.name in names]
    unknown = set(names) - {m.name for m in NAMED} - {"all"}
    if unknown:
        print(f"unknown named mutants: {sorted(unknown)}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="ragline-named-mutants-"))
    for tests in dict.fromkeys(m.tests for m in chosen):  # each test must pass unmutated
        build_tree(work / "baseline")
        status, seconds = run_checks(work / "baseline", "pytest", tests, timeout)
        shutil.rmtree(work / "baseline", ignore_errors=True)
        if status != "survived":
            print(f"baseline {tests} fails ({status}); fix it first", file=sys.stderr)
            shutil.rmtree(work, ignore_errors=True)
            return 2
        print(f"baseline {tests} passes in {seconds:.0f} s")

    def one(pair: tuple[int, NamedMutant]) -> Mutant:
        index, spec = pair
        record, sources = named_mutant(spec, index)
        root = work / f"named_{index}"
        build_tree(root)
        for target, source in sources.items():
            (root / "ragline" / target).write_text(source)
        record.status, record.seconds, record.evidence = run_checks_with_output(
            root, "pytest", spec.tests, timeout, expect=spec.expect
        )
        shutil.rmtree(root, ignore_errors=True)
        print(f"{record.status:>16} {spec.name} ({record.seconds:.0f} s): {record.evidence}")
        return record

    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(one, enumerate(chosen)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    killed = sum(1 for m in results if m.status == "killed")
    print(f"\nnamed mutants killed as expected: {killed}/{len(results)}")
    if report:
        body = {
            "driver": "named",
            "mutants": len(results),
            "killed": killed,
            "results": [
                {**asdict(m), "name": spec.name, "tests": spec.tests, "why": spec.why}
                for m, spec in zip(results, chosen, strict=True)
            ],
        }
        report.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    return 0 if killed == len(results) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", action="append", help="module path (repeatable)")
    parser.add_argument("--driver", choices=["machine", "pytest"], default="machine")
    parser.add_argument("--tests", default="tests/domain", help="pytest path for --driver pytest")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--examples", type=int, default=200, help="max_examples per machine (CI uses 200)"
    )
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--limit", type=int, default=0, help="only the first N mutants")
    parser.add_argument("--json", type=Path, help="write results here")
    parser.add_argument(
        "--survivors-of", type=Path, help="rerun only the survivors listed in this JSON report"
    )
    parser.add_argument(
        "--named",
        action="append",
        help="run this hand-written mutant of NAMED under its own test (repeatable; 'all')",
    )
    args = parser.parse_args()
    if args.named:
        return run_named(args.named, args.timeout, args.jobs, args.json)
    targets = args.target or list(DEFAULT_TARGETS)

    work = Path(tempfile.mkdtemp(prefix="ragline-mutants-"))
    try:
        baseline_root = work / "baseline"
        build_tree(baseline_root)
        status, seconds = run_checks(
            baseline_root, args.driver, args.tests, args.timeout, args.examples
        )
        if status != "survived":
            print(f"baseline checks fail ({status}); fix them first", file=sys.stderr)
            return 2
        print(f"baseline passes in {seconds:.1f}s")

        jobs: list[tuple[Mutant, str]] = []
        for target in targets:
            jobs.extend(_all_mutants(target))
        if args.survivors_of:
            wanted = json.loads(args.survivors_of.read_text())["survivors"]
            keys = {(m["target"], m["index"]) for m in wanted}
            jobs = [job for job in jobs if (job[0].target, job[0].index) in keys]
        if args.limit:
            jobs = jobs[: args.limit]
        print(f"{len(jobs)} mutants")

        def one(job: tuple[Mutant, str]) -> Mutant:
            mutant, source = job
            root = work / f"m{mutant.target.replace('/', '_')}_{mutant.index}"
            build_tree(root)
            (root / "ragline" / mutant.target).write_text(source)
            mutant.status, mutant.seconds = run_checks(
                root, args.driver, args.tests, args.timeout, args.examples
            )
            shutil.rmtree(root, ignore_errors=True)
            mark = "." if mutant.status != "survived" else "S"
            where = f"{mutant.target}:{mutant.line}"
            print(f"{mark} {where} {mutant.operator}: {mutant.before}", flush=True)
            return mutant

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(one, jobs))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    killed = sum(1 for m in results if m.status in ("killed", "timeout"))
    score = killed / len(results) if results else 1.0
    survivors = [m for m in results if m.status == "survived"]
    print(f"\nkilled {killed}/{len(results)} = {score:.1%}")
    for m in survivors:
        print(f"SURVIVED {m.target}:{m.line} [{m.operator}] {m.before!r} -> {m.after!r}")
    if args.json:
        report = {
            "driver": args.driver,
            "examples": args.examples,
            "targets": targets,
            "mutants": len(results),
            "killed": killed,
            "score": round(score, 4),
            "survivors": [asdict(m) for m in survivors],
        }
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return 0


def _all_mutants(target: str) -> list[tuple[Mutant, str]]:
    """Mutants of one file, each mutated source produced from a fresh parse."""
    source = (ROOT / target).read_text()
    count = len(_sites(ast.parse(source)))
    out: list[tuple[Mutant, str]] = []
    for index in range(count):
        tree = ast.parse(source)
        node, operator, replacement = _sites(tree)[index]
        mutated = _Replace(node, replacement).visit(tree)
        out.append(_record(target, index, node, operator, replacement, mutated))
    return out


def _sites(tree: ast.Module) -> list[tuple[ast.AST, str, ast.AST]]:
    visitor = _Sites()
    visitor.visit(tree)
    return visitor.sites


if __name__ == "__main__":
    raise SystemExit(main())
