"""A simulated Ruijie RGOS 11 switch's command line: one session's interpreter (no SSH here; the
switch's state is state.py, its show outputs shows.py).

What it speaks, after ruijie.md: `>`/`#`/`(config)#`/`(config-if-<full name>)#` prompts (at most
22 characters of the hostname), `enable` with a password, `configure terminal`, `interface X`,
`exit`/`end`, the `no` forms of every command the templates emit, keyword abbreviation with
`% Ambiguous command`, `% Incomplete command.` and `% Invalid input detected at '^' marker.`,
`terminal length/width`, `write`, and the show commands push and verify use, in the real
layouts (CRLF line endings are added by the SSH layer).
"""

from __future__ import annotations

import re
from ipaddress import IPv4Network
from typing import Callable

from zcube_deploy.platforms.ruijie_rgos.lab import bgp
from zcube_deploy.platforms.ruijie_rgos.lab import router as rgos_router
from zcube_deploy.platforms.ruijie_rgos.lab.router import _ip as _is_ip  # one dotted-quad check for the whole CLI
from zcube_deploy.platforms.ruijie_rgos.lab.shows import show_interface_status, show_ip_route, show_version
from zcube_deploy.platforms.ruijie_rgos.lab.state import DEFAULT_HOSTNAME, VERSION, Interface, SwitchState, Verbatim, _remove

__all__ = ["DEFAULT_HOSTNAME", "INCOMPLETE", "INVALID", "VERSION", "Interface", "Session", "SwitchState", "Verbatim", "console_paste",
           "load_baseline"]

# Commands the lab does not model but accepts and keeps verbatim, in place, with their sub-commands
# (a site baseline: users, AAA, SNMP, NTP, logging, banners, ACLs, vty lines, routing protocols ...).
# Only these first words are accepted, so that a typo in a template still fails as on a device.
VERBATIM_GLOBAL = frozenset({
    "username", "enable", "aaa", "tacacs-server", "radius-server", "service", "snmp-server", "ntp", "logging", "clock",
    "banner", "line", "router", "bfd", "lldp", "spanning-tree", "vlan", "access-list", "ipv6", "qos", "cpu-protect",
    "class-map", "policy-map", "route-map", "key", "sflow", "errdisable", "split", "priority-flow-control", "dcb", "ecn",
    "ip", "mtu", "password", "exec-timeout", "sntp", "dns", "hostname-alias", "ssh", "crypto", "nfpp", "interface-range"})
VERBATIM_IF = frozenset({
    "bfd", "mtu", "lldp", "speed", "fec", "qos", "priority-flow-control", "pfc", "storm-control", "load-interval",
    "carrier-delay", "ip", "ipv6", "dcb", "ecn", "media-type", "service-policy", "flowcontrol", "port-speed"})
# top-level verbatim commands that open a sub-mode, and the prompt word of that mode
BLOCK_MODES = (("router ", "router"), ("line ", "line"), ("ip access-list extended ", "ext-nacl"),
               ("ip access-list standard ", "std-nacl"), ("class-map ", "cmap"), ("policy-map ", "pmap"),
               ("route-map ", "route-map"), ("vlan ", "vlan"), ("key chain ", "keychain"))
NESTED_MODES = (("address-family ", "af"), ("class ", "pmap-c"))

INVALID = "% Invalid input detected at '^' marker."
INCOMPLETE = "% Incomplete command."


def _opens_interface(line: str) -> bool:
    """``line`` is an `interface X` command (its keyword abbreviated or not)."""
    first = line.split()[0].lower()
    return len(first) >= 3 and "interface".startswith(first)


def _plen(mask: str) -> int | None:
    try:
        return IPv4Network(f"0.0.0.0/{mask}").prefixlen
    except ValueError:
        return None


