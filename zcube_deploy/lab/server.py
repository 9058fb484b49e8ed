"""The lab's SSH side: one asyncssh listener per simulated switch, all on 127.0.0.1, one process.

Credentials come from ZCUBE_USERNAME / ZCUBE_PASSWORD / ZCUBE_ENABLE_SECRET (defaults in access.py) and
are never written anywhere. Each switch has its own ed25519 host key; a known_hosts file lists
them as ``[127.0.0.1]:PORT``.
"""

from __future__ import annotations

import asyncio
import ctypes
import hmac
import json
import logging
import os
import socket
import threading
from contextlib import contextmanager
from pathlib import Path

import asyncssh

from zcube_deploy.access import lab_credentials
from zcube_deploy.lab.control import hold_folder, release_folder
from zcube_deploy.lab.core import LabModel
from zcube_deploy.lab.inject import apply_faults, load_faults
from zcube_deploy.plan.io import wiring_identity, write_canonical
from zcube_deploy.plan.model import projection
from zcube_deploy.safety import redact_secrets

HOST = "127.0.0.1"
STREAM_BYTES = 64 * 1024  # a long answer is written in pieces of about this size (two or three SSH packets)
# what the lab reads of a plan (the rest of a 64k-GPU plan stays on disk)
PLAN_FIELDS = projection(
    cables={"id", "kind", "a", "b"}, cluster=None, port_map=None, models=None, settings=None, addressing=None,
    switches={"name", "mgmt_address", "group"}, servers={"name": None, "nics": {"port", "mac"}}, routing=None,
)

