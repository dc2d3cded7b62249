"""Write configuration of a tenant and of its memory types, and threshold precedence.

A tenant's configuration applies to every namespace (scope and owner) of the tenant. Stored in
the memory home (``write_config``) and changed only by an admin run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any, Mapping

from ..errors import InvalidInput
from ..graph.model import relation_name
from ..model import ON_EXPIRE
from .blacklist import Blacklist, compile_blacklist, require_safe

DEFAULT_CONFLICT_THRESHOLD = 0.85  # used when nothing more specific is configured or calibrated
DEFAULT_DUPLICATE_THRESHOLD = 0.95
DEFAULT_CHAR_LIMIT = 16_000
DEFAULT_BULK_CHECK_CAP = 2_000  # entries of a bulk_set judged against peers (import: all)


class Policy(str, Enum):
    NEWEST_WINS = "newest_wins"  # a templated substitution of a peer retires it (refines)
    AUTO_REINFORCE = "auto_reinforce"  # duplicates reinforce; substitutions are flagged, not retired
    MANUAL_REVIEW = "manual_review"  # as auto_reinforce: a person (or the resolver) decides
    APPEND_ONLY = "append_only"  # no peer check at all


@dataclass(frozen=True, slots=True)
class TypeConfig:
    """How one memory type is written."""

    memory_type: str
    retype_to: str | None = None  # write rows of this type as another type
    dedup_threshold: float | None = None  # the peer threshold for this type, before the tenant's
    retention_days: float | None = None
    on_expire: str = "tombstone"
    embedded: bool = True  # False: stored, never embedded, indexed or peer-checked
    key_identified: bool = False  # a decision: identified by its key, never refused by a pin


@dataclass(frozen=True, slots=True)
class TenantConfig:
    """How a tenant's rows are written."""

    policy: Policy = Policy.NEWEST_WINS
    conflict_threshold: float | None = None
    duplicate_threshold: float = DEFAULT_DUPLICATE_THRESHOLD
    char_limit: int = DEFAULT_CHAR_LIMIT
    retention_days: float | None = None
    sensitive_retention_days: float | None = None
    blacklist: tuple[str, ...] = ()  # RE2 patterns a value may not match (blacklist.py)
    bulk_check_cap: int = DEFAULT_BULK_CHECK_CAP
    single_valued: tuple[str, ...] = ()  # graph relations that keep one value current (lives_in, ...)
    daily_cost_cap_usd: float = 1.0  # model spend per namespace per day (all purposes)
    resolver_cap_share: float = 0.25  # of which the conflict resolver may spend this share
    resolver_retire_confidence: float = 0.98  # retire >= flag >= clear, or the setting is refused
    resolver_flag_confidence: float = 0.95
    resolver_clear_confidence: float = 0.90
    # recall/search abstain (low_calibrated_confidence) when the top hit's calibrated P(relevant)
    # is under this; None: the calibration's own threshold, 0: never
    abstain_below: float | None = None
    # The conflict threshold the recalibration worker measured on the tenant's own facts, and the
    # embedder it was measured under (docs/workers.md): the peer check's fallback after the
    # type's, the tenant's own ``conflict_threshold`` (a person's) and the embedder's declared one.
    calibrated_threshold: float | None = None
    calibrated_embedder: str | None = None
    # The blacklist compiled, once per configuration built (the session caches it per tenant).
    matcher: Blacklist = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "matcher", compile_blacklist(self.blacklist))

    def measured_threshold(self, embedder: str) -> float | None:
        """The recalibrated threshold, if it was measured under ``embedder`` (another model's
        cosines live in another band: its threshold would mislead)."""
        return self.calibrated_threshold if self.calibrated_embedder == embedder else None


