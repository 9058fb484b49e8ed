"""NAPALM driver for Ruijie RGOS on netmiko ``ruijie_os`` (``napalm.get_network_driver("ruijie_rgos")``).

RGOS has no candidate configuration (ruijie.md): the candidate is kept on the client.
``compare_config`` returns the hierarchical remediation (hier_config) from the running config to
the candidate, one CLI line per text line; ``commit_config`` sends it, reads the running config
back, and only saves (``write``) when no remediation remains; ``rollback`` sends the remediation
back to the running config the last commit started from, and never saves. A save that does not
answer RGOS's success line ``[OK]`` (an error, a timeout, a lost session, any other answer) raises
``StartupNotConfirmed`` (a ``CommitError``,
zcube_deploy/platforms/contract.py): the running config holds the change, the startup config may or may not.

Callers use only the NAPALM contract. Documented ``optional_args`` (besides netmiko's):

- ``port`` (22), ``secret`` (enable secret), ``read_timeout`` (s, 60);
- ``known_hosts`` (a file of pinned host keys) and ``trust_on_first_use`` (pin an unknown key);
- ``managed_scope``: an object with ``owns(top_level_line) -> bool`` (push/scope.py): compare,
  commit and rollback only ever touch the top-level sections it owns;
- ``rollback_to``: the config text ``rollback()`` returns to when this session made no commit
  (a new session undoing an earlier session's commit after the device dropped it);
- ``preflight`` (True): ``load_replace_candidate``/``load_merge_candidate`` refuse a candidate
  naming a physical interface the device does not have (``show interface status``), raising
  ``ReplaceConfigException``/``MergeConfigException`` whose text starts with ``pre-flight:``.

The running config read by ``get_config`` is reused by ``compare_config`` and ``commit_config``
until this session sends configuration (one read per push instead of three).
"""

from __future__ import annotations

import re
import select
import time
from pathlib import Path

from hier_config import WorkflowRemediation
from napalm.base import NetworkDriver
from napalm.base.exceptions import CommitError, ConnectionException, MergeConfigException, ReplaceConfigException
from netmiko.exceptions import ReadTimeout
from netmiko.ruijie.ruijie_os import RuijieOSSSH
from paramiko.ssh_exception import BadHostKeyException

from zcube_deploy.platforms.ruijie_rgos.hconfig import parse_config
from zcube_deploy.platforms.ruijie_rgos.names import long_name
from zcube_deploy.platforms.ruijie_rgos.parsers import parse
from zcube_deploy.platforms.contract import StartupNotConfirmed
from zcube_deploy.safety import assert_safe_line, mask_credentials

ERROR_RE = re.compile(r"^\s*% (Invalid input|Incomplete command|Ambiguous command|.*(not|cannot|denied|fail))", re.M | re.I)
LOGICAL = ("Loopback", "VLAN", "AggregatePort", "Tunnel", "Mgmt")
CHUNK = 200
PROMPT_RE = re.compile(r"\)#")  # one config-mode prompt comes back per line sent
SAVED_RE = re.compile(r"^\s*\[OK\]\s*$", re.M)  # `write` succeeded: RGOS's `[OK]`, on a line of its own
# how a technician checks the startup config after an unconfirmed save (push's "what to do" text)
STARTUP_CHECK = "compare `show startup-config` with `show running-config` on the switch"
READ_BYTES = 1 << 20  # at most this much is taken from the SSH channel at once
PROMPT_TAIL = 512  # the bytes at the end of what was read in which the prompt is looked for