class _Shell(asyncssh.SSHServerSession):
    """A raw-mode shell: our own echo and line discipline, like a switch's console over SSH."""

    def __init__(self, lab: "Lab", name: str):
        self.lab, self.name = lab, name
        self.faults = lab.model.faults[name]
        self.session = lab.model.new_session(name)
        self.buf = ""
        self.echoed = 0  # characters of self.buf already echoed
        self.idle = False
        self.can_write = asyncio.Event()
        self.can_write.set()
        self.escape = False
        self.last_cr = False
        self.queue: asyncio.Queue[tuple[str, int] | None] = asyncio.Queue()
        self.chan = None
        self.task = None

    def connection_made(self, chan) -> None:
        self.chan = chan

    def pty_requested(self, term_type, term_size, term_modes) -> bool:
        return True

    def shell_requested(self) -> bool:
        return True

    def exec_requested(self, command) -> bool:
        return False

    def session_started(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())

    def _write(self, text: str) -> None:
        if self.chan is not None and not self.chan.is_closing():
            self.chan.write(text.replace("\r\n", "\n").replace("\n", "\r\n"))

    async def _run(self) -> None:
        try:
            if self.faults.no_banner:
                await asyncio.sleep(3600)
            if self.faults.banner_delay:
                await asyncio.sleep(self.faults.banner_delay)
            self._write("\n" + self.session.prompt())
            while True:
                self.idle = True
                item = await self.queue.get()
                self.idle = False
                if item is None:
                    break
                line, echoed = item
                echo = self.session.echo
                if self.faults.delay:
                    await asyncio.sleep(self.faults.delay)  # a busy device: the echo and the answer both come late
                self._write((line[echoed:] if echo else "") + "\n")
                out = self.session.feed(line)
                if self.session.abort or (self.faults.drop_after is not None and self.session.commands >= self.faults.drop_after):
                    self.lab.drops[self.name] = self.lab.drops.get(self.name, 0) + 1
                    self.chan.get_extra_info("connection").abort()
                    return
                if self.session.closed:
                    self._write((out + "\n" if out else ""))
                    self.chan.exit(0)
                    return
                if not isinstance(out, str):  # a long answer, streamed: at most one window buffered per session
                    await self._stream(out)
                    out = ""
                self._write((out + "\n" if out else "") + self.session.prompt())
        except (asyncio.CancelledError, ConnectionError, BrokenPipeError):
            pass

    async def _stream(self, chunks) -> None:
        """Write a long answer's chunks (a neighbour each) in pieces of about STREAM_BYTES: a write is an SSH packet or
        more, and the packet's cost (framing, MAC, a send) is per write, not per byte; wait while the client's window is full."""
        piece: list[str] = []
        size = 0
        for chunk in chunks:
            piece.append(chunk)
            size += len(chunk)
            if size >= STREAM_BYTES:
                self._write("".join(piece))
                piece, size = [], 0
                await self.can_write.wait()
        if piece:
            self._write("".join(piece))
            await self.can_write.wait()

    def data_received(self, data: str, datatype) -> None:
        # Characters are echoed at once only while the device is idle; otherwise (type-ahead) the
        # line is echoed when the CLI gets to it, so echo, output and prompts never interleave.
        echo: list[str] = []
        for ch in data:
            if self.escape:  # skip terminal escape sequences (arrow, Home/End keys): ESC [ ... final byte
                if ch.isalpha() or ch == "~":
                    self.escape = False
                continue
            if ch == "\x1b":
                self.escape = True
                continue
            if ch == "\n" and self.last_cr:
                self.last_cr = False
                continue
            self.last_cr = ch == "\r"
            if ch in "\r\n":
                self.queue.put_nowait((self.buf, self.echoed))
                self.buf, self.echoed = "", 0
            elif ch in "\x7f\x08":
                if self.buf:
                    self.buf = self.buf[:-1]
                    if self.echoed > len(self.buf):
                        self.echoed = len(self.buf)
                        echo.append("\b \b")
            elif ch == "\x1a":  # Ctrl-Z: end
                self.queue.put_nowait(("end", 0))
            elif ch == "\x03":
                self.buf, self.echoed = "", 0
                self.queue.put_nowait(("", 0))
            elif ch >= " " or ch == "\t":
                self.buf += ch
                if self.idle and self.queue.empty() and self.session.echo and not self.faults.delay and self.echoed == len(self.buf) - 1:
                    echo.append(ch)
                    self.echoed += 1
        if echo:
            self._write("".join(echo))

    def pause_writing(self) -> None:
        self.can_write.clear()

    def resume_writing(self) -> None:
        self.can_write.set()

    def eof_received(self) -> bool:
        self.queue.put_nowait(None)
        return False

    def connection_lost(self, exc) -> None:
        self.queue.put_nowait(None)


class _Server(asyncssh.SSHServer):
    def __init__(self, lab: "Lab", name: str):
        self.lab, self.name = lab, name

    def connection_made(self, conn) -> None:
        self.lab.logins[self.name] = self.lab.logins.get(self.name, 0) + 1
        if self.lab.model.ssh_refusal(self.name):  # a factory-fresh unit: nothing answers on its management address yet
            self.lab.refused[self.name] = self.lab.refused.get(self.name, 0) + 1
            conn.abort()
            return
        self.conn = conn
        self.lab.conns.setdefault(self.name, set()).add(conn)
        sock = conn.get_extra_info("socket")
        if sock is not None:  # small interactive writes: no Nagle delay
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc) -> None:
        self.lab.conns.get(self.name, set()).discard(getattr(self, "conn", None))

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        if self.lab.model.faults[self.name].refuse_login:
            return False
        user, pw, _ = self.lab.credentials
        return hmac.compare_digest(username, user) and hmac.compare_digest(password, pw)

    def session_requested(self):
        return _Shell(self.lab, self.name)


