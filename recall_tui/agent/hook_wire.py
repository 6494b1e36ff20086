"""The warm hook's whole path to the service, in one module that imports nothing: the
service's wire format (one JSON line each way on a Unix socket), finding its socket, one
request, and `hook session-start | prompt-submit` answered from it (`try_service`).

Claude Code starts a fresh process for every prompt, and beyond Python's own start what that
process imports is most of its cost. This module uses only what a `python -S` start has
loaded already (`sys`, `posix`, `time`) plus json's C scanner and encoder (`_json`) and the
socket's C core (`_socket`): not `os` (with `stat`, `posixpath` and `_collections_abc` ~3 ms of
CPU a prompt), not `json` (its decoder imports `re`, `enum`, `functools`), not `socket` (its
enums and `selectors`), `typing` or `pathlib`; and no module of the package, so the hook's
launcher (recall_tui/launcher.py) loads this file by itself, without running the package's
`__init__` modules (which import `os`). Reached by a normal import too
(`recall_tui.agent.client` and `recall_tui.cli.hook_fast` re-export it), it is the same code.

What needs more is imported only where it is needed: `os` for a relative vault path or a
socket path too long for a Unix socket (then the socket lives under the temp folder, named by a
hash of the resolved vault path), `json` for what the C codec leaves to it, the package's
`safe_print` for a warning. Everything else (`--no-serve`, another option, no service, a failing
one) goes to the full command (recall_tui/cli/hook.py), which takes the stdin already read and
the service's answer or failure from here (`take_stdin`, `ask_service`) instead of reading or
asking again.
"""

import posix
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (quoted: `from __future__` is a module to import too)
    from typing import Any, NoReturn

#: How long a hook waits for the service's answer before it recalls in its own process:
#: well inside Claude Code's 30 s hook timeout, so a hung service (stopped, swapping,
#: deadlocked) costs a prompt this long plus an in-process recall, never the whole timeout.
#: `RECALL_TUI_SERVICE_TIMEOUT` (seconds) overrides it.
HOOK_SERVICE_TIMEOUT_S = 4.0
#: After the service failed to answer in time, hooks recall in their own process for this
#: long without asking it (a hung service costs one prompt the wait, not every prompt).
UNRESPONSIVE_SKIP_S = 60.0
_MAX_SOCK = 100

HOOK_EVENTS = ("session-start", "prompt-submit")
DEFAULT_SOURCES = "startup,clear,compact"
EMBEDDERS = ("auto", "local", "ollama", "none")
BUDGET_MS = {"session-start": 500.0, "prompt-submit": 300.0}
EVENTS = {"session-start": "SessionStart", "prompt-submit": "UserPromptSubmit"}
PAYLOAD_KEYS = ("session_id", "transcript_path", "cwd", "hook_event_name", "source", "prompt")

#: The options the fast path reads (each with its value's type); anything else goes to argparse.
_VALUED = {"--vault": str, "--preset": str, "--k": int, "--embedder": str, "--sources": str,
           "--repeat-window": int, "--budget-ms": float}
_FLAGS = ("--transparency",)
_S_IFMT, _S_IFDIR, _S_IFSOCK = 0o170000, 0o040000, 0o140000

#: What this process already did before handing over: the stdin it read, and the service's
#: answer (a dict) or failure (ServiceUnavailable), or None when it did not ask.
_taken: "tuple[str, dict[str, Any] | BaseException | None] | None" = None
#: When `try_service` started (the hook's budget counts from there, a wait for the service too).
_started: "float | None" = None


class ServiceUnavailable(RuntimeError):
    """No service answered (not running, starting, refused, or it failed)."""


# --- the JSON codec --------------------------------------------------------------------------

def dumps(obj: "Any") -> str:
    """`json.dumps(obj)` (ASCII, its separators) for what requests hold (dicts with string
    keys, lists, strings, numbers, booleans, None), without importing `json`. Anything else
    is `json.dumps`'s (tests/test_hook_fast.py compares the two)."""
    parts: list[str] = []
    try:
        from _json import encode_basestring_ascii as enc

        if _encode(obj, parts, enc):
            return "".join(parts)
    except ImportError:  # a Python without the C accelerator
        pass
    import json

    return json.dumps(obj)


def _encode(o: "Any", out: list[str], enc: "Any") -> bool:
    """Append `o`'s JSON text to `out` as `json.dumps` writes it; False for what it leaves
    to `json.dumps` (another type, a non-string key, a float that is not finite)."""
    t = type(o)
    if t is str:
        out.append(enc(o))
    elif o is None or o is True or o is False:
        out.append("null" if o is None else "true" if o else "false")
    elif t is int:
        out.append(int.__repr__(o))
    elif t is float:
        if o != o or o in (float("inf"), float("-inf")):
            return False
        out.append(float.__repr__(o))
    elif t is list or t is tuple:
        out.append("[")
        for i, v in enumerate(o):
            if i:
                out.append(", ")
            if not _encode(v, out, enc):
                return False
        out.append("]")
    elif t is dict:
        out.append("{")
        for i, (k, v) in enumerate(o.items()):
            if type(k) is not str:
                return False
            out.append(", " + enc(k) + ": " if i else enc(k) + ": ")
            if not _encode(v, out, enc):
                return False
        out.append("}")
    else:
        return False
    return True


