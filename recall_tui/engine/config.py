"""Every knob of the recall pipeline, as a tree of frozen dataclasses, and the presets.

A `Config` has one section per stage (pipeline.md). Presets are TOML files that override the
defaults below; `load_preset` looks in the package's `presets/`, then `<vault>/.recall/presets/`,
then `$XDG_CONFIG_HOME/recall-tui/presets/`. `knobs(config)` lists every leaf with its type,
value and documentation (the field's docstring), so a tuning pane needs no second list.
The sections themselves live in `config_sections.py`. Headless.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import inspect
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import tomllib

from recall_tui.engine.config_sections import (
    BoostsConfig,
    CacheConfig,
    ConsolidationConfig,
    EnrichConfig,
    FilterConfig,
    FloorConfig,
    FuseConfig,
    FuzzyConfig,
    GraphConfig,
    Hop2Config,
    HopsConfig,
    KeywordConfig,
    MMRConfig,
    ParseConfig,
    RerankConfig,
    ShortCircuitConfig,
    SignatureConfig,
    SpeakerConfig,
    TopicConfig,
    TrackingConfig,
    TurnsConfig,
    VectorConfig,
    WindowConfig,
)

PRESET_DIR = Path(__file__).resolve().parent.parent / "presets"


@dataclass(frozen=True)
class Config:
    """One complete pipeline configuration."""

    description: str = ""
    """What this configuration is (shown in preset lists)."""
    k: int = 5
    """Hits returned at most; recall never pads to k."""
    verbosity: str = "lean"
    """`lean` or `full` payloads."""
    parse: ParseConfig = field(default_factory=ParseConfig)
    """query.parse."""
    cache: CacheConfig = field(default_factory=CacheConfig)
    """cache."""
    keyword: KeywordConfig = field(default_factory=KeywordConfig)
    """keyword."""
    fuzzy: FuzzyConfig = field(default_factory=FuzzyConfig)
    """fuzzy."""
    vector: VectorConfig = field(default_factory=VectorConfig)
    """vector."""
    signature: SignatureConfig = field(default_factory=SignatureConfig)
    """signature."""
    topic: TopicConfig = field(default_factory=TopicConfig)
    """topic."""
    graph: GraphConfig = field(default_factory=GraphConfig)
    """graph."""
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig)
    """consolidation."""
    turns: TurnsConfig = field(default_factory=TurnsConfig)
    """turns."""
    fuse: FuseConfig = field(default_factory=FuseConfig)
    """fuse."""
    short_circuit: ShortCircuitConfig = field(default_factory=ShortCircuitConfig)
    """short-circuit."""
    speaker: SpeakerConfig = field(default_factory=SpeakerConfig)
    """speaker."""
    window: WindowConfig = field(default_factory=WindowConfig)
    """window."""
    hop2: Hop2Config = field(default_factory=Hop2Config)
    """hop2."""
    hops: HopsConfig = field(default_factory=HopsConfig)
    """hops."""
    filter: FilterConfig = field(default_factory=FilterConfig)
    """filter."""
    boosts: BoostsConfig = field(default_factory=BoostsConfig)
    """boosts."""
    rerank: RerankConfig = field(default_factory=RerankConfig)
    """rerank."""
    mmr: MMRConfig = field(default_factory=MMRConfig)
    """mmr."""
    floor: FloorConfig = field(default_factory=FloorConfig)
    """floor."""
    enrich: EnrichConfig = field(default_factory=EnrichConfig)
    """enrich."""
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    """recall tracking."""

    # --- (de)serialisation -------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (tuples as lists), the shape of a preset TOML."""
        plain: dict[str, Any] = _plain(self)
        return plain

    @staticmethod
    def from_dict(data: dict[str, Any], *, base: Config | None = None, source: str = "config") -> Config:
        """Overlay `data` on `base` (the built-in defaults when None). Unknown keys and wrong
        types raise ValueError naming `source` and the key."""
        config: Config = _overlay(base or Config(), data, source, "")
        return config

    @staticmethod
    def from_toml(text: str, *, base: Config | None = None, source: str = "config") -> Config:
        """Parse a preset TOML (keys as in `to_toml`) over `base`."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{source}: not valid TOML: {exc}") from exc
        data.pop("extends", None)
        return Config.from_dict(data, base=base, source=source)

    def to_toml(self) -> str:
        """The full configuration as TOML; `from_toml(to_toml())` gives back an equal Config."""
        return _to_toml(self.to_dict())

    def hash(self) -> str:
        """sha256 of the canonical JSON of `to_dict()` (key-sorted, compact)."""
        canon = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canon.encode()).hexdigest()

    def with_value(self, path: str, value: Any) -> Config:
        """A copy with one knob changed, e.g. `with_value("mmr.lam", 0.5)`."""
        parts = path.split(".")
        data: dict[str, Any] = {}
        cur = data
        for p in parts[:-1]:
            cur[p] = {}
            cur = cur[p]
        cur[parts[-1]] = value
        config: Config = _overlay(self, data, f"with_value({path!r})", "")
        return config

    def get(self, path: str) -> Any:
        """The value at a dotted path."""
        obj: Any = self
        for p in path.split("."):
            obj = obj[p] if isinstance(obj, dict) else getattr(obj, p)
        return obj


def _plain(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [_plain(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    return obj


def _coerce(tp: Any, value: Any, where: str) -> Any:
    """Check and convert one TOML value to the field's declared type."""
    t = str(tp)
    if t == "bool":
        if isinstance(value, bool):
            return value
    elif t == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif t == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif t == "str":
        if isinstance(value, str):
            return value
    elif t.startswith("tuple[str"):
        if isinstance(value, str):
            return (value,)
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return tuple(value)
    elif t.startswith("dict[str, list[int]]"):
        if isinstance(value, dict) and all(
            isinstance(v, (list, tuple)) and len(v) == 3 and all(isinstance(x, int) for x in v)
            for v in value.values()
        ):
            return {str(k): list(v) for k, v in value.items()}
        raise ValueError(f"{where}: expected a table of [aging, stale, expired] day counts")
    raise ValueError(f"{where}: expected {t}, got {type(value).__name__} {value!r}")


