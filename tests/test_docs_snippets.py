"""Every fenced code block of README.md and docs/**/*.md runs (issue 48): no transcript in the documentation goes stale.

- `python` blocks are executed, the blocks of one page in order in one fresh namespace, in a temporary folder;
- `console`/`bash` blocks (and `text` blocks with `$ ` lines) are transcripts: each `$ verify ...` line (or
  `verify ...` in a block without `$`) runs through the command line in a temporary folder, its exit code must be the
  one shown (`# exit N`; 0 where none is shown), and the output shown under it must match what it prints (`...` alone
  on a line: any lines; `...` inside a line: any text; no output shown: not compared);
- an HTML comment just above a block changes how it runs, visibly: `<!-- snippet: file NAME -->` writes the block to
  NAME in the page's folders (not run by itself), `<!-- snippet: run with ARGS -->` appends ARGS to each command,
  `<!-- snippet: needs FEATURE -->` and `<!-- snippet: skip REASON -->` report the block as skipped with the reason;
- blocks of other languages (toml, json) are data.

Each command and each page's Python runs in a process forked from one warm interpreter per test worker that has
imported verify (the command line's `main`, as the `verify` script calls it): a fresh process each, without paying
SymPy's and the catalog's import ~20 times over (docs/reference/architecture.md, "The documentation").
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)[^\n]*$")
DIRECTIVE = re.compile(r"^<!--\s*snippet:\s*(.*?)\s*-->$")
COMMENT = re.compile(r"^<!--.*-->$")
EXIT = re.compile(r"\s*#\s*exit\s+(\d+)\s*$")
TRANSCRIPT_LANGS = {"console", "bash", "sh", "shell", "text"}
TIMEOUT_S = 300

SERVER = r'''
import atexit, json, os, signal, sys, time, traceback

import verify.api, verify.catalog, verify.checker, verify.cli, verify.families, verify.testing.falsify  # warm
from verify.cli import main


def child(request):
    os.chdir(request["cwd"])
    os.environ.update(request.get("env", {}))
    out = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    sys.path.insert(0, request["cwd"])
    code = 0
    try:
        if "argv" in request:
            sys.argv = ["verify", *request["argv"]]
            code = main()
        else:
            scope = {"__name__": "__main__"}
            for number, (line, source) in enumerate(request["python"]):
                try:
                    exec(compile(source, f"{request['page']}:{line}", "exec"), scope)
                except BaseException:
                    traceback.print_exc()
                    print(f"SNIPPET FAILED: the python block at line {line}", flush=True)
                    code = 1
                    break
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        traceback.print_exc()
        code = 99
    try:
        atexit._run_exitfuncs()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


for text in sys.stdin:
    request = json.loads(text)
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        child(request)
    end = time.monotonic() + request["timeout"]
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)
            done, status, usage = os.wait4(pid, 0)
            status = None
            break
        time.sleep(0.02)
    code = None if status is None else os.waitstatus_to_exitcode(status)
    print(json.dumps({"rc": code, "cpu_s": usage.ru_utime + usage.ru_stime}), flush=True)
'''


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    directives: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def directive(self, name: str) -> str | None:
        for d in self.directives:
            if d == name or d.startswith(name + " "):
                return d[len(name):].strip()
        return None

    @property
    def skip_reason(self) -> str | None:
        needs = self.directive("needs")
        if needs is not None:
            return f"pending: needs {needs}"
        skip = self.directive("skip")
        return f"skipped: {skip}" if skip is not None else None

    @property
    def kind(self) -> str:
        if self.directive("file") is not None:
            return "file"
        if self.lang in ("python", "py", "python3"):
            return "python"
        if self.lang in TRANSCRIPT_LANGS and (self.lang != "text" or any(
                ln.startswith("$ ") for ln in self.text.splitlines())):
            return "transcript"
        return "data"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown page, with the `snippet:` directives of the comment lines just above each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i].strip())
        if not fence:
            i += 1
            continue
        ticks, lang, start = fence.group(1), fence.group(2).lower(), i
        j = i + 1
        while j < len(lines) and lines[j].strip() != ticks:
            j += 1
        directives, k = [], start - 1
        while k >= 0 and COMMENT.match(lines[k].strip()):
            d = DIRECTIVE.match(lines[k].strip())
            if d:
                directives.insert(0, d.group(1))
            k -= 1
        indent = len(lines[start]) - len(lines[start].lstrip())
        body = "\n".join(ln[indent:] for ln in lines[start + 1:j])
        out.append(Block(page, start + 1, lang, body + "\n", tuple(directives)))
        i = j + 1
    return out


ALL = [b for page in PAGES for b in blocks(page)]


@dataclass
class Command:
    argv: list[str]
    env: dict[str, str]
    shown: list[str] = field(default_factory=list)
    exit_code: int = 0


def _words(text: str, where: str) -> tuple[dict[str, str], list[str]]:
    words = shlex.split(text, comments=True)
    env = {}
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    if not words or words[0] != "verify":
        raise AssertionError(f"{where}: cannot run {text.strip()!r}: only `verify` commands run; mark the block "
                             "<!-- snippet: skip REASON --> if it cannot")
    return env, words[1:]


def commands(block: Block) -> list[Command]:
    """The commands of a transcript, each with the output shown under it and its exit code."""
    lines = block.text.rstrip("\n").splitlines()
    prompt = any(ln.startswith("$ ") for ln in lines)
    out: list[Command] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        is_command = line.startswith("$ ") if prompt else bool(line.strip()) and not line.lstrip().startswith("#")
        if not is_command:
            if not out:
                if line.strip():
                    raise AssertionError(f"{block.where}: output before the first command: {line!r}")
            else:
                found = EXIT.search(line)
                if found:
                    out[-1].exit_code = int(found.group(1))
                    line = line[:found.start()]
                    if not line.strip():
                        i += 1
                        continue
                out[-1].shown.append(line.rstrip())
            i += 1
            continue
        text = line[2:] if prompt else line
        while text.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text.rstrip()[:-1] + " " + lines[i].strip()
        code = 0
        found = EXIT.search(text)
        if found:
            code, text = int(found.group(1)), text[:found.start()]
        env, argv = _words(text, block.where)
        extra = block.directive("run with")
        out.append(Command(argv + (shlex.split(extra) if extra else []), env, exit_code=code))
        i += 1
    for c in out:
        while c.shown and not c.shown[-1].strip():
            c.shown.pop()
    return out


def matches(shown: list[str], printed: str) -> bool:
    """Whether the printed output is what a transcript shows: line by line, trailing spaces ignored, `...` alone on
    a line standing for any number of lines and `...` inside a line for any text."""
    parts = []
    for line in shown:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(p) for p in line.rstrip().split("...")) + r"\n")
    text = "\n".join(ln.rstrip() for ln in printed.rstrip("\n").splitlines()) + "\n"
    return re.fullmatch("".join(parts), text) is not None


class Runner:
    """One warm interpreter that forks a process for each request."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
               "COLUMNS": "120", "NO_COLOR": "1"}
        self.proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env, cwd=ROOT)

    def run(self, request: dict, output: Path) -> tuple[int | None, str]:
        request = {**request, "output": str(output), "timeout": TIMEOUT_S}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        assert reply, "the snippet runner's interpreter ended (it could not import verify?)"
        answer = json.loads(reply)
        print(f"{request.get('argv') or request.get('page')}: {answer['cpu_s']:.1f} s of CPU")  # shown with -rP
        return answer["rc"], output.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


