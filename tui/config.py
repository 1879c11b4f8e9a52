"""The curator's config file: name and key bindings.

Where: `$ARCHCURATOR_CONFIG` when set, else `config.toml` in the user's
config folder (`$XDG_CONFIG_HOME/archcurator/`, i.e. `~/.config/archcurator/`
on Linux; the platform's own folder elsewhere, via platformdirs when
installed). Nothing is written there by the app; a missing file means the
defaults.

```toml
curator = "ada"            # else the login name

[keys]                     # binding id = key(s); see the help screen (?) for ids
judge_real = "r"
judge_false_alarm = "f,x"  # several keys: comma-separated
next_design = "ctrl+n"
```

Importing this module imports no Textual.
"""

from __future__ import annotations

import getpass
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

ENV_VAR = "ARCHCURATOR_CONFIG"
APP_NAME = "archcurator"
FILE_NAME = "config.toml"


@dataclass
class Config:
    curator: str
    keymap: dict[str, str] = field(default_factory=dict)
    path: Path | None = None
    problems: list[str] = field(default_factory=list)  # shown to the curator, never fatal
    cursor_blink: bool = True


def config_dir() -> Path:
    if sys.platform.startswith("linux") or os.environ.get("XDG_CONFIG_HOME"):
        base = os.environ.get("XDG_CONFIG_HOME")
        return Path(base) / APP_NAME if base else Path.home() / ".config" / APP_NAME
    try:
        from platformdirs import user_config_dir

        return Path(user_config_dir(APP_NAME, appauthor=False))
    except ImportError:  # pragma: no cover
        return Path.home() / ".config" / APP_NAME


def config_path() -> Path:
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else config_dir() / FILE_NAME


def login_name() -> str:
    try:
        name = getpass.getuser()
    except Exception:  # no login name in this environment
        name = ""
    return name or "curator"


def _parse_toml(text: str) -> dict:
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - 3.10
        try:
            import tomli as tomllib  # type: ignore
        except ImportError:
            return _tiny_toml(text)
    return tomllib.loads(text)


def _tiny_toml(text: str) -> dict:  # pragma: no cover - only without tomllib/tomli
    """Enough TOML for this file: `key = "value"` lines and `[table]` headers."""
    out: dict = {}
    table = out
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            table = out.setdefault(line[1:-1].strip(), {})
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if value[:1] in "\"'":
            value = value[1:-1]
        elif value in ("true", "false"):
            value = value == "true"
        table[key.strip().strip('"')] = value
    return out


KNOWN_KEYS = ("curator", "cursor_blink", "keys")


def load_config(path: str | os.PathLike | None = None) -> Config:
    """Read the config file (a missing one is the defaults; a broken one is the
    defaults plus a problem line naming the file)."""
    path = Path(path) if path is not None else config_path()
    cfg = Config(curator=login_name(), path=path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return cfg
    except (OSError, UnicodeDecodeError) as exc:
        cfg.problems.append(f"{path}: cannot read: {exc}")
        return cfg
    try:
        data = _parse_toml(text)
    except Exception as exc:  # tomllib.TOMLDecodeError and friends
        cfg.problems.append(f"{path}: not valid TOML: {exc}")
        return cfg
    unknown = sorted(k for k in data if k not in KNOWN_KEYS)
    if unknown:  # a `name = "alice"` was ignored without a word, and the curator judged as the login name
        cfg.problems.append(f"{path}: unknown setting{'s' if len(unknown) > 1 else ''} "
                            f"{', '.join(repr(k) for k in unknown)} ignored (known: {', '.join(KNOWN_KEYS)})")
    name = data.get("curator")
    if isinstance(name, str) and name.strip():
        cfg.curator = name.strip()
    elif name is not None:
        cfg.problems.append(f"{path}: 'curator' must be a non-empty string")
    keys = data.get("keys", {})
    if not isinstance(keys, dict):
        cfg.problems.append(f"{path}: [keys] must be a table of binding id = \"key\"")
        keys = {}
    for binding_id, value in keys.items():
        if isinstance(value, list):
            value = ",".join(str(v) for v in value)
        if not isinstance(value, str) or not value.strip():
            cfg.problems.append(f"{path}: keys.{binding_id} must be a key name such as \"ctrl+n\"")
            continue
        cfg.keymap[str(binding_id)] = value.replace(" ", "")
    blink = data.get("cursor_blink")
    if isinstance(blink, bool):
        cfg.cursor_blink = blink
    return cfg