class RuijieSSH(RuijieOSSSH):
    """netmiko ruijie_os, reading the prompt instead of waiting 2 s of silence to check the mode.

    Public: the driver's session class, and the one the lab's drift typing (``lab/drift.py``) and the tests'
    lab sessions open (``RuijieSSH(host=..., port=..., username=..., password=..., secret=...)``, as netmiko's
    ``ConnectHandler`` takes them); code outside ``platforms/`` reaches switches through the NAPALM driver."""

    def read_channel(self) -> str:
        out = super().read_channel()
        if not out:
            chan = getattr(self, "remote_conn", None)
            transport = chan.get_transport() if chan is not None and hasattr(chan, "get_transport") else None
            if chan is not None and (getattr(chan, "closed", False) or (transport is not None and not transport.is_active())):
                raise ConnectionError("the device closed the session")
        return out

    def read_command(self, command: str, read_timeout: float) -> str:
        """``command``'s answer, as ``send_command`` returns it (the echoed command line and the closing prompt
        stripped, line ends normalised), read in one loop over the SSH channel: the bytes are kept as they come
        and the prompt is looked for in the last PROMPT_TAIL of them only (netmiko's loop searches the whole
        growing text after every read, normalises each piece and polls every 25 ms; a 512-port switch's
        `show lldp neighbors detail` is ~1 MB).

        The answer starts at the device's echo of ``command`` (anything before it, such as a prompt that came
        late from an earlier exchange, is dropped, as netmiko's ``cmd_verify`` and ``find_prompt`` do) and ends
        when its last line is the device's prompt (``base_prompt`` followed by ``#`` or ``>``). Raises ReadTimeout
        after ``read_timeout`` seconds without the echo or the prompt, ConnectionError when the session closes."""
        chan = self.remote_conn
        while chan.recv_ready():
            chan.recv(READ_BYTES)
        self.write_channel(self.normalize_cmd(command))
        prompt = self.base_prompt.encode(self.encoding, "ignore")
        echo = command.strip().encode(self.encoding, "ignore")
        before = b""  # what came before the echo
        parts: list[bytes] = []
        tail = b""
        deadline = time.monotonic() + read_timeout
        while True:
            if chan.recv_ready():
                data = chan.recv(READ_BYTES)
                if not parts:
                    before += data
                    at = before.find(echo)
                    if at < 0:
                        continue
                    data, before = before[at:], b""
                parts.append(data)
                tail = (tail + data)[-PROMPT_TAIL:]
                if _ends_at_prompt(tail, prompt):
                    break
                continue
            transport = chan.get_transport()
            if chan.closed or chan.eof_received or transport is None or not transport.is_active():
                raise ConnectionError("the device closed the session")
            left = deadline - time.monotonic()
            if left <= 0:
                raise ReadTimeout(f"no {'prompt' if parts else 'echo of the command'} ({self.base_prompt}) after `{command}` "
                                  f"within {read_timeout:g} s")
            select.select([chan], [], [], min(left, 1.0))
        return _strip_echo_and_prompt(_normal_line_ends(b"".join(parts).decode(self.encoding, "ignore"), self.normalize_linefeeds),
                                      command, self.base_prompt)

    def check_config_mode(self, check_string: str = ")#", pattern: str = r"[>#]\s*$", force_regex: bool = False) -> bool:
        self.write_channel(self.RETURN)
        output = self.read_until_pattern(pattern=pattern, re_flags=re.M)
        return check_string in output


def _ends_at_prompt(tail: bytes, prompt: bytes) -> bool:
    """The last line of ``tail`` (the end of what a session read) is the device's prompt: ``prompt`` then ``#`` or ``>``.

    >>> _ends_at_prompt(b"...\\r\\nSW-1#", b"SW-1"), _ends_at_prompt(b"\\r\\nSW-1(config)# ", b"SW-1"), _ends_at_prompt(b"\\r\\nSW-1 up\\r\\n", b"SW-1")
    (True, True, False)
    """
    line = tail[tail.rfind(b"\n") + 1:].strip()
    return line.startswith(prompt) and line[-1:] in (b"#", b">")


def _normal_line_ends(text: str, normalize) -> str:
    """netmiko's ``normalize_linefeeds`` (``normalize``: CR LF, CR CR LF, LF CR and a lone CR become LF). When every CR
    is one of a CR LF pair, as in a switch's answer, that is exactly CR LF -> LF, done without its regular expression
    (a quarter of a collecting thread's CPU on a 1 MB answer).

    >>> _normal_line_ends("a\\r\\n\\r\\nb", None), _normal_line_ends("a\\n\\r\\nb", None)
    ('a\\n\\nb', 'a\\n\\nb')
    """
    out = text.replace("\r\n", "\n")
    return out if "\r" not in out else normalize(text)  # (no CR left: each was in a CR LF pair)