class _Context:
    """What `_json.make_scanner` reads: `json.JSONDecoder()`'s settings."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


def loads(text: "str | bytes | bytearray") -> "Any":
    """`json.loads(text)`, by the C scanner `json` itself uses, without importing `json`
    (see `dumps`); whatever it does not take plainly (bytes not UTF-8, a BOM, extra data,
    bad JSON) is `json.loads`'s, so the value and the error are json's own."""
    try:
        from _json import make_scanner

        s = text if isinstance(text, str) else bytes(text).decode("utf-8")
        start = len(s) - len(s.lstrip(" \t\n\r"))
        context: Any = _Context  # (typeshed types the argument as a scanner, not its settings)
        obj, end = make_scanner(context)(s, start)
        if not s[end:].strip(" \t\n\r"):
            return obj
    except Exception:  # json.loads below gives the value, or json's own error
        pass
    import json

    return json.loads(text)


# --- files and environment without `os` ------------------------------------------------------

def _fspath(p: "Any") -> str:
    """A path argument as a string (str, bytes or os.PathLike, as `os.fspath`)."""
    if isinstance(p, str):
        return p
    import os

    return os.fsdecode(os.fspath(p))


def getenv(name: str) -> "str | None":
    """`os.environ.get(name)`: from `os.environ` once `os` is loaded (it may have been changed
    there), else from the process's environment as `posix` read it at start."""
    os_mod = sys.modules.get("os")
    if os_mod is not None:
        return os_mod.environ.get(name)
    raw = posix.environ.get(name.encode())
    return None if raw is None else raw.decode(sys.getfilesystemencoding(), "surrogateescape")


def _resolved_recall_file(root: "Any", name: str) -> str:
    """`ROOT/.recall/NAME`, the root resolved (as `Path.resolve` does), as a string."""
    import os

    return os.path.join(os.path.realpath(root), ".recall", name)


def _recall_file(root: "Any", name: str) -> str:
    """`ROOT/.recall/NAME` for a stat or an open: the kernel follows the links of an absolute
    root as `realpath` would, so only a relative one is resolved here."""
    r = _fspath(root)
    if r.startswith("/"):
        return r.rstrip("/") + "/.recall/" + name
    return _resolved_recall_file(r, name)


def socket_file(root: "Any") -> str:
    """Where the service of the vault `root` listens (see `recall_tui.agent.client`): its
    `.recall/serve.sock`, or a file under the temp folder when that path is too long."""
    p = _resolved_recall_file(root, "serve.sock")
    if len(p.encode(sys.getfilesystemencoding(), "surrogateescape")) <= _MAX_SOCK:
        return p
    import hashlib
    import os
    import tempfile

    name = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:24]
    return os.path.join(tempfile.gettempdir(), f"recall-tui-{os.getuid()}", f"{name}.sock")


def _find_socket(root: "Any") -> "tuple[str, Any]":
    """The service's socket path and its `lstat`: first `ROOT/.recall/serve.sock` as given
    (an absolute root whose path fits a Unix socket: no `os`, no resolving), else
    `socket_file`'s (the resolved root, or the temp folder). ServiceUnavailable when none."""
    first = _recall_file(root, "serve.sock") if _fspath(root).startswith("/") else ""
    if first and len(first.encode(sys.getfilesystemencoding(), "surrogateescape")) <= _MAX_SOCK:
        try:
            st = posix.lstat(first)
            if st.st_mode & _S_IFMT == _S_IFSOCK:
                return first, st
        except OSError:
            pass
    path = socket_file(root)
    try:
        return path, posix.lstat(path)
    except OSError:
        raise ServiceUnavailable("not running") from None


# --- one request -----------------------------------------------------------------------------

