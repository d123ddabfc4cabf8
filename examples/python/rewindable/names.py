"""Wire names (camelCase) to Python names (snake_case) and back.

Only field names are converted. Data is left alone: the keys of a map keyed by
path, id or reason (`skippedByReason`), and the harness's own message payloads
(`message`), which come back exactly as they were recorded.
"""

import re
from typing import Any, Dict, FrozenSet, Mapping

# Fields whose value is a map keyed by data (reasons, paths, ids): the field
# name is converted, the map's keys are not.
DATA_KEYED_FIELDS: FrozenSet[str] = frozenset({"skippedByReason"})

# Fields whose value is the caller's own data, returned as given.
OPAQUE_FIELDS: FrozenSet[str] = frozenset({"message"})

# A field name: a camelCase identifier. Anything else (a path, a UUID, a
# kebab-case reason) is data even where no field above names its map.
_FIELD = re.compile(r"^[a-z][a-zA-Z0-9]*$")
_UPPER = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_name(name: str) -> str:
    """`filesChanged` -> `files_changed`."""
    return _UPPER.sub(r"_\1", name).lower() if _FIELD.match(name) else name


def camel_name(name: str) -> str:
    """`files_changed` -> `filesChanged`."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def from_wire(value: Any) -> Any:
    """A result as the server sent it, with every field name in snake_case."""
    if isinstance(value, list):
        return [from_wire(item) for item in value]
    if not isinstance(value, dict):
        return value
    converted: Dict[str, Any] = {}
    for key, item in value.items():
        if key in OPAQUE_FIELDS:
            converted[snake_name(key)] = item
        elif key in DATA_KEYED_FIELDS and isinstance(item, dict):
            converted[snake_name(key)] = {data_key: from_wire(data) for data_key, data in item.items()}
        else:
            converted[snake_name(key)] = from_wire(item)
    return converted


def to_wire(options: Mapping[str, Any]) -> Dict[str, Any]:
    """Keyword options (snake_case, nested dicts too) as wire params; `None` means "not given"."""
    params: Dict[str, Any] = {}
    for key, value in options.items():
        if value is None:
            continue
        params[camel_name(key)] = to_wire(value) if isinstance(value, Mapping) else value
    return params