def return_free_memory() -> None:
    """Give the C heap's free pages back to the system (glibc's malloc_trim; elsewhere nothing).

    Reading a 64k plan parses ~200 MB of JSON and keeps a fraction; glibc keeps the rest mapped, and the
    lab's own objects (Python's arenas, mapped apart) cannot reuse it: at 512 switches this is ~270 MiB
    of resident memory nobody uses (benchmarks/lab.py, docs/benchmarks.md)."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


class Lab:
    """A running lab: model, faults, listeners. Start with ``start()`` in an event loop, or use ``running_lab``."""

    def __init__(self, plan: dict, faults: str | dict | None = None, seed: int = 0, port_base: int | None = None,
                 baseline: str | None = None, baseline_name: str = "baseline"):
        self.plan = plan
        return_free_memory()  # what reading the plan parsed and dropped: the switches are built in fresh memory
        spec = faults if isinstance(faults, dict) else load_faults(faults, plan, seed)  # a bad file: refused before the switches are built
        self.model = LabModel(plan, baseline, baseline_name)
        self.credentials = lab_credentials()
        self.model.enable_secret = self.credentials[2]
        self.faults_spec = spec
        source = f"file {faults}" if isinstance(faults, str) and not faults.startswith("random:") else "faults"
        self.expected = apply_faults(self.model, spec, source)
        self.port_base = port_base
        self.endpoints: dict[str, tuple[str, int]] = {}
        self.host_keys: dict[str, str] = {}
        self.acceptors: list = []
        self.logins: dict[str, int] = {}  # SSH connections opened to each switch (refused ones included)
        self.refused: dict[str, int] = {}  # connections a factory-fresh unit refused (no console bootstrap yet)
        self.drops: dict[str, int] = {}
        self.conns: dict[str, set] = {}  # open connections per switch
        self.acceptor_of: dict[str, object] = {}

    async def start(self) -> None:
        logging.getLogger("asyncio").setLevel(logging.ERROR)  # writes to sessions the client already closed
        logging.getLogger("asyncssh").setLevel(logging.WARNING)
        for i, name in enumerate(sorted(self.model.switches)):
            key = asyncssh.generate_private_key("ssh-ed25519")
            port = 0 if self.port_base is None else self.port_base + i
            acc = await asyncssh.create_server(lambda n=name: _Server(self, n), HOST, port, server_host_keys=[key],
                                               encoding="utf-8", line_editor=False, keepalive_interval=0,
                                               login_timeout=30)
            real_port = acc.sockets[0].getsockname()[1]
            self.acceptors.append(acc)
            self.acceptor_of[name] = acc
            self.endpoints[name] = (HOST, real_port)
            self.host_keys[name] = key.export_public_key("openssh").decode().strip()

    async def stop(self) -> None:
        for acc in self.acceptors:
            acc.close()
        for acc in self.acceptors:
            try:
                await asyncio.wait_for(acc.wait_closed(), 5)
            except (asyncio.TimeoutError, Exception):
                pass
        self.acceptors = []

    def known_hosts_text(self) -> str:
        lines = []
        for name in sorted(self.endpoints):
            host, port = self.endpoints[name]
            key_type, key_b64 = self.host_keys[name].split()[:2]
            lines.append(f"[{host}]:{port} {key_type} {key_b64}")
        return "\n".join(lines) + "\n"

    def write_files(self, out_dir: str | Path) -> dict:
        """DIR/lab.json, DIR/known_hosts, DIR/faults.json (applied faults + expected findings), DIR/wiring.json."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        kh = out / "known_hosts"
        kh.write_text(self.known_hosts_text())
        doc = {"switches": {n: {"host": h, "port": p} for n, (h, p) in sorted(self.endpoints.items())},
               "known_hosts": str(kh.resolve()), "plan": wiring_identity(self.plan), "pid": os.getpid()}
        (out / "faults.json").write_text(json.dumps({"faults": self.faults_spec, "expected_findings": self.expected}, indent=1, sort_keys=True) + "\n")
        self.write_wiring(out)
        # lab.json last: its appearance tells other processes (and the user) that the lab is ready
        tmp = out / "lab.json.tmp"
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        tmp.replace(out / "lab.json")
        return doc

    def apply_operations(self, ops: list[dict]) -> int:
        """Physical fixes (see Wiring.apply_all: all of them or, with a ValueError, none); call on the lab's loop thread."""
        return self.model.wiring.apply_all(ops)

    def replace_unit(self, name: str) -> dict:
        """A dead switch swapped for a factory-fresh unit (LabModel.replace_unit); the old unit's sessions drop."""
        for conn in list(self.conns.pop(name, ())):
            conn.abort()
        key = asyncssh.generate_private_key("ssh-ed25519")  # the new unit's own host key (known_hosts still pins the old one)
        self.acceptor_of[name].update(server_host_keys=[key])
        self.host_keys[name] = key.export_public_key("openssh").decode().strip()
        return self.model.replace_unit(name)

    def console(self, name: str, lines: list[str]) -> dict:
        """Lines pasted at ``name``'s serial console: {"lines": how many, "rejected": [[number, line, error], ...]}."""
        platform = self.plan["models"]["switch"]["platform"]
        rejected = [[n, redact_secrets(line, platform), why] for n, line, why in self.model.console(name, lines)]
        return {"switch": name, "lines": len(lines), "rejected": rejected,
                "ssh": self.model.ssh_refusal(name) or "open"}

    def _request(self, doc: dict) -> dict:
        """A request of control.json other than wiring operations: {"replace": NAME} or {"console": {"switch", "lines"}}."""
        if "replace" in doc:
            name = doc["replace"]
            if name not in self.model.switches:
                raise ValueError(f"no switch {name!r} in this lab")
            return self.replace_unit(name)
        con = doc["console"]
        if not isinstance(con, dict) or con.get("switch") not in self.model.switches or not isinstance(con.get("lines"), list) \
                or not all(isinstance(x, str) for x in con["lines"]):
            raise ValueError("a console request is {switch: a switch of this lab, lines: [text, ...]}")
        return self.console(con["switch"], con["lines"])

    def apply_stage(self, doc: dict) -> dict:
        """A migration stage's hands-on work (`zcube lab fix --stage`): {"operations": the wiring operations of its
        moves, "rerole": [{"switch", "ports", "console"}, ...] for each switch taking a role}. The whole request is
        checked first and the wiring applied whole (or, with a ValueError, nothing); then each switch's cages are
        broken out for its role's ``ports`` and its ``console`` lines (hostname, management address) pasted at its
        console. Answers {"operations": n, "rerole": [{"switch", "added", "removed", "rejected"}, ...]}."""
        rerole = doc.get("rerole")
        if not isinstance(rerole, list) or not all(
                isinstance(r, dict) and r.get("switch") in self.model.switches and isinstance(r.get("ports"), list)
                and all(isinstance(x, str) for x in r["ports"]) and isinstance(r.get("console"), list)
                and all(isinstance(x, str) for x in r["console"]) for r in rerole):
            raise ValueError("rerole: expected a list of {switch: a switch of this lab, ports: [name, ...], console: [line, ...]}")
        n = self.apply_operations(doc.get("operations") or [])
        platform = self.plan["models"]["switch"]["platform"]
        done = []
        for r in rerole:
            row = self.model.rebreak(r["switch"], r["ports"])
            row["rejected"] = [[k, redact_secrets(line, platform), why] for k, line, why in self.model.console(r["switch"], r["console"], knows_secret=True)]
            done.append(row)
        return {"operations": n, "rerole": done}

    def add_servers(self, servers: object) -> None:
        """Servers racked and powered (`zcube lab grow`): [{"name", "macs": {nic: MAC}}]; their NIC ends of the
        wiring come up, and announce their MACs where the catalog says LLDP names a port by MAC. Raises
        ValueError (nothing learnt) on a bad list."""
        if not isinstance(servers, list) or not all(isinstance(x, dict) and isinstance(x.get("name"), str)
                                                    and isinstance(x.get("macs", {}), dict) for x in servers):
            raise ValueError("servers: expected a list of {name, macs}")
        for srv in servers:
            self.model.wiring.servers.add(srv["name"])
            for nic, mac in srv.get("macs", {}).items():
                self.model.nic_mac[(srv["name"], str(nic))] = str(mac)
        self.model.wiring.generation += 1  # the protocol model's caches key on it

    def poll_control(self, out_dir: str | Path) -> None:
        """Apply DIR/control.json left by another process: a list of wiring operations, or a request (``replace``,
        ``console``, a migration stage's ``rerole``) whose answer goes to DIR/control.reply. The file is first renamed
        DIR/control.work (taken), which is removed once the work is done and DIR/wiring.json rewritten."""
        sent = Path(out_dir) / "control.json"
        if not sent.exists():
            return
        (Path(out_dir) / "control.error").unlink(missing_ok=True)
        path = sent.with_name("control.work")  # taken: the sender now waits for it to go (the work done), however long
        sent.replace(path)
        try:
            ops = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(ops, dict) and ("replace" in ops or "console" in ops or "rerole" in ops):
                answer = self.apply_stage(ops) if "rerole" in ops else self._request(ops)
                reply = Path(out_dir) / "control.reply"
                reply.with_suffix(".tmp").write_text(json.dumps(answer, indent=1, sort_keys=True) + "\n")
                reply.with_suffix(".tmp").replace(reply)
            else:
                self.apply_operations(ops.get("operations") if isinstance(ops, dict) else ops)
                if isinstance(ops, dict) and ops.get("servers"):  # `zcube lab grow`: servers racked with the cables
                    self.add_servers(ops["servers"])
        except (OSError, ValueError) as exc:  # JSON, encoding and the operations' own checks: nothing was applied
            (Path(out_dir) / "control.error").write_text(f"{exc}\n")
        except Exception as exc:  # noqa: BLE001 - a control file never stops a running lab; the error goes to its sender
            (Path(out_dir) / "control.error").write_text(f"internal error: {type(exc).__name__}: {exc}\n")
        self.write_wiring(out_dir)
        path.unlink(missing_ok=True)

    def write_wiring(self, out_dir: str | Path) -> None:
        write_canonical(self.model.wiring.as_dict(stream=True), Path(out_dir) / "wiring.json")  # streamed: no 64k-cable copy in memory


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for t in tasks:
        t.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))