@pytest.fixture(scope="module")
def runner():
    r = Runner()
    yield r
    r.close()


def _folder(tmp_path: Path, page: Path) -> Path:
    """A fresh folder with the page's `file` blocks written in it."""
    for b in blocks(page):
        name = b.directive("file")
        if name is not None:
            (tmp_path / name).write_text(b.text, encoding="utf-8")
    return tmp_path


def _id(b: Block) -> str:
    return f"{b.where}-{b.kind}"


PYTHON_PAGES = sorted({b.page for b in ALL if b.kind == "python" and not b.skip_reason})
TRANSCRIPTS = [b for b in ALL if b.kind == "transcript" or (b.kind == "python" and b.skip_reason)]


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_python_blocks_of_a_page_run_in_order(page, runner, tmp_path):
    code = [(b.line, b.text) for b in blocks(page) if b.kind == "python" and not b.skip_reason]
    rc, printed = runner.run({"python": code, "page": str(page.relative_to(ROOT)), "cwd": str(_folder(tmp_path, page))},
                             tmp_path / "python.out")
    assert rc == 0, f"{page.relative_to(ROOT)}: exit {rc}\n{printed}"


@pytest.mark.parametrize("block", TRANSCRIPTS, ids=_id)
def test_a_transcript_prints_what_it_shows(block, runner, tmp_path):
    if block.skip_reason:
        pytest.skip(f"{block.where}: {block.skip_reason}")
    folder = _folder(tmp_path, block.page)
    for n, cmd in enumerate(commands(block)):
        rc, printed = runner.run({"argv": cmd.argv, "env": cmd.env, "cwd": str(folder)}, tmp_path / f"out{n}.txt")
        shown = "verify " + shlex.join(cmd.argv)
        assert rc == cmd.exit_code, (f"{block.where}: `{shown}` exited {rc}, the transcript shows "
                                     f"{cmd.exit_code}\n{printed}")
        if cmd.shown:
            assert matches(cmd.shown, printed), (f"{block.where}: `{shown}` printed\n{printed}\nwhich is not what the "
                                                 "transcript shows:\n" + "\n".join(cmd.shown))