class Session:
    """One CLI session (one SSH shell) on a switch. ``feed(line)`` returns the text to send back."""

    def __init__(self, state: SwitchState, enable_secret: str | None, lldp: Callable[[SwitchState, bool], str],
                 link_up: Callable[[SwitchState, str], bool], ask_password_change: bool = False,
                 reject: list[str] | None = None, routing: Callable | None = None, write_fault: str | None = None,
                 sublines: str = "reject"):
        self.sw = state
        self.secret = enable_secret
        self.lldp = lldp
        self.link_up = link_up
        self.mode = "user"
        self.interface: str | None = None
        self.stack: list[tuple[Verbatim, str]] = []  # open unmodelled sections (config-sub mode), innermost last
        self.banner: tuple[Verbatim, str] | None = None  # a multi-line banner being entered, and its delimiter
        self.awaiting: str | None = "password_change" if ask_password_change else None
        self.closed = False
        self.orphan = False  # the last unindented line was a rejected `interface X`: its indented sub-lines are rejected
        # what happens to the sub-lines of a rejected `interface X`: "reject" (each rejected, the strict CLI) or
        # "global" (the lenient-CLI fault: the session is left in global configuration mode, where each sub-line
        # that is a valid global command is accepted, e.g. a stray `bfd interval ...`, and the others rejected)
        self.sublines = sublines
        self.abort = False  # set by a command: the connection drops at once, before the answer (the lab's server does it)
        self.write_fault = write_fault  # the lab fault on `write`: None, "fail" (nothing saved), "drop" (saved, answer lost), "fail_once"
        self.reject = [r.strip() for r in (reject or [])]
        self.commands = 0
        self.routing = routing  # SwitchState -> (lab.bgp.Model, switch name), for BGP/BFD shows and B routes

    # ---- prompt
    def prompt(self) -> str:
        host = self.sw.hostname[:22]
        if self.awaiting == "enable_password":
            return "Password:"
        if self.awaiting == "password_change":
            return "Do you want to change the password? [Y/N]:"
        if self.mode == "user":
            return f"{host}>"
        if self.mode == "enable":
            return f"{host}#"
        if self.mode == "config":
            return f"{host}(config)#"
        if self.mode in rgos_router.ROUTER_MODES:
            return f"{host}({self.mode})#"
        if self.mode == "config-sub":
            return f"{host}(config-{self.stack[-1][1]})#"
        return f"{host}(config-if-{self.interface})#"

    @property
    def echo(self) -> bool:
        return self.awaiting != "enable_password"

    # ---- input
    def feed(self, raw: str) -> str:
        line = raw.rstrip("\r\n")
        if self.awaiting == "password_change":
            self.awaiting = None
            return ""
        if self.awaiting == "enable_password":
            self.awaiting = None
            if line == self.secret:
                self.mode = "enable"
                return ""
            return "% Access denied."
        if self.banner is not None:  # banner text, verbatim, up to the line carrying the delimiter
            block, delim = self.banner
            block.body.append(line)
            if delim in line:
                self.banner = None
            return ""
        stripped = line.strip()
        if not stripped or stripped.startswith("!"):
            return ""
        self.commands += 1
        indent = len(line) - len(line.lstrip())
        if self.mode.startswith("config"):
            self.sw.config_log.append(stripped)
            self.sw.generation += 1
            if indent and self.orphan:
                # a sub-command of a rejected `interface` line: rejected too, never applied to the mode the
                # session is still in (global, or the previous interface). What RGOS does is not known (ruijie.md).
                return self._invalid(line, indent)
            self.orphan = False
            if any(stripped == r or stripped.startswith(r + " ") for r in self.reject):
                text = self._invalid(line, 0)  # the caret under the prompt the line was typed at
                self._rejected_interface(stripped)
                return text
        entered = self.mode
        try:
            if self.mode == "config-sub":
                return self._sub_line(line)
            return self._dispatch(line)
        except _CliError as err:
            if entered.startswith("config") and not indent:
                self._rejected_interface(stripped)
            return err.text

    def _rejected_interface(self, stripped: str) -> None:
        """A configuration line was rejected: when it is `interface X`, its sub-lines follow the ``sublines`` fault."""
        if not _opens_interface(stripped):
            return
        if self.sublines == "global":  # the lenient CLI: the sub-lines are taken in global configuration mode
            self.mode, self.interface, self.stack = "config", None, []
        else:
            self.orphan = True

    def _invalid(self, line: str, offset: int) -> str:
        col = len(self.prompt()) + offset
        return " " * col + "^\n" + INVALID

    def _match(self, line: str, words: list[str], idx: int, options: list[str]) -> str:
        if idx >= len(words):
            raise _CliError(INCOMPLETE)
        token = words[idx].lower()
        if token in options:
            return token
        found = [o for o in options if o.startswith(token)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise _CliError(f'% Ambiguous command: "{" ".join(words[: idx + 1])}"')
        raise _CliError(self._invalid(line, _offset(line, idx)))

    def _dispatch(self, line: str) -> str:
        words = line.split()
        entered = self.mode
        while self.mode in rgos_router.ROUTER_MODES and words[0].lower() not in ("exit", "end", "do"):
            try:
                self.mode = rgos_router.router_command(self.sw, self.mode, words)
                return ""
            except rgos_router.RouterError as err:
                raise _CliError(self._router_error(line, err, 1 if words[0].lower() == "no" else 0)) from None
            except rgos_router.Fallback:  # not a command of this sub-mode: the enclosing mode takes it
                self.mode = "config-router" if self.mode == "config-router-af" else "config"
        if entered != self.mode:
            try:
                return self._dispatch_mode(line, words)
            except _CliError:
                self.mode = entered  # an invalid line leaves the router sub-mode as it was
                raise
        return self._dispatch_mode(line, words)

    def _dispatch_mode(self, line: str, words: list[str]) -> str:
        mode = self.mode
        common = ["exit", "end", "show", "terminal", "write", "copy", "configure", "enable", "disable", "ping"]
        if mode == "user":
            cmd = self._match(line, words, 0, ["enable", "exit", "show", "terminal", "ping"])
        elif mode == "enable":
            cmd = self._match(line, words, 0, [c for c in common if c != "enable"] + ["enable"])
        else:
            first = words[0].lower()
            modelled = rgos_router.modelled(mode, words)  # `router bgp`, interface `bfd interval` (and `no`)
            if modelled:
                return getattr(self, f"_cmd_{modelled}")(line, words, negate=first == "no")
            if mode == "config-if" and first in VERBATIM_IF and first not in ("ip", "mtu"):
                return self._verbatim_if(line)
            if first in VERBATIM_GLOBAL and first not in ("ip", "mtu", "enable"):
                return self._verbatim_top(line)
            if first == "enable" and len(words) > 1:
                return self._verbatim_top(line)
            if first == "no" and len(words) > 1:
                second = words[1].lower()
                if mode == "config-if" and second in VERBATIM_IF and second not in ("ip", "mtu"):
                    return self._no_verbatim_if(line)
                if second in VERBATIM_GLOBAL and second not in ("ip", "mtu"):
                    return self._no_verbatim_top(line)
            cmd = self._match(line, words, 0, ["hostname", "interface", "ip", "mtu", "no", "end", "exit", "description",
                                               "switchport", "shutdown", "do"])
        return getattr(self, f"_cmd_{cmd.replace('-', '_')}")(line, words)

    # ---- unmodelled configuration, kept verbatim
    def _verbatim_top(self, line: str) -> str:
        self._need_config(line)
        text = " ".join(line.split())
        if self.mode == "config-if":  # a global command in interface mode leaves the interface, as on RGOS
            self.mode, self.interface = "config", None
        existing = self.sw.find_verbatim(text)
        block = existing or Verbatim(text)
        if existing is None:
            self.sw.verbatim[self.sw.region][text] = block
        mode = next((m for prefix, m in BLOCK_MODES if text.startswith(prefix)), None)
        if mode is not None:
            self.mode, self.stack = "config-sub", [(block, mode)]
        words = text.split()
        if words[0] == "banner" and len(words) > 2:
            delim = words[2][:2] if words[2].startswith("^") else words[2][:1]
            if delim not in text.split(None, 2)[2][len(delim):]:
                block.body.clear()
                self.banner = (block, delim)  # multi-line: text follows up to the delimiter
        return ""

    def _no_verbatim_top(self, line: str) -> str:
        self.sw.remove_verbatim(line.split(None, 1)[1])
        return ""

    def _verbatim_if(self, line: str) -> str:
        text = " ".join(line.split())
        itf = self.sw.interfaces[self.interface]
        if itf.extra is None:
            itf.extra = {}
        itf.extra.setdefault(text, None)
        return ""

    def _no_verbatim_if(self, line: str) -> str:
        itf = self.sw.interfaces[self.interface]
        _remove(itf.extra or {}, line.split(None, 1)[1])
        return ""

    def _sub_line(self, line: str) -> str:
        """A line inside an unmodelled section: indentation (when sent) places it at its depth."""
        words = line.split()
        indent = len(line) - len(line.lstrip(" "))
        if indent and indent < len(self.stack):
            del self.stack[indent:]
        first = words[0].lower()
        if first == "exit" or first == "exit-address-family":
            self.stack.pop()
            if not self.stack:
                self.mode = "config"
            return ""
        if first == "end":
            self.mode, self.stack = "enable", []
            return ""
        if first == "do":
            return self._cmd_do(line, words)
        block = self.stack[-1][0]
        text = " ".join(words)
        if first == "no" and len(words) > 1:
            _remove(block.children, text.split(None, 1)[1])
            return ""
        existing = block.children.get(text)
        child = existing or Verbatim(text)
        if existing is None:
            block.children[text] = child
        mode = next((m for prefix, m in NESTED_MODES if text.startswith(prefix)), None)
        if mode is not None:
            self.stack.append((child, f"{self.stack[-1][1]}-{mode}" if mode == "af" else mode))
        return ""

    # ---- exec commands
    def _cmd_enable(self, line: str, words: list[str]) -> str:
        if self.mode in ("config", "config-if"):
            raise _CliError(self._invalid(line, 0))
        if self.mode == "enable":
            return ""
        if self.secret is None:  # no enable password configured (a factory-fresh unit's console)
            self.mode = "enable"
            return ""
        self.awaiting = "enable_password"
        return ""

    def _cmd_disable(self, line, words):
        self.mode = "user"
        return ""

    def _cmd_exit(self, line, words):
        if self.mode == "config-router-af":
            self.mode = "config-router"
        elif self.mode in ("config-if", "config-router"):
            self.mode, self.interface = "config", None
        elif self.mode == "config":
            self.mode = "enable"
        else:
            self.closed = True
        return ""

    def _cmd_end(self, line, words):
        if self.mode.startswith("config"):
            self.mode, self.interface = "enable", None
            return ""
        raise _CliError(self._invalid(line, 0))

    def _cmd_terminal(self, line, words):
        sub = self._match(line, words, 1, ["length", "width", "monitor"])
        if sub in ("length", "width"):
            if len(words) < 3:
                raise _CliError(INCOMPLETE)
            if not words[2].isdigit():
                raise _CliError(self._invalid(line, _offset(line, 2)))
        return ""

    def _cmd_ping(self, line, words):
        raise _CliError("% Ping is not available in the lab.")

    def _cmd_configure(self, line, words):
        if self.mode != "enable":
            raise _CliError(self._invalid(line, 0))
        if len(words) > 1:
            self._match(line, words, 1, ["terminal"])
        self.mode = "config"
        return "Enter configuration commands, one per line.  End with CNTL/Z."

    def _cmd_write(self, line, words):
        if self.mode != "enable":
            raise _CliError(self._invalid(line, 0))
        if len(words) > 1:
            self._match(line, words, 1, ["memory"])
        if self.write_fault == "fail" or (self.write_fault == "fail_once" and not self.sw.write_failures):
            self.sw.write_failures += 1  # a lab fault; the real failure text is not known (ruijie.md)
            return "Building configuration...\n% Error: failed to write the configuration to flash:config.text."
        self.sw.startup = self.sw.running_config(header=False)
        self.sw.writes += 1
        if self.write_fault == "drop":  # saved, but the session drops before the answer
            self.abort = True
        return "Building configuration...\n[OK]"

    def _cmd_copy(self, line, words):
        if [w.lower() for w in words[1:]] != ["running-config", "startup-config"]:
            raise _CliError(self._invalid(line, _offset(line, 1)))
        return self._cmd_write(line, ["write"])

    def _cmd_do(self, line, words):
        rest = line.split(None, 1)[1] if len(words) > 1 else ""
        if not rest:
            raise _CliError(INCOMPLETE)
        return self._cmd_show(rest, rest.split()) if rest.split()[0].lower().startswith("sh") else self._invalid(line, 0)

    def _cmd_show(self, line, words):
        if self.mode not in ("user", "enable") and words[0].lower() != "show":
            raise _CliError(self._invalid(line, 0))
        sub = self._match(line, words, 1, ["running-config", "startup-config", "version", "interface", "lldp", "ip", "clock", "cpu", "bfd"])
        if sub == "running-config":
            if self.mode == "user":
                raise _CliError(self._invalid(line, _offset(line, 1)))
            return self.sw.running_config().rstrip("\n")
        if sub == "startup-config":
            return self.sw.startup.rstrip("\n")
        if sub == "version":
            return show_version(self.sw)
        if sub == "clock":
            return "00:00:00 UTC Mon, Jan 1, 2024"
        if sub == "cpu":
            return "CPU utilization in five seconds: 3.1%"
        if sub == "interface":
            self._match(line, words, 2, ["status"])
            return show_interface_status(self.sw, self.link_up)
        if sub == "lldp":
            self._match(line, words, 2, ["neighbors"])
            detail = len(words) > 3 and self._match(line, words, 3, ["detail"]) == "detail"
            return self.lldp(self.sw, bool(detail))
        if sub == "bfd":
            self._match(line, words, 2, ["neighbors"])
            return self._protocols("bfd")
        if self._match(line, words, 2, ["route", "bgp"]) == "bgp":
            self._match(line, words, 3, ["summary"])
            return self._protocols("bgp")
        extra = None
        if self.routing is not None:
            extra = bgp.route_lines(*self.routing(self.sw))
        return show_ip_route(self.sw, self.link_up, extra)

    def _protocols(self, what: str) -> str:
        if self.routing is None:
            return "% BGP instance is not running." if what == "bgp" else ""
        model, name = self.routing(self.sw)
        if what == "bgp":
            return bgp.show_bgp_summary(model, name)
        return bgp.show_bfd_neighbors(model, name, lambda n: self.sw.abbreviations.get(n, n))

    def _router_error(self, line: str, err: Exception, shift: int) -> str:
        text = str(err)
        if text == "incomplete":
            return INCOMPLETE
        if text.startswith("invalid:"):
            return self._invalid(line, _offset(line, int(text.split(":")[1]) + shift))
        return text

    def _cmd_router(self, line, words, negate=False):
        self._need_config(line)
        try:
            mode = rgos_router.router_bgp(self.sw, words[1:] if negate else words, negate)
        except rgos_router.RouterError as err:
            raise _CliError(self._router_error(line, err, 1 if negate else 0)) from None
        if mode:
            self.mode, self.interface = mode, None
            self.sw.bgp_af = None
        return ""

    def _cmd_bfd(self, line, words, negate=False):
        self._need_if(line)
        itf = self.sw.interfaces[self.interface]
        if negate:
            if len(words) < 3 or not "interval".startswith(words[2].lower()):
                raise _CliError(INCOMPLETE if len(words) < 3 else self._invalid(line, _offset(line, 2)))
            itf.bfd = None
            return ""
        if not itf.routed:
            raise _CliError("% BFD needs a routed port: configure 'no switchport' first.")
        try:
            itf.bfd = rgos_router.bfd_line(words)
        except rgos_router.RouterError as err:
            raise _CliError(self._router_error(line, err, 0)) from None
        return ""

    # ---- configuration commands
    def _need_config(self, line):
        if self.mode not in ("config", "config-if"):
            raise _CliError(self._invalid(line, 0))

    def _cmd_hostname(self, line, words):
        self._need_config(line)
        if len(words) < 2:
            raise _CliError(INCOMPLETE)
        if len(words) > 2 or not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$", words[1]):
            raise _CliError(self._invalid(line, _offset(line, 2 if len(words) > 2 else 1)))
        self.sw.hostname = words[1]
        return ""

    def _cmd_mtu(self, line, words):
        self._need_config(line)
        if self.mode == "config-if":  # interface mtu: not modelled, kept verbatim
            return self._verbatim_if(line)
        self._match(line, words, 1, ["forwarding"])
        if len(words) < 3:
            raise _CliError(INCOMPLETE)
        if not words[2].isdigit() or not 1500 <= int(words[2]) <= 9216:
            raise _CliError(self._invalid(line, _offset(line, 2)))
        self.sw.global_lines = [g for g in self.sw.global_lines if not g.startswith("mtu forwarding ")] + [f"mtu forwarding {words[2]}"]
        return ""

    def _route_words(self, line, words, start) -> str:
        if len(words) < start + 3:
            raise _CliError(INCOMPLETE)
        net, mask, nh = words[start:start + 3]
        if nh.lower() in ("null", "null0"):  # a discard route: `ip route N M Null 0`
            tail = words[start + 2:]
            if len(tail) == 1 and nh.lower() == "null":
                raise _CliError(INCOMPLETE)
            if tail not in (["Null", "0"], ["null", "0"], ["Null0"], ["null0"]) or not _is_ip(net) or _plen(mask) is None:
                raise _CliError(self._invalid(line, _offset(line, start + 2)))
            return f"ip route {net} {mask} Null 0"
        for i, tok in enumerate((net, mask, nh)):
            if not _is_ip(tok) or (i == 1 and _plen(tok) is None):
                raise _CliError(self._invalid(line, _offset(line, start + i)))
        if len(words) > start + 3:
            raise _CliError(self._invalid(line, _offset(line, start + 3)))
        return f"ip route {net} {mask} {nh}"

    def _cmd_ip(self, line, words):
        self._need_config(line)
        if len(words) > 1 and not any(k.startswith(words[1].lower()) for k in ("route", "address")) or \
                (len(words) > 2 and words[1].lower() == "route" and not _is_ip(words[2])):
            # ip ssh / ip access-list / ip route static bfd ...: not modelled, kept verbatim
            return self._verbatim_if(line) if self.mode == "config-if" else self._verbatim_top(line)
        sub = self._match(line, words, 1, ["route", "address"])
        if sub == "route":
            text = self._route_words(line, words, 2)
            self.sw.routes.setdefault(text, None)
            return ""
        if self.mode != "config-if":
            raise _CliError(self._invalid(line, _offset(line, 1)))
        if len(words) < 4:
            raise _CliError(INCOMPLETE)
        addr, mask = words[2], words[3]
        if not _is_ip(addr):
            raise _CliError(self._invalid(line, _offset(line, 2)))
        if not _is_ip(mask) or _plen(mask) is None:
            raise _CliError(self._invalid(line, _offset(line, 3)))
        itf = self.sw.interfaces[self.interface]
        if itf.physical and not itf.routed:
            raise _CliError("% Interface is a switch port: configure 'no switchport' first.")
        itf.address = (addr, mask)
        return ""

    def _cmd_interface(self, line, words):
        self._need_config(line)
        if len(words) < 2:
            raise _CliError(INCOMPLETE)
        name = self.sw.resolve_interface(words[1:])
        if name is None:
            raise _CliError(self._invalid(line, _offset(line, 1)))
        if name not in self.sw.interfaces:
            self.sw.interfaces[name] = Interface(name, physical=False, routed=True)
        self.mode, self.interface = "config-if", name
        return ""

    def _cmd_description(self, line, words):
        self._need_if(line)
        if len(words) < 2:
            raise _CliError(INCOMPLETE)
        self.sw.interfaces[self.interface].description = line.strip().split(None, 1)[1][:80]
        return ""

    def _cmd_switchport(self, line, words):
        self._need_if(line)
        itf = self.sw.interfaces[self.interface]
        if not itf.physical:
            raise _CliError(self._invalid(line, 0))
        itf.routed = False
        itf.address = None  # back to a layer-2 port: the address goes
        return ""

    def _cmd_shutdown(self, line, words):
        self._need_if(line)
        self.sw.interfaces[self.interface].shutdown = True
        return ""

    def _need_if(self, line):
        if self.mode != "config-if":
            raise _CliError(self._invalid(line, 0))

    def _cmd_no(self, line, words):
        self._need_config(line)
        sub = self._match(line, words, 1, ["hostname", "ip", "mtu", "interface", "description", "switchport", "shutdown"])
        sw = self.sw
        if sub == "hostname":
            sw.hostname = DEFAULT_HOSTNAME
        elif sub == "mtu" and self.mode == "config-if":  # the interface mtu, kept verbatim as `mtu N` was
            return self._no_verbatim_if(line)
        elif sub == "mtu":
            self._match(line, words, 2, ["forwarding"])
            sw.global_lines = [g for g in sw.global_lines if not g.startswith("mtu forwarding ")]
        elif sub == "ip" and len(words) > 2 and (not any(k.startswith(words[2].lower()) for k in ("route", "address"))
                                                 or (len(words) > 3 and words[2].lower() == "route" and not _is_ip(words[3]))):
            if self.mode == "config-if":
                return self._no_verbatim_if(line)
            self.sw.remove_verbatim(line.split(None, 1)[1])
        elif sub == "ip":
            what = self._match(line, words, 2, ["route", "address"])
            if what == "route":
                text = self._route_words(line, words, 3)
                if text not in sw.routes:
                    return "% Static route does not exist."
                del sw.routes[text]
            else:
                self._need_if(line)
                sw.interfaces[self.interface].address = None
        elif sub == "interface":
            name = sw.resolve_interface(words[2:]) if len(words) > 2 else None
            if name is None or name not in sw.interfaces:
                raise _CliError(INCOMPLETE if len(words) <= 2 else self._invalid(line, _offset(line, 2)))
            if sw.interfaces[name].physical:
                return "% Physical interfaces cannot be removed."
            del sw.interfaces[name]
        else:
            self._need_if(line)
            itf = sw.interfaces[self.interface]
            if sub == "description":
                itf.description = None
            elif sub == "switchport":
                if not itf.physical:
                    raise _CliError(self._invalid(line, 0))
                itf.routed = True
            else:
                itf.shutdown = False
        return ""


class _CliError(Exception):
    def __init__(self, text: str):
        self.text = text


def _offset(line: str, idx: int) -> int:
    """Column of word ``idx`` in ``line``."""
    pos = 0
    for i, m in enumerate(re.finditer(r"\S+", line)):
        if i == idx:
            return m.start()
        pos = m.end() + 1
    return pos


def load_baseline(sw: SwitchState, text: str) -> None:
    """Apply a site baseline (RGOS config text) through the CLI, as an operator would have typed it.

    Unmodelled sections keep their order: those before the first interface stand before the
    interfaces, those after a static route after the routes. The startup config is saved.
    Raises ValueError naming the first line the CLI rejects.
    """
    sw.region = "pre"
    sess = Session(sw, enable_secret="", lldp=lambda *_: "", link_up=lambda *_: True)
    sess.mode = "config"
    banner_line = 0
    for n, raw in enumerate(text.replace("\r", "").splitlines(), 1):
        if sess.banner is not None:  # a multi-line banner's text, verbatim, up to its delimiter
            sess.feed(raw)
            continue
        if not raw.strip() or raw.lstrip().startswith("!") or re.match(r"^(version |end$|Building |Current configuration)", raw):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if indent == 0:
            while sess.mode in ("config-if", "config-sub"):
                sess.feed("exit")
        elif sess.mode == "config":
            raise ValueError(f"line {n}: {raw.strip()!r}: an indented line outside any section")
        reply = sess.feed(raw)
        if sess.banner is not None:
            banner_line = n
        if "%" in reply:
            raise ValueError(f"line {n}: {raw.strip()!r}: {reply.strip().splitlines()[-1]}")
        if not sess.mode.startswith("config") or sess.awaiting:
            raise ValueError(f"line {n}: {raw.strip()!r}: leaves configuration mode (a baseline is configuration lines only)")
        if indent == 0:
            if raw.startswith("interface ") and sw.region == "pre":
                sw.region = "mid"
            elif raw.startswith("ip route ") and sess.mode == "config" and sw.region != "post" and sw.routes:
                sw.region = "post"
    if sess.banner is not None:
        raise ValueError(f"line {banner_line}: {sess.banner[0].text!r}: the banner is not closed by its delimiter "
                         f"{sess.banner[1]!r}")
    sw.config_log.clear()
    sw.region = "mid"
    sw.startup = sw.running_config(header=False)


def console_paste(sw: SwitchState, lines: list[str], enable_secret: str | None = None) -> list[tuple[int, str, str]]:
    """Lines pasted at the switch's serial console, one by one through the CLI, from the user prompt on.

    ``enable_secret`` None: ``enable`` asks no password (a unit with no enable password configured). A
    top-level line typed in a sub-mode is taken in global configuration mode (the CLI leaves the
    sub-mode first, as it does for a global command in interface mode). A rejected line does not stop
    the paste (a technician's paste runs on): returns (line number, line, the CLI's error) of each.
    """
    sess = Session(sw, enable_secret=enable_secret, lldp=lambda *_: "", link_up=lambda *_: True)
    rejected = []
    for n, raw in enumerate(lines, 1):
        words = raw.split()
        if words and raw[0] not in " \t" and not words[0].startswith("!") and words[0].lower() not in ("exit", "end"):
            while sess.mode in ("config-if", "config-sub"):
                sess.feed("exit")
        reply = sess.feed(raw)
        if "%" in reply:
            rejected.append((n, raw, reply.strip().splitlines()[-1]))
    return rejected