# Types every tenant has unless it configures them otherwise.
BUILTIN_TYPES = {
    "episodic": TypeConfig("episodic", embedded=False),
    "profile": TypeConfig("profile", embedded=False),
    "decision": TypeConfig("decision", key_identified=True),
    "document": TypeConfig("document", embedded=False),  # a document's head row: its chunks are searched
    "transcript_chunk": TypeConfig("transcript_chunk", embedded=False),  # extraction's verbatim windows (lineage)
}


@dataclass(frozen=True, slots=True)
class WriteConfig:
    tenant: TenantConfig = field(default_factory=TenantConfig)
    types: Mapping[str, TypeConfig] = field(default_factory=lambda: dict(BUILTIN_TYPES))

    def type(self, memory_type: str) -> TypeConfig:
        return self.types.get(memory_type) or TypeConfig(memory_type)

    def embedded(self, memory_type: str) -> bool:
        return self.type(memory_type).embedded


@dataclass(frozen=True, slots=True)
class Threshold:
    value: float
    source: str  # "type" | "tenant" | "embedder" | "default"


def resolve_threshold(type_config: TypeConfig, tenant: TenantConfig, embedder_calibration: float | None) -> Threshold:
    """The type's dedup_threshold, else the tenant's conflict_threshold, else the embedder's
    calibration, else the global default."""
    if type_config.dedup_threshold is not None:
        return Threshold(type_config.dedup_threshold, "type")
    if tenant.conflict_threshold is not None:
        return Threshold(tenant.conflict_threshold, "tenant")
    if embedder_calibration is not None:
        return Threshold(embedder_calibration, "embedder")
    return Threshold(DEFAULT_CONFLICT_THRESHOLD, "default")


def _unit(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value <= 1.0:  # NaN fails too
        raise InvalidInput(f"{name} must be a number in (0, 1], got {value!r:.40}", field=name)
    return float(value)


# Bounds that keep a setting finite and its dates inside the calendar (now + retention).
MAX_RETENTION_DAYS = 730_000  # two thousand years: "forever", and still a date
MAX_SETTING = 1_000_000_000


def _positive(value: Any, name: str, integer: bool = False, high: float = MAX_SETTING, optional: bool = True) -> Any:
    if value is None and optional:
        return None
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not 0 < value <= high:  # NaN and inf fail too
        what = "integer" if integer else "number"
        raise InvalidInput(f"{name} must be a positive {what} up to {high:g}, got {value!r:.40}", field=name)
    return value


def parse_tenant_config(
    body: Mapping[str, Any], base: TenantConfig | None = None, *, stored: bool = False
) -> TenantConfig:
    """Validate a (partial) tenant configuration over ``base``. ``stored``: a body read back from the
    store, whose blacklist patterns an older build may have accepted where RE2 refuses them; those
    are kept, and refuse the tenant's writes (``Blacklist.first_match``) rather than its reads."""
    known = {f.name for f in fields(TenantConfig) if f.init}
    unknown = set(body) - known
    if unknown:
        raise InvalidInput(
            f"unknown tenant setting(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}",
            field="config",
        )
    out = base or TenantConfig()
    values = dict(body)
    if "policy" in values:
        try:
            values["policy"] = Policy(values["policy"])
        except ValueError:
            raise InvalidInput(
                f"unknown policy {values['policy']!r}; expected one of {', '.join(p.value for p in Policy)}",
                field="policy",
            ) from None
    for name in ("conflict_threshold", "duplicate_threshold", "calibrated_threshold"):
        if name in values:
            values[name] = _unit(values[name], name)
    if values.get("calibrated_embedder") is not None:
        name = values["calibrated_embedder"]
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            raise InvalidInput("calibrated_embedder must name an embedder", field="calibrated_embedder")
    for name in ("retention_days", "sensitive_retention_days"):
        if name in values:
            values[name] = _positive(values[name], name, high=MAX_RETENTION_DAYS)
    for name in ("char_limit", "bulk_check_cap"):
        if name in values:
            values[name] = _positive(values[name], name, integer=True)
    if "blacklist" in values:
        patterns = values["blacklist"]
        if not isinstance(patterns, (list, tuple)) or not all(isinstance(p, str) and p for p in patterns):
            raise InvalidInput("blacklist must be a list of regular expressions", field="blacklist")
        if not stored:
            require_safe(patterns)
        values["blacklist"] = tuple(patterns)
    for name in (
        "resolver_retire_confidence",
        "resolver_flag_confidence",
        "resolver_clear_confidence",
        "resolver_cap_share",
    ):
        if name in values:
            values[name] = _unit(values[name], name)
    if values.get("abstain_below") is not None:
        threshold = values["abstain_below"]
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 <= threshold <= 1.0:
            raise InvalidInput(
                f"abstain_below must be a number in [0, 1], got {threshold!r:.40}", field="abstain_below"
            )
        values["abstain_below"] = float(threshold)
    if "daily_cost_cap_usd" in values:
        values["daily_cost_cap_usd"] = float(
            _positive(values["daily_cost_cap_usd"], "daily_cost_cap_usd", optional=False)
        )
    merged = replace(out, **{k: v for k, v in values.items() if k.startswith("resolver_") and k.endswith("confidence")})
    if not merged.resolver_retire_confidence >= merged.resolver_flag_confidence >= merged.resolver_clear_confidence:
        raise InvalidInput("resolver confidences must keep retire >= flag >= clear", field="resolver_thresholds")
    if "single_valued" in values:
        names = values["single_valued"]
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) and n.strip() for n in names):
            raise InvalidInput("single_valued must be a list of relation names", field="single_valued")
        values["single_valued"] = tuple(sorted({relation_name(n) for n in names}))
    return replace(out, **values)