def _strip_echo_and_prompt(text: str, command: str, base_prompt: str) -> str:
    """netmiko's ``strip_command`` and ``strip_prompt`` on a whole answer (same result, without splitting it into lines):
    the first line goes when it is the echoed command, the last when it holds the prompt.

    >>> _strip_echo_and_prompt("show x\\nline 1\\nline 2\\nSW-1#", "show x", "SW-1")
    'line 1\\nline 2'
    """
    if "\x08" in text:  # a long command wrapped with backspaces
        text = text.replace("\x08", "")
    if text.startswith(command.strip()):
        text = text.partition("\n")[2]
    cut = text.rfind("\n")
    if base_prompt in text[cut + 1:]:
        text = text[:cut] if cut >= 0 else ""
    return text


def scoped_tree(text: str, owns=None):
    """The config ``text`` as a hier_config tree, keeping only the top-level sections ``owns`` accepts."""
    tree = parse_config(text)
    if owns is not None:
        for child in [c for c in tree.children if not owns(c.text)]:
            child.delete()
    return tree


def send_units(lines: list[str]) -> list[list[str]]:
    """``lines`` (a remediation: top-level lines, indented sub-lines, ``exit``) cut into what is written at once: each
    unit ends with a section's opening line, whose answer is read before the section's indented lines go (they
    start the next unit, with what follows up to the next opening line). A rejected opening line therefore stops
    its block: none of its indented lines is sent. At most CHUNK lines per unit.

    >>> send_units(["hostname A", "interface X 0/1", " shutdown", "exit", "interface X 0/2", " shutdown", "exit",
    ...             "ip route 1.1.1.0 255.255.255.0 2.2.2.2"])
    [['hostname A', 'interface X 0/1'], [' shutdown', 'exit', 'interface X 0/2'], [' shutdown', 'exit', 'ip route 1.1.1.0 255.255.255.0 2.2.2.2']]
    """
    units: list[list[str]] = []
    unit: list[str] = []
    for i, line in enumerate(lines):
        unit.append(line)
        opens = not line.startswith(" ") and line != "exit" and i + 1 < len(lines) and lines[i + 1].startswith(" ")
        if opens or len(unit) >= CHUNK:
            units.append(unit)
            unit = []
    if unit:
        units.append(unit)
    return units


def remediation_lines(running: str, intended: str, owns=None) -> list[str]:
    """CLI lines that take ``running`` to ``intended``: interface blocks whole, each closed by 'exit'.

    With ``owns`` (a test on a top-level line, e.g. ``ManagedScope.owns``) both sides are cut to the
    sections it accepts first, so nothing outside them is ever negated or rewritten.
    """
    return remediation_from_trees(scoped_tree(running, owns), scoped_tree(intended, owns))


def remediation_from_trees(running, intended) -> list[str]:
    """:func:`remediation_lines` of two trees already parsed and scoped (:func:`scoped_tree`); neither is changed."""
    remediation = WorkflowRemediation(running, intended).remediation_config
    _keep_overwritten_in_place(remediation)
    return _cli_lines(remediation)


def merge_lines(running: str, candidate: str, owns=None) -> list[str]:
    """CLI lines that add ``candidate`` to ``running`` (a merge: the candidate's lines ``running`` lacks, nothing
    negated), in the form of :func:`remediation_lines`.

    >>> merge_lines("hostname A\\nmtu forwarding 9216\\n", "mtu forwarding 9216\\nmtu forwarding 9000\\n")
    ['mtu forwarding 9000']
    """
    return _cli_lines(scoped_tree(candidate, owns).difference(scoped_tree(running, owns)))


def _cli_lines(tree) -> list[str]:
    """A hier_config tree as CLI lines: each top-level section followed by its indented lines and 'exit'."""
    lines: list[str] = []
    open_block = False
    for child in tree.all_children_sorted():
        if child.depth() == 1:
            if open_block:
                lines.append("exit")
            lines.append(child.text)
            open_block = bool(child.children)
        else:
            lines.append(" " * (child.depth() - 1) + child.text)
    if open_block:
        lines.append("exit")
    return lines


# Lines the device overwrites in place when the same key is configured again: negating the old one
# first would do harm. `no neighbor A remote-as OLD` removes the whole neighbour with its other
# lines (fall-over bfd ...), which hier_config does not re-send because they did not change.
OVERWRITE_IN_PLACE = (re.compile(r"^neighbor (\S+) remote-as \S+$"),)