def _overlay(obj: Any, data: dict[str, Any], source: str, prefix: str) -> Any:
    if not isinstance(data, dict):
        raise ValueError(f"{source}: {prefix or 'top level'} must be a table")
    fields = {f.name: f for f in dataclasses.fields(obj)}
    changes: dict[str, Any] = {}
    for key, value in data.items():
        where = f"{source}: {prefix}{key}"
        if key not in fields:
            raise ValueError(f"{where}: unknown setting (known: {', '.join(fields)})")
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current):
            changes[key] = _overlay(current, value, source, f"{prefix}{key}.")
        elif isinstance(current, dict):
            merged = dict(current)
            merged.update(_coerce(fields[key].type, value, where))
            changes[key] = merged
        else:
            changes[key] = _coerce(fields[key].type, value, where)
    return dataclasses.replace(obj, **changes) if changes else obj


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r} as TOML")


def _to_toml(data: dict[str, Any], prefix: str = "") -> str:
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    out = "\n".join(lines)
    for key, value in tables:
        name = f"{prefix}{key}"
        body = _to_toml(value, name + ".")
        out += ("\n\n" if out else "") + f"[{name}]\n" + body
    return out.strip("\n") + "\n" if not prefix else out


# --- docs for knobs -----------------------------------------------------------------------


@cache
def _field_docs(cls: type) -> dict[str, str]:
    """Attribute docstrings of a dataclass (the string literal right after each field)."""
    try:
        tree = ast.parse(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for a, b in zip(body, body[1:], strict=False):
        if (
            isinstance(a, ast.AnnAssign)
            and isinstance(a.target, ast.Name)
            and isinstance(b, ast.Expr)
            and isinstance(b.value, ast.Constant)
            and isinstance(b.value.value, str)
        ):
            docs[a.target.id] = " ".join(b.value.value.split())
    return docs


def knobs(config: Config) -> Iterator[tuple[str, str, Any, str]]:
    """Every leaf setting as (dotted path, type name, value, documentation)."""

    def walk(obj: Any, prefix: str) -> Iterator[tuple[str, str, Any, str]]:
        docs = _field_docs(obj.__class__)
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            path = prefix + f.name
            if dataclasses.is_dataclass(value):
                yield from walk(value, path + ".")
            else:
                yield path, str(f.type), value, docs.get(f.name, "")

    yield from walk(config, "")


# --- presets ------------------------------------------------------------------------------


def preset_dirs(vault_root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Where presets are searched, in order: package, vault, user config."""
    dirs = [PRESET_DIR]
    if vault_root is not None:
        dirs.append(Path(vault_root) / ".recall" / "presets")
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    dirs.append(Path(xdg) / "recall-tui" / "presets")
    return dirs


def list_presets(vault_root: str | os.PathLike[str] | None = None) -> list[str]:
    """Names of every preset found (first occurrence wins), package presets first."""
    names: list[str] = []
    for d in preset_dirs(vault_root):
        if d.is_dir():
            for p in sorted(d.glob("*.toml")):
                if p.stem not in names:
                    names.append(p.stem)
    return names


def find_preset(name_or_path: str, vault_root: str | os.PathLike[str] | None = None) -> Path:
    """The TOML file of a preset name, or the path itself when it is a file."""
    p = Path(name_or_path)
    if p.suffix == ".toml" and p.is_file():
        return p
    for d in preset_dirs(vault_root):
        cand = d / f"{name_or_path}.toml"
        if cand.is_file():
            return cand
    known = ", ".join(list_presets(vault_root))
    raise ValueError(f"unknown preset {name_or_path!r} (known: {known})")


def load_preset(name_or_path: str, vault_root: str | os.PathLike[str] | None = None) -> Config:
    """Load a preset over the built-in defaults. A preset may say `extends = "name"` to start
    from another preset instead."""
    path = find_preset(name_or_path, vault_root)
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path.name}: not valid TOML: {exc}") from exc
    base = None
    parent = data.pop("extends", None)
    if parent:
        if parent == path.stem:
            raise ValueError(f"{path.name}: a preset cannot extend itself")
        base = load_preset(parent, vault_root)
    return Config.from_dict(data, base=base, source=path.name)