def parse_type_config(memory_type: str, body: Mapping[str, Any], base: TypeConfig | None = None) -> TypeConfig:
    known = set(TypeConfig.__dataclass_fields__) - {"memory_type"}
    unknown = set(body) - known
    if unknown:
        raise InvalidInput(
            f"unknown type setting(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}", field="config"
        )
    values = dict(body)
    if "dedup_threshold" in values:
        values["dedup_threshold"] = _unit(values["dedup_threshold"], "dedup_threshold")
    if "retention_days" in values:
        values["retention_days"] = _positive(values["retention_days"], "retention_days", high=MAX_RETENTION_DAYS)
    if values.get("on_expire", "tombstone") not in ON_EXPIRE:
        raise InvalidInput(f"on_expire must be one of {', '.join(ON_EXPIRE)}", field="on_expire")
    if "retype_to" in values and values["retype_to"] is not None:
        if not isinstance(values["retype_to"], str) or not values["retype_to"].strip():
            raise InvalidInput("retype_to must name a memory type", field="retype_to")
        if values["retype_to"] == memory_type:
            raise InvalidInput("retype_to must name another type", field="retype_to")
    for name in ("embedded", "key_identified"):
        if name in values and not isinstance(values[name], bool):
            raise InvalidInput(f"{name} must be true or false", field=name)
    return replace(base or BUILTIN_TYPES.get(memory_type) or TypeConfig(memory_type), **values)


def config_from_stored(stored: Mapping[str, Mapping[str, Any]]) -> WriteConfig:
    """Build a tenant's WriteConfig from the store's rows ('' is the tenant row)."""
    tenant = parse_tenant_config(stored.get("", {}), stored=True)
    types = dict(BUILTIN_TYPES)
    for memory_type, body in stored.items():
        if memory_type:
            types[memory_type] = parse_type_config(memory_type, body)
    return WriteConfig(tenant, types)


def to_stored(config: TenantConfig | TypeConfig) -> dict[str, Any]:
    body = {f.name: getattr(config, f.name) for f in fields(config) if f.init and f.name != "memory_type"}
    if isinstance(config, TenantConfig):
        body["policy"] = config.policy.value
    for name in ("blacklist", "single_valued"):
        if name in body:
            body[name] = list(body[name])
    return body