def request(root: "Any", req: "dict[str, Any]", *, timeout: float = 30.0) -> "dict[str, Any]":
    """Send one request and return the answer; ServiceUnavailable when no service answers.
    A socket another user owns (or a file that is not a socket) is refused."""
    import _socket  # the C module behind `socket`, whose enums and selectors cost a prompt ~3 ms

    path, st = _find_socket(root)
    if st.st_mode & _S_IFMT != _S_IFSOCK or st.st_uid != posix.getuid():
        raise ServiceUnavailable(f"{path}: not a socket of this user; ignored")
    line = dumps(req).encode() + b"\n"  # ASCII (a lone surrogate stays escaped); made before
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)  # connecting: the service's thread
    # waits for it from the moment it accepts
    s.settimeout(timeout)
    try:
        for attempt in range(50):  # a full listen backlog answers EAGAIN: try again shortly
            try:
                s.connect(path)
                break
            except BlockingIOError:
                if attempt == 49:
                    raise
                time.sleep(0.02)
        s.sendall(line)
        buf = bytearray()
        while not buf.endswith(b"\n"):
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
    except TimeoutError:
        raise ServiceUnavailable(f"{path}: no answer within {timeout:g} s") from None
    except OSError as exc:
        raise ServiceUnavailable(f"{path}: {exc.strerror or exc}") from None
    finally:
        s.close()
    try:
        ans = loads(buf)
    except ValueError:
        raise ServiceUnavailable("the service closed the connection without an answer") from None
    if not isinstance(ans, dict):
        raise ServiceUnavailable("the service's answer is not a JSON object")
    return ans


def hook_timeout() -> float:
    """The hook's wait for the service (`HOOK_SERVICE_TIMEOUT_S`, or the environment's)."""
    try:
        t = float(getenv("RECALL_TUI_SERVICE_TIMEOUT") or HOOK_SERVICE_TIMEOUT_S)
    except ValueError:
        t = HOOK_SERVICE_TIMEOUT_S
    return t if t > 0 else HOOK_SERVICE_TIMEOUT_S


def recently_unresponsive(root: "Any") -> bool:
    """Whether the service failed to answer within the last `UNRESPONSIVE_SKIP_S`."""
    try:
        return time.time() - posix.stat(_recall_file(root, "serve.unresponsive")).st_mtime < UNRESPONSIVE_SKIP_S
    except OSError:
        return False


# --- the hook's fast path --------------------------------------------------------------------

def _options(words: list[str]) -> "dict[str, Any] | None":
    """`EVENT [--option value | --option=value | --transparency]...` as {option: value}; None
    for anything argparse should judge (another option, an abbreviation, a value that is
    missing, looks like an option, or is invalid)."""
    got: dict[str, Any] = {"event": words[0]}
    i = 1
    while i < len(words):
        name, eq, value = words[i].partition("=")
        if name in _FLAGS and not eq:
            got[name] = True
            i += 1
            continue
        kind = _VALUED.get(name)
        if kind is None:
            return None
        if not eq:
            if i + 1 >= len(words) or words[i + 1].startswith("-"):
                return None
            value = words[i + 1]
        i += 1 if eq else 2
        try:
            got[name] = kind(value)
        except ValueError:
            return None
    if got.get("--k", 1) < 1 or got.get("--embedder", "auto") not in EMBEDDERS:
        return None
    return got


def hook_options(event: str, preset: "str | None", embedder: "str | None", k: "int | None",
                 sources: "str | None", transparency: bool,
                 repeat_window: "int | None") -> "dict[str, Any]":
    """The `options` of a hook request (`recall_tui.agent.hooks.HookOptions.from_dict`)."""
    return {"event": event, "preset": preset, "embedder": embedder, "k": k,
            "sources": [s.strip() for s in (sources or DEFAULT_SOURCES).split(",") if s.strip()],
            "transparency": transparency, "repeat_window": repeat_window}


def read_stdin() -> str:
    try:
        return sys.stdin.read() if sys.stdin is not None and not sys.stdin.isatty() else ""
    except (OSError, ValueError):
        return ""


def _no_lone_surrogate(text: str) -> str:
    """A lone surrogate (JSON allows "\\ud800") cannot be encoded as UTF-8: it would fail the
    socket request and the log line. It becomes U+FFFD; pairs were joined by json.loads."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def payload(text: str) -> "dict[str, str]":
    """Claude Code's payload, the keys the hook reads (strings; missing ones empty)."""
    try:
        obj = loads(text) if text.strip() else {}
    except ValueError:
        obj = {}
    obj = obj if isinstance(obj, dict) else {}
    return {k: _no_lone_surrogate(str(obj.get(k) or "")) for k in PAYLOAD_KEYS}


def _warn(message: str) -> None:
    try:
        from recall_tui.vault.literal import safe_print
    except ImportError:  # started by a launcher path `fast_path` could not place: put it there
        sys.path.insert(0, package_home())
        from recall_tui.vault.literal import safe_print
    safe_print(message, file=sys.stderr)


def _is_dir(path: str) -> bool:
    try:
        return posix.stat(path).st_mode & _S_IFMT == _S_IFDIR
    except (OSError, ValueError):
        return False


