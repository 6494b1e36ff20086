"""filter: drop what must never be recalled, and apply the per-call filters.

Eligibility (`filter_reason`) is judged once per memory and recall, when a stage first needs
it: the short-circuit counts only eligible results, and the filter stage drops the fused
candidates that are not eligible, each with its reason.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from recall_tui.engine.config_sections import FilterConfig
from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Filters, Out, RecallState
from recall_tui.engine.trace import Candidate
from recall_tui.vault.model import Chain, Memory, Role, Vault

if TYPE_CHECKING:
    from recall_tui.engine.state import Filters


@dataclass(frozen=True)
class CallFilter(FilterConfig):
    """A configuration's filter plus the ids this one call excludes, as (id, why) pairs."""

    exclude: tuple[tuple[str, str], ...] = ()


def effective_filter(cfg: FilterConfig, call: Filters) -> FilterConfig:
    """The configuration's filter overridden by the call's `Filters` (inline filters included)."""
    fc = _overridden(cfg, call)
    ids, whys = tuple(call.exclude), tuple(call.exclude_why)
    if not ids:
        return fc
    pairs = tuple((mid, whys[i] if i < len(whys) and whys[i] else "excluded by the caller")
                  for i, mid in enumerate(ids))
    return CallFilter(**{f.name: getattr(fc, f.name) for f in dataclasses.fields(fc)}, exclude=pairs)


def _overridden(cfg: FilterConfig, call: Filters) -> FilterConfig:
    changes: dict[str, Any] = {}
    for name in ("types", "scopes", "tags"):
        v = getattr(call, name)
        if v:
            changes[name] = tuple(v)
    for name in ("session_id", "source"):
        v = getattr(call, name)
        if v:
            changes[name] = v
    for name in ("include_superseded", "include_inbox", "include_expired"):
        v = getattr(call, name)
        if v is not None:
            changes[name] = bool(v)
    return dataclasses.replace(cfg, **changes) if changes else cfg


def _iso(dt: datetime) -> str:
    return dt.isoformat().replace("+00:00", "Z")


def current_as_of(vault: Vault, chain: Chain | None, t: datetime) -> str | None:
    """The member of a supersession chain that was current at t (the newest one ingested by
    then), or None when there is no chain or none was ingested by t."""
    if chain is None:
        return None
    current = None
    for cid in chain.ids:
        m = vault.get(cid)
        if m is not None and m.ingested_at <= t:
            current = cid
    return current


def filter_reason(m: Memory, vault: Vault, fc: FilterConfig, now: datetime,
                  as_of: datetime | None, chains: dict[str, Chain] | None = None) -> str | None:
    """Why `m` may not be recalled under these filters, or None when it may. `chains`
    (id -> Chain) saves a scan of every chain per memory on large vaults."""
    if isinstance(fc, CallFilter):
        for mid, why in fc.exclude:
            if mid == m.id:
                return f"excluded by the caller: {why}"
    if m.role is Role.ARCHIVE:
        return "in _archive/ (never recalled)"
    if m.role is Role.INBOX and not fc.include_inbox:
        return "in _inbox/ (include_inbox is off)"
    if m.status == "archived" and not fc.include_archived:
        return "status archived"
    t = as_of if as_of is not None else now
    if as_of is not None or fc.bitemporal:
        if m.ingested_at > t:
            return f"not ingested as of {_iso(t)} (ingested_at {_iso(m.ingested_at)})"
        if m.valid_from is not None and m.valid_from > t:
            return f"not valid as of {_iso(t)} (valid_from {_iso(m.valid_from)})"
        if m.valid_to is not None and m.valid_to <= t:
            return f"not valid as of {_iso(t)} (valid_to {_iso(m.valid_to)})"
    if not fc.include_superseded:
        chain = chains.get(m.id) if chains is not None else vault.chain_of(m.id)
        if as_of is not None and chain is not None:
            cur = current_as_of(vault, chain, as_of)
            if cur is not None and cur != m.id:
                return f"superseded as of {_iso(as_of)} by {cur}"
        elif m.status == "superseded":
            by = m.superseded_by or (chain.head if chain else None)
            return f"superseded by {by}" if by else "status superseded"
        elif chain is not None and chain.head != m.id:
            return f"superseded by {chain.head} (not the head of its chain)"
    if m.expires is not None and m.expires < t and not fc.include_expired:
        return f"expired {_iso(m.expires)}"
    if fc.types and m.type not in fc.types:
        return f"type {m.type} not in the type filter ({', '.join(fc.types)})"
    if fc.scopes and m.scope not in fc.scopes:
        return f"scope {m.scope} not in the scope filter ({', '.join(fc.scopes)})"
    if fc.tags and not set(fc.tags) & set(m.tags):
        return f"no tag of the tag filter ({', '.join(fc.tags)})"
    if fc.session_id and m.session_id != fc.session_id:
        return f"session {m.session_id or '(none)'} is not {fc.session_id}"
    if fc.source and m.source != fc.source:
        return f"source {m.source or '(none)'} is not {fc.source}"
    return None


def chain_map(vault: Vault) -> dict[str, Chain]:
    """id -> its supersession Chain."""
    return {mid: c for c in vault.chains for mid in c.ids}


class Eligibility(dict[str, str | None]):
    """id -> filter reason (None: may be recalled), computed on first access, so a recall
    judges only the memories some channel found (or that `why` asks about)."""

    def __init__(self, vault: Vault, fc: FilterConfig, now: datetime, as_of: datetime | None,
                 chains: dict[str, Chain] | None = None):
        super().__init__()
        self._args = (vault, fc, now, as_of, chain_map(vault) if chains is None else chains)

    def __missing__(self, memory_id: str) -> str | None:
        vault, fc, now, as_of, chains = self._args
        m = vault.get(memory_id)
        reason = "unknown id" if m is None else filter_reason(m, vault, fc, now, as_of, chains)
        self[memory_id] = reason
        return reason

    def get(self, memory_id: str, default: object = None) -> str | None:
        # dict.get would bypass __missing__; the default is never used
        return self[memory_id]


def eligibility(vault: Vault, fc: FilterConfig, now: datetime, as_of: datetime | None,
                chains: dict[str, Chain] | None = None) -> Eligibility:
    """Lazy filter_reason for the memories of the vault."""
    return Eligibility(vault, fc, now, as_of, chains)


def run(engine: StageContext, st: RecallState) -> Out:
    """Drop the ineligible candidates from the current ranking."""
    out = Out()
    kept = []
    for mid in st.order:
        reason = st.eligible.get(mid, "unknown id")
        if reason is None:
            kept.append(mid)
        else:
            out.dropped.append(st.drop(mid, "filter", reason))
    st.order = kept
    for rank, mid in enumerate(kept, 1):  # the kept ones are the stage's candidates (its n)
        out.candidates.append(Candidate(mid, st.score.get(mid, 0.0), rank, "eligible"))
    out.info.append(("kept", str(len(kept))))
    out.info.append(("dropped", str(len(out.dropped))))
    return out