def test_every_block_is_run_or_marked():
    """A block is Python, a transcript, a file, marked skipped with its reason, or data in a data language."""
    for b in ALL:
        assert b.kind != "data" or b.lang in ("toml", "json", "yaml", "ini", "text", "html", "latex", "tex"), b.where
        for d in b.directives:
            assert d.split(" ")[0] in ("file", "run", "needs", "skip") and (not d.startswith("run") or d.startswith(
                "run with ")), f"{b.where}: unknown snippet directive {d!r}"
        if b.kind == "transcript" and not b.skip_reason:
            assert commands(b), f"{b.where}: a transcript with no command"


# the matcher itself, on texts written here: a transcript that no longer matches must fail
@pytest.mark.parametrize(("shown", "printed", "ok"), [
    (["a = 1", "b = 2"], "a = 1\nb = 2\n", True),
    (["a = 1", "b = 2"], "a = 1\nb = 3\n", False),  # a stale number
    (["a = 1"], "a = 1\nb = 2\n", False),  # a line the transcript does not show
    (["a = 1", "..."], "a = 1\nb = 2\nc = 3\n", True),
    (["...", "c = 3"], "a = 1\nb = 2\nc = 3\n", True),
    (["...", "c = 4"], "a = 1\nb = 2\nc = 3\n", False),
    (["at {..., 'x': 2.0}"], "at {'a': 1.0, 'x': 2.0}\n", True),
    (["at {..., 'x': 2.0}"], "at {'a': 1.0, 'x': 3.0}\n", False),
    (["ratio = 3.648   margin"], "ratio = 3.648   margin   \n", True),
])
def test_the_matcher_refuses_stale_output(shown, printed, ok):
    assert matches(shown, printed) is ok


def test_a_transcript_is_parsed_into_commands_output_and_exit_codes():
    block = Block(ROOT / "README.md", 1, "console", "$ verify check x \\\n    -p a=1  # a comment\nout 1\n# exit 2\n"
                  "\n$ verify list\n", ("run with --only p",))
    first, second = commands(block)
    assert first.argv == ["check", "x", "-p", "a=1", "--only", "p"] and first.shown == ["out 1"]
    assert first.exit_code == 2 and second.argv == ["list", "--only", "p"] and second.shown == []
    with pytest.raises(AssertionError, match="only `verify` commands run"):
        commands(Block(ROOT / "README.md", 1, "bash", "pip install x\n", ()))