def try_service(words: list[str]) -> "int | None":
    """Answer the hook `words` (`EVENT [options]`) from the warm service: print its output and
    return 0; None to let the full command run (see the module docstring)."""
    global _taken, _started
    t0 = _started = time.perf_counter()
    o = _options(words)
    root = (o or {}).get("--vault") or getenv("RECALL_TUI_VAULT")
    if o is None or not root or not _is_dir(root) or recently_unresponsive(root):
        return None
    event = o["event"]
    text = read_stdin()
    _taken = (text, None)  # from here on, the full command gets the stdin read
    opts = hook_options(event, o.get("--preset"), o.get("--embedder"), o.get("--k"),
                        o.get("--sources"), bool(o.get("--transparency")), o.get("--repeat-window"))
    req = {"op": "hook", "options": opts, "payload": payload(text)}
    try:
        ans = request(root, req, timeout=hook_timeout())
    except ServiceUnavailable as exc:
        _taken = (text, exc)
        return None
    except Exception:  # anything unforeseen: the full command copes (a hook never fails)
        return None
    out = ans.get("text")
    if not ans.get("ok") or not isinstance(out, str):  # an error, or a service without "text"
        _taken = (text, ans)
        return None
    warning = ans.get("warning") if o.get("--preset") is None else ""
    if warning:
        _warn(f"recall-tui hook {event}: {warning}")
    sys.stdout.write(out + "\n")  # json_text of the output, made by the service
    sys.stdout.flush()
    budget = o.get("--budget-ms", BUDGET_MS[event])
    elapsed = (time.perf_counter() - t0) * 1000
    if elapsed > budget:
        _warn(f"recall-tui hook {event}: over the {budget:.0f} ms budget ({elapsed:.0f} ms); "
              "results are complete")
    return 0


def started(default: float) -> float:
    """When the hook started: `try_service`'s start, else `default`."""
    return _started if _started is not None else default


def take_stdin() -> str:
    """The hook's stdin: what the fast path read, else read now."""
    return _taken[0] if _taken is not None else read_stdin()


def ask_service(root: "Any", req: "dict[str, Any]") -> "dict[str, Any]":
    """The service's answer to the hook request `req` (ServiceUnavailable when none): the one
    the fast path already got, if it asked (a second wait for a hung service would double a
    prompt's delay)."""
    global _taken
    got = _taken[1] if _taken is not None else None
    _taken = None
    if isinstance(got, BaseException):
        raise got
    if got is not None:
        return got
    return request(root, req, timeout=hook_timeout())


# --- the launcher's part (recall_tui/launcher.py: a hook's process without `site`) ----------

_site_done = False
_home: "str | None" = None


def fast_path(argv: list[str], launcher: str) -> "int | None":
    """The hook fast path when ARGV is `hook session-start | prompt-submit ...`: its exit code
    when the warm service answered, else None (the full command takes over). `launcher`: the
    launcher's file, whose folder (the package) Python put first on `sys.path`; its parent
    takes that place meanwhile (for a warning's import)."""
    if not (len(argv) > 1 and argv[0] == "hook" and argv[1] in HOOK_EVENTS):
        return None
    here = launcher.rpartition("/")[0]
    first = sys.path[0] if sys.path else None
    if here and first == here:
        sys.path[0] = here.rpartition("/")[0] or "/"
    try:
        code = try_service(argv[1:])
    except BrokenPipeError:
        return 0
    if code is None and first is not None:
        sys.path[0] = first  # as Python put it: `prepare_full_start` decides
    return code


def exit_now(code: int) -> "NoReturn":
    """Leave at once once the fast path answered: its output flushed, nothing else to finish
    (no thread, no open file, no `atexit`), so the interpreter's teardown (~3 ms of CPU under
    `-S`, as much as the rest of the hook's own work) is skipped."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    posix._exit(code)


def package_home(launcher: "str | None" = None) -> str:
    """The folder holding the package (site-packages, or the checkout of an editable
    install), from the launcher's file or this one's."""
    import os

    if launcher:
        return os.path.dirname(os.path.dirname(os.path.realpath(launcher)))
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def prepare_full_start(launcher: str) -> None:
    """Before the full command: the folder holding the package first on `sys.path`, in place
    of the launcher's own folder (the package itself, which Python put there and which would
    shadow nothing useful)."""
    import os

    global _home
    top = _home = package_home(launcher)
    if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.join(top, "recall_tui"):
        sys.path[0] = top
    elif not sys.path or sys.path[0] != top:
        sys.path.insert(0, top)


def enable_site() -> None:
    """Run `site` as a normal start would have (once; nothing when Python ran it). The folder
    holding the package comes off `sys.path` first: the modules imported from there stay
    (`recall_tui.cli`, and through the package's own path the rest), everything else
    resolves as in a normal start (in a normal install `site` adds the same folder back in its
    own place, with its `.pth` files)."""
    global _site_done
    if _site_done or not sys.flags.no_site:
        return
    _site_done = True
    if sys.path and sys.path[0] == (_home or package_home()):
        del sys.path[0]
    import site

    site.main()