def _keep_overwritten_in_place(node) -> None:
    """Drop ``no X`` from a remediation where a positive line with the same key replaces X in place."""
    keys = set()
    for child in node.children:
        for rule in OVERWRITE_IN_PLACE:
            m = rule.match(child.text)
            if m and not child.text.startswith("no "):
                keys.add((rule.pattern, m.group(1)))
    for child in list(node.children):
        if child.text.startswith("no "):
            for rule in OVERWRITE_IN_PLACE:
                m = rule.match(child.text[3:])
                if m and (rule.pattern, m.group(1)) in keys:
                    child.delete()
                    break
        else:
            _keep_overwritten_in_place(child)


def _host_key_problem(exc: BaseException, host: str) -> str | None:
    """A refused SSH host key, in words, from the exception chain netmiko raises (it reports any failure of
    the SSH handshake as a timeout whose message hides the cause); None for any other failure. Worded so
    that the secret masking (which masks the word after "key") leaves it readable."""
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            return None
        if isinstance(seen, BadHostKeyException):
            return f"SSH host key: {host} does not match its known_hosts line (refused: a replaced switch, or a man in the middle)"
        if "not found in known_hosts" in str(seen):
            return f"SSH host key: {host} has no known_hosts line (refused)"
        seen = seen.__cause__ or seen.__context__
    return None


