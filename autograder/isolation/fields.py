"""Settings that cross a process boundary as JSON, field by field (`JsonFields`). Imports nothing heavy.

A frozen dataclass that mixes in `JsonFields` writes itself as a JSON object keyed by its field names
(`to_json`) and reads itself back (`from_json`), each value checked against its field's annotation: bool,
int, float, str, bytes (as base64), None, `X | None`, `tuple[X, ...]`, `dict[str, X]` and other
`JsonFields` classes, nested. A key the class does not have, one it lacks, or a value of another type is a
`SettingsError` that names it: both ends of a boundary run the same code, so a difference is a bug to stop
on, never a default to fill in. Adding a field is all it takes for it to travel.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import types
import typing
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

T = TypeVar("T", bound="JsonFields")


class SettingsError(ValueError):
    """Settings that do not fit their class: a key unknown or missing, or a value of another type."""


class JsonFields:
    """A dataclass mixin: `to_json()` and `from_json(data)`, by field name (see the module's docstring)."""

    if TYPE_CHECKING:  # set by @dataclass on each class that mixes this in (no annotation at run time: see _fields_in)
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def to_json(self) -> dict[str, Any]:
        return {f.name: _out(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_json(cls: type[T], data: Any) -> T:
        return _in(cls, data, cls.__name__)


def _out(value: Any) -> Any:
    if isinstance(value, JsonFields):
        return value.to_json()
    if isinstance(value, (tuple, list)):
        return [_out(v) for v in value]
    if isinstance(value, dict):
        return {k: _out(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def _in(kind: Any, value: Any, where: str) -> Any:
    """`value` (decoded JSON) as the annotation `kind` says; `where` names it in an error."""
    if isinstance(kind, type) and issubclass(kind, JsonFields):
        return _fields_in(kind, value, where)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        others = [a for a in args if a is not type(None)]
        if len(others) != 1:
            raise TypeError(f"{where}: only `X | None` is supported, not {kind}")
        return _in(others[0], value, where)
    if origin is tuple:
        if len(args) != 2 or args[1] is not Ellipsis:
            raise TypeError(f"{where}: only `tuple[X, ...]` is supported, not {kind}")
        _expect(type(value) is list, where, "a list", value)
        return tuple(_in(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        _expect(type(value) is dict and all(type(k) is str for k in value), where, "an object", value)
        return {k: _in(args[1], v, f"{where}[{k!r}]") for k, v in value.items()}
    if kind is type(None) or kind is None:
        _expect(value is None, where, "null", value)
        return None
    if kind is bool:
        _expect(type(value) is bool, where, "true or false", value)
        return value
    if kind is int:
        _expect(type(value) is int, where, "an integer", value)
        return value
    if kind is float:
        _expect(type(value) in (int, float), where, "a number", value)
        return float(value)
    if kind is str:
        _expect(type(value) is str, where, "a string", value)
        return value
    if kind is bytes:
        _expect(type(value) is str, where, "base64 text", value)
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error:
            raise SettingsError(f"{where}: expected base64 text") from None
    raise TypeError(f"{where}: a field annotated {kind} cannot travel as JSON")


def _fields_in(cls: type[T], value: Any, where: str) -> T:
    _expect(type(value) is dict, where, "an object", value)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(value) - set(names))
    missing = [n for n in names if n not in value]
    if unknown or missing:
        said = [f"unknown key{'s' * (len(unknown) > 1)} {', '.join(map(repr, unknown))}"] if unknown else []
        said += [f"missing key{'s' * (len(missing) > 1)} {', '.join(map(repr, missing))}"] if missing else []
        raise SettingsError(f"{where}: {'; '.join(said)} (both ends must run the same version of the grader)")
    hints = typing.get_type_hints(cls)
    return cls(**{n: _in(hints[n], value[n], f"{where}.{n}") for n in names})


def _expect(holds: bool, where: str, what: str, value: Any) -> None:
    if not holds:
        raise SettingsError(f"{where}: expected {what}, not {type(value).__name__}")