class LabThread:
    """Run a Lab's event loop in a background thread (tests, the demo, benchmarks)."""

    def __init__(self, lab: Lab):
        self.lab = lab
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="zcube-lab", daemon=True)
        self.ready = threading.Event()
        self.error: BaseException | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self.lab.start())
        except BaseException as exc:  # reported to the starting thread
            self.error = exc
            self.ready.set()
            return
        self.ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(self.lab.stop())
        _cancel_all(self.loop)
        self.loop.close()

    def start(self, timeout: float = 120) -> Lab:
        self.thread.start()
        if not self.ready.wait(timeout):
            raise TimeoutError("the lab did not start in time")
        if self.error:
            raise self.error
        return self.lab

    def call(self, fn, *args):
        """Run ``fn(*args)`` on the lab's loop (thread-safe access to the model) and return its result."""
        async def _wrap():
            return fn(*args)

        return asyncio.run_coroutine_threadsafe(_wrap(), self.loop).result(30)

    def stop(self) -> None:
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(30)


@contextmanager
def running_lab(plan: dict, faults: str | dict | None = None, seed: int = 0, out_dir: str | Path | None = None,
                port_base: int | None = None, baseline: str | None = None):
    """Start a lab for ``plan`` in a background thread; yields the Lab (endpoints, model, expected findings).

    ``baseline``: the site baseline the switches start from (None: the lab's default; "": a bare factory config).
    """
    runner = LabThread(Lab(plan, faults=faults, seed=seed, port_base=port_base, baseline=baseline))
    lock = hold_folder(out_dir) if out_dir is not None else None  # as `zcube lab up`: one lab a folder
    try:
        lab = runner.start()
        lab.runner = runner
        if out_dir is not None:
            lab.write_files(out_dir)
        yield lab
    finally:
        runner.stop()
        if lock is not None:
            release_folder(lock, out_dir)