class RuijieRGOSDriver(NetworkDriver):
    platform = "ruijie_rgos"

    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60, optional_args: dict | None = None):
        self.hostname = hostname
        self.username = username
        self.password = password
        self.timeout = timeout
        o = dict(optional_args or {})
        self.port = int(o.pop("port", 22))
        self.secret = o.pop("secret", "")
        self.known_hosts = o.pop("known_hosts", None)
        self.trust_on_first_use = bool(o.pop("trust_on_first_use", False))
        self.read_timeout = float(o.pop("read_timeout", 60))
        # optional_args["managed_scope"]: an object with ``owns(top_level_line) -> bool`` (push/scope.py);
        # compare, commit and rollback then only ever touch the sections it owns
        scope = o.pop("managed_scope", None)
        self.owns = scope.owns if scope is not None else None
        self.rollback_to = o.pop("rollback_to", None)
        self.preflight_on_load = bool(o.pop("preflight", True))
        self.netmiko_extra = o
        self.device: RuijieSSH | None = None
        self.candidate: str | None = None
        self.merge = False
        self.backup: str | None = None
        self._running: str | None = None  # the running config last read, while this session has sent nothing

    # ---- session
    def open(self) -> None:
        params = dict(host=self.hostname, port=self.port, username=self.username, password=self.password, secret=self.secret,
                      conn_timeout=self.timeout, auth_timeout=self.timeout, banner_timeout=self.timeout, read_timeout_override=None,
                      allow_agent=False, use_keys=False, ssh_config_file=None, fast_cli=True)
        if self.known_hosts:
            params.update(system_host_keys=False, alt_host_keys=True, alt_key_file=str(self.known_hosts), ssh_strict=not self.trust_on_first_use)
        else:
            params.update(ssh_strict=not self.trust_on_first_use, system_host_keys=True)
        params.update(self.netmiko_extra)
        try:
            self.device = RuijieSSH(**params)
        except Exception as exc:
            host = self.hostname if self.port == 22 else f"[{self.hostname}]:{self.port}"
            why = _host_key_problem(exc, host) or f"{host}: {type(exc).__name__}: {_one_line(exc)}"
            raise ConnectionException(mask_credentials(why, self.password, self.secret)) from None
        if self.trust_on_first_use and self.known_hosts:
            self._remember_host_key()

    def _remember_host_key(self) -> None:
        key = self.device.remote_conn_pre.get_transport().get_remote_server_key()
        host = self.hostname if self.port == 22 else f"[{self.hostname}]:{self.port}"
        entry = f"{host} {key.get_name()} {key.get_base64()}"
        path = Path(self.known_hosts)
        known = path.read_text().splitlines() if path.exists() else []
        if not any(line.split()[:1] == [host] and line.split()[1:2] == [key.get_name()] for line in known):
            with open(path, "a") as fh:
                fh.write(entry + "\n")

    def close(self) -> None:
        if self.device is not None:
            try:
                self.device.disconnect()
            except Exception:  # a dropped session: nothing left to close
                pass
            self.device = None

    def is_alive(self) -> dict:
        return {"is_alive": bool(self.device and self.device.is_alive())}

    def cli(self, commands: list[str], encoding: str = "text") -> dict:
        return {c: self._send(c) for c in commands}

    def _send(self, command: str) -> str:
        if self.device is None:
            raise ConnectionException("not connected")
        if not hasattr(self.device.remote_conn, "recv_ready"):  # a session that is not SSH (a test double): netmiko's own
            return self.device.send_command(command, read_timeout=self.read_timeout)
        return self.device.read_command(command, self.read_timeout)

    # ---- getters (return shapes as napalm/base/models.py)
    def get_facts(self) -> dict:
        ver = parse("show version", self._send("show version"))
        v = ver[0] if ver else {}
        run = self._send("show running-config")
        m = re.search(r"^hostname (\S+)", run, re.M)
        hostname = m.group(1) if m else self.device.base_prompt
        model = re.search(r"\(([^)]+)\)", v.get("description", ""))
        interfaces = [long_name(r["interface"]) for r in parse("show interface status", self._send("show interface status"))]
        return {
            "uptime": _uptime_seconds(v.get("uptime", "")),
            "vendor": "Ruijie",
            "os_version": v.get("software_version", ""),
            "serial_number": v.get("serial", ""),
            "model": model.group(1) if model else "",
            "hostname": hostname,
            "fqdn": hostname,
            "interface_list": interfaces,
        }

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False, format: str = "text") -> dict:
        out = {"running": "", "startup": "", "candidate": ""}
        if retrieve in ("all", "running"):
            out["running"] = self._running = self._send("show running-config")
        if retrieve in ("all", "startup"):
            out["startup"] = self._send("show startup-config")
        if retrieve in ("all", "candidate"):
            out["candidate"] = self.candidate or ""
        return out

    def get_interfaces(self) -> dict:
        """Every port of ``show interface status``: state and speed from it; description, shutdown and MTU from the
        running config (the port's ``mtu N``, else the global ``mtu forwarding N``: the interface value wins, ruijie.md).
        What neither says is napalm's value for unknown: ``mtu`` -1, ``mac_address`` "" (no command read here shows a
        port's MAC), ``last_flapped`` -1.0, ``speed`` -1.0."""
        rows = parse("show interface status", self._send("show interface status"))
        cfg = parse_config(self._send("show running-config"))
        desc, shut, mtu = {}, set(), {}
        default_mtu = -1
        for top in cfg.children:
            m = re.fullmatch(r"mtu forwarding (\d+)", top.text)
            if m:
                default_mtu = int(m.group(1))
        for itf in cfg.get_children(startswith="interface "):
            name = itf.text[len("interface "):]
            for c in itf.children:
                if c.text.startswith("description "):
                    desc[name] = c.text[len("description "):]
                if c.text == "shutdown":
                    shut.add(name)
                m = re.fullmatch(r"mtu (\d+)", c.text)
                if m:
                    mtu[name] = int(m.group(1))
        out = {}
        for r in rows:
            name = long_name(r["interface"])
            out[name] = {
                "is_up": r["status"].lower() == "up",
                "is_enabled": name not in shut,
                "description": desc.get(name, ""),
                "last_flapped": -1.0,
                "speed": _speed_mbps(r["speed"]),
                "mtu": mtu.get(name, default_mtu),
                "mac_address": "",
            }
        return out

    def get_lldp_neighbors(self) -> dict:
        out: dict[str, list[dict]] = {}
        for r in parse("show lldp neighbors detail", self._send("show lldp neighbors detail")):
            out.setdefault(long_name(r["local_interface"]), []).append({"hostname": r["system_name"], "port": r["port_id"]})
        return out

    def get_lldp_neighbors_detail(self, interface: str = "") -> dict:
        out: dict[str, list[dict]] = {}
        for r in parse("show lldp neighbors detail", self._send("show lldp neighbors detail")):
            local = long_name(r["local_interface"])
            if interface and long_name(interface) != local:
                continue
            out.setdefault(local, []).append({
                "parent_interface": "",
                "remote_port": r["port_id"],
                "remote_port_description": r["port_description"],
                "remote_chassis_id": r["chassis_id"],
                "remote_system_name": r["system_name"],
                "remote_system_description": " ".join(r["system_description"]),
                "remote_system_capab": _capabilities(r["system_capabilities_supported"]),
                "remote_system_enable_capab": _capabilities(r["system_capabilities_enabled"]),
            })
        return out

    # ---- configuration: a candidate emulated on the client
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        candidate = _read(filename, config, ReplaceConfigException)
        self._preflight(candidate, ReplaceConfigException)
        self.candidate = candidate
        self.merge = False

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        candidate = _read(filename, config, MergeConfigException)
        self._preflight(candidate, MergeConfigException)
        self.candidate = candidate
        self.merge = True

    def _preflight(self, candidate: str, exc_type) -> None:
        if not self.preflight_on_load or self.device is None:
            return
        missing = self._missing_interfaces(candidate)
        if missing:
            raise exc_type(f"pre-flight: the device has no interface {missing[0]!r}"
                           + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))

    def discard_config(self) -> None:
        self.candidate = None
        self.merge = False

    def compare_config(self) -> str:
        return "\n".join(self._pending_lines())

    def _pending_lines(self, running: str | None = None) -> list[str]:
        if self.candidate is None:
            return []
        if running is None:
            running = self._running if self._running is not None else self._send("show running-config")
        if self.merge:
            return merge_lines(running, self.candidate, self.owns)
        return remediation_lines(running, self.candidate, self.owns)

    def _missing_interfaces(self, intended: str) -> list[str]:
        """Interfaces the intended config names that the device does not have."""
        have = {long_name(r["interface"]) for r in parse("show interface status", self._send("show interface status"))}
        names = re.findall(r"^interface (.+?)\s*$", intended, re.M)
        return [n for n in names if long_name(n) not in have and not n.startswith(LOGICAL)]

    def _apply_lines(self, lines: list[str]) -> str:
        """Enter config mode, send ``lines``, leave; raise CommitError at the first line the device rejects.

        A section's opening line is sent and its answer read before its indented lines go (:func:`send_units`): a
        rejected ``interface X`` stops its block there, so a lenient CLI never takes the block's lines in global
        mode, and the error is the device's own words about the line it rejected. (netmiko's per-line
        ``send_config_set`` searches the whole accumulated output after every line: O(lines^2).)"""
        for line in lines:
            assert_safe_line(line)
        self._running = None  # the device changes from here on
        dev = self.device
        dev.config_mode(config_command="configure terminal", pattern=r"\)#")
        out = ""
        try:
            for unit in send_units(lines):
                out += self._send_block(unit)
        except CommitError:
            raise
        except Exception as exc:
            raise CommitError(mask_credentials(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__, self.password, self.secret)) from None
        finally:
            try:
                dev.write_channel("end" + dev.RETURN)
                dev.read_until_pattern(pattern=r"#\s*$", re_flags=re.M, read_timeout=self.read_timeout)
                dev.set_base_prompt()
            except Exception:
                pass
        return out

    def _send_block(self, block: list[str]) -> str:
        """Write ``block`` at once, read until one config prompt per line has come back, then raise CommitError
        naming the first line whose answer is an RGOS error, with the error in the device's words."""
        dev = self.device
        dev.write_channel("".join(line + dev.RETURN for line in block))
        out = ""
        deadline = time.monotonic() + self.read_timeout
        need = len(block)
        while PROMPT_RE.subn("", out)[1] < need:
            chunk = dev.read_channel()
            if chunk:
                out += chunk
                continue
            if time.monotonic() > deadline:
                raise CommitError(f"the device stopped answering after {PROMPT_RE.subn('', out)[1]} of {need} lines")
            _wait_for_data(dev)
        if ERROR_RE.search(out):
            answers = PROMPT_RE.split(out)  # answers[k]: line k's echo and answer, then the next prompt's start
            for line, answer in zip(block, answers):
                if ERROR_RE.search(answer):
                    words = " ".join(ln.strip() for ln in answer.replace("\r", "").splitlines() if ln.strip().startswith("%"))
                    raise CommitError(f"the device rejected {line.strip()!r}: {words}")
            raise CommitError(f"the device answered an error: {ERROR_RE.search(out).group(0).strip()}")
        return out

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        """Apply the candidate, read it back, then save. ``revert_in`` (a commit confirmed within N seconds, else
        reverted by the device) is refused: RGOS has no such commit, and a client-side timer is no promise."""
        if revert_in is not None:
            raise NotImplementedError("commit_config(revert_in=...): RGOS has no commit that reverts itself; "
                                      "commit, then rollback() if the change is not wanted")
        if self.candidate is None:
            raise CommitError("no candidate loaded")
        self.backup = self._running if self._running is not None else self._send("show running-config")
        lines = self._pending_lines(self.backup)
        if lines:
            self._apply_lines(lines)
            left = self._pending_lines()
            if left:
                raise CommitError(f"{len(left)} lines still differ after the commit, e.g. {left[0]!r}")
        try:
            self._save()
        except Exception as exc:  # applied and confirmed, but the save may have written all, part or none of it
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StartupNotConfirmed(mask_credentials(f"the running config is as intended, but `write` was not confirmed: {why}", self.password, self.secret),
                                      check=STARTUP_CHECK) from None
        self.candidate = None

    def _save(self) -> None:
        """``write``; raises CommitError unless the device answers the exact success line ``[OK]`` on a line of its
        own (SAVED_RE), saying what it answered instead."""
        if self.device is None:
            raise ConnectionException("not connected")
        out = self.device.save_config()
        if not SAVED_RE.search(out):
            said = [ln.strip() for ln in out.replace("\r", "").splitlines() if ln.strip() and not ln.strip().startswith("write")]
            errors = [ln for ln in said if ln.startswith("%")]
            raise CommitError("write answered " + (repr(errors[0]) if errors else repr(" / ".join(said[-3:])) if said else "nothing")
                              + ", not the success line [OK]")

    def rollback(self) -> None:
        """Push the remediation back to the backup taken by the last commit, or to ``optional_args["rollback_to"]``
        (the startup config is left alone)."""
        backup = self.backup if self.backup is not None else self.rollback_to
        if backup is None:
            raise CommitError("no backup to roll back to")
        lines = remediation_lines(self._send("show running-config"), backup, self.owns)
        if lines:
            self._apply_lines(lines)
        left = remediation_lines(self._send("show running-config"), backup, self.owns)
        if left:
            raise CommitError(f"rollback incomplete: {len(left)} lines still differ")


def _wait_for_data(dev) -> None:
    """Until the session has something to read (at most 50 ms): select() on the SSH channel, which wakes at once
    when an answer arrives (a unit per section makes many short round trips); a fixed pause where it cannot."""
    chan = getattr(dev, "remote_conn", None)
    try:
        select.select([chan], [], [], 0.05)
    except (TypeError, ValueError, OSError):  # no channel with a file descriptor (a test double): poll
        time.sleep(0.005)


def _read(filename, config, exc_type) -> str:
    if config is not None:
        return config
    if filename is None:
        raise exc_type("give a filename or a config")
    try:
        return Path(filename).read_text(encoding="utf-8")
    except OSError as exc:
        raise exc_type(f"cannot read {filename}: {exc.strerror}") from None


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line, netmiko's list of common causes left out: its message starts with a
    newline (a banner that never came), and the callers keep a message's first line, which was then empty. An OS error
    paramiko glues to the text before it ('SSH protocol banner[Errno 104] ...') gets its separator."""
    text = " ".join(str(exc).split("Common causes")[0].split())
    return re.sub(r"(?<=[^\s:(])\[Errno", ": [Errno", text) or "no detail"


def _uptime_seconds(text: str) -> float:
    parts = [int(p) for p in re.findall(r"\d+", text)]
    if len(parts) == 4:
        d, h, m, s = parts
        return float(((d * 24 + h) * 60 + m) * 60 + s)
    return -1.0


def _speed_mbps(text: str) -> float:
    m = re.match(r"(\d+(?:\.\d+)?)([GM])", text or "")
    if not m:
        return -1.0
    return float(m.group(1)) * (1000 if m.group(2) == "G" else 1)


def _capabilities(text: str) -> list[str]:
    names = {"repeater": "repeater", "bridge": "bridge", "router": "router", "station": "station", "telephone": "telephone",
             "wlan access point": "wlan-access-point", "docsis cable device": "docsis-cable-device", "other": "other"}
    return [names.get(t.strip().lower(), "other") for t in (text or "").split(",") if t.strip()]
